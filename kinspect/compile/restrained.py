"""What the project's code kinspect runs (its module-level code, its wrappers, its tests) is kept from
doing beyond launching kernels: building C++/CUDA extensions, compiling with torch.compile, timing.

- `torch.utils.cpp_extension` refuses to build (cute-kernels builds its CUDA extension with nvcc the
  first time a test asks for it: minutes, and files outside the project);
- `torch.compile` returns the function or module as it is, called eagerly: it launches the project's
  kernels with the same arguments. What Inductor would make of it is not the project's kernel,
  compiling it on the CPU costs seconds a call, and Dynamo cannot trace the device stand-in
  (qwen3-moe-fused's `@torch.compile(fullgraph=True) def get_expert_counts` stopped its wrapper's call:
  "Unsupported method call");
- `triton.testing.do_bench` calls its function once, to record its launches, and returns a time of
  1 ms without timing anything: a benchmark script that times torch's baseline first goes on to the
  project's kernel (gn-kernels' benchmark_mm.py).
"""

from __future__ import annotations

import contextlib
import sys

from kinspect.core.patching import Patches


@contextlib.contextmanager
def restrained():
    """The block runs with extension builds refused, torch.compile leaving code as it is and do_bench
    calling once; all are put back after. Decorators applied while it runs (a module imported in it)
    keep the function; a module that bound `do_bench` by name before it keeps Triton's."""
    torch = sys.modules.get("torch")
    with Patches() as patches:
        testing = sys.modules.get("triton.testing")
        if testing is not None:
            for name in ("do_bench", "do_bench_cudagraph"):
                if hasattr(testing, name):
                    patches.attr(testing, name, called_once)
        if torch is not None:
            patches.attr(torch, "compile", not_compiled)
            try:
                from torch.utils import cpp_extension
            except Exception:        # a torch build without it: nothing to refuse
                cpp_extension = None
            # the one function every build goes through (a project binds `load` to its own name at import)
            for attr in ("_jit_compile", "load", "load_inline"):
                if cpp_extension is not None and hasattr(cpp_extension, attr):
                    patches.attr(cpp_extension, attr, _refused(attr))
        yield


def not_compiled(model=None, **kwargs):
    """torch.compile as kinspect runs the project's code: the function as it is."""
    if model is None:
        return lambda fn: fn
    return model


# the time a benchmark called through do_bench gets back (ms): nothing was timed
UNTIMED_MS = 1.0


def called_once(fn, *args, quantiles=None, return_mode="mean", **kwargs):
    """triton.testing.do_bench as kinspect runs the project's code: `fn` called once (its launches
    recorded, none run), UNTIMED_MS returned in the form the caller asked for."""
    fn()
    if quantiles is not None:
        return [UNTIMED_MS] * len(quantiles)
    return [UNTIMED_MS] if return_mode == "all" else UNTIMED_MS


def _refused(name: str):
    def refused(*args, **kwargs):
        raise RuntimeError(f"kinspect runs the project's code without building C++/CUDA extensions "
                           f"(torch.utils.cpp_extension.{name})")
    return refused
