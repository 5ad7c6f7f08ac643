"""Device timers of a capture's launches: CUDA events around each launch (EventTimer), or CUPTI's
kernel activity records (KernelRecordsTimer, through ProgramsProfiler), and how records are matched to
the launches a LaunchRecorder (kinspect.hooks.launch_counts) counted. `rec` below is that recorder.
"""

from __future__ import annotations

import os
import random
import threading
import time

from kinspect.core.patching import Patches

RESOLVE_EVERY = 2048     # timed launches held before their events are read


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

    def new_variant(self, rec, name: str, key) -> None:
        pass

    def open(self, rec) -> None:
        pass

    def coverage(self) -> str:
        return "every launch the observers saw"

    def tuning_window(self, rec, name: str, key) -> None:
        pass      # the static launcher's benchmark launches were not seen, so not timed

    def due(self, rec) -> bool:
        return True   # finished events are read at each flush (it frees them)

    def enter(self, rec, key, name: str, stream) -> None:
        t0 = time.perf_counter()
        stream = self._stream(stream)
        start = self._event()
        start.record(stream)
        stack = getattr(self._stack, "items", None)
        if stack is None:
            stack = self._stack.items = []
        stack.append((key, start, stream))
        self.cost_s += time.perf_counter() - t0

    def exit(self, rec) -> None:
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

    def resolve(self, rec, final: bool) -> None:
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
        return records.start, records.stop, CUPTI, records.timestamp
    except Exception as e:
        start, stop = _kineto()
        return start, stop, f"{KINETO}; CUPTI alone could not be loaded ({type(e).__name__}: {e})", None


class ProgramsProfiler:
    """Makes way for the program's own torch.profiler while a KernelRecordsTimer's session is on (one
    kineto session per process): the program's prepare first reads and stops the timer's session, its
    disable then starts it again. The time between is not timed: the timer's `paused` counts those gaps."""

    def __init__(self, timer: "KernelRecordsTimer", rec):
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

        # a profiler the program wraps after this keeps its wrapper when the timer ends
        self._patches = Patches()
        self._patches.attr(ap, "_prepare_profiler", prepare, keep_newer=True)
        self._patches.attr(ap, "_disable_profiler", disable, keep_newer=True)

    def restore(self) -> None:
        self._patches.close()


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
        self.tuning_others: dict[str, list] = {}   # the same, run while an autotuner benchmarked (its L2 flushes)
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

    def open(self, rec) -> None:
        """Start timing, once, at the first observed launch (before it runs: a static launcher's
        first launch runs before its autotuner's counter exists)."""
        if self._on or self.failed or self.windows:
            return
        if self._session is None:
            try:
                start, stop, method, clock = _session()
                self._session, self.method = (start, stop), method
                self._guard = ProgramsProfiler(self, rec)
                if clock is not None:          # benchmark windows on the records' clock (kinspect.hooks.tuning)
                    from kinspect.hooks import tuning

                    tuning.CLOCK[0] = clock
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

    def new_variant(self, rec, name: str, key) -> None:
        self.open(rec)
        if name not in self._keys:
            self._keys[name] = key
        elif self._keys[name] != key and not self.cell(name)[0]:
            self.order(rec, name)

    def order(self, rec, name: str) -> None:
        """From now on launches of `name` are noted in order (its records so far are read first, while
        they are still one variant's)."""
        if self._keys.get(name) is not None and self._on:
            self.resolve(rec, final=False)
        self._keys[name] = None
        self.cell(name)[0] = True

    def tuning_window(self, rec, name: str, key) -> None:
        """Every record of `name` since the last read is an autotuner's benchmark launch (`key`):
        Inductor benchmarking a statically launched kernel's configs, launches no observer sees.
        The call's own launch goes with them: the variant's timed launches are one fewer than its
        calls."""
        if self._on:
            self._order[name] = [key]
            self.resolve(rec, final=False)

    def enter(self, rec, key, name: str, stream) -> None:
        if self.sample > 1:
            self._left -= 1
            if self._left <= 0:
                self._toggle(rec)
            if not self._on:
                return
        if self._keys.get(name, key) is None or type(key) is tuple:
            self._order.setdefault(name, []).append(key)

    def exit(self, rec) -> None:
        pass

    def _toggle(self, rec) -> None:
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

    def due(self, rec) -> bool:
        """Whether a flush while launches happen should read the records (READ_EVERY launches since
        the last read): reading stops and starts the session and costs the program time."""
        calls = sum(t.calls for t in rec.tallies.values())
        return calls - self._read_at >= self.READ_EVERY

    def resolve(self, rec, final: bool, restart: bool = True) -> None:
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
            from kinspect.hooks import tuning

            windows = tuning.WINDOWS if tuning.CLOCK[0] is not None else []
            for name, start, ns in records:
                if name in keys:
                    kernels.setdefault(name, []).append((start, ns))
                else:
                    into = self.tuning_others if windows and tuning.in_window(start, windows) else others
                    other = into.get(name)
                    if other is None:
                        other = into[name] = [0, 0]
                    other[0] += 1
                    other[1] += ns
            tuning.forget_closed()
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
        from kinspect.hooks import tuning

        tuning.CLOCK[0] = None
        del tuning.WINDOWS[:]

    def forget(self) -> None:
        self._on, self._order, self.others, self.windows = False, {}, {}, 0
        self.tuning_others = {}


OTHER_KERNELS = 40      # GPU work no hook saw, kept by name: the largest


def other_kernels(timer, attr: str = "others") -> dict:
    """{name: {"calls", "ms"}} of the largest GPU work the timer saw that no launch hook did (`attr`
    "tuning_others": what ran while an autotuner benchmarked)."""
    from kinspect.hooks.cupti import demangle

    others = getattr(timer, attr, None) or {}
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
