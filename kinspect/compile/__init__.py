"""Compile a kernel variant through the JIT's own specialization, for any target.

Offline targets go through a compile-only driver (see driver.py); the active device compiles as
the JIT would. Either way the variant is recorded by kinspect.hooks into a kinspect store, from
a private Triton cache, so the user's Triton cache is never written.

Here: what every compile path shares (jit_function, private_cache, compile_error_line).
variant.py compiles one variant through kinspect.hooks; this package itself imports no hooks, so
the hooks may use its targets and driver without an import circle.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
import warnings

from kinspect.core.errors import FOREIGN_NOISE



def jit_function(obj):
    """The JITFunction under autotune/heuristics wrappers."""
    from kinspect.compile.autotune import chain

    return chain(obj, getattr(obj, "__name__", None) or type(obj).__name__).jit


@contextlib.contextmanager
def private_cache():
    """Point Triton at a fresh cache for the block: real compile times, and the user's cache untouched."""
    from triton import knobs

    from kinspect.compile import triton_key

    triton_key.install()
    with tempfile.TemporaryDirectory(prefix="kinspect-triton-cache-") as tmp, knobs.cache.scope(), \
            warnings.catch_warnings():
        # Triton's noise about its own defaults (TRITON_DEFAULT_FP_FUSION is unset) says nothing of the
        # user's kernel where kinspect compiles it (the variant records its fusion setting): silent here,
        # in scripts that call kinspect's API too, not only under the CLI
        for message in FOREIGN_NOISE:
            warnings.filterwarnings("ignore", message=message)
        knobs.cache.dir = tmp
        yield tmp


# Triton's CompilationError text starts "at 12:8:" (line relative to the kernel's def) then the
# source, then the message, e.g. "at 3:4:\n    x = tl.load(p)\n    ^\nNameError('p is not defined')".
AT_RE = re.compile(r"^at (\d+):(\d+):")


def compile_error_line(fn, e: Exception) -> str:
    """One line: where in the user's Python and what Triton said. An error inside a @triton.jit
    helper the kernel calls (Triton chains it as the cause) is placed in the helper."""
    inner, depth = e, 0
    while inner.__cause__ is not None and depth < 16 and AT_RE.match(str(inner.__cause__).strip()):
        inner, depth = inner.__cause__, depth + 1
    text = str(inner).strip()
    lines = [ln for ln in text.splitlines() if ln.strip() and ln.strip().strip("^~") != ""]
    message = lines[-1].strip() if len(lines) > 1 or not AT_RE.match(text) else type(inner).__name__
    where = _where(fn, inner, text) if inner is not e else ""
    where = where or _where(fn, e, str(e).strip())
    name = getattr(fn, "__name__", None) or getattr(getattr(fn, "fn", None), "__name__", "kernel")
    return f"kernel '{name}' failed to compile{where}: {message}"


# the first line of a @triton.jit function's source in Triton's error text: "def leaky_relu(x):"
DEF_RE = re.compile(r"^\s*def\s+(\w+)\s*\(", re.MULTILINE)


def _where(fn, e: Exception, text: str) -> str:
    """` at file.py:LINE` for Triton's "at 12:8:" (a line counted from the def of the function the
    error is in: the kernel, or a helper it calls, found by name in the kernel's globals)."""
    import inspect

    m = AT_RE.match(text)
    if not m:
        return ""
    target = fn.fn
    d = DEF_RE.search(text)
    if d and d[1] != getattr(target, "__name__", ""):
        helper = getattr(target, "__globals__", {}).get(d[1])
        target = getattr(helper, "fn", helper)
        if target is None:
            return f" in {d[1]}() at line {m[1]} of it"
    try:
        # Triton counts from the def line (decorators excluded) as line 1.
        src_lines, first = inspect.getsourcelines(target)
        def_offset = next(i for i, ln in enumerate(src_lines) if ln.lstrip().startswith("def "))
        inside = "" if target is fn.fn else f" in {target.__name__}()"
        return f"{inside} at {inspect.getsourcefile(target)}:{first + def_offset + int(m[1]) - 1}"
    except (OSError, TypeError, StopIteration):
        return f" at line {m[1]} of the kernel"
