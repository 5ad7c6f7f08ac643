import triton
import triton.language as tl

from .device_info import IS_AMD, NUM_SMS, autotune_configs


@triton.autotune(configs=autotune_configs(), key=["N"])
@triton.jit
def persistent_rmsnorm_kernel(X, Y, W, stride, N, M, eps, BLOCK_N: tl.constexpr, NUM_PROGRAMS: tl.constexpr = NUM_SMS,
                              ON_AMD: tl.constexpr = IS_AMD):
    cols = tl.arange(0, BLOCK_N)
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    for row in range(tl.program_id(0), M, NUM_PROGRAMS):
        x = tl.load(X + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
        tl.store(Y + row * stride + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=cols < N)
