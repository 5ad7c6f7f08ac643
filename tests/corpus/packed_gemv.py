"""A quantized GEMV in the style of low-bit inference libraries: packed int32 weights unpacked with
shifts and masks, a pruner that reads a constexpr from the launch's arguments, scales indexed by
group. No kinspect_examples."""

import triton
import triton.language as tl


def kernel_config_pruner(configs, nargs, **kwargs):
    group_size = nargs["group_size"]
    for config in configs:
        if config.kwargs["BLOCK_SIZE_K"] <= group_size:
            yield config


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k}, num_warps=4)
                          for n in (32, 64) for k in (32, 64, 256)],
                 key=["M", "N", "K"], prune_configs_by={"early_config_prune": kernel_config_pruner})
@triton.jit
def gemv_int4_kernel(a_ptr, b_ptr, c_ptr, scales_ptr, M, N, K, W_nbits: tl.constexpr,
                     group_size: tl.constexpr, unpack_mask: tl.constexpr, elements_per_sample: tl.constexpr,
                     BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    pid_n = tl.program_id(0)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    acc = tl.zeros((BLOCK_SIZE_N,), dtype=tl.float32)
    for k in range(0, K, BLOCK_SIZE_K):
        offs_k = k + tl.arange(0, BLOCK_SIZE_K)
        a = tl.load(a_ptr + offs_k, mask=offs_k < K, other=0.0).to(tl.float32)
        packed = tl.load(b_ptr + (offs_k[:, None] // elements_per_sample) * N + offs_n[None, :])
        shift = (offs_k[:, None] % elements_per_sample) * W_nbits
        w = ((packed >> shift) & unpack_mask).to(tl.float32)
        scales = tl.load(scales_ptr + (k // group_size) * N + offs_n)
        acc += tl.sum(a[:, None] * (w * scales[None, :]), axis=0)
    tl.store(c_ptr + offs_n, acc, mask=offs_n < N)
