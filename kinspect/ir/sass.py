"""Parse SASS listings in every dialect Triton and NVIDIA's tools print (FORMATS):

- nvdisasm (`nvdisasm -c -g -gi`, with `-hex` the encoding after each instruction);
- cuobjdump -sass (`Function : name`, each instruction followed by its encoding);
- Triton's own dump (TRITON_KERNEL_DUMP's `.sass`, made by triton.tools.disasm from cuobjdump):
  `Function:name`, then one instruction per line after its control codes,
  `02:-:1:Y:4\tLEA R244, R3, R2, 0x7;`, labels `LBB0:`;
- tritonparse's (a trace's `.sass`): `Function:name`, then nvdisasm text whose line markers name
  both the Python line and the PTX line (`//## File ".nv_debug_ptx_txt", line 23`).

parse(lines) yields, in text order:
  Function     at a kernel's label (nvdisasm: the `name:` that opens `.text.name`) or at
               cuobjdump's `Function : name` / Triton's `Function:name` line;
  Resource     "registers" from nvdisasm's `.sectioninfo @"SHI_REGISTERS=N"` (right after the
               Function it belongs to);
  Instruction  for every `/*addr*/ OPCODE ...` line; mnemonic as written without its predicate
               (`LDG.E.128`), op = the opcode root (`LDG`), width = bits one thread moves for
               memory ops (LDG.E.128 -> 128, LDG.E -> 32, LDG.E.U16 -> 16, LDSM...x4 -> 128).
               A load/store of 64 bits or more to global, shared or local memory is marked
               vector with Access.UNIT: one thread reads a contiguous vector. `control` holds the
               scheduling control codes (records.Control) where the listing has them: Triton's
               dump prints them, and nvdisasm -hex / cuobjdump print the 128-bit encoding whose
               high word holds them (bits 41-44 stall, 45 yield (0 = may yield), 46-48 write
               barrier, 49-51 read barrier (7 = none), 52-57 wait mask), as Triton's disasm.py
               decodes them.

Source locations come from nvdisasm's `//## File "...", line N` markers. For inlined code the
marker reads `... inlined at "kernel.py", line M` (several `inlined at` in a chain, or one marker
per level, outermost last); an instruction gets the OUTERMOST call site, the kernel line that was
compiled. Markers naming the PTX (tritonparse runs nvdisasm with -gp) are not Python lines and
leave the location as it was. cuobjdump text and Triton's dump have no markers, so their
instructions have no loc.

parse_resource_usage(lines) reads `cuobjdump --dump-resource-usage` text and yields per function:
registers (REG), stack_bytes (STACK), shared_bytes (SHARED), local_bytes (LOCAL).
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import Iterable, Iterator

from kinspect.ir.records import (check_text, Access, Control, Function, Instruction, Kind, OpInfo, Record,
                                 Resource, SourceLoc, Space, iter_lines)
from kinspect.isa import nvidia

#         /*0160*/                   LDG.E.128 R16, desc[UR60][R4.64] ;
#         /*0150*/              @!P0 LDG.E.128 R12, [R2.64] ;
_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-fA-F]+\*/\s+(?:\{\s*)?(?:@!?U?P(?:T|\d+)\s+)?"
                          r"(?P<mnemonic>[A-Z][A-Z0-9_]*(?:\.\w+)*)")

# What this parser reads, for the one line that says a listing could not be read.
FORMATS = ("nvdisasm -c -g -gi [-hex]", "cuobjdump -sass",
           "Triton's TRITON_KERNEL_DUMP .sass (control codes before each instruction, 'Function:NAME' first)",
           "tritonparse's .sass ('Function:NAME', then nvdisasm text)")

# --:-:-:-:1	LDC R1, c[0x0][0x28];
# 02:-:-:Y:2	@!P0 LEA R244, R3, R2, 0x7;
TRITON_INSTRUCTION = re.compile(r"^(?P<wait>--|\d\d):(?P<read>[-0-7]):(?P<write>[-0-7]):(?P<yield>[-Y]):"
                                 r"(?P<stall>[0-9a-fA-F]+)\t\s*(?:@!?U?P(?:T|\d+)\s+)?"
                                 r"(?P<mnemonic>[A-Z][A-Z0-9_]*(?:\.\w+)*)")

#                                                                                     /* 0x000fe20000000800 */
ENCODING_HIGH = re.compile(r"^\s*/\* 0x(?P<word>[0-9a-fA-F]{16}) \*/\s*$")

#         /*0000*/                   LDC R1, c[0x0][0x28] ;                   /* 0x00000a00ff017b82 */
ENCODING_LOW = re.compile(r"/\* 0x[0-9a-fA-F]{16} \*/\s*$")

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


# nvdisasm -gp's markers name the PTX it embedded in the cubin (or a .ptx file): not Python lines
PTX_MARKER_FILES = (".nv_debug_ptx_txt",)


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
                 loc: SourceLoc | None = None, control: Control | None = None) -> Instruction:
    op, info, width = _shape(mnemonic)
    return Instruction(mnemonic=mnemonic, op=op, info=info, line=line, width=width,
                       function=function, loc=loc, control=control)


def nvdisasm_instruction(line: str) -> bool:
    """Whether a line is an instruction as nvdisasm and cuobjdump print it (`/*0160*/  LDG.E ...`)."""
    return _INSTRUCTION.match(line) is not None


def _barrier(text: str) -> int | None:
    return None if text == "-" else int(text)


def triton_control(m: re.Match) -> Control:
    """The control codes of one line of Triton's dump (a TRITON_INSTRUCTION match)."""
    return Control(wait_mask=0 if m["wait"] == "--" else int(m["wait"]), read_barrier=_barrier(m["read"]),
                   write_barrier=_barrier(m["write"]), yield_=m["yield"] == "Y", stall=int(m["stall"], 16))


def decode_control(high: int) -> Control:
    """The control codes in the high 64-bit word of a Volta-and-later instruction encoding."""
    return _control(high >> 41 & 0x1FFFF)


@functools.lru_cache(maxsize=4096)      # a listing repeats a few hundred distinct combinations
def _control(bits: int) -> Control:
    """Control codes from bits 41-57 of an encoding's high word, shifted down to 0-16."""
    read, write = bits >> 8 & 7, bits >> 5 & 7
    return Control(wait_mask=bits >> 11 & 0x3F, read_barrier=None if read == 7 else read,
                   write_barrier=None if write == 7 else write, yield_=not bits >> 4 & 1, stall=bits & 0xF)


def parse(lines: str | Iterable[str]) -> Iterator[Record]:
    """Records of a SASS listing in any of FORMATS; see the module docstring."""
    function = ""          # the kernel the next instructions belong to
    section = ""           # nvdisasm: the function named by the current .text section
    pending: list[Record] = []    # .sectioninfo figures, held until their Function is out
    loc: SourceLoc | None = None
    held: tuple | None = None   # an instruction whose encoding's high word (on the next line) is due
    for n, line in iter_lines(lines):
        check_text(n, line, "binary data, not SASS text; disassemble the cubin first (nvdisasm -c -g -gi, or cuobjdump -sass)")
        if held is not None:
            m = ENCODING_HIGH.match(line)
            yield _instruction(*held, decode_control(int(m["word"], 16)) if m else None)
            held = None
            if m:
                continue
        m = _INSTRUCTION.match(line)
        if m:
            if ENCODING_LOW.search(line):
                held = (m["mnemonic"], n, function, loc)
            else:
                yield _instruction(m["mnemonic"], n, function, loc)
            continue
        if (m := TRITON_INSTRUCTION.match(line)):
            yield _instruction(m["mnemonic"], n, function, loc, triton_control(m))
        elif (m := _MARKER.match(line)):
            if m["file"] not in PTX_MARKER_FILES and not m["file"].endswith(".ptx"):
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
    if held is not None:
        yield _instruction(*held)
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
