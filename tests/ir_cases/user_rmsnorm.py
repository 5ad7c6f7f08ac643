"""A user's RMSNorm (issue 38): one row per program, the row in chunks of BLOCK_N. With BLOCK_N=64 at
num_warps=4 the 64 elements are spread over 128 threads (one each): the loads are 32-bit because of
that, not because of the data's layout."""

import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(X, W, Y, stride, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + cols, x * rstd * w, mask=mask)


_args = {"X": "*fp32", "W": "*fp32", "Y": "*fp32", "stride": "i32:1024", "N": "i32:1024", "eps": "fp32:1e-6"}
kinspect_examples = {
    "rmsnorm_kernel": {"args": _args, "constexprs": {"BLOCK_N": 64}, "num_warps": 4},
}
