"""A file that needs a GPU at import, and whose kernel's definition needs that import too."""

import torch
import triton
import triton.language as tl

CAPABILITY = torch.cuda.get_device_capability()
CONFIGS = [triton.Config({"BLOCK": 128 if CAPABILITY[0] >= 9 else 64})]


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
