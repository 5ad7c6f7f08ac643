"""The kernels kinspect ships, by name.

Installed as `kinspect.kernels` (the folder is `kernels/` in the repository). Each kernel module
registers a KernelSpec: the @triton.jit function, how to build example arguments for a size, its
constexpr defaults, launch grid, torch reference and bytes/flops formulas for throughput.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from kinspect.core.errors import NotFound, did_you_mean


@dataclass(frozen=True)
class Example:
    """Concrete arguments for one launch: runtime args by name, constexprs, grid."""

    args: dict[str, Any]
    constexprs: dict[str, Any]
    grid: tuple[int, ...]
    inputs: tuple[str, ...] = ()   # arg names the reference takes, in order
    output: str = ""               # arg name the kernel writes
    size: str = ""                 # the size the example really has, where the kernel fixes it
    options: dict[str, Any] = field(default_factory=dict)  # num_warps/num_stages the kernel is meant to run with
    then: tuple[Callable[[], Any], ...] = ()  # launches that complete the result after `fn` (a second pass)
    reference: Callable[..., Any] | None = None  # where this example computes something else than the spec's
    call: Callable[[], Any] | None = None     # the kernel's shipped function on these inputs, as users call it
    call_text: str = ""                       # how it reads: "softmax(x)"


@dataclass(frozen=True)
class KernelSpec:
    name: str
    fn: Any                                   # triton.JITFunction
    example: Callable[..., Example]           # example(size, dtype, device, **constexprs)
    constexprs: dict[str, Any]                # defaults a user can override with -p
    reference: Callable[..., Any]             # torch reference over the example's inputs
    default_size: str
    dtype: str = "float32"
    small_size: str = ""                      # an odd, small size for the interpreter (--interpret)
    bytes_moved: Callable[[Example], int] | None = None
    flops: Callable[[Example], int] | None = None
    summary: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


_REGISTRY: dict[str, KernelSpec] = {}
_MODULES = ("elementwise", "softmax", "fused_mm_softmax", "fused_mm_softmax_tiled", "matmul")
_loaded = False


def register(spec: KernelSpec) -> KernelSpec:
    if spec.name in _REGISTRY:
        raise RuntimeError(f"kernel {spec.name!r} registered twice")
    _REGISTRY[spec.name] = spec
    return spec


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for mod in _MODULES:
            importlib.import_module(f"{__name__}.{mod}")


def declared() -> dict[str, tuple[str, ...]]:
    """Each shipped kernel's name and the constexprs -p may set, read from the kernel modules'
    `KernelSpec(name=..., constexprs=dict(...))` with `ast`, without importing them: they import
    torch, seconds that a command line with a typo in it should not wait for. A test checks this
    against the registry."""
    import ast
    from pathlib import Path

    found = {}
    for mod in _MODULES:
        tree = ast.parse(Path(__file__).with_name(f"{mod}.py").read_text(encoding="utf-8"))
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "KernelSpec"):
                continue
            kw = {k.arg: k.value for k in call.keywords}
            consts = kw.get("constexprs")
            keys = ([k.arg for k in consts.keywords] if isinstance(consts, ast.Call) else
                    [k.value for k in consts.keys] if isinstance(consts, ast.Dict) else [])
            found[kw["name"].value] = tuple(keys)
    return found


def names() -> list[str]:
    _load()
    return sorted(_REGISTRY)


def get(name: str) -> KernelSpec:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise NotFound(f"kernel '{name}' not found{did_you_mean(name, _REGISTRY)} "
                       f"(kinspect ls --kernels lists them)") from None


def checked(name: str, constexprs: dict, args: dict | None = None) -> KernelSpec:
    """A shipped kernel by name, after checking what the command line gave it: -p names must be its
    constexprs, and --arg is only for user kernels (a shipped kernel brings its own arguments)."""
    from kinspect.core.errors import UsageError

    if args:
        raise UsageError(f"--arg is for user kernels (file.py:name); '{name}' ships with its own arguments")
    spec = get(name)
    for key, value in constexprs.items():
        if key not in spec.constexprs:
            raise UsageError(f"kernel '{name}' has no constexpr '{key}'{did_you_mean(key, spec.constexprs)}; "
                             f"its constexprs: {', '.join(spec.constexprs) or 'none'}")
        default = spec.constexprs[key]
        for kind, words in ((bool, "true or false"), (int, "a whole number"), (str, "a word")):
            if isinstance(default, kind):
                if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                    raise UsageError(f"-p {key}={value}: '{name}' takes {words} for {key}; e.g. -p {key}={default}")
                break
    return spec


def example(spec: KernelSpec, size: str, dtype, device, constexprs: dict) -> Example:
    """spec.example(...) for the command line's -p values: one that the kernel's example cannot use
    (-p BLOCK_N=0 where it divides by it) is a UsageError naming the values, not a traceback."""
    from kinspect.core.errors import KinspectError, UsageError

    try:
        return spec.example(size, dtype, device, **constexprs)
    except KinspectError:
        raise
    except (TypeError, ValueError, ArithmeticError, IndexError, KeyError, RuntimeError) as e:
        if not constexprs:
            raise
        given = " ".join(f"-p {k}={v}" for k, v in constexprs.items())
        why = (str(e).strip().splitlines() or [""])[0][:200]
        raise UsageError(f"{given}: kernel '{spec.name}' cannot make its example arguments with "
                         f"{'this value' if len(constexprs) == 1 else 'these values'} ({type(e).__name__}: {why}); "
                         f"its defaults: {', '.join(f'{k}={v}' for k, v in spec.constexprs.items())}") from None


def parse_size(text: str) -> tuple[int, ...]:
    """'4096' -> (4096,), '8192x8192' -> (8192, 8192)."""
    from kinspect.core.errors import UsageError

    try:
        dims = tuple(int(p) for p in str(text).lower().split("x"))
    except ValueError:
        raise UsageError(f"size '{text}' is not a size; use N or MxN, e.g. 4096 or 8192x8192") from None
    if not dims or any(d <= 0 for d in dims):
        raise UsageError(f"size '{text}' must be positive; use N or MxN")
    return dims


def numel(text: str) -> int:
    """Elements in a size: '4096' -> 4096, '64x64' -> 4096."""
    n = 1
    for d in parse_size(text):
        n *= d
    return n
