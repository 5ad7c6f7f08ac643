"""Which Python line made each matrix instruction, and which tl.dot made none.

ptxas (and LLVM's backends) schedule the machine code; after scheduling the line table of the SASS
credits a tensor-core instruction to whichever line's code surrounds it: in a flash-attention loop
8 of 16 HGMMA went to `l_i = l_i * alpha + tl.sum(p, 1)` and one to the second tl.dot. The op that
made them is known before scheduling, so the machine code's matrix instructions are placed by the
first of these that accounts for all of them:

1. the IR nearest the machine code (PTX, then LLVM IR): its matrix ops (wgmma.mma_async, mma.sync,
   llvm.amdgcn.mfma.*) carry the dot's own location and become one instruction each, so their
   per-line counts are taken when they add up to the machine code's count;
2. the matrix ops of the TTGIR (or a CPU backend's middle IR): one dot line takes them all; several
   share them by the instruction count each op's shape and layout give, when those add up;
3. the machine code's own line table, said so.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from kinspect.analysis.metrics import LineStats, StageMetrics

# IR dialects whose matrix ops map one to one onto machine instructions, nearest to the machine code first
NEAREST_IR = ("ptx", "llvm")

# warpsPerCTA = [8, 1]     instrShape = [16, 64, 16]
WARPS_RE = re.compile(r"warpsPerCTA\s*=\s*\[(?P<dims>[\d,\s]+)\]")
INSTR_RE = re.compile(r"instrShape\s*=\s*\[(?P<dims>[\d,\s]+)\]")
# #mma = #ttg.nvidia_mma<{versionMajor = 3, ...}>
VERSION_RE = re.compile(r"versionMajor\s*=\s*(?P<v>\d+)")
# HMMA.16816.F32, HMMA.1688.F32.TF32, IMMA.16832.S8.S8: m16 n8 k16 / k8 / k32
HMMA_SHAPE_RE = re.compile(r"^[A-Z]MMA\.(?P<m>16|8)(?P<n>8)(?P<k>\d+)\b")


@dataclass
class Placement:
    """Matrix instructions by kernel line (file, line) -> unit -> count, and how they were placed."""

    lines: dict[tuple[str, int], Counter] = field(default_factory=dict)
    how: str = ""
    moved: bool = False          # the machine code's own line table says otherwise


def place(isa: StageMetrics, ir: list[StageMetrics], kernel_file: Callable[[str], bool]) -> Placement | None:
    """Where the machine code's matrix instructions came from; None when it has none."""
    total = isa.matrix_total
    if not total:
        return None
    own = {k: Counter(ls.matrix) for k, ls in isa.lines.items() if ls.matrix}
    for dialect in NEAREST_IR:
        for m in ir:
            if m.dialect == dialect and m.matrix_total == total:
                found = _from_lines(m, isa, kernel_file)
                if found is not None:
                    return Placement(found, f"placed by the {m.stage.upper()}'s line table (the IR before the "
                                            f"{isa.dialect} was scheduled)", moved=found != own)
    dots = [m for m in ir if m.matrix_ops]
    if dots:
        found = _from_dots(dots[-1], isa, kernel_file)
        if found is not None:
            return Placement(found, f"placed on the dot ops of the {dots[-1].stage.upper()} by their shapes",
                             moved=found != own)
    return Placement(own, f"placed by the {isa.dialect} line table (no IR before it accounts for them)")


def _from_lines(m: StageMetrics, isa: StageMetrics, kernel_file) -> dict | None:
    """The IR's matrix ops per kernel line, in the machine code's units; None unless every op has a
    kernel line and the units can be told apart."""
    found = {k: Counter(ls.matrix) for k, ls in m.lines.items() if ls.matrix}
    if sum(sum(c.values()) for c in found.values()) != m.matrix_total:
        return None
    if not all(kernel_file(file) for file, _ in found):
        return None
    units = set(isa.matrix)
    if set().union(*found.values()) == units:
        return found
    if len(units) == 1:
        [unit] = units
        return {k: Counter({unit: sum(c.values())}) for k, c in found.items()}
    return None


def _from_dots(m: StageMetrics, isa: StageMetrics, kernel_file) -> dict | None:
    """The machine code's matrix instructions shared among the dot ops of an MLIR stage."""
    ops = [op for op in m.matrix_ops if op.loc is not None and kernel_file(op.loc.file)]
    if not ops or len(ops) != len(m.matrix_ops) or len(isa.matrix) != 1:
        return None
    [unit] = isa.matrix
    keys = {(op.loc.file, op.loc.line) for op in ops}
    if len(keys) == 1:
        return {keys.pop(): Counter({unit: isa.matrix_total})}
    shapes = {_instruction_shape(mnemonic) for mnemonic, *_ in isa.matrix_code}
    expected: Counter = Counter()
    for op in ops:
        n = _expected(op, m.layout_text.get(op.encoding, ""), shapes)
        if n is None:
            return None
        expected[op.loc.file, op.loc.line] += n
    if sum(expected.values()) != isa.matrix_total:
        return None
    return {k: Counter({unit: n}) for k, n in expected.items()}


def _instruction_shape(mnemonic: str) -> tuple | None:
    """(m, n, k) one matrix instruction computes, where its mnemonic says: HGMMA.64x128x16.F32,
    HMMA.16816.F32, v_mfma_f32_32x32x8_f16."""
    if (m := re.search(r"(\d+)x(\d+)x(\d+)", mnemonic)):
        return tuple(int(x) for x in m.groups())
    if (m := HMMA_SHAPE_RE.match(mnemonic)):
        return int(m["m"]), int(m["n"]), int(m["k"])
    return None


def _dims(pattern: re.Pattern, text: str) -> list[int]:
    m = pattern.search(text)
    return [int(x) for x in m["dims"].split(",")] if m else []


def _expected(op, layout: str, shapes: set) -> int | None:
    """Matrix instructions one thread's code has for a dot op: the tile over the warps along m and n
    (warpsPerCTA), cut into the instruction's m x n x k. None when the layout or the instruction's
    shape is not known (an FMA layout, a layout kinspect does not read)."""
    warps, instr = _dims(WARPS_RE, layout), _dims(INSTR_RE, layout)
    if None in (op.m, op.n, op.k) or len(warps) < 2 or not instr:
        return None
    known = [s for s in shapes if s is not None]
    version = VERSION_RE.search(layout)
    if "nvidia_mma" in layout and version and version["v"] == "3" and len(instr) == 3:
        im, inn, ik = 16, instr[1], instr[2]          # wgmma: 16 rows a warp, 4 warps a warpgroup
    elif "nvidia_mma" in layout and len(known) == 1:
        im, inn, ik = 16, instr[1] if len(instr) > 1 else known[0][1], known[0][2]
    elif "amd_mfma" in layout and len(instr) == 3:
        im, inn, ik = instr
    else:
        return None
    return _cdiv(op.m, im * warps[0]) * _cdiv(op.n, inn * warps[1]) * _cdiv(op.k, ik)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def relocate(isa: StageMetrics, placement: Placement) -> None:
    """Move the machine code's matrix instructions in its per-line table to where `placement` says."""
    if not placement.moved:
        return
    ops = {op for _, op, _, _ in isa.matrix_code}
    by_unit = {}
    for _, op, unit, _ in isa.matrix_code:
        by_unit.setdefault(unit, op)
    for key, ls in list(isa.lines.items()):
        n = sum(ls.matrix.values())
        if not n:
            continue
        ls.kinds["matrix"] -= n
        ls.kinds += Counter()           # drops the zero
        ls.matrix.clear()
        for op in ops:
            ls.ops.pop(op, None)
        if not ls.total:
            del isa.lines[key]
    for (file, line), units in placement.lines.items():
        ls = isa.lines.setdefault((file, line), LineStats(file, line))
        for unit, n in units.items():
            ls.matrix[unit] += n
            ls.kinds["matrix"] += n
            ls.ops[by_unit.get(unit, unit)] += n


def dot_lines(m: StageMetrics | None, kernel_file) -> dict[tuple[str, int], list]:
    """The kernel lines of an MLIR stage's matrix ops, with the ops."""
    found: dict[tuple[str, int], list] = {}
    for op in (m.matrix_ops if m else ()):
        if op.loc is not None and kernel_file(op.loc.file):
            found.setdefault((op.loc.file, op.loc.line), []).append(op)
    return found


FMA_LAYOUTS = ("blocked", "linear", "slice", "dot_op")


def layout_kind(m: StageMetrics, encoding: str) -> str:
    """`nvidia_mma`, `amd_mfma`, `blocked`, ... of an op's result encoding (an alias or inline name)."""
    text = m.layout_text.get(encoding, "")
    found = re.match(r"#[\w.$-]+\s*=\s*#\w+\.(\w+)<", text)
    return found.group(1) if found else encoding.rsplit(".", 1)[-1]
