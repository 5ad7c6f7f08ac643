"""Triton's cache-key prefix, computed once per Triton installation instead of once per process.

The first compile of every process calls `triton.runtime.cache.triton_key()`, which hashes
Triton's compiler, backends and language sources and its ~500 MB libtriton: about 1.2 CPU-seconds
here, paid again by each `kinspect dump` (benchmarks/real_files.py runs one process a kernel). The
value depends only on those files, so kinspect keeps it in its own cache (kinspect.core.cache), keyed
by the path, size and modification time of every file Triton hashes (the stamps Python's own
bytecode cache trusts), and hands Triton that value. A changed or reinstalled Triton has other
stamps, so a new key is computed. Nothing of the user's Triton cache is touched: kinspect
compiles into a private cache dir anyway.
"""

from __future__ import annotations

import functools
import os
import sysconfig

from kinspect.core.cache import cache_dir, key_of, write_text


def _stamps(root: str) -> str:
    """Path, size and mtime of every file triton_key() reads, in a fixed order."""
    parts = []
    ext = (sysconfig.get_config_var("EXT_SUFFIX") or ".so").split(".")[-1]
    files = [os.path.join(root, "runtime", "cache.py"), os.path.join(root, "_C", f"libtriton.{ext}")]
    for sub in ("compiler", "backends", "language"):
        for folder, dirs, names in os.walk(os.path.join(root, sub)):
            dirs.sort()
            files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            continue
        parts.append(f"{f}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts)


def install() -> None:
    """Make `triton.runtime.cache.triton_key` answer from kinspect's cache (computing and storing
    the value the first time for this Triton). Idempotent; leaves Triton alone when its key is
    computed already in this process or when the cache cannot be written."""
    import triton
    import triton.runtime.cache as cache

    current = cache.triton_key
    if getattr(current, "kinspect_cached", False) or not hasattr(current, "cache_info") or \
            current.cache_info().currsize:
        return
    root = os.path.dirname(os.path.abspath(triton.__file__))
    path = cache_dir() / "triton-key" / key_of(triton.__version__, root, _stamps(root))
    try:
        value = path.read_text(encoding="utf-8") if path.is_file() else ""
    except OSError:
        value = ""
    if not value.startswith(triton.__version__):
        value = current()
        try:
            write_text(path, value)
        except Exception:
            return

    @functools.lru_cache()
    def triton_key():
        return value

    triton_key()             # a filled cache: kinspect.hooks' start-up clock sees nothing left to time
    triton_key.kinspect_cached = True
    cache.triton_key = triton_key
