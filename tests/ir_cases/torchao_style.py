"""Quantization kernels written the way torchao's prototype kernels write them (jagged groups whose
bounds come from an `offsets` array, a column loop inside each group, a tiled matmul with runtime
strides that the software pipeline turns into async copies), for the IR-verdict tests and
benchmarks/verdicts_vs_ir.py. Written here, not copied."""

import triton
import triton.language as tl


@triton.jit
def per_group_rowwise_scales_kernel(
    input_ptr, offsets_ptr, out_ptr, scales_ptr,
    M, K, stride_input_row, stride_out_row,
    BLOCK_SIZE: tl.constexpr, BLOCK_SIZE_ITER: tl.constexpr,
):
    block_row_id = tl.program_id(0)
    offset_idx = tl.program_id(1)
    group_col_start_idx = tl.load(offsets_ptr + offset_idx - 1, mask=offset_idx > 0, other=0)
    group_col_end_idx = tl.load(offsets_ptr + offset_idx)
    block_row_offs = block_row_id * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    amax = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for col_start_idx in range(group_col_start_idx, group_col_end_idx, BLOCK_SIZE_ITER):
        block_col_offs = col_start_idx + tl.arange(0, BLOCK_SIZE_ITER)
        block_offs = block_row_offs[:, None] * stride_input_row + block_col_offs[None, :]
        block_mask = (block_row_offs[:, None] < M) & (block_col_offs[None, :] < group_col_end_idx)
        data = tl.load(input_ptr + block_offs, mask=block_mask, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.max(tl.abs(data), axis=1))
    scale = (448.0 / tl.clamp(amax, 1e-12, float("inf"))).to(tl.float32)
    tl.store(scales_ptr + offset_idx * M + block_row_offs, scale, mask=block_row_offs < M)
    for col_start_idx in range(group_col_start_idx, group_col_end_idx, BLOCK_SIZE_ITER):
        block_col_offs = col_start_idx + tl.arange(0, BLOCK_SIZE_ITER)
        block_offs = block_row_offs[:, None] * stride_input_row + block_col_offs[None, :]
        block_mask = (block_row_offs[:, None] < M) & (block_col_offs[None, :] < group_col_end_idx)
        data = tl.load(input_ptr + block_offs, mask=block_mask, other=0.0).to(tl.float32)
        fp8 = tl.clamp(data * scale[:, None], -448.0, 448.0).to(out_ptr.dtype.element_ty)
        out_offs = block_row_offs[:, None] * stride_out_row + block_col_offs[None, :]
        tl.store(out_ptr + out_offs, fp8, mask=block_mask)


@triton.jit
def scaled_mm_kernel(
    a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    a_scale = tl.load(a_scale_ptr + offs_m, mask=offs_m < M, other=1.0)
    b_scale = tl.load(b_scale_ptr + offs_n, mask=offs_n < N, other=1.0)
    acc = acc * a_scale[:, None] * b_scale[None, :]
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


_scales = {"input_ptr": "*bf16", "offsets_ptr": "*i32", "out_ptr": "*fp8e5", "scales_ptr": "*fp32",
           "M": "i32:4096", "K": "i32:4096", "stride_input_row": "i32:4096", "stride_out_row": "i32:4096"}
# fp32 operands (tf32 dots) whose K stride is a runtime value: 4-byte async copies at sm80
_mm = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "a_scale_ptr": "*fp32", "b_scale_ptr": "*fp32",
       "M": "i32:4096", "N": "i32:4096", "K": "i32:4096", "stride_am": "i32:4096", "stride_ak": "i32:4096",
       "stride_bk": "i32:4096", "stride_bn": "i32:4096", "stride_cm": "i32:4096", "stride_cn": "i32:1"}
kinspect_examples = {
    "per_group_rowwise_scales_kernel": {"args": _scales, "constexprs": {"BLOCK_SIZE": 32, "BLOCK_SIZE_ITER": 128}},
    "scaled_mm_kernel": {"args": _mm, "constexprs": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
                         "num_stages": 3},
}
