import triton
import triton.language as tl


@triton.jit
def bias_heads_kernel(x_ptr, bias_ptr, out_ptr, seq_len, stride_b, stride_h, stride_s, BLOCK_S: tl.constexpr,
                      HEAD_DIM: tl.constexpr):
    """(batch, head, sequence block) on the three grid axes."""
    b = tl.program_id(0)
    h = tl.program_id(1)
    s = tl.program_id(2) * BLOCK_S + tl.arange(0, BLOCK_S)
    d = tl.arange(0, HEAD_DIM)
    offs = b * stride_b + h * stride_h + s[:, None] * stride_s + d[None, :]
    mask = s[:, None] < seq_len
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    bias = tl.load(bias_ptr + h * HEAD_DIM + d)
    tl.store(out_ptr + offs, x + bias[None, :], mask=mask)


kinspect_examples = {
    "bias_heads_kernel": {
        "args": {"x_ptr": "*bf16:2x4x128x64", "bias_ptr": "*bf16:4x64", "out_ptr": "*bf16:2x4x128x64",
                 "seq_len": "i32:128", "stride_b": "i32:32768", "stride_h": "i32:8192", "stride_s": "i32:64"},
        "constexprs": {"BLOCK_S": 32, "HEAD_DIM": 64},
        "grid": (2, 4, 4),
    },
}
