"""The only place kinspect hooks Triton at run time.

`capture(out_dir)` installs Triton's compilation listener (chaining whatever listener was already
installed), records every compiled or cache-hit variant into a kinspect store, and with it the
launches of those variants, observed per compiled kernel (hooks.observe: no launch hook is set, so
Inductor's static launcher stays as the program has it). On exit it restores what it replaced, also
on exceptions and sys.exit.

Inside Triton's compile the listener only links or copies the stage files and writes the record:
derived stages (SASS from the cubin, CPU assembly) are made afterwards (hooks.record.finish), by
the `kinspect capture` command once the program ends, or at first read (kinspect.analysis.derived).
"""

from __future__ import annotations

import contextlib
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.hooks.launches import LaunchRecorder
from kinspect.hooks.startup import StartupClock
from kinspect.core.model import Variant
from kinspect.files.store import DEFAULT_OUT, Store


@dataclass
class Recorder:
    """The listener kinspect installs. Callable with Triton's listener keyword arguments."""

    store: Store
    previous: object = None
    group: str | None = None         # store folder for every variant (default: the kernel's name)
    offline: bool = False
    strict: bool = False             # raise recording errors (offline dump) instead of warning
    origin: str = "capture"
    defer: bool = False              # record on flush(), so a timed call pays only for the listener call
    launches: LaunchRecorder | None = None   # records the launches of what this records
    backend: str | None = None       # the kinspect backend that compiles (default: the one Triton's target names)
    startup: StartupClock | None = None      # times Triton's one-time start-up
    variants: list[Variant] = field(default_factory=list)
    autotune: list = field(default_factory=list)     # triton.autotune's decisions (kinspect.core.model.AutotuneDecision)
    pending: list[tuple] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, *, src, metadata, metadata_group, times, cache_hit, **extra):
        startup_us = self.startup.take() if self.startup is not None else 0
        if self.defer:
            self.pending.append((src, dict(metadata), dict(metadata_group), times, cache_hit, startup_us))
        else:
            self._guarded(src, metadata, metadata_group, times, cache_hit, startup_us)
        if self.previous is not None:
            self.previous(src=src, metadata=metadata, metadata_group=metadata_group, times=times,
                          cache_hit=cache_hit, **extra)

    def adopt(self, kernel) -> None:
        """Record a kernel at its first launch when no capture saw it compile (it was compiled before
        the capture began, or loaded from a compile worker's result) and the store lacks it."""
        if self.launches is None or kernel.hash in self.launches.folders or \
                self.launches.find(kernel.name, kernel.hash) is not None:
            return
        self._guarded(kernel.src, kernel.metadata._asdict(), dict(kernel.metadata_group), None, True)

    def adopt_cached(self, key: str, name: str, folder, src=None) -> None:
        """Record, from its Triton cache folder, a variant launched with no compile in this capture:
        Inductor's static launcher loads the cubin of a warm cache from there (no listener call, no
        CompiledKernel). `src` stands in for the kernel's source (its JITFunction and signature)."""
        import json

        if self.launches is None or key in self.launches.folders or self.launches.find(name, key) is not None:
            return
        folder = Path(folder)
        try:
            group = json.loads((folder / f"__grp__{name}.json").read_text())["child_paths"]
            metadata = json.loads((folder / f"{name}.json").read_text())
        except (OSError, ValueError, KeyError, TypeError) as e:
            self.errors.append(f"kinspect: variant {name} ({key[:12]}) not recorded: its Triton cache folder "
                               f"{folder} could not be read ({type(e).__name__})")
            return
        if metadata.get("hash") != key:
            return
        self._guarded(src, metadata, {str(k): str(v) for k, v in group.items()}, None, True)

    def flush(self) -> None:
        """Record what a deferred recorder has collected (its files must still be in the cache)."""
        pending, self.pending = self.pending, []
        for call in pending:
            self._guarded(*call)

    def _guarded(self, src, metadata, metadata_group, times, cache_hit, startup_us=0):
        try:
            self._record(src, metadata, metadata_group, times, cache_hit, startup_us)
        except Exception as e:
            if self.strict:
                raise
            msg = f"kinspect: could not record a variant: {e}"
            self.errors.append(msg)
            print(msg, file=sys.stderr)

    def _record(self, src, metadata, metadata_group, times, cache_hit, startup_us=0):
        from kinspect.hooks.record import build, store_variant
        import triton

        variant, files = build(src=src, metadata=dict(metadata), metadata_group=dict(metadata_group),
                               times=times, cache_hit=cache_hit, offline=self.offline, origin=self.origin,
                               triton_version=triton.__version__, startup_us=startup_us, backend=self.backend)
        group = self.group or variant.kernel
        with self._lock:
            existing = self.store.exists(group, variant)
            if cache_hit and existing is not None:
                # The same variant was stored before, with its real compile times: keep that one.
                from kinspect.files.store import read_record

                variant = read_record(existing)
            else:
                # kinspect's own commands replace what a same-hash compile stored before (new JIT
                # times); a program's processes (ranks, workers) keep the first one and add launches
                variant = store_variant(self.store, group, variant, files, replace=self.strict)
            self.variants.append(variant)
            if self.launches is not None:
                self.launches.folders[variant.hash] = Path(variant.path)


def _knobs():
    try:
        from triton import knobs
    except ImportError:
        raise KinspectError("this Triton has no compilation listener (triton.knobs, Triton >= 3.4); "
                            "read its cache instead: kinspect ls <TRITON_CACHE_DIR>") from None
    return knobs


def timer(time, sample: int = 0) -> object | None:
    """The device timer a capture's `time` names: True or "profiler" (the default method: kernel
    activity records), "events"; `sample` = N times about one launch in N (profiler only)."""
    from kinspect.hooks.launches import TIMERS

    if not time:
        return None
    name = "profiler" if time is True else str(time)
    if name not in TIMERS:
        raise KinspectError(f"unknown timing method '{name}'; use one of: {', '.join(TIMERS)}")
    if sample and sample > 1:
        if name != "profiler":
            raise KinspectError("sampled timing is done with the kernel activity records: use --time profiler")
        return TIMERS[name](sample=sample)
    return TIMERS[name]()


@contextlib.contextmanager
def capture(out_dir: str | Path = DEFAULT_OUT, *, group: str | None = None, offline: bool = False,
            strict: bool = False, origin: str = "capture", defer: bool = False, launches: bool = True,
            time: bool | str = False, time_sample: int = 0, backend: str | None = None):
    """Record every Triton compile inside the block into a kinspect store at `out_dir`, and the
    launches of what it records (count, grids, argument signatures; with `time`, device time per
    launch: True or "profiler" for CUPTI's kernel records, "events" for CUDA events; `time_sample`
    = N times about one launch in N),
    and triton.autotune's decisions (`rec.autotune`; kinspect.hooks.autotune). Launches an autotuner
    makes while benchmarking configs are counted and timed apart (kinspect.hooks.tuning).

        with kinspect.capture("out", time=True) as rec:
            my_kernel[grid](x, y, n, BLOCK=128)
        print(rec.variants)

    With `defer`, variants are recorded when the block ends rather than inside Triton's compile.
    `backend` names the kinspect backend compiling (kinspect.backends), where Triton's target does not say it.
    Under TRITON_INTERPRET nothing compiles, so nothing is recorded here: kinspect.capture() then
    records the interpreted launches instead (kinspect.program.interpreted).
    """
    from kinspect.hooks.autotune import AutotuneRecorder
    from kinspect.hooks.launches import LaunchRecorder
    from kinspect.hooks.observe import LaunchObserver
    from kinspect.hooks.startup import StartupClock
    from kinspect.hooks.tuning import TuningScopes

    knobs = _knobs()
    store = Store(out_dir)
    launch_recorder = LaunchRecorder(store, timer=timer(time, time_sample)) if launches else None
    # Capturing inside someone's program (not strict) must not break it: an unwritable folder is
    # reported when a variant is recorded, and several processes (ranks) may capture into one store.
    # Each hook is undone by the ExitStack as soon as it is installed, in the reverse order: a failure
    # half-way through installing leaves nothing patched, and the records are finished after every
    # hook is back as it was.
    with store.lock(required=strict), contextlib.ExitStack() as undo:
        autotune = AutotuneRecorder(store.root) if launches else None
        if launch_recorder is not None:
            undo.callback(_finish_autotune, store, autotune)
            undo.callback(finish_launches, launch_recorder)
        clock = StartupClock()
        recorder = Recorder(store, previous=knobs.compilation.listener, group=group, offline=offline,
                            strict=strict, origin=origin, defer=defer, launches=launch_recorder, startup=clock,
                            backend=backend)
        _patch(undo, knobs.compilation, "listener", recorder)
        clock.install()
        undo.callback(clock.restore)
        if launch_recorder is not None:
            observer = LaunchObserver(launch_recorder, on_first=recorder.adopt, on_static=recorder.adopt_cached)
            # each undo registered before its install: an install that fails half-way (the observer
            # patches Triton's CompiledKernel, then watches Inductor) is undone as far as it went
            undo.callback(observer.restore)
            observer.install()
            undo.callback(autotune.restore)
            autotune.install()
            scopes = TuningScopes()
            undo.callback(scopes.restore)
            scopes.install()
            recorder.autotune = autotune.decisions
        yield recorder
        recorder.flush()


def _patch(undo: contextlib.ExitStack, owner, name: str, value) -> None:
    """Set `owner.name` to `value` until `undo` closes, when it gets back what it had."""
    undo.callback(setattr, owner, name, getattr(owner, name))
    setattr(owner, name, value)


def _finish_autotune(store: Store, autotune) -> None:
    """Merge this process's autotuning decisions into the store's autotune.json files."""
    import os

    from kinspect.files.store import merge_autotune

    if autotune.decisions:
        try:
            merge_autotune(store.root, only_pid=os.getpid())
        except OSError:
            pass


def finish_launches(launches: LaunchRecorder) -> None:
    """Write this process's launches and merge them into the records (other processes' files stay
    until they are done: `kinspect capture` merges them when its program ends)."""
    import os
    import socket

    from kinspect.files.store import launches_path, merge_launches

    for folder in launches.flush(final=True):
        try:
            merge_launches(folder, only=launches_path(folder, socket.gethostname(), os.getpid()))
        except (OSError, ValueError, KinspectError):
            pass
    launches.forget()
