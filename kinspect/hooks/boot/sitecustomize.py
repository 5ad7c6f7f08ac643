"""Loaded by every Python process `kinspect capture -- CMD` starts (through PYTHONPATH).

When KINSPECT_CAPTURE_DIR is set it waits for `triton` to be imported (importing it eagerly would
slow down every Python process, pip and torch.compile workers included), then installs kinspect's
compilation listener, chaining any listener already there. Any other sitecustomize on the path is
then run as usual.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys


def _install():
    try:
        from kinspect.hooks import Recorder
        from kinspect.store import Store
        from triton import knobs
    except Exception as e:  # never break the user's program
        print(f"kinspect capture: not active ({e})", file=sys.stderr)
        return
    recorder = Recorder(Store(os.environ["KINSPECT_CAPTURE_DIR"]), previous=knobs.compilation.listener,
                        origin="capture")
    _keep_first(knobs.compilation, recorder)


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
