"""Kernels kept in classes as `@staticmethod @triton.jit` methods (launched as Sum.forward[grid]),
and kernels defined only when torch says Triton can run (`if has_triton():`), as some libraries do."""

import triton
import triton.language as tl
from torch.utils._triton import has_triton


class Sum:
    @staticmethod
    @triton.jit
    def forward(output_ptr, input_ptr, y_size, x_size, x_block_size: tl.constexpr, dtype: tl.constexpr):
        y = tl.program_id(0)
        offs = tl.arange(0, x_block_size)
        acc = tl.zeros((x_block_size,), dtype)
        for x in range(0, x_size, x_block_size):
            acc += tl.load(input_ptr + y * x_size + x + offs, mask=x + offs < x_size, other=0.0).to(dtype)
        tl.store(output_ptr + y, tl.sum(acc, 0))

    @staticmethod
    @triton.jit
    def backward(grad_input_ptr, grad_output_ptr, y_size, x_size, x_block_size: tl.constexpr):
        y = tl.program_id(0)
        offs = tl.arange(0, x_block_size)
        g = tl.load(grad_output_ptr + y)
        for x in range(0, x_size, x_block_size):
            tl.store(grad_input_ptr + y * x_size + x + offs, tl.broadcast_to(g, (x_block_size,)),
                     mask=x + offs < x_size)


if has_triton():

    @triton.jit
    def amax_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.atomic_max(out_ptr, tl.max(tl.abs(tl.load(x_ptr + offs, mask=offs < n, other=0.0)), 0))
