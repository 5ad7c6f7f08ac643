"""Parse AMDGCN assembly (what Triton's `.amdgcn` stage holds: LLVM AMDGPU output).

parse(lines) yields, in text order:
  Function     at the `name:` label of a symbol declared `.globl name` or `.type name,@function`
               (or at `.amdhsa_kernel name` when the text never labelled it);
  Instruction  per instruction line; op = mnemonic without its encoding suffix (`v_max_f32` for
               `v_max_f32_e32`); width/elem_bits/lanes for memory ops from the name
               (global_load_dwordx4 -> 128 bits = 4 x 32). A global/LDS load or store of 64
               bits or more is marked vector with Access.UNIT. A load/store whose comment says
               `Spill`/`Reload` (LLVM's `; 4-byte Folded Spill`) goes to Space.LOCAL (scratch);
  Resource     for each figure the text states, once per (function, name, value):
    vgprs           `; NumVgprs:`                    architectural VGPRs (v0..)
    agprs           `; NumAgprs:`, `.agpr_count:`     accumulation VGPRs (a0.., gfx908+)
    total_vgprs     `; TotalNumVgprs:`, `.vgpr_count:`, `.amdhsa_next_free_vgpr`
                    the VGPR file a wave allocates (VGPRs + AGPRs on gfx90a/gfx942)
    sgprs           `; TotalNumSgprs:`, `; NumSgprs:`, `.sgpr_count:` (with VCC, XNACK, ...)
    explicit_sgprs  `.amdhsa_next_free_sgpr`         SGPRs the code names, without VCC & co
    accum_offset    `.amdhsa_accum_offset`, `; AccumOffset:`   first AGPR in the unified file
    spill_vgprs     `.vgpr_spill_count:`;  spill_sgprs `.sgpr_spill_count:`
    shared_bytes    `.amdhsa_group_segment_fixed_size`, `; LDSByteSize:`,
                    `.group_segment_fixed_size:`      static LDS (Triton's is dynamic: often 0)
    scratch_bytes   `.amdhsa_private_segment_fixed_size`, `; ScratchSize:`,
                    `.private_segment_fixed_size:`    scratch (spill) bytes per lane
    occupancy       `; Occupancy:`                   waves per SIMD
  Two statements that disagree both come out, in text order.

Source locations: `.loc FILE LINE COL` with `.file N "dir" "name"` (declared before use). The
inlining chain is only in the comment (`; standard.py:216:16 @[ kernel.py:25:13 ]`); an
instruction gets the OUTERMOST call site, its file matched by name against the .file table.
"""

from __future__ import annotations

import functools
import posixpath
import re
from dataclasses import replace
from typing import Iterable, Iterator

from kinspect.ir.records import (check_text, Access, Function, Instruction, Kind, OpInfo, Record,
                                 Resource, SourceLoc, Space, iter_lines)
from kinspect.isa import amd

# What this parser reads, for the one line that says a stage could not be read.
FORMATS = ("AMDGCN assembly as LLVM's AMDGPU backend prints it (Triton's .amdgcn, any version)",)

# 	global_load_dwordx4 v[0:3], v[4:5], off
_INSTRUCTION = re.compile(r"^\s+(?P<mnemonic>[a-z][a-z0-9_]*)(?=\s|$)(?P<rest>.*)$")

# fused_mm_softmax_kernel:                ; @fused_mm_softmax_kernel
_LABEL = re.compile(r"^(?P<name>[\w.$]+):")

# 	.globl	fused_mm_softmax_kernel         ; -- Begin function fused_mm_softmax_kernel
# 	.type	fused_mm_softmax_kernel,@function
_SYMBOL = re.compile(r"^\s*(?:\.globl\s+(?P<globl>[\w.$]+)"
                     r"|\.type\s+(?P<typed>[\w.$]+)\s*,\s*@function)")

# 	.file	1 "/work/main/kernels" "fused_mm_softmax.py"
_FILE = re.compile(r'^\s*\.file\s+(?P<index>\d+)\s+"(?P<first>[^"]*)"(?:\s+"(?P<second>[^"]*)")?')

# 	.loc	2 314 12 is_stmt 1              ; standard.py:314:12 @[ fused_mm_softmax.py:27:19 ]
_LOC = re.compile(r"^\s*\.loc\s+(?P<file>\d+)\s+(?P<line>\d+)\s+(?P<col>\d+)")

# @[ fused_mm_softmax.py:27:19
_CALL_SITE = re.compile(r"@\[\s*(?P<file>[^:\s]+):(?P<line>\d+):(?P<col>\d+)")

# 	.amdhsa_kernel fused_mm_softmax_kernel
_AMDHSA_KERNEL = re.compile(r"^\s*\.amdhsa_kernel\s+(?P<name>[\w.$]+)")

# 		.amdhsa_next_free_vgpr 300
_AMDHSA_FIELD = re.compile(r"^\s*\.amdhsa_(?P<key>\w+)\s+(?P<value>\d+)\s*$")

# ; NumVgprs: 256
_COMMENT_FIELD = re.compile(r"^\s*;\s*(?P<key>\w+):\s*(?P<value>\d+)\b")

#   - .agpr_count:     44
#     .vgpr_count:     300
_YAML_FIELD = re.compile(r"^(?P<indent>\s*(?:-\s+)?)\.(?P<key>\w+):\s*(?P<value>\S*)")

# ; 4-byte Folded Spill
_SPILL = re.compile(r"\b\d+-byte (?:Folded )?(?:Spill|Reload)\b")

AMDHSA_NAMES = {"next_free_vgpr": "total_vgprs", "next_free_sgpr": "explicit_sgprs",
                "accum_offset": "accum_offset", "group_segment_fixed_size": "shared_bytes",
                "private_segment_fixed_size": "scratch_bytes"}
COMMENT_NAMES = {"NumVgprs": "vgprs", "NumAgprs": "agprs", "TotalNumVgprs": "total_vgprs",
                 "NumSgprs": "sgprs", "TotalNumSgprs": "sgprs", "AccumOffset": "accum_offset",
                 "ScratchSize": "scratch_bytes", "LDSByteSize": "shared_bytes",
                 "Occupancy": "occupancy"}
YAML_NAMES = {"vgpr_count": "total_vgprs", "agpr_count": "agprs", "sgpr_count": "sgprs",
              "vgpr_spill_count": "spill_vgprs", "sgpr_spill_count": "spill_sgprs",
              "group_segment_fixed_size": "shared_bytes",
              "private_segment_fixed_size": "scratch_bytes"}

# "\x7fELF\x02\x01\x01\x00"

_VECTOR_SPACES = (Space.GLOBAL, Space.SHARED, Space.LOCAL)


@functools.lru_cache(maxsize=4096)      # a listing repeats a few hundred distinct mnemonics
def _shape(mnemonic: str, spill: bool) -> tuple[str, OpInfo, int | None, int | None, int | None]:
    """(op, info, width, elem_bits, lanes) of a mnemonic; spill: its comment says Spill/Reload."""
    op = amd.op_name(mnemonic)
    info = amd.lookup(op)
    width = elem_bits = lanes = None
    if info.kind in (Kind.LOAD, Kind.STORE, Kind.ATOMIC):
        width, elem_bits, lanes = amd.memory_width(op)
        if info.kind is not Kind.ATOMIC and spill:
            info = replace(info, space=Space.LOCAL)
        if (width is not None and width >= 64 and info.kind is not Kind.ATOMIC
                and info.space in _VECTOR_SPACES):
            info = replace(info, vector=True, access=Access.UNIT)
    return op, info, width, elem_bits, lanes


def _instruction(mnemonic: str, rest: str, line: int, function: str,
                 loc: SourceLoc | None) -> Instruction:
    comment = rest.find(";")          # searched from the comment on: `;.*` before it was quadratic
    spill = comment >= 0 and _SPILL.search(rest, comment) is not None
    op, info, width, elem_bits, lanes = _shape(mnemonic, spill)
    return Instruction(mnemonic=mnemonic, op=op, info=info, line=line, width=width,
                       elem_bits=elem_bits, lanes=lanes, function=function, loc=loc)


class _State:
    """What the parser remembers between lines; bounded by the number of functions, source
    files and resource figures, never by the number of instructions."""

    def __init__(self) -> None:
        self.symbols: set[str] = set()       # .globl / .type @function names
        self.functions: set[str] = set()     # names already yielded as Function
        self.function = ""
        self.loc: SourceLoc | None = None
        self.files: dict[int, str] = {}
        self.by_name: dict[str, str] = {}    # file name -> path, for the comment's call sites
        self.kernel = ""                     # inside `.amdhsa_kernel name`
        self.metadata = False                # inside .amdgpu_metadata
        self.entry: list[tuple[str, int, int]] = []   # YAML (name, value, line) of one kernel
        self.entry_name = ""
        self.entry_indent: int | None = None
        self.seen: set[tuple[str, str, int]] = set()

    def resource(self, name: str, value: int, function: str, line: int) -> Iterator[Resource]:
        if (function, name, value) not in self.seen:
            self.seen.add((function, name, value))
            yield Resource(name=name, value=value, function=function, line=line)

    def start(self, name: str, line: int) -> Iterator[Function]:
        self.function, self.loc = name, None
        if name not in self.functions:
            self.functions.add(name)
            yield Function(name=name, line=line)


def _loc(state: _State, line: str, m: re.Match) -> SourceLoc | None:
    """The outermost call site in the comment's `@[ ... ]` chain, else the .loc itself."""
    sites = _CALL_SITE.findall(line[m.end():])
    if sites:
        name, number, col = sites[-1]
        file = state.by_name.get(name, name)
    else:
        file, number, col = state.files.get(int(m["file"]), ""), m["line"], m["col"]
    if int(number) == 0:            # line 0: code with no source line (prologue, spills)
        return None
    return SourceLoc(file, int(number), int(col))


def parse(lines: str | Iterable[str]) -> Iterator[Record]:
    """Records of an AMDGCN module; see the module docstring."""
    state = _State()
    for n, line in iter_lines(lines):
        check_text(n, line, "binary data, not AMDGCN text; pass the .amdgcn stage, not the .hsaco")
        if state.metadata:
            yield from _metadata(state, line, n)
        elif (m := _INSTRUCTION.match(line)):
            yield _instruction(m["mnemonic"], m["rest"], n, state.function, state.loc)
        else:
            yield from _directive(state, line, n)
    yield from _flush_entry(state)


def _directive(state: _State, line: str, n: int) -> Iterator[Record]:
    stripped = line.strip()
    if (m := _LOC.match(line)):
        state.loc = _loc(state, line, m)
    elif (m := _LABEL.match(line)):
        if m["name"] in state.symbols:
            yield from state.start(m["name"], n)
    elif (m := _FILE.match(line)):
        path = m["first"] if m["second"] is None else posixpath.join(m["first"], m["second"])
        state.files[int(m["index"])] = path
        state.by_name[posixpath.basename(path)] = path
    elif (m := _SYMBOL.match(line)):
        state.symbols.add(m["globl"] or m["typed"])
    elif (m := _AMDHSA_KERNEL.match(line)):
        state.kernel = m["name"]
        if m["name"] not in state.functions:
            yield from state.start(m["name"], n)
    elif stripped == ".end_amdhsa_kernel":
        state.kernel = ""
    elif state.kernel and (m := _AMDHSA_FIELD.match(line)):
        if (name := AMDHSA_NAMES.get(m["key"])):
            yield from state.resource(name, int(m["value"]), state.kernel, n)
    elif (m := _COMMENT_FIELD.match(line)):
        if (name := COMMENT_NAMES.get(m["key"])):
            yield from state.resource(name, int(m["value"]), state.function, n)
    elif stripped == ".amdgpu_metadata":
        state.metadata = True


def _metadata(state: _State, line: str, n: int) -> Iterator[Record]:
    """YAML: one `- ` entry per kernel under amdhsa.kernels; its .name may come last."""
    if line.strip() in (".end_amdgpu_metadata", "..."):
        yield from _flush_entry(state)
        state.metadata = line.strip() != ".end_amdgpu_metadata"
        return
    m = _YAML_FIELD.match(line)
    if not m:
        return
    indent = len(m["indent"])
    if "-" in m["indent"] and (state.entry_indent is None or indent == state.entry_indent):
        yield from _flush_entry(state)           # a new kernel's entry
        state.entry_indent = indent
    elif indent != state.entry_indent:
        return                                   # a field of an argument, not of the kernel
    if m["key"] == "name":
        state.entry_name = m["value"]
    elif (name := YAML_NAMES.get(m["key"])) and m["value"].isdigit():
        state.entry.append((name, int(m["value"]), n))


def _flush_entry(state: _State) -> Iterator[Record]:
    for name, value, line in state.entry:
        yield from state.resource(name, value, state.entry_name, line)
    state.entry.clear()
    state.entry_name = ""
