"""Gated-MLP kernels in the style of fine-tuning libraries: one-letter pointer names (e, g, h are
loaded and stored through), a LONG_INDEXING flag, and the kernel made with `k = triton.jit(k)` then
wrapped with `k = triton.heuristics({...})(k)` instead of decorators. No kinspect_examples, no launch."""

import triton
import triton.language as tl


def _fg_kernel(e, g, h, n_elements, BLOCK_SIZE: tl.constexpr, LONG_INDEXING: tl.constexpr):
    block_idx = tl.program_id(0)
    if LONG_INDEXING:
        offsets = block_idx.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
        n_elements = tl.cast(n_elements, tl.int64)
    else:
        offsets = block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    e_row = tl.load(e + offsets, mask=mask, other=0).to(tl.float32)
    g_row = tl.load(g + offsets, mask=mask, other=0)
    f_row = e_row * tl.sigmoid(e_row)
    f_row = f_row.to(g_row.dtype)
    tl.store(h + offsets, f_row * g_row, mask=mask)


_fg_kernel = triton.jit(_fg_kernel)
_fg_kernel = triton.heuristics({"LONG_INDEXING": lambda args: args["n_elements"] > 2**31 - 1})(_fg_kernel)


@triton.jit
def _dwf_kernel(DW, e, g, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    DW_row = tl.load(DW + offsets, mask=mask, other=0).to(tl.float32)
    e_row = tl.load(e + offsets, mask=mask, other=0).to(tl.float32)
    g_row = tl.load(g + offsets, mask=mask, other=0).to(tl.float32)
    se_row = tl.sigmoid(e_row)
    f_row = se_row * e_row
    h_row = f_row * g_row
    df_row = DW_row * f_row
    dg_row = DW_row * g_row
    de_row = dg_row * se_row * (1.0 + e_row * (1.0 - se_row))
    tl.store(DW + offsets, h_row.to(tl.float16), mask=mask)
    tl.store(e + offsets, df_row.to(tl.float16), mask=mask)
    tl.store(g + offsets, de_row.to(tl.float16), mask=mask)
