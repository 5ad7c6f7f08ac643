"""Capture of a real program on a GPU: a torch.compile'd TransformerEncoderLayer, forward and backward
(samples/torch_compile_capture.py), with warm caches (cold_capture filled them), as a user's second run.
kinspect's per-kernel calls and GPU time against the torch profiler's for the same program without
kinspect; the static launcher as the program has it, with and without the capture."""

import json
import subprocess
import sys

import pytest

from kinspect.files.store import read_records
from tests.gpu.conftest import SAMPLE

ITERS = "20"


@pytest.fixture(scope="module")
def profiled(tmp_path_factory, cold_capture, inductor_env):
    out = tmp_path_factory.mktemp("profiled") / "prof.json"
    proc = subprocess.run([sys.executable, str(SAMPLE), "--iters", ITERS, "--profile", str(out)],
                          capture_output=True, text=True, timeout=600, env=inductor_env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def _ours(store):
    variants = [v for v in read_records(store) if v.kernel.startswith("triton_")]
    assert len(variants) >= 10, "torch.compile's Triton kernels were recorded (from the Triton cache: a warm run compiles none)"
    ours = {}
    for v in variants:
        if v.launches:
            o = ours.setdefault(v.kernel, {"calls": 0, "total_ms": 0.0, "timed": 0})
            o["calls"] += v.launches.calls + v.launches.tuning_calls
            o["total_ms"] += (v.launches.gpu.total_ms if v.launches.gpu else 0.0) + v.launches.tuning_ms
            o["timed"] += v.launches.gpu.calls if v.launches.gpu else 0
    return ours


def test_capture_counts_and_times_like_the_torch_profiler(tmp_path, profiled, inductor_env):
    """--time (the kernel records): every launch counted and timed as the profiler saw it. The other
    method, --time=events, is run on the static-launcher probe below (its counting is the same code)."""
    store = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(store), "--time", "--",
                           sys.executable, str(SAMPLE), "--iters", ITERS],
                          capture_output=True, text=True, timeout=600, env=inductor_env)
    print(proc.stderr[-6000:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Inductor's static launcher: on" in proc.stderr and "left as the program had it" in proc.stderr
    assert "through Inductor's static launcher" in proc.stderr, "its launches were observed where they happen"
    assert "0.0 µs per launch" not in proc.stderr and "0.00 µs per launch" not in proc.stderr
    ours = _ours(store)
    common = sorted(set(ours) & set(k for k in profiled if k.startswith("triton_")))
    assert len(common) >= 0.9 * len([k for k in profiled if k.startswith("triton_")]), (sorted(ours), sorted(profiled))
    calls_ours = sum(ours[k]["calls"] for k in common)
    calls_prof = sum(profiled[k]["calls"] for k in common)
    ms_ours = sum(ours[k]["total_ms"] for k in common)
    ms_prof = sum(profiled[k]["total_ms"] for k in common)
    print(f"profiler: {len(common)} kernels; calls {calls_ours} vs profiler {calls_prof}; "
          f"GPU ms {ms_ours:.3f} vs profiler {ms_prof:.3f} (ratio {ms_ours / ms_prof:.4f})")
    # warm caches: no autotuning, so every launch is the program's, and each one is counted
    assert {k: ours[k]["calls"] for k in common} == {k: profiled[k]["calls"] for k in common}
    # the same CUPTI kernel records, in two runs of one program
    assert sum(ours[k]["timed"] for k in common) == calls_prof
    assert abs(ms_ours / ms_prof - 1) <= 0.02
    top = max((v for v in read_records(store) if v.launches), key=lambda v: v.launches.calls).launches.top()
    assert any(a.kind == "tensor" and a.device.startswith("cuda") for a in top.args)


def test_the_static_launcher_is_left_as_the_program_has_it(cold_runs):
    """Inductor statically launches the same kernels with and without the capture, cold caches both (the
    probe's runs in cold_runs, beside the cold capture). The capture times with CUDA events (--time=events)."""
    runs = {}
    for name in ("plain", "capture"):
        code, stdout, stderr = cold_runs["runs"][name]
        assert code == 0, stderr[-3000:]
        runs[name] = json.loads(stdout.strip().splitlines()[-1])
    print(runs)
    assert runs["plain"]["static"] > 0 and runs["capture"] == runs["plain"]
    stderr = cold_runs["runs"]["capture"][2]
    print(stderr[-3000:])
    assert "Inductor's static launcher: on" in stderr and "left as the program had it" in stderr
    assert "through Inductor's static launcher" in stderr, "its launches were observed where they happen"
    assert "0.0 µs per launch" not in stderr and "0.00 µs per launch" not in stderr
    ran = [v.launches for v in read_records(cold_runs["probe_store"])
           if v.kernel.startswith("triton_") and v.launches and v.launches.calls]     # configs only benchmarked apart
    assert ran and {x.calls for x in ran} == {3}
    # events around every launch the per-kernel counter runs; a static kernel's first call goes through
    # its autotuner's run before that counter exists, so it is counted but not timed
    assert all(x.gpu is not None and 2 <= x.gpu.calls <= 3 and x.gpu.total_ms > 0 for x in ran), ran
