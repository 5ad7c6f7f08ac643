import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Sum each row of an M x N matrix, walking it with a block pointer."""
    pid = tl.program_id(0)
    block = tl.make_block_ptr(base=x_ptr, shape=(M, N), strides=(stride_m, stride_n),
                              offsets=(pid * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    acc = tl.zeros((BLOCK_M, ), dtype=tl.float32)
    for _ in range(0, tl.cdiv(N, BLOCK_N)):
        x = tl.load(block, boundary_check=(0, 1), padding_option="zero")
        acc += tl.sum(x.to(tl.float32), axis=1)
        block = tl.advance(block, (0, BLOCK_N))
    out = tl.make_block_ptr(base=out_ptr, shape=(M, ), strides=(1, ), offsets=(pid * BLOCK_M, ),
                            block_shape=(BLOCK_M, ), order=(0, ))
    tl.store(out, acc, boundary_check=(0, ))
