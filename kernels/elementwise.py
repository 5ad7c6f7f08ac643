"""Elementwise kernels: add (Triton tutorial), square (CUDA-MODE lecture), gelu (tanh form, CS336)."""

import torch
import triton
import triton.language as tl

from kinspect.backends import direct_launch

from . import Example, KernelSpec, numel, parse_size, register


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def _add_example(size, dtype, device, BLOCK_SIZE=1024):
    n = numel(size)
    x = torch.randn(n, dtype=dtype, device=device)
    y = torch.randn(n, dtype=dtype, device=device)
    out = torch.empty_like(x)
    return Example(dict(x_ptr=x, y_ptr=y, out_ptr=out, n_elements=n), dict(BLOCK_SIZE=BLOCK_SIZE),
                   (triton.cdiv(n, BLOCK_SIZE),), inputs=("x_ptr", "y_ptr"), output="out_ptr",
                   call=lambda: add(x, y, BLOCK_SIZE), call_text=f"add(x, y, BLOCK_SIZE={BLOCK_SIZE})")


register(KernelSpec(
    name="add", fn=add_kernel, example=_add_example, constexprs=dict(BLOCK_SIZE=1024),
    reference=lambda x, y: x + y, default_size="98432", small_size="1000",
    bytes_moved=lambda e: 3 * e.args["x_ptr"].numel() * e.args["x_ptr"].element_size(),
    flops=lambda e: e.args["x_ptr"].numel(),
    summary="vector add, one block of BLOCK_SIZE elements per program (Triton tutorial 01)"))


@triton.jit
def square_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    row = tl.load(input_ptrs, mask=col_offsets < n_cols, other=-float('inf'))
    square_output = row * row
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    output_ptrs = output_row_start_ptr + col_offsets
    tl.store(output_ptrs, square_output, mask=col_offsets < n_cols)


def _rows_cols(size):
    dims = parse_size(size)
    return (dims[0], dims[1]) if len(dims) == 2 else (dims[0], dims[0])


def _square_example(size, dtype, device, BLOCK_SIZE=None):
    rows, cols = _rows_cols(size)
    x = torch.randn(rows, cols, dtype=dtype, device=device)
    y = torch.empty_like(x)
    block = BLOCK_SIZE or triton.next_power_of_2(cols)
    return Example(dict(output_ptr=y, input_ptr=x, input_row_stride=x.stride(0), output_row_stride=y.stride(0),
                        n_cols=cols), dict(BLOCK_SIZE=block), (rows,), inputs=("input_ptr",), output="output_ptr",
                   call=(lambda: square(x)) if BLOCK_SIZE is None else None, call_text="square(x)")


register(KernelSpec(
    name="square", fn=square_kernel, example=_square_example, constexprs=dict(BLOCK_SIZE=None),
    reference=lambda x: x * x, default_size="1823x781", small_size="37x100",
    bytes_moved=lambda e: 2 * e.args["input_ptr"].numel() * e.args["input_ptr"].element_size(),
    flops=lambda e: e.args["input_ptr"].numel(),
    summary="x*x one row per program, BLOCK_SIZE = next_power_of_2(n_cols) by default (CUDA-MODE lecture 14)"))


@triton.jit
def gelu_kernel(x_ptr, y_ptr, num_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < num_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    a = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    # tanh(a) = 1 - 2 / (exp(2a) + 1), Triton having no portable tanh. The assignment's
    # (exp(2a) - 1) / (exp(2a) + 1) is inf / inf = NaN once exp overflows (x > 10.5 in float32);
    # this form gives 1 there, and -1 where exp underflows.
    tanh = 1 - 2 / (tl.exp(2 * a) + 1)
    y = 0.5 * x * (1 + tanh)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def _gelu_example(size, dtype, device, BLOCK_SIZE=1024):
    n = numel(size)
    x = torch.randn(n, dtype=dtype, device=device)
    y = torch.empty_like(x)
    return Example(dict(x_ptr=x, y_ptr=y, num_elements=n), dict(BLOCK_SIZE=BLOCK_SIZE),
                   (triton.cdiv(n, BLOCK_SIZE),), inputs=("x_ptr",), output="y_ptr",
                   call=lambda: gelu(x, BLOCK_SIZE), call_text=f"gelu(x, BLOCK_SIZE={BLOCK_SIZE})")


register(KernelSpec(
    name="gelu", fn=gelu_kernel, example=_gelu_example, constexprs=dict(BLOCK_SIZE=1024),
    reference=lambda x: torch.nn.functional.gelu(x, approximate="tanh"), default_size="1048576", small_size="1000",
    bytes_moved=lambda e: 2 * e.args["x_ptr"].numel() * e.args["x_ptr"].element_size(),
    flops=lambda e: 12 * e.args["x_ptr"].numel(),
    summary="GELU, tanh approximation written with exp, float32 inside (CS336 assignment 2, overflow-safe)"))


# --- launchers: the kernels as functions of tensors (contiguous inputs) -----------------------------------
# Each prepares a problem once (keyed by size, dtypes, device) and then launches the compiled kernel
# directly (kinspect.backends.direct_launch): a few microseconds of Python a call instead of the JIT's tens.
# (Grids in plain integer arithmetic: triton.cdiv and next_power_of_2 are constexpr functions, each
# call a few microseconds of Python.)

_add, _square, _gelu = (direct_launch.KernelLauncher(k) for k in (add_kernel, square_kernel, gelu_kernel))


def add(x: torch.Tensor, y: torch.Tensor, BLOCK_SIZE: int = 1024) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    _add((n, x.dtype, y.dtype, out.dtype, x.device, y.device, BLOCK_SIZE), (-(-n // BLOCK_SIZE),),
         (x, y, out), (n, BLOCK_SIZE))
    return out


def square(x: torch.Tensor) -> torch.Tensor:
    """x * x over a 2-D x, one row per program."""
    y = torch.empty_like(x)
    rows, cols = x.shape
    _square((x.shape, x.stride(0), y.stride(0), x.dtype, x.device), (rows,), (y, x),
            (x.stride(0), y.stride(0), cols, 1 << max(cols - 1, 0).bit_length()))   # next power of 2
    return y


def gelu(x: torch.Tensor, BLOCK_SIZE: int = 1024) -> torch.Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    _gelu((n, x.dtype, x.device, BLOCK_SIZE), (-(-n // BLOCK_SIZE),), (x, y), (n, BLOCK_SIZE))
    return y
