"""Capture of a real program on a GPU: a torch.compile'd TransformerEncoderLayer, forward and backward
(samples/torch_compile_capture.py), with warm caches (cold_capture filled them), as a user's second run.
kinspect's per-kernel calls and GPU time against the torch profiler's for the same program without
kinspect; the static launcher as the program has it, with and without the capture."""

import json
import subprocess
import sys

import pytest

from kinspect.store import read_records
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


def test_the_static_launcher_is_left_as_the_program_has_it(tmp_path, inductor_env):
    """Inductor statically launches the same kernels with and without the capture, cold caches both (the
    two runs share nothing, so they run side by side). The capture times with CUDA events (--time=events)."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    procs = {}
    for name, prefix in (("plain", []), ("capture", [sys.executable, "-m", "kinspect", "capture", "--store",
                                                       str(tmp_path / "out"), "--time=events", "--"])):
        env = {**inductor_env, "TRITON_CACHE_DIR": str(tmp_path / f"t-{name}"),
               "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / f"i-{name}")}
        procs[name] = subprocess.Popen([*prefix, sys.executable, str(script)], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, env=env)
    runs, errs = {}, {}
    try:
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err[-3000:]
            runs[name] = json.loads(out.strip().splitlines()[-1])
            errs[name] = err
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
    print(runs)
    assert runs["plain"]["static"] > 0 and runs["capture"] == runs["plain"]
    stderr = errs["capture"]
    print(stderr[-3000:])
    assert "Inductor's static launcher: on" in stderr and "left as the program had it" in stderr
    assert "through Inductor's static launcher" in stderr, "its launches were observed where they happen"
    assert "0.0 µs per launch" not in stderr and "0.00 µs per launch" not in stderr
    ran = [v.launches for v in read_records(tmp_path / "out") if v.kernel.startswith("triton_") and v.launches]
    assert ran and {x.calls for x in ran} == {3}
    # events around every launch the per-kernel counter runs; a static kernel's first call goes through
    # its autotuner's run before that counter exists, so it is counted but not timed
    assert all(x.gpu is not None and 2 <= x.gpu.calls <= 3 and x.gpu.total_ms > 0 for x in ran), ran
