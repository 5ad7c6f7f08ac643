"""Where the Python side of a kernel call goes: cProfile over many calls, grouped by what the time is for.

The groups follow the JIT's launch path (Triton 3.6 and 3.9): JITFunction.run binds and specializes
the arguments (a generated binder, then the cache key), looks the compiled kernel up, checks the
kernel's global values, evaluates the grid, builds the launch metadata for the launch hooks and
calls the compiled launcher (CompiledKernel.run, which calls into the driver). Around it a caller
may run an autotuner or heuristics and allocate outputs. Each group is the inclusive time of the
functions that do it (GROUPS), found in cProfile's table by where they are defined; the JIT's other
bookkeeping is what JITFunction.run spends beyond its groups, and the caller's own Python what is
left of the whole.

cProfile adds a fixed cost to every Python and C call it sees, so the profiled time a call is
higher than the real one and Python-heavy parts are inflated most: read the shares, and their
milliseconds as the shares of the unprofiled host time a call, not as measurements of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

# name, what it is: the groups in the order they are shown
GROUPS = (
    ("binding", "argument binding and specialization",
     "the JIT's binder (dtype, 16-byte alignment and divisibility of every argument) and its cache key"),
    ("jit", "the JIT's other bookkeeping",
     "JITFunction.run itself: options, device and stream, the kernel cache lookup, the global-value check"),
    ("grid", "grid function and pre-run hooks", "the grid lambda (evaluated on every call) and any other of "
     "the caller's functions the JIT calls"),
    ("metadata", "launch metadata", "CompiledKernel.launch_metadata: what the launch hooks are given"),
    ("launcher", "compiled launcher", "CompiledKernel.run: the launcher's Python and its C call into the driver"),
    ("autotuner", "autotuner and heuristics", "Autotuner.run / Heuristics.run around the JIT: key, config, hooks"),
    ("allocation", "allocation and copies", "torch.empty and the like in the caller: outputs, scratch buffers"),
    ("caller", "the caller's own Python", "the wrapper around the launch: shapes, keys, views, arguments"),
)
TITLES = {name: title for name, title, _ in GROUPS}

# cProfile's name of a builtin that allocates a tensor, e.g. "<built-in method torch.empty>" or
# "<method 'new_empty' of 'torch._C.TensorBase' objects>"
ALLOCATION = re.compile(r"<built-in method torch\.(?:empty|empty_like|empty_strided|zeros|zeros_like|ones|"
                        r"ones_like|full|full_like|rand|randn|rand_like|randn_like|arange)>|"
                        r"<method '(?:new_empty|new_zeros|new_ones|new_full|new_empty_strided|clone|contiguous)' "
                        r"of 'torch\._C\.TensorBase' objects>")
TRITON_FILE = re.compile(r"[/\\]triton[/\\]")      # a function defined in Triton's package
BUILTIN_FILE = "~"                                 # cProfile's file name for builtins


@dataclass(frozen=True)
class GroupTime:
    name: str
    title: str
    share: float           # of the profiled time a call
    ms: float | None       # share x the unprofiled host time a call

    def to_json(self) -> dict:
        return {"group": self.name, "title": self.title, "share": round(self.share, 4),
                "ms": None if self.ms is None else round(self.ms, 6)}


@dataclass(frozen=True)
class CallProfile:
    label: str             # what was called
    calls: int
    profiled_ms: float     # profiled time a call (cProfile's own cost included)
    host_ms: float | None  # the unprofiled host time a call the shares are applied to
    groups: tuple[GroupTime, ...]
    method: str = "cProfile"

    def group(self, name: str) -> GroupTime | None:
        return next((g for g in self.groups if g.name == name), None)

    def to_json(self) -> dict:
        return {"label": self.label, "calls": self.calls, "profiled_ms": round(self.profiled_ms, 6),
                "host_ms": self.host_ms, "method": self.method, "groups": [g.to_json() for g in self.groups]}


Key = tuple[str, int, str]     # cProfile's function key: file, line, name


def _is(key: Key, file_end: str, name: str) -> bool:
    return key[2] == name and key[0].replace("\\", "/").endswith(file_end)


def _jit_run(key: Key) -> bool:
    return _is(key, "triton/runtime/jit.py", "run")


def _tuner_run(key: Key) -> bool:
    return _is(key, "triton/runtime/autotuner.py", "run")


def _binding(key: Key, binder: Key | None) -> bool:
    return key == binder or (key[0] == "<string>" and key[2] == "dynamic_func") or \
        _is(key, "triton/runtime/jit.py", "compute_cache_key")


def _launcher(key: Key, launcher: Key | None) -> bool:
    return key == launcher or _is(key, "triton/compiler/compiler.py", "run")


def _metadata(key: Key) -> bool:
    return _is(key, "triton/compiler/compiler.py", "launch_metadata")


def _user_code(key: Key) -> bool:
    return key[0] not in (BUILTIN_FILE, "<string>") and not TRITON_FILE.search(key[0])


def group_stats(stats: dict, calls: int, *, binder: Key | None = None, launcher: Key | None = None,
                host_ms: float | None = None) -> tuple[float, tuple[GroupTime, ...]]:
    """(profiled ms a call, the groups) from cProfile's table: `stats` as pstats.Stats.stats, i.e.
    {key: (primitive calls, calls, own s, inclusive s, {caller key: (pc, nc, own s, inclusive s)})}.
    `binder` and `launcher` name the JIT's binder and the compiled launcher's __call__ where known."""
    total = sum(v[2] for k, v in stats.items() if "_lsprof.Profiler" not in k[2])
    sec: dict[str, float] = {name: 0.0 for name, _, _ in GROUPS}
    jit_runs = [k for k in stats if _jit_run(k)]
    jit_total = sum(stats[k][3] for k in jit_runs)
    for key, (_, _, own, inclusive, callers) in stats.items():
        from_jit = sum(c[3] for ck, c in callers.items() if ck in jit_runs)
        if _binding(key, binder):
            sec["binding"] += inclusive
        elif _launcher(key, launcher):
            sec["launcher"] += inclusive
        elif _metadata(key):
            sec["metadata"] += inclusive
        elif from_jit and _user_code(key):
            sec["grid"] += from_jit
        elif _tuner_run(key):
            inside = sum(c[3] for k in jit_runs for ck, c in stats[k][4].items() if ck == key)
            sec["autotuner"] += max(inclusive - inside, 0.0)
        elif key[0] == BUILTIN_FILE and ALLOCATION.search(key[2]):
            sec["allocation"] += sum(c[3] for ck, c in callers.items() if not TRITON_FILE.search(ck[0]))
    # the launcher's property returns the launcher object that __call__ then runs: no nesting
    inside_jit = sec["binding"] + sec["grid"] + sec["metadata"] + \
        sum(c[3] for k, v in stats.items() if _launcher(k, launcher) for ck, c in v[4].items() if ck in jit_runs)
    sec["jit"] = max(jit_total - inside_jit, 0.0)
    outside_jit_launcher = sec["launcher"] - \
        sum(c[3] for k, v in stats.items() if _launcher(k, launcher) for ck, c in v[4].items() if ck in jit_runs)
    sec["caller"] = max(total - jit_total - outside_jit_launcher - sec["autotuner"] - sec["allocation"], 0.0)
    groups = []
    for name, title, _ in GROUPS:
        share = sec[name] / total if total else 0.0
        groups.append(GroupTime(name=name, title=title, share=share,
                                ms=share * host_ms if host_ms is not None else None))
    return total * 1e3 / calls if calls else 0.0, tuple(groups)


def code_key(fn) -> Key | None:
    """cProfile's key of a Python function (or of an object's __call__)."""
    code = getattr(fn, "__code__", None) or getattr(getattr(type(fn), "__call__", None), "__code__", None)
    return (code.co_filename, code.co_firstlineno, code.co_name) if code is not None else None


def launcher_code(kernel) -> Key | None:
    """The key of a compiled kernel's launcher call (CudaLauncher.__call__ and the like)."""
    try:
        return code_key(kernel.run)
    except Exception:
        return None


def binder_code(fn) -> Key | None:
    """The key of a JITFunction's binder on the current device."""
    try:
        from triton.runtime import driver

        return code_key(fn.device_caches[driver.active.get_current_device()][-1])
    except Exception:
        return None


def profile(call: Callable[[], Any], sync: Callable[[], None], label: str, *, calls: int = 2000,
            batch: int = 50, host_ms: float | None = None, launcher: Key | None = None, fn=None) -> CallProfile:
    """cProfile `calls` calls of `call`, in batches with a synchronize between them (outside the
    profile, so a launch never waits for a full queue inside it), grouped."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    batch = max(1, min(batch, calls))
    done = 0
    while done < calls:
        n = min(batch, calls - done)
        profiler.enable()
        for _ in range(n):
            call()
        profiler.disable()
        sync()
        done += n
    stats = pstats.Stats(profiler).stats
    binder = binder_code(fn) if fn is not None else None
    per_call, groups = group_stats(stats, calls, binder=binder, launcher=launcher, host_ms=host_ms)
    return CallProfile(label=label, calls=calls, profiled_ms=per_call, host_ms=host_ms, groups=groups,
                       method=f"cProfile over {calls:,} calls in batches of {batch}, a synchronize between "
                              f"batches; shares of the profiled time, applied to the unprofiled host time")
