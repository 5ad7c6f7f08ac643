"""The shipped kernels at real sizes on a GPU, against torch (opt-in: `python -m pytest -m gpu tests/gpu`).

Speed is benchmarks/kernels_gpu.py's business; these check results, in every dtype (the CPU
interpreter cannot check bfloat16 matrix products), with the autotuned launchers the benchmark times.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from kinspect.bench.check import compare
from kinspect.cli import main
from kinspect.kernels import elementwise, fused_mm_softmax_tiled, matmul, softmax

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16


def ok(out, ref, precision):
    c = compare(out.float(), ref.float(), precision=precision)
    assert c.ok, c.describe()


def name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


SOFTMAX_SHAPES = [(8192, 8192), (32768, 1024), (1048576, 2), (64, 262144), (4097, 1000), (3, 1), (1000, 3)]
# each strategy (one row or several per program, looped rows, masked odd widths) in float32 and
# bfloat16; float16 takes bfloat16's strategies (same item size), so two shapes check it
SOFTMAX = [(shape, dtype) for dtype in (F32, BF16) for shape in SOFTMAX_SHAPES] + [(SOFTMAX_SHAPES[0], F16),
                                                                                   (SOFTMAX_SHAPES[3], F16)]
# the autotuned paths: whole rows, narrowest to widest (each width compiles its own configs), and the two
# passes past WHOLE_ROW_MAX (2048 would compile the same configs as 4096); 64 to 1024 are also the sizes
# tests/gpu/test_launch_live.py launches, which then find them prepared in this process
SQUARE = [(n, dtype) for dtype in (F32, BF16) for n in (64, 256, 512, 1024, 4096)]
ODD = [(1000, 777, 333), (64, 4096, 64), (4096, 64, 100), (1, 1, 1), (129, 257, 17)]
# every odd shape along both dims in tf32 and bfloat16; float16 (the same code as bfloat16 but for the
# conversions) on two of them, one per dim: each case is a compile of its own
ODD_CASES = [(mnk, dim, dtype) for dtype in (F32, BF16) for dim in (-1, 0) for mnk in ODD] + [(ODD[0], -1, F16),
                                                                                             (ODD[4], 0, F16)]
MATMUL = [(mnk, dtype) for mnk in [(4096, 4096, 4096), (1000, 777, 333), (1, 1, 1)] for dtype in (F16, BF16, F32)]
ELEMENTWISE = [F32, BF16, F16]


def _cases() -> list:
    """Every case of this file's tests that takes no fixture, those that compile the most first."""
    return ([(test_fused_tiled_square_along_rows, c) for c in SQUARE] + [(test_matmul_autotuned, c) for c in MATMUL]
            + [(test_fused_tiled_odd_shapes_both_dims, c) for c in ODD_CASES]
            + [(test_softmax_at_real_sizes, c) for c in SOFTMAX] + [(test_elementwise_at_real_sizes, (d,))
                                                                    for d in ELEMENTWISE]
            + [(test_softmax_on_a_strided_view_and_the_one_row_kernel, ()),
               (test_fused_tiled_ieee_is_float32_exact, ())])


def compile_ahead(worker: int, workers: int) -> None:
    """Run every `workers`-th case from `worker` on, in a process of its own: their kernels compile
    into the Triton cache the tests then load them from (a failure here is the test's to report)."""
    for fn, args in _cases()[worker::workers]:
        try:
            fn(*args)
        except Exception as e:
            print(f"{fn.__name__}{args}: {type(e).__name__}: {str(e)[:200]}")


@pytest.fixture(scope="module", autouse=True)
def _compiled_ahead():
    """Triton compiles one kernel at a time in a process, and an autotuned case compiles every config:
    the cases run first in parallel processes, so the tests find their kernels in the Triton cache and
    check their results here, each as before (nothing is shared but the compiled binaries)."""
    workers = max(1, min(8, (os.cpu_count() or 2) // 2))
    t0 = time.perf_counter()
    code = f"from tests.gpu.test_kernels_live import compile_ahead; compile_ahead({{}}, {workers})"
    procs = [subprocess.Popen([sys.executable, "-c", code.format(i)], cwd=Path(__file__).parents[2],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(workers)]
    for proc in procs:
        try:
            out, _ = proc.communicate(timeout=300)
            print(out[-2000:], end="")
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    print(f"{len(_cases())} cases compiled ahead in {workers} processes in {time.perf_counter() - t0:.1f} s")


@pytest.mark.parametrize("shape,dtype", SOFTMAX)
def test_softmax_at_real_sizes(shape, dtype):
    x = torch.randn(*shape, device="cuda", dtype=dtype)
    ok(softmax.softmax(x), torch.softmax(x.float(), -1), name(dtype))


def test_softmax_on_a_strided_view_and_the_one_row_kernel():
    x = torch.randn(3000, 1024, device="cuda")[:, :1000]
    ok(softmax.softmax(x), torch.softmax(x, -1), "float32")
    ok(softmax.softmax_one_row(x), torch.softmax(x, -1), "float32")


@pytest.mark.parametrize("n,dtype", SQUARE)
def test_fused_tiled_square_along_rows(n, dtype):
    a = (torch.randn(n, n, device="cuda") * n ** -0.25).to(dtype)
    b = (torch.randn(n, n, device="cuda") * n ** -0.25).to(dtype)
    out = fused_mm_softmax_tiled.fused_mm_softmax_tiled(a, b)
    assert out.dtype == dtype
    ok(out, torch.softmax(a.float() @ b.float(), -1), "tf32" if dtype == F32 else name(dtype))


@pytest.mark.parametrize("mnk,dim,dtype", ODD_CASES)
def test_fused_tiled_odd_shapes_both_dims(mnk, dim, dtype):
    m, n, k = mnk
    a = (torch.randn(m, k, device="cuda") * k ** -0.25).to(dtype)
    b = (torch.randn(k, n, device="cuda") * k ** -0.25).to(dtype)
    # plan()'s tile, not autotuned: every odd shape is its own specialization, and autotuning each
    # would compile every configuration again (the square test above covers the autotuned launcher)
    out = fused_mm_softmax_tiled.fused_mm_softmax_tiled(a, b, dim, autotune=False)
    ok(out, torch.softmax(a.float() @ b.float(), dim), "tf32" if dtype == F32 else name(dtype))


def test_fused_tiled_ieee_is_float32_exact():
    a, b = torch.randn(300, 200, device="cuda"), torch.randn(200, 500, device="cuda")
    out = fused_mm_softmax_tiled.fused_mm_softmax_tiled(a, b, input_precision="ieee")
    ok(out, torch.softmax(a.double() @ b.double(), -1), "float32")


@pytest.mark.parametrize("mnk,dtype", MATMUL)
def test_matmul_autotuned(mnk, dtype):
    m, n, k = mnk
    a, b = torch.randn(m, k, device="cuda", dtype=dtype), torch.randn(k, n, device="cuda", dtype=dtype)
    out = matmul.matmul(a, b, autotune=m == 4096)  # odd shapes: the default tile, one compile each
    ok(out, a.float() @ b.float(), "tf32" if dtype == F32 else name(dtype))


@pytest.mark.parametrize("dtype", ELEMENTWISE)
def test_elementwise_at_real_sizes(dtype):
    x = torch.randn(1 << 24, device="cuda", dtype=dtype) * 6
    y = torch.randn(1 << 24, device="cuda", dtype=dtype)
    ok(elementwise.gelu(x), torch.nn.functional.gelu(x.float(), approximate="tanh"), name(dtype))
    ok(elementwise.add(x, y), x.float() + y.float(), name(dtype))
    m = x.view(4096, 4096)
    ok(elementwise.square(m), m.float() * m.float(), name(dtype))


def test_bench_runs_both_passes_of_the_tiled_kernel(tmp_path):
    """kinspect bench on the two-pass path: the check sees pass 2's output, the variant is pass 1's."""
    r = CliRunner().invoke(main, ["bench", "fused_mm_softmax_tiled", "--size", "2048", "--json", "--no-compile",
                                  "--store", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["check"]["ok"], d["check"]
    assert d["constexprs"]["ONE_TILE"] is False and d["asm"]["matrix"] > 0
    assert d["first_call"]["cold"]["cache_hit"] is False
    print(json.dumps({k: d[k] for k in ("steady", "throughput", "references")}, indent=1))


def test_bench_softmax_narrow_rows(tmp_path):
    r = CliRunner().invoke(main, ["bench", "softmax", "--size", "1048576x2", "--json", "--no-compile",
                                  "--store", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["check"]["ok"] and d["method"]["grid"] == [512] and d["options"]["num_warps"] == 4
    print(json.dumps(d["throughput"], indent=1))
