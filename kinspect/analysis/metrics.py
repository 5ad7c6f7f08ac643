"""Metrics of one stage, accumulated from a parser's record stream in one pass (bounded memory)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from kinspect.ir.records import (Access, Function, FunctionParam, Instruction, Kind, Layout, MatrixOp, MemoryOp,
                                 Resource, SourceLoc, Space)

SCALAR_WIDTH = 32  # a GPU memory access wider than one 32-bit register per thread is vectorized
# Loads and stores whose widths are reported: device/host memory (CPU tables leave the space NONE),
# not constant banks, shared memory or spill slots.
MEMORY_SPACES = (Space.GLOBAL, Space.NONE)


@dataclass
class LineStats:
    """What one source line produced in one stage."""

    file: str
    line: int
    kinds: Counter = field(default_factory=Counter)   # Kind.value -> count
    ops: Counter = field(default_factory=Counter)     # op -> count
    matrix: Counter = field(default_factory=Counter)  # unit -> count
    load_widths: Counter = field(default_factory=Counter)
    # the same by the inlined helper lines they come from (SourceLoc.helper_lines; () for the line's own)
    helper_load_widths: dict = field(default_factory=dict)
    vector: int = 0
    scalar_fp: int = 0

    @property
    def total(self) -> int:
        return sum(self.kinds.values())


@dataclass
class StageMetrics:
    stage: str
    dialect: str
    instructions: int = 0
    kinds: Counter = field(default_factory=Counter)
    mnemonics: Counter = field(default_factory=Counter)       # op (table key) -> count
    forms: Counter = field(default_factory=Counter)           # mnemonic as written -> count
    vector: int = 0
    vector_kinds: Counter = field(default_factory=Counter)
    vector_units: Counter = field(default_factory=Counter)    # "avx512", "neon", "rvv", ... -> count
    matrix: Counter = field(default_factory=Counter)          # unit -> count
    scalar_fp: int = 0
    load_widths: Counter = field(default_factory=Counter)     # global/unit loads: bits -> count
    store_widths: Counter = field(default_factory=Counter)
    access: Counter = field(default_factory=Counter)          # unit/strided/indexed vector memory ops
    load_access: Counter = field(default_factory=Counter)     # the same, loads only
    vector_ops: Counter = field(default_factory=Counter)      # vector mnemonics as written -> count
    fp_forms: Counter = field(default_factory=Counter)        # vector FP "fma" / "mul" / "add" -> count
    reductions: Counter = field(default_factory=Counter)      # "ordered"/"unordered"/"other"
    spill_loads: int = 0
    spill_stores: int = 0
    spills_in_loops: int = 0
    shared_ops: int = 0
    special: int = 0
    other: int = 0
    functions: list[str] = field(default_factory=list)
    resources: dict[str, int] = field(default_factory=dict)
    vtypes: Counter = field(default_factory=Counter)          # RVV "e32,m1" -> count
    calls: Counter = field(default_factory=Counter)           # callee -> count
    layouts: Counter = field(default_factory=Counter)         # TTGIR layout kind -> count
    lines: dict[tuple[str, int], LineStats] = field(default_factory=dict)
    matrix_ops: list[MatrixOp] = field(default_factory=list)  # MLIR: dot ops with their shapes and layouts
    memory_ops: list[MemoryOp] = field(default_factory=list)  # MLIR: global loads, with what the compiler knows
    params: dict[str, tuple[FunctionParam, ...]] = field(default_factory=dict)   # MLIR: function -> its arguments
    layout_text: dict[str, str] = field(default_factory=dict)  # MLIR: layout alias -> its definition
    # matrix instructions in text order: (mnemonic as written, op, unit, source location)
    matrix_code: list[tuple[str, str, str, SourceLoc | None]] = field(default_factory=list)
    text_lines: int = 0                                       # non-blank lines of the stage's text
    first_line: str = ""                                      # its first non-blank line
    unreadable: str | None = None                             # why it is no evidence (analysis.readable)

    @property
    def matrix_total(self) -> int:
        return sum(self.matrix.values())


def is_vector(ins: Instruction, gpu: bool) -> bool:
    if ins.info.vector:
        return True
    # On GPUs every op is per thread; a memory op moving more than a register's worth is vectorized.
    return gpu and ins.info.kind in (Kind.LOAD, Kind.STORE) and (ins.width or 0) > SCALAR_WIDTH


def fp_form(kind: Kind, op: str) -> str | None:
    """"fma" for a fused multiply-add, "mul"/"add" for a separate multiply or add/sub, else None."""
    if kind is Kind.FMA:
        return "fma"
    if kind is not Kind.ARITH:
        return None
    base = op.lower().lstrip("v").split(".", 1)[0]
    if base.startswith(("fmul", "mul", "fwmul")):
        return "mul"
    if base.startswith(("fadd", "fsub", "add", "sub", "fwadd", "fwsub")) and not base.startswith(("addr", "subr")):
        return "add"
    return None


def _is_spill(ins: Instruction) -> bool:
    return ins.info.kind in (Kind.LOAD, Kind.STORE) and ins.info.space in (Space.LOCAL, Space.STACK)


def measure(stage: str, dialect: str, records: Iterable, *, gpu: bool) -> StageMetrics:
    m = StageMetrics(stage=stage, dialect=dialect)
    for r in records:
        if isinstance(r, Instruction):
            _add(m, r, gpu)
        elif isinstance(r, Resource):
            _resource(m, r)
        elif isinstance(r, Function):
            m.functions.append(r.name)
            if r.params:
                m.params[r.name] = r.params
        elif isinstance(r, Layout):
            m.layouts[r.kind] += 1
            m.layout_text[r.alias] = r.text
        elif isinstance(r, MatrixOp):
            m.matrix_ops.append(r)
        elif isinstance(r, MemoryOp):
            m.memory_ops.append(r)
    return m


def _resource(m: StageMetrics, r: Resource) -> None:
    if r.name.startswith("vtype:"):
        m.vtypes[r.name[len("vtype:"):]] += r.value
    elif r.name.startswith("call:"):
        m.calls[r.name[len("call:"):]] += r.value
    else:
        # several functions: keep the largest figure (the kernel's, not a helper's)
        m.resources[r.name] = max(m.resources.get(r.name, r.value), r.value)


def _add(m: StageMetrics, ins: Instruction, gpu: bool) -> None:
    info, kind = ins.info, ins.info.kind
    m.instructions += 1
    m.kinds[kind.value] += 1
    m.mnemonics[ins.op] += 1
    m.forms[ins.mnemonic] += 1
    vector = is_vector(ins, gpu)
    scalar_fp = info.fp and not vector and kind in (Kind.ARITH, Kind.FMA, Kind.REDUCE)
    if vector:
        m.vector += 1
        m.vector_kinds[kind.value] += 1
        if info.unit:
            m.vector_units[info.unit] += 1
    if scalar_fp:
        m.scalar_fp += 1
    if kind is Kind.MATRIX:
        m.matrix[info.unit or "matrix"] += 1
        m.matrix_code.append((ins.mnemonic, ins.op, info.unit or "matrix", ins.loc))
    elif kind is Kind.OTHER:
        m.other += 1
    elif kind is Kind.SPECIAL:
        m.special += 1
    elif kind is Kind.REDUCE:
        m.reductions["ordered" if info.ordered else "unordered" if info.ordered is False else "other"] += 1
    if _is_spill(ins):
        if kind is Kind.LOAD:
            m.spill_loads += 1
        else:
            m.spill_stores += 1
        m.spills_in_loops += ins.in_loop
    elif kind in (Kind.LOAD, Kind.STORE):
        if info.space is Space.SHARED:
            m.shared_ops += 1
        elif ins.width and info.space in MEMORY_SPACES:
            (m.load_widths if kind is Kind.LOAD else m.store_widths)[ins.width] += 1
    if info.access is not Access.NONE:
        m.access[info.access.value] += 1
        if kind is Kind.LOAD:
            m.load_access[info.access.value] += 1
    if vector:
        m.vector_ops[ins.mnemonic] += 1
        if info.fp:
            form = fp_form(kind, ins.op)
            if form:
                m.fp_forms[form] += 1
    if ins.loc is not None:
        key = (ins.loc.file, ins.loc.line)
        ls = m.lines.get(key)
        if ls is None:
            ls = m.lines[key] = LineStats(ins.loc.file, ins.loc.line)
        ls.kinds[kind.value] += 1
        ls.ops[ins.op] += 1
        ls.vector += vector
        ls.scalar_fp += scalar_fp
        if kind is Kind.MATRIX:
            ls.matrix[info.unit or "matrix"] += 1
        if kind is Kind.LOAD and ins.width and info.space in MEMORY_SPACES:
            ls.load_widths[ins.width] += 1
            ls.helper_load_widths.setdefault(ins.loc.helper_lines, Counter())[ins.width] += 1
