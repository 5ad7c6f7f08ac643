"""Runtimes of shipped kernels' variants on the device, for sweeps (`kinspect diff`).

A variant stored by kinspect is launched again through the JIT with its constexprs and options
(in a private Triton cache, so the user's cache is untouched), on the kernel's example arguments
at the sweep's size, and timed as `kinspect bench` times (kinspect.bench.timing.time_gpu).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from kinspect.bench.stats import Runtime
from kinspect.bench.timing import REP_MS, WARMUP_MS
from kinspect.model import Variant


def device_timer(size: str | None) -> Callable[[Variant], Runtime | None] | None:
    """A timer for variants compiled for the active GPU, or None when there is none here."""
    from kinspect.compile.targets import resolve

    resolved = resolve(None)
    if resolved.offline or resolved.target.backend not in ("cuda", "hip"):
        return None
    device = str(resolved.target)

    def timer(v: Variant) -> Runtime | None:
        if str(v.target) != device:
            return None
        return time_variant(v, size)

    return timer


def shipped_spec(v: Variant):
    """The KernelSpec a stored variant was compiled from, or None for user kernels."""
    from kinspect import kernels
    from kinspect.compile import jit_function

    group = Path(v.path).parent.name if v.path else ""
    if group in kernels.names() and jit_function(kernels.get(group).fn).__name__ == v.kernel:
        return kernels.get(group)
    return None


def time_variant(v: Variant, size: str | None = None) -> Runtime | None:
    """Time a shipped kernel's stored variant as `kinspect bench` times a kernel (steady state only)."""
    import torch

    from kinspect.bench.device import copy_bandwidth, matmul_peak
    from kinspect.bench.first_call import isolated
    from kinspect.bench.launch import prepare
    from kinspect.bench.timing import time_gpu

    spec = shipped_spec(v)
    if spec is None:
        return None
    # the values -p can set; the others (softmax's CONTIGUOUS, say) the example derives again from the size
    chosen = {k: x for k, x in v.constexprs.items() if k in spec.constexprs}
    launch = prepare(spec.name, device="cuda", constexprs=chosen, args={}, size=size,
                     num_warps=v.options.get("num_warps"), num_stages=v.options.get("num_stages"))
    with isolated(launch.fn):
        launch()
        torch.cuda.synchronize()
        t = time_gpu(launch, warmup_ms=WARMUP_MS, rep_ms=REP_MS)
    s = t.wall
    gbps, tflops = launch.rates(s.median)
    copy = copy_bandwidth()
    pct = 100 * gbps / copy["gbps"] if gbps else None
    peak = matmul_peak(launch.dtype)["tflops"] if tflops else None
    method = (f"{t.describe()} on {torch.cuda.get_device_name()}; size {launch.size}; "
              f"copy bandwidth {copy['gbps']:,.0f} GB/s measured {copy['measured']} ({copy['method']})")
    return Runtime(median_ms=s.median, p20_ms=s.p20, p80_ms=s.p80, cv=s.cv, runs=s.n, gbps=gbps, tflops=tflops,
                   roofline_pct=pct, roofline_of=f"of copy {copy['gbps']:,.0f} GB/s" if pct is not None else "",
                   method=method, copy_gbps=copy["gbps"], peak_tflops=peak)
