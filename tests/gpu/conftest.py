"""The opt-in GPU suite: `python -m pytest -m gpu tests/gpu --durations=25` on a GPU machine (each test's
time printed); `bash benchmarks/gpu_suite.sh` runs it with fresh caches, alone, and sums the times per
file. It is to pass within 5 minutes on one H200, so work is shared here: one cold capture of the
torch.compile'd sample (cold_capture) for every test that only reads a store, and one pair of Triton and
Inductor caches (inductor_env) that it leaves warm for the sample's later runs."""

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


@pytest.fixture(scope="session")
def cold_capture(tmp_path_factory, inductor_env):
    """`kinspect capture --time` of the torch.compile sample with empty caches, once for every test that
    only reads what it recorded (records, replay, repro, counters): (store, the capture's stderr)."""
    store = tmp_path_factory.mktemp("cold") / "out"
    proc = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(store), "--time", "--",
                           sys.executable, str(SAMPLE), "--iters", "5"],
                          capture_output=True, text=True, timeout=600, env=inductor_env)
    print(proc.stderr[-4000:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    return store, proc.stderr
