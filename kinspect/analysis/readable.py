"""A stage that does not parse is never evidence.

A parser yields nothing (or next to nothing) for text in a format it does not know: Triton 3.9's
SASS with control codes read by a parser that knew only nvdisasm's gave 0 instructions, and
"no matrix instructions: the dot runs on FMA units" followed. A non-empty stage whose parse gives no
instructions, or fewer than MIN_SHARE of its lines in a listing of MIN_LINES or more (the real
stages of Triton's backends give a tenth to all of their lines, PTX with debug sections and small
AMDGCN kernels the fewest), is unreadable: its first line and the formats kinspect knows are said,
and no verdict reads it.
"""

from __future__ import annotations

from typing import Iterable, Iterator

MIN_LINES = 100
MIN_SHARE = 0.02
FIRST_LINE_CHARS = 80


class CountedLines:
    """Lines passed through to a parser, counting the non-blank ones and keeping the first."""

    def __init__(self, lines: Iterable[str]):
        self._lines = lines
        self.count = 0
        self.first = ""

    def __iter__(self) -> Iterator[str]:
        for line in self._lines:
            if line.strip():
                if not self.count:
                    self.first = line.strip()
                self.count += 1
            yield line


def shown(line: str) -> str:
    """A line of foreign text as one short printable line."""
    text = "".join(c if c.isprintable() else "?" for c in line)
    return text if len(text) <= FIRST_LINE_CHARS else text[: FIRST_LINE_CHARS - 1] + "…"


def unreadable(stage: str, dialect: str, instructions: int, lines: int, first: str) -> str | None:
    """Why a parsed stage cannot be taken as evidence, or None when it reads."""
    from kinspect import ir

    if lines and instructions and (lines < MIN_LINES or instructions >= MIN_SHARE * lines):
        return None
    if not lines:
        what = "empty"
    elif not instructions:
        what = f"no instructions read in its {lines:,} lines"
    else:
        what = f"only {instructions:,} instructions read in its {lines:,} lines"
    known = "; ".join(ir.formats(dialect)) or dialect
    head = f"; its first line is '{shown(first)}'" if lines else ""
    return (f"{stage}: unreadable as {dialect} ({what}{head}); kinspect reads {known}: nothing is concluded "
            f"from this stage")
