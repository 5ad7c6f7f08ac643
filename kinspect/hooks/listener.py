"""The compilation listener kinspect installs: every variant Triton compiles (or finds in its cache)
is recorded into a kinspect store, chaining the listener that was there before.

Inside Triton's compile it only links or copies the stage files and writes the record: derived stages
(SASS from the cubin, CPU assembly) are made afterwards (hooks.record.finish), by the `kinspect capture`
command once the program ends, or at first read (kinspect.analysis.derived).
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from kinspect.core.model import Variant
from kinspect.files.store import Store
from kinspect.hooks.launch_counts import LaunchRecorder
from kinspect.hooks.startup import StartupClock


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


def keep_first(compilation, recorder: Recorder) -> None:
    """Make `recorder` the listener for good, whatever the program installs after it: a tool that
    sets `knobs.compilation.listener` later (tritonparse's init, proton) becomes the recorder's
    `previous`, called after it, instead of replacing it; setting None clears only that. Triton
    has one listener slot, and the program under `kinspect capture` asked for every compile."""
    base = type(compilation)

    def get(self):
        return recorder

    def set_(self, value):
        recorder.previous = None if value is recorder else value

    compilation.__class__ = type(base.__name__, (base,), {"listener": property(get, set_),
                                                          "__module__": base.__module__})
