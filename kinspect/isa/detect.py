"""Which CPU ISA a piece of assembly or an LLVM target triple is for."""

from __future__ import annotations

import re
from typing import Iterable

# triple prefix -> isa
TRIPLES = (("x86_64", "x86"), ("i686", "x86"), ("i386", "x86"), ("aarch64", "aarch64"), ("arm64", "aarch64"),
           ("riscv64", "riscv"), ("riscv32", "riscv"))
# A line that only one ISA's assembly has, e.g. "vmovups (%rdi), %zmm0" / "ldr q0, [x8]" / "vsetvli a0, zero, e32, m1".
TELLTALES = (
    ("x86", re.compile(r"%(?:[re]?[a-d]x|[re]?[sd]i|[re]?[sb]p|r\d+[dwb]?|[xyz]mm\d+|rip)\b")),
    ("riscv", re.compile(r"^\s*(?:vsetvli|vsetivli|addi|auipc|slli|srli|flw|fsw|ld|sd)\s+(?:[astx]\d|ra|sp|zero|f[at]?\d)")),
    ("aarch64", re.compile(r"^\s*[a-z][a-z0-9.]*\s+(?:[xwqdsh]\d+|v\d+\.\d*[bhsd]|z\d+\.[bhsd])\b")),
)
# 'target triple = "arm64-apple-darwin23.5.0"'
TRIPLE_RE = re.compile(r'^target triple\s*=\s*"([^"]+)"')


def triple_of(lines: Iterable[str]) -> str:
    """The `target triple` an LLVM IR text names, or "" when it names none."""
    return next((m.group(1) for m in map(TRIPLE_RE.match, lines) if m), "")


def isa_of_triple(triple: str) -> str | None:
    for prefix, isa in TRIPLES:
        if triple.startswith(prefix):
            return isa
    return None


def isa_of_asm(lines: Iterable[str], limit: int = 5000) -> str | None:
    votes = {isa: 0 for isa, _ in TELLTALES}
    for i, line in enumerate(lines):
        if i >= limit:
            break
        for isa, pattern in TELLTALES:
            if pattern.search(line):
                votes[isa] += 1
                break
    best = max(votes, key=votes.get)
    return best if votes[best] else None
