"""A file whose import fails on a module nobody has, and whose kernel's definition needs it too."""

import triton
import triton.language as tl

from a_tuning_package_kinspect_has_not import CONFIGS


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
