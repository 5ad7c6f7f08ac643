"""Replay on a GPU: a kernel Inductor generated for a torch.compile'd TransformerEncoderLayer
(samples/torch_compile_capture.py), captured with its GPU time, is benched again from its record
(`kinspect bench VARIANT`) and written as a script that runs on the GPU (`kinspect repro`); and a
real autotuning decision (triton.autotune timing three configs on the device) is recorded."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kinspect.files.store import read_autotune, read_records
from tests.gpu.conftest import beside_first, beside_result


AUTOTUNED = '''\
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((128, 1), (1024, 4), (4096, 8))],
                 key=["n"])
@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


n = 1 << 24
x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
out = torch.empty_like(x)
for _ in range(3):
    axpy[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, y, out, n)
torch.cuda.synchronize()
assert torch.allclose(out, 2 * x + y)
print("autotuned ok")
'''


def _busiest_inductor_variant(store: Path):
    timed = [v for v in read_records(store) if v.kernel.startswith("triton_") and v.launches and v.launches.gpu]
    assert timed, "Inductor's kernels were captured with their GPU time"
    return max(timed, key=lambda v: v.launches.gpu.total_ms)


def test_bench_of_a_captured_inductor_kernel(captured, tmp_path):
    """`kinspect bench VARIANT`, in this process (what the command prints and its --json, from one run)."""
    from kinspect import api
    from kinspect.render.bench import render

    v = _busiest_inductor_variant(captured)
    result = api.bench(str(v.path), out_dir=tmp_path / "bench")
    from kinspect.render.json import bench as bench_json, dumps

    out = json.loads(dumps(bench_json(result)))
    assert out["kernel"] == v.kernel and out["constexprs"] == v.constexprs
    steady = out["steady"]["ms"]["median"]
    captured_ms = v.launches.gpu.median_ms
    print(f"{v.kernel}: replayed median {steady:.4f} ms; captured GPU median {captured_ms:.4f} ms "
          f"(ratio {steady / captured_ms:.2f}); {out['throughput']['gb_per_s']:.0f} GB/s")
    assert out["throughput"]["gb_per_s"] > 0 and "bytes estimated" in out["throughput"]["note"]
    assert out["first_call"]["cold"]["jit_ms"] > 0
    # the replay runs the captured work: within a factor of the time the program's launches took
    assert 0.25 < steady / captured_ms < 4, (steady, captured_ms)
    text = render(result)
    assert "steady state  median" in text and "first call" in text
    assert "replays the captured launch" in text


def test_repro_of_a_captured_inductor_kernel_runs_on_the_gpu(captured, tmp_path):
    """The script `kinspect repro` writes runs on its own, in a fresh process."""
    from click.testing import CliRunner

    from kinspect.cli import main

    v = _busiest_inductor_variant(captured)
    r = CliRunner().invoke(main, ["repro", str(v.path), "-o", str(tmp_path / "repro.py")])
    assert r.exit_code == 0, r.output
    run = subprocess.run([sys.executable, str(tmp_path / "repro.py")], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"ok: {v.kernel} ran once on cuda" in run.stdout


@beside_first
def capture_autotuned(tmp_path_factory):
    """(the finished `kinspect capture` of AUTOTUNED, its store): Triton's autotuner picks the config it
    timed fastest whatever else runs, so this may run beside the first file's cases, with its own caches."""
    tmp = tmp_path_factory.mktemp("autotuned")
    script = tmp / "autotuned.py"
    script.write_text(AUTOTUNED)
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp / "triton"), "KINSPECT_CACHE_DIR": str(tmp / "kinspect")}
    return subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(tmp / "out"), "--json", "--",
                           sys.executable, str(script)], capture_output=True, text=True, timeout=900, env=env), tmp / "out"


@pytest.fixture(scope="module")
def autotuned(tmp_path_factory):
    return beside_result(capture_autotuned, tmp_path_factory)


def test_a_real_autotuning_decision_is_recorded(autotuned):
    proc, store = autotuned
    print(proc.stdout[-4000:], proc.stderr[-4000:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    [d] = read_autotune(store)
    assert d.kernel == "axpy" and d.how == "benchmarked" and d.key[0] == 1 << 24 and d.bench_s > 0
    assert len(d.timings) == 3 and all(t.ms and t.ms[0] > 0 for t in d.timings)
    fastest = min(d.timings, key=lambda t: t.ms[0])
    assert fastest.config == d.best, "Triton chose the config it timed fastest"
    assert "autotuned axpy [n=16777216" in proc.stderr and "<- chosen" in proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["autotune"][0]["best"] == json.loads(json.dumps(d.to_json()))["best"]
    blocks = {v.constexprs["BLOCK"]: v for v in read_records(store)}
    assert sorted(blocks) == [128, 1024, 4096], "every config the autotuner timed was compiled and recorded"
    best = blocks[d.best.kwargs["BLOCK"]]
    assert best.launches.calls >= 3, "the program's own launches went to the chosen variant"
