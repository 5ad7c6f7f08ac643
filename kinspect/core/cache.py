"""kinspect's own cache: text kinspect makes from folders it must not write into (assembly
disassembled from a Triton cache's .so, a variant's IR retargeted to another CPU).

It lives in $KINSPECT_CACHE_DIR, else $XDG_CACHE_HOME/kinspect, else ~/.cache/kinspect, and is
never the user's Triton cache or dump dir. Entries are keyed by what made them, so a changed
input or tool makes a new entry; each is written to a temporary name and renamed into place.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable

from kinspect.core.errors import KinspectError
from kinspect.core.modes import file_mode


def cache_dir() -> Path:
    env = os.environ.get("KINSPECT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kinspect"


def file_key(path: Path) -> str:
    """What identifies a file's content cheaply: its real path, size and modification time."""
    st = path.stat()
    return f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}"


def key_of(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:20]


def write_text(path: Path, text: str) -> Path:
    """Write a cache file atomically (a temporary name, then a rename)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        raise KinspectError(f"cannot write kinspect's cache at '{path.parent}': {e.strerror}; "
                            f"set KINSPECT_CACHE_DIR to a writable folder") from None
    return path


def write_bytes(path: Path, data: bytes) -> Path:
    """Write a binary cache file atomically (a temporary name, then a rename)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        raise KinspectError(f"cannot write kinspect's cache at '{path.parent}': {e.strerror}; "
                            f"set KINSPECT_CACHE_DIR to a writable folder") from None
    return path


def cached_text(kind: str, key: str, name: str, make: Callable[[], str]) -> Path:
    """The path of `<cache>/<kind>/<key>/<name>`, made with `make()` when it is not there yet."""
    path = cache_dir() / kind / key / name
    if path.is_file():
        return path
    return write_text(path, make())
