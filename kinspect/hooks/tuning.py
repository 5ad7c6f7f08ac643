"""Launches an autotuner makes while it benchmarks configs are not the program's own.

triton.autotune benchmarks every config on the first call for a key (`Autotuner._bench`), and
Inductor's CachingAutotuner does the same for the configs of its pointwise and reduction kernels
(`bench`, coordinate descent too), about a hundred launches per config. Counted as the program's
launches they rank kernels by how long they were tuned: on the H100, a torch.compile'd
TransformerEncoderLayer captured with cold caches showed its pointwise kernels at 233 calls each,
21 of them the program's, and in the first ten places by GPU time.

While a capture is on, those methods are wrapped so that launches made inside them are marked (a
thread-local depth, `active()`); the launch recorder counts and times them apart
(`Launches.tuning_calls`, `tuning_ms`). A module not imported yet when the capture starts (Inductor's
runtime is imported late) is wrapped as soon as it is imported.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import sys
import threading
import types

from kinspect.core.patching import Patches

# (module, class, method): where autotuners benchmark. Inductor's `benchmarking` module is the timer
# its select_algorithm (max-autotune templates) uses too; every class there that defines the method
# is wrapped (the depth makes a subclass's call to its parent's count once).
TARGETS = (
    ("triton.runtime.autotuner", "Autotuner", "_bench"),
    ("torch._inductor.runtime.triton_heuristics", "CachingAutotuner", "bench"),
    ("torch._inductor.runtime.benchmarking", "*", "benchmark_gpu"),
)

class _State(threading.local):
    depth = 0        # a class default: a thread that never set it reads 0 without an AttributeError raised
                     # and caught (which costs a launch observer microseconds)


_state = _State()
BUSY = [0]           # threads inside a benchmark now: launch observers read the thread-local only when not 0
_busy_lock = threading.Lock()

# The GPU work no launch hook sees (the L2 flushes Inductor's and Triton's benchmarkers write between
# trials: thousands of fill kernels in a cold run) is told apart by time: while a timer with a profiler
# clock is on (kinspect.hooks.timers.KernelRecordsTimer sets CLOCK to CUPTI's), each stretch in which
# some thread is inside a benchmark is kept in WINDOWS as [start, end] on that clock (end 0 while open).
# A benchmark synchronizes the device before it returns, so what it launched ran inside its window.
CLOCK: list = [None]
WINDOWS: list[list[int]] = []


def in_window(start_ns: int, windows: list[list[int]]) -> bool:
    """Whether a GPU record that started at `start_ns` (the profiler's clock) ran while an autotuner
    benchmarked: inside a window of `windows` (sorted by start; an open window reaches to now)."""
    import bisect

    i = bisect.bisect_right(windows, [start_ns, float("inf")]) - 1
    return i >= 0 and (windows[i][1] == 0 or start_ns <= windows[i][1])


def active() -> bool:
    """Whether the current thread is inside an autotuner's benchmark."""
    return _state.depth > 0


def _wrapped(method):
    def benchmarking(*args, **kwargs):
        with _busy_lock:
            BUSY[0] += 1
            if BUSY[0] == 1 and CLOCK[0] is not None:
                WINDOWS.append([_now(), 0])
        _state.depth += 1
        try:
            return method(*args, **kwargs)
        finally:
            _state.depth -= 1
            with _busy_lock:
                BUSY[0] -= 1
                if BUSY[0] == 0 and CLOCK[0] is not None and WINDOWS and WINDOWS[-1][1] == 0:
                    WINDOWS[-1][1] = _now()

    benchmarking.__name__ = getattr(method, "__name__", "benchmarking")
    benchmarking.__doc__ = getattr(method, "__doc__", None)
    benchmarking.kinspect_tuning = method
    return benchmarking


def forget_closed() -> None:
    """Drop the windows once every one has closed (their records have been read)."""
    with _busy_lock:
        if WINDOWS and WINDOWS[-1][1]:
            del WINDOWS[:]


def _now() -> int:
    try:
        return int(CLOCK[0]())
    except Exception:
        return 0


class TuningScopes:
    """Wraps the TARGETS while installed; `restore` puts back each method it replaced (where nothing
    replaced it since) and stops watching imports."""

    def __init__(self, targets=TARGETS, wrap=None):
        self.targets = tuple(targets)
        self.wrap = wrap or _wrapped          # method -> its replacement (carrying `kinspect_tuning`)
        self._patches = Patches()
        self._watcher: _AfterImport | None = None

    def install(self) -> None:
        waiting = {}
        for module, cls, method in self.targets:
            if module in sys.modules:
                self._patch(sys.modules[module], cls, method)
            else:
                waiting.setdefault(module, []).append((cls, method))
        if waiting:
            self._watcher = _AfterImport(waiting, self._patch)
            sys.meta_path.insert(0, self._watcher)

    def _patch(self, module, cls_name: str, method: str) -> None:
        classes = [getattr(module, cls_name, None)] if cls_name != "*" else \
            [c for c in vars(module).values() if isinstance(c, type) and c.__module__ == module.__name__]
        for cls in classes:
            original = vars(cls).get(method) if isinstance(cls, type) else None
            if not isinstance(original, types.FunctionType) or hasattr(original, "kinspect_tuning"):
                continue
            # a method replaced again after this (another tool's wrapper) keeps that wrapper at restore
            self._patches.attr(cls, method, self.wrap(original), keep_newer=True)

    def restore(self) -> None:
        if self._watcher is not None:
            if self._watcher in sys.meta_path:
                sys.meta_path.remove(self._watcher)
            self._watcher = None
        patches, self._patches = self._patches, Patches()
        patches.close()


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls `patch(module, cls, method)` for each waiting target right after its module has run.

    A target is given up only once its module has run: a lookup alone (`importlib.util.find_spec`,
    which torch does before it imports, as kinspect's sitecustomize found for triton) must not use
    it up."""

    def __init__(self, waiting: dict[str, list[tuple[str, str]]], patch):
        self.waiting, self.patch = waiting, patch

    def find_spec(self, name, path=None, target=None):
        if name not in self.waiting:
            return None
        spec = self._next_spec(name, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module, waiting, patch = spec.loader.exec_module, self.waiting, self.patch

        def exec_then_patch(module):
            exec_module(module)
            for cls, method in waiting.pop(name, ()):
                try:
                    patch(module, cls, method)
                except Exception:   # never break the program's import for a count
                    pass

        spec.loader.exec_module = exec_then_patch
        return spec

    def _next_spec(self, name, path, target):
        """The spec the finders after this one give: another watcher of the same module (capture
        installs two, one for the autotuners' benchmarks, one for Inductor's launches) wraps it too.
        Asking PathFinder directly would hide the module from every watcher but the first."""
        later = sys.meta_path[sys.meta_path.index(self) + 1:] if self in sys.meta_path else []
        for finder in later:
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                return spec
        return importlib.machinery.PathFinder.find_spec(name, path)


# -- an autotuner's trials under TRITON_INTERPRET (kinspect.program.interpreted_launches) -----------------

_TRIAL = threading.local()


@contextlib.contextmanager
def trial():
    """Launches inside the block are an autotuner's trials: recorded and compiled, not run."""
    _TRIAL.on = True
    try:
        yield
    finally:
        _TRIAL.on = False


def in_trial() -> bool:
    return getattr(_TRIAL, "on", False)
