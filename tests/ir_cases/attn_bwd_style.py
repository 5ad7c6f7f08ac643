"""An attention backward written the way the Triton tutorial's descendants write it (a dK/dV pass whose
inner loop is an inlined helper: each step loads a Q and a dO tile, 128-bit, and the rows' softmax
statistics m and delta, one fp32 per row), for the IR-verdict tests and benchmarks/verdicts_vs_ir.py.
One call of the helper holds loads of both widths; each has its own line in the helper. Written here,
not copied."""

import triton
import triton.language as tl


@triton.jit
def _dkdv_step(dk, dv, Q, DO, M, D, k, v, start_m, stride_tok, offs_n,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, STEPS: tl.constexpr):
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    for _ in range(STEPS):
        q = tl.load(Q + offs_m[:, None] * stride_tok + offs_d[None, :])
        m = tl.load(M + offs_m)
        qk = tl.dot(k, tl.trans(q))
        p = tl.math.exp2(qk - m[None, :])
        do = tl.load(DO + offs_m[:, None] * stride_tok + offs_d[None, :])
        dv += tl.dot(p.to(tl.float16), do)
        delta = tl.load(D + offs_m)
        dp = tl.dot(v, tl.trans(do)).to(tl.float32)
        ds = p * (dp - delta[None, :])
        dk += tl.dot(ds.to(tl.float16), q)
        offs_m += BLOCK_M
    return dk, dv


@triton.jit
def attn_bwd_dkdv(Q, K, V, DO, M, D, DK, DV, stride_tok,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, STEPS: tl.constexpr):
    start_n = tl.program_id(0) * BLOCK_N
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    k = tl.load(K + offs_n[:, None] * stride_tok + offs_d[None, :])
    v = tl.load(V + offs_n[:, None] * stride_tok + offs_d[None, :])
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dk, dv = _dkdv_step(dk, dv, Q, DO, M, D, k, v, start_n, stride_tok, offs_n,
                        BLOCK_M, BLOCK_N, HEAD_DIM, STEPS)
    tl.store(DK + offs_n[:, None] * stride_tok + offs_d[None, :], dk.to(tl.float16))
    tl.store(DV + offs_n[:, None] * stride_tok + offs_d[None, :], dv.to(tl.float16))


_bwd = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "DO": "*fp16", "M": "*fp32", "D": "*fp32", "DK": "*fp16",
        "DV": "*fp16", "stride_tok": "i32:64"}
kinspect_examples = {
    "attn_bwd_dkdv": {"args": _bwd, "constexprs": {"BLOCK_M": 32, "BLOCK_N": 128, "HEAD_DIM": 64, "STEPS": 4},
                      "num_stages": 3},
}
