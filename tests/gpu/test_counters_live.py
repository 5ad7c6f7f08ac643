"""On the GPU: a torch.compile'd TransformerEncoderLayer (samples/torch_compile_capture.py) captured with
--time keeps the device ceilings and each kernel's provenance; `vec-report --counters` replays the top
kernels under Nsight Compute and reads their counters back (skips where ncu is missing or may not read
counters). The method is checked, not timings: every measured kernel has DRAM bytes and a figure beside
each finding, and the estimate of an exactly counted kernel is within 1.5x of what ncu measured."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kinspect.files import ceilings, provenance
from kinspect.files.store import read_records



@pytest.fixture(scope="module")
def captured(cold_capture) -> Path:
    store, stderr = cold_capture
    assert "device ceilings kept in the store" in stderr
    return store


def test_capture_keeps_ceilings_and_provenance(captured):
    c = ceilings.read(captured)
    assert c is not None and c.copy_gbps > 100 and c.peak("bfloat16")
    variants = [v for v in read_records(captured) if v.kernel.startswith("triton_") and v.ran]
    origins = {v.kernel: provenance.read(v.path) for v in variants}
    assert all(origins.values()), [k for k, o in origins.items() if o is None]
    # the sample's own module calls the layer: Dynamo keeps that frame (none from inside torch/nn/modules)
    lines = [f for o in origins.values() for f in o.lines]
    assert lines and all(f.file.endswith("torch_compile_capture.py") and f.function == "forward" for f in lines), \
        lines[:3]
    from kinspect.files import gpu_time

    others = gpu_time.read_others(captured)
    assert others is not None and others.ms > 0, "cuBLAS's matmuls of the layer ran beside the Triton kernels"


def test_counters_replay_the_top_kernels_under_ncu(captured):
    if shutil.which("ncu") is None:
        pytest.skip("ncu not on PATH")
    proc = subprocess.run([sys.executable, "-m", "kinspect", "vec-report", str(captured), "--counters", "3",
                           "--json"], capture_output=True, text=True, timeout=600)
    if "ERR_NVGPUCTRPERM" in proc.stderr + proc.stdout:
        pytest.skip("ncu may not read the GPU's counters here")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout)["kernels"]
    measured = [k for k in rows if k["counters"]]
    assert len(measured) == 3, [k["counters_failed"] for k in rows if k["counters_failed"]]
    for k in measured:
        c = k["counters"]
        assert c["dram_bytes"] > 0 and c["duration_ns"] > 0 and c["figures"]
        assert all(p["verdict"] in ("confirms", "contradicts", "not measured") for p in c["findings"])
        assert k["bytes_method"].startswith("measured")
        est = c["estimate"]
        if est and est["method"] == "index expressions":
            assert 1 / 1.5 <= est["bytes"] / c["dram_bytes"] <= 1.5, (k["kernel"], est, c["dram_bytes"])


def test_capture_keeps_the_devices_launch_floor_and_the_ideal_uses_it(captured):
    """capture --time measures the least GPU time one launch takes (a one-block copy, back to back in a CUDA
    graph) into device.json; every ideal time allows each launch at least that."""
    c = ceilings.read(captured)
    assert c is not None and c.launch_floor_us is not None and 0.1 < c.launch_floor_us < 20
    from kinspect.analysis.sol import for_program

    sol = for_program(list(read_records(captured)))
    assert sol.floor_us == c.launch_floor_us and "device's measured floor" in sol.floor_note
    for s in sol.speeds.values():
        if s.ideal_ms is not None:
            assert s.ideal_ms >= s.timed_calls * c.launch_floor_us * 1e-3 * 0.999
