"""tl.dot operands whose element types the code says in different ways, written the way attention
and GEMM libraries write them: a "dot with the identity" trick that keeps q in registers (its
second operand cast to Q's own element type), and a GEMM whose A is checked against bf16 while
its B says nothing."""

import triton
import triton.language as tl


@triton.jit
def attn_fwd_identity_trick(Q, K, V, O, sm_scale, stride_qm, stride_kn, stride_vn, stride_om, N,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                            Q_IN_REGS: tl.constexpr):
    input_dtype = Q.dtype.element_ty
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    q = tl.load(Q + offs_m[:, None] * stride_qm + offs_d[None, :])
    if Q_IN_REGS:
        eye = tl.where(offs_d[:, None] == offs_d[None, :],
                       tl.full((BLOCK_D, BLOCK_D), 1.0, dtype=input_dtype),
                       tl.full((BLOCK_D, BLOCK_D), 0.0, dtype=input_dtype))
        q = tl.dot(q, eye).to(input_dtype)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start_n in range(0, N, BLOCK_N):
        k = tl.load(K + (start_n + offs_n)[None, :] * stride_kn + offs_d[:, None])
        s = tl.dot(q, k) * sm_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + (start_n + offs_n)[:, None] * stride_vn + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(input_dtype), v)
        m_i = m_new
    tl.store(O + offs_m[:, None] * stride_om + offs_d[None, :], (acc / l_i[:, None]).to(input_dtype))


@triton.jit
def gemm_a_checked(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    tl.static_assert(a_ptr.dtype.element_ty == tl.bfloat16)
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc)
