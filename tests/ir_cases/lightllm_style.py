"""Decode-attention kernels written the way LightLLM writes its token attention (a batch's sequence
length and start read as one element each, the KV cache reached through a token table, a dot with the
query done as a broadcast multiply and sum), for benchmarks/verdicts_vs_ir.py (held out: not looked at
while the rules were written). Written here, not copied."""

import triton
import triton.language as tl


@triton.jit
def _fwd_kernel_token_att1(
    Q, K, sm_scale, Req_to_tokens, B_req_idx, B_Start_Loc, B_Seqlen, Att_Out,
    stride_req_to_tokens_b, stride_qbs, stride_qh, stride_kbs, stride_kh, att_stride_h,
    BLOCK_DMODEL: tl.constexpr, BLOCK_N: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    start_n = tl.program_id(2)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    cur_batch_seq_len = tl.load(B_Seqlen + cur_batch)
    cur_batch_in_all_start_index = tl.load(B_Start_Loc + cur_batch)
    cur_batch_req_idx = tl.load(B_req_idx + cur_batch)
    cur_batch_start_index = 0
    cur_batch_end_index = cur_batch_seq_len
    off_q = cur_batch * stride_qbs + cur_head * stride_qh + offs_d
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    block_stard_index = start_n * BLOCK_N
    block_mask = tl.where(block_stard_index < cur_batch_seq_len, 1, 0)
    for start_mark in range(0, block_mask, 1):
        q = tl.load(Q + off_q + start_mark)
        offs_n_new = cur_batch_start_index + offs_n
        k_loc = tl.load(Req_to_tokens + stride_req_to_tokens_b * cur_batch_req_idx + offs_n_new,
                        mask=offs_n_new < cur_batch_end_index, other=0)
        off_k = k_loc[:, None] * stride_kbs + cur_head * stride_kh + offs_d[None, :]
        k = tl.load(K + off_k, mask=offs_n_new[:, None] < cur_batch_end_index, other=0.0)
        att_value = tl.sum(q[None, :] * k, 1)
        att_value *= sm_scale
        off_o = cur_head * att_stride_h + (cur_batch_in_all_start_index + offs_n)
        tl.store(Att_Out + off_o, att_value, mask=offs_n_new < cur_batch_end_index)


@triton.jit
def _fwd_kernel_token_softmax(
    Logics, B_Start_Loc, B_Seqlen, Prob_Out, stride_logic_h, stride_prob_h,
    BLOCK_SIZE: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    cur_batch_seq_len = tl.load(B_Seqlen + cur_batch)
    cur_batch_in_all_start_index = tl.load(B_Start_Loc + cur_batch)
    row = tl.load(Logics + cur_head * stride_logic_h + cur_batch_in_all_start_index + col_offsets,
                  mask=col_offsets < cur_batch_seq_len, other=-float("inf")).to(tl.float32)
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    softmax_output = numerator / tl.sum(numerator, axis=0)
    tl.store(Prob_Out + cur_head * stride_prob_h + cur_batch_in_all_start_index + col_offsets, softmax_output,
             mask=col_offsets < cur_batch_seq_len)


_att = {"Q": "*fp16", "K": "*fp16", "sm_scale": "fp32:0.088", "Req_to_tokens": "*i32", "B_req_idx": "*i32",
        "B_Start_Loc": "*i32", "B_Seqlen": "*i32", "Att_Out": "*fp32", "stride_req_to_tokens_b": "i32:4096",
        "stride_qbs": "i32:4096", "stride_qh": "i32:128", "stride_kbs": "i32:4096", "stride_kh": "i32:128",
        "att_stride_h": "i32:8192"}
_sm = {"Logics": "*fp32", "B_Start_Loc": "*i32", "B_Seqlen": "*i32", "Prob_Out": "*fp16",
       "stride_logic_h": "i32:8192", "stride_prob_h": "i32:8192"}
kinspect_examples = {
    "_fwd_kernel_token_att1": {"args": _att, "constexprs": {"BLOCK_DMODEL": 128, "BLOCK_N": 32}},
    "_fwd_kernel_token_softmax": {"args": _sm, "constexprs": {"BLOCK_SIZE": 4096}, "num_warps": 8},
}
