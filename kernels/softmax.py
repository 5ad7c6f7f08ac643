"""Row softmax, one row per program (CS336 assignment 2 / the CUDA-MODE lecture's version)."""

import torch
import triton
import triton.language as tl

from . import Example, KernelSpec, parse_size, register


@triton.jit
def softmax_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, num_cols, num_cols_power_of_2: tl.constexpr):
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, num_cols_power_of_2)
    x_ptrs = x_ptr + row_idx * x_row_stride + col_offsets
    x_row = tl.load(x_ptrs, mask=col_offsets < num_cols, other=float("-inf"))
    x_row = x_row - tl.max(x_row, axis=0)
    numerator = tl.exp(x_row)
    denominator = tl.sum(numerator, axis=0)
    y_row = numerator / denominator
    y_ptrs = y_ptr + row_idx * y_row_stride + col_offsets
    tl.store(y_ptrs, y_row, mask=col_offsets < num_cols)


def _example(size, dtype, device, num_cols_power_of_2=None):
    dims = parse_size(size)
    rows, cols = (dims[0], dims[1]) if len(dims) == 2 else (dims[0], dims[0])
    x = torch.randn(rows, cols, dtype=dtype, device=device)
    y = torch.empty_like(x)
    block = num_cols_power_of_2 or triton.next_power_of_2(cols)
    return Example(dict(x_ptr=x, y_ptr=y, x_row_stride=x.stride(0), y_row_stride=y.stride(0), num_cols=cols),
                   dict(num_cols_power_of_2=block), (rows,), inputs=("x_ptr",), output="y_ptr")


register(KernelSpec(
    name="softmax", fn=softmax_kernel, example=_example, constexprs=dict(num_cols_power_of_2=None),
    reference=lambda x: torch.softmax(x, dim=-1), default_size="4096x1024", small_size="37x100",
    bytes_moved=lambda e: 2 * e.args["x_ptr"].numel() * e.args["x_ptr"].element_size(),
    flops=lambda e: 5 * e.args["x_ptr"].numel(),
    summary="row softmax, one row per program, whole row in one block (CS336)"))
