"""Attention and layer-norm kernels written the way kernl writes them (a `@triton.jit` helper that
holds the inner loop's dots, pointer blocks named `*_ptrs`, one row per program), for the IR-verdict
tests and benchmarks/verdicts_vs_ir.py. Written here, not copied."""

import triton
import triton.language as tl


@triton.jit
def _attention_inner(acc, m_i, l_i, q, k_ptrs, v_ptrs, seq_len, stride_kn, stride_vn, sm_scale,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    for start_n in range(0, seq_len, BLOCK_N):
        k = tl.load(k_ptrs + start_n * stride_kn)
        qk = tl.dot(q, tl.trans(k)) * sm_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptrs + start_n * stride_vn)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    return acc, m_i, l_i


@triton.jit
def attention_forward(
    q_ptr, k_ptr, v_ptr, output_ptr,
    stride_qh, stride_qm, stride_kh, stride_kn, stride_vh, stride_vn, stride_oh, stride_om,
    seq_len, sm_scale,
    BLOCK_M: tl.constexpr, BLOCK_DHEAD: tl.constexpr, BLOCK_N: tl.constexpr,
):
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_DHEAD)
    q_ptrs = q_ptr + head * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :]
    k_ptrs = k_ptr + head * stride_kh + offs_n[:, None] * stride_kn + offs_d[None, :]
    v_ptrs = v_ptr + head * stride_vh + offs_n[:, None] * stride_vn + offs_d[None, :]
    q = tl.load(q_ptrs)
    acc = tl.zeros([BLOCK_M, BLOCK_DHEAD], dtype=tl.float32)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc, m_i, l_i = _attention_inner(acc, m_i, l_i, q, k_ptrs, v_ptrs, seq_len, stride_kn, stride_vn, sm_scale,
                                     BLOCK_M, BLOCK_N)
    acc = acc / l_i[:, None]
    out_ptrs = output_ptr + head * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :]
    tl.store(out_ptrs, acc.to(output_ptr.dtype.element_ty))


@triton.jit
def layer_norm_backward_dx(
    dx_ptr, dout_ptr, a_ptr, weight_ptr, mean_ptr, rstd_ptr,
    row_stride, N_SIZE,
    BLOCK_N_SIZE: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N_SIZE)
    mask = cols < N_SIZE
    x_ptrs = a_ptr + row * row_stride + cols
    dout_ptrs = dout_ptr + row * row_stride + cols
    x = tl.load(x_ptrs, mask=mask, other=0.0).to(tl.float32)
    dout = tl.load(dout_ptrs, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(weight_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    mean_row = mean_ptr + row
    mean = tl.load(mean_row)
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdout = w * dout
    c1 = tl.sum(xhat * wdout, axis=0) / N_SIZE
    c2 = tl.sum(wdout, axis=0) / N_SIZE
    dx = (wdout - (xhat * c1 + c2)) * rstd
    tl.store(dx_ptr + row * row_stride + cols, dx, mask=mask)


_attn = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "output_ptr": "*fp16",
         "stride_qh": "i32:65536", "stride_qm": "i32:64", "stride_kh": "i32:65536", "stride_kn": "i32:64",
         "stride_vh": "i32:65536", "stride_vn": "i32:64", "stride_oh": "i32:65536", "stride_om": "i32:64",
         "seq_len": "i32:1024", "sm_scale": "fp32:0.125"}
_ln = {"dx_ptr": "*fp16", "dout_ptr": "*fp16", "a_ptr": "*fp16", "weight_ptr": "*fp16", "mean_ptr": "*fp32",
       "rstd_ptr": "*fp32", "row_stride": "i32:4096", "N_SIZE": "i32:4096"}
kinspect_examples = {
    "attention_forward": {"args": _attn, "constexprs": {"BLOCK_M": 128, "BLOCK_DHEAD": 64, "BLOCK_N": 64}},
    "layer_norm_backward_dx": {"args": _ln, "constexprs": {"BLOCK_N_SIZE": 4096}, "num_warps": 8},
}
