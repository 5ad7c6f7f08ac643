"""Kernels written the way unsloth writes its Triton kernels (a row per program, `row_idx` offsets
added to every pointer first, a label or position read as one element, halves of a row for RoPE, a
chunked logsumexp), for benchmarks/verdicts_vs_ir.py (held out: not looked at while the rules were
written). Written here, not copied."""

import triton
import triton.language as tl


@triton.jit
def _cross_entropy_forward(
    logits_ptr, logits_row_stride, loss_ptr, logsumexp_ptr, labels_ptr,
    VOCAB_SIZE, BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(0)
    logits_ptr += row_idx * logits_row_stride
    loss_ptr += row_idx
    logsumexp_ptr += row_idx
    labels_ptr += row_idx
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < VOCAB_SIZE
    label_idx = tl.load(labels_ptr).to(tl.int32)
    logits = tl.load(logits_ptr + col_offsets, mask=mask, other=-float("inf")).to(tl.float32)
    c = tl.max(logits, 0)
    logsumexp = c + tl.log(tl.sum(tl.exp(logits - c), 0))
    if label_idx != -100:
        x = tl.load(logits_ptr + label_idx).to(tl.float32)
        loss = logsumexp - x
    else:
        loss = 0.0
    tl.store(logsumexp_ptr, logsumexp)
    tl.store(loss_ptr, loss)


@triton.jit
def _rope_embedding(
    Q, Q_row_stride, cos, cos_row_stride, sin, sin_row_stride,
    seqlen, head_dim: tl.constexpr, n_heads: tl.constexpr, BLOCK_SIZE: tl.constexpr,
):
    row_position = tl.program_id(0)
    head_position = tl.program_id(1)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    half_head_dim = head_dim // 2
    mask = col_offsets < half_head_dim
    sin1 = tl.load(sin + (row_position % seqlen) * sin_row_stride + half_head_dim * 0 + col_offsets, mask=mask,
                   other=0)
    cos1 = tl.load(cos + (row_position % seqlen) * cos_row_stride + half_head_dim * 0 + col_offsets, mask=mask,
                   other=0)
    offs_q1 = row_position * Q_row_stride + head_position * head_dim + col_offsets
    offs_q2 = row_position * Q_row_stride + head_position * head_dim + col_offsets + half_head_dim
    Q1 = tl.load(Q + offs_q1, mask=mask, other=0).to(sin1.dtype)
    Q2 = tl.load(Q + offs_q2, mask=mask, other=0).to(sin1.dtype)
    tl.store(Q + offs_q1, Q1 * cos1 - Q2 * sin1, mask=mask)
    tl.store(Q + offs_q2, Q2 * cos1 + Q1 * sin1, mask=mask)


_ce = {"logits_ptr": "*bf16", "logits_row_stride": "i32:32000", "loss_ptr": "*fp32", "logsumexp_ptr": "*fp32",
       "labels_ptr": "*i64", "VOCAB_SIZE": "i32:32000"}
_rope = {"Q": "*bf16", "Q_row_stride": "i32:4096", "cos": "*bf16", "cos_row_stride": "i32:128", "sin": "*bf16",
         "sin_row_stride": "i32:128", "seqlen": "i32:2048"}
kinspect_examples = {
    "_cross_entropy_forward": {"args": _ce, "constexprs": {"BLOCK_SIZE": 32768}, "num_warps": 32},
    "_rope_embedding": {"args": _rope, "constexprs": {"head_dim": 128, "n_heads": 32, "BLOCK_SIZE": 64}},
}
