"""What an instruction is: the vocabulary ISA tables (kinspect.isa) and parsers (kinspect.ir) share,
and the one classifier every opcode table uses.

A table maps a mnemonic to an OpInfo (its Kind, whether it is vector or floating point, the memory
space and access it makes, ...). `Table` looks a mnemonic up the same way for every ISA: exact names
first, then the patterns of regular families in order (`vle32.v`, `fadd.s`), then name prefixes
(`v_mfma_`), first match wins; a mnemonic no entry names is OTHER, never a guess.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, NamedTuple


class Kind(enum.Enum):
    """What an instruction does, coarsely."""

    LOAD = "load"
    STORE = "store"
    ATOMIC = "atomic"
    ARITH = "arith"          # add, mul, min, compare, logic, shifts, ...
    FMA = "fma"              # fused multiply-add / multiply-accumulate
    MATRIX = "matrix"        # tensor cores, MFMA, AMX, IME, SME
    REDUCE = "reduce"        # horizontal reductions (RVV vfred*, x86 hadd, NEON faddp/addv)
    CONVERT = "convert"
    MOVE = "move"            # register moves, shuffles, permutes, broadcasts
    SPECIAL = "special"      # transcendental units: MUFU, v_exp, ...
    CONTROL = "control"      # branches, calls, returns, predicates
    CONFIG = "config"        # vsetvli, tile config, mode setting
    SYNC = "sync"            # barriers, fences, waits
    NOP = "nop"              # padding and hazard no-ops: known, do no work
    OTHER = "other"          # not in the table: counted, never guessed


class Space(enum.Enum):
    """Where a memory instruction goes."""

    GLOBAL = "global"
    SHARED = "shared"        # CUDA shared memory / AMD LDS
    LOCAL = "local"          # CUDA local memory = register spills (LDL/STL)
    STACK = "stack"          # CPU stack (spills when inside loops)
    CONSTANT = "constant"
    TENSOR = "tensor"        # TMA / tensor memory
    NONE = "none"


class Access(enum.Enum):
    """How a vector memory instruction walks memory."""

    UNIT = "unit"            # contiguous (vle32.v, LDG.E.128, ld.global.v4)
    STRIDED = "strided"      # vlse32.v
    INDEXED = "indexed"      # gathers / scatters (vluxei, vgatherdps)
    NONE = "none"


@dataclass(frozen=True)
class OpInfo:
    """What the ISA table says about a mnemonic."""

    kind: Kind
    vector: bool = False     # SIMD/vector register operation (not a per-thread GPU scalar)
    fp: bool = False         # floating point
    space: Space = Space.NONE
    access: Access = Access.NONE
    ordered: bool | None = None   # reductions: True = ordered (sequential), False = tree
    unit: str = ""           # optional finer family: "hmma", "hgmma", "mfma", "rvv", "avx512", "neon", "sve", "amx", "ime"


OTHER = OpInfo(Kind.OTHER)


class Match(NamedTuple):
    info: OpInfo
    bits: int | None          # element bits the mnemonic itself states (lw 32, vle16.v 16, fadd.d 64, movl 32)


UNKNOWN = Match(OTHER, None)


def merge(*groups: Mapping, where: str) -> dict:
    """One table from several groups of entries; a name listed twice is an import-time error,
    not a silent override."""
    table: dict = {}
    for group in groups:
        for name, value in group.items():
            if name in table:
                raise ValueError(f"{where} lists {name!r} twice")
            table[name] = value
    return table


def named(value, names: str) -> dict:
    """{name: value} for every whitespace-separated name in `names`."""
    return {name: value for name in names.split()}


def grouped(*groups: tuple[OpInfo, str], where: str) -> dict[str, OpInfo]:
    """{opcode: info} from (info, "OP1 OP2 ...") groups, in order; a duplicate is an import error."""
    return merge(*(named(info, names) for info, names in groups), where=where)


def stated(table: Mapping[str, OpInfo]) -> dict[str, tuple[OpInfo, None]]:
    """A table whose names state no element width, as Table.exact entries."""
    return {name: (info, None) for name, info in table.items()}


class Table:
    """The classifier of one ISA's mnemonics (see the module docstring). `exact` maps a name to its
    (OpInfo, element bits it states); `rules` are (pattern, OpInfo) for regular families, whose named
    group `bits` (a number), or another group looked up in `group_bits`, gives the element bits;
    `prefixes` are (prefix, OpInfo) pairs, narrower before wider; `respell` gives another spelling to look
    up when nothing matched (a compressed RISC-V `c.addi` is `addi`)."""

    def __init__(self, where: str, exact: Mapping[str, tuple[OpInfo, int | None]], *,
                 rules: tuple[tuple[re.Pattern, OpInfo], ...] = (), group_bits: Mapping[str, int] | None = None,
                 prefixes: Iterable[tuple[str, OpInfo]] = (), respell: Callable[[str], str | None] | None = None):
        self.where = where
        self.exact = dict(exact)
        self.rules = tuple(rules)
        self.group_bits = dict(group_bits or {})
        self.prefixes = tuple(prefixes)
        self.respell = respell
        self._memo: dict[str, Match] = {}

    def classify(self, op: str) -> Match:
        """OpInfo and stated element bits of a mnemonic (as the table spells it); UNKNOWN when no entry
        names it."""
        found = self._memo.get(op)
        if found is None:
            found = self._classify(op)
            if len(self._memo) < 8192:       # a listing repeats a few hundred distinct mnemonics
                self._memo[op] = found
        return found

    def lookup(self, op: str) -> OpInfo:
        return self.classify(op).info

    def _classify(self, op: str) -> Match:
        entry = self.exact.get(op)
        if entry is not None:
            return Match(*entry)
        for pattern, info in self.rules:
            m = pattern.match(op)
            if m:
                return Match(info, self._bits(m))
        for prefix, info in self.prefixes:
            if op.startswith(prefix):
                return Match(info, None)
        other = self.respell(op) if self.respell else None
        if other is not None and other != op:
            return self.classify(other)
        return UNKNOWN

    def _bits(self, m: re.Match) -> int | None:
        for value in m.groupdict().values():
            if value is None:
                continue
            if value.isdigit():
                return int(value)
            if value in self.group_bits:
                return self.group_bits[value]
        return None


def longest_prefix(table: Mapping[str, OpInfo], name: str, depth: int | None = None) -> tuple[str, OpInfo]:
    """(key, info) for the longest dotted prefix of `name` in `table` (at most `depth` components),
    or (name, OTHER): `llvm.vector.reduce.fadd.v16f32` finds `llvm.vector.reduce.fadd`."""
    parts = name.split(".")
    for n in range(min(len(parts), depth or len(parts)), 0, -1):
        key = ".".join(parts[:n])
        if key in table:
            return key, table[key]
    return name, OTHER
