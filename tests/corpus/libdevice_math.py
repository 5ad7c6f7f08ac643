import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def gelu_erf_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """Exact GELU through CUDA's libdevice, named as many kernels still name it."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = 0.5 * x * (1 + tl.extra.cuda.libdevice.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y, mask=offs < n)


@triton.jit
def softplus_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """The same math library through the portable name, which each backend maps to its own."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, libdevice.log1p(libdevice.exp(x)), mask=offs < n)


kinspect_examples = {
    "gelu_erf_kernel": {"args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32:4096"}, "constexprs": {"BLOCK": 1024}},
    "softplus_kernel": {"args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32:4096"}, "constexprs": {"BLOCK": 1024}},
}
