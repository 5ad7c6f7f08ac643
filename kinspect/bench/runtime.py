"""Runtimes of shipped kernels' variants on the device, for sweeps (`kinspect diff`).

A variant stored by kinspect is launched again through the JIT with its constexprs and options
(in a private Triton cache, so the user's cache is untouched), on the kernel's example arguments
at the sweep's size, and timed by triton.testing.do_bench (warmup, L2 flush between runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from kinspect.bench.stats import Runtime
from kinspect.model import Variant

WARMUP_MS = 25
REP_MS = 100


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

    group = Path(v.path).parent.name if v.path else ""
    if group in kernels.names() and kernels.get(group).fn.__name__ == v.kernel:
        return kernels.get(group)
    return None


def time_variant(v: Variant, size: str | None = None) -> Runtime | None:
    import torch
    from triton.testing import do_bench

    from kinspect.bench.device import copy_bandwidth
    from kinspect.bench.stats import summarize
    from kinspect.compile import jit_function, private_cache

    spec = shipped_spec(v)
    if spec is None:
        return None
    example = spec.example(size or spec.default_size, getattr(torch, spec.dtype), "cuda", **v.constexprs)
    options = {k: v.options[k] for k in ("num_warps", "num_stages") if k in v.options}
    fn = jit_function(spec.fn)
    with private_cache():
        def launch():
            fn[example.grid](**example.args, **example.constexprs, **options)

        launch()
        torch.cuda.synchronize()
        times = do_bench(launch, warmup=WARMUP_MS, rep=REP_MS, return_mode="all")
    s = summarize(list(times))
    gbps = spec.bytes_moved(example) / (s.median * 1e-3) / 1e9 if spec.bytes_moved else None
    tflops = spec.flops(example) / (s.median * 1e-3) / 1e12 if spec.flops else None
    copy = copy_bandwidth()
    pct = 100 * gbps / copy["gbps"] if gbps else None
    method = (f"triton.testing.do_bench on {torch.cuda.get_device_name()}: warmup {WARMUP_MS} ms, rep {REP_MS} ms, "
              f"L2 flushed between runs, {s.n} runs; size {size or spec.default_size}; "
              f"copy bandwidth {copy['gbps']:,.0f} GB/s measured {copy['measured']} ({copy['method']})")
    return Runtime(median_ms=s.median, p20_ms=s.p20, p80_ms=s.p80, cv=s.cv, runs=s.n, gbps=gbps, tflops=tflops,
                   roofline_pct=pct, roofline_of=f"of copy {copy['gbps']:,.0f} GB/s" if pct is not None else "",
                   method=method)
