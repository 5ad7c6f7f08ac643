"""Norm kernels as fine-tuning libraries write them: epsilon and a scale as constexprs, and a
@triton.heuristics that normalises a flag the launch passes under the name it sets."""

import triton
import triton.language as tl


def _rms_norm_bwd(dY, X, W, dX, stride, n_cols, eps: tl.constexpr, OFFSET: tl.constexpr, GEMMA: tl.constexpr,
                  BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    dy = tl.load(dY + row * stride + cols, mask=mask, other=0).to(tl.float32)
    x = tl.load(X + row * stride + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0).to(tl.float32)
    if GEMMA:
        w = w + OFFSET
    inv = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    normed = x * inv
    dyw = dy * w
    out = inv / n_cols * (n_cols * dyw - normed * tl.sum(dyw * normed, axis=0))
    tl.store(dX + row * stride + cols, out, mask=mask)


_rms_norm_bwd = triton.jit(_rms_norm_bwd)
_rms_norm_bwd = triton.heuristics({"GEMMA": lambda args: bool(args["GEMMA"])})(_rms_norm_bwd)


def rms_norm_bwd(dy, x, w, eps, gemma):
    n = x.shape[-1]
    dx = x.new_empty(x.shape)
    _rms_norm_bwd[(x.shape[0],)](dy, x, w, dx, x.stride(0), n, eps=eps, OFFSET=1.0, GEMMA=gemma,
                                 BLOCK_SIZE=triton.next_power_of_2(n))
    return dx
