"""A variant's Python source and stages as highlighted HTML lines, each stage line with the kernel
source line it came from: what the HTML report shows and links.

    c = stage(variant, variant.stage("ptx"))
    c.lines          # HTML of each line (pygments; every character escaped)
    c.source_lines   # per line, the kernel's source line it came from (0: none)
    packed(variant)  # the source and every text stage, gzipped for the page; stages are cached

Highlighting is the slow part of a report (pygments takes about 3 s per MB of LLVM IR), so a
stage's packed form is kept in kinspect's cache, keyed by the file and by the code that made it.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
from dataclasses import dataclass
from pathlib import Path

from kinspect.core.model import StageFile, Variant

# Bigger stages are shown as escaped plain text: pygments takes about 3 s per MB of LLVM IR.
HIGHLIGHT_BYTES = 4 << 20
# Bigger stages are left out of the report, named with their size (`kinspect show` opens them).
SHOW_BYTES = 48 << 20


@dataclass(frozen=True)
class Code:
    name: str                  # the stage's name, or "python" for the kernel's source
    dialect: str
    lines: tuple[str, ...]     # HTML, one entry per line
    source_lines: tuple[int, ...]  # the kernel source line each line came from; 0 where none
    first: int = 1             # the number of the first line (the source starts at the def)
    note: str = ""             # why a stage is plain or left out


    def pack(self) -> "Packed":
        """The lines and line map as gzipped JSON in base64 (no name or date: the same bytes each time)."""
        raw = json.dumps({"lines": self.lines, "map": self.source_lines}, separators=(",", ":")).encode("utf-8")
        return Packed(name=self.name, dialect=self.dialect, first=self.first, note=self.note, lines=len(self.lines),
                      blob=base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii"))


@dataclass(frozen=True)
class Packed:
    name: str
    dialect: str
    first: int
    note: str
    lines: int
    blob: str      # base64 of gzip of {"lines": [...], "map": [...]}


def python_source(v: Variant) -> Code | None:
    """The kernel's source as recorded with the variant, numbered as in its file."""
    from pygments.lexers import PythonLexer

    if v.source is None or not v.source.text:
        return None
    lines = _highlight(v.source.text.splitlines(keepends=True), PythonLexer(stripnl=False, ensurenl=True))
    numbers = tuple(range(v.source.line, v.source.line + len(lines)))
    return Code(name="python", dialect="python", lines=lines, source_lines=numbers, first=v.source.line)


def stage(v: Variant, s: StageFile) -> Code:
    """One text stage, highlighted, with its lines' source locations in the kernel's own file."""
    from kinspect import ir
    from kinspect.analysis.stages import open_lines
    from kinspect.analysis.verdicts import is_kernel_file
    from kinspect.core.errors import KinspectError
    from kinspect.ir.records import Instruction
    from kinspect.render.lexers import lexer_for

    if s.bytes > SHOW_BYTES:
        return Code(name=s.name, dialect=s.dialect, lines=(), source_lines=(),
                    note=f"left out: {s.bytes / 2**20:,.0f} MiB (kinspect show VARIANT {s.name} opens it)")
    with open_lines(v, s) as stream:
        text = [line.rstrip("\r\n").replace("\r", " ") + "\n" for line in stream]
    locs: dict[int, int] = {}
    note = ""
    if s.dialect in ir.dialects():
        try:
            locs = {r.line: r.loc.line for r in ir.parse(s.dialect, text)
                    if isinstance(r, Instruction) and r.loc is not None and is_kernel_file(v, r.loc.file)}
        except KinspectError as e:
            note = f"no line mapping: {e}"
    if s.bytes > HIGHLIGHT_BYTES:
        import html

        lines = tuple(html.escape(t.rstrip("\n"), quote=False) for t in text)
        note = note or f"plain text: {s.bytes / 2**20:,.1f} MiB is more than kinspect highlights"
    else:
        lexer = type(lexer_for(s.dialect))(stripnl=False, ensurenl=True)
        lines = _highlight(text, lexer)
    return Code(name=s.name, dialect=s.dialect, lines=lines,
                source_lines=tuple(locs.get(n, 0) for n in range(1, len(lines) + 1)), note=note)


def packed(v: Variant) -> list[Packed]:
    """The source, then every text stage in the variant's order, packed."""
    src = python_source(v)
    return ([src.pack()] if src else []) + [packed_stage(v, s) for s in v.stages if not s.binary]


def packed_stage(v: Variant, s: StageFile) -> Packed:
    """A stage packed, from kinspect's cache when this file was packed by this same code before."""
    from kinspect.core.cache import cached_text, file_key, key_of

    path = Path(v.path, s.file)
    mine = v.source.file.rsplit("/", 1)[-1] if v.source else ""
    key = key_of("code", file_key(path), s.section or "", s.name, s.dialect, mine, _tools())
    made = cached_text("report-code", key, "packed.json", lambda: json.dumps(stage(v, s).pack().__dict__))
    return Packed(**json.loads(made.read_text(encoding="utf-8")))


@functools.lru_cache(maxsize=1)
def _tools() -> str:
    """What a packed stage depends on besides the file: pygments and kinspect's lexers and parsers."""
    import hashlib

    import pygments

    from kinspect import ir, render

    digest = hashlib.sha256(pygments.__version__.encode())
    for folder in (Path(ir.__file__).parent, Path(render.__file__).parent):
        for f in sorted(folder.glob("*.py")):
            digest.update(f.read_bytes())
    return digest.hexdigest()[:16]


def _highlight(text: list[str], lexer) -> tuple[str, ...]:
    """pygments' HTML, split into lines: its spans close at each line end, so every entry stands alone."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter

    if not text:
        return ()
    out = highlight("".join(text), lexer, HtmlFormatter(nowrap=True)).split("\n")
    if out and out[-1] == "":
        out.pop()
    out += [""] * (len(text) - len(out))  # never fewer lines than the text has
    return tuple(out[:len(text)])


PARALLEL_FROM = 4   # pack the stages of this many variants or more in worker processes


def packed_all(variants: list[Variant]) -> list[list[Packed]]:
    """`packed` of each variant, in order; highlighting is pure Python, so many variants are packed
    in worker processes (kinspect.core.parallel), their results cached."""
    from kinspect.core.parallel import process_map

    return process_map(packed, variants, least=PARALLEL_FROM)
