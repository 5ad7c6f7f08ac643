"""A scaled fp8 GEMM tile. Hopper takes OCP e4m3 operands in its tensor-core instructions, MI300
the fnuz e4m3; Ampere has no e4m3, so the file picks e5m2 there. It asks Triton's driver which
target it runs on."""

import triton
import triton.language as tl

TARGET = triton.runtime.driver.active.get_current_target()
if TARGET.backend == "hip":
    FP8 = "fp8e4b8"
elif TARGET.arch >= 89:
    FP8 = "fp8e4nv"
else:
    FP8 = "fp8e5"


@triton.jit
def fp8_gemm_kernel(a_ptr, b_ptr, c_ptr, a_scale, b_scale, M, N, K,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    acc = acc * (tl.load(a_scale) * tl.load(b_scale))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16))


kinspect_examples = {
    "fp8_gemm_kernel": {
        "args": {"a_ptr": f"*{FP8}:256x256", "b_ptr": f"*{FP8}:256x256", "c_ptr": "*bf16:256x256",
                 "a_scale": "*fp32:1", "b_scale": "*fp32:1", "M": "i32:256", "N": "i32:256", "K": "i32:256"},
        "constexprs": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64},
        "grid": (4, 4),
        "num_warps": 4,
    },
}
