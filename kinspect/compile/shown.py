"""A path as the user would type it (for messages that name the user's own files)."""

from __future__ import annotations

import os
from pathlib import Path


def shown(path: Path) -> str:
    """A path as the user would type it: relative to the current folder when below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel
