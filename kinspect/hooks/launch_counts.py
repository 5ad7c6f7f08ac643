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

from kinspect.core.model import SCALAR_KINDS, ArgSpec, GpuTime, Launches, LaunchSignature, ProcessLaunches, grid3
from kinspect.files.launches import GRIDS, SAMPLES, SIGNATURES
from kinspect.hooks.callsite import call_site
from kinspect.hooks.timers import other_kernels

FLUSH_S = 2.0            # write launch files at most this often while launches happen
CHECK_EVERY = 4096       # launches of one signature key between two looks at the clock (a power of 2)
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
    own: tuple = ()                 # the kernel's own file and package: no call site is in them (hooks.callsite)
    first_at: float = field(default_factory=time.time)     # its first launch in this process
    launches_before: int = 0        # launches of every variant this process had made before its first

    @property
    def calls(self) -> int:
        return sum(c[0] for c in self.counts.values()) + self.other

    def add(self, key, grid, args) -> list | None:
        """A launch under a signature key not seen before (`args`: the argument values in order); the
        key's count cell, or None past SIGNATURES keys (the launch went to `other`)."""
        self.dirty = True
        if len(self.counts) < SIGNATURES:
            cell = self.counts[key] = [1]
            try:
                site = call_site(self.own)
            except Exception:       # a frame that cannot be read never costs the launch
                site = None
            self.first[key] = (grid3(grid), tuple(map(_arg_key, args)), site)
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


def _own(fn) -> tuple:
    from kinspect.hooks.callsite import own_roots

    try:
        return own_roots(fn)
    except Exception:
        return ()


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
            from kinspect.hooks.inductor_origins import InductorOrigins

            self.after_flush.append(InductorOrigins().attach)
        self._lock = threading.Lock()
        self._last_flush = time.monotonic()
        self._rng = random.Random(os.getpid())

    def count(self, key: str, kernel, grid, args: dict, fn=None) -> bool:
        """Count one launch of the variant `key` with `grid` and `args` (parameter name -> value), its
        signature key being every argument's; whether it was the variant's first. For launches no
        observer wraps (the interpreter's: kinspect.program.interpreted_launches)."""
        tally, first = self.tally(key, kernel, tuple(args), fn)
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

    def tally(self, key: str, kernel, names: tuple, fn=None) -> tuple[Tally, bool]:
        """The variant's tally, and whether it was made now (its first launch in this process); `fn`, the
        kernel's JITFunction where the caller has it, tells its own package from its callers'."""
        tally = self.tallies.get(key)
        if tally is not None:
            if fn is not None and not tally.own:     # made by an autotuner's benchmark launch, which has no fn
                tally.own = _own(fn)
            return tally, False
        own = ()
        if fn is not None:
            own = _own(fn)
        before = sum(t.calls for t in self.tallies.values())
        tally = self.tallies[key] = Tally(kernel=str(kernel), names=tuple(names), own=own, launches_before=before)
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
                                             calls=n, pid=pid, rank=rk, site=tally.first[key][2]) for key, n in sigs),
            other_calls=tally.other,
            processes=(ProcessLaunches(pid=pid, rank=rk, host=host, calls=calls,
                                       gpu_ms=tally.total_ms if tally.timed else None, timed=tally.timed,
                                       first_at=tally.first_at, launches_before=tally.launches_before),),
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
                                                      "tuning_other_kernels": other_kernels(timer, "tuning_others"),
                                                      "window": getattr(timer, "others_window", str)()},
                "unattributed": unstored, **extra}
