"""Where a capture sees launches: per compiled kernel, leaving the launch path as the program has it.

Triton's global launch hooks are not used: a launch hook that is set (anything but an empty HookChain)
makes Inductor's static launcher refuse every kernel compiled after it (StaticallyLaunchedCudaKernel
raises, CachingAutotuner falls back to Triton's launcher, and under
TORCHINDUCTOR_STRICT_STATIC_CUDA_LAUNCHER the compile fails). Instead:

- Triton's launcher: `CompiledKernel.run` (the property every launch path reads: JITFunction.run,
  `kernel[grid]`, triton.autotune, Inductor's non-static launcher) hands out the kernel's launcher
  wrapped, once per kernel. The wrapper counts the launch under its signature key and calls the
  launcher with the same arguments, hooks of other tools (tritonparse, proton) and the kernel's
  launch_metadata included.
- Inductor's static launcher: `CachingAutotuner.run` is wrapped at class level until an autotuner has
  its one launcher; a static one then gets a per-instance `run` that counts and calls the original
  (later calls never reach the class-level wrapper). Non-static ones get the original method back,
  their launches being counted by the Triton wrapper.

A launch costs a frame, a tuple of the grid and int arguments compared with the kernel's last
launch's, and an increment of that key's count cell; a launch with another key looks its cell up, and
a new key records the arguments in full (kinspect.hooks.launch_counts). When the capture ends, Triton
kernels get their own launcher back (launchers Inductor already took pass launches through). Not seen: CUDA-graph replays, AOTInductor and
cpp_wrapper launches, and the launches Inductor's autotuner makes of static kernels while it
benchmarks configs.
"""

from __future__ import annotations

import os
import time
import weakref
from operator import itemgetter

from kinspect.core.patching import Patches
from kinspect.hooks import tuning
from kinspect.hooks.launch_counts import CHECK_EVERY, TUNING, LaunchRecorder, arg_names

TRITON = "Triton's launcher (each CompiledKernel's launcher wrapped)"
STATIC = "Inductor's static launcher (each CachingAutotuner's run wrapped)"
STATIC_ENV = "TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER"
_MASK = CHECK_EVERY - 1
_SCALAR = (int, bool)
_NO_GRID = (0, 0, 0)          # a launch's grid that could not be worked out
_COLD = (object(), None)      # no last key: equal to no launch's key


def _keyer(positions: tuple):
    """A function of the positional arguments giving the signature key (the values at `positions`)."""
    if not positions:
        return lambda a: ()
    return itemgetter(*positions)


def triton_wrapper(rec: LaunchRecorder, live: list, kernel, launcher, on_first=None):
    """`launcher` (a CompiledKernel's) counting its launches into `rec` while `live[0]`. Its
    arguments: grid x, y, z, stream, function, packed metadata, launch metadata, enter and exit
    hooks, then the kernel's arguments (the layout of Triton 3.4 to 3.9)."""
    state, busy, timer = tuning._state, tuning.BUSY, rec.timer
    key, name = kernel.hash, kernel.name
    cell = timer.cell(name) if timer is not None else [False]
    tally = counts = None
    first = False
    hot = _COLD         # (the last launch's signature key, its count cell): a launch like the last adds 1

    def keyof(a):       # the first launch's: sets up the tally and the real key function
        nonlocal tally, counts, keyof, first
        t0 = time.perf_counter()
        args = a[9:]
        tally, first = rec.tally(key, name, arg_names(kernel, len(args)), getattr(getattr(kernel, "src", None), "fn", None))
        counts = tally.counts
        keyof = _keyer((0, 1, 2) + tuple(9 + i for i, v in enumerate(args) if type(v) in _SCALAR))
        if first:
            rec.observed[TRITON] = rec.observed.get(TRITON, 0) + 1
            if on_first is not None:
                try:
                    on_first(kernel)
                except Exception:
                    pass
        rec.slow_s += time.perf_counter() - t0
        return keyof(a)

    def switch(k, a):
        """A launch whose key is not the last one's: its cell (a new key's is made)."""
        nonlocal first
        c = counts.get(k)
        if c is not None:
            c[0] += 1
            return k, c
        c = _new_key(rec, tally, k, a[0:3], a[9:], first)
        first = False
        return (k, c) if c is not None else _COLD

    def observed(*a):
        nonlocal hot
        if live[0]:
            if busy[0] and state.depth:
                _tuning(rec, key, name, a[9:], kernel)
                if timer is not None:
                    return _timed(rec, timer, (TUNING, key), name, a[3], launcher, a, {})
            else:
                k = keyof(a)
                h = hot
                if k == h[0]:
                    c = h[1]
                    n = c[0] + 1
                    c[0] = n
                    if not n & _MASK:
                        rec.now_and_then()
                else:
                    hot = switch(k, a)
            if cell[0]:
                return _timed(rec, timer, key, name, a[3], launcher, a, {})
        return launcher(*a)

    observed.kinspect_launcher = launcher
    return observed


def _timed(rec, timer, key, name, stream, call, args, kwargs):
    timer.enter(rec, key, name, stream)
    try:
        return call(*args, **kwargs)
    finally:
        timer.exit(rec)


def _new_key(rec: LaunchRecorder, tally, k, grid, args, first: bool) -> list | None:
    t0 = time.perf_counter()
    c = tally.add(k, grid, args)
    if first:           # a variant's first launch is written at once: a program that dies keeps it
        rec.flush()
    rec.slow_s += time.perf_counter() - t0
    return c


def _tuning(rec: LaunchRecorder, key, name, args, kernel) -> None:
    t0 = time.perf_counter()
    rec.count_tuning(key, name, arg_names(kernel, len(args)))
    if rec.timer is not None and not rec.timer.cell(name)[0]:
        rec.timer.order(rec, name)
    rec.slow_s += time.perf_counter() - t0


class LaunchObserver:
    """Installs the two wrappers (see the module's text); `restore` puts Triton's and Inductor's
    methods back. Wrappers already handed out (an Inductor launcher keeps its kernel's) pass launches
    through uncounted once restored."""

    def __init__(self, rec: LaunchRecorder, on_first=None, on_static=None):
        self.rec, self.on_first = rec, on_first
        self.on_static = on_static       # (hash, name, Triton cache folder, src) at a static kernel's first call
        self.live = [True]
        self.static_launcher: str | None = None      # Inductor's setting, read at its first kernel's run
        self._patches = Patches()
        self._scopes = None
        self._class_run = None                        # the class-level CachingAutotuner.run while installed
        self._instances = weakref.WeakSet()           # autotuners given a run of their own
        self._kernels = weakref.WeakSet()             # CompiledKernels whose launcher is wrapped

    def install(self) -> None:
        from triton.compiler.compiler import CompiledKernel

        prop = CompiledKernel.__dict__.get("run")
        if isinstance(prop, property):
            self._patches.attr(CompiledKernel, "run", property(self._run_property(prop.fget)))
        scopes = tuning.TuningScopes([("torch._inductor.runtime.triton_heuristics", "CachingAutotuner", "run")],
                                     wrap=self._autotuner_run)
        scopes.install()
        self._scopes = scopes

    def restore(self) -> None:
        self.live[0] = False
        if self._scopes is not None:
            self._scopes.restore()
            self._scopes = None
        patches, self._patches = self._patches, Patches()
        patches.close()
        for at in list(self._instances):    # their next run goes through the class's again
            for name in ("run", "_kinspect_counter"):
                at.__dict__.pop(name, None)
        self._instances = weakref.WeakSet()
        for kernel in list(self._kernels):  # Triton's launch path as it was (launchers Inductor took stay wrapped)
            r = kernel.__dict__.get("_run")
            if getattr(r, "kinspect_live", None) is self.live:
                kernel._run = r.kinspect_launcher
        self._kernels = weakref.WeakSet()

    def _run_property(self, getter):
        rec, live, on_first, wrapped = self.rec, self.live, self.on_first, self._kernels

        def run(kernel):
            r = kernel._run            # Triton's getter, inline (3.4 to 3.9): a frame less per launch
            if getattr(r, "kinspect_live", None) is live:
                return r
            if r is None:
                r = getter(kernel)
                if r is None:
                    return r
            inner = getattr(r, "kinspect_launcher", None)
            if inner is not None:
                r = inner             # wrapped by an earlier capture, which has ended
            w = kernel._run = triton_wrapper(rec, live, kernel, r, on_first)
            w.kinspect_live = live
            try:
                wrapped.add(kernel)
            except TypeError:         # a kernel object without weak references: left wrapped
                pass
            return w

        return run

    def _autotuner_run(self, original):
        """The class-level CachingAutotuner.run while capturing."""
        observer, live = self, self.live

        def run(at, *args, stream, **kwargs):
            if not live[0]:
                return original(at, *args, stream=stream, **kwargs)
            tuning_first = len(at.launchers) != 1
            timer = observer.rec.timer
            if timer is not None:
                _quiet(timer.open, observer.rec)       # before the launch: its counter is made after it
                if tuning_first:
                    _quiet(timer.resolve, observer.rec, False)     # this call's benchmark launches apart
            result = original(at, *args, stream=stream, **kwargs)
            try:
                observer._after_run(at, original, args, stream, tuning_first)
            except Exception:   # never break the program for a count
                pass
            return result

        run.kinspect_tuning = original     # TuningScopes.restore puts `original` back
        self._class_run = run
        return run

    def _after_run(self, at, original, args, stream, tuning_first: bool) -> None:
        if self.static_launcher is None:
            self.static_launcher = static_launcher_state()
        if len(at.launchers) != 1:
            return
        launcher = at.launchers[0]
        static = bool(getattr(launcher, "_is_static", False))
        overridden = type(at).run is not self._class_run      # a subclass's run (DebugAutotuner's) runs first
        if not static:
            if not overridden and "run" not in at.__dict__:
                at.__dict__["run"] = original.__get__(at)     # the Triton wrapper counts these
                self._instances.add(at)
            return
        counter = self._static_counter(at, launcher, args)
        if tuning_first and self.rec.timer is not None:
            self.rec.timer.tuning_window(self.rec, counter.name, (TUNING, counter.key))
        counter.count(args, stream)
        if not overridden and "run" not in at.__dict__:
            at.__dict__["run"] = counter.run_of(original.__get__(at))
            self._instances.add(at)

    def _static_counter(self, at, launcher, args):
        c = at.__dict__.get("_kinspect_counter")
        if c is None or c.launcher is not launcher:
            c = at.__dict__["_kinspect_counter"] = _StaticCounter(self.rec, self.live, at, launcher, args)
            self._instances.add(at)
            if c.first and self.on_static is not None:
                try:
                    self.on_static(c.key, c.name, static_folder(launcher), _static_src(at, launcher))
                except Exception:
                    pass
        return c


def _quiet(fn, *args):
    try:
        fn(*args)
    except Exception:
        pass


class _StaticCounter:
    """Counts one Inductor kernel's statically launched calls (positional arguments: the kernel's
    non-constexpr arguments; the grid is worked out from them once per new signature key)."""

    def __init__(self, rec: LaunchRecorder, live: list, at, launcher, args):
        self.rec, self.live, self.at, self.launcher = rec, live, at, launcher
        self.key = static_hash(launcher)
        self.name = _static_name(at, launcher)
        names = [n for n, t in (at.triton_meta.get("signature") or {}).items() if t != "constexpr"]
        names = names[:len(args)] + [f"arg{i}" for i in range(len(names), len(args))]
        self.tally, first = rec.tally(self.key, self.name, names)
        if first:
            rec.observed[STATIC] = rec.observed.get(STATIC, 0) + 1
        self.keyof = _keyer(tuple(i for i, v in enumerate(args) if type(v) in _SCALAR))
        self.first = first

    def count(self, args, stream) -> None:
        """The slow path: the call that installed the counter, or one under a subclass's run."""
        if tuning._state.depth:
            return
        k = self.keyof(args)
        c = self.tally.counts.get(k)
        if c is not None:
            c[0] += 1
        else:
            self.new_key(k, args)

    def new_key(self, k, args) -> list | None:
        """A launch under a key not counted yet: records it; its count cell (None past the records'
        limit of keys)."""
        t0 = time.perf_counter()
        try:
            _, grid = self.at._interpret_args_grid(args, self.launcher.config)
            grid = tuple(int(x) for x in grid)
        except Exception:
            grid = _NO_GRID
        c = self.tally.add(k, grid, args)
        if self.first:
            self.first = False
            self.rec.flush()
        self.rec.slow_s += time.perf_counter() - t0
        return c

    def switch(self, k, args):
        """(key, cell) for a launch whose key is not the last one's."""
        c = self.tally.counts.get(k)
        if c is not None:
            c[0] += 1
            return k, c
        c = self.new_key(k, args)
        return (k, c) if c is not None else _COLD

    def run_of(self, bound):
        """The per-instance run: counts, then calls the autotuner's own `bound` run."""
        rec, live, state, busy, timer = self.rec, self.live, tuning._state, tuning.BUSY, self.rec.timer
        keyof, switch, key, name = self.keyof, self.switch, self.key, self.name
        cell = timer.cell(name) if timer is not None else [False]
        hot = _COLD

        def run(*args, stream, **kwargs):
            # the count as in triton_wrapper's, inline (a call per launch would double what it costs)
            nonlocal hot
            if live[0] and not (busy[0] and state.depth):
                k = keyof(args)
                h = hot
                if k == h[0]:
                    c = h[1]
                    n = c[0] + 1
                    c[0] = n
                    if not n & _MASK:
                        rec.now_and_then()
                else:
                    hot = switch(k, args)
                if cell[0]:
                    kwargs["stream"] = stream
                    return _timed(rec, timer, key, name, stream, bound, args, kwargs)
            return bound(*args, stream=stream, **kwargs)

        return run


def static_hash(launcher) -> str:
    """The Triton compile hash (hex) of an Inductor static launcher's kernel: its kernel object's,
    else decoded from the launcher's cache_hash (Triton's cache folder name of that hash)."""
    runner = getattr(launcher, "__globals__", {}).get("runner")
    h = getattr(getattr(runner, "__self__", None), "hash", None)
    if isinstance(h, str):
        return h
    path_key = str(getattr(launcher, "cache_hash", ""))
    import base64

    for decode in (base64.b32decode, base64.urlsafe_b64decode):
        try:
            raw = decode(path_key + "=" * (-len(path_key) % 8 if decode is base64.b32decode else -len(path_key) % 4))
            if len(raw) == 32:
                return raw.hex()
        except Exception:
            continue
    return path_key


def static_folder(launcher):
    """The Triton cache folder the static launcher loaded its kernel's cubin from."""
    from pathlib import Path

    runner = getattr(launcher, "__globals__", {}).get("runner")
    cubin = getattr(getattr(runner, "__self__", None), "cubin_path", None)
    if cubin:
        return Path(cubin).parent
    from triton import knobs

    return Path(knobs.cache.dir) / str(getattr(launcher, "cache_hash", ""))


def _static_src(at, launcher):
    """What the recorder reads of a kernel's source (kinspect.hooks.record.specialization): the
    autotuner's JITFunction, Inductor's signature and constants, the launcher's config, and the kernel
    module's file (what the record names when the JITFunction came back from a compile worker without
    its Python function)."""
    from types import SimpleNamespace

    meta = getattr(at, "triton_meta", None) or {}
    config = dict(getattr(getattr(launcher, "config", None), "kwargs", None) or {})
    fn = getattr(at, "fn", None)
    configs = meta.get("configs") or [{}]      # Inductor's specialization: {(i,): [["tt.divisibility", 16]]}
    attrs = configs[0] if isinstance(configs[0], dict) else {}    # (an AttrsDescriptor with Triton < 3.3)
    return SimpleNamespace(fn=fn, signature=meta.get("signature") or {}, attrs=attrs,
                           constants={**(meta.get("constants") or {}), **config},
                           name=getattr(fn, "__name__", "kernel"), file=getattr(at, "filename", None))


def _static_name(at, launcher) -> str:
    runner = getattr(launcher, "__globals__", {}).get("runner")
    name = getattr(getattr(runner, "__self__", None), "name", None)
    return str(name or getattr(getattr(at, "fn", None), "__name__", None) or "?")


def static_launcher_state() -> str:
    """Inductor's static launcher setting in this process, as the program has it."""
    try:
        from torch._inductor import config

        on = getattr(config, "use_static_cuda_launcher", None)
    except Exception:
        on = None
    env = os.environ.get(STATIC_ENV)
    where = f"{STATIC_ENV}={env}" if env is not None else f"{STATIC_ENV} unset"
    return f"{'on' if on else 'off' if on is not None else 'unknown'} (torch._inductor.config, {where})"


def per_launch_s(repeat: int = 3, n: int = 20000) -> float:
    """What triton_wrapper adds to a launch, measured here: n launches of a no-op launcher through it,
    minus n direct calls; the least of `repeat` tries."""
    from types import SimpleNamespace

    def noop(*a):
        return None

    kernel = SimpleNamespace(hash="0" * 64, name="calibration", src=None)
    rec = LaunchRecorder()
    wrapped = triton_wrapper(rec, [True], kernel, noop)
    args = (8, 1, 1, 0, 0, None, None, None, None, object(), object(), 4096, 512)
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            wrapped(*args)
        t1 = time.perf_counter()
        for _ in range(n):
            noop(*args)
        t2 = time.perf_counter()
        d = max(0.0, (t1 - t0) - (t2 - t1)) / n
        best = d if best is None else min(best, d)
    return best or 0.0
