"""AArch64 assembly (LLVM/GCC, ELF `//` comments or Apple `;` comments and `add.16b` syntax)
-> records.

Yields Function, Instruction and Resource records. The ISA table (kinspect/isa/aarch64.py) gives
the base kind; on AArch64 the registers say the rest, so the parser derives a new OpInfo (shared
through cpu_asm.variant) with:
- unit/vector: "sme" when ZA is named; "sve" for z registers or p predicates; "neon" for
  v registers (`v0.4s`, Apple `add.16b v0, ...`, lanes `v0.s[1]`) or a q register loaded or
  stored; otherwise scalar (`fadd s0, s0, s1`, `ldr d0`: a d register may hold two floats, but
  nothing in the text says so).
- width: NEON arrangement bits (`v0.4s` 128, `v0.2s` 64); for loads/stores the bits moved by all
  data registers (`ldr q0` 128, `ldp q0, q1` 256, lane `ld1 {v0.s}[1]` 32); scalar FP ops the
  register bits (`fadd s0` 32); SVE is scalable, so None.
- elem_bits/lanes from the arrangement (`.4s` -> 32 x 4), the SVE suffix (`z0.s` -> 32), the
  mnemonic (`ld1w`, `ldrb`) or the scalar register (`s0` 32, `d0` 64, `x0` 64, `w0` 32).
- fp: the table's (FP mnemonics), or a scalar h/s/d register moved to or from memory.
- memory: Space.STACK when based on `sp`, on `x29`/`fp` once set up as frame pointer
  (`mov x29, sp`), or carrying LLVM's "Spill"/"Reload" comment; CONSTANT for constant-pool labels
  (`lCPI0_0@PAGEOFF`); vector loads/stores are UNIT, INDEXED when a z register is in the address.
- calls (`bl expf`, tail `b expf`): Resource("call:expf"); "call:*" for `blr`.
"""

from __future__ import annotations

import re
from typing import AbstractSet, Iterable, Iterator

from kinspect.ir import cpu_asm
from kinspect.ir.cpu_asm import Decoded, Flow, Stmt
from kinspect.ir.records import Access, Kind, OpInfo, Record
from kinspect.isa import aarch64 as isa

# What this parser reads, for the one line that says a stage could not be read.
FORMATS = ("AArch64 assembly as LLVM or GNU objdump prints it",)

# add.16b	v0, v1, v2
APPLE_ARRANGEMENT_RE = re.compile(r"^([a-z][a-z0-9]*)\.(\d*)([bhsdq])\b")   # Apple: `ld1.s` = one lane
# fadd	v0.4s, v1.4s, v2.4s
VREG_RE = re.compile(r"\bv(\d+)(?:\.(\d*)([bhsdq]))?")
# ld1	{ v0.16b-v3.16b }, [x0]
VRANGE_RE = re.compile(r"\bv(\d+)(?:\.\d*[bhsdq])?\s*-\s*v(\d+)")
# ldp	q0, q1, [x0, #32]
SCALAR_REG_RE = re.compile(r"\b([bhsdqxw])(\d+|zr)\b")
# ld1w	{ z0.s }, p0/z, [x0, x1, lsl #2]
ZREG_RE = re.compile(r"\bz\d+(?:\.([bhsdq]))?\b")
# whilelo	p0.s, x8, x9
PREG_RE = re.compile(r"\bp\d+(?:/[zm]|\.[bhsdq])?(?!\w)")
# fmopa	za0.s, p0/m, p1/m, z0.s, z1.s
ZA_RE = re.compile(r"\bza(?:\d*[hv]?)?(?:\.[bhsdq])?\b")
# str	q0, [sp, #16]
BASE_RE = re.compile(r"\[\s*(\w+)")

_BITS = {"b": 8, "h": 16, "s": 32, "d": 64, "q": 128, "x": 64, "w": 32}
_STACK = frozenset({"sp", "wsp"})
_FRAME = ("x29", "fp")
_CONDITIONAL = frozenset("cbz cbnz tbz tbnz".split())
_RETURNS = frozenset("br braa brab ret retaa retab eret brk hlt udf".split())
_MEMORY = (Kind.LOAD, Kind.STORE, Kind.ATOMIC)


def _flow(op: str, ops: tuple[str, ...]) -> tuple[Flow | None, tuple[str, ...]]:
    target = ops[-1] if ops else ""
    if op in _CONDITIONAL or op.startswith(("b.", "bc.")):
        return Flow(target or None, True), ()
    if op == "b":
        calls = () if cpu_asm.is_local_label(target) else (f"call:{cpu_asm.callee_name(target)}",)
        return Flow(target, False), calls
    if op == "bl":
        return None, (f"call:{cpu_asm.callee_name(target)}",)
    if op.startswith("blr"):
        return None, ("call:*",)
    if op in _RETURNS:
        return Flow(None, False), ()
    return None, ()


def _reg_bits(text: str, arrangement: tuple[str, str] | None, stated: int | None) -> int | None:
    """Bits held by the data registers named in `text` (for loads/stores); None if scalable."""
    if ZREG_RE.search(text) or ZA_RE.search(text):
        return None
    total = 0
    for count, letter in ((m.group(2), m.group(3)) for m in VREG_RE.finditer(text)):
        if not letter and arrangement:
            count, letter = arrangement
        if not letter:
            return None
        total += _BITS[letter] * int(count) if count else _BITS[letter]
    for m in VRANGE_RE.finditer(text):                      # a range names only its two ends
        per = total // 2 if total else 0
        total += per * (int(m.group(2)) - int(m.group(1)) - 1)
    for letter, _ in SCALAR_REG_RE.findall(text):
        total += stated or _BITS[letter]
    return total or None


def _neon(text: str, ops: tuple[str, ...], arrangement: tuple[str, str] | None):
    """(width, elem_bits, lanes) of the widest NEON arrangement named; None without v registers.

    A lane (`v0.s[1]`, Apple `v0[1]` next to `s1`) counts as one element: still a SIMD-register
    operation, but 32 bits wide, so a lane-by-lane reduction does not look like 128-bit work."""
    best = None
    for m in VREG_RE.finditer(text):
        count, letter = m.group(2), m.group(3)
        if not letter and arrangement:
            count, letter = arrangement
        elem = _BITS[letter] if letter else _scalar_bits(ops)
        lanes = int(count) if count else 1
        bits = elem * lanes if elem else 0
        if best is None or bits > (best[0] or 0):
            best = (bits or None, elem, lanes)
    return best


def _scalar_bits(ops: tuple[str, ...]) -> int | None:
    """Bits of the first scalar FP/SIMD or general register (`s0` 32, `x8` 64)."""
    for o in ops:
        m = SCALAR_REG_RE.match(o)
        if m:
            return _BITS[m.group(1)]
    return None


def _memory(ops: tuple[str, ...], comment: str, stack_regs: AbstractSet[str]):
    """(space, access, index of the address operand) for a load/store."""
    at = next((i for i, o in enumerate(ops) if o.startswith("[")), len(ops))
    address = ops[at] if at < len(ops) else ""
    base = BASE_RE.match(address)
    space = cpu_asm.memory_space(bool(base and base.group(1) in stack_regs), address, comment)
    access = Access.INDEXED if ZREG_RE.search(address) else Access.UNIT
    return space, access, at


def _vector_unit(info: OpInfo, stated: int | None, ops: tuple[str, ...],
                 arrangement: tuple[str, str] | None):
    """(unit, width, elem_bits, lanes) from the register classes; unit "" for scalar code."""
    text = ", ".join(ops)
    z = ZREG_RE.search(text)
    if ZA_RE.search(text):
        return "sme", None, stated or (_BITS[z.group(1)] if z and z.group(1) else None), None
    if z or PREG_RE.search(text):
        return info.unit or "sve", None, stated or (_BITS[z.group(1)] if z and z.group(1) else None), None
    neon = _neon(text, ops, arrangement)
    if neon or (info.kind in _MEMORY and ops and ops[0].startswith("q")):
        return ("neon", *(neon or (None, None, None)))
    return info.unit, None, None, None


def _decode(stmt: Stmt, stack_regs: AbstractSet[str]) -> Decoded:
    op, ops = stmt.mnemonic, stmt.operands
    arrangement = None
    m = APPLE_ARRANGEMENT_RE.match(op)
    if m:
        op, arrangement = m.group(1), (m.group(2), m.group(3))
    info, stated = isa.classify(op)
    if info.kind == Kind.OTHER:                      # unknown: counted as written, nothing guessed
        return Decoded(op, info)
    if info.kind == Kind.CONTROL:
        flow, calls = _flow(op, ops)
        return Decoded(op, info, flow=flow, resources=calls)
    unit, width, elem, lanes = _vector_unit(info, stated, ops, arrangement)
    changes: dict = {}
    if info.kind in _MEMORY:
        space, access, at = _memory(ops, stmt.comment, stack_regs)
        changes["space"] = space
        width = _reg_bits(", ".join(ops[:at]), arrangement, stated)
        if unit:
            changes["access"] = access
        elif ops and ops[0][:1] in "hsd" and SCALAR_REG_RE.match(ops[0]):
            changes["fp"] = True                 # scalar FP register loaded or stored
    if unit:
        changes.update(unit=unit, vector=True)
    elif elem is None:
        elem = stated or _scalar_bits(ops)
        if width is None and (info.fp or changes.get("fp")):
            width = elem
    if elem is None:
        elem = stated
    frame = _FRAME if (op in ("mov", "add") and len(ops) >= 2 and ops[0] in _FRAME
                       and ops[1] == "sp") else ()
    return Decoded(op, cpu_asm.variant(info, **changes), width=width, elem_bits=elem,
                   lanes=lanes, frame_regs=frame)


# `;` starts a comment in Apple's syntax; in GNU as for ELF it separates statements, but LLVM's
# ELF printer never puts two statements on a line, so treating it as a comment is safe for both.
DIALECT = cpu_asm.Dialect(isa="aarch64", comments=("//", ";"), stack_regs=_STACK, decode=_decode)


def parse(lines: str | Iterable[str]) -> Iterator[Record]:
    """Records for AArch64 assembly text (a str or any iterable of lines)."""
    return cpu_asm.parse(lines, DIALECT)
