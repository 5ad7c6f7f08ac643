"""Loaded by every Python process `kinspect capture -- CMD` starts (through PYTHONPATH).

When KINSPECT_CAPTURE_DIR is set it waits for `triton` to be imported (importing it eagerly would
slow down every Python process, pip and torch.compile workers included), then installs kinspect's
compilation listener, chaining any already there, and its launch observer (kinspect.hooks.observe: per
compiled kernel, no launch hook set; KINSPECT_CAPTURE_TIME names a device timer, profiler or events, and
KINSPECT_CAPTURE_TIME_SAMPLE=N times about one launch in N). Any other sitecustomize on the path is then
run as usual.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys


def _install():
    if os.environ.get("KINSPECT_CAPTURE_INTERPRET"):
        return _install_interpreted(os.environ["KINSPECT_CAPTURE_INTERPRET"])
    try:
        from kinspect.hooks import Recorder, timer
        from kinspect.hooks.autotune import AutotuneRecorder
        from kinspect.hooks.launches import LaunchRecorder
        from kinspect.hooks.observe import LaunchObserver
        from kinspect.hooks.startup import StartupClock
        from kinspect.hooks.tuning import TuningScopes
        from kinspect.files.store import Store
        from triton import knobs

        store = Store(os.environ["KINSPECT_CAPTURE_DIR"])
        sample = os.environ.get("KINSPECT_CAPTURE_TIME_SAMPLE", "")
        launches = LaunchRecorder(store, timer=timer(os.environ.get("KINSPECT_CAPTURE_TIME") or False,
                                                     int(sample) if sample.isdigit() else 0))
    except Exception as e:  # never break the user's program
        print(f"kinspect capture: not active ({e})", file=sys.stderr)
        return
    clock = StartupClock()
    clock.install()
    recorder = Recorder(store, previous=knobs.compilation.listener, origin="capture", launches=launches,
                        startup=clock)
    observer = LaunchObserver(launches, on_first=recorder.adopt, on_static=recorder.adopt_cached)
    observer.install()
    autotune = AutotuneRecorder(store.root)
    autotune.install()
    TuningScopes().install()     # launches inside autotuners' benchmarks are counted apart
    _keep_first(knobs.compilation, recorder)
    # Launch counts are written every few seconds while launches happen, and at exit; a forked child
    # (torch.multiprocessing, dataloader workers) counts its own launches afresh.
    import atexit

    atexit.register(_at_exit, launches, observer)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=launches.forget)
        os.register_at_fork(after_in_child=autotune.forget)


def _install_interpreted(target):
    """Under TRITON_INTERPRET nothing compiles and no launch hook runs: record the interpreted
    launches themselves (kinspect.program.interpret), for the capture command to compile for `target`."""
    try:
        from kinspect.hooks.autotune import AutotuneRecorder
        from kinspect.program.interpret import InterpretRecorder

        recorder = InterpretRecorder(os.environ["KINSPECT_CAPTURE_DIR"], target)
        autotune = AutotuneRecorder(recorder.root, interpret=True)
        recorder.install()
        autotune.install()
    except Exception as e:  # never break the user's program
        print(f"kinspect capture: not active ({e})", file=sys.stderr)
        return
    import atexit

    atexit.register(_at_exit, recorder)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=recorder.forget)
        os.register_at_fork(after_in_child=autotune.forget)


def _at_exit(launches, observer=None):
    """Write this process's launch counts and what recording them cost (the capture command reads
    it back into its summary). `launches` is a LaunchRecorder (with its LaunchObserver), or an
    InterpretRecorder."""
    try:
        if hasattr(launches, "flush"):
            launches.flush(final=True)
        else:
            launches.write()
        if observer is not None:
            from kinspect.hooks.observe import per_launch_s

            summary = launches.summary(per_launch_s() if launches.tallies else 0.0,
                                       static_launcher=observer.static_launcher or "")
        else:
            summary = launches.summary()
        if summary["launches"] or summary.get("tuning"):
            from kinspect.files.run_info import environment

            summary["environment"] = environment()
            import json
            import socket

            folder = os.path.join(os.environ["KINSPECT_CAPTURE_DIR"], ".kinspect-capture")
            os.makedirs(folder, exist_ok=True)
            path = os.path.join(folder, f"{socket.gethostname()}-{os.getpid()}.json")
            with open(path + ".tmp", "w") as f:
                json.dump(summary, f)
            os.replace(path + ".tmp", path)
    except Exception as e:  # never break the user's program's exit
        print(f"kinspect capture: could not write launch records ({e})", file=sys.stderr)


def _keep_first(compilation, recorder):
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


class _AfterTriton(importlib.abc.MetaPathFinder):
    """Wraps triton's loader so capture is installed right after `import triton` runs.

    It stays on sys.meta_path until then: torch calls importlib.util.find_spec("triton") long
    before it imports triton, and that lookup must not use the hook up.
    """

    def find_spec(self, name, path=None, target=None):
        if name != "triton":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module
        finder = self

        def exec_then_install(module):
            exec_module(module)
            if finder in sys.meta_path:
                sys.meta_path.remove(finder)
                _install()

        spec.loader.exec_module = exec_then_install
        return spec


def _chain_next_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if os.path.abspath(entry or ".") == here:
            continue
        candidate = os.path.join(entry or ".", "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_kinspect_next_sitecustomize", candidate)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


if os.environ.get("KINSPECT_CAPTURE_DIR"):
    if "triton" in sys.modules:
        _install()
    else:
        sys.meta_path.insert(0, _AfterTriton())
_chain_next_sitecustomize()
