"""How many hand-written kernels get their bytes per call from their index expressions, and how far those
are from the tensor-size bound every hand-written kernel got before (kinspect.analysis.traffic).

    python benchmarks/handwritten_bytes.py

The kernels are written here in the styles of two public projects kinspect had not been measured on
(read, not copied): xformers' ops/_triton (an RMSNorm that loops over its row twice with `x_ptr +=
row * stride` and an INCLUDE_WEIGHT branch, an index_select over a 2-D launch grid, a grouped tiled
matmul with hint calls, a RoPE over half rows) and bitsandbytes' backends/triton (a blockwise 8-bit
quantizer that reshapes one arange into blocks, a 2-state optimizer step, a dequantizer that hands its
pointers to a helper, a code-book search by loop). Each is compiled offline for cuda:90 and given a
launch record of a realistic size; the table shows the method, the estimate, the tensor-size bound
and the notes.
"""

from __future__ import annotations

import dataclasses
import tempfile
import textwrap
import time
from pathlib import Path

KERNELS = '''
import triton
import triton.language as tl


@triton.jit
def _norm_helper(x):
    return x * 2


@triton.jit
def xf_rms_norm(x_ptr, out_ptr, w_ptr, eps, stride, N_COLS: tl.constexpr, BLOCK_SIZE: tl.constexpr,
                INCLUDE_WEIGHT: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_ptr += row * stride
    out_ptr += row * stride
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, N_COLS, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        v = tl.load(x_ptr + cols, mask=cols < N_COLS, other=0.0).to(tl.float32)
        acc += v * v
    inv = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N_COLS + eps)
    for start in range(0, N_COLS, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        m = cols < N_COLS
        v = tl.load(x_ptr + cols, mask=m, other=0.0).to(tl.float32)
        if INCLUDE_WEIGHT:
            tl.store(out_ptr + cols, v * inv * tl.load(w_ptr + cols, mask=m), mask=m)
        else:
            tl.store(out_ptr + cols, v * inv, mask=m)


@triton.jit
def xf_index_select(out_ptr, src_ptr, idx_ptr, n_idx, n_cols, s0, s1, BI: tl.constexpr, BC: tl.constexpr):
    p0 = tl.program_id(axis=0)
    p1 = tl.program_id(axis=1)
    which = p0 * BI + tl.arange(0, BI)
    src_rows = tl.load(idx_ptr + which, mask=which < n_idx)
    cols = p1 * BC + tl.arange(0, BC)
    keep = (which[:, None] < n_idx) & (cols[None, :] < n_cols)
    vals = tl.load(src_ptr + src_rows[:, None] * s0 + cols[None, :] * s1, mask=keep)
    tl.store(out_ptr + which[:, None] * s0 + cols[None, :] * s1, vals, mask=keep)


@triton.jit
def xf_tiled_mm(A, B, C, M, N, K, sam, sak, sbk, sbn, scm, scn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // group_size
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    A = A + (ram[:, None] * sam + rk[None, :] * sak)
    B = B + (rk[:, None] * sbk + rbn[None, :] * sbn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(A, mask=rk[None, :] < K - k * BLOCK_K, other=0.)
        b = tl.load(B, mask=rk[:, None] < K - k * BLOCK_K, other=0.)
        acc += tl.dot(a, b)
        A += BLOCK_K * sak
        B += BLOCK_K * sbk
    C = C + (rm[:, None] * scm + rn[None, :] * scn)
    tl.store(C, acc.to(tl.float16), mask=(rm < M)[:, None] & (rn < N)[None, :])


@triton.jit
def xf_rope_half(x_ptr, cos_ptr, sin_ptr, out_ptr, seq_stride, head_dim, HALF: tl.constexpr):
    tok = tl.program_id(0)
    d = tl.arange(0, HALF)
    x1 = tl.load(x_ptr + tok * seq_stride + d)
    x2 = tl.load(x_ptr + tok * seq_stride + HALF + d)
    c = tl.load(cos_ptr + tok * HALF + d)
    s = tl.load(sin_ptr + tok * HALF + d)
    tl.store(out_ptr + tok * seq_stride + d, x1 * c - x2 * s)
    tl.store(out_ptr + tok * seq_stride + HALF + d, x2 * c + x1 * s)


@triton.jit
def bnb_quant_blockwise(A_ptr, absmax_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr, SPLIT_NUM_BLOCKS: tl.constexpr):
    first = tl.program_id(0) * SPLIT_NUM_BLOCKS
    lane = tl.arange(0, SPLIT_NUM_BLOCKS * BLOCK_SIZE)
    offs = first * BLOCK_SIZE + lane
    m = offs < n
    a = tl.load(A_ptr + offs, mask=m, other=0.0)
    blocks = tl.reshape(a, (SPLIT_NUM_BLOCKS, BLOCK_SIZE))
    amax = tl.max(tl.abs(blocks), axis=1)
    q = tl.reshape(blocks / amax[:, None] * 127.0, (SPLIT_NUM_BLOCKS * BLOCK_SIZE,))
    tl.store(absmax_ptr + first + tl.arange(0, SPLIT_NUM_BLOCKS), amax)
    tl.store(out_ptr + offs, q.to(tl.int8), mask=m)


@triton.jit
def bnb_adam_step(p_ptr, g_ptr, s1_ptr, s2_ptr, lr, beta1, beta2, eps, n, BLOCK_SIZE: tl.constexpr,
                  N_PER_TH: tl.constexpr):
    pid = tl.program_id(axis=0)
    first = pid * N_PER_TH
    offs = first * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE * N_PER_TH)
    m = offs < n
    g = tl.load(g_ptr + offs, mask=m, other=0.0).to(tl.float32)
    p = tl.load(p_ptr + offs, mask=m, other=0.0).to(tl.float32)
    s1 = tl.load(s1_ptr + offs, mask=m, other=0.0)
    s2 = tl.load(s2_ptr + offs, mask=m, other=0.0)
    s1 = s1 * beta1 + (1.0 - beta1) * g
    s2 = s2 * beta2 + (1.0 - beta2) * g * g
    p = p - lr * s1 / (tl.sqrt(s2) + eps)
    tl.store(p_ptr + offs, p.to(tl.bfloat16), mask=m)
    tl.store(s1_ptr + offs, s1, mask=m)
    tl.store(s2_ptr + offs, s2, mask=m)


@triton.jit
def _dequant_rows(a_ptr, code_ptr, absmax_ptr, out_ptr, offs, m, BLOCK_SIZE: tl.constexpr):
    a = tl.load(a_ptr + offs, m, other=0).to(tl.uint8)
    v = tl.load(code_ptr + a, m)
    s = tl.load(absmax_ptr + offs // BLOCK_SIZE, mask=m)
    tl.store(out_ptr + offs, v * s, mask=m)


@triton.jit
def bnb_dequant_blockwise(a_ptr, code_ptr, absmax_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr, SPLIT: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * SPLIT + tl.arange(0, SPLIT)
    _dequant_rows(a_ptr, code_ptr, absmax_ptr, out_ptr, offs, offs < n, BLOCK_SIZE)


@triton.jit
def bnb_code_search(A_ptr, code_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(A_ptr + offs, mask=m, other=0.0)
    lo = tl.zeros([BLOCK], dtype=tl.int32)
    step = 128
    for _ in range(8):
        mid = lo + step
        lo = tl.where(tl.load(code_ptr + mid) < x, mid, lo)
        step = step // 2
    tl.store(out_ptr + offs, lo.to(tl.uint8), mask=m)
'''

FP = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "i8": "int8", "u8": "uint8", "i64": "int64"}


def tensor(name, shape, dtype, strides=None):
    from kinspect.core.model import ArgSpec

    if strides is None:
        strides, step = [], 1
        for n in reversed(shape):
            strides.insert(0, step)
            step *= n
    return ArgSpec(name, "tensor", shape=tuple(shape), strides=tuple(strides), dtype=dtype, device="cuda:0")


def cases():
    """(kernel, pointer types, constexprs, grid, launch arguments, what a hand count gives or None)."""
    from kinspect.core.model import ArgSpec as A

    rows, n = 4096, 2816
    yield ("xf_rms_norm", {"x_ptr": "*bf16", "out_ptr": "*bf16", "w_ptr": "*bf16", "eps": "fp32", "stride": "i32"},
           {"N_COLS": n, "BLOCK_SIZE": 1024, "INCLUDE_WEIGHT": True}, (rows, 1, 1),
           [tensor("x_ptr", (rows, n), "bfloat16"), tensor("out_ptr", (rows, n), "bfloat16"),
            tensor("w_ptr", (n,), "bfloat16"), A("eps", "float", 1e-6), A("stride", "int", n)],
           rows * n * 2 * 2 + n * 2)
    ni, src_rows, cols = 3000, 50_000, 1000
    yield ("xf_index_select", {"out_ptr": "*fp32", "src_ptr": "*fp32", "idx_ptr": "*i64", "n_idx": "i32",
                               "n_cols": "i32", "s0": "i32", "s1": "i32"}, {"BI": 32, "BC": 128},
           (-(-ni // 32), -(-cols // 128), 1),
           [tensor("out_ptr", (ni, cols), "float32"), tensor("src_ptr", (src_rows, cols), "float32"),
            tensor("idx_ptr", (ni,), "int64"), A("n_idx", "int", ni), A("n_cols", "int", cols), A("s0", "int", cols),
            A("s1", "int", 1)], None)
    m, nn, k = 4096, 4096, 4096
    yield ("xf_tiled_mm", {"A": "*fp16", "B": "*fp16", "C": "*fp16", **{x: "i32" for x in
                            ("M", "N", "K", "sam", "sak", "sbk", "sbn", "scm", "scn")}},
           {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, ((m // 128) * (nn // 128), 1, 1),
           [tensor("A", (m, k), "float16"), tensor("B", (k, nn), "float16"), tensor("C", (m, nn), "float16"),
            *(A(x, "int", y) for x, y in (("M", m), ("N", nn), ("K", k), ("sam", k), ("sak", 1), ("sbk", nn),
                                          ("sbn", 1), ("scm", nn), ("scn", 1)))],
           (m * k + k * nn + m * nn) * 2)
    tok, hd = 8192, 128
    yield ("xf_rope_half", {"x_ptr": "*bf16", "cos_ptr": "*fp32", "sin_ptr": "*fp32", "out_ptr": "*bf16",
                            "seq_stride": "i32", "head_dim": "i32"}, {"HALF": 64}, (tok, 1, 1),
           [tensor("x_ptr", (tok, 3 * hd), "bfloat16"), tensor("cos_ptr", (tok, 64), "float32"),
            tensor("sin_ptr", (tok, 64), "float32"), tensor("out_ptr", (tok, 3 * hd), "bfloat16"),
            A("seq_stride", "int", 3 * hd), A("head_dim", "int", hd)],
           tok * hd * 2 * 2 + tok * 64 * 4 * 2)          # q of a fused qkv row: a third of x and out
    q = 64 * 1024 * 1024 + 300
    yield ("bnb_quant_blockwise", {"A_ptr": "*fp32", "absmax_ptr": "*fp32", "out_ptr": "*i8", "n": "i32"},
           {"BLOCK_SIZE": 256, "SPLIT_NUM_BLOCKS": 4}, (-(-q // 1024), 1, 1),
           [tensor("A_ptr", (q,), "float32"), tensor("absmax_ptr", (-(-q // 256),), "float32"),
            tensor("out_ptr", (q,), "int8"), A("n", "int", q)], None)
    p = 7_000_000
    yield ("bnb_adam_step", {"p_ptr": "*bf16", "g_ptr": "*bf16", "s1_ptr": "*fp32", "s2_ptr": "*fp32", "lr": "fp32",
                             "beta1": "fp32", "beta2": "fp32", "eps": "fp32", "n": "i32"},
           {"BLOCK_SIZE": 256, "N_PER_TH": 4}, (-(-p // 1024), 1, 1),
           [tensor("p_ptr", (p,), "bfloat16"), tensor("g_ptr", (p,), "bfloat16"), tensor("s1_ptr", (p,), "float32"),
            tensor("s2_ptr", (p,), "float32"), *(A(x, "float", 0.9) for x in ("lr", "beta1", "beta2", "eps")),
            A("n", "int", p)], p * (2 + 2 + 4 + 4) + p * (2 + 4 + 4))
    yield ("bnb_dequant_blockwise", {"a_ptr": "*u8", "code_ptr": "*fp32", "absmax_ptr": "*fp32", "out_ptr": "*fp32",
                                     "n": "i32"}, {"BLOCK_SIZE": 256, "SPLIT": 1024}, (-(-q // 1024), 1, 1),
           [tensor("a_ptr", (q,), "uint8"), tensor("code_ptr", (256,), "float32"),
            tensor("absmax_ptr", (-(-q // 256),), "float32"), tensor("out_ptr", (q,), "float32"), A("n", "int", q)],
           None)
    yield ("bnb_code_search", {"A_ptr": "*fp32", "code_ptr": "*fp32", "out_ptr": "*u8", "n": "i32"}, {"BLOCK": 1024},
           (-(-q // 1024), 1, 1), [tensor("A_ptr", (q,), "float32"), tensor("code_ptr", (256,), "float32"),
                                   tensor("out_ptr", (q,), "uint8"), A("n", "int", q)], None)


def main() -> None:
    from kinspect import api
    from kinspect.analysis.kernel_ast import parse
    from kinspect.analysis.traffic import INDEX, estimate
    from kinspect.core.model import ArgSpec, Launches, LaunchSignature

    tmp = Path(tempfile.mkdtemp(prefix="handwritten-bytes-"))
    src = tmp / "styles.py"
    rows = list(cases())
    examples = {name: {"args": types, "constexprs": consts} for name, types, consts, *_ in rows}
    src.write_text(textwrap.dedent(KERNELS) + f"\nkinspect_examples = {examples!r}\n")
    got = 0
    for name, types, consts, grid, args, hand in rows:
        spec = f"{src}:{name}"
        v = api.dump(spec, target="cuda:90", out_dir=tmp / name).variant
        sig = LaunchSignature(grid=grid, args=(*args, *(ArgSpec(k, "bool" if type(x) is bool else "int", x) for k, x in consts.items())), calls=1)
        v = dataclasses.replace(v, launches=Launches(calls=1, signatures=(sig,)))
        t0 = time.perf_counter()
        t = estimate(v, parse(v), sig.args, grid)        # not the cached estimate: its time is measured
        took = time.perf_counter() - t0
        bound = estimate(v, None, sig.args)
        got += t.method == INDEX
        check = "" if hand is None else f" hand count {hand:,} ({t.bytes / hand - 1:+.2%})"
        print(f"{name:22s} {t.describe():36s} {t.bytes:>14,} B  tensor sizes {bound.bytes:>14,} B "
              f"({t.bytes / bound.bytes:5.1%}) {took:5.2f} s{check}")
        for p in t.pointers:
            print(f"    {p.name:12s} read {p.read:>13,} written {p.written:>13,} {p.how}")
        for note in t.notes:
            print(f"    note: {note}")
    print(f"\n{got} of {len(rows)} hand-written kernels get index-expression bytes (before: 0 of {len(rows)}; every "
          f"hand-written kernel got the tensor-size bound)")


if __name__ == "__main__":
    main()
