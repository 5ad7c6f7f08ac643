import triton
import triton.language as tl


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, stride_qz, stride_qh, stride_qm, stride_kz, stride_kh, stride_kn,
             stride_vz, stride_vh, stride_vn, stride_oz, stride_oh, stride_om, H, N_CTX,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Attention forward, one (batch, head) and BLOCK_M queries a program: online softmax over the keys."""
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_offset = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_offset = off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_offset = off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    o_offset = off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + q_offset + offs_m[:, None] * stride_qm + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1/log(2)
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K + k_offset + offs_d[:, None] + (start_n + offs_n)[None, :] * stride_kn)
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + v_offset + (start_n + offs_n)[:, None] * stride_vn + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + o_offset + offs_m[:, None] * stride_om + offs_d[None, :], acc.to(Out.dtype.element_ty))


# (Z, H, N_CTX, HEAD_DIM) = (1, 2, 256, 64) in float16, contiguous
_strides = {f"stride_{t}{d}": f"i32:{s}" for t in "qkvo" for d, s in (("z", 2 * 256 * 64), ("h", 256 * 64))}
kinspect_examples = {
    "attn_fwd": {
        "args": {"Q": "*fp16:1x2x256x64", "K": "*fp16:1x2x256x64", "V": "*fp16:1x2x256x64", "Out": "*fp16:1x2x256x64",
                 "sm_scale": "fp32:0.125", **_strides, "stride_qm": "i32:64", "stride_kn": "i32:64",
                 "stride_vn": "i32:64", "stride_om": "i32:64", "H": "i32:2", "N_CTX": "i32:256"},
        "constexprs": {"BLOCK_M": 128, "BLOCK_N": 64, "HEAD_DIM": 64},
        "grid": (2, 2),
        "num_warps": 8,
    },
}
