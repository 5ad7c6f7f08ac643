"""Parse SASS listings: `nvdisasm -c -g -gi` text and `cuobjdump -sass` text.

parse(lines) yields, in text order:
  Function     at a kernel's label (nvdisasm: the `name:` that opens `.text.name`) or at
               cuobjdump's `Function : name` line;
  Resource     "registers" from nvdisasm's `.sectioninfo @"SHI_REGISTERS=N"` (right after the
               Function it belongs to);
  Instruction  for every `/*addr*/ OPCODE ...` line; mnemonic as written without its predicate
               (`LDG.E.128`), op = the opcode root (`LDG`), width = bits one thread moves for
               memory ops (LDG.E.128 -> 128, LDG.E -> 32, LDG.E.U16 -> 16, LDSM...x4 -> 128).
               A load/store of 64 bits or more to global, shared or local memory is marked
               vector with Access.UNIT: one thread reads a contiguous vector.

Source locations come from nvdisasm's `//## File "...", line N` markers. For inlined code the
marker reads `... inlined at "kernel.py", line M` (several `inlined at` in a chain, or one marker
per level, outermost last); an instruction gets the OUTERMOST call site, the kernel line that was
compiled. cuobjdump text has no markers, so its instructions have no loc.

parse_resource_usage(lines) reads `cuobjdump --dump-resource-usage` text and yields per function:
registers (REG), stack_bytes (STACK), shared_bytes (SHARED), local_bytes (LOCAL).
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import Iterable, Iterator

from kinspect.ir.records import (check_text, Access, Function, Instruction, Kind, OpInfo, Record, Resource,
                                 SourceLoc, Space, iter_lines)
from kinspect.isa import nvidia

#         /*0160*/                   LDG.E.128 R16, desc[UR60][R4.64] ;
#         /*0150*/              @!P0 LDG.E.128 R12, [R2.64] ;
_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-fA-F]+\*/\s+(?:\{\s*)?(?:@!?U?P(?:T|\d+)\s+)?"
                          r"(?P<mnemonic>[A-Z][A-Z0-9_]*(?:\.\w+)*)")

# 	//## File "/tmp/p.py", line 25
# 	//## File ".../standard.py", line 203 inlined at "/tmp/p.py", line 25
_MARKER = re.compile(r'^\s*//## File "(?P<file>[^"]*)", line (?P<line>\d+)(?P<inlined>.*)$')

# inlined at "/tmp/p.py", line 25
_INLINED_AT = re.compile(r'inlined at "(?P<file>[^"]*)", line (?P<line>\d+)')

# 		Function : add_kernel
_CUOBJDUMP_FUNCTION = re.compile(r"^\s*Function\s*:\s*(?P<name>\S+)")

# 	.section	.text.fused_mm_softmax_kernel,"ax",@progbits
_TEXT_SECTION = re.compile(r"^\s*\.section\s+\.text\.(?P<name>[^,\s]+)")

# fused_mm_softmax_kernel:
_LABEL = re.compile(r"^(?P<name>[\w$.]+):\s*$")

# 	.sectioninfo	@"SHI_REGISTERS=250"
_SECTION_REGISTERS = re.compile(r'^\s*\.sectioninfo\s+@"SHI_REGISTERS=(?P<count>\d+)"')

#  Function fused_mm_softmax_kernel:
_USAGE_FUNCTION = re.compile(r"^\s*Function\s+(?P<name>\S+):\s*$")

#   REG:255 STACK:0 SHARED:1024 LOCAL:0 CONSTANT[0]:584 TEXTURE:0 SURFACE:0 SAMPLER:0
_USAGE_FIELD = re.compile(r"(?<![A-Z])(?P<key>[A-Z]+(?:\[\d+\])?):(?P<value>\d+)")

# resource-usage keys -> Resource names
USAGE_NAMES = {"REG": "registers", "STACK": "stack_bytes", "SHARED": "shared_bytes",
               "LOCAL": "local_bytes"}

# "\x7fELF\x02\x01\x01\x00"

_VECTOR_SPACES = (Space.GLOBAL, Space.SHARED, Space.LOCAL)


def _marker_loc(match: re.Match) -> SourceLoc | None:
    """The outermost location a marker names: its last `inlined at`, else its own."""
    file, line = match["file"], match["line"]
    for outer in _INLINED_AT.finditer(match["inlined"]):
        file, line = outer["file"], outer["line"]
    return SourceLoc(file, int(line)) if int(line) > 0 else None


def _memory_width(info: OpInfo, modifiers: list[str]) -> int | None:
    if info.unit in ("ldsm", "stsm"):       # LDSM.16.M88.4: four 8x8 b16 tiles, 32 bits each
        count = modifiers[-1] if modifiers and modifiers[-1] in ("1", "2", "4") else "1"
        return 32 * int(count)
    if info.space is Space.TENSOR:           # TMA / tensor memory: the size is in a descriptor
        return None
    sizes = [nvidia.SASS_SIZE_MODIFIERS[m] for m in modifiers if m in nvidia.SASS_SIZE_MODIFIERS]
    return max(sizes, default=32)


@functools.lru_cache(maxsize=4096)      # a listing repeats a few hundred distinct mnemonics
def _shape(mnemonic: str) -> tuple[str, OpInfo, int | None]:
    """(op, info, width) of a SASS mnemonic (`LDG.E.128`, without predicate or operands)."""
    op, *modifiers = mnemonic.split(".")
    info = nvidia.lookup_sass(op)
    width = None
    if info.kind in (Kind.LOAD, Kind.STORE, Kind.ATOMIC):
        width = _memory_width(info, modifiers)
        if (width is not None and width >= 64 and info.kind is not Kind.ATOMIC
                and info.unit not in ("ldsm", "stsm") and info.space in _VECTOR_SPACES):
            info = replace(info, vector=True, access=Access.UNIT)
    return op, info, width


def _instruction(mnemonic: str, line: int, function: str = "",
                 loc: SourceLoc | None = None) -> Instruction:
    op, info, width = _shape(mnemonic)
    return Instruction(mnemonic=mnemonic, op=op, info=info, line=line, width=width,
                       function=function, loc=loc)


def parse(lines: str | Iterable[str]) -> Iterator[Record]:
    """Records of a SASS listing (nvdisasm or cuobjdump); see the module docstring."""
    function = ""          # the kernel the next instructions belong to
    section = ""           # nvdisasm: the function named by the current .text section
    pending: list[Record] = []    # .sectioninfo figures, held until their Function is out
    loc: SourceLoc | None = None
    for n, line in iter_lines(lines):
        check_text(n, line, "binary data, not SASS text; disassemble the cubin first (nvdisasm -c -g -gi, or cuobjdump -sass)")
        m = _INSTRUCTION.match(line)
        if m:
            yield _instruction(m["mnemonic"], n, function, loc)
            continue
        if (m := _MARKER.match(line)):
            loc = _marker_loc(m)
        elif (m := _LABEL.match(line)) and m["name"] == section:
            function, loc = section, None
            yield Function(name=function, line=n)
            yield from pending
            pending.clear()
        elif (m := _CUOBJDUMP_FUNCTION.match(line)):
            function, loc = m["name"], None
            yield Function(name=function, line=n)
        elif (m := _TEXT_SECTION.match(line)):
            yield from pending
            pending.clear()
            section = m["name"]
        elif (m := _SECTION_REGISTERS.match(line)):
            pending.append(Resource(name="registers", value=int(m["count"]), function=section,
                                    line=n))
    yield from pending


def parse_resource_usage(lines: str | Iterable[str]) -> Iterator[Resource]:
    """Resources of `cuobjdump --dump-resource-usage` text, named as in USAGE_NAMES."""
    function = ""
    for n, line in iter_lines(lines):
        check_text(n, line, "binary data, not SASS text; pass the text cuobjdump --dump-resource-usage prints")
        if (m := _USAGE_FUNCTION.match(line)):
            function = m["name"]
            continue
        for field in _USAGE_FIELD.finditer(line):
            name = USAGE_NAMES.get(field["key"])
            if name and function:
                yield Resource(name=name, value=int(field["value"]), function=function, line=n)
