"""softmax(A @ B) for any M, N, K, along rows (dim=-1, as attention uses) or columns (dim=0, the
Spine-Triton forum's `torch.softmax(torch.matmul(a, b), axis=0)`).

Two paths, chosen by N (`plan`; on a GPU, for 256 < N <= 1024 both are timed as called and the
faster is kept, see `_prepare`):

- **whole row** (N <= WHOLE_ROW_MAX): one launch. Each program owns BLOCK_M full rows of the
  product (BLOCK_N >= N): it runs the K loop with tl.dot, then the softmax of its tile in registers
  (padded columns are -inf), and stores the result once. torch runs two kernels and writes and
  reads A @ B once in between; this writes the output only.
- **two passes** (larger N): pass 1 (`fused_mm_softmax_tiled_kernel`, the kernel `dump` shows) is a
  tiled matmul over (M tiles x N tiles) whose epilogue stores the logits S into the output and,
  per row and N tile, the tile's max m and sum of exp(S - m) (float32) into a small [M, n_tiles]
  scratch. Pass 2 (`softmax_rescale_kernel`) combines a row's statistics (M* = max m_j,
  L = sum l_j exp(m_j - M*)) and rewrites out = exp(S - M*) / L in place: an online softmax over
  the N tiles with every program of the matmul busy. Memory traffic equals torch's matmul then
  softmax; what it saves is softmax's reductions over S, which pass 1 did in registers.

The wrapper `fused_mm_softmax_tiled` prepares each problem once (path, tile, grids, strides, the
compiled kernels) and then launches the compiled kernels directly, reusing pass 1's statistics
buffer: at small N the JIT's per-call Python (tens of microseconds a launch) cost more than the GPU.

dim=0 is the same kernels on the transposed problem: softmax(A @ B, 0) = softmax(B^T A^T, -1)^T,
passed as strides (nothing is copied).

float32 inputs go through tl.dot as TF32 by default (INPUT_PRECISION="tf32", tl.dot's default;
"ieee" for full float32), whereas torch's float32 matmul is full float32 unless
torch.backends.cuda.matmul.allow_tf32 is set: compare like with like.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

import torch
import triton
import triton.language as tl

from kinspect.backends import direct_launch

from . import Example, KernelSpec, parse_size, register

# N up to this runs as one launch with whole rows in registers (a [BLOCK_M, 256] float32 tile)
WHOLE_ROW_MAX = 256
# the most rows x columns one whole-row program keeps (64 x 256 float32: 64 registers a thread at 8 warps)
WHOLE_ROW_TILE = 64 * 256


LOG2E = tl.constexpr(1.4426950408889634)  # exp(x) = exp2(x * log2(e))


@triton.jit
def fused_mm_softmax_tiled_kernel(a_ptr, b_ptr, out_ptr, max_ptr, sum_ptr, M, N, K,
                                  stride_am, stride_ak, stride_bk, stride_bn, stride_om, stride_on,
                                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                                  GROUP_M: tl.constexpr, ONE_TILE: tl.constexpr, INPUT_PRECISION: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    # grouped ordering: GROUP_M row tiles share their B tiles while those are in L2
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # rows and columns past M and N wrap around (loads stay unmasked there); they are never stored
    a_ptrs = a_ptr + (offs_m % M)[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + (offs_n % N)[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    col_ok = offs_n < N
    logits = tl.where(col_ok[None, :], acc, -float("inf"))
    tile_max = tl.max(logits, axis=1)
    p = tl.exp2((logits - tile_max[:, None]) * LOG2E)
    tile_sum = tl.sum(p, axis=1)
    out_ptrs = out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on
    out_mask = (offs_m[:, None] < M) & col_ok[None, :]
    if ONE_TILE:
        tl.store(out_ptrs, (p / tile_sum[:, None]).to(out_ptr.dtype.element_ty), mask=out_mask)
    else:
        tl.store(out_ptrs, acc.to(out_ptr.dtype.element_ty), mask=out_mask)
        row_ok = offs_m < M
        tl.store(max_ptr + offs_m * num_pid_n + pid_n, tile_max, mask=row_ok)
        tl.store(sum_ptr + offs_m * num_pid_n + pid_n, tile_sum, mask=row_ok)


@triton.jit
def softmax_rescale_kernel(out_ptr, max_ptr, sum_ptr, M, N, n_tiles, stride_om, stride_on,
                           ROWS: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    # combine the row's per-tile (max, sum) pairs: L = sum_j l_j * exp(m_j - max_j m_j)
    row_max = tl.full([ROWS], -float("inf"), tl.float32)
    row_sum = tl.zeros([ROWS], tl.float32)
    tiles = tl.arange(0, BLOCK_T)
    for t0 in range(0, n_tiles, BLOCK_T):
        mask = row_ok[:, None] & (t0 + tiles[None, :] < n_tiles)
        at = rows[:, None] * n_tiles + t0 + tiles[None, :]
        m = tl.load(max_ptr + at, mask=mask, other=-float("inf"))
        l = tl.load(sum_ptr + at, mask=mask, other=0.0)
        new_max = tl.maximum(row_max, tl.max(m, axis=1))
        row_sum = row_sum * tl.exp2((row_max - new_max) * LOG2E) + \
            tl.sum(l * tl.exp2((m - new_max[:, None]) * LOG2E), axis=1)
        row_max = new_max
    inv_sum = 1.0 / row_sum
    cols = tl.arange(0, BLOCK_C)
    for c0 in range(0, N, BLOCK_C):
        mask = row_ok[:, None] & (c0 + cols[None, :] < N)
        ptrs = out_ptr + rows[:, None] * stride_om + (c0 + cols[None, :]) * stride_on
        s = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
        y = tl.exp2((s - row_max[:, None]) * LOG2E) * inv_sum[:, None]
        tl.store(ptrs, y.to(out_ptr.dtype.element_ty), mask=mask)


# --- configurations ---------------------------------------------------------------------------------

def _cfg(bm, bn, bk, warps, stages):
    kwargs = dict(BLOCK_M=bm, BLOCK_K=bk) if bn is None else dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    return triton.Config(kwargs, num_warps=warps, num_stages=stages)


# pass 1 of the two-pass path: matmul tiles as Hopper likes them (a few, so autotuning stays short),
# and two small ones for N = 512-1024, where 128-wide tiles leave most SMs idle (16 programs at 512)
TWO_PASS_CONFIGS = [
    _cfg(128, 128, 64, 8, 3), _cfg(128, 256, 64, 8, 3), _cfg(64, 128, 64, 4, 4),
    _cfg(128, 128, 32, 4, 4), _cfg(128, 64, 64, 4, 4), _cfg(64, 64, 64, 4, 4), _cfg(32, 64, 64, 4, 4),
]
# the whole-row path: BLOCK_N is the row (the caller passes it); these vary the rows and K step
WHOLE_ROW_CONFIGS = [
    _cfg(64, None, 64, 4, 3), _cfg(64, None, 32, 8, 3), _cfg(32, None, 64, 4, 3), _cfg(128, None, 32, 8, 3),
    _cfg(16, None, 64, 4, 3),
]
# whole rows of 512-1024 columns (tried against the two passes on a GPU, see _prepare): few rows per
# program and a short K step, so B's [BLOCK_K, N] tiles fit shared memory in two or three stages
WIDE_ROW_MAX = 1024
WIDE_ROW_CONFIGS = [
    _cfg(16, None, 32, 4, 2), _cfg(16, None, 16, 8, 2), _cfg(32, None, 16, 8, 2), _cfg(16, None, 16, 4, 3),
    _cfg(16, None, 32, 8, 3),
]


def _prune_whole_row(configs, named_args, **kwargs):
    """Whole-row tiles that fit registers and do not dwarf M."""
    given = {**named_args, **kwargs}  # the launcher passes everything by keyword
    block_n, m = given["BLOCK_N"], given["M"]
    keep = [c for c in configs if c.kwargs["BLOCK_M"] * block_n <= WHOLE_ROW_TILE
            and c.kwargs["BLOCK_M"] <= max(16, triton.next_power_of_2(m))]
    return keep or configs[:1]


_two_pass = triton.autotune(configs=TWO_PASS_CONFIGS, key=["M", "N", "K"])(fused_mm_softmax_tiled_kernel)
_whole_row = triton.autotune(configs=WHOLE_ROW_CONFIGS, key=["M", "N", "K"],
                             prune_configs_by={"early_config_prune": _prune_whole_row})(fused_mm_softmax_tiled_kernel)
_wide_row = triton.autotune(configs=WIDE_ROW_CONFIGS, key=["M", "N", "K"],
                            prune_configs_by={"early_config_prune": _prune_whole_row})(fused_mm_softmax_tiled_kernel)


@dataclass(frozen=True)
class Plan:
    """How `fused_mm_softmax_tiled` computes an M x N softmax (along rows of the problem it is given)."""

    one_tile: bool                 # whole rows in one launch
    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    num_stages: int

    def describe(self) -> str:
        path = "whole row, one launch" if self.one_tile else "two passes (matmul + statistics, rescale)"
        return (f"{path}: BLOCK_M={self.block_m} BLOCK_N={self.block_n} BLOCK_K={self.block_k} "
                f"num_warps={self.num_warps} num_stages={self.num_stages}")

    def config(self) -> dict:
        return dict(BLOCK_M=self.block_m, BLOCK_N=self.block_n, BLOCK_K=self.block_k, num_warps=self.num_warps,
                    num_stages=self.num_stages)

    @classmethod
    def of(cls, one_tile: bool, config: dict) -> "Plan":
        c = config
        return cls(one_tile, c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"], c["num_warps"], c["num_stages"])


def plan(m: int, n: int, k: int, *, BLOCK_M=None, BLOCK_N=None, BLOCK_K=None) -> Plan:
    """The path and the default tile for M x N x K (what the CPU interpreter and `dump` use; on a GPU
    the launcher autotunes the tile within the path)."""
    width = max(16, triton.next_power_of_2(n))
    one_tile = (BLOCK_N or width) >= n and (BLOCK_N is not None or width <= WHOLE_ROW_MAX)
    if one_tile:
        block_n = BLOCK_N or width
        block_m = BLOCK_M or min(64, max(16, WHOLE_ROW_TILE // block_n))
        return Plan(True, block_m, block_n, BLOCK_K or 32, 8 if block_m * block_n >= 64 * 128 else 4, 3)
    return Plan(False, BLOCK_M or 128, BLOCK_N or 128, BLOCK_K or 64, 8, 3)


def _rescale_shape(m: int, n: int, row_stride: int) -> tuple[int, int, int]:
    """(ROWS, BLOCK_C, num_warps) for pass 2: rows along the contiguous axis when the output is
    transposed (dim=0), else a few rows of up to 2048 columns."""
    if row_stride == 1:  # out is the transpose: consecutive rows are adjacent in memory
        return 64, 64, 4
    block_c = min(2048, max(16, triton.next_power_of_2(n)))
    return max(1, 2048 // block_c), block_c, 4 if block_c <= 1024 else 8


# --- launching ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Problem:
    """softmax(a @ b, -1) written to out, as the kernels see it (dim=0 already transposed)."""

    a: torch.Tensor
    b: torch.Tensor
    out: torch.Tensor

    @property
    def shape(self):
        return self.a.shape[0], self.b.shape[1], self.a.shape[1]

    def positional(self, max_buf, sum_buf) -> tuple:
        """The runtime arguments in the kernel's order (binding by position is the JIT's quick path)."""
        a, b, out = self.a, self.b, self.out
        m, n, k = self.shape
        return (a, b, out, max_buf, sum_buf, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                out.stride(0), out.stride(1))

    def args(self, max_buf, sum_buf) -> dict:
        a, b, out = self.a, self.b, self.out
        m, n, k = self.shape
        return dict(a_ptr=a, b_ptr=b, out_ptr=out, max_ptr=max_buf, sum_ptr=sum_buf, M=m, N=n, K=k,
                    stride_am=a.stride(0), stride_ak=a.stride(1), stride_bk=b.stride(0), stride_bn=b.stride(1),
                    stride_om=out.stride(0), stride_on=out.stride(1))


def _problem(a, b, out, dim: int) -> _Problem:
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"fused_mm_softmax_tiled: a {tuple(a.shape)} @ b {tuple(b.shape)} is not a matrix product")
    if dim in (-1, 1):
        return _Problem(a, b, out)
    if dim in (0, -2):
        return _Problem(b.t(), a.t(), out.t())
    raise ValueError(f"fused_mm_softmax_tiled: dim must be -1, 1, 0 or -2, not {dim}")


def _scratch(problem: _Problem, block_n: int):
    """Pass 1's per-row, per-tile max and sum: two [M, n_tiles] float32 halves of one allocation, the
    second starting 16-byte aligned (as the first), so every call specializes the kernels alike."""
    m, n, _ = problem.shape
    tiles = triton.cdiv(n, block_n)
    half = -(-m * tiles // 4) * 4
    stats = torch.empty(2 * half, dtype=torch.float32, device=problem.out.device)
    return stats[:m * tiles].view(m, tiles), stats[half:half + m * tiles].view(m, tiles)


def _rescale(problem: _Problem, max_buf, sum_buf) -> None:
    m, n, _ = problem.shape
    out = problem.out
    rows, block_c, warps = _rescale_shape(m, n, out.stride(0))
    n_tiles = max_buf.shape[1]
    softmax_rescale_kernel[(triton.cdiv(m, rows),)](
        out, max_buf, sum_buf, m, n, n_tiles, out.stride(0), out.stride(1),
        ROWS=rows, BLOCK_T=min(64, max(2, triton.next_power_of_2(n_tiles))), BLOCK_C=block_c, num_warps=warps)


class _Call:
    """fused_mm_softmax_tiled prepared for one problem (shapes, strides, dtypes, devices, dim): its
    path and tile, grids and scalar arguments worked out once, pass 1's statistics kept per stream and
    thread, and both kernels launched directly (kinspect.backends.direct_launch) when nothing calls for the
    JIT's path. A 64x64 product runs 7 us on an H200, less than the JIT spends launching it."""

    def __init__(self, a, b, out, dim: int, input_precision: str, path: Plan):
        problem = _problem(a, b, out, dim)
        m, n, k = problem.shape
        pa, pb, po = problem.a, problem.b, problem.out
        self.path, self.dim, self.input_precision = path, dim, input_precision
        self.transposed = dim in (0, -2)
        self.out_shape, self.out_dtype, self.device = (a.shape[0], b.shape[1]), out.dtype, out.device
        self.tiles = 1 if path.one_tile else triton.cdiv(n, path.block_n)
        self.grid = (triton.cdiv(m, path.block_m) * self.tiles,)
        self.options = dict(num_warps=path.num_warps, num_stages=path.num_stages)
        # pass 1's arguments after the five pointers, in the kernel's order (constexprs too)
        self.tail = (m, n, k, pa.stride(0), pa.stride(1), pb.stride(0), pb.stride(1), po.stride(0), po.stride(1),
                     path.block_m, path.block_n, path.block_k, 8, path.one_tile, input_precision)
        if not path.one_tile:
            rows, block_c, warps = _rescale_shape(m, n, po.stride(0))
            self.grid2 = (triton.cdiv(m, rows),)
            self.tail2 = (m, n, self.tiles, po.stride(0), po.stride(1), rows,
                          min(64, max(2, triton.next_power_of_2(self.tiles))), block_c)
            self.options2 = dict(num_warps=warps)
        self.half = -(-m * self.tiles // 4) * 4      # float32 elements from max to sum (16-byte aligned)
        self._stats: dict[tuple, tuple] = {}         # (stream, thread) -> (buffer, max address, sum address)
        self.direct = self.direct2 = None
        if direct_launch.usable(fused_mm_softmax_tiled_kernel) and \
                a.device == b.device == out.device == direct_launch.active_torch_device() and \
                direct_launch.aligned(a.data_ptr(), b.data_ptr(), out.data_ptr()):
            mx, sm = _scratch(problem, path.block_n) if not path.one_tile else (po, po)
            self.direct = direct_launch.Direct(fused_mm_softmax_tiled_kernel, (pa, pb, po, mx, sm, *self.tail),
                                          self.grid, self.options)
            if not path.one_tile:
                self.direct2 = direct_launch.Direct(softmax_rescale_kernel, (po, mx, sm, *self.tail2), self.grid2,
                                               self.options2)

    def describe(self) -> str:
        return self.path.describe() + ("; launched directly" if self.direct is not None else "; launched by the JIT")

    def __call__(self, a, b, out) -> None:
        direct = self.direct
        if direct is not None:
            pa, pb, po = a.data_ptr(), b.data_ptr(), out.data_ptr()
            if not (pa | pb | po) % direct_launch.ALIGNMENT:
                stream = direct.stream()
                if stream is not None:
                    if self.transposed:   # softmax(a @ b, 0) = softmax(b^T a^T, -1)^T
                        pa, pb = pb, pa
                    if self.path.one_tile:
                        direct(stream, pa, pb, po, po, po, *self.tail)
                    else:
                        pmax, psum = self._stats_at(stream)
                        direct(stream, pa, pb, po, pmax, psum, *self.tail)
                        self.direct2(stream, po, pmax, psum, *self.tail2)
                    return
        self._jit(a, b, out)

    def _stats_at(self, stream: int) -> tuple[int, int]:
        """Addresses of pass 1's statistics for a call on `stream`: one buffer per stream and thread,
        reused (calls on one stream run in order); a CUDA graph being captured gets its own."""
        if self.device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            buf = torch.empty(2 * self.half, dtype=torch.float32, device=self.device)  # the graph's pool keeps it
            return buf.data_ptr(), buf.data_ptr() + 4 * self.half
        key = (stream, threading.get_ident())
        found = self._stats.get(key)
        if found is None:
            buf = torch.empty(2 * self.half, dtype=torch.float32, device=self.device)
            found = self._stats[key] = (buf, buf.data_ptr(), buf.data_ptr() + 4 * self.half)
        return found[1], found[2]

    def _jit(self, a, b, out) -> None:
        """Through the JIT: under the interpreter, with a launch hook listening, or unaligned tensors."""
        problem = _problem(a, b, out, self.dim)
        p = self.path
        common = dict(BLOCK_M=p.block_m, BLOCK_N=p.block_n, BLOCK_K=p.block_k, GROUP_M=8, ONE_TILE=p.one_tile,
                      INPUT_PRECISION=self.input_precision, **self.options)
        if p.one_tile:
            fused_mm_softmax_tiled_kernel[self.grid](*problem.positional(out, out), **common)
            return
        mx, sm = _scratch(problem, p.block_n)
        fused_mm_softmax_tiled_kernel[self.grid](*problem.positional(mx, sm), **common)
        _rescale(problem, mx, sm)


_CALLS = direct_launch.Plans()


def _key(a, b, dim, input_precision, out, autotune) -> tuple:
    return (a.shape, b.shape, a.stride(), b.stride(), a.dtype, b.dtype, a.device, b.device, dim, input_precision,
            autotune, None if out is None else (out.shape, out.stride(), out.dtype, out.device))


def fused_mm_softmax_tiled(a: torch.Tensor, b: torch.Tensor, dim: int = -1, *, input_precision: str = "tf32",
                           out: torch.Tensor | None = None, autotune: bool | None = None) -> torch.Tensor:
    """softmax(a @ b, dim) for 2-D a (M x K) and b (K x N) of one dtype (float32, float16, bfloat16);
    the result has the inputs' dtype. The first call for a problem picks the path and tile (on a GPU
    by timing them, `_prepare`; on the CPU, Triton's interpreter, `plan`'s) and compiles; later calls
    launch the compiled kernels directly."""
    key = _key(a, b, dim, input_precision, out, autotune)
    call = _CALLS.get(key)
    if call is None:
        if out is None:
            out = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
        call = _CALLS.put(key, _prepare(a, b, out, dim, input_precision, a.is_cuda if autotune is None else autotune))
    elif out is None:
        out = torch.empty(call.out_shape, dtype=call.out_dtype, device=call.device)
    call(a, b, out)
    return out


def describe_call(a: torch.Tensor, b: torch.Tensor, dim: int = -1, *, input_precision: str = "tf32",
                  out: torch.Tensor | None = None, autotune: bool | None = None) -> str:
    """What `fused_mm_softmax_tiled` chose for these arguments (path, tile, launch), once it ran them."""
    call = _CALLS.get(_key(a, b, dim, input_precision, out, autotune))
    return call.describe() if call is not None else "not called yet"


# the as-called timer that decides between paths on a GPU (tests under the interpreter replace it)
def _as_called_ms(fn: Callable[[], object], calls: int = 20, repeats: int = 5) -> float:
    """Best of `repeats` loops of `calls` calls with a final synchronize, in ms a call: what the
    user's call costs, launch included."""
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    fn()
    sync()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e3


def _time_path(call: "_Call", args: tuple) -> float:
    return _as_called_ms(lambda: call(*args))


_path_timer = _time_path


def _prepare(a, b, out, dim: int, input_precision: str, tune: bool) -> _Call:
    """The path and tile for a problem, prepared. Without tuning, `plan`'s. On a GPU the autotuner
    picks the tile within `plan`'s path (timing the configurations on these very tensors, once), and
    for 256 < N <= WIDE_ROW_MAX whole rows in one launch are tried too: the faster as called wins
    (one launch costs less Python than two, which decides it near N = 512)."""
    problem = _problem(a, b, out, dim)
    m, n, k = problem.shape
    p = plan(m, n, k)
    if not tune:
        return _Call(a, b, out, dim, input_precision, p)
    common = dict(GROUP_M=8, INPUT_PRECISION=input_precision)
    if p.one_tile:
        return _Call(a, b, out, dim, input_precision, Plan.of(True, _tune_whole_row(_whole_row, problem, p.block_n,
                                                                                   common)))
    # statistics for the narrowest tile hold any winner's (they are written at row * n_tiles + tile)
    narrowest = min(c.kwargs["BLOCK_N"] for c in TWO_PASS_CONFIGS)
    max_buf, sum_buf = _scratch(problem, narrowest)
    _two_pass[lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)](
        **problem.args(max_buf, sum_buf), ONE_TILE=False, **common)
    best = _two_pass.best_config
    two = _Call(a, b, out, dim, input_precision,
                Plan.of(False, dict(best.kwargs, num_warps=best.num_warps, num_stages=best.num_stages)))
    if n > WIDE_ROW_MAX:
        return two
    width = triton.next_power_of_2(n)
    try:
        wide = _Call(a, b, out, dim, input_precision, Plan.of(True, _tune_whole_row(_wide_row, problem, width, common)))
    except Exception:  # no whole-row tile of this width compiles or fits here: the two passes it is
        return two
    return min((two, wide), key=lambda c: _path_timer(c, (a, b, out)))


def _tune_whole_row(tuner, problem: _Problem, block_n: int, common: dict) -> dict:
    m = problem.shape[0]
    tuner[lambda meta: (triton.cdiv(m, meta["BLOCK_M"]),)](**problem.args(problem.out, problem.out),
                                                            BLOCK_N=block_n, ONE_TILE=True, **common)
    best = tuner.best_config
    return dict(best.kwargs, BLOCK_N=block_n, num_warps=best.num_warps, num_stages=best.num_stages)


# --- the registered kernel ------------------------------------------------------------------------------

def _mnk(size: str) -> tuple[int, int, int]:
    dims = parse_size(size)
    if len(dims) == 1:
        return dims * 3
    if len(dims) == 2:
        return dims[0], dims[1], dims[1]
    return dims[:3]


def _example(size, dtype, device, BLOCK_M=None, BLOCK_N=None, BLOCK_K=None, GROUP_M=8, INPUT_PRECISION="tf32",
             DIM=-1):
    from kinspect.core.errors import UsageError

    if DIM not in (-1, 1, 0, -2):
        raise UsageError(f"-p DIM={DIM}: softmax(A @ B) has dims -1 (rows, default) and 0 (columns)")
    if INPUT_PRECISION not in ("tf32", "ieee", "tf32x3"):
        raise UsageError(f"-p INPUT_PRECISION={INPUT_PRECISION}: use tf32 (tl.dot's default), tf32x3 or ieee")
    m, n, k = _mnk(size)
    # scaled so the logits are O(1), as attention scales them: softmax is then not one-hot
    a = (torch.randn(m, k, device=device) * k ** -0.25).to(dtype)
    b = (torch.randn(k, n, device=device) * k ** -0.25).to(dtype)
    out = torch.empty(m, n, dtype=dtype, device=device)
    problem = _problem(a, b, out, DIM)
    pm, pn, pk = problem.shape
    p = plan(pm, pn, pk, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    if p.one_tile:
        max_buf = sum_buf = out
        then = ()
    else:
        max_buf, sum_buf = _scratch(problem, p.block_n)
        then = (lambda: _rescale(problem, max_buf, sum_buf),)
    grid = (triton.cdiv(pm, p.block_m) * triton.cdiv(pn, p.block_n),)
    constexprs = dict(BLOCK_M=p.block_m, BLOCK_N=p.block_n, BLOCK_K=p.block_k, GROUP_M=GROUP_M, ONE_TILE=p.one_tile,
                      INPUT_PRECISION=INPUT_PRECISION)
    # the shipped function with plan()'s tile (no autotuning): the same kernels, launched its way
    default_tile = (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M) == (None, None, None, 8)
    return Example(problem.args(max_buf, sum_buf), constexprs, grid, inputs=("a_ptr", "b_ptr"), output="out_ptr",
                   size=f"{m}x{n}x{k}", options=dict(num_warps=p.num_warps, num_stages=p.num_stages), then=then,
                   reference=_reference(DIM),
                   call=(lambda: fused_mm_softmax_tiled(a, b, DIM, input_precision=INPUT_PRECISION, autotune=False))
                   if default_tile else None,
                   call_text=f"fused_mm_softmax_tiled(a, b, {DIM}, autotune=False)")


def _reference(dim: int):
    """torch's softmax(a @ b, dim) over the arguments the kernel got, shaped like its output argument."""
    def reference(a_arg, b_arg):
        if dim in (0, -2):  # the kernel got b^T, a^T and writes the transpose of the result
            a, b = b_arg.t(), a_arg.t()
            return torch.softmax(torch.matmul(a.float(), b.float()), dim=0).to(a.dtype).t()
        return torch.softmax(torch.matmul(a_arg.float(), b_arg.float()), dim=-1).to(a_arg.dtype)

    return reference


def _bytes(e):
    a, b, out = e.args["a_ptr"], e.args["b_ptr"], e.args["out_ptr"]
    return (a.numel() + b.numel() + out.numel()) * a.element_size()


def _flops(e):
    return 2 * e.args["M"] * e.args["N"] * e.args["K"]


register(KernelSpec(
    name="fused_mm_softmax_tiled", fn=fused_mm_softmax_tiled_kernel, example=_example,
    constexprs=dict(BLOCK_M=None, BLOCK_N=None, BLOCK_K=None, GROUP_M=8, INPUT_PRECISION="tf32", DIM=-1),
    reference=_reference(-1), default_size="1024", small_size="33x100x17", bytes_moved=_bytes, flops=_flops,
    summary="softmax(A @ B) for any M, N, K: whole rows in one launch (N <= 256), else matmul tiles + rescale",
    notes=("size M, MxN (K = N) or MxNxK; -p DIM=0 for the forum's axis=0; float32 through tl.dot is TF32 "
           "unless -p INPUT_PRECISION=ieee",
           "N > 256 (or -p BLOCK_N below N): pass 1 is this kernel, pass 2 softmax_rescale_kernel runs after it")))
