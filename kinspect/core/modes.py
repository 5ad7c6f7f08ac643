"""File modes as the user's umask gives them. Python's tempfile makes owner-only files (0600) and
folders (0700) on purpose; kinspect writes through them to rename into place atomically, and a report
or store renamed from there would stay owner-only although it is meant to be attached to an issue or
sent to a colleague. Whatever kinspect writes takes the mode a plain `open()` / `mkdir()` would give."""

from __future__ import annotations

import os
from pathlib import Path

_UMASK: int | None = None


def umask() -> int:
    """The process's umask, read without changing it where Linux says it (/proc/self/status), else by
    setting and restoring it once (the value is kept: kinspect never changes its umask)."""
    global _UMASK
    if _UMASK is None:
        try:
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("Umask:"):
                    _UMASK = int(line.split()[1], 8)
                    break
        except (OSError, ValueError, IndexError):
            pass
        if _UMASK is None:
            _UMASK = os.umask(0o022)
            os.umask(_UMASK)
    return _UMASK


def file_mode(executable: bool = False) -> int:
    return (0o777 if executable else 0o666) & ~umask()


def folder_mode() -> int:
    return 0o777 & ~umask()


def as_umask(path: str | Path, *, executable: bool = False) -> None:
    """Give a file or folder made by tempfile the mode the umask gives a new one."""
    os.chmod(path, folder_mode() if os.path.isdir(path) else file_mode(executable))
