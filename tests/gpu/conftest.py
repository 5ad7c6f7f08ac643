"""The opt-in GPU suite: `python -m pytest -m gpu tests/gpu --durations=25` on a GPU machine (each test's
time printed); `bash benchmarks/gpu_suite.sh` runs it with fresh caches, alone, and sums the times per
file. It is to pass within 5 minutes on one H200, so work is shared here: one cold capture of the
torch.compile'd sample (cold_capture) for every test that only reads a store, run beside the other cold
programs (cold_runs), and one pair of Triton and Inductor caches (inductor_env) that it leaves warm for
the sample's later runs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SAMPLE = ROOT / "samples" / "torch_compile_capture.py"     # a torch.compile'd TransformerEncoderLayer, fwd + bwd


def pytest_collection_modifyitems(config, items):
    """Everything under tests/gpu needs a GPU: mark it, and skip cleanly where there is none."""
    import torch

    for item in items:
        if "tests/gpu/" in str(item.fspath):
            item.add_marker(pytest.mark.gpu)
            if not torch.cuda.is_available():
                item.add_marker(pytest.mark.skip(reason="no GPU here"))


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


@pytest.fixture(scope="session")
def cold_runs(tmp_path_factory, inductor_env) -> dict:
    """The session's cold torch.compile programs, started together and waited for together: each has its
    own caches, and most of their time is imports, tracing and compiling, so side by side they take about
    as long as the longest. "sample": `kinspect capture --time` of the encoder sample with the session's
    caches (cold_capture); "plain" and "capture": the probe alone and under `kinspect capture
    --time=events`, each with empty caches of its own. {"runs": {name: (exit code, stdout, stderr)},
    "sample_store": ..., "probe_store": ...}; nothing runs beside the tests that come after."""
    tmp = tmp_path_factory.mktemp("cold")
    probe = tmp / "probe.py"
    probe.write_text(PROBE)
    capture = [sys.executable, "-m", "kinspect", "capture", "--store"]
    own = {name: {**inductor_env, "TRITON_CACHE_DIR": str(tmp / f"t-{name}"),
                  "TORCHINDUCTOR_CACHE_DIR": str(tmp / f"i-{name}")} for name in ("plain", "capture")}
    argvs = {"sample": ([*capture, str(tmp / "out"), "--time", "--", sys.executable, str(SAMPLE), "--iters", "5"],
                        inductor_env),
             "plain": ([sys.executable, str(probe)], own["plain"]),
             "capture": ([*capture, str(tmp / "probe-out"), "--time=events", "--", sys.executable, str(probe)],
                         own["capture"])}
    procs = {name: subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for name, (argv, env) in argvs.items()}
    runs = {}
    try:
        for name, proc in procs.items():
            stdout, stderr = proc.communicate(timeout=600)
            runs[name] = (proc.returncode, stdout, stderr)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return {"runs": runs, "sample_store": tmp / "out", "probe_store": tmp / "probe-out"}


@pytest.fixture(scope="session")
def cold_capture(cold_runs):
    """`kinspect capture --time` of the torch.compile sample with empty caches, once for every test that
    only reads what it recorded (records, replay, repro, counters): (store, the capture's stderr)."""
    code, _, stderr = cold_runs["runs"]["sample"]
    print(stderr[-4000:])
    assert code == 0, stderr[-3000:]
    return cold_runs["sample_store"], stderr
