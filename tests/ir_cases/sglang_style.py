"""MoE kernels written the way sglang's expert-parallel ops write them (one token or one expert segment
per program, per-program pointers rebound to new names, segment bounds read from an `indptr` array,
a flag spun on until another program sets it, the tile's dots in a helper), for the IR-verdict tests
and benchmarks/verdicts_vs_ir.py. Written here, not copied."""

import triton
import triton.language as tl


@triton.jit
def permute_tokens_kernel(
    input_ptr, gateup_input_ptr, src2dst_ptr, topk, hidden_size,
    BLOCK_SIZE: tl.constexpr,
):
    src_idx = tl.program_id(0)
    row_dst = src2dst_ptr + src_idx * topk
    src_ptr = input_ptr + src_idx * hidden_size
    for start_offset in tl.range(0, hidden_size, BLOCK_SIZE):
        offset = start_offset + tl.arange(0, BLOCK_SIZE)
        mask = offset < hidden_size
        in_data = tl.load(src_ptr + offset, mask=mask)
        for idx in range(topk):
            dst_idx = tl.load(row_dst + idx)
            if dst_idx >= 0:
                tl.store(gateup_input_ptr + dst_idx * hidden_size + offset, in_data, mask=mask)


@triton.jit
def _segment_tile(a_ptrs, b_ptrs, K, stride_ak, stride_bk, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    return acc


@triton.jit
def grouped_gemm_kernel(
    a, b, c, seg_indptr, weight_indices,
    N, K,
    a_stride_0, b_stride_0, b_stride_1, c_stride_0,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    expert_id = tl.program_id(1)
    pid_n = tl.program_id(0)
    m_start = tl.load(seg_indptr + expert_id)
    m_end = tl.load(seg_indptr + expert_id + 1)
    weight_id = tl.load(weight_indices + expert_id)
    if m_end - m_start <= 0:
        return
    offs_m = m_start + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a + offs_m[:, None] * a_stride_0 + offs_k[None, :]
    b_ptrs = b + weight_id * b_stride_0 + offs_n[None, :] * b_stride_1 + offs_k[:, None]
    acc = _segment_tile(a_ptrs, b_ptrs, K, 1, 1, BLOCK_M, BLOCK_N, BLOCK_K)
    c_ptrs = c + offs_m[:, None] * c_stride_0 + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c.dtype.element_ty), mask=offs_m[:, None] < m_end)


@triton.jit
def post_reorder_kernel(
    down_output_ptr, output_ptr, src2dst_ptr, topk_weights_ptr, flags_ptr, reorder_ids_ptr,
    topk, hidden_size, start_expert,
    BLOCK_SIZE: tl.constexpr,
):
    src_idx = tl.program_id(0)
    while tl.load(flags_ptr + src_idx, volatile=True) == 0:
        pass
    first = tl.load(reorder_ids_ptr + src_idx - start_expert)
    store_ptr = output_ptr + src_idx * hidden_size
    for start_offset in tl.range(0, hidden_size, BLOCK_SIZE):
        offset = start_offset + tl.arange(0, BLOCK_SIZE)
        mask = offset < hidden_size
        acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        for idx in range(topk):
            dst_idx = tl.load(src2dst_ptr + src_idx * topk + idx)
            weight = tl.load(topk_weights_ptr + src_idx * topk + idx)
            if dst_idx >= first:
                row = tl.load(down_output_ptr + dst_idx * hidden_size + offset, mask=mask)
                acc += row.to(tl.float32) * weight
        tl.store(store_ptr + offset, acc.to(output_ptr.dtype.element_ty), mask=mask)


_perm = {"input_ptr": "*bf16", "gateup_input_ptr": "*bf16", "src2dst_ptr": "*i32", "topk": "i32:8",
         "hidden_size": "i32:4096"}
_gg = {"a": "*bf16", "b": "*bf16", "c": "*bf16", "seg_indptr": "*i64", "weight_indices": "*i64",
       "N": "i32:4096", "K": "i32:4096", "a_stride_0": "i32:4096", "b_stride_0": "i32:16777216",
       "b_stride_1": "i32:4096", "c_stride_0": "i32:4096"}
_post = {"down_output_ptr": "*bf16", "output_ptr": "*bf16", "src2dst_ptr": "*i32", "topk_weights_ptr": "*fp32",
         "flags_ptr": "*i32", "reorder_ids_ptr": "*i32", "topk": "i32:8", "hidden_size": "i32:4096",
         "start_expert": "i32:3"}
kinspect_examples = {
    "permute_tokens_kernel": {"args": _perm, "constexprs": {"BLOCK_SIZE": 512}},
    "grouped_gemm_kernel": {"args": _gg, "constexprs": {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}},
    "post_reorder_kernel": {"args": _post, "constexprs": {"BLOCK_SIZE": 512}},
}
