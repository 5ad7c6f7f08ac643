import triton
import triton.language as tl


@triton.jit
def bad_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x)  # noqa: F821 -- the compile error the tests expect


@triton.jit
def good_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


kinspect_examples = {"good_kernel": {"args": {"x_ptr": "*fp16", "y_ptr": "*fp16", "n": "i32:4096"},
                                     "constexprs": {"BLOCK": 512}}}
