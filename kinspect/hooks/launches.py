"""Launch records: how often each captured variant ran, with which grids and arguments, and (with
a timer) how long it ran on the GPU.

Triton calls `knobs.runtime.launch_enter_hook` / `launch_exit_hook` around every launch with a
LazyDict built by `CompiledKernel.launch_metadata`; it carries the launch's grid, the kernel's
metadata and its arguments only when the kernel's JITFunction has a `launch_metadata` function of
its own. While capture is on, ArgumentsToHooks wraps that method so every launch carries them (the
kernels Inductor compiles in worker processes and loads in the program's process included, which
no listener of that process sees compile); the enter hook reads them without calling anything.
Work per launch is a dict update keyed by the arguments' shapes, strides and values; the records
are written by `flush`, per process, beside the variant (kinspect.store.write_launches): a
variant's first launch at once, later counts every FLUSH_S seconds and when the capture ends.
"""

from __future__ import annotations

import os
import random
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from kinspect.hooks import tuning
from kinspect.launches import GRIDS, SAMPLES, SIGNATURES
from kinspect.model import ArgSpec, GpuTime, Launches, LaunchSignature, ProcessLaunches

FLUSH_S = 2.0            # write launch files at most this often while launches happen
RESOLVE_EVERY = 2048     # timed launches held before their events are read
TUNING = "tuning"        # marks the timer's key of an autotuner's benchmark launch: (TUNING, hash)


def no_launch_metadata(grid, metadata, args):
    """The entry kinspect adds to a launch's LazyDict: its arguments are the (grid, kernel metadata,
    arguments) the hooks read; it adds nothing to the launch's metadata."""
    return {}


class ArgumentsToHooks:
    """Wraps CompiledKernel.launch_metadata so every launch hands its grid, metadata and arguments to
    the launch hooks (Triton does so only for kernels with a `launch_metadata` function); `restore`
    puts Triton's method back."""

    def __init__(self, on_first=None):
        self.on_first = on_first      # called with each CompiledKernel at its first launch
        self._cls = self._original = None

    def install(self) -> None:
        from triton.compiler.compiler import CompiledKernel, LazyDict

        original = CompiledKernel.launch_metadata
        names = {}                    # kernel hash -> its argument names (once per kernel)
        on_first = self.on_first

        def launch_metadata(kernel, grid, stream, *args):
            known = names.get(kernel.hash)
            if known is None:
                known = names[kernel.hash] = _arg_names(kernel, len(args))
                if on_first is not None:
                    try:
                        on_first(kernel)
                    except Exception:
                        pass
            try:
                ret = original(kernel, grid, stream, *args)
            except Exception:       # a kernel whose source is gone (unpickled): build it here
                ret = None
            if ret is None:
                ret = LazyDict({"name": kernel.name, "function": kernel.function, "stream": stream})
            if not ret.extras:
                ret.extras.append((no_launch_metadata, (grid, kernel.metadata, dict(zip(known, args)))))
            return ret

        launch_metadata.kinspect_original = original
        CompiledKernel.launch_metadata = launch_metadata
        self._cls, self._original = CompiledKernel, original

    def restore(self) -> None:
        if self._cls is not None:
            self._cls.launch_metadata = self._original
            self._cls = self._original = None


def _arg_names(kernel, n: int) -> list[str]:
    src = getattr(kernel, "src", None)
    names = getattr(getattr(src, "fn", None), "arg_names", None) or list(getattr(src, "signature", None) or ())
    return list(names)[:n] + [f"arg{i}" for i in range(len(names), n)]


@dataclass
class Tally:
    """One variant's launches in this process."""

    kernel: str
    names: tuple[str, ...]
    calls: int = 0
    grids: dict = field(default_factory=dict)
    signatures: dict = field(default_factory=dict)   # (grid, arg keys) -> calls
    other: int = 0
    timed: int = 0
    total_ms: float = 0.0
    samples: list = field(default_factory=list)
    tuning: int = 0                 # launches inside an autotuner's benchmark, not in the above
    tuning_ms: float = 0.0
    dirty: bool = False


_SCALARS = {int: "int", float: "float", bool: "bool", str: "str", type(None): "none"}
_tensor_type = None


def _arg_key(value):
    """What identifies an argument for the records, cheaply (this runs for every argument of every
    launch): a tensor's dtype, shape, strides and device; a scalar's type and value; a host tensor
    descriptor's base dtype, shape, strides, block and device."""
    global _tensor_type
    kind = type(value)
    if kind in _SCALARS:
        return (kind, value)
    if _tensor_type is None:
        import torch

        _tensor_type = torch.Tensor
    if isinstance(value, _tensor_type):
        return ("tensor", value.dtype, value.shape, value.stride(), value.device)
    base = getattr(value, "base", None)
    if isinstance(base, _tensor_type) and hasattr(value, "block_shape"):
        return ("tensordesc", base.dtype, tuple(value.shape), tuple(value.strides), tuple(value.block_shape),
                base.device)
    name = kind.__name__
    if name == "constexpr" and hasattr(value, "value"):     # tl.constexpr(4) passed for a constexpr
        return _arg_key(value.value)
    if name == "dtype" and kind.__module__.startswith("triton.language"):   # tl.float16 as a constexpr
        return ("dtype", str(value))
    return ("other", name)


def _arg_spec(name: str, key) -> ArgSpec:
    kind = key[0]
    if kind in _SCALARS:
        return ArgSpec(name, _SCALARS[kind], value=key[1])
    if kind == "tensor":
        return ArgSpec(name, "tensor", shape=tuple(int(x) for x in key[2]), strides=tuple(int(x) for x in key[3]),
                       dtype=str(key[1]).removeprefix("torch."), device=str(key[4]))
    if kind == "tensordesc":
        return ArgSpec(name, "tensordesc", value=tuple(key[4]), shape=tuple(int(x) for x in key[2]),
                       strides=tuple(int(x) for x in key[3]), dtype=str(key[1]).removeprefix("torch."),
                       device=str(key[5]))
    if kind == "dtype":
        return ArgSpec(name, "dtype", value=key[1])
    return ArgSpec(name, "other", value=key[1])


def _grid3(grid) -> tuple:
    n = len(grid)
    if n == 3 and type(grid) is tuple:
        return grid
    g = tuple(int(x) for x in grid)
    return g + (1,) * (3 - n) if n < 3 else g


def rank() -> int | None:
    """The process's rank in a distributed program: RANK as launchers set it, else torch.distributed's."""
    if os.environ.get("RANK", "").isdigit():
        return int(os.environ["RANK"])
    try:
        import torch.distributed as dist

        return dist.get_rank() if dist.is_available() and dist.is_initialized() else None
    except Exception:
        return None


class LaunchRecorder:
    """The enter/exit hooks and what they gathered; `folders` maps a compile hash to its store folder
    (the compilation recorder fills it as it records or finds variants). `timer` times each launch
    on the device (EventTimer, ProfilerTimer) or is None."""

    def __init__(self, store=None, *, timer=None):
        self.store = store
        self.timer = timer
        self.tallies: dict[str, Tally] = {}
        self.folders: dict[str, Path] = {}
        self.unattributed: dict[str, int] = {}    # kernel name -> launches of variants compiled before capture
        self.hook_s = 0.0                         # time spent in the hooks
        self.after_flush: list = []               # called with `folders` after each flush
        if store is not None:                     # Inductor kernels' ATen ops and model lines, beside their variants
            from kinspect.hooks.provenance import InductorOrigins

            self.after_flush.append(InductorOrigins().attach)
        self._lock = threading.Lock()
        self._last_flush = time.monotonic()
        self._rng = random.Random(os.getpid())

    # -- hooks (called by Triton's launcher around every launch: they must never raise) ------------

    def enter(self, metadata) -> None:
        t0 = time.perf_counter()
        try:
            self._enter(metadata)
        except Exception:
            pass
        self.hook_s += time.perf_counter() - t0

    def exit(self, metadata) -> None:
        if self.timer is None:
            return
        t0 = time.perf_counter()
        try:
            self.timer.exit(self)
        except Exception:
            pass
        self.hook_s += time.perf_counter() - t0

    def _enter(self, metadata) -> None:
        extras = getattr(metadata, "extras", None)
        data = getattr(metadata, "data", None) or {}
        if not extras:   # a variant compiled before the capture began: no arguments to read
            name = str(data.get("name", "?"))
            self.unattributed[name] = self.unattributed.get(name, 0) + 1
            if self.timer is not None:
                self.timer.enter(self, None, data)
            return
        grid, kernel_meta, args = extras[0][1]
        key = kernel_meta.hash
        if tuning.active():
            # an autotuner benchmarking a config: counted and timed apart (the timer still sees the
            # launch, so the profiler's records keep their order)
            first = self.count_tuning(key, kernel_meta.name, args)
            key = (TUNING, key)
        else:
            first = self.count(key, kernel_meta.name, grid, args)
        if self.timer is not None:
            self.timer.enter(self, key, data)
        # A variant's first launch is written at once (a program that dies keeps it), later counts
        # every FLUSH_S seconds.
        if first or time.monotonic() - self._last_flush > FLUSH_S:
            self.flush()

    def count(self, key: str, kernel, grid, args: dict) -> bool:
        """Count one launch of the variant `key` with `grid` and `args` (parameter name -> value);
        whether it was the variant's first. Also called for launches no launch hook sees (the
        interpreter's: kinspect.hooks.interpret)."""
        tally, first = self._tally(key, kernel, args)
        tally.calls += 1
        tally.dirty = True
        grid = _grid3(grid)
        tally.grids[grid] = tally.grids.get(grid, 0) + 1
        sig = (grid, tuple(map(_arg_key, args.values())))
        n = tally.signatures.get(sig)
        if n is not None:
            tally.signatures[sig] = n + 1
        elif len(tally.signatures) < SIGNATURES:
            tally.signatures[sig] = 1
        else:
            tally.other += 1
        return first

    def count_tuning(self, key: str, kernel, args: dict) -> bool:
        """Count one launch an autotuner made while benchmarking the variant `key`; whether it was the
        variant's first."""
        tally, first = self._tally(key, kernel, args)
        tally.tuning += 1
        tally.dirty = True
        return first

    def _tally(self, key: str, kernel, args: dict) -> tuple[Tally, bool]:
        """The variant's tally, and whether it was made now (its first launch in this process)."""
        tally = self.tallies.get(key)
        if tally is not None:
            return tally, False
        tally = self.tallies[key] = Tally(kernel=str(kernel), names=tuple(args))
        return tally, True

    def add_time(self, key, ms: float) -> None:
        """One launch's device time (called by the timer when it knows it); `key` is the variant's
        hash, or (TUNING, hash) for an autotuner's benchmark launch."""
        if type(key) is tuple:
            tally = self.tallies.get(key[1])
            if tally is not None:
                tally.tuning_ms += ms
                tally.dirty = True
            return
        tally = self.tallies.get(key) if key is not None else None
        if tally is None:
            return
        tally.timed += 1
        tally.total_ms += ms
        tally.dirty = True
        if len(tally.samples) < SAMPLES:       # reservoir: a uniform sample of every timed launch
            tally.samples.append(ms)
        else:
            j = self._rng.randrange(tally.timed)
            if j < SAMPLES:
                tally.samples[j] = ms

    # -- writing --------------------------------------------------------------------------------

    def launches(self, tally: Tally, pid: int, rk: int | None, host: str) -> Launches:
        sigs = sorted(tally.signatures.items(), key=lambda kv: -kv[1])
        grids = sorted(tally.grids.items(), key=lambda kv: -kv[1])
        return Launches(
            calls=tally.calls,
            grids=tuple((tuple(int(x) for x in g), n) for g, n in grids[:GRIDS]),
            signatures=tuple(LaunchSignature(grid=tuple(int(x) for x in grid),
                                             args=tuple(_arg_spec(n, k) for n, k in zip(tally.names, keys)),
                                             calls=n, pid=pid, rank=rk) for (grid, keys), n in sigs),
            other_calls=tally.other,
            processes=(ProcessLaunches(pid=pid, rank=rk, host=host, calls=tally.calls),),
            gpu=GpuTime(tally.timed, tally.total_ms, tuple(tally.samples)) if tally.timed else None,
            tuning_calls=tally.tuning, tuning_ms=tally.tuning_ms)

    def flush(self, final: bool = False) -> list[Path]:
        """Write each changed variant's launches of this process beside it; returns the files written.
        With `final`, first wait for the device so every timed launch is counted."""
        from kinspect.store import write_launches

        with self._lock:
            self._last_flush = time.monotonic()
            if self.timer is not None:
                try:
                    self.timer.resolve(self, final)
                except Exception:
                    pass
            pid, rk, host = os.getpid(), rank(), socket.gethostname()
            written = []
            for key, tally in list(self.tallies.items()):
                if not tally.dirty:
                    continue
                folder = self.folders.get(key) or self.find(tally.kernel, key)
                if folder is None:
                    continue
                try:
                    write_launches(folder, self.launches(tally, pid, rk, host), host=host, pid=pid)
                    tally.dirty = False
                    written.append(folder)
                except OSError:
                    pass    # the store went away or is read-only: the program goes on
            for then in self.after_flush:
                then(self.folders)
            return written

    def find(self, kernel: str, key: str) -> Path | None:
        """The store folder of a variant this process did not see compile (another process, such as
        one of torch.compile's compile workers, recorded it)."""
        if self.store is None:
            return None
        from kinspect.store import find_variant_folder

        folder = find_variant_folder(self.store.root, kernel, key)
        if folder is not None:
            self.folders[key] = folder
        return folder

    def forget(self) -> None:
        """Drop what was gathered (a forked child starts counting afresh: its parent's counts and
        device events are the parent's)."""
        self.tallies.clear()
        self.unattributed.clear()
        if self.timer is not None:
            self.timer.forget()

    def summary(self) -> dict:
        """Launch counts and what recording and timing them cost, for the end of a capture; launches
        of variants that are in no store (recording them failed) by kernel name."""
        unstored = dict(self.unattributed)
        for key, t in self.tallies.items():
            if key not in self.folders:
                unstored[t.kernel] = unstored.get(t.kernel, 0) + t.calls
        calls = sum(t.calls for t in self.tallies.values()) + sum(self.unattributed.values())
        return {"launches": calls, "tuning": sum(t.tuning for t in self.tallies.values()),
                "hook_ms": 1e3 * self.hook_s,
                "timing": None if self.timer is None else {"method": self.timer.method,
                                                            "ms": 1e3 * self.timer.cost_s,
                                                            "failed": getattr(self.timer, "failed", ""),
                                                            "other_kernels": other_kernels(self.timer)},
                "unattributed": unstored}


class EventTimer:
    """CUDA events recorded on the launch's stream just before and after it. Cheap per launch, but
    when the GPU is idle (a launch-bound program) the start event runs before the kernel arrives, so
    a launch's time includes the launch latency: see ProfilerTimer."""

    method = "CUDA events around each launch"

    def __init__(self):
        self._stack = threading.local()
        self._pending: list = []                  # (hash, start event, end event)
        self._free: list = []
        self._streams: dict = {}
        self.cost_s = 0.0

    def enter(self, rec: LaunchRecorder, key, data) -> None:
        t0 = time.perf_counter()
        stream = self._stream(data.get("stream"))
        start = self._event()
        start.record(stream)
        stack = getattr(self._stack, "items", None)
        if stack is None:
            stack = self._stack.items = []
        stack.append((key, start, stream))
        self.cost_s += time.perf_counter() - t0

    def exit(self, rec: LaunchRecorder) -> None:
        t0 = time.perf_counter()
        stack = getattr(self._stack, "items", None)
        if stack:
            key, start, stream = stack.pop()
            end = self._event()
            end.record(stream)
            self._pending.append((key, start, end))
            if len(self._pending) >= RESOLVE_EVERY:
                self.resolve(rec, final=False)
        self.cost_s += time.perf_counter() - t0

    def _stream(self, handle):
        import torch

        s = self._streams.get(handle)
        if s is None:
            current = torch.cuda.current_stream()
            s = current if handle in (None, current.cuda_stream) else torch.cuda.ExternalStream(handle)
            self._streams[handle] = s
        return s

    def _event(self):
        import torch

        return self._free.pop() if self._free else torch.cuda.Event(enable_timing=True)

    def resolve(self, rec: LaunchRecorder, final: bool) -> None:
        """Hand finished launches' times to `rec` (every launch, after a sync, when `final`)."""
        if not self._pending:
            return
        if final:
            import torch

            torch.cuda.synchronize()
        left = []
        for key, start, end in self._pending:
            if not final and not end.query():
                left.append((key, start, end))
                continue
            rec.add_time(key, start.elapsed_time(end))
            self._free += (start, end)
        self._pending = left

    def forget(self) -> None:
        self._stack = threading.local()
        self._pending, self._free, self._streams = [], [], {}


class ProfilerTimer:
    """Kernel durations from the torch profiler's CUDA activity records (CUPTI): the time each kernel
    ran, launch latency excluded. Started at the first captured launch; read (and restarted) at each
    flush. A record is matched to its variant by kernel name and, where one name has several variants
    in the process, by launch order (exact on one stream)."""

    method = "torch profiler (CUPTI kernel records)"

    def __init__(self):
        self._profiler = None
        self._order: dict[str, list] = {}   # kernel name -> hashes in launch order since the last read
        self.others: dict[str, list] = {}   # GPU work no hook saw (cuBLAS, flash attention, copies): [calls, ns]
        self.cost_s = 0.0
        self.failed = ""

    def enter(self, rec: LaunchRecorder, key, data) -> None:
        if self._profiler is None and not self.failed:
            self._start()
        self._order.setdefault(str(data.get("name", "")), []).append(key)

    def exit(self, rec: LaunchRecorder) -> None:
        pass

    def _start(self) -> None:
        t0 = time.perf_counter()
        try:
            from torch.profiler import ProfilerActivity, profile

            self._profiler = profile(activities=[ProfilerActivity.CUDA])
            self._profiler.start()
        except Exception as e:   # another profiler is running (the program's own): time nothing
            self._profiler = None
            self.failed = f"{type(e).__name__}: {e}"
        self.cost_s += time.perf_counter() - t0

    def resolve(self, rec: LaunchRecorder, final: bool) -> None:
        if self._profiler is None:
            return
        t0 = time.perf_counter()
        try:
            self._profiler.stop()
            kernels = {}
            for e in self._profiler.profiler.kineto_results.events():
                if not str(e.device_type()).endswith("CUDA"):
                    continue
                if e.name() in self._order:
                    kernels.setdefault(e.name(), []).append((e.start_ns(), e.duration_ns()))
                else:
                    other = self.others.setdefault(e.name(), [0, 0])
                    other[0] += 1
                    other[1] += e.duration_ns()
            order, self._order = self._order, {}
            for key, ms in attribute(order, kernels):
                rec.add_time(key, ms)
        finally:
            self._profiler = None
            if not final:
                self._start()
            self.cost_s += time.perf_counter() - t0

    def forget(self) -> None:
        self._profiler, self._order, self.others = None, {}, {}


OTHER_KERNELS = 40      # GPU work no hook saw, kept by name: the largest


def other_kernels(timer) -> dict:
    """{name: {"calls", "ms"}} of the largest GPU work the timer saw that no launch hook did."""
    others = getattr(timer, "others", None) or {}
    top = sorted(others.items(), key=lambda kv: -kv[1][1])[:OTHER_KERNELS]
    return {name: {"calls": n, "ms": ns / 1e6} for name, (n, ns) in top}


def attribute(order: dict[str, list], kernels: dict[str, list[tuple[int, int]]]) -> list[tuple[object, float]]:
    """(variant key, ms) for each profiled kernel: `order` holds, per kernel name, the variant keys in
    launch order; `kernels` the profiler's (start ns, duration ns) per name. A name launched as one
    variant takes all its records; several variants of one name are matched by order (the n-th
    record of the name, by start time, is its n-th launch), and records past the launches count for
    none (launches the hooks did not see, such as CUDA-graph replays)."""
    out = []
    for name, found in kernels.items():
        keys = order.get(name) or []
        if not keys:
            continue
        single = keys[0] if len(set(keys)) == 1 else None
        for i, (_, ns) in enumerate(sorted(found)):
            key = single if single is not None else (keys[i] if i < len(keys) else None)
            if key is not None:
                out.append((key, ns / 1e6))
    return out


TIMERS = {"profiler": ProfilerTimer, "events": EventTimer}
