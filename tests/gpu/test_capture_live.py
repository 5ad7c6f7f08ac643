"""Capture of a real program on a GPU: a torch.compile'd TransformerEncoderLayer, forward and backward
(samples/torch_compile_capture.py). kinspect's per-kernel calls and GPU time against the torch
profiler's for the same run without kinspect."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kinspect.store import read_records

ROOT = Path(__file__).parents[2]
SAMPLE = ROOT / "samples" / "torch_compile_capture.py"
ITERS = "20"


def _env(tmp_path, name):
    return {**os.environ, "TRITON_CACHE_DIR": str(tmp_path / f"triton-{name}"),
            "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / f"inductor-{name}")}


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("profiled")
    out = tmp / "prof.json"
    proc = subprocess.run([sys.executable, str(SAMPLE), "--iters", ITERS, "--profile", str(out)],
                          capture_output=True, text=True, timeout=900, env=_env(tmp, "prof"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("method", ["profiler", "events"])
def test_capture_time_matches_the_torch_profiler(tmp_path, profiled, method):
    store = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(store), f"--time={method}", "--",
                           sys.executable, str(SAMPLE), "--iters", ITERS],
                          capture_output=True, text=True, timeout=900, env=_env(tmp_path, method))
    print(proc.stderr[-6000:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    variants = [v for v in read_records(store) if v.kernel.startswith("triton_")]
    assert len(variants) >= 10, "torch.compile's Triton kernels were recorded"
    launched = [v for v in variants if v.launches]
    assert launched, "launches of Inductor's kernels reached kinspect's hooks"
    # the profiler sees every launch, Inductor's benchmarks of its configs too; kinspect counts and
    # times those apart (tuning), so the program's and the autotuners' together are what it saw
    ours = {}
    for v in launched:
        o = ours.setdefault(v.kernel, {"calls": 0, "total_ms": 0.0})
        o["calls"] += v.launches.calls + v.launches.tuning_calls
        o["total_ms"] += (v.launches.gpu.total_ms if v.launches.gpu else 0.0) + v.launches.tuning_ms
    common = sorted(set(ours) & set(profiled))
    assert len(common) >= 0.8 * len(profiled), (sorted(ours), sorted(profiled))
    calls_ours = sum(ours[k]["calls"] for k in common)
    calls_prof = sum(profiled[k]["calls"] for k in common)
    ms_ours = sum(ours[k]["total_ms"] for k in common)
    ms_prof = sum(profiled[k]["total_ms"] for k in common)
    print(f"{method}: {len(common)} kernels; calls {calls_ours} vs profiler {calls_prof}; "
          f"GPU ms {ms_ours:.3f} vs profiler {ms_prof:.3f} (ratio {ms_ours / ms_prof:.3f})")
    for k in sorted(common, key=lambda k: -profiled[k]["total_ms"])[:8]:
        print(f"  {k[:60]:<60} {ours[k]['calls']:>5} {ours[k]['total_ms']:>9.3f} | "
              f"{profiled[k]['calls']:>5} {profiled[k]['total_ms']:>9.3f}")
    assert abs(calls_ours - calls_prof) <= 0.02 * calls_prof
    # empty caches: Inductor benchmarked its pointwise configs; the program itself ran each kernel at
    # most a few times per step (ITERS steps and the one that compiles)
    tuning = sum(v.launches.tuning_calls for v in launched)
    assert tuning > 0, "Inductor's autotuning launches were counted apart"
    steps = int(ITERS) + 1
    assert all(v.launches.calls <= 8 * steps for v in launched), \
        sorted((v.launches.calls, v.kernel) for v in launched)[-3:]
    print(f"tuning launches: {tuning} ({sum(v.launches.tuning_ms for v in launched):.3f} ms)")
    if method == "profiler":
        assert abs(ms_ours / ms_prof - 1) <= 0.10
    # every launched variant's signature names real tensors on the GPU
    top = max(launched, key=lambda v: v.launches.calls).launches.top()
    assert any(a.kind == "tensor" and a.device.startswith("cuda") for a in top.args)
