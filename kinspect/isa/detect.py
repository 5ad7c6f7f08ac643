"""Which CPU ISA a piece of assembly or an LLVM target triple is for (the specs' triples and telltales,
kinspect.isa)."""

from __future__ import annotations

import re
from typing import Iterable

from kinspect import isa

# 'target triple = "arm64-apple-darwin23.5.0"'
TRIPLE_RE = re.compile(r'^target triple\s*=\s*"([^"]+)"')


def triple_of(lines: Iterable[str]) -> str:
    """The `target triple` an LLVM IR text names, or "" when it names none."""
    return next((m.group(1) for m in map(TRIPLE_RE.match, lines) if m), "")


def isa_of_triple(triple: str) -> str | None:
    spec = isa.of_triple(triple)
    return spec.name if spec else None


def isa_of_asm(lines: Iterable[str], limit: int = 5000) -> str | None:
    """The ISA whose telltale lines are the most frequent in the first `limit` lines (each line votes
    for the first ISA, in rank order, that it is a telltale of)."""
    tells = isa.telltales()
    votes = {spec.name: 0 for spec, _ in tells}
    for i, line in enumerate(lines):
        if i >= limit:
            break
        for spec, pattern in tells:
            if pattern.search(line):
                votes[spec.name] += 1
                break
    best = max(votes, key=votes.get, default=None)
    return best if best is not None and votes[best] else None
