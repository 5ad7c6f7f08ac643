"""Folders kinspect only reads: the user's Triton caches and dump folders. Every file or store kinspect
writes is checked against them here first (report and repro files, dump and capture stores), so
kinspect never writes into what Triton owns."""

from __future__ import annotations

import os
from pathlib import Path

from kinspect.files import sources
from kinspect.core.errors import UsageError
from kinspect.files.store import is_store


def check_output_path(path: str | Path, what: str, items=()) -> Path:
    """A file kinspect may write (`what`: "script", "report"): in an existing, writable folder, not a
    folder itself, and outside every Triton cache or dump folder kinspect reads (the default cache, and
    the folders named in `items` that are not kinspect stores)."""
    out = Path(path)
    folder = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        example = out / ("report.html" if what == "report" else "repro.py")
        raise UsageError(f"-o '{out}' is a folder; give a file name such as {example}")
    if not folder.is_dir():
        raise UsageError(f"cannot write '{out}': folder '{folder}' does not exist; create it or choose another -o")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"cannot write the {what} '{out}': folder '{folder}' is not writable; choose another -o")
    guard = read_only_folder(folder, items)
    if guard is not None:
        raise UsageError(f"-o '{out}' is inside '{guard}', which kinspect only reads (a Triton cache or dump "
                         f"folder); write the {what} elsewhere")
    return out


def check_store_folder(out_dir: str | Path, option: str = "--store") -> Path:
    """A folder kinspect may write a store into: outside every Triton cache or dump folder."""
    out = Path(out_dir)
    guard = read_only_folder(out)
    if guard is not None:
        raise UsageError(f"{option} '{out}' is inside '{guard}', which kinspect only reads (a Triton cache or dump "
                         f"folder); give the store another folder")
    return out


def read_only_folder(folder: Path, items=()) -> Path | None:
    """The folder kinspect only reads that `folder` is, or is inside, if any: the user's Triton cache
    and dump folders (TRITON_CACHE_DIR, TRITON_DUMP_DIR, TRITON_OVERRIDE_DIR, the defaults), the folders named in
    `items` that are not kinspect stores, a Triton cache whose entry holds it, and the folder itself
    when it is a Triton cache (a dump folder is known by TRITON_DUMP_DIR: any folder of stage files
    looks like one)."""
    home = Path(os.environ.get("TRITON_HOME", os.path.expanduser("~")))
    settings = sources.users_dump_settings()       # the user's, also while kinspect has turned them off
    guarded = [sources.triton_cache_dir(), home / ".triton" / "dump"]
    guarded += [Path(settings[k]) for k in ("TRITON_DUMP_DIR", "TRITON_OVERRIDE_DIR") if settings.get(k)]
    guarded += [Path(i) for i in items if Path(i).is_dir() and not is_store(Path(i))]
    target = Path(folder).resolve()
    for g in guarded:
        g = g.resolve()
        if target == g or g in target.parents:
            return g
    try:
        for p in (target, *target.parents[:3]):
            if p.is_dir() and any(p.glob("__grp__*.json")):     # a Triton cache entry: its parent is the cache
                return p.parent
        if target.is_dir() and not is_store(target) and sources.is_triton_cache(target):
            return target
    except OSError:             # a folder this user cannot list: nothing says it is Triton's
        pass
    return None
