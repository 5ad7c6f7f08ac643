"""The only place kinspect hooks Triton at run time.

`capture(out_dir)` installs Triton's compilation listener (chaining whatever listener was already
installed), records every compiled or cache-hit variant into a kinspect store, and restores the
previous listener on exit, also on exceptions and sys.exit.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from kinspect.errors import KinspectError
from kinspect.model import Variant
from kinspect.store import Store


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
    variants: list[Variant] = field(default_factory=list)
    pending: list[tuple] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, *, src, metadata, metadata_group, times, cache_hit, **extra):
        if self.defer:
            self.pending.append((src, dict(metadata), dict(metadata_group), times, cache_hit))
        else:
            self._guarded(src, metadata, metadata_group, times, cache_hit)
        if self.previous is not None:
            self.previous(src=src, metadata=metadata, metadata_group=metadata_group, times=times,
                          cache_hit=cache_hit, **extra)

    def flush(self) -> None:
        """Record what a deferred recorder has collected (its files must still be in the cache)."""
        pending, self.pending = self.pending, []
        for call in pending:
            self._guarded(*call)

    def _guarded(self, src, metadata, metadata_group, times, cache_hit):
        try:
            self._record(src, metadata, metadata_group, times, cache_hit)
        except Exception as e:
            if self.strict:
                raise
            msg = f"kinspect: could not record a variant: {e}"
            self.errors.append(msg)
            print(msg, file=sys.stderr)

    def _record(self, src, metadata, metadata_group, times, cache_hit):
        from kinspect.hooks.record import build, store_variant
        import triton

        variant, files = build(src=src, metadata=dict(metadata), metadata_group=dict(metadata_group),
                               times=times, cache_hit=cache_hit, offline=self.offline, origin=self.origin,
                               triton_version=triton.__version__)
        group = self.group or variant.kernel
        with self._lock:
            existing = self.store.exists(group, variant)
            if cache_hit and existing is not None:
                # The same variant was stored before, with its real compile times: keep that one.
                from kinspect.store import read_record

                variant = read_record(existing)
            else:
                variant = store_variant(self.store, group, variant, files)
            self.variants.append(variant)


def _knobs():
    try:
        from triton import knobs
    except ImportError:
        raise KinspectError("this Triton has no compilation listener (triton.knobs, Triton >= 3.4); "
                            "read its cache instead: kinspect ls <TRITON_CACHE_DIR>") from None
    return knobs


@contextlib.contextmanager
def capture(out_dir: str | Path = "kinspect-out", *, group: str | None = None, offline: bool = False,
            strict: bool = False, origin: str = "capture", defer: bool = False):
    """Record every Triton compile inside the block into a kinspect store at `out_dir`.

        with kinspect.capture("out") as rec:
            my_kernel[grid](x, y, BLOCK=128)
        print(rec.variants)

    With `defer`, variants are recorded when the block ends rather than inside Triton's compile,
    so a timed first call is not slowed by kinspect copying and disassembling its stages.
    """
    knobs = _knobs()
    store = Store(out_dir)
    # Capturing inside someone's program (not strict) must not break it: an unwritable folder is
    # reported when a variant is recorded, and several processes (ranks) may capture into one store.
    with store.lock(required=strict):
        previous = knobs.compilation.listener
        recorder = Recorder(store, previous=previous, group=group, offline=offline, strict=strict,
                            origin=origin, defer=defer)
        knobs.compilation.listener = recorder
        try:
            yield recorder
            recorder.flush()
        finally:
            knobs.compilation.listener = previous
