import triton
import triton.language as tl


@triton.jit
def activation_kernel(x_ptr, y_ptr, n, ACTIVATION: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if ACTIVATION == "silu":
        y = x * tl.sigmoid(x)
    elif ACTIVATION == "relu":
        y = tl.maximum(x, 0.0)
    else:
        y = x
    tl.store(y_ptr + offs, y, mask=offs < n)


kinspect_examples = {
    "activation_kernel": {"args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32:4096"},
                          "constexprs": {"ACTIVATION": "silu", "BLOCK": 512}},
}
