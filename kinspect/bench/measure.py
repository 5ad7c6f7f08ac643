"""`kinspect bench`: first call vs steady state, throughput against what the device measured, the
torch reference, correctness, and the variant's registers and vector/matrix use beside its time."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kinspect.analysis.summary import VariantMetrics
from kinspect.bench.check import Check
from kinspect.bench.first_call import FirstCalls
from kinspect.bench.launch_path import LaunchPath
from kinspect.bench.profile import Profile
from kinspect.bench.reference import RefTiming
from kinspect.bench.timing import REP_MS, WARMUP_MS, Timing
from kinspect.core.errors import UsageError
from kinspect.core.model import Variant
from kinspect.files.store import DEFAULT_OUT


@dataclass(frozen=True)
class Throughput:
    gbps: float | None = None
    copy: dict | None = None            # the device's measured copy bandwidth record
    tflops: float | None = None
    peak: dict | None = None            # the device's measured matmul FLOP/s record for the dtype
    note: str = ""                      # why a percentage is missing

    @property
    def pct_copy(self) -> float | None:
        return 100 * self.gbps / self.copy["gbps"] if self.gbps and self.copy else None

    @property
    def pct_peak(self) -> float | None:
        return 100 * self.tflops / self.peak["tflops"] if self.tflops and self.peak else None

    def to_json(self) -> dict:
        return {"gbps": self.gbps, "pct_of_copy_bandwidth": self.pct_copy, "copy_bandwidth": self.copy,
                "tflops": self.tflops, "pct_of_peak_flops": self.pct_peak, "peak_flops": self.peak,
                "note": self.note or None}


@dataclass(frozen=True)
class BenchResult:
    label: str
    target_note: str
    size: str
    dtype: str
    variant: Variant
    first: FirstCalls
    in_user_cache: bool | None
    steady: Timing
    throughput: Throughput
    references: tuple[RefTiming, ...]
    check: Check | None
    metrics: VariantMetrics            # the variant's record of figures, as every view shows it
    method: dict
    profile: Profile | None = None
    notes: tuple[str, ...] = ()
    launch: LaunchPath | None = None   # as called from Python against the GPU time (GPU backends)

    def to_json(self) -> dict:
        v = self.variant
        return {
            "kernel": self.label, "variant": v.name, "path": v.path, "target": str(v.target),
            "target_note": self.target_note, "size": self.size, "dtype": self.dtype,
            "constexprs": v.constexprs, "options": v.options,
            "first_call": {"cold": self.first.cold.to_json(), "warm": self.first.warm.to_json(),
                           "in_user_triton_cache": self.in_user_cache},
            "steady": self.steady.to_json(), "throughput": self.throughput.to_json(),
            "references": [r.to_json() for r in self.references],
            "check": self.check.to_json() if self.check else None,
            "asm": {**self.metrics.figures(), "loaded": v.extra.get("loaded")},
            "method": self.method, "profile": self.profile.to_json() if self.profile else None,
            "launch_path": self.launch.to_json() if self.launch else None,
            "notes": list(self.notes),
        }


def no_device_line(kernel: str, captured: bool = False, store=None, named: str | None = None) -> str:
    if captured:
        from kinspect.bench.captured import no_device_line as captured_line

        return captured_line(kernel, store, named)
    return (f"no device here to run '{kernel}' on (no GPU, no CPU Triton backend such as triton-cpu): "
            f"check its results with `kinspect bench {kernel} --interpret` (Triton's interpreter, small size) "
            f"or see what it compiles to with `kinspect dump {kernel}`")


def device_target(kernel: str, target: str | None, captured: bool = False, store=None, named: str | None = None):
    """The active device's Resolved target; bench cannot time an offline target."""
    from kinspect.compile.targets import Resolved, active_device_target

    if target not in (None, "", "auto", "device"):
        raise UsageError(f"bench runs the kernel, so it needs the device: -t {target} only compiles offline. "
                         f"Use -t device, or `kinspect dump {kernel} -t {target}` to see its code")
    device = active_device_target()
    if device is None:
        raise UsageError(no_device_line(kernel, captured, store, named))
    return Resolved(device, False, f"{device} (the active device)")


def bench(kernel: str, *, target: str | None = None, constexprs: dict | None = None, args: dict | None = None,
          num_warps: int | None = None, num_stages: int | None = None, size: str | None = None,
          out_dir: str | Path = DEFAULT_OUT, references: bool = True, compiled_reference: bool = True,
          bytes_moved: int | None = None, flops: int | None = None, warmup_ms: int = WARMUP_MS,
          rep_ms: int = REP_MS, profile: str | Path | None = None, launch_path: bool = True,
          replay: str | None = None, picked: dict | None = None) -> BenchResult:
    """`picked`: the -p values that picked `replay` among several captured variants (the hints name them)."""
    from kinspect.bench.first_call import first_calls, in_user_cache, isolated
    from kinspect.bench.profile import check_writable
    from kinspect.bench.timing import timer_for
    from kinspect.analysis.summary import summaries

    if profile is not None:
        check_writable(profile)
    if replay:      # the hints name the variant so that every command they suggest finds it
        from kinspect.analysis.lookup import handle
        from kinspect.replay.spec import load

        load(replay)        # a variant never launched has nothing to replay, here or on a GPU: say so first
        named = handle(kernel, replay, out_dir, picked)
    else:
        named = kernel
    resolved = device_target(kernel, target, captured=bool(replay), store=out_dir, named=named)
    from kinspect.files.store import Store

    Store(out_dir).ensure_writable()  # one line now, not after a compile and a timing run
    gpu = resolved.backend.gpu
    from triton.runtime import driver

    device = driver.active.get_active_torch_device()
    launch = _preparer(kernel, replay)(device=device, constexprs=dict(constexprs or {}), args=dict(args or {}),
                                       size=size, num_warps=num_warps, num_stages=num_stages, bytes_moved=bytes_moved,
                                       flops=flops)
    sync = _sync_for(gpu)
    kind = resolved.backend.torch_device
    timer = timer_for(kind)
    with isolated(launch.fn):
        first = first_calls(launch.fn, launch, sync, out_dir=out_dir, group=launch.label, gpu=gpu)
        steady = timer(launch, warmup_ms=warmup_ms, rep_ms=rep_ms)
        path = _launch_path(launch, sync, steady, rep_ms) if gpu and launch_path else None
        figures = summaries([first.variant], jobs=1)[0]
        check = _check(launch, figures, sync)
        prof = _profile(launch, profile) if profile is not None else None
    refs = ()
    if references and launch.reference is not None:
        from kinspect.bench.reference import time_references

        refs = tuple(time_references(launch.reference, launch.input_values(), steady, timer,
                                     compiled=compiled_reference, warmup_ms=warmup_ms, rep_ms=rep_ms))
    return BenchResult(
        label=launch.label, target_note=resolved.note, size=launch.size, dtype=launch.dtype, variant=first.variant,
        first=first, in_user_cache=in_user_cache(first.variant.hash), steady=steady,
        throughput=throughput(launch, steady, figures, resolved.backend), references=refs, check=check,
        metrics=figures, method=method(steady, resolved.backend, launch), profile=prof, notes=launch.notes, launch=path)


def _sync_for(gpu: bool):
    if not gpu:
        return lambda: None
    import torch

    return torch.cuda.synchronize


def _launch_path(launch, sync, steady: Timing, rep_ms: int) -> LaunchPath:
    from kinspect.bench.launch_path import measure as measure_path

    return measure_path(launch, sync, steady_ms=steady.wall.median, rep_ms=rep_ms)


def _check(launch, figures: VariantMetrics, sync) -> Check | None:
    from kinspect.bench.check import compare, precision_of

    if launch.reference is None or not launch.output:
        return None
    launch()
    sync()
    ref = launch.reference(*launch.input_values())
    return compare(launch.args[launch.output], ref, precision=precision_of(launch.dtype, figures.matrix > 0))


def _profile(launch, path) -> Profile:
    from kinspect.bench.profile import profile

    return profile(launch, path)


def throughput(launch, steady: Timing, figures: VariantMetrics, backend) -> Throughput:
    """GB/s and TFLOP/s from the kernel's formulas, against the device's measured copy bandwidth
    and (for kernels that use matrix instructions) its measured matmul FLOP/s in the dtype."""
    from kinspect.bench.device import copy_bandwidth, matmul_peak

    gbps, tflops = launch.rates(steady.wall.median)
    note = ""
    peak = None
    if tflops is not None:
        if figures.matrix > 0 or not backend.gpu:
            peak = matmul_peak(launch.dtype, backend.torch_device)
        else:
            note = "no matrix instructions: its FLOP/s is not compared with the matmul peak"
    elif launch.flops is None:
        note = "no flops formula"
    if launch.bytes_moved is None:
        note = "no bytes formula (pass --bytes)" + (f"; {note}" if note else "")
    elif launch.estimate:
        note = launch.estimate + (f"; {note}" if note and launch.flops is not None else "")
    return Throughput(gbps=gbps, copy=copy_bandwidth(backend.torch_device) if gbps else None, tflops=tflops, peak=peak,
                      note=note)


def method(steady: Timing, backend, launch) -> dict:
    from kinspect.bench.device import device_name
    from kinspect.bench.method import describe_clocks, nvidia_clocks, versions

    clocks = nvidia_clocks() if backend.gpu else None
    return {"timing": steady.describe(), "warmup_ms": steady.warmup_ms, "rep_ms": steady.rep_ms,
            "runs": steady.wall.n, "flush_bytes": steady.flush_bytes, "device": device_name(backend.torch_device),
            "clocks": clocks, "clocks_note": describe_clocks(clocks) if backend.gpu else "CPU",
            "versions": versions(), "size": launch.size, "dtype": launch.dtype,
            "grid": list(launch.grid_size()), "constexprs": launch.constexprs, "options": launch.options,
            "bytes_moved": launch.bytes_moved, "flops": launch.flops,
            "first_call": "cold: empty private Triton cache; warm: in-memory JIT cache dropped, on-disk cache kept",
            "launch_path": "as called: loops of calls with one synchronize after each loop, median ms a call; "
                           "host: the loop before the synchronize; GPU only: the loop's calls in a CUDA graph, "
                           "replayed; launcher: CompiledKernel.run called as JITFunction.run calls it"}


def _preparer(kernel: str, replay: str | None):
    """The function that makes the bench's Launch: from a captured variant's folder (`replay`,
    kinspect.bench.captured) or from the kernel's example or declared arguments (bench.prepared)."""
    import functools

    if replay:
        from kinspect.bench.captured import prepare as captured

        return functools.partial(captured, replay)
    from kinspect.bench.prepared import prepare

    return functools.partial(prepare, kernel)
