"""The one installer of every hook a capture puts into Triton, used three ways:

- for a block: `recording(out_dir)` (what `kinspect.capture()` runs) installs the session and takes it
  off when the block ends, also on exceptions and sys.exit;
- for a process: the sitecustomize every Python process of `kinspect capture -- CMD` loads
  (kinspect.program.boot) installs it once triton is imported and keeps it (`for_process`): the
  listener keeps its slot whatever the program installs after it, and the process's launch counts are
  written at exit and start afresh in a forked child;
- under TRITON_INTERPRET, where nothing compiles: the interpreter's launch recorder
  (kinspect.program.interpreted_launches, which needs the compile layer, so the caller makes it) is installed
  with the autotuner's recorder in its interpreted form, for a block or a process alike.

What is installed, in order (each undone by the session's Patches, newest first; each restore is
registered before its install, so a hook that fails half-way leaves nothing patched):
the compilation listener (hooks.listener.Recorder, chaining the listener already there), the start-up
clock (hooks.startup), the launch observer (hooks.observe: per compiled kernel, no launch hook set, so
Inductor's static launcher stays as the program has it), triton.autotune's recorder (hooks.autotune)
and the scopes that set autotuners' benchmark launches apart (hooks.tuning).
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.core.patching import Patches
from kinspect.files.store import CAPTURE_SUMMARIES, DEFAULT_OUT, Store
from kinspect.hooks.autotune import AutotuneRecorder
from kinspect.hooks.launch_counts import LaunchRecorder
from kinspect.hooks.listener import Recorder, keep_first
from kinspect.hooks.startup import StartupClock


@dataclass
class Session:
    """The hooks of one capture, installed; `close()` puts back everything they replaced."""

    store: Store
    recorder: Recorder                          # the listener (interpreted: only the holder of the variants)
    launches: LaunchRecorder | None = None
    observer: object | None = None              # hooks.observe.LaunchObserver
    autotune: AutotuneRecorder | None = None
    interpreted: object | None = None           # the interpreter's launch recorder (program.interpreted_launches)
    patches: Patches = field(default_factory=Patches)

    def close(self) -> None:
        self.patches.close()

    def finish(self) -> None:
        """After a block: this process's launches merged into the records, its autotuning decisions into
        the store's autotune.json files (other processes' stay for `kinspect capture` to merge)."""
        if self.launches is not None:
            finish_launches(self.launches)
        if self.autotune is not None and self.autotune.decisions:
            from kinspect.files.store import merge_autotune

            with contextlib.suppress(OSError):
                merge_autotune(self.store.root, only_pid=os.getpid())

    def keep(self) -> None:
        """For the rest of the process: its launch records and their summary are written at exit, and
        a forked child (torch.multiprocessing, dataloader workers) counts its own launches afresh."""
        import atexit

        atexit.register(self.at_exit)
        if hasattr(os, "register_at_fork"):
            counted = self.interpreted if self.interpreted is not None else self.launches
            if counted is not None:
                os.register_at_fork(after_in_child=counted.forget)
            if self.autotune is not None:
                os.register_at_fork(after_in_child=self.autotune.forget)

    def at_exit(self) -> None:
        """Write this process's launch counts and what recording them cost (the capture command reads
        it back into its summary, kinspect.program.run). Never raises: the program's exit is its own."""
        try:
            if self.interpreted is not None:
                self.interpreted.write()
                summary = self.interpreted.summary()
            elif self.launches is not None:
                from kinspect.hooks.observe import per_launch_s

                self.launches.flush(final=True)
                summary = self.launches.summary(per_launch_s() if self.launches.tallies else 0.0,
                                                static_launcher=self.observer.static_launcher or "")
            else:
                return
            if summary["launches"] or summary.get("tuning"):
                import json
                import socket

                from kinspect.files.run_info import environment

                summary["environment"] = environment()    # what a program diff's header says of the run

                folder = self.store.root / CAPTURE_SUMMARIES
                folder.mkdir(parents=True, exist_ok=True)
                path = folder / f"{socket.gethostname()}-{os.getpid()}.json"
                tmp = path.with_name(path.name + ".tmp")
                tmp.write_text(json.dumps(summary))
                os.replace(tmp, path)
        except Exception as e:  # never break the user's program's exit
            print(f"kinspect capture: could not write launch records ({e})", file=sys.stderr)


def install(store: Store, *, launches: LaunchRecorder | None = None, interpreted=None, for_process: bool = False,
            **listener) -> Session:
    """Install the hooks of a capture into `store` (see the module's text) and return them as a Session.
    `launches` records the launches (None: compiles only); `interpreted` is the interpreter's launch
    recorder under TRITON_INTERPRET (then no listener is installed: nothing compiles); `for_process`
    keeps the listener in its slot for good (keep_first); `listener` are the Recorder's options."""
    if interpreted is not None:
        session = Session(store, Recorder(store, **listener), interpreted=interpreted)
        try:
            _add(session.patches, interpreted)
            session.autotune = AutotuneRecorder(store.root, interpret=True)
            _add(session.patches, session.autotune)
        except BaseException:
            session.close()
            raise
        session.recorder.autotune = session.autotune.decisions
        return session

    knobs = _knobs()
    clock = StartupClock()
    recorder = Recorder(store, previous=knobs.compilation.listener, launches=launches, startup=clock, **listener)
    session = Session(store, recorder, launches=launches)
    p = session.patches
    try:
        if not for_process:
            p.attr(knobs.compilation, "listener", recorder)
        _add(p, clock)
        if launches is not None:
            from kinspect.hooks.observe import LaunchObserver
            from kinspect.hooks.tuning import TuningScopes

            session.observer = LaunchObserver(launches, on_first=recorder.adopt, on_static=recorder.adopt_cached)
            _add(p, session.observer)
            session.autotune = AutotuneRecorder(store.root)
            _add(p, session.autotune)
            _add(p, TuningScopes())      # launches inside autotuners' benchmarks are counted apart
            recorder.autotune = session.autotune.decisions
        if for_process:
            # last, and for good: it cannot be undone if anything after it failed
            keep_first(knobs.compilation, recorder)
    except BaseException:
        session.close()
        raise
    return session


def _add(patches: Patches, hook) -> None:
    """Install a hook with its own install()/restore(), its restore registered first: one that fails
    half-way (the observer patches Triton's CompiledKernel, then watches Inductor) is undone as far as
    it went."""
    patches.callback(hook.restore)
    hook.install()


@contextlib.contextmanager
def recording(out_dir: str | Path = DEFAULT_OUT, *, group: str | None = None, offline: bool = False,
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
    records the interpreted launches instead (kinspect.program.interpreted_capture).
    """
    _knobs()
    store = Store(out_dir)
    launch_recorder = LaunchRecorder(store, timer=timer(time, time_sample)) if launches else None
    # Capturing inside someone's program (not strict) must not break it: an unwritable folder is
    # reported when a variant is recorded, and several processes (ranks) may capture into one store.
    # The records are finished after every hook is back as it was.
    with store.lock(required=strict):
        session = install(store, launches=launch_recorder, group=group, offline=offline, strict=strict,
                          origin=origin, defer=defer, backend=backend)
        try:
            with contextlib.closing(session):
                yield session.recorder
                session.recorder.flush()
        finally:
            session.finish()


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
    from kinspect.hooks.timers import TIMERS

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


def finish_launches(launches: LaunchRecorder) -> None:
    """Write this process's launches and merge them into the records (other processes' files stay
    until they are done: `kinspect capture` merges them when its program ends)."""
    import socket

    from kinspect.files.store import launches_path, merge_launches

    for folder in launches.flush(final=True):
        try:
            merge_launches(folder, only=launches_path(folder, socket.gethostname(), os.getpid()))
        except (OSError, ValueError, KinspectError):
            pass
    launches.forget()
