"""Derived stages for variants kinspect did not write (a Triton cache, a dump folder copied off a
board): SASS from a cubin, assembly from a .so or from the llir. They are made into kinspect's
own cache (kinspect.cache), never into the folder they came from, and stay there for next time.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from kinspect import backends
from kinspect.cache import cache_dir, file_key, key_of, write_text
from kinspect.model import StageFile, Variant

# Origins not completed here: a lone stage file (.ll, .s) is analysed as it is (--retarget compiles a
# lone .ll for a CPU on request), and a retargeted variant is made whole.
NOT_DERIVED = ("retarget", "file")


def complete(variant: Variant) -> Variant:
    """The variant with its backend's derived stages added (as absolute paths into the cache). A
    variant kinspect stored is usually whole already; one captured inside a program
    (kinspect.capture) gets its derived stages here, at first read, since capture leaves them out."""
    if variant.origin in NOT_DERIVED or not variant.path:
        return variant
    from kinspect.hooks.record import derive, pending_derivers

    if not pending_derivers(variant):
        return variant
    backend = backends.of(variant)
    files = {s.file: Path(variant.path, s.file) for s in variant.stages if s.section is None}
    inputs = sorted({n for d in backend.derivers for n in d.inputs})
    sources = [files[s.file] for s in variant.stages if s.name in inputs and s.file in files]
    if not sources:
        return variant
    key = key_of(backend.name, *(file_key(p) for p in sources), *(d.tool for d in backend.derivers))
    folder = cache_dir() / "derived" / key
    record_path = folder / "derived.json"
    if not record_path.is_file():
        new, notes, texts = derive(variant, files)
        for fname, text in texts.items():
            write_text(folder / fname, text)
        write_text(record_path, json.dumps({"stages": [dataclasses.asdict(s) for s in new], "notes": notes}))
    record = json.loads(record_path.read_text())
    stages = tuple(StageFile(**{**s, "file": str(folder / s["file"])}) for s in record["stages"])
    all_stages = sorted(variant.stages + stages, key=lambda s: (backend.stage_kind(s.name).order, s.name))
    return dataclasses.replace(variant, stages=tuple(all_stages), notes=variant.notes + tuple(record["notes"]))
