"""The kernel's torch reference, eager and through torch.compile, timed like the kernel.

torch.compile writes Triton kernels and inductor artifacts to caches; here both go to temporary
folders (TRITON_CACHE_DIR and TORCHINDUCTOR_CACHE_DIR for the block, compiled in this process),
so the user's caches are never written.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from typing import Callable

from kinspect.bench.timing import Timing


@dataclass(frozen=True)
class RefTiming:
    name: str                    # "torch" or "torch.compile"
    timing: Timing | None
    ratio: float | None          # reference time / kernel time: > 1 means the kernel is faster
    compile_ms: float | None = None
    error: str = ""

@contextlib.contextmanager
def private_compile_caches():
    """Temporary Triton and inductor caches for torch.compile, and in-process compilation."""
    from triton import knobs

    from kinspect.core.environ import patched

    with tempfile.TemporaryDirectory(prefix="kinspect-inductor-") as tmp, knobs.cache.scope(), \
            patched({"TRITON_CACHE_DIR": os.path.join(tmp, "triton"),
                     "TORCHINDUCTOR_CACHE_DIR": os.path.join(tmp, "inductor")}):
        knobs.cache.dir = os.environ["TRITON_CACHE_DIR"]
        import torch._inductor.config as inductor

        with inductor.patch(compile_threads=1):  # no worker pool outliving the temporary caches
            yield


def time_references(reference: Callable, inputs: list, kernel: Timing, timer: Callable[..., Timing], *,
                    compiled: bool = True, **timer_kwargs) -> list[RefTiming]:
    import time

    out = [RefTiming("torch", t := timer(lambda: reference(*inputs), **timer_kwargs), _ratio(t, kernel))]
    if not compiled:
        return out
    try:
        import torch

        import warnings

        with private_compile_caches(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # inductor's advice (TF32, ...) is not about the user's kernel
            fn = torch.compile(reference)
            t0 = time.perf_counter()
            fn(*inputs)
            _sync(inputs)
            compile_ms = (time.perf_counter() - t0) * 1e3
            t = timer(lambda: fn(*inputs), **timer_kwargs)
        out.append(RefTiming("torch.compile", t, _ratio(t, kernel), compile_ms=compile_ms))
    except Exception as e:  # torch.compile is optional: say why it is missing and keep the rest
        line = str(e).strip().splitlines()[0] if str(e).strip() else ""
        out.append(RefTiming("torch.compile", None, None, error=f"{type(e).__name__}: {line[:200]}"))
    return out


def _ratio(ref: Timing, kernel: Timing) -> float | None:
    return ref.wall.median / kernel.wall.median if kernel.wall.median else None


def _sync(inputs) -> None:
    import torch

    if any(getattr(x, "is_cuda", False) for x in inputs):
        torch.cuda.synchronize()
