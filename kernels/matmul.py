"""Tiled matmul with grouped program ordering (Triton tutorial 03), masks for any M, N, K.

`matmul(a, b)` autotunes over a few Hopper-friendly tiles on a GPU (CONFIGS); the registered
kernel's example runs one tile, by default the first that fits shared memory in the dtype
(`default_config`), and `-p` picks another
(`kinspect dump matmul -p BLOCK_N=128 --num-warps 4`).
"""

import torch
import triton
import triton.language as tl

from kinspect.backends import direct_launch

from . import Example, KernelSpec, parse_size, register


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


CONFIGS = [
    triton.Config(dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8), num_warps=8, num_stages=3),
    triton.Config(dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8), num_warps=4, num_stages=4),
    triton.Config(dict(BLOCK_M=64, BLOCK_N=256, BLOCK_K=32, GROUP_M=8), num_warps=4, num_stages=4),
    triton.Config(dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8), num_warps=4, num_stages=4),
    triton.Config(dict(BLOCK_M=64, BLOCK_N=128, BLOCK_K=64, GROUP_M=8), num_warps=4, num_stages=4),
]
DEFAULT = CONFIGS[0]
SHARED_BYTES = 227 * 1024  # an sm90 block's shared memory: the pipeline's A and B stages must fit


def default_config(dtype) -> triton.Config:
    """The first configuration whose pipelined A and B tiles fit shared memory in `dtype` (float32's
    128x256x64 tiles in 3 stages would need 288 KiB)."""
    size = torch.empty((), dtype=dtype).element_size()
    for c in CONFIGS:
        k = c.kwargs
        if (k["BLOCK_M"] + k["BLOCK_N"]) * k["BLOCK_K"] * size * c.num_stages <= SHARED_BYTES:
            return c
    return CONFIGS[-1]

_tuned = triton.autotune(configs=CONFIGS, key=["M", "N", "K"])(matmul_kernel)


def _args(a, b, c) -> dict:
    (m, k), n = a.shape, b.shape[1]
    return dict(a_ptr=a, b_ptr=b, c_ptr=c, M=m, N=n, K=k, stride_am=a.stride(0), stride_ak=a.stride(1),
                stride_bk=b.stride(0), stride_bn=b.stride(1), stride_cm=c.stride(0), stride_cn=c.stride(1))


def matmul(a: torch.Tensor, b: torch.Tensor, *, autotune: bool | None = None) -> torch.Tensor:
    """a @ b for 2-D a (M x K) and b (K x N), output in a's dtype. Autotuned over CONFIGS on a GPU
    (once per problem: later calls launch the winner directly, without the autotuner's per-call
    bookkeeping); DEFAULT's tile elsewhere (Triton's interpreter cannot time configurations)."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: a {tuple(a.shape)} @ b {tuple(b.shape)} is not a matrix product")
    (m, k), n = a.shape, b.shape[1]
    c = torch.empty(m, n, dtype=a.dtype, device=a.device)
    key = (a.shape, b.shape, a.stride(), b.stride(), a.dtype, b.dtype, a.device, b.device, autotune)
    chosen = _CHOSEN.get(key)
    if chosen is None:
        if a.is_cuda if autotune is None else autotune:
            _tuned[lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)](**_args(a, b, c))
            cfg = _tuned.best_config
        else:
            cfg = default_config(a.dtype)
        kw = cfg.kwargs
        # the launch for this problem, worked out once (triton.cdiv is a constexpr function: slow in Python)
        chosen = _CHOSEN.put(key, ((triton.cdiv(m, kw["BLOCK_M"]) * triton.cdiv(n, kw["BLOCK_N"]),),
                                   (*list(_args(a, b, c).values())[3:], kw["BLOCK_M"], kw["BLOCK_N"], kw["BLOCK_K"],
                                    kw["GROUP_M"]),
                                   dict(num_warps=cfg.num_warps, num_stages=cfg.num_stages)))
    grid, rest, options = chosen
    _launch(key, grid, (a, b, c), rest, options)
    return c


_CHOSEN = direct_launch.Plans()                      # problem -> (grid, scalar arguments, options)
_launch = direct_launch.KernelLauncher(matmul_kernel)


def _example(size, dtype, device, BLOCK_M=None, BLOCK_N=None, BLOCK_K=None, GROUP_M=None):
    dims = parse_size(size)
    m, n, k = (dims * 3)[:3] if len(dims) == 1 else (dims + (dims[-1],))[:3]
    a = torch.randn(m, k, dtype=dtype, device=device)
    b = torch.randn(k, n, dtype=dtype, device=device)
    c = torch.empty(m, n, dtype=dtype, device=device)
    cfg = default_config(dtype)
    given = dict(BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M)
    constexprs = {k: v if v is not None else cfg.kwargs[k] for k, v in given.items()}
    grid = (triton.cdiv(m, constexprs["BLOCK_M"]) * triton.cdiv(n, constexprs["BLOCK_N"]),)
    # the default's warps and stages go with its tile; another tile gets Triton's defaults
    options = dict(num_warps=cfg.num_warps, num_stages=cfg.num_stages) if constexprs == cfg.kwargs else {}
    return Example(_args(a, b, c), constexprs, grid, inputs=("a_ptr", "b_ptr"), output="c_ptr", options=options,
                   call=(lambda: matmul(a, b, autotune=False)) if constexprs == cfg.kwargs else None,
                   call_text="matmul(a, b, autotune=False)")


def _flops(e):
    return 2 * e.args["M"] * e.args["N"] * e.args["K"]


def _bytes(e):
    a, b, c = e.args["a_ptr"], e.args["b_ptr"], e.args["c_ptr"]
    return (a.numel() + b.numel() + c.numel()) * a.element_size()


register(KernelSpec(
    name="matmul", fn=matmul_kernel, example=_example,
    constexprs=dict(BLOCK_M=None, BLOCK_N=None, BLOCK_K=None, GROUP_M=None),
    reference=lambda a, b: a @ b, default_size="1024", small_size="100x72x40", dtype="float16", bytes_moved=_bytes, flops=_flops,
    summary="tiled matmul with grouped ordering (Triton tutorial 03); size M, MxN or MxNxK",
    notes=(f"default tile {DEFAULT.kwargs} num_warps={DEFAULT.num_warps} num_stages={DEFAULT.num_stages} (16-bit; "
           f"float32 takes the first of CONFIGS that fits shared memory); matmul() autotunes over {len(CONFIGS)} "
           f"tiles on a GPU",)))
