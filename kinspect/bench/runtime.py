"""Runtimes of stored variants on the device, for sweeps (`kinspect diff`).

A variant stored by kinspect is launched again through the JIT with its constexprs and options
(in a private Triton cache, so the user's cache is untouched), and timed as `kinspect bench`
times (kinspect.bench.timing.time_gpu): a shipped kernel on its example arguments at the sweep's
size, a kernel from the user's file on its example arguments (--arg, kinspect_examples) with the
config and heuristics it was compiled with. For an autotuned kernel, `autotuner_pick` runs
Triton's own autotuner on the same example, to say beside kinspect's fastest what it picks.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Callable

from kinspect.bench.stats import Runtime
from kinspect.bench.timing import REP_MS, WARMUP_MS
from kinspect.core.errors import KinspectError
from kinspect.core.model import Variant


def device_timer(size: str | None, own=()) -> Callable[[Variant], Runtime | None] | None:
    """A timer for variants compiled for the active GPU, or None when there is none here. `own`:
    the user kernels (`/abs/file.py:name`, kinspect.compile.loader.absolute) named on the command
    line, whose files may be loaded again; any other variant is rebuilt from what its store holds."""
    from kinspect.compile.targets import resolve

    resolved = resolve(None)
    if resolved.offline or not resolved.backend.gpu:
        return None
    device = str(resolved.target)

    def timer(v: Variant) -> Runtime | None:
        if str(v.target) != device:
            return None
        return time_variant(v, size, own=own)

    return timer


def named_by_user(v: Variant, own) -> bool:
    """Whether a user kernel's variant comes from a file the user named on this command line (so
    loading that file again is what they asked for); a store's say-so never is."""
    return v.user is not None and bool(v.user.kernel) and v.user.kernel in set(own)


def shipped_spec(v: Variant):
    """The KernelSpec a stored variant was compiled from, or None for user kernels."""
    from kinspect import kernels
    from kinspect.compile import jit_function

    group = Path(v.path).parent.name if v.path else ""
    if group in kernels.names() and jit_function(kernels.get(group).fn).__name__ == v.kernel:
        return kernels.get(group)
    return None


def time_variant(v: Variant, size: str | None = None, own=()) -> Runtime | None:
    """Time a stored variant as `kinspect bench` times a kernel (steady state only): a shipped
    kernel's on its example at `size`; a user kernel's from its file where the user named it (`own`),
    else from the source and example launch its store holds (stored_launch)."""
    import torch

    from kinspect.bench.device import copy_bandwidth, matmul_peak
    from kinspect.bench.first_call import isolated
    from kinspect.bench.timing import time_gpu

    launch = variant_launch(v, size, own)
    if launch is None:
        return None
    with isolated(launch.fn), scratch_allocator():
        launch()
        torch.cuda.synchronize()
        t = time_gpu(launch, warmup_ms=WARMUP_MS, rep_ms=REP_MS)
    s = t.wall
    gbps, tflops = launch.rates(s.median)
    copy = copy_bandwidth()
    pct = 100 * gbps / copy["gbps"] if gbps else None
    peak = matmul_peak(launch.dtype)["tflops"] if tflops else None
    size_text = f"size {launch.size}" if launch.size else f"grid {launch.grid_size()}"
    method = (f"{t.describe()} on {torch.cuda.get_device_name()}; {size_text}{'; ' if launch.notes else ''}"
              f"{'; '.join(launch.notes)}; "
              f"copy bandwidth {copy['gbps']:,.0f} GB/s measured {copy['measured']} ({copy['method']})")
    return Runtime(median_ms=s.median, p20_ms=s.p20, p80_ms=s.p80, cv=s.cv, runs=s.n, gbps=gbps, tflops=tflops,
                   roofline_pct=pct, roofline_of=f"of copy {copy['gbps']:,.0f} GB/s" if pct is not None else "",
                   method=method, copy_gbps=copy["gbps"], peak_tflops=peak)


def variant_launch(v: Variant, size: str | None = None, own=(), device: str = "cuda"):
    """The Launch that times a stored variant, or None where there is none to make: a shipped
    kernel's example at `size`; a user kernel's from its file where the user named that file on the
    command line (`own`: user_launch), else from what its store holds (stored_launch)."""
    from kinspect.bench.prepared import prepare

    spec = shipped_spec(v)
    if spec is None:
        if v.user is None or not v.user.kernel:
            return None
        return user_launch(v, device) if named_by_user(v, own) else stored_launch(v, device)
    # the values -p can set; the others (softmax's CONTIGUOUS, say) the example derives again from the size
    chosen = {k: x for k, x in v.constexprs.items() if k in spec.constexprs}
    return prepare(spec.name, device=device, constexprs=chosen, args={}, size=size,
                   num_warps=v.num_warps, num_stages=v.num_stages)


def _user_kernel(v: Variant, config):
    """The user kernel a stored variant came from, loaded again on the device with the same
    example arguments (--arg as given, or the file's kinspect_examples) and -p values."""
    from kinspect.compile.args import parse_args
    from kinspect.compile.user import load

    user = v.user
    return load(user.kernel, parse_args(user.args), dict(user.constexprs), config=config)


def stored_launch(v: Variant, device: str = "cuda"):
    """A Launch of a user kernel's stored variant from what its store holds, as data: the kernel
    rebuilt from its captured source (kinspect.replay.source), fresh arguments of its example's
    shapes, dtypes and strides, its example's grid and the bytes and FLOPs its formulas gave. The
    file the record names is never imported (a store is data; importing a file runs its code)."""
    from kinspect.bench.prepared import Launch
    from kinspect.compile import jit_function
    from kinspect.compile.replayed import kernel
    from kinspect.replay.args import FILL_NOTE, values
    from kinspect.replay.spec import example_rates, from_example, how

    spec = from_example(v)
    if not spec.grid or any(int(g) <= 0 for g in spec.grid):
        raise KinspectError(f"the example launch of '{spec.kernel}' has the grid {tuple(spec.grid)}, which launches "
                            f"no program: there is nothing to time")
    fn = jit_function(kernel(spec))
    vals = values(spec.args, spec.signature, spec.attributes, device)
    bytes_moved, flops = example_rates(v)
    return Launch(label=spec.kernel, fn=fn, args=vals.args, constexprs=vals.constexprs, grid=tuple(spec.grid),
                  options=dict(spec.options), bytes_moved=bytes_moved, flops=flops,
                  dtype=next((a.dtype for a in spec.args if a.kind == "tensor"), "float32"),
                  notes=(f"kernel {how(spec)}; the example launch its record keeps", FILL_NOTE))


def on_device(value, device: str = "cuda"):
    """An example argument on the device: tensors moved, a host TensorDescriptor rebuilt over the
    moved tensor, anything else as it is."""
    import dataclasses

    import torch

    if torch.is_tensor(value):
        return value.to(device)
    if type(value).__name__ == "TensorDescriptor" and dataclasses.is_dataclass(value):
        return dataclasses.replace(value, base=value.base.to(device))
    return value


def user_launch(v: Variant, device: str = "cuda"):
    """A Launch of a user kernel's stored variant: its JITFunction with the variant's constexprs
    and options, on the example arguments moved to the GPU."""
    from kinspect.bench.prepared import Launch, _dtype_of, _formula

    uk = _user_kernel(v, v.user.config)
    args = {k: on_device(x, device) for k, x in uk.args.items()}
    options = {**uk.options, **{k: v.options[k] for k in ("num_warps", "num_stages") if k in v.options}}
    notes = () if uk.grid != (1,) else ("grid (1,): one program; declare \"grid\" in kinspect_examples to time "
                                        "the real launch",)
    return Launch(label=uk.name, fn=uk.fn, args=args, constexprs=uk.constexprs, grid=uk.grid, options=options,
                  bytes_moved=_formula(uk.bench.get("bytes"), args), flops=_formula(uk.bench.get("flops"), args),
                  dtype=_dtype_of(args), notes=notes)


def as_launched(jit, args: dict) -> tuple[list, dict]:
    """The runtime arguments as a launcher passes them: positionally, in the kernel's order, up to
    the first one not given (the autotuner reads its key, and hands prune_configs_by its
    `named_args`, from the positional ones only); the rest by keyword."""
    positional = []
    for name in jit.arg_names:
        if name not in args:
            break
        positional.append(args[name])
    return positional, {k: v for k, v in args.items() if k not in jit.arg_names[:len(positional)]}


@contextlib.contextmanager
def scratch_allocator():
    """A global-memory allocator for the block when none is set: kernels that build tensor
    descriptors in the kernel (tl.make_tensor_descriptor) need scratch space at launch."""
    import torch
    from triton.runtime import _allocation

    if not isinstance(_allocation._allocator.get(), _allocation.NullAllocator):
        yield
        return
    token = _allocation._allocator.set(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8,
                                                                                     device="cuda"))
    try:
        yield
    finally:
        _allocation._allocator.reset(token)


def autotuner_pick(v: Variant, device: str = "cuda", own=()) -> dict | None:
    """What Triton's own autotuner picks for the variant's kernel on its example arguments: it
    benchmarks the configs prune_configs_by keeps, with its own do_bench, as at a first launch.
    {"config": number, "key": the key's example values, "ms": its time of that config,
    "benchmarked": how many it timed}, or None for a kernel that is not autotuned. The autotuner,
    its pruning and heuristics are code in the user's file: run only for a kernel whose file the user
    named on this command line (`own`), else {"skipped": why}."""
    import torch

    from kinspect.compile import private_cache
    from kinspect.compile.autotune import chain

    user = v.user
    if user is None or not user.kernel or user.autotune is None or not user.autotune.configs:
        return None
    if not named_by_user(v, own):
        from kinspect.replay.spec import shown

        return {"skipped": f"its autotuner is code in {shown(user.kernel)}, and kinspect does not import a file "
                           f"a store names; name your own file to run it: kinspect diff FILE.py:{shown(v.kernel)}"}
    uk = _user_kernel(v, None)
    c = chain(uk.wrapper, uk.name)
    tuner = c.autotuner
    overridden = sorted(set(uk.given) & c.config_names())
    if overridden:   # Triton refuses a launch that passes what its configs set
        return {"skipped": f"-p {', '.join(overridden)} sets what its configs set, so it cannot pick among them"}
    args = {k: on_device(x, device) for k, x in uk.args.items()}
    given = uk.given    # what the launch passes: the autotuner and heuristics add the rest themselves
    saved = dict(tuner.cache)
    tuner.cache.clear()          # a pick made earlier in this process would be reused, not measured
    try:
        positional, keywords = as_launched(c.jit, args)
        with private_cache(), scratch_allocator():
            uk.wrapper[uk.grid](*positional, **keywords, **given)
            if device == "cuda":
                torch.cuda.synchronize()
        best = tuner.best_config
        timings = dict(getattr(tuner, "configs_timings", None) or {})
    finally:
        tuner.cache.clear()
        tuner.cache.update(saved)
    index = next((i for i, c in enumerate(tuner.configs) if c is best), None)
    if index is None:
        index = next((i for i, c in enumerate(tuner.configs) if c == best), -1)
    own = timings.get(best)
    ms = own[0] if isinstance(own, (list, tuple)) else own
    return {"config": index, "key": (uk.tuning.key if uk.tuning else {}), "ms": ms,
            "benchmarked": len(timings) or 1}
