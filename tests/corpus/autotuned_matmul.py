"""An autotuned matmul as kernel libraries write it: configs from a function, a pruning hook, a
heuristic computed from the arguments and the config, an epilogue selected by a constexpr, and a
launcher that sizes the grid from the chosen config."""

import torch
import triton
import triton.language as tl


def matmul_configs():
    tiles = [(64, 64, 32, 4, 3), (128, 64, 32, 4, 3), (64, 128, 64, 4, 3), (128, 128, 64, 8, 3), (64, 64, 128, 4, 2)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_warps=w, num_stages=s)
            for m, n, k, w, s in tiles]


def prune_deep_tiles(configs, named_args, **kwargs):
    """A tile deeper than K only loads padding."""
    return [c for c in configs if c.kwargs["BLOCK_K"] <= named_args["K"]]


@triton.autotune(configs=matmul_configs(), key=["M", "N", "K"],
                 prune_configs_by={"early_config_prune": prune_deep_tiles})
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  EVEN_K: tl.constexpr, ACTIVATION: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % group_m)
    pid_n = (pid % group) // group_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if ACTIVATION == "leaky_relu":
        acc = tl.where(acc >= 0, acc, 0.01 * acc)
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def matmul(a, b, activation=""):
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]), )
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), ACTIVATION=activation)
    return c


M, N, K = 1024, 1024, 64
kinspect_examples = {
    "matmul_kernel": {
        "args": {"a_ptr": f"*fp16:{M}x{K}", "b_ptr": f"*fp16:{K}x{N}", "c_ptr": f"*fp16:{M}x{N}",
                 "M": f"i32:{M}", "N": f"i32:{N}", "K": f"i32:{K}",
                 "stride_am": f"i32:{K}", "stride_ak": "i32:1", "stride_bk": f"i32:{N}", "stride_bn": "i32:1",
                 "stride_cm": f"i32:{N}", "stride_cn": "i32:1"},
        "constexprs": {"ACTIVATION": ""},
        "grid": lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]), ),
        "flops": lambda a: 2 * M * N * K,
        "bytes": lambda a: 2 * (M * K + K * N + M * N),
    },
}
