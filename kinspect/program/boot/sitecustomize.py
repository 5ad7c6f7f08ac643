"""Loaded by every Python process `kinspect capture -- CMD` starts (through PYTHONPATH).

When KINSPECT_CAPTURE_DIR is set it waits for `triton` to be imported (importing it eagerly would
slow down every Python process, pip and torch.compile workers included), then installs kinspect's capture
session for the rest of the process (kinspect.hooks.session: the compilation listener, chaining any
already there, and the launch observer, per compiled kernel, no launch hook set; KINSPECT_CAPTURE_TIME
names a device timer, profiler or events, and KINSPECT_CAPTURE_TIME_SAMPLE=N times about one launch in N;
KINSPECT_CAPTURE_INTERPRET=TARGET records interpreted launches instead). Any other sitecustomize on the
path is then run as usual.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys


def _install():
    """The capture session (kinspect.hooks.session), kept for the rest of the process."""
    try:
        from kinspect.files.store import Store
        from kinspect.hooks.session import install

        store = Store(os.environ["KINSPECT_CAPTURE_DIR"])
        interpret = os.environ.get("KINSPECT_CAPTURE_INTERPRET")
        if interpret:
            # under TRITON_INTERPRET nothing compiles and no launch hook runs: the interpreted launches
            # themselves are recorded, for the capture command to compile for `interpret`'s target
            from kinspect.program.interpreted_launches import InterpretRecorder

            session = install(store, interpreted=InterpretRecorder(store.root, interpret), for_process=True,
                              origin="capture")
        else:
            from kinspect.hooks.launch_counts import LaunchRecorder
            from kinspect.hooks.session import timer

            sample = os.environ.get("KINSPECT_CAPTURE_TIME_SAMPLE", "")
            launches = LaunchRecorder(store, timer=timer(os.environ.get("KINSPECT_CAPTURE_TIME") or False,
                                                         int(sample) if sample.isdigit() else 0))
            session = install(store, launches=launches, for_process=True, origin="capture")
        session.keep()
    except Exception as e:  # never break the user's program
        print(f"kinspect capture: not active ({e})", file=sys.stderr)


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
