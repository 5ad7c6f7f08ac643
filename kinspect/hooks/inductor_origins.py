"""During a capture: where each Inductor kernel came from, read from what Inductor already keeps.

In the process that called torch.compile, Inductor loads each compiled graph's output code through
PyCodeCache, which remembers its line map (PyCodeCache.linemaps: the wrapper's line numbers and the
stack traces of the FX nodes) on fresh compiles and on FX-graph-cache hits alike. `InductorOrigins`
reads the wrappers it has not read yet (nothing is imported: only when the program has imported
Inductor, and only files Inductor wrote), parses them (kinspect.files.provenance) and writes each
kernel's origin beside the variant whose source file is the kernel's file (`# kernel path:`). It
runs when the launch recorder writes its files: at a variant's first launch, every few seconds
while launches happen, and when the capture ends.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from kinspect.files import provenance

MAX_WRAPPER_BYTES = 64 << 20


class InductorOrigins:
    def __init__(self):
        self.by_path: dict[str, provenance.Origin] = {}     # kernel file -> its origin
        self._read: set[str] = set()                        # wrappers read
        self._done: set[str] = set()                        # variant folders given their origin
        self._sources: dict[str, str] = {}                  # variant folder -> its kernel's file

    def collect(self) -> None:
        """Read the output code Inductor loaded since the last call."""
        codecache = sys.modules.get("torch._inductor.codecache")
        cache = getattr(codecache, "PyCodeCache", None)
        if cache is None:
            return
        linemaps = dict(getattr(cache, "linemaps", None) or {})
        paths = list(linemaps) + [p for p in (getattr(m, "__file__", None) for m in list(getattr(cache, "modules", ())))
                                  if p and p not in linemaps]
        for path in paths:
            if path in self._read:
                continue
            self._read.add(path)
            text = _text(path)
            if text is None or "async_compile.triton(" not in text:
                continue
            for origin in provenance.parse_output_code(text, linemaps.get(path)):
                self.by_path.setdefault(origin.kernel_path, origin)

    def attach(self, folders: dict) -> None:
        """Write the origin of each variant among `folders` (hash -> variant folder) that has one now."""
        try:
            self.collect()
            if not self.by_path:
                return
            for folder in list(folders.values()):
                key = str(folder)
                if key in self._done:
                    continue
                origin = self.by_path.get(self._source_file(Path(folder)))
                if origin is not None:
                    provenance.write(folder, origin)
                    self._done.add(key)
        except Exception:        # never break the program for a comment it did not ask for
            pass

    def _source_file(self, folder: Path) -> str:
        key = str(folder)
        if key not in self._sources:
            try:
                self._sources[key] = str(json.loads((folder / "record.json").read_text())["source"]["file"])
            except (OSError, ValueError, KeyError, TypeError):
                self._sources[key] = ""
        return self._sources[key]


def _text(path: str) -> str | None:
    try:
        p = Path(path)
        if p.stat().st_size > MAX_WRAPPER_BYTES:
            return None
        return p.read_text(errors="replace")
    except OSError:
        return None
