"""Row softmax: a strategy chosen by shape, and the lecture's one-row-per-program version.

`softmax` gives each program enough bytes to keep the memory system busy, whatever the shape:
narrow rows (1048576x2) are handled ROWS at a time as one [ROWS, BLOCK_N] block, wide rows
(8192x8192) one whole row per program, and rows too wide for registers (over 64 KiB) are looped
twice (an online max and sum, then the output). The choice is `strategy(rows, cols, dtype)`, a
plain function that the example, the launcher and the tests share. Arithmetic is in float32
whatever the input dtype; exp is exp2 with a log2(e) scale, which is what tl.exp lowers to anyway.

`softmax_one_row` is the CS336 / CUDA-MODE lecture kernel as written: one row per program, the
whole row in one block. On 1048576x2 it launches a million programs that load 8 bytes each.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from kinspect.backends import direct_launch

from . import Example, KernelSpec, parse_size, register

# A program should move at least this many input bytes: a 1048576x2 float32 softmax gets 2048 rows
# per program (512 programs), not a million programs of 8 bytes.
PROGRAM_BYTES = 16 * 1024
# A whole row stays in registers up to this many bytes (16384 float32); wider rows are looped.
MAX_ROW_BYTES = 64 * 1024
# The chunk a looped row is read in.
LOOP_BYTES = 16 * 1024
# Elements per thread the num_warps rule aims at (at 4 to 16 warps).
ELEMENTS_PER_WARP = 1024


@dataclass(frozen=True)
class Strategy:
    """How `softmax_kernel` covers a rows x cols input."""

    rows_per_program: int
    block_n: int          # columns per block (the whole row when one_pass)
    one_pass: bool        # the row fits one block: read once, written once
    num_warps: int
    programs: int

    @property
    def kind(self) -> str:
        if not self.one_pass:
            return "looped row (two passes)"
        return "one row per program" if self.rows_per_program == 1 else f"{self.rows_per_program} rows per program"

    def describe(self) -> str:
        return (f"{self.kind}: block [{self.rows_per_program}, {self.block_n}], {self.programs:,} programs, "
                f"num_warps={self.num_warps}")


def strategy(rows: int, cols: int, dtype: str | torch.dtype = "float32") -> Strategy:
    """The block shape, pass count and warps for a rows x cols softmax in `dtype`."""
    itemsize = _itemsize(dtype)
    width = triton.next_power_of_2(cols)
    if width * itemsize <= MAX_ROW_BYTES:
        per_program = max(1, PROGRAM_BYTES // (width * itemsize))
        rows_per_program = min(_prev_power_of_2(per_program), triton.next_power_of_2(rows))
        block_n, one_pass = width, True
    else:
        rows_per_program, block_n, one_pass = 1, LOOP_BYTES // itemsize, False
    elements = rows_per_program * block_n
    num_warps = min(16, max(4, elements // ELEMENTS_PER_WARP))
    return Strategy(rows_per_program=rows_per_program, block_n=block_n, one_pass=one_pass, num_warps=num_warps,
                    programs=triton.cdiv(rows, rows_per_program))


def _itemsize(dtype) -> int:
    dtype = getattr(torch, dtype) if isinstance(dtype, str) else dtype
    return torch.empty((), dtype=dtype).element_size()


def _prev_power_of_2(n: int) -> int:
    return 1 << (n.bit_length() - 1)


LOG2E = tl.constexpr(1.4426950408889634)  # exp(x) = exp2(x * log2(e))


@triton.jit
def softmax_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, num_rows, num_cols,
                   ROWS: tl.constexpr, BLOCK_N: tl.constexpr, ONE_PASS: tl.constexpr, CONTIGUOUS: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < num_rows
    cols = tl.arange(0, BLOCK_N)
    if CONTIGUOUS:
        # rows of exactly BLOCK_N elements, back to back: a constexpr stride lets the loads be vectors
        x_rows = x_ptr + rows[:, None] * BLOCK_N
        y_rows = y_ptr + rows[:, None] * BLOCK_N
    else:
        x_rows = x_ptr + rows[:, None] * x_row_stride
        y_rows = y_ptr + rows[:, None] * y_row_stride
    if ONE_PASS:
        if CONTIGUOUS:
            mask = row_ok[:, None]
        else:
            mask = row_ok[:, None] & (cols[None, :] < num_cols)
        x = tl.load(x_rows + cols[None, :], mask=mask, other=-float("inf")).to(tl.float32)
        row_max = tl.max(x, axis=1)
        numerator = tl.exp2((x - row_max[:, None]) * LOG2E)
        y = numerator / tl.sum(numerator, axis=1)[:, None]
        tl.store(y_rows + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        # online max and sum over the row's blocks, then a second read to write the output
        row_max = tl.full([ROWS], -float("inf"), tl.float32)
        row_sum = tl.zeros([ROWS], tl.float32)
        for start in range(0, num_cols, BLOCK_N):
            mask = row_ok[:, None] & (start + cols[None, :] < num_cols)
            x = tl.load(x_rows + start + cols[None, :], mask=mask, other=-float("inf")).to(tl.float32)
            new_max = tl.maximum(row_max, tl.max(x, axis=1))
            row_sum = row_sum * tl.exp2((row_max - new_max) * LOG2E) + \
                tl.sum(tl.exp2((x - new_max[:, None]) * LOG2E), axis=1)
            row_max = new_max
        for start in range(0, num_cols, BLOCK_N):
            mask = row_ok[:, None] & (start + cols[None, :] < num_cols)
            x = tl.load(x_rows + start + cols[None, :], mask=mask, other=-float("inf")).to(tl.float32)
            y = tl.exp2((x - row_max[:, None]) * LOG2E) / row_sum[:, None]
            tl.store(y_rows + start + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


def _rows_cols(size: str) -> tuple[int, int]:
    dims = parse_size(size)
    return (dims[0], dims[1]) if len(dims) == 2 else (dims[0], dims[0])


def _launch_args(x, y, ROWS=None, BLOCK_N=None):
    """(args, constexprs, grid, options) for softmax_kernel over 2-D x (last stride 1) into y."""
    rows, cols = x.shape
    s = strategy(rows, cols, x.dtype)
    rows_per_program = ROWS or s.rows_per_program
    block_n = BLOCK_N or s.block_n
    one_pass = block_n >= cols
    contiguous = one_pass and cols == block_n and x.stride(0) == cols and y.stride(0) == cols
    num_warps = s.num_warps if (ROWS, BLOCK_N) == (None, None) else \
        min(16, max(4, rows_per_program * block_n // ELEMENTS_PER_WARP))
    args = dict(x_ptr=x, y_ptr=y, x_row_stride=x.stride(0), y_row_stride=y.stride(0), num_rows=rows, num_cols=cols)
    constexprs = dict(ROWS=rows_per_program, BLOCK_N=block_n, ONE_PASS=one_pass, CONTIGUOUS=contiguous)
    return args, constexprs, (triton.cdiv(rows, rows_per_program),), dict(num_warps=num_warps)


class _Plan:
    """softmax_kernel prepared for one problem (shape, strides, dtypes, device, overrides): the
    strategy, grid and scalar arguments worked out once, and the compiled kernel launched directly
    (kinspect.backends.direct_launch) when nothing calls for the JIT's path."""

    __slots__ = ("grid", "tail", "options", "direct")

    def __init__(self, x, y, ROWS, BLOCK_N, num_warps):
        args, constexprs, grid, options = _launch_args(x, y, ROWS, BLOCK_N)
        if num_warps:
            options["num_warps"] = num_warps
        self.grid, self.options = grid, options
        # every argument after the two pointers, in the kernel's order (constexprs too)
        self.tail = (*list(args.values())[2:], *constexprs.values())
        self.direct = None
        if direct_launch.usable(softmax_kernel) and x.device == y.device == direct_launch.active_torch_device() \
                and direct_launch.aligned(x.data_ptr(), y.data_ptr()):
            self.direct = direct_launch.Direct(softmax_kernel, (x, y, *self.tail), grid, options)

    def __call__(self, x, y) -> None:
        direct = self.direct
        if direct is not None:
            px, py = x.data_ptr(), y.data_ptr()
            if not (px | py) % direct_launch.ALIGNMENT:
                stream = direct.stream()
                if stream is not None:
                    direct(stream, px, py, *self.tail)
                    return
        softmax_kernel[self.grid](x, y, *self.tail, **self.options)


_PLANS = direct_launch.Plans()


def softmax(x: torch.Tensor, out: torch.Tensor | None = None, *, ROWS: int | None = None,
            BLOCK_N: int | None = None, num_warps: int | None = None) -> torch.Tensor:
    """softmax(x, dim=-1) with the strategy chosen by shape (ROWS, BLOCK_N, num_warps override it;
    a BLOCK_N narrower than the row loops over it); x of any shape, float32, float16 or bfloat16.

    The first call for a problem (shape, strides, dtypes, device) works out the launch and compiles;
    later calls launch the compiled kernel directly: a few microseconds of Python, not the JIT's tens."""
    shape = x.shape
    two_d = len(shape) == 2   # (a view costs microseconds: make one only where the shape needs it)
    x2 = x if two_d else x.reshape(-1, shape[-1])
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    if out is None:
        y2 = torch.empty_like(x2)
    else:
        y2 = out if out.shape == x2.shape else out.view(x2.shape)
    if x2.numel():
        key = (x2.shape, x2.stride(0), y2.stride(0), x2.dtype, y2.dtype, x2.device, ROWS, BLOCK_N, num_warps)
        plan = _PLANS.get(key)
        if plan is None:
            plan = _PLANS.put(key, _Plan(x2, y2, ROWS, BLOCK_N, num_warps))
        plan(x2, y2)
    if out is not None:
        return out
    return y2 if two_d else y2.view(shape)


def _example(size, dtype, device, ROWS=None, BLOCK_N=None):
    rows, cols = _rows_cols(size)
    x = torch.randn(rows, cols, dtype=dtype, device=device)
    y = torch.empty_like(x)
    args, constexprs, grid, options = _launch_args(x, y, ROWS, BLOCK_N)
    given = "".join(f", {k}={v}" for k, v in (("ROWS", ROWS), ("BLOCK_N", BLOCK_N)) if v is not None)
    return Example(args, constexprs, grid, inputs=("x_ptr",), output="y_ptr", options=options,
                   call=lambda: softmax(x, ROWS=ROWS, BLOCK_N=BLOCK_N), call_text=f"softmax(x{given})")


def _bytes(e):
    return 2 * e.args["x_ptr"].numel() * e.args["x_ptr"].element_size()


register(KernelSpec(
    name="softmax", fn=softmax_kernel, example=_example, constexprs=dict(ROWS=None, BLOCK_N=None),
    reference=lambda x: torch.softmax(x.float(), dim=-1).to(x.dtype), default_size="4096x1024",
    small_size="37x100", bytes_moved=_bytes, flops=lambda e: 5 * e.args["x_ptr"].numel(),
    summary="row softmax, strategy by shape: rows per program (narrow), one row (wide), looped row (> 64 KiB)",
    notes=("ROWS and BLOCK_N default to strategy(rows, cols, dtype); BLOCK_N below the row width loops the row",)))


@triton.jit
def softmax_one_row_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, num_cols,
                           num_cols_power_of_2: tl.constexpr):
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


def softmax_one_row(x: torch.Tensor) -> torch.Tensor:
    """The lecture kernel over a 2-D x: one program per row."""
    y = torch.empty_like(x)
    softmax_one_row_kernel[(x.shape[0],)](x, y, x.stride(0), y.stride(0), x.shape[1],
                                          num_cols_power_of_2=triton.next_power_of_2(x.shape[1]))
    return y


def _one_row_example(size, dtype, device, num_cols_power_of_2=None):
    rows, cols = _rows_cols(size)
    x = torch.randn(rows, cols, dtype=dtype, device=device)
    y = torch.empty_like(x)
    block = num_cols_power_of_2 or triton.next_power_of_2(cols)
    return Example(dict(x_ptr=x, y_ptr=y, x_row_stride=x.stride(0), y_row_stride=y.stride(0), num_cols=cols),
                   dict(num_cols_power_of_2=block), (rows,), inputs=("x_ptr",), output="y_ptr",
                   call=(lambda: softmax_one_row(x)) if num_cols_power_of_2 is None else None,
                   call_text="softmax_one_row(x)")


register(KernelSpec(
    name="softmax_one_row", fn=softmax_one_row_kernel, example=_one_row_example,
    constexprs=dict(num_cols_power_of_2=None), reference=lambda x: torch.softmax(x, dim=-1),
    default_size="4096x1024", small_size="37x100", bytes_moved=_bytes, flops=lambda e: 5 * e.args["x_ptr"].numel(),
    summary="row softmax, one row per program, whole row in one block (CS336 / CUDA-MODE lecture)",
    notes=("one program per row whatever the width: narrow rows launch many programs that move a few bytes",)))
