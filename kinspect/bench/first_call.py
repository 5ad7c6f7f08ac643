"""The first call of a kernel, split into JIT stages and the rest, cold and warm.

Cold: an empty Triton cache (a private one, so the user's is never written): the JIT compiles
every stage. Warm: the JIT's in-memory kernels are dropped and the kernel is called again, so it
finds the binary in the (private) on-disk cache: what a second run of the user's program pays.
The stage times are Triton's own (the compilation listener's CompileTimes); the rest of the
wall time is specialization and hashing, building the launcher, loading the binary, the launch
and the kernel's run. Recording into the kinspect store is deferred until after both calls.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kinspect.core.model import CompileTimes, Variant


@dataclass(frozen=True)
class FirstCall:
    wall_ms: float
    cache_hit: bool
    times: CompileTimes | None        # as the listener reported them

    @property
    def jit_ms(self) -> float:
        return self.times.total_us / 1e3 if self.times else 0.0

    @property
    def startup_ms(self) -> float:
        """Triton's one-time start-up in this call (the first compile of the process), not the kernel's."""
        return self.times.startup_us / 1e3 if self.times else 0.0

    @property
    def rest_ms(self) -> float:
        return max(self.wall_ms - self.jit_ms - self.startup_ms, 0.0)

    def stages_ms(self) -> dict[str, float]:
        if self.times is None:
            return {}
        out = {"source" if not self.cache_hit else "cache lookup": self.times.ir_initialization_us / 1e3}
        out.update({name: us / 1e3 for name, us in self.times.stages})
        if self.times.store_results_us:
            out["store"] = self.times.store_results_us / 1e3
        return out

    def to_json(self) -> dict:
        return {"wall_ms": round(self.wall_ms, 3), "cache_hit": self.cache_hit, "jit_ms": round(self.jit_ms, 3),
                "triton_startup_ms": round(self.startup_ms, 3),
                "jit_ms_by_stage": {k: round(v, 3) for k, v in self.stages_ms().items()},
                "rest_ms": round(self.rest_ms, 3)}


@dataclass(frozen=True)
class FirstCalls:
    cold: FirstCall
    warm: FirstCall
    variant: Variant


@contextlib.contextmanager
def isolated(fn):
    """A private Triton cache and empty in-memory JIT caches for `fn` (a JITFunction), for the block:
    first calls are cold, and nothing kinspect runs reaches the user's caches."""
    from kinspect.compile import private_cache
    from kinspect.compile.driver import fresh_binders

    with private_cache(), fresh_binders(fn):
        yield


def first_calls(fn, call: Callable[[object], object], sync: Callable[[], None], *, out_dir: str | Path,
                group: str, gpu: bool) -> FirstCalls:
    """Time `call(fn)` cold then warm, inside `isolated(fn)`; store the variant; read its loaded
    resources on a GPU. Afterwards `fn`'s in-memory cache holds the compiled kernel."""
    from kinspect.compile.variant import with_loaded_resources
    from kinspect.compile.driver import fresh_binders
    from kinspect.hooks.session import recording
    from kinspect.hooks.record import finish

    with recording(out_dir, group=group, strict=True, origin="kinspect bench", defer=True, launches=False) as rec:
        cold, kernel = _timed(fn, call, sync, rec)
        with fresh_binders(fn):
            warm, _ = _timed(fn, call, sync, rec)
    name = getattr(fn, "__name__", None)
    variant = finish(next((v for v in rec.variants if v.kernel == name), rec.variants[0]))
    if gpu:  # the kernel ran, so its handles are loaded: the driver's registers and spills
        variant = with_loaded_resources(variant, kernel)
    return FirstCalls(cold=cold, warm=warm, variant=variant)


def _timed(fn, call, sync, rec) -> tuple[FirstCall, object]:
    from kinspect.core.errors import KinspectError

    before = len(rec.pending)
    t0 = time.perf_counter()
    try:
        kernel = call(fn)
        sync()
    except KinspectError:
        raise
    except Exception as e:
        raise first_call_error(fn, e) from None
    wall = (time.perf_counter() - t0) * 1e3
    new = rec.pending[before:]
    if not new:
        raise KinspectError("the kernel ran but Triton reported no compile (was the listener replaced?)")
    # a multi-pass kernel compiles its later passes too: the times are those of `fn`, the kernel benched
    import dataclasses

    from kinspect.hooks.record import compile_times

    name = getattr(fn, "__name__", None)
    _, _, _, times, hit, own = next((p for p in new if p[1].get("name") == name), new[0])
    ct = compile_times(times, own)
    if ct is not None:   # Triton's start-up, whichever of the call's compiles paid it
        ct = dataclasses.replace(ct, startup_us=sum(p[5] for p in new))
    return FirstCall(wall_ms=wall, cache_hit=bool(hit), times=ct), kernel


def first_call_error(fn, e: Exception):
    """One line for a first call that failed: where the kernel failed to compile, or how the launch failed."""
    from kinspect.compile import compile_error_line
    from kinspect.core.errors import CompileError, KinspectError

    if type(e).__name__ in ("CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct"):
        return CompileError(compile_error_line(fn, e))
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    return KinspectError(f"kernel '{getattr(fn, '__name__', 'kernel')}' failed on its first call: "
                         f"{type(e).__name__}: {lines[-1] if lines else ''}")


def in_user_cache(hash_hex: str) -> bool | None:
    """Whether the user's Triton cache has a folder for this compile hash (read-only; None if unknown)."""
    import base64

    from kinspect.files.sources import triton_cache_dir

    if not hash_hex:
        return None
    try:
        key = base64.b32encode(bytes.fromhex(hash_hex)).decode().rstrip("=")
    except ValueError:
        return None
    return Path(triton_cache_dir(), key).is_dir()
