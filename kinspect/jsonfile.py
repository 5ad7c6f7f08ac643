"""Small JSON files kinspect keeps beside what it records (a variant's counters.json and provenance.json,
a store's device.json): written atomically, read back as data no bigger than they should be."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable


def write(path: Path, data: dict) -> Path:
    """Write beside, then rename into place: a reader sees the old file or the new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)
    return path


def read(path: Path, parse: Callable[[Any], Any], limit: int = 1 << 20):
    """`parse(data)` of the file's JSON; None when there is no file, it is larger than `limit`, or it is
    not JSON `parse` accepts (parse raises ValueError, TypeError, KeyError or AttributeError)."""
    try:
        if path.stat().st_size > limit:
            return None
        return parse(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None
