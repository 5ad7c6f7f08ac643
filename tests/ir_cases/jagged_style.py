"""Jagged-tensor kernels written the way recommender-system libraries write them (one sequence a program,
its bounds read from an offsets array, the work in a @triton.jit helper the kernel calls once), for the
IR-verdict tests and benchmarks/verdicts_vs_ir.py: one call holds the helper's one-element loads of the
offsets and its tensor loads of the rows. Written here, not copied."""

import triton
import triton.language as tl


@triton.jit
def _concat_rows(OffsetsA, ValuesA, OffsetsB, ValuesB, Out, D, BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    start_a = tl.load(OffsetsA + b)
    end_a = tl.load(OffsetsA + b + 1)
    start_b = tl.load(OffsetsB + b)
    end_b = tl.load(OffsetsB + b + 1)
    out_start = start_a + start_b
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    for r in range(0, end_a - start_a):
        row = tl.load(ValuesA + (start_a + r) * D + cols, mask=mask)
        tl.store(Out + (out_start + r) * D + cols, row, mask=mask)
    for r in range(0, end_b - start_b):
        row = tl.load(ValuesB + (start_b + r) * D + cols, mask=mask)
        tl.store(Out + (out_start + end_a - start_a + r) * D + cols, row, mask=mask)


@triton.jit
def concat_jagged_kernel(OffsetsA, ValuesA, OffsetsB, ValuesB, Out, D, BLOCK_D: tl.constexpr):
    _concat_rows(OffsetsA, ValuesA, OffsetsB, ValuesB, Out, D, BLOCK_D)


_concat = {"OffsetsA": "*i64", "ValuesA": "*bf16", "OffsetsB": "*i64", "ValuesB": "*bf16", "Out": "*bf16",
           "D": "i32:256"}
kinspect_examples = {
    "concat_jagged_kernel": {"args": _concat, "constexprs": {"BLOCK_D": 256}},
}
