"""The opt-in GPU suite: `python -m pytest -m gpu tests/gpu --durations=25` on a GPU machine (each test's
time printed); `bash benchmarks/gpu_suite.sh` runs it with fresh caches, alone, and sums the times per
file. It is to pass within 5 minutes on one H200, so work is shared here: one cold capture of the
torch.compile'd sample (cold_capture) for every test that only reads a store, run beside the other cold
programs (cold_runs), the setups the test files declare with `beside_first`, and the shipped kernels'
result checks (test_kernels_live.py, run first); and one pair of Triton and Inductor caches
(inductor_env) that it leaves warm for the sample's later runs. Nothing that times anything runs beside
the tests after the first file."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).parents[2]
SAMPLE = ROOT / "samples" / "torch_compile_capture.py"     # a torch.compile'd TransformerEncoderLayer, fwd + bwd


# runs first: its cases check results, never timings, in worker processes, so the session's cold programs
# (cold_runs) run beside them, and nothing that times anything runs while either does
FIRST = "tests/gpu/test_kernels_live.py"


def pytest_collection_modifyitems(config, items):
    """Everything under tests/gpu needs a GPU: mark it, and skip cleanly where there is none. FIRST first."""
    import torch

    for item in items:
        if "tests/gpu/" in str(item.fspath):
            item.add_marker(pytest.mark.gpu)
            if not torch.cuda.is_available():
                item.add_marker(pytest.mark.skip(reason="no GPU here"))
    items.sort(key=lambda item: not str(item.fspath).endswith(FIRST))   # stable: the rest keep their order


_ITEMS: list[str] = []       # the node ids of the GPU tests pytest is to run, in order
_FINISHED: set[str] = set()  # those whose call ended, or whose setup failed or skipped


def pytest_collection_finish(session):
    _ITEMS[:] = [item.nodeid for item in session.items if "tests/gpu/" in str(item.fspath)]


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        _FINISHED.add(report.nodeid)


def pytest_terminal_summary(terminalreporter):
    """A run stopped early (SIGINT from benchmarks/gpu_suite.sh's limit, Ctrl-C) names the tests it did not
    finish: pytest's own summary only counts those that did."""
    left = [n for n in _ITEMS if n not in _FINISHED]
    if left:
        terminalreporter.write_sep("=", f"{len(left)} of {len(_ITEMS)} GPU tests did not finish "
                                        "(stopped before or during them)")
        for nodeid in left:
            terminalreporter.write_line(f"NOT FINISHED {nodeid}")


@pytest.fixture(scope="session")
def inductor_env(tmp_path_factory) -> dict:
    """The environment of the session's torch.compile runs: one Triton and one Inductor cache, empty at
    first (cold_capture fills them; the runs after it find them warm, as a user's second run does)."""
    tmp = tmp_path_factory.mktemp("caches")
    return {**os.environ, "TRITON_CACHE_DIR": str(tmp / "triton"), "TORCHINDUCTOR_CACHE_DIR": str(tmp / "inductor"),
            "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}


# the static-launcher probe (tests/gpu/test_capture_live.py): a small torch.compile'd function, then how
# many of Inductor's autotuners launch statically
PROBE = """
import json, sys, torch
from torch._inductor.runtime.triton_heuristics import CachingAutotuner
f = torch.compile(lambda x, y: (torch.relu(x) * y).sum(0) + torch.sigmoid(y).mean())
x, y = torch.randn(512, 512, device="cuda"), torch.randn(512, 512, device="cuda")
for _ in range(3):
    f(x, y)
torch.cuda.synchronize()
import gc


def autotuner(o):   # gc also holds weak proxies, whose isinstance raises once their referent is gone
    try:
        return isinstance(o, CachingAutotuner) and len(o.launchers) == 1
    except ReferenceError:
        return False


tuners = [o for o in gc.get_objects() if autotuner(o)]
print(json.dumps({"autotuners": len(tuners), "static": sum(bool(getattr(t.launchers[0], "_is_static", False))
                                                             for t in tuners)}))
"""


def needs_cold_runs(session) -> bool:
    """Whether a test pytest is to run uses the session's cold programs."""
    return any("cold_runs" in getattr(item, "fixturenames", ()) for item in session.items)


@pytest.fixture(scope="session")
def cold_started(tmp_path_factory, inductor_env) -> dict:
    """The session's cold torch.compile programs, started together (cold_runs waits for them): each has its
    own caches, and most of their time is imports, tracing and compiling, so side by side they take about
    as long as the longest. "sample": `kinspect capture --time` of the encoder sample with the session's
    caches (cold_capture); "plain" and "capture": the probe alone and under `kinspect capture
    --time=events`, each with empty caches of its own. {"procs": {name: Popen}, "folder": where their
    NAME.out and NAME.err go, "sample_store": ..., "probe_store": ..., "t0": when they started}; those
    still running at the session's end are killed."""
    tmp = tmp_path_factory.mktemp("cold")
    probe = tmp / "probe.py"
    probe.write_text(PROBE)
    capture = [sys.executable, "-m", "kinspect", "capture", "--store"]
    # a kinspect cache of their own: capture measures the device's ceilings once per cache, here beside
    # test_kernels_live.py's cases, and the suite's later benches would compare against them
    kin = {"KINSPECT_CACHE_DIR": str(tmp / "kinspect")}
    own = {name: {**inductor_env, **kin, "TRITON_CACHE_DIR": str(tmp / f"t-{name}"),
                  "TORCHINDUCTOR_CACHE_DIR": str(tmp / f"i-{name}")} for name in ("plain", "capture")}
    argvs = {"sample": ([*capture, str(tmp / "out"), "--time", "--", sys.executable, str(SAMPLE), "--iters", "5"],
                        {**inductor_env, **kin}),
             "plain": ([sys.executable, str(probe)], own["plain"]),
             "capture": ([*capture, str(tmp / "probe-out"), "--time=events", "--", sys.executable, str(probe)],
                         own["capture"])}
    t0 = time.perf_counter()
    procs = {}
    for name, (argv, env) in argvs.items():   # output to files: a full pipe nobody reads yet would stop them
        with open(tmp / f"{name}.out", "w") as out, open(tmp / f"{name}.err", "w") as err:
            procs[name] = subprocess.Popen(argv, stdout=out, stderr=err, text=True, env=env)
    yield {"procs": procs, "folder": tmp, "sample_store": tmp / "out", "probe_store": tmp / "probe-out", "t0": t0}
    for proc in procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def cold_runs(cold_started) -> dict:
    """The cold programs' results: {"runs": {name: (exit code, stdout, stderr)}, "sample_store": ...,
    "probe_store": ...}. tests/gpu/test_kernels_live.py (FIRST) starts them beside its own cases and waits
    for them, so nothing runs beside the tests that come after."""
    runs, folder = {}, cold_started["folder"]
    for name, proc in cold_started["procs"].items():
        try:
            proc.wait(timeout=600)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        runs[name] = (proc.returncode, (folder / f"{name}.out").read_text(), (folder / f"{name}.err").read_text())
    print(f"the cold programs ran {time.perf_counter() - cold_started['t0']:.1f} s")
    return {"runs": runs, "sample_store": cold_started["sample_store"], "probe_store": cold_started["probe_store"]}


@pytest.fixture(scope="session")
def cold_capture(cold_runs):
    """`kinspect capture --time` of the torch.compile sample with empty caches, once for every test that
    only reads what it recorded (records, replay, repro, counters): (store, the capture's stderr)."""
    code, _, stderr = cold_runs["runs"]["sample"]
    print(stderr[-4000:])
    assert code == 0, stderr[-3000:]
    return cold_runs["sample_store"], stderr


def kinspect_side_by_side(commands: dict, timeout: float, **popen) -> dict:
    """{name: the finished `python -m kinspect ARGV...`}: `commands` {name: (argv, its environment)} started
    together, each in a process of its own (`popen`: what they share, e.g. cwd), waited for in turn with
    `timeout` seconds each; those still running when one fails are killed."""
    procs = {name: subprocess.Popen([sys.executable, "-m", "kinspect", *map(str, argv)], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, env=env, **popen)
             for name, (argv, env) in commands.items()}
    done = {}
    try:
        for name, proc in procs.items():
            stdout, stderr = proc.communicate(timeout=timeout)
            done[name] = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
    return done


# --- setups that run beside the first file's cases -----------------------------------------------------

BESIDE: dict[str, Callable] = {}              # "module.setup": setup(tmp_path_factory), declared at collection
_STARTED: dict[str, tuple[threading.Thread, dict]] = {}


def beside_first(setup: Callable) -> Callable:
    """Declare a test module's setup, `setup(tmp_path_factory) -> value`, as one that may run beside the
    first file's result checks: the programs it runs are checked for what they did, never for how long it
    took, and have caches of their own (a kinspect cache too: device ceilings measured beside the cases must
    not reach the tests that time). Its module fixture returns `beside_result(setup, tmp_path_factory)`."""
    BESIDE[f"{setup.__module__}.{setup.__qualname__}"] = setup
    return setup


def start_beside(session, tmp_path_factory) -> None:
    """Start, each in a thread (they mostly wait on child processes), the declared setups of the modules
    pytest is to run (FIRST's cases call this before theirs, and wait_beside after)."""
    modules = {item.module.__name__ for item in session.items if getattr(item, "module", None) is not None}
    for key, setup in BESIDE.items():
        if key.rsplit(".", 1)[0] in modules and key not in _STARTED:
            box: dict = {}
            thread = threading.Thread(target=_run_into, args=(setup, tmp_path_factory, box), name=key, daemon=True)
            thread.start()
            _STARTED[key] = (thread, box)


def _run_into(setup: Callable, tmp_path_factory, box: dict) -> None:
    t0 = time.perf_counter()
    try:
        box["value"] = setup(tmp_path_factory)
    except BaseException as e:      # noqa: BLE001 - raised again where the module's fixture asks for it
        box["error"] = e
    box["seconds"] = time.perf_counter() - t0


def wait_beside(timeout: float = 600) -> None:
    """Wait for the setups start_beside started; say how long each took."""
    for key, (thread, box) in _STARTED.items():
        thread.join(timeout)
        state = "still running" if thread.is_alive() else "failed" if "error" in box else "done"
        print(f"beside the cases: {key} {state} in {box.get('seconds', 0):.1f} s")


def beside_result(setup: Callable, tmp_path_factory):
    """`setup`'s value: from its run beside the first file's cases when it ran there, else run now."""
    started = _STARTED.get(f"{setup.__module__}.{setup.__qualname__}")
    if started is None:
        return setup(tmp_path_factory)
    thread, box = started
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _kinspect(*args, env=None, timeout=900):
    """`python -m kinspect ARGS` in a child process, its output printed (seen with -s)."""
    proc = subprocess.run([sys.executable, "-m", "kinspect", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)
    print(proc.stdout[-4000:], proc.stderr[-4000:])
    return proc


@pytest.fixture(scope="session")
def captured(cold_capture) -> Path:
    """The store of the cold capture (cold_capture), shared by the replay and tune tests."""
    return cold_capture[0]
