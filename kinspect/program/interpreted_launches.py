"""Capture under Triton's interpreter: `kinspect capture --interpret -t cuda:90 -- python script.py`.

With TRITON_INTERPRET=1 every @triton.jit function is the interpreter's InterpretedFunction: a
launch runs the kernel's Python on the CPU, nothing is compiled, and no compilation listener or
launch hook is ever called. So this wraps `InterpretedFunction.run` (the launch, in Triton 3.6 and
3.9 alike) and, per launch, before the interpreter runs it:

- specializes the arguments as the JIT would for the target: a JITFunction made from the same
  Python function (never launched) gives its binder under kinspect's compile-only driver, and the
  binder's specialization (types, 16-byte alignment of pointers, divisibility of ints) keys the
  variant, exactly as the JIT's kernel cache is keyed;
- counts the launch (kinspect.hooks.launch_counts.LaunchRecorder: grids, argument signatures);
- at a new variant, records what compiling it needs: the launch's arguments as ArgSpecs, the
  expected specialization and the kernel's source with its namespace (kinspect.replay.source).

The interpreted process does not compile: its @triton.jit helpers, and Triton's own library
functions, are InterpretedFunctions too, and the interpreter leaves triton.language patched after
a kernel calls a helper, so the code generator cannot run there. It writes the records to
`<store>/.kinspect-interpret/<host>-<pid>.json`; once the program has ended, `kinspect capture`
compiles each variant in worker processes with no interpreter (kinspect.compile.replayed), from the
same source and arguments rebuilt with the same shapes, strides and alignment, and checks that the
JIT specialized them as it did here. The interpreter still runs every launch, so the program's
results are its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from kinspect.core.patching import Patches
from kinspect.hooks.launch_counts import FLUSH_S, LaunchRecorder, _arg_key, _arg_spec, rank
from kinspect.hooks.tuning import in_trial
from kinspect.core.model import grid3


class _Kernel:
    """What the recorder keeps per interpreted kernel: a JITFunction of the same function (for its
    binder only), the backend, the binder and the kernel's source."""

    def __init__(self, fn, target):
        from triton.runtime.jit import JITFunction

        from kinspect.compile.driver import compile_only
        from kinspect.core.errors import KinspectError
        from kinspect.replay.source import of_function

        self.name = fn.__name__
        self.twin = JITFunction(fn.fn, **getattr(fn, "kwargs", {}))
        with compile_only(target):
            _, _, _, self.backend, self.binder = self.twin.create_binder()
        try:
            self.source, self.source_error = of_function(fn), ""
        except KinspectError as e:
            self.source, self.source_error = None, str(e)


class InterpretRecorder:
    """Installed in each interpreted process of a capture; `write` leaves its records for the
    capture command (at each new variant, every FLUSH_S while launching, and at exit)."""

    def __init__(self, root: str | Path, target: str):
        from kinspect.compile.targets import resolve

        self.root = Path(root)
        self.target = resolve(target).target
        self.launches = LaunchRecorder()
        self.kernels: dict = {}
        self.specs: dict[str, dict] = {}          # variant key -> {"spec": ReplaySpec json, "trial": bool}
        self.errors: list[str] = []
        self.hook_s = 0.0
        self._saved = None
        self._last_write = time.monotonic()
        self._lock = threading.Lock()

    def install(self) -> None:
        from triton.runtime.interpreter import InterpretedFunction

        original = InterpretedFunction.run
        recorder = self

        def run(fn, *args, grid, warmup, **kwargs):
            if warmup:
                return original(fn, *args, grid=grid, warmup=warmup, **kwargs)
            trial_only = in_trial()
            recorder.launched(fn, args, kwargs, grid, trial_only)
            if trial_only:
                return None
            return original(fn, *args, grid=grid, warmup=warmup, **kwargs)

        self._saved = Patches()
        self._saved.attr(InterpretedFunction, "run", run)
        self._answer_for_device()

    def _answer_for_device(self) -> None:
        """With no device driver active (no GPU here), make the interpreted program's active driver
        answer as the target's device would (kinspect.compile.driver.InterpretedDriver), so code
        written for a GPU, as Triton's tutorials are, runs as it is:
        `DEVICE = triton.runtime.driver.active.get_active_torch_device()` gives the CPU."""
        from triton.runtime import driver

        try:
            driver.active.get_current_target()
            return                     # a GPU (or a CPU backend) answers for itself
        except RuntimeError:           # Triton's "0 active drivers ([]). There should only be one."
            pass
        from kinspect.compile.driver import InterpretedDriver, gpu_target

        driver.set_active(InterpretedDriver(gpu_target(self.target)))

    def restore(self) -> None:
        if self._saved is not None:
            self._saved.close()
            self._saved = None

    def launched(self, fn, args, kwargs, grid, trial_only: bool) -> None:
        """Record one launch; never raises (the program goes on whatever kinspect fails at)."""
        import warnings

        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                # Triton 3.9 warns, once, that TRITON_DEFAULT_FP_FUSION is unset when options are read:
                # here kinspect's specialization reads them, not the program (the interpreter compiles
                # nothing), and the fusion setting is recorded per variant.
                warnings.filterwarnings("ignore", message="TRITON_DEFAULT_FP_FUSION is unset")
                self._launched(fn, args, kwargs, grid, trial_only)
        except Exception as e:
            msg = f"kinspect: could not record a launch of '{getattr(fn, '__name__', fn)}': {type(e).__name__}: {e}"
            if msg not in self.errors:
                self.errors.append(msg)
                print(msg, file=sys.stderr)
        self.hook_s += time.perf_counter() - t0

    def _launched(self, fn, args, kwargs, grid, trial_only: bool) -> None:
        k = self.kernels.get(fn)
        if k is None:
            k = self.kernels[fn] = _Kernel(fn, self.target)
        bound, specialization, options = k.binder(*args, **kwargs)
        key = hashlib.sha1(f"{k.name}:{id(fn)}:{specialization!r}:{sorted(options.items())!r}".encode()).hexdigest()
        if callable(grid):
            grid = grid(bound)
        grid = grid3(grid)
        new = key not in self.specs
        if new:
            self.specs[key] = {"spec": self._spec(k, bound, specialization, options, kwargs, grid), "trial": trial_only}
        elif not trial_only:
            self.specs[key]["trial"] = False
        if not trial_only:
            self.launches.count(key, k.name, grid, bound, fn)
        if new or time.monotonic() - self._last_write > FLUSH_S:
            self.write()

    def _spec(self, k: _Kernel, bound: dict, specialization, options: dict, kwargs: dict, grid) -> dict:
        """The ReplaySpec (as JSON) of a new variant: this launch's arguments, the specialization
        the JIT would give them for the target, the launch options and the kernel's source."""
        from kinspect.hooks.record import jsonable, specialization as by_name
        from kinspect.core.model import SourceRef
        from kinspect import backends
        from kinspect.replay.spec import ReplaySpec

        debug = bool(kwargs.get("debug", k.twin.debug))
        packed = {**kwargs, "debug": debug}
        _, signature, constexprs, attrs = k.twin._pack_args(k.backend, packed, bound, specialization, options)
        sig, _, attributes = by_name(SimpleNamespace(fn=k.twin, signature=signature, constants=constexprs,
                                                     attrs=attrs))
        allowed = backends.for_target(self.target.backend).launch_options
        launch_options = {n: jsonable(v) for n, v in options.items() if n in allowed and v is not None}
        if debug:
            launch_options["debug"] = True
        src = k.source
        ref = SourceRef(file=src.file, line=src.line, text=src.text) if src is not None else None
        spec = ReplaySpec(kernel=k.name, target=str(self.target),
                          args=tuple(_arg_spec(n, _arg_key(v)) for n, v in bound.items()), grid=grid,
                          signature=sig, attributes=attributes, options=launch_options, source=src, ref=ref,
                          origin="capture --interpret")
        return spec.to_json()

    # -- writing ------------------------------------------------------------------------------------

    def write(self) -> Path | None:
        """This process's records, replacing its earlier file atomically."""
        import dataclasses

        from kinspect.files.store import INTERPRET_PENDING, write_atomic

        with self._lock:
            self._last_write = time.monotonic()
            if not self.specs:
                return None
            pid, host = os.getpid(), socket.gethostname()
            tallies = self.launches.tallies
            entries = []
            for key, entry in self.specs.items():
                tally = tallies.get(key)
                launches = self.launches.launches(tally, pid, rank(), host) if tally is not None else None
                entries.append({**entry, "launches": dataclasses.asdict(launches) if launches else None})
            folder = self.root / INTERPRET_PENDING
            try:
                folder.mkdir(parents=True, exist_ok=True)
                path = folder / f"{host}-{pid}.json"
                write_atomic(path, json.dumps({"host": host, "pid": pid, "target": str(self.target), "specs": entries,
                                               "errors": self.errors}, default=str))
                return path
            except OSError as e:
                print(f"kinspect capture: could not write interpreted launches ({e})", file=sys.stderr)
                return None

    def summary(self) -> dict:
        """In the form LaunchRecorder.summary has, for the capture command's closing lines."""
        calls = sum(t.calls for t in self.launches.tallies.values())
        return {"launches": calls, "hook_ms": 1e3 * self.hook_s, "timing": None, "unattributed": {}}

    def forget(self) -> None:
        """A forked child counts its own launches (its parent's file holds the parent's)."""
        self.launches.forget()
        self.specs.clear()
