"""Parse PTX text (what Triton's `.ptx` stage holds).

parse(lines) yields, in text order:
  Function     at `.entry name(` / `.func name(` (declarations marked `.extern` are skipped);
  Resource     per `.reg` declaration: "ptx_reg_<type>" = how many virtual registers of that
               type it declares (`.reg .f32 %f<123>;` -> ptx_reg_f32 = 123). These are ptxas'
               input, not physical registers (those are in the SASS resource usage). Also
               "threads" from `.reqntid` and "max_registers" from `.maxnreg`;
  Instruction  per statement; op = the PTX table key (`ld`, `wgmma.mma_async`). State space
               (`.global`, `.shared`, `.local`, `.param`/`.const` = CONSTANT) comes from the
               qualifiers; width = lanes x type bits for memory ops (`ld.global.v4.b32` -> 128,
               `.v4` marks it vector with Access.UNIT), cp.async's byte count x 8; elem_bits
               and lanes from the type (`add.f16x2` -> 16 bits x 2 lanes); fp when a type is
               floating point.

Source locations come from `.loc FILE LINE COL` and the `.file N "path"` table. Triton's PTX
declares `.file` at the END, after the code, so records wait in a queue until every file they
name is declared (at most _MAX_PENDING records; past that, or at the end of the text, an
undeclared file falls back to the name in the `.loc` comment). `.loc ..., inlined_at F L C`
names only one level of inlining; the outermost call site is recovered by remembering where
each inlined location was itself inlined, so instructions get the kernel line, as in SASS.
"""

from __future__ import annotations

import functools
import re
from collections import deque
from dataclasses import replace
from typing import Iterable, Iterator, Union

from kinspect.ir.records import (check_text, Access, Function, Instruction, Kind, OpInfo, Record,
                                 Resource, SourceLoc, Space, iter_lines)
from kinspect.isa import nvidia

# What this parser reads, for the one line that says a stage could not be read.
FORMATS = ("PTX text (.ptx)",)

# .visible .entry fused_mm_softmax_kernel(
# .func  (.param .b32 func_retval0) helper(
_FUNCTION = re.compile(r"^\s*(?P<extern>\.extern\s+)?(?:\.(?:visible|weak)\s+)*\.(?:entry|func)\s+"
                       r"(?:\([^)]*\)\s*)?(?P<name>[\w$]+)")

# 	.loc	1 22 25                         // fused_mm_softmax.py:22:25
# 	.loc	2 196 12, function_name $L__info_string0, inlined_at 2 216 16 // standard.py:196:12
_LOC = re.compile(r"^\s*\.loc\s+(?P<file>\d+)\s+(?P<line>\d+)\s+(?P<col>\d+)"
                  r"(?:.*?inlined_at\s+(?P<ifile>\d+)\s+(?P<iline>\d+)\s+(?P<icol>\d+))?"
                  r"(?:.*?//\s*(?P<hint>[^:\s]+):)?")

# 	.file	1 "/work/main/kernels/fused_mm_softmax.py"
_FILE = re.compile(r'^\s*\.file\s+(?P<index>\d+)\s+"(?P<path>[^"]*)"')

# 	.reg .f32 	%f<123>;
_REG = re.compile(r"^\s*\.reg\s+(?:\.v\d+\s+)?\.(?P<type>\w+)\s+(?P<names>[^;]+);?\s*$")

# %f<123>
_REG_RANGE = re.compile(r"^%?[\w$]+<(?P<count>\d+)>$")

# .reqntid 128
_REQNTID = re.compile(r"^\s*\.reqntid\s+(?P<dims>\d+(?:\s*,\s*\d+)*)")

# .maxnreg 128
_MAXNREG = re.compile(r"^\s*\.maxnreg\s+(?P<count>\d+)")

# $L__BB0_2:
_LABEL = re.compile(r"^(?P<name>[\w$.]+):(?!:)\s*")

# @%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ]
_INSTRUCTION = re.compile(r"^(?:@!?%?[\w$]+\s+)?(?P<mnemonic>[a-z][a-z0-9_]*(?:\.[\w:]+)*)"
                          r"(?=\s|$)(?!\s*:)(?P<operands>.*)$")

# [ %r116 + 0 ], [ %rd65 + 0 ], 0x10, %r118
_CP_SIZE = re.compile(r"\]\s*,\s*(?P<bytes>0x[0-9a-fA-F]+|\d+)\s*(?:,|$)")

# "\x7fELF\x02\x01\x01\x00"

_MAX_PENDING = 100_000       # records held while waiting for .file lines (~20 MB)
_VECTOR_SPACES = (Space.GLOBAL, Space.SHARED, Space.LOCAL)

_LocRef = tuple[int, int, int, str]     # (file index, line, column, file name from the comment)


@functools.lru_cache(maxsize=4096)      # a module repeats a few hundred distinct mnemonics
def _shape(mnemonic: str) -> tuple[str, OpInfo, int | None, int | None, int | None]:
    """(op, info, width, elem_bits, lanes) that a PTX mnemonic states by itself."""
    op, info = nvidia.ptx_info(mnemonic)      # the table's entry, its state space and float type
    qualifiers = mnemonic.split(".")[1:]
    types = [q for q in qualifiers if q in nvidia.PTX_TYPES]
    elem_bits, lanes = nvidia.PTX_TYPES[types[0]] if types else (None, None)
    vector = next((int(q[1:]) for q in qualifiers if q in ("v2", "v4", "v8")), None)
    spaces = [nvidia.PTX_SPACES[q] for q in qualifiers if q in nvidia.PTX_SPACES]
    width = None
    if info.kind in (Kind.LOAD, Kind.STORE, Kind.ATOMIC):
        if info.unit == "tma" and info.kind is Kind.LOAD and spaces[:1] == [Space.GLOBAL]:
            info = replace(info, kind=Kind.STORE)     # cp.async.bulk.global.shared: the dst
        if info.unit in ("ldsm", "stsm"):
            count = next((int(q[1:]) for q in qualifiers if q in ("x1", "x2", "x4")), 1)
            width = 32 * count
        elif elem_bits is not None and info.space is not Space.TENSOR and info.unit != "ldgsts":
            width = elem_bits * (lanes or 1) * (vector or 1)
        if vector and info.space in _VECTOR_SPACES and info.kind is not Kind.ATOMIC:
            info = _contiguous(info)
    elif lanes and lanes > 1:
        width = elem_bits * lanes
        info = replace(info, vector=True)
    if lanes == 1:
        lanes = None
    if vector:
        lanes = vector * (lanes or 1)
    return op, info, width, elem_bits, lanes


@functools.lru_cache(maxsize=64)
def _contiguous(info: OpInfo) -> OpInfo:
    """A memory op that moves a contiguous vector per thread."""
    return replace(info, vector=True, access=Access.UNIT)


def _instruction(mnemonic: str, operands: str, line: int, function: str,
                 loc: SourceLoc | None) -> Instruction:
    """The Instruction for one PTX statement (mnemonic without predicate)."""
    op, info, width, elem_bits, lanes = _shape(mnemonic)
    if info.unit == "ldgsts" and (m := _CP_SIZE.search(operands)):
        size = m["bytes"]                       # cp.async's copy size, in bytes: 16 or 0x10
        width = 8 * (int(size, 16) if size[:2] in ("0x", "0X") else int(size))
        if width >= 64:
            info = _contiguous(info)
    return Instruction(mnemonic=mnemonic, op=op, info=info, line=line, width=width,
                       elem_bits=elem_bits, lanes=lanes, function=function, loc=loc)


def _reg_count(names: str) -> int:
    """Registers one `.reg` declares: `%f<123>` -> 123, `%a, %b` -> 2."""
    names = names.strip().rstrip(";").strip()
    if (m := _REG_RANGE.match(names)):
        return int(m["count"])
    return len([n for n in names.split(",") if n.strip()])


def _statements(line: str) -> Iterator[str]:
    """The statements of a line: comment cut, split at ';', scope braces dropped."""
    code = line.split("//", 1)[0]
    for stmt in code.split(";"):
        stmt = stmt.strip().lstrip("{").rstrip("}").strip()
        if stmt:
            yield stmt


# what waits in the queue: a record, or an instruction's arguments (built once its loc is known)
_Pending = Union[Record, tuple]


class _Locations:
    """.file table, inlining chains, and the queue of records that wait for a .file line."""

    def __init__(self) -> None:
        self.files: dict[int, str] = {}
        self.outer: dict[tuple[int, int, int], tuple[int, int, int, str]] = {}
        self.queue: deque[tuple[_Pending, _LocRef | None]] = deque()

    def ref(self, m: re.Match) -> _LocRef | None:
        """The outermost location a .loc names; None for line 0 (no source line)."""
        here = (int(m["file"]), int(m["line"]), int(m["col"]), m["hint"] or "")
        if m["ifile"] is not None:
            site = (int(m["ifile"]), int(m["iline"]), int(m["icol"]))
            outer = self.outer.get(site, site + ("",))
            self.outer[here[:3]] = outer
            here = outer
        return here if here[1] > 0 else None

    def push(self, item: _Pending, ref: _LocRef | None) -> Iterator[Record]:
        if not self.queue and (ref is None or ref[0] in self.files):
            yield self._built(item, ref)
        else:
            self.queue.append((item, ref))
            if len(self.queue) > _MAX_PENDING:
                yield self._built(*self.queue.popleft())

    def declare(self, index: int, path: str) -> Iterator[Record]:
        self.files[index] = path
        while self.queue and (self.queue[0][1] is None or self.queue[0][1][0] in self.files):
            yield self._built(*self.queue.popleft())

    def drain(self) -> Iterator[Record]:
        while self.queue:
            yield self._built(*self.queue.popleft())

    def _built(self, item: _Pending, ref: _LocRef | None) -> Record:
        if not isinstance(item, tuple):
            return item
        loc = None if ref is None else SourceLoc(self.files.get(ref[0], ref[3]), ref[1], ref[2])
        return _instruction(*item, loc=loc)


def parse(lines: str | Iterable[str]) -> Iterator[Record]:
    """Records of a PTX module; see the module docstring."""
    locs = _Locations()
    function = ""
    ref: _LocRef | None = None
    for n, line in iter_lines(lines):
        check_text(n, line, "binary data, not PTX text; pass the .ptx stage")
        if line.lstrip().startswith("."):
            if (m := _LOC.match(line)):
                ref = locs.ref(m)
                continue
            if (m := _FILE.match(line)):
                yield from locs.declare(int(m["index"]), m["path"])
                continue
            if (m := _FUNCTION.match(line)):
                if not m["extern"]:
                    function, ref = m["name"], None
                    yield from locs.push(Function(name=function, line=n), None)
                continue
            if (resource := _kernel_resource(line, function, n)):
                yield from locs.push(resource, None)
                continue
        for stmt in _statements(line):
            yield from _statement(stmt, n, function, ref, locs)
    yield from locs.drain()


def _kernel_resource(line: str, function: str, n: int) -> Resource | None:
    """`.reqntid 128` -> threads, `.maxnreg 64` -> max_registers."""
    if (m := _REQNTID.match(line)):
        threads = 1
        for dim in m["dims"].split(","):
            threads *= int(dim)
        return Resource("threads", threads, function, n)
    if (m := _MAXNREG.match(line)):
        return Resource("max_registers", int(m["count"]), function, n)
    return None


def _statement(stmt: str, n: int, function: str, ref: _LocRef | None,
               locs: _Locations) -> Iterator[Record]:
    if (m := _LABEL.match(stmt)):
        stmt = stmt[m.end():]
    if stmt.startswith("."):
        if (m := _REG.match(stmt)):
            resource = Resource(f"ptx_reg_{m['type']}", _reg_count(m["names"]), function, n)
            yield from locs.push(resource, None)
    elif (m := _INSTRUCTION.match(stmt)):
        yield from locs.push((m["mnemonic"], m["operands"], n, function), ref)
