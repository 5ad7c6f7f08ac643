"""The Spine-Triton forum's fused matmul + softmax, as written there.

It computes softmax(A @ B) along axis 0 of a single BLOCK_SIZE x BLOCK_SIZE tile: correct only
when the whole matrix is one block (grid (1,), M = N = K = BLOCK_SIZE), which is how the forum
called it, against `torch.softmax(torch.matmul(a, b), axis=0)`.
"""

import torch
import triton
import triton.language as tl

from . import Example, KernelSpec, register


@triton.jit
def fused_mm_softmax_kernel(a_ptr, b_ptr, c_ptr,
                            stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                            BLOCK_SIZE: tl.constexpr):
    offs_m = tl.arange(0, BLOCK_SIZE)
    offs_n = tl.arange(0, BLOCK_SIZE)
    offs_k = tl.arange(0, BLOCK_SIZE)
    a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
    c = tl.dot(a, b)
    c_max = tl.max(c, axis=0)
    numerator = tl.exp(c - c_max[None, :])
    denominator = tl.sum(numerator, axis=0)
    out = numerator / denominator[None, :]
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, out)


def _example(size, dtype, device, BLOCK_SIZE=128):
    # The forum kernel is one tile: its size *is* BLOCK_SIZE; `size` is ignored on purpose.
    n = BLOCK_SIZE
    a = torch.randn(n, n, dtype=dtype, device=device)
    b = torch.randn(n, n, dtype=dtype, device=device)
    c = torch.empty(n, n, dtype=torch.float32, device=device)
    return Example(dict(a_ptr=a, b_ptr=b, c_ptr=c, stride_am=a.stride(0), stride_ak=a.stride(1),
                        stride_bk=b.stride(0), stride_bn=b.stride(1), stride_cm=c.stride(0), stride_cn=c.stride(1)),
                   dict(BLOCK_SIZE=BLOCK_SIZE), (1,), inputs=("a_ptr", "b_ptr"), output="c_ptr",
                   size=f"{n}x{n}x{n}")


register(KernelSpec(
    name="fused_mm_softmax", fn=fused_mm_softmax_kernel, example=_example, constexprs=dict(BLOCK_SIZE=128),
    reference=lambda a, b: torch.softmax(torch.matmul(a.float(), b.float()), axis=0), default_size="128",
    bytes_moved=lambda e: 3 * e.args["a_ptr"].numel() * 4,
    flops=lambda e: 2 * e.args["a_ptr"].shape[0] ** 3,
    summary="Spine-Triton forum kernel: tl.dot of one BLOCK_SIZE^2 tile, softmax along axis 0 (grid (1,))",
    notes=("correct only when the whole matrix is one block: grid (1,), M = N = K = BLOCK_SIZE",)))
