"""Small JSON files kinspect keeps beside what it records (a variant's counters.json and provenance.json,
a store's device.json and other_kernels.json): written atomically, read back as data no bigger than
they should be. A store travels, so a file here that is a link, too big, or not of the shape its
reader accepts is not read, and one warning line says so (never a traceback, never a silent gap)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from kinspect.core.errors import warn
from kinspect.files import foreign
from kinspect.files.store import write_atomic


def write(path: Path, data: dict) -> Path:
    """Through the store's one atomic write: a reader sees the old file or the new one, and a link
    planted at a temporary name is never followed."""
    write_atomic(path, json.dumps(data, indent=1))
    return path


def read(path: Path, parse: Callable[[Any], Any], limit: int = 1 << 20):
    """`parse(data)` of the file's JSON; None when there is no file. A link, a file larger than `limit`,
    or JSON that `parse` refuses (it raises ValueError, TypeError, KeyError or AttributeError) is not
    read and said in one warning line."""
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink():
        warn(f"{path}: a link; kinspect reads its own files only as they are inside the store: not read")
        return None
    try:
        if path.stat().st_size > limit:
            warn(f"{path}: larger than {limit >> 10} KiB, which no file of this kind is: not read")
            return None
        return parse(json.loads(foreign.read_text(path, max_bytes=limit)))
    except foreign.Refused as e:
        warn(f"{e}; not read")
        return None
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:
        warn(f"{path}: not of the shape kinspect writes ({type(e).__name__}); not read")
        return None
