"""The shipped kernels are right on odd shapes, and compile to what they were designed for.

Correctness runs every case under Triton's interpreter in ONE child process (TRITON_INTERPRET is
read when @triton.jit decorates, so it must be set before triton is imported): this module run as
a script is that child. It prints one JSON line per case; the tests read them.

Triton 3.9's interpreter computes bfloat16 arithmetic on the raw bits (seen: a 16x16 bf16 tl.dot
off by 2e10, bf16 x + x giving NaN), so bfloat16 is checked here only for kernels that convert
to float32 before any arithmetic (softmax, gelu); tests/gpu/test_kernels_live.py checks every
kernel in bfloat16 on a GPU.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from tests.helpers import ROOT

F32, F16, BF16 = "float32", "float16", "bfloat16"

# (kernel, shape, dtype, options): shape is (rows, cols) for softmax/square, (M, N, K) for the matmuls,
# (n,) for add and gelu
CASES = [
    *[("softmax", s, d, {}) for s in [(1, 1), (3, 1000), (1000, 3), (37, 100), (2049, 2), (3, 40000)]
      for d in (F32, F16, BF16)],
    ("softmax", (37, 100), F32, {"BLOCK_N": 32}),          # a looped row, several rows per program
    ("softmax", (37, 100), F16, {"ROWS": 4, "BLOCK_N": 16}),
    ("softmax", (50, 33), F32, {"strided": True}),          # a column slice: row stride 64, not 33
    ("softmax_one_row", (37, 100), F32, {}),
    ("softmax_one_row", (1, 1), F32, {}),
    *[("fused_mm_softmax_tiled", s, d, {"dim": dim})
      for s in [(1, 1, 1), (17, 33, 100), (33, 100, 17), (100, 257, 33), (257, 17, 40), (64, 64, 64),
                (130, 600, 9)]
      for d in (F32, F16) for dim in (-1, 0)],
    ("fused_mm_softmax_tiled", (100, 257, 33), F32, {"dim": -1, "input_precision": "ieee"}),
    # the GPU path: autotuning picks a tile (here the 2nd config, BLOCK_N=256, not the narrowest the
    # scratch was sized for) and pass 2 must read the statistics at the winner's width
    ("fused_mm_softmax_tiled", (70, 600, 20), F32, {"dim": -1, "autotune": 1}),
    ("fused_mm_softmax_tiled", (70, 100, 20), F16, {"dim": 0, "autotune": 2}),
    # 256 < N <= 1024 on a GPU: whole rows in one launch are timed against the two passes; here the
    # whole rows (BLOCK_N = 512, the 3rd wide config) time faster and must be what runs
    ("fused_mm_softmax_tiled", (40, 300, 24), F32, {"dim": -1, "autotune": 2, "wide": 1}),
    ("fused_mm_softmax_tiled", (300, 40, 24), F16, {"dim": 0, "autotune": 0, "wide": 1}),
    *[("matmul", s, d, {}) for s in [(1, 1, 1), (100, 72, 40), (33, 17, 257)] for d in (F32, F16)],
    *[("gelu", s, d, {}) for s in [(1,), (1001,)] for d in (F32, F16, BF16)],
    *[("square", s, d, {}) for s in [(1, 1), (37, 100), (3, 1000)] for d in (F32, F16)],
    *[("add", s, d, {}) for s in [(1,), (1000,), (98433,)] for d in (F32, F16)],
]


def case_id(case) -> str:
    kernel, shape, dtype, opts = case
    extra = "".join(f"-{k}={v}" for k, v in opts.items())
    return f"{kernel}-{'x'.join(map(str, shape))}-{dtype}{extra}"


# --- the child: runs under TRITON_INTERPRET=1 ------------------------------------------------------------

def _run_case(case) -> dict:
    import torch

    from kinspect.bench.check import compare
    from kinspect.kernels import elementwise, fused_mm_softmax_tiled, matmul, softmax

    kernel, shape, dtype, opts = case
    dt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(len(case_id(case)))

    def randn(*s, scale=1.0):
        return (torch.randn(*s, generator=gen) * scale).to(dt)

    precision = dtype
    if kernel in ("softmax", "softmax_one_row"):
        x = randn(shape[0], 64)[:, : shape[1]] if opts.get("strided") else randn(*shape)
        if kernel == "softmax":
            out = softmax.softmax(x, ROWS=opts.get("ROWS"), BLOCK_N=opts.get("BLOCK_N"))
        else:
            out = softmax.softmax_one_row(x)
        ref = torch.softmax(x.float(), dim=-1)
    elif kernel == "fused_mm_softmax_tiled":
        m, n, k = shape
        a, b = randn(m, k, scale=k ** -0.25), randn(k, n, scale=k ** -0.25)
        tuned = "autotune" in opts
        if tuned:
            tuner = _fake_timings(fused_mm_softmax_tiled, shape, opts["dim"], opts["autotune"], opts.get("wide"))
        ip = opts.get("input_precision", "tf32")
        out = fused_mm_softmax_tiled.fused_mm_softmax_tiled(a, b, opts["dim"], autotune=tuned, input_precision=ip)
        ref = torch.softmax(a.float() @ b.float(), dim=opts["dim"])
        if tuned:
            chosen = fused_mm_softmax_tiled.describe_call(a, b, opts["dim"], input_precision=ip, autotune=True)
            expected = tuner.configs[opts["autotune"]]
            if tuner.best_config is not expected or f"BLOCK_M={expected.kwargs['BLOCK_M']} " not in chosen \
                    or ("whole row" in chosen) != (tuner is not fused_mm_softmax_tiled._two_pass):
                return {"id": case_id(case), "error": f"autotuning picked {tuner.best_config}; ran {chosen}"}
    elif kernel == "matmul":
        m, n, k = shape
        a, b = randn(m, k), randn(k, n)
        out, ref = matmul.matmul(a, b), a.float() @ b.float()
    elif kernel == "gelu":
        x = randn(*shape, scale=4.0)
        x[:4] = torch.tensor([20.0, -20.0, 11.0, -11.0], dtype=dt)[: x.numel()]  # where exp overflows
        out, ref = elementwise.gelu(x), torch.nn.functional.gelu(x.float(), approximate="tanh")
    elif kernel == "square":
        x = randn(*shape)
        out, ref = elementwise.square(x), x.float() * x.float()
    elif kernel == "add":
        x, y = randn(*shape), randn(*shape)
        out, ref = elementwise.add(x, y), x.float() + y.float()
    else:
        raise ValueError(kernel)
    check = compare(out.float(), ref, precision=precision)
    return {"id": case_id(case), "dtype": str(out.dtype).removeprefix("torch."), "check": check.to_json()}


def _fake_timings(module, shape, dim, winner: int, wide=None):
    """The autotuner of the path `shape` takes (`wide`: the whole rows tried against two passes),
    timing configuration `winner` fastest: the interpreter cannot time on a device, so this stands in
    for Triton's do_bench (every config still runs) and for the as-called timer that picks the path."""
    m, n, k = shape if dim == -1 else (shape[1], shape[0], shape[2])
    one_tile = module.plan(m, n, k).one_tile
    tuner = module._wide_row if wide else module._whole_row if one_tile else module._two_pass
    others = [t for t in (module._whole_row, module._two_pass, module._wide_row) if t is not tuner]

    def timer(pick):
        calls = []

        def bench(kernel_call, quantiles):
            kernel_call()
            calls.append(kernel_call)
            return [1.0 if len(calls) - 1 == pick else 2.0] * len(quantiles)
        return bench

    tuner._do_bench = timer(winner)  # Triton 3.9's Autotuner keeps its timer there
    for other in others:
        other._do_bench = timer(0)
    for t in (tuner, *others):
        t.cache.clear()
        t.__dict__.pop("do_bench", None)  # a cached_property: it would keep an earlier case's timer
    # the path timer runs each candidate once (it must work) and times the wanted path faster
    module._path_timer = lambda call, args: (call(*args), 1.0 if call.path.one_tile == bool(wide) else 2.0)[1]
    return tuner


def _child() -> None:
    import warnings

    warnings.filterwarnings("ignore")
    for case in CASES:
        try:
            print(json.dumps(_run_case(case)), flush=True)
        except Exception as e:  # one case failing must not hide the others
            print(json.dumps({"id": case_id(case), "error": f"{type(e).__name__}: {e}"}), flush=True)


if __name__ == "__main__":
    import numpy as np

    np.seterr(all="ignore")  # masked-off lanes compute -inf - -inf; they are never stored
    _child()
    sys.exit(0)


# --- the tests ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def interpreted() -> dict:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    root = str(ROOT)
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])
    proc = subprocess.run([sys.executable, __file__], capture_output=True, text=True, env=env, timeout=600)
    results = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            results[d["id"]] = d
    assert results, f"the interpreter's process printed nothing (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return results


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_kernel_matches_torch_under_the_interpreter(interpreted, case):
    got = interpreted.get(case_id(case))
    assert got is not None, "the case did not run"
    assert "error" not in got, got["error"]
    assert got["dtype"] == case[2], "the output keeps the input's dtype"
    check = got["check"]
    assert check["shape_ok"] and check["ok"], check


def test_every_case_ran():
    assert len({case_id(c) for c in CASES}) == len(CASES)


# --- the strategy and plan are plain functions of the shape ---------------------------------------------

def test_softmax_strategy_by_shape():
    from kinspect.kernels.softmax import strategy

    narrow = strategy(1048576, 2, "float32")
    assert (narrow.rows_per_program, narrow.block_n, narrow.one_pass, narrow.programs) == (2048, 2, True, 512)
    assert strategy(1048576, 2, "bfloat16").rows_per_program == 4096  # 16 KiB a program whatever the dtype
    assert strategy(32768, 1024).rows_per_program == 4
    wide = strategy(8192, 8192)
    assert (wide.rows_per_program, wide.block_n, wide.one_pass, wide.num_warps) == (1, 8192, True, 8)
    assert wide.kind == "one row per program"
    looped = strategy(4, 40000)
    assert not looped.one_pass and looped.block_n == 4096 and looped.kind == "looped row (two passes)"
    assert strategy(16384 * 2, 16384).one_pass and not strategy(4, 16385).one_pass  # 64 KiB of float32 a row
    assert strategy(3, 1000).rows_per_program == 4  # never more rows per program than the input has


def test_fused_tiled_plan_by_n():
    from kinspect.kernels.fused_mm_softmax_tiled import WHOLE_ROW_MAX, plan

    assert plan(4096, WHOLE_ROW_MAX, 4096).one_tile and not plan(4096, WHOLE_ROW_MAX + 1, 4096).one_tile
    small = plan(64, 64, 64)
    assert small.one_tile and small.block_n == 64
    assert plan(100, 17, 3).block_n == 32  # the row rounded up to a power of two
    assert not plan(1000, 100, 10, BLOCK_N=32).one_tile  # -p BLOCK_N narrower than the row: two passes
    assert plan(1000, 600, 10, BLOCK_N=1024).one_tile


def test_bad_shapes_and_dims_are_errors():
    import torch

    from kinspect.kernels.fused_mm_softmax_tiled import fused_mm_softmax_tiled

    with pytest.raises(ValueError, match="not a matrix product"):
        fused_mm_softmax_tiled(torch.ones(3, 4), torch.ones(5, 6))
    with pytest.raises(ValueError, match="dim must be"):
        fused_mm_softmax_tiled(torch.ones(3, 4), torch.ones(4, 6), dim=2)


# --- through the CLI: the second pass, dim=0 and bad -p values ----------------------------------------------

def test_cli_interpret_runs_both_passes_and_dim_0():
    from click.testing import CliRunner

    from kinspect.cli import main

    r = CliRunner().invoke(main, ["bench", "fused_mm_softmax_tiled", "--interpret", "--size", "100x257x33",
                                  "-p", "DIM=0", "-p", "BLOCK_N=32", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["check"]["ok"], d["check"]
    # dim=0 is the transposed problem: 257 rows in 3 tiles of 128, 100 columns in 4 tiles of 32
    assert d["size"] == "100x257x33" and d["grid"] == [3 * 4]


@pytest.mark.parametrize("argv,words", [
    (["-p", "DIM=2"], "-p DIM=2"),
    (["-p", "INPUT_PRECISION=fp64"], "-p INPUT_PRECISION=fp64"),
])
def test_bad_fused_tiled_options_are_one_line(tmp_path, argv, words):
    from click.testing import CliRunner

    from kinspect.cli import main

    r = CliRunner().invoke(main, ["dump", "fused_mm_softmax_tiled", "-t", "cuda:90", *argv, "--store", str(tmp_path)])
    assert r.exit_code == 2 and words in r.output and r.output.count("\n") == 1, r.output


# --- what they compile to for an H100/H200 (offline, sm90) ------------------------------------------------------

def _ptx(kernel: str, size: str, **constexprs) -> tuple[str, dict]:
    from kinspect import api

    v = api.dump(kernel, target="cuda:90", size=size, constexprs=constexprs,
                 out_dir=tempfile.mkdtemp(prefix="kinspect-test-")).variant
    return Path(v.path, v.stage("ptx").file).read_text(), v.options


def _memory_ops(ptx: str) -> Counter:
    return Counter(re.findall(r"\b((?:ld|st)\.global(?:\.v\d)?)\.b32", ptx))


def test_narrow_softmax_moves_vectors_and_the_lecture_kernel_scalars():
    ptx, options = _ptx("softmax", "1048576x2")
    ops = _memory_ops(ptx)
    assert ops["ld.global.v2"] == ops["st.global.v2"] == 16 and ops["ld.global"] == 0, ops  # 2048 rows / 128 threads
    assert options["num_warps"] == 4
    one_row, _ = _ptx("softmax_one_row", "1048576x2")
    ops = _memory_ops(one_row)
    assert ops["ld.global.v2"] == 0 and ops["ld.global"] >= 1, ops


def test_wide_softmax_loads_16_bytes_a_thread_and_instruction():
    ptx, options = _ptx("softmax", "8192x8192")
    ops = _memory_ops(ptx)
    assert ops["ld.global.v4"] == ops["st.global.v4"] == 8 and options["num_warps"] == 8, ops  # 8192 / 256 / 4


@pytest.mark.parametrize("size,one_tile", [("128", True), ("1024", False)])
def test_fused_tiled_uses_wgmma_on_both_paths(size, one_tile):
    ptx, _ = _ptx("fused_mm_softmax_tiled", size)
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k8\.f32\.tf32\.tf32", ptx)
    # the whole-row path stores the output only; the two-pass path also the per-tile statistics
    assert ("st.global.b32" in ptx) != one_tile


def test_fused_tiled_ieee_precision_has_no_tensor_core_op():
    ptx, _ = _ptx("fused_mm_softmax_tiled", "128", INPUT_PRECISION="ieee")
    assert "wgmma" not in ptx and "mma.sync" not in ptx and "fma.rn.f32" in ptx


def test_matmul_default_tile_is_a_wgmma_kernel_with_8_warps():
    ptx, options = _ptx("matmul", "1024")
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.f16\.f16", ptx), "128x256 tile, 2 warpgroups"
    assert options["num_warps"] == 8 and options["num_stages"] == 3


def test_matmul_default_tile_fits_shared_memory_in_every_dtype():
    import torch

    from kinspect.kernels.matmul import CONFIGS, SHARED_BYTES, default_config

    assert default_config(torch.float16) is CONFIGS[0] is default_config(torch.bfloat16)
    f32 = default_config(torch.float32)
    k = f32.kwargs
    assert f32 is not CONFIGS[0] and (k["BLOCK_M"] + k["BLOCK_N"]) * k["BLOCK_K"] * 4 * f32.num_stages <= SHARED_BYTES
