"""Dots that make no matrix instruction, for two reasons, written as refactors leave them."""

import triton
import triton.language as tl


@triton.jit
def unused_dot_kernel(q_ptr, k_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    q = tl.load(q_ptr + offs[:, None] * BLOCK + offs[None, :])
    k = tl.load(k_ptr + offs[:, None] * BLOCK + offs[None, :])
    unused = tl.dot(q, k)  # left over from a refactor: its result is never used
    s = tl.sum(q.to(tl.float32), axis=1)
    tl.store(out_ptr + offs, s)


@triton.jit
def ieee_dot_kernel(q_ptr, k_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    q = tl.load(q_ptr + offs[:, None] * BLOCK + offs[None, :])
    k = tl.load(k_ptr + offs[:, None] * BLOCK + offs[None, :])
    p = tl.dot(q, k, input_precision="ieee")  # full fp32: not what tensor cores do
    tl.store(out_ptr + offs, tl.sum(p, axis=1))


_args = {"q_ptr": "*fp16:32x32", "k_ptr": "*fp16:32x32", "out_ptr": "*fp32:32"}
_fp32 = {"q_ptr": "*fp32:32x32", "k_ptr": "*fp32:32x32", "out_ptr": "*fp32:32"}
kinspect_examples = {
    "unused_dot_kernel": {"args": _args, "constexprs": {"BLOCK": 32}},
    "ieee_dot_kernel": {"args": _fp32, "constexprs": {"BLOCK": 32}},
}
