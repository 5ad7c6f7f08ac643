"""RISC-V assembly (LLVM/GCC `.s`, RVV 1.0, SpacemiT IME) -> records.

Yields Function, Instruction and Resource records. Beyond the ISA table (kinspect/isa/riscv.py)
the operands decide:
- Space.STACK for loads/stores addressed from `sp`, or from `s0`/`fp` once the function has set
  it up as frame pointer (`addi s0, sp, N`), or carrying LLVM's "Spill"/"Reload" comment.
- vset* instructions: elem_bits = SEW, plus Resource("vtype:e32,m1") so the SEW/LMUL mix can be
  counted (Instruction has no operand field); `vsetvl` (vtype in a register) gives "vtype:dynamic".
- calls (`call`, `tail`, `jal ra`, `jalr`): Resource("call:<callee>"), "call:*" when indirect,
  so calls to `expf` or a vector math library stay visible.
- width = elem_bits for scalar loads/stores and scalar FP (one element); vector ops have no
  width (it depends on VL) but elem_bits where the mnemonic says it (vle32.v -> 32).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import AbstractSet, Iterable, Iterator, Sequence

from kinspect.ir import cpu_asm
from kinspect.ir.cpu_asm import Decoded, Flow, Stmt
from kinspect.ir.records import Kind, Record
from kinspect.isa import riscv as isa

# What this parser reads, for the one line that says a stage could not be read.
FORMATS = ("RISC-V assembly as LLVM or GNU objdump prints it",)

# vsetvli	a0, a1, e32, m1, ta, ma
VTYPE_RE = re.compile(r"\b(?:e(?P<sew>8|16|32|64)|m(?P<f>f)?(?P<lmul>[1248])|(?P<tail>t[au])"
                      r"|(?P<mask>m[au]))\b")
# ld	s7, %pcrel_lo(.Lpcrel_hi0)(a0)
BASE_RE = re.compile(r"\((\w+)\)$")          # the base register closes the operand

_STACK = frozenset({"sp", "x2"})
_FRAME = ("s0", "fp", "x8")
_CONDITIONAL = frozenset("beq bne blt bge bltu bgeu beqz bnez blez bgez bltz bgtz bgt ble bgtu bleu"
                         .split())
_MEMORY_KINDS = (Kind.LOAD, Kind.STORE, Kind.ATOMIC)


def vtype(operands: str | Sequence[str]) -> tuple[int, Fraction, bool, bool] | None:
    """(SEW, LMUL, tail-agnostic, mask-agnostic) from vsetvli/vsetivli operands; None for vsetvl.

    `vsetvli a0, a1, e32, mf2, ta, ma` -> (32, Fraction(1, 2), True, True). Omitted ta/ma mean
    undisturbed (the v1.0 default); an omitted LMUL means m1."""
    text = operands if isinstance(operands, str) else ", ".join(operands)
    sew, lmul, ta, ma = None, Fraction(1), False, False
    for m in VTYPE_RE.finditer(text):
        if m.group("sew"):
            sew = int(m.group("sew"))
        elif m.group("lmul"):
            n = int(m.group("lmul"))
            lmul = Fraction(1, n) if m.group("f") else Fraction(n)
        elif m.group("tail"):
            ta = m.group("tail") == "ta"
        else:
            ma = m.group("mask") == "ma"
    return None if sew is None else (sew, lmul, ta, ma)


def _vtype_resource(operands: tuple[str, ...]) -> tuple[str, int | None]:
    vt = vtype(operands)
    if vt is None:
        return "vtype:dynamic", None
    sew, lmul = vt[0], vt[1]
    text = f"m{lmul}" if lmul >= 1 else f"mf{lmul.denominator}"
    return f"vtype:e{sew},{text}", sew


def _flow(op: str, ops: tuple[str, ...]) -> tuple[Flow | None, tuple[str, ...]]:
    """Control flow and call resources of a CONTROL instruction."""
    target = ops[-1] if ops else None      # a truncated `j` or `tail` has no operand
    if op in _CONDITIONAL:
        return Flow(target, True), ()
    if op == "j" or (op == "jal" and len(ops) == 2 and ops[0] in ("zero", "x0")):
        return Flow(target, False), ()
    if op in ("call", "jal"):
        return None, (f"call:{cpu_asm.callee_name(target)}",) if ops else ()
    if op == "tail":
        return Flow(target, False), (f"call:{cpu_asm.callee_name(target)}",) if ops else ()
    if op == "jalr" and not (ops and ops[0] in ("zero", "x0")):
        return None, ("call:*",)                       # jalr rs / jalr ra, ...: indirect call
    if op in ("jr", "ret", "jalr"):
        return Flow(None, False), ()
    return None, ()


def _decode(stmt: Stmt, stack_regs: AbstractSet[str]) -> Decoded:
    op, ops = stmt.mnemonic, stmt.operands
    info, bits = isa.classify(op)
    if info.kind == Kind.OTHER:                      # unknown: counted as written, nothing guessed
        return Decoded(op, info)
    if info.kind == Kind.CONTROL:
        flow, calls = _flow(op, ops)
        return Decoded(op, info, flow=flow, resources=calls)
    if info.kind == Kind.CONFIG and op.startswith("vset"):
        name, sew = _vtype_resource(ops)
        return Decoded(op, info, elem_bits=sew, resources=(name,))
    if info.kind in _MEMORY_KINDS:
        address = next((o for o in ops if BASE_RE.search(o)), "")
        base = BASE_RE.search(address)
        space = cpu_asm.memory_space(bool(base and base.group(1) in stack_regs), address,
                                     stmt.comment)
        info = cpu_asm.variant(info, space=space)
    frame = _FRAME if op == "addi" and len(ops) == 3 and ops[0] in _FRAME and ops[1] in _STACK else ()
    width = None if info.vector else bits
    return Decoded(op, info, width=width, elem_bits=bits, frame_regs=frame)


DIALECT = cpu_asm.Dialect(isa="riscv", comments=("#",), stack_regs=_STACK, decode=_decode,
                          separator=";")


def parse(lines: str | Iterable[str]) -> Iterator[Record]:
    """Records for RISC-V assembly text (a str or any iterable of lines)."""
    return cpu_asm.parse(lines, DIALECT)
