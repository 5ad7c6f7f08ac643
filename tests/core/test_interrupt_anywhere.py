"""Ctrl-C at any moment of any command: exit 130 (the shell's code for SIGINT, never click's "Aborted!"
and 1), one line saying so, and no compile worker left to write into a store after kinspect exits."""

import os
import time

import pytest
from click.testing import CliRunner

from kinspect.cli import main


@pytest.mark.parametrize("argv", [["ls"], ["vec-report"], ["show", "--stage", "ptx"], ["report", "-o", "r.html"],
                                  ["repro", "-o", "r.py"], ["diff", "--no-bench"]])
def test_every_reading_command_exits_130(argv, real_variant, monkeypatch, tmp_path):
    """The listing is where every reading command starts; Ctrl-C there is Ctrl-C anywhere in it."""
    from kinspect.files import sources

    v = real_variant("softmax", "cuda:90", BLOCK_N=64)

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(sources, "discover", interrupted)
    monkeypatch.chdir(tmp_path)
    extra = [v.path, v.path] if argv[0] == "diff" else [v.path]
    r = CliRunner().invoke(main, [argv[0], *extra, *argv[1:]])
    assert r.exit_code == 130, (r.exit_code, r.output)
    assert "interrupted" in r.output and "Aborted!" not in r.output and "Traceback" not in r.output


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:                                  # a zombie is gone for our purpose
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_ctrl_c_at_compiling_0_of_n_stops_the_workers_already_started(tmp_path):
    """Workers started ahead (while the program ran) must not outlive a Ctrl-C that comes the instant
    `compiling 0/N` is printed: they would compile and write into the store after kinspect exits."""
    from kinspect.diff import sweep
    from kinspect.diff.jobs import Job

    started = [sweep.Worker(), sweep.Worker()]
    for w in started:
        w._start()
    pids = [w.proc.pid for w in started]
    jobs = [Job(kernel="softmax", target="cuda:90", constexprs=(("BLOCK_N", b),), out_dir=str(tmp_path / "s"))
            for b in (32, 64)]

    def progress(outcome, total):
        if outcome is None:          # "compiling 0/2"
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep.run(jobs, workers=2, progress=progress, started=started)
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), "a compile worker outlived Ctrl-C"
    time.sleep(1)
    assert not (tmp_path / "s").exists() or not any((tmp_path / "s").rglob("record.json"))


def test_kinspects_own_compiles_leave_the_users_dump_and_cache_alone(tmp_path, monkeypatch):
    """With TRITON_KERNEL_DUMP=1 TRITON_DUMP_DIR=D TRITON_CACHE_DIR=C in the shell, `dump` for two
    targets writes nothing into D or C (Triton keys D by source hash: cuda:80 would overwrite cuda:90)."""
    dump, cache = tmp_path / "D", tmp_path / "C"
    dump.mkdir()
    cache.mkdir()
    monkeypatch.setenv("TRITON_KERNEL_DUMP", "1")
    monkeypatch.setenv("TRITON_DUMP_DIR", str(dump))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    for target in ("cuda:90", "cuda:80"):
        r = CliRunner().invoke(main, ["dump", "softmax", "-t", target, "-p", "BLOCK_N=32",
                                      "--store", str(tmp_path / "store")])
        assert r.exit_code == 0, r.output
    assert list(dump.iterdir()) == [] and list(cache.iterdir()) == []
    assert os.environ["TRITON_KERNEL_DUMP"] == "1" and os.environ["TRITON_DUMP_DIR"] == str(dump)


def test_a_command_run_for_the_user_gets_their_dump_settings_back(monkeypatch, tmp_path):
    from kinspect.files.sources import triton_files_elsewhere, users_environment

    monkeypatch.setenv("TRITON_KERNEL_DUMP", "1")
    monkeypatch.setenv("TRITON_DUMP_DIR", str(tmp_path))
    with triton_files_elsewhere():
        assert "TRITON_KERNEL_DUMP" not in os.environ and "TRITON_DUMP_DIR" not in os.environ
        env = users_environment(os.environ)
    assert env["TRITON_KERNEL_DUMP"] == "1" and env["TRITON_DUMP_DIR"] == str(tmp_path)
