import triton
import triton.language as tl

from .utils import DEFAULT_BLOCK, leaky_relu, row_offsets


@triton.jit
def bias_act_kernel(x_ptr, bias_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    offs = row_offsets(row, stride_row, BLOCK)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(bias_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + offs, leaky_relu(x + b), mask=mask)


kinspect_examples = {
    "bias_act_kernel": {
        "args": {"x_ptr": "*fp16:64x256", "bias_ptr": "*fp16:256", "out_ptr": "*fp16:64x256",
                 "n_cols": "i32:256", "stride_row": "i32:256"},
        "constexprs": {"BLOCK": DEFAULT_BLOCK},
        "grid": (64,),
    },
}
