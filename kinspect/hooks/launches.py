"""Launch records: how often each captured variant ran, with which grids and arguments, and (with
a timer) how long it ran on the GPU.

The launches are observed per compiled kernel, not through Triton's global launch hooks (which would
make Inductor bypass its static launcher): kinspect.hooks.observe wraps each kernel's launcher. Per
launch the wrapper counts the launch under its signature key (the grid and the int and bool
arguments); only a new key records the arguments in full (tensors' dtype, shape, strides and device
as first seen with that key). The records are written by `flush`, per process, beside the variant
(kinspect.files.store.write_launches): a variant's first launch at once, later counts now and then while
launches happen (checked every CHECK_EVERY launches of a key) and when the capture ends.
"""

from __future__ import annotations

import os
import random
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from kinspect.files.launches import GRIDS, SAMPLES, SIGNATURES
from kinspect.core.model import SCALAR_KINDS, ArgSpec, GpuTime, Launches, LaunchSignature, ProcessLaunches, grid3

FLUSH_S = 2.0            # write launch files at most this often while launches happen
CHECK_EVERY = 4096       # launches of one signature key between two looks at the clock (a power of 2)
RESOLVE_EVERY = 2048     # timed launches held before their events are read
TUNING = "tuning"        # marks the timer's key of an autotuner's benchmark launch: (TUNING, hash)
KEY = "the grid and the int and bool arguments; tensors as first seen with that key"


def arg_names(kernel, n: int) -> list[str]:
    src = getattr(kernel, "src", None)
    names = getattr(getattr(src, "fn", None), "arg_names", None) or list(getattr(src, "signature", None) or ())
    return list(names)[:n] + [f"arg{i}" for i in range(len(names), n)]


@dataclass(eq=False)
class Tally:
    """One variant's launches in this process: calls per signature key, and each key's grid and
    argument keys as first seen."""

    kernel: str
    names: tuple[str, ...]
    counts: dict = field(default_factory=dict)       # signature key -> [calls] (a cell: an observer keeps
                                                     # its last key's and adds to it without hashing the key)
    first: dict = field(default_factory=dict)        # signature key -> (grid, arg keys)
    other: int = 0                                   # calls past SIGNATURES keys
    timed: int = 0
    total_ms: float = 0.0
    samples: list = field(default_factory=list)
    tuning: int = 0                 # launches inside an autotuner's benchmark, not in the above
    tuning_ms: float = 0.0
    dirty: bool = False             # something besides the counts changed since the last write
    written: int = 0                # calls when last written

    @property
    def calls(self) -> int:
        return sum(c[0] for c in self.counts.values()) + self.other

    def add(self, key, grid, args) -> list | None:
        """A launch under a signature key not seen before (`args`: the argument values in order); the
        key's count cell, or None past SIGNATURES keys (the launch went to `other`)."""
        self.dirty = True
        if len(self.counts) < SIGNATURES:
            cell = self.counts[key] = [1]
            self.first[key] = (grid3(grid), tuple(map(_arg_key, args)))
            return cell
        self.other += 1
        return None


_SCALARS = SCALAR_KINDS
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


def arg_spec(name: str, value) -> ArgSpec:
    """An argument as a launch record keeps it (kinspect.core.model.ArgSpec): what `kinspect dump`
    records of a user kernel's example, so the store replays it as data."""
    return _arg_spec(name, _arg_key(value))


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
    """What the launch observers (kinspect.hooks.observe) gathered; `folders` maps a compile hash to
    its store folder (the compilation recorder fills it as it records or finds variants). `timer`
    times launches on the device (KernelRecordsTimer, EventTimer) or is None."""

    def __init__(self, store=None, *, timer=None):
        self.store = store
        self.timer = timer
        self.tallies: dict[str, Tally] = {}
        self.folders: dict[str, Path] = {}
        self.unattributed: dict[str, int] = {}    # kernel name -> launches of variants in no store
        self.slow_s = 0.0                         # time spent on first launches, new keys and flushes
        self.observed: dict[str, int] = {}        # how launches were observed -> variants so observed
        self.after_flush: list = []               # called with `folders` after each flush
        if store is not None:                     # Inductor kernels' ATen ops and model lines, beside their variants
            from kinspect.hooks.provenance import InductorOrigins

            self.after_flush.append(InductorOrigins().attach)
        self._lock = threading.Lock()
        self._last_flush = time.monotonic()
        self._rng = random.Random(os.getpid())

    def count(self, key: str, kernel, grid, args: dict) -> bool:
        """Count one launch of the variant `key` with `grid` and `args` (parameter name -> value), its
        signature key being every argument's; whether it was the variant's first. For launches no
        observer wraps (the interpreter's: kinspect.program.interpret)."""
        tally, first = self.tally(key, kernel, tuple(args))
        values = tuple(args.values())
        sig = (grid3(grid), tuple(map(_arg_key, values)))
        cell = tally.counts.get(sig)
        if cell is None:
            tally.add(sig, grid, values)
        else:
            cell[0] += 1
        return first

    def count_tuning(self, key: str, kernel, args) -> bool:
        """Count one launch an autotuner made while benchmarking the variant `key` (`args`: the
        parameter names); whether it was the variant's first."""
        tally, first = self.tally(key, kernel, tuple(args))
        tally.tuning += 1
        tally.dirty = True
        return first

    def tally(self, key: str, kernel, names: tuple) -> tuple[Tally, bool]:
        """The variant's tally, and whether it was made now (its first launch in this process)."""
        tally = self.tallies.get(key)
        if tally is not None:
            return tally, False
        tally = self.tallies[key] = Tally(kernel=str(kernel), names=tuple(names))
        if self.timer is not None:
            try:
                self.timer.new_variant(self, str(kernel), key)
            except Exception:
                pass
        return tally, True

    def now_and_then(self) -> None:
        """Called every CHECK_EVERY launches of a key: write the counts when FLUSH_S have passed."""
        if time.monotonic() - self._last_flush > FLUSH_S:
            t0 = time.perf_counter()
            self.flush()
            self.slow_s += time.perf_counter() - t0

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
        sigs = sorted(((k, c[0]) for k, c in tally.counts.items()), key=lambda kv: -kv[1])
        grids: dict = {}
        for key, n in sigs:
            g = tally.first[key][0]
            grids[g] = grids.get(g, 0) + n
        calls = tally.calls
        return Launches(
            calls=calls,
            grids=tuple((tuple(int(x) for x in g), n) for g, n in sorted(grids.items(), key=lambda kv: -kv[1])[:GRIDS]),
            signatures=tuple(LaunchSignature(grid=tuple(int(x) for x in tally.first[key][0]),
                                             args=tuple(_arg_spec(n, k) for n, k in zip(tally.names, tally.first[key][1])),
                                             calls=n, pid=pid, rank=rk) for key, n in sigs),
            other_calls=tally.other,
            processes=(ProcessLaunches(pid=pid, rank=rk, host=host, calls=calls),),
            gpu=GpuTime(tally.timed, tally.total_ms, tuple(tally.samples)) if tally.timed else None,
            tuning_calls=tally.tuning, tuning_ms=tally.tuning_ms)

    def flush(self, final: bool = False) -> list[Path]:
        """Write each changed variant's launches of this process beside it; returns the files written.
        With `final`, first wait for the device so every timed launch is counted."""
        from kinspect.files.store import write_launches

        with self._lock:
            self._last_flush = time.monotonic()
            if self.timer is not None:
                try:
                    if final or self.timer.due(self):
                        self.timer.resolve(self, final)
                except Exception:
                    pass
            pid, rk, host = os.getpid(), rank(), socket.gethostname()
            written = []
            for key, tally in list(self.tallies.items()):
                calls = tally.calls
                if not tally.dirty and calls == tally.written:
                    continue
                folder = self.folders.get(key) or self.find(tally.kernel, key)
                if folder is None:
                    continue
                try:
                    write_launches(folder, self.launches(tally, pid, rk, host), host=host, pid=pid)
                    tally.dirty, tally.written = False, calls
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
        from kinspect.files.store import find_variant_folder

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

    def summary(self, per_launch_s: float = 0.0, **extra) -> dict:
        """Launch counts and what recording and timing them cost, for the end of a capture; launches
        of variants that are in no store (recording them failed) by kernel name. `per_launch_s`: what
        the observer's wrapper costs a launch (measured by the observer: the wrapper does not time
        itself, which would cost more than it does)."""
        unstored = dict(self.unattributed)
        for key, t in self.tallies.items():
            if key not in self.folders:
                unstored[t.kernel] = unstored.get(t.kernel, 0) + t.calls
        calls = sum(t.calls for t in self.tallies.values()) + sum(self.unattributed.values())
        tuning = sum(t.tuning for t in self.tallies.values())
        timer = self.timer
        return {"launches": calls, "tuning": tuning,
                "hook_ms": 1e3 * (self.slow_s + per_launch_s * (calls + tuning)),
                "per_launch_us": 1e6 * per_launch_s, "observed": dict(self.observed),
                "timing": None if timer is None else {"method": timer.method, "ms": 1e3 * timer.cost_s,
                                                      "failed": getattr(timer, "failed", ""),
                                                      "coverage": timer.coverage(),
                                                      "other_kernels": other_kernels(timer),
                                                      "window": getattr(timer, "others_window", str)()},
                "unattributed": unstored, **extra}


class EventTimer:
    """CUDA events recorded on the launch's stream just before and after it. Cheap per launch, but
    when the GPU is idle (a launch-bound program) the start event runs before the kernel arrives, so
    a launch's time includes the launch latency: see KernelRecordsTimer."""

    method = "CUDA events around each launch"
    _every = [True]

    def __init__(self):
        self._stack = threading.local()
        self._pending: list = []                  # (hash, start event, end event)
        self._free: list = []
        self._streams: dict = {}
        self.cost_s = 0.0

    def cell(self, name: str) -> list:
        """[whether the observer calls enter/exit around launches of kernels of this name]: always."""
        return self._every

    def new_variant(self, rec: LaunchRecorder, name: str, key) -> None:
        pass

    def open(self, rec: LaunchRecorder) -> None:
        pass

    def coverage(self) -> str:
        return "every launch the observers saw"

    def tuning_window(self, rec: LaunchRecorder, name: str, key) -> None:
        pass      # the static launcher's benchmark launches were not seen, so not timed

    def due(self, rec: LaunchRecorder) -> bool:
        return True   # finished events are read at each flush (it frees them)

    def enter(self, rec: LaunchRecorder, key, name: str, stream) -> None:
        t0 = time.perf_counter()
        stream = self._stream(stream)
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


def _kineto(activities=None):
    """(start, stop) of a kineto session collecting CUDA activity records only (no CPU op events, no
    stacks, no shapes), through the calls torch.profiler makes, without the part that tells the
    program a profiler is on (torch.autograd.profiler._is_profiler_enabled, which sends Inductor's
    launches through its profiler path). `stop` returns the session's kernels: [(name, start ns,
    duration ns)]."""
    import torch
    from torch.autograd import profiler as ap      # the names it imports: torch 2.11 to 2.13 at least

    args = (ap.ProfilerState.KINETO, False, False, False, False, False, ap._ExperimentalConfig())
    try:
        config = ap.ProfilerConfig(*args)
    except TypeError:                     # versions that also take a trace id
        config = ap.ProfilerConfig(*args, "")
    activities = activities or {ap.ProfilerActivity.CUDA}
    kept = {str(a).rsplit(".", 1)[-1] for a in activities}       # the device types of the records kept
    prepare, enable, disable = ap._prepare_profiler, ap._enable_profiler, ap._disable_profiler   # before any guard

    def start():
        prepare(config, activities)
        enable(config, activities)

    def stop():
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        return [(e.name(), e.start_ns(), e.duration_ns()) for e in disable().events()
                if str(e.device_type()).rsplit(".", 1)[-1] in kept]

    return start, stop


KINETO = "CUPTI kernel activity records through a kineto session (CUDA activities only)"
CUPTI = "CUPTI kernel activity records (no other CUPTI activity, no kineto session)"


def _session():
    """(start, stop, method): CUPTI's kernel records alone (kinspect.hooks.cupti), else, where the
    library cannot be loaded, a kineto session of CUDA activities, saying why."""
    try:
        from kinspect.hooks.cupti import KernelRecords

        records = KernelRecords()
        return records.start, records.stop, CUPTI
    except Exception as e:
        start, stop = _kineto()
        return start, stop, f"{KINETO}; CUPTI alone could not be loaded ({type(e).__name__}: {e})"


class ProgramsProfiler:
    """Makes way for the program's own torch.profiler while a KernelRecordsTimer's session is on (one
    kineto session per process): the program's prepare first reads and stops the timer's session, its
    disable then starts it again. The time between is not timed: the timer's `paused` counts those gaps."""

    def __init__(self, timer: "KernelRecordsTimer", rec: LaunchRecorder):
        from torch.autograd import profiler as ap

        self.ap, self.timer, self.rec = ap, timer, rec
        self.prepare, self.disable = ap._prepare_profiler, ap._disable_profiler
        self._resume = False
        guard = self

        def prepare(*args, **kwargs):
            if guard.timer._on:
                guard.timer.paused += 1
                guard.timer.resolve(guard.rec, final=False, restart=False)
                guard._resume = True
            return guard.prepare(*args, **kwargs)

        def disable(*args, **kwargs):
            try:
                return guard.disable(*args, **kwargs)
            finally:
                if guard._resume:
                    guard._resume = False
                    guard.timer._start()

        ap._prepare_profiler, ap._disable_profiler = prepare, disable
        self._installed = (prepare, disable)

    def restore(self) -> None:
        if (self.ap._prepare_profiler, self.ap._disable_profiler) == self._installed:
            self.ap._prepare_profiler, self.ap._disable_profiler = self.prepare, self.disable


class KernelRecordsTimer:
    """Kernel durations from CUPTI's kernel activity records (CUPTI alone: kinspect.hooks.cupti; a
    kineto session of CUDA activities where the library cannot be loaded directly): the time each
    kernel ran, launch latency excluded. Started at the first observed launch; read at the end, when
    a second variant of a kernel name appears or an autotuner benchmarks (the records so far belong to
    what was launched so far), while the program's own profiler runs, and every READ_EVERY observed
    launches. A record is matched to its variant by kernel name; where one name has several variants in
    the process (or an autotuner launched it), the observers note the launches of that name in order
    and the n-th record is the n-th launch.

    With `sample` = N > 1 only windows of launches are timed: WINDOW launches timed, then about
    (N - 1) × WINDOW launches (randomly jittered, so a periodic step does not alias) not timed; the
    first window opens at the first observed launch."""

    WINDOW = 2000
    READ_EVERY = 500_000     # observed launches between two reads while nothing else asks for one

    def __init__(self, sample: int = 0, session=None):
        self._session = session              # (start, stop): chosen at the first launch unless given
        self.method = CUPTI if session is None else KINETO
        self._on = False
        self._cells: dict[str, list] = {}    # kernel name -> [launches noted in order]
        self._keys: dict[str, object] = {}   # kernel name -> its one variant's key, or None when several
        self._order: dict[str, list] = {}    # kernel name -> keys in launch order since the last read
        self.others: dict[str, list] = {}    # GPU work no observer saw (cuBLAS, flash attention, copies): [calls, ns]
        self.cost_s = 0.0
        self.failed = ""
        self.sample = max(0, int(sample or 0))
        self.windows = 0
        self._left = 0                       # launches left in this window (on) or gap (off)
        self._rng = random.Random(os.getpid())
        self._guard: ProgramsProfiler | None = None
        self._read_at = 0                    # observed launches at the last read
        self._refused = ""                   # why the session would not start
        self.paused = 0                      # times the program's own profiler took the session

    def _sampled(self, method: str) -> str:
        return method + (f", sampled: windows of {self.WINDOW} launches, 1 launch in {self.sample}"
                         if self.sample > 1 else "")

    def cell(self, name: str) -> list:
        c = self._cells.get(name)
        if c is None:
            c = self._cells[name] = [self.sample > 1]
        return c

    def coverage(self) -> str:
        gaps = f"; not timed while the program's own profiler ran ({self.paused} time(s))" if self.paused else ""
        if self.sample > 1:
            return (f"{self.windows} window(s) of up to {self.WINDOW} launches, about 1 launch in {self.sample}; "
                    f"a variant's GPU time covers its timed launches only (calls vs timed){gaps}")
        return f"every launch from the first observed launch to the end (autotuners' benchmarks apart){gaps}"

    def others_window(self) -> str:
        """When the GPU work no observer saw (`others`) was read: the window of the program's Triton share."""
        gaps = f", not while the program's own profiler ran ({self.paused} time(s))" if self.paused else ""
        if self.sample > 1:
            return f"in the {self.windows} sampled window(s) of Triton launches{gaps}"
        return f"from the first observed Triton launch to the end{gaps}"

    def open(self, rec: LaunchRecorder) -> None:
        """Start timing, once, at the first observed launch (before it runs: a static launcher's
        first launch runs before its autotuner's counter exists)."""
        if self._on or self.failed or self.windows:
            return
        if self._session is None:
            try:
                start, stop, method = _session()
                self._session, self.method = (start, stop), method
                self._guard = ProgramsProfiler(self, rec)
            except Exception as e:
                self.failed = f"{type(e).__name__}: {e}"
                return
        self.method = self._sampled(self.method)
        self._toggle(rec)
        if not self._on and self.method.startswith(CUPTI):     # CUPTI refused: kineto's session
            start, stop = _kineto()
            self._session, self.failed = (start, stop), ""
            self.method = self._sampled(f"{KINETO}; CUPTI alone refused ({self._refused})")
            self._toggle(rec)

    def new_variant(self, rec: LaunchRecorder, name: str, key) -> None:
        self.open(rec)
        if name not in self._keys:
            self._keys[name] = key
        elif self._keys[name] != key and not self.cell(name)[0]:
            self.order(rec, name)

    def order(self, rec: LaunchRecorder, name: str) -> None:
        """From now on launches of `name` are noted in order (its records so far are read first, while
        they are still one variant's)."""
        if self._keys.get(name) is not None and self._on:
            self.resolve(rec, final=False)
        self._keys[name] = None
        self.cell(name)[0] = True

    def tuning_window(self, rec: LaunchRecorder, name: str, key) -> None:
        """Every record of `name` since the last read is an autotuner's benchmark launch (`key`):
        Inductor benchmarking a statically launched kernel's configs, launches no observer sees.
        The call's own launch goes with them: the variant's timed launches are one fewer than its
        calls."""
        if self._on:
            self._order[name] = [key]
            self.resolve(rec, final=False)

    def enter(self, rec: LaunchRecorder, key, name: str, stream) -> None:
        if self.sample > 1:
            self._left -= 1
            if self._left <= 0:
                self._toggle(rec)
            if not self._on:
                return
        if self._keys.get(name, key) is None or type(key) is tuple:
            self._order.setdefault(name, []).append(key)

    def exit(self, rec: LaunchRecorder) -> None:
        pass

    def _toggle(self, rec: LaunchRecorder) -> None:
        if self._on:
            self.resolve(rec, final=False, restart=False)
            self._left = int(self.WINDOW * (self.sample - 1) * (0.5 + self._rng.random()))
        else:
            self._start()
            self._left = self.WINDOW

    def _start(self) -> None:
        t0 = time.perf_counter()
        try:
            self._session[0]()
            self._on = True
            self.windows += 1
        except Exception as e:   # another profiler is running (the program's own): time nothing
            self._on = False
            self.failed = self._refused = f"{type(e).__name__}: {e}"
        self.cost_s += time.perf_counter() - t0

    def due(self, rec: LaunchRecorder) -> bool:
        """Whether a flush while launches happen should read the records (READ_EVERY launches since
        the last read): reading stops and starts the session and costs the program time."""
        calls = sum(t.calls for t in rec.tallies.values())
        return calls - self._read_at >= self.READ_EVERY

    def resolve(self, rec: LaunchRecorder, final: bool, restart: bool = True) -> None:
        if not self._on:
            if final:
                self._close()
            return
        t0 = time.perf_counter()
        try:
            self._on = False
            records = self._session[1]()
            self._read_at = sum(t.calls for t in rec.tallies.values())
            kernels: dict[str, list] = {}
            keys, others = self._keys, self.others
            for name, start, ns in records:
                if name in keys:
                    kernels.setdefault(name, []).append((start, ns))
                else:
                    other = others.get(name)
                    if other is None:
                        other = others[name] = [0, 0]
                    other[0] += 1
                    other[1] += ns
            order, self._order = self._order, {}
            for name, key in self._keys.items():
                if key is not None and name in kernels and name not in order:
                    order[name] = [key]
            for key, ms in attribute(order, kernels):
                rec.add_time(key, ms)
        finally:
            if restart and not final and (self.sample <= 1 or self._left > 0):
                self._start()
            elif final:
                self._close()
            self.cost_s += time.perf_counter() - t0

    def _close(self) -> None:
        if self._guard is not None:
            self._guard.restore()
            self._guard = None

    def forget(self) -> None:
        self._on, self._order, self.others, self.windows = False, {}, {}, 0


OTHER_KERNELS = 40      # GPU work no hook saw, kept by name: the largest


def other_kernels(timer) -> dict:
    """{name: {"calls", "ms"}} of the largest GPU work the timer saw that no launch hook did."""
    from kinspect.hooks.cupti import demangle

    others = getattr(timer, "others", None) or {}
    out: dict = {}
    for name, (n, ns) in sorted(others.items(), key=lambda kv: -kv[1][1])[:OTHER_KERNELS]:
        o = out.setdefault(demangle(name), {"calls": 0, "ms": 0.0})     # CUPTI's names are mangled
        o["calls"] += n
        o["ms"] += ns / 1e6
    return out


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


TIMERS = {"profiler": KernelRecordsTimer, "events": EventTimer}
