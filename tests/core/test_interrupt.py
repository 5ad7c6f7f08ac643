"""Ctrl-C during a real capture's compile step keeps what was done; `capture --resume` finishes it.

The SIGINT goes to the whole process group (what a terminal sends) or to kinspect alone. Either way:
exit code 130, no compile worker left running, every variant finished before has its launches, and
`kinspect capture --resume STORE` compiles the rest, each launch counted once.
"""

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow       # subprocesses or many compiles: -m 'not slow' leaves it out

KINSPECT = Path(sys.executable).parent / "kinspect"

PROGRAM = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs, mask=m), mask=m)


x = torch.randn(1000)
y = torch.empty_like(x)
for block in (32, 64, 128, 256, 512, 1024, 2048, 4096):     # enough compiles left after the third
    scale[(triton.cdiv(1000, block),)](x, y, 1000, BLOCK=block)
'''


def _terminal_sigint() -> None:
    """A child's Ctrl-C as a terminal's program has it: the default action. A process that ignores SIGINT
    passes that on through exec, and Python keeps an ignored SIGINT ignored (a test process may have it
    ignored: the pytest-xdist worker that ran these tests in the full suite did, and none of them could
    interrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _tagged(tag: str) -> list[int]:
    """Processes whose environment carries `tag` (this test's kinspect and what it started)."""
    found = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and tag.encode() in (d / "environ").read_bytes():
                found.append(int(d.name))
        except OSError:
            continue
    return found


def _calls(store: Path) -> dict[str, int]:
    out = {}
    for p in store.glob("scale/*/record.json"):
        d = json.loads(p.read_text())
        out[d["constexprs"]["BLOCK"]] = d["launches"]["calls"] if d["launches"] else 0
    return out


@pytest.mark.parametrize("to", ["group", "kinspect"])
def test_ctrl_c_during_the_compile_step_keeps_what_was_done(tmp_path, to):
    (tmp_path / "prog.py").write_text(PROGRAM)
    store = tmp_path / "store"
    tag = f"KINSPECT_TEST_TAG={uuid.uuid4().hex}"
    env = {**os.environ, tag.split("=")[0]: tag.split("=")[1]}
    proc = subprocess.Popen([str(KINSPECT), "capture", "--interpret", "-t", "cuda:90", "--store", str(store), "--",
                             sys.executable, "prog.py"], cwd=tmp_path, env=env, start_new_session=True,
                            preexec_fn=_terminal_sigint,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 240
    # three records with two workers: a worker finished a first variant and took another
    while len(list(store.glob("scale/*/record.json"))) < 3 and proc.poll() is None:
        assert time.monotonic() < deadline, "the compile step did not start"
        time.sleep(0.05)
    time.sleep(0.2)
    assert proc.poll() is None, proc.stdout.read()
    if to == "group":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, out
    assert "Traceback" not in out and "interrupted after the program" in out, out
    assert f"kinspect capture --resume {store}" in out
    # the workers stop on their own; on a loaded machine that can take more than a second
    gone = time.monotonic() + 30
    while _tagged(tag.split("=")[1]) and time.monotonic() < gone:
        time.sleep(0.2)
    assert _tagged(tag.split("=")[1]) == [], "compile workers left running"
    kept = {b: n for b, n in _calls(store).items() if n}
    assert kept and set(kept.values()) == {1}, _calls(store)
    assert (store / ".kinspect-interpret").is_dir()
    resumed = subprocess.run([str(KINSPECT), "capture", "--resume", str(store)], capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert _calls(store) == {b: 1 for b in (32, 64, 128, 256, 512, 1024, 2048, 4096)}, "each launch counted once"
    assert not (store / ".kinspect-interpret").exists()


def test_a_program_killed_by_a_signal_gives_128_plus_it(tmp_path):
    for sig, code in ((signal.SIGKILL, 137), (signal.SIGTERM, 143)):
        r = subprocess.run([str(KINSPECT), "capture", "--store", str(tmp_path / "s"), "--", sys.executable, "-c",
                            f"import os; os.kill(os.getpid(), {int(sig)})"], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == code, r.stderr


def test_ctrl_c_while_the_program_runs_is_the_programs(tmp_path):
    """A terminal's Ctrl-C reaches the program: kinspect waits for it to finish its own cleanup (it
    used to kill it 0.25 s later) and exits with its code."""
    (tmp_path / "prog.py").write_text(
        "import pathlib, sys, time\n"
        "pathlib.Path('started').touch()\n"
        "try:\n    time.sleep(120)\n"
        "except KeyboardInterrupt:\n    time.sleep(1.5)\n    print('cleaned up', flush=True)\n    sys.exit(3)\n")
    proc = subprocess.Popen([str(KINSPECT), "capture", "--store", str(tmp_path / "s"), "--", sys.executable, "prog.py"],
                            cwd=tmp_path, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, preexec_fn=_terminal_sigint)
    deadline = time.monotonic() + 120
    while not (tmp_path / "started").exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 3 and "cleaned up" in out, out
