import triton
import triton.language as tl

NEGATIVE_SLOPE = tl.constexpr(0.01)
DEFAULT_BLOCK = 256


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, x * NEGATIVE_SLOPE)


@triton.jit
def row_offsets(row, stride, BLOCK: tl.constexpr):
    return row * stride + tl.arange(0, BLOCK)
