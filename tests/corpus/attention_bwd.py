"""Attention backward and rotary-embedding kernels in the style of attention libraries: pointers
named Q, K, V, DO, DQ, cos, sin; a string constexpr compared in the body, an empty-string default
cache modifier passed to tl.load, a head dimension that tl.static_assert checks. No launch."""

import triton
import triton.language as tl


@triton.jit
def _bwd_dq_kernel(Q, K, V, DO, DQ, L, D, sm_scale, stride_qm, stride_kn, seqlen,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr,
                   CACHE: tl.constexpr):
    tl.static_assert(HEAD_DIM >= 32, "head dimension too small for the MMA")
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + offs_m[:, None] * stride_qm + offs_d[None, :], cache_modifier=CACHE)
    do = tl.load(DO + offs_m[:, None] * stride_qm + offs_d[None, :])
    m = tl.load(L + offs_m)
    Di = tl.load(D + offs_m)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, seqlen, BLOCK_N):
        k = tl.load(K + (start_n + offs_n)[:, None] * stride_kn + offs_d[None, :])
        v = tl.load(V + (start_n + offs_n)[:, None] * stride_kn + offs_d[None, :])
        qk = tl.dot(q, tl.trans(k)) * sm_scale
        p = tl.math.exp2(qk - m[:, None])
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - Di[:, None])
        dq += tl.dot(ds.to(tl.float16), k)
    tl.store(DQ + offs_m[:, None] * stride_qm + offs_d[None, :], dq)


@triton.jit
def _rotary_kernel(X, cos, sin, OUT, seqlen, stride_x, rotary_dim: tl.constexpr, INTERLEAVED: tl.constexpr,
                   BLOCK: tl.constexpr, ACTIVATION: tl.constexpr):
    pid = tl.program_id(0)
    half = tl.arange(0, BLOCK // 2)
    row = X + pid * stride_x
    c = tl.load(cos + pid * (rotary_dim // 2) + half)
    s = tl.load(sin + pid * (rotary_dim // 2) + half)
    x0 = tl.load(row + half).to(tl.float32)
    x1 = tl.load(row + BLOCK // 2 + half).to(tl.float32)
    o0 = x0 * c - x1 * s
    o1 = x0 * s + x1 * c
    if ACTIVATION == "leaky_relu":
        o0 = tl.where(o0 >= 0, o0, 0.01 * o0)
    elif ACTIVATION == "":
        o1 = o1 * 1.0
    out = OUT + pid * stride_x
    tl.store(out + half, o0)
    tl.store(out + BLOCK // 2 + half, o1)
