"""x86-64 assembly in AT&T syntax (what LLVM and GCC print by default) -> records.

Yields Function, Instruction and Resource records. Beyond the ISA table (kinspect/isa/x86.py)
the operands decide:
- unit: "avx512" when a zmm, k-mask, xmm16-31/ymm16-31 register or an EVEX `{...}` decoration
  is named (or the mnemonic exists only EVEX-encoded), "avx" for other v-prefixed SIMD, "sse"
  for legacy SIMD; table units (amx, x87) stay.
- width: for packed (vector) ops the widest xmm/ymm/zmm register named (128/256/512); for
  scalar FP and suffixed GPR ops the element bits (vaddss 32, movl 32). lanes = width/elem_bits.
- memory: the AT&T memory operand `disp(base,index,scale)`. A MOVE-family instruction with one
  becomes LOAD (memory source) or STORE (memory destination, the last operand); others keep their
  kind (a folded load: `vaddss 4(%rsi), %xmm0, %xmm0` stays ARITH) but get a Space: STACK when
  based on %rsp, on %rbp once the function set it up as frame pointer (`movq %rsp, %rbp`), or
  carrying LLVM's "Spill"/"Reload" comment; CONSTANT for `.LCPI*` constant-pool labels; else
  GLOBAL. A `lock` prefix makes it ATOMIC.
- calls (`callq expf@PLT`, `callq *expf@GOTPCREL(%rip)`, tail `jmp expf`):
  Resource("call:expf"); "call:*" for calls through a register.

Intel syntax is rejected with a ParseError (a `.intel_syntax` directive, or `PTR [` operands):
operand order and memory syntax differ, and LLVM and GCC emit AT&T unless asked otherwise.
"""

from __future__ import annotations

import functools
import re
from typing import AbstractSet, Iterable, Iterator, NamedTuple

from kinspect.core.errors import ParseError
from kinspect.ir import cpu_asm
from kinspect.ir.cpu_asm import Decoded, Flow, Stmt
from kinspect.ir.records import Access, Kind, OpInfo, Record, Space
from kinspect.isa import x86 as isa

# What this parser reads, for the one line that says a stage could not be read.
FORMATS = ("x86-64 assembly (AT&T or Intel syntax) as LLVM or GNU objdump prints it",)

# vmovups	(%rdi), %zmm0
VREG_RE = re.compile(r"%([xyz])mm(\d+)")
# vaddps	%zmm1, %zmm0, %zmm0 {%k1} {z}
EVEX_OPERAND_RE = re.compile(r"%k[0-7]\b|\{")
# movq	-64(%rbp), %rax
BASE_RE = re.compile(r"\(\s*%(\w+)")
# movq	%fs:40, %rax
SEGMENT_RE = re.compile(r"%[c-gs]s:")
# mov	eax, DWORD PTR [rbp - 4]
INTEL_RE = re.compile(r"\bptr\s*\[", re.IGNORECASE)

_VREG_BITS = {"x": 128, "y": 256, "z": 512}
_PREFIXES = frozenset("lock rep repe repz repne repnz notrack data16 rex64 {vex} {vex2} {vex3} {evex}"
                      .split())
_STACK = frozenset({"rsp", "esp"})
_FRAME = ("rbp", "ebp")
_RETURNS = frozenset("ret retq retl ud2 hlt".split())
_INTEL = ("Intel-syntax x86 assembly is not supported; emit AT&T syntax (the LLVM/GCC default, "
          "e.g. without -masm=intel / --x86-asm-syntax=intel)")


def _is_memory(operand: str) -> bool:
    if operand.startswith(("$", "{")):
        return False
    if operand.startswith("%"):
        return bool(SEGMENT_RE.match(operand))
    return "(" in operand


def _flow(op: str, ops: tuple[str, ...]) -> tuple[Flow | None, tuple[str, ...]]:
    target = ops[0] if ops else ""
    if op.startswith("call"):
        return None, (f"call:{cpu_asm.callee_name(target)}",) if target else ()
    if op in ("jmp", "jmpq", "jmpl"):
        name = cpu_asm.callee_name(target)
        if target.startswith("*"):                       # jump table, or tail call via memory
            calls = (f"call:{name}",) if name != "*" and not cpu_asm.is_local_label(name) else ()
            return Flow(None, False), calls
        calls = () if cpu_asm.is_local_label(name) else (f"call:{name}",)   # tail call
        return Flow(target, False), calls
    if op.startswith("j") or op.startswith("loop"):
        return Flow(target or None, True), ()
    if op in _RETURNS:
        return Flow(None, False), ()
    return None, ()


def _strip_prefixes(op: str, ops: tuple[str, ...]) -> tuple[str, tuple[str, ...], str]:
    """`lock cmpxchgl %ecx, (%rdi)` -> ("cmpxchgl", ("%ecx", "(%rdi)"), "lock ")."""
    prefixes = ""
    while op in _PREFIXES and ops:
        prefixes += op + " "
        first = ops[0].split(None, 1)
        op = first[0].lower()
        ops = tuple(first[1:]) + ops[1:]
    return op, ops, prefixes


def _memory_info(info: OpInfo, ops: tuple[str, ...], at: int, comment: str,
                 stack_regs: AbstractSet[str], lock: bool) -> OpInfo:
    address = ops[at]
    base = BASE_RE.search(address)
    space = info.space if info.space == Space.TENSOR else cpu_asm.memory_space(
        bool(base and base.group(1) in stack_regs), address, comment)
    kind = info.kind
    if kind == Kind.MOVE:
        kind = Kind.STORE if at == len(ops) - 1 else Kind.LOAD
    if lock:
        kind = Kind.ATOMIC
    access = info.access
    if info.vector and kind in (Kind.LOAD, Kind.STORE) and access == Access.NONE:
        access = Access.UNIT
    return cpu_asm.variant(info, kind=kind, space=space, access=access)


class _Static(NamedTuple):
    """What the mnemonic alone says, computed once per mnemonic."""

    info: OpInfo
    bits: int | None
    address_only: bool
    evex_only: bool
    vex: bool


@functools.lru_cache(maxsize=4096)
def _static(op: str) -> _Static:
    info, bits = isa.classify(op)
    return _Static(info, bits, bool(isa.ADDRESS_ONLY_RE.match(op)), bool(isa.EVEX_ONLY_RE.search(op)),
                   op.startswith("v") and info.kind != Kind.OTHER)


def _unit(info: OpInfo, st: _Static, text: str, regs: list[tuple[str, str]]) -> str:
    if info.unit:
        return info.unit
    if st.evex_only or ("%k" in text or "{" in text) and EVEX_OPERAND_RE.search(text) or any(
            r == "z" or len(n) > 1 and int(n) >= 16 for r, n in regs):
        return "avx512"
    if st.vex:                                        # VEX-encoded, vzeroupper included
        return "avx"
    return "sse" if regs or info.vector else ""


def _decode(stmt: Stmt, stack_regs: AbstractSet[str]) -> Decoded:
    op, ops, prefixes = _strip_prefixes(stmt.mnemonic, stmt.operands)
    lock = "lock" in prefixes
    text = ", ".join(ops)
    if "[" in text and INTEL_RE.search(text):
        raise ParseError(_INTEL, line=stmt.line)
    st = _static(op)
    info, bits = st.info, st.bits
    if info.kind == Kind.OTHER:                      # unknown: counted as written, nothing guessed
        return Decoded(op, info, mnemonic=prefixes + op)
    if info.kind == Kind.CONTROL:
        flow, calls = _flow(op, ops)
        return Decoded(op, info, flow=flow, resources=calls, mnemonic=prefixes + op)
    if not st.address_only and ("(" in text or "%" in text and ":" in text):
        at = next((i for i, o in enumerate(ops) if _is_memory(o)), None)
        if at is not None:
            info = _memory_info(info, ops, at, stmt.comment, stack_regs, lock)
    regs = VREG_RE.findall(text) if "mm" in text else []
    info = cpu_asm.variant(info, unit=_unit(info, st, text, regs))
    if info.vector:
        width = max((_VREG_BITS[r] for r, _ in regs), default=None)
        lanes = width // bits if width and bits else None
    else:
        width, lanes = bits, None
    frame = _FRAME if op in ("movq", "mov") and ops == ("%rsp", "%rbp") else ()
    return Decoded(op, info, width=width, elem_bits=bits, lanes=lanes, frame_regs=frame,
                   mnemonic=prefixes + op)


DIALECT = cpu_asm.Dialect(isa="x86", comments=("#",), stack_regs=_STACK, decode=_decode,
                          separator=";", rejects={".intel_syntax": _INTEL})


def parse(lines: str | Iterable[str]) -> Iterator[Record]:
    """Records for x86-64 AT&T assembly text (a str or any iterable of lines)."""
    return cpu_asm.parse(lines, DIALECT)
