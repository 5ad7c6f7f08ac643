"""Kernels whose autotune pruner reads the SM clock: from nvidia-smi, else from NVML."""

import functools

import triton
import triton.language as tl

from . import VENDOR


@functools.lru_cache()
def sm_clock_mhz():
    try:
        from triton.testing import nvsmi

        return nvsmi(["clocks.max.sm"])[0]
    except FileNotFoundError:
        import pynvml

        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetMaxClockInfo(pynvml.nvmlDeviceGetHandleByIndex(0), pynvml.NVML_CLOCK_SM)


def nvml_clock_mhz():
    import pynvml

    pynvml.nvmlInit()
    return pynvml.nvmlDeviceGetMaxClockInfo(pynvml.nvmlDeviceGetHandleByIndex(0), pynvml.NVML_CLOCK_SM)


def prune_by_clock(configs, named_args, **kwargs):
    # fast clocks: the big tiles; the clock must agree between the two ways of asking
    assert sm_clock_mhz() == nvml_clock_mhz()
    big = sm_clock_mhz() > 1500
    return [c for c in configs if (c.kwargs["BLOCK"] >= 1024) == big]


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=4) for b in (256, 512, 1024, 2048)],
                 key=["n"], prune_configs_by={"early_config_prune": prune_by_clock})
@triton.jit
def scaled_copy_kernel(x_ptr, y_ptr, n, scale, ON_NVIDIA: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if ON_NVIDIA:
        x = x * scale
    tl.store(y_ptr + offs, x, mask=offs < n)


def scaled_copy(x, y, scale):
    n = x.numel()
    scaled_copy_kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, y, n, scale, ON_NVIDIA=VENDOR == "nvidia")
