"""The records every dialect parser yields.

A parser module in kinspect/ir/ exposes `parse(lines) -> Iterator[Record]` where `lines` is a
str or any iterable of lines (a file object streams a 100 MB listing in bounded memory). Parsers
are pure: no file I/O, no Triton import. Bad input raises ParseError with the line number.

ISA knowledge (what a mnemonic *is*) lives in kinspect/isa/ tables as OpInfo (kinspect.isa.ops, the
vocabulary both share); a parser looks the mnemonic up and attaches the OpInfo, with Kind.OTHER for
mnemonics the table does not know (never a guess).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Iterator, Union

# The vocabulary of what an instruction is, shared with the ISA tables; records carry it.
from kinspect.isa.ops import OTHER, Access, Kind, OpInfo, Space  # noqa: F401  (parsers import it from here)


@dataclass(frozen=True)
class SourceLoc:
    """A Python (or other source) location that produced a line."""

    file: str
    line: int
    column: int = 0
    # MLIR's callsite(callee at caller): this is the caller's (the kernel's) line; `inlined` holds the
    # lines of the inlined @triton.jit helpers under it, outermost first (a tl.dot in a helper)
    inlined: tuple[tuple[str, int], ...] = ()

    @property
    def frames(self) -> tuple[tuple[str, int], ...]:
        """(file, line) of this line and of every inlined helper line under it."""
        return ((self.file, self.line), *self.inlined)

    @property
    def helper_lines(self) -> tuple[int, ...]:
        """The lines of the inlined helpers under this line that are in its own file, outermost first."""
        return tuple(dict.fromkeys(n for f, n in self.inlined if f == self.file and n != self.line))


@dataclass(frozen=True)
class Control:
    """The scheduling control codes NVIDIA's Volta-and-later SASS carries with every instruction
    (ptxas sets them; they say why a warp waits): which of the six scoreboard barriers it waits on,
    the barrier it sets when its operands are read or its result is written, whether the warp may
    yield, and the cycles to stall before the next instruction issues."""

    wait_mask: int                  # bit i: wait on barrier i (0..5) before issuing
    read_barrier: int | None        # barrier 0..5 set until the sources are read, None: none
    write_barrier: int | None       # barrier 0..5 set until the result is written, None: none
    yield_: bool                    # the scheduler may switch to another warp here
    stall: int                      # cycles (0..15) before the next instruction issues

    @property
    def waits_on(self) -> tuple[int, ...]:
        return tuple(b for b in range(6) if self.wait_mask >> b & 1)

    def notation(self) -> str:
        """Triton's notation (its TRITON_KERNEL_DUMP .sass): `wait:read:write:yield:stall`, e.g.
        `02:-:1:Y:4` (the wait mask printed as a two-digit decimal number, as Triton prints it)."""
        def barrier(b):
            return "-" if b is None else str(b)
        wait = "--" if not self.wait_mask else f"{self.wait_mask:02d}"
        return (f"{wait}:{barrier(self.read_barrier)}:{barrier(self.write_barrier)}:"
                f"{'Y' if self.yield_ else '-'}:{self.stall:x}")


@dataclass(frozen=True)
class Instruction:
    """One instruction (assembly) or one op (MLIR, LLVM IR).

    mnemonic: as written, normalised to the ISA's usual case (`LDG.E.128`, `vle32.v`, `tt.dot`,
      `fadd`, `ld.global.v4.f32`).
    op: the key looked up in the ISA table (`LDG`, `vle32.v`, `tt.dot`, `ld`).
    width: bits moved or computed per instruction where the text says it (128 for LDG.E.128 and
      ld.global.v4.b32, 512 for a zmm op, the LLVM vector type's total bits); None when unknown.
    elem_bits: element width where known (vle32 → 32; f32 → 32).
    lanes: vector lanes where known (<8 x float> → 8).
    function: the enclosing function/kernel name when the dialect has one.
    line: 1-based line number in the stage text.
    loc: source location from line markers / #loc / .loc / !dbg, when present.
    control: SASS scheduling control codes, where the listing carries them (Triton's dump format,
      or the instruction encodings nvdisasm -hex and cuobjdump print).
    """

    mnemonic: str
    op: str
    info: OpInfo
    line: int
    width: int | None = None
    elem_bits: int | None = None
    lanes: int | None = None
    function: str = ""
    loc: SourceLoc | None = None
    in_loop: bool = False
    control: Control | None = None


@dataclass(frozen=True)
class FunctionParam:
    """A function argument as an MLIR stage declares it, with what the compiler knows of its value:
    `tt.divisibility = 16` (the JIT's specialization: a pointer 16-byte aligned, an int a multiple of 16)."""

    name: str
    type: str                        # `!tt.ptr<bf16>`, `i32`
    divisibility: int | None = None


@dataclass(frozen=True)
class Function:
    """A function/kernel definition seen in the text."""

    name: str
    line: int
    params: tuple[FunctionParam, ...] = ()   # MLIR: its arguments (other dialects: empty)


@dataclass(frozen=True)
class Resource:
    """A resource figure stated by the text itself (AMDGCN `.vgpr_count`, PTX `.reg` counts,
    ptxas info lines, `.amdhsa_next_free_vgpr`), keyed by a stable name:
    registers, sgprs, vgprs, agprs, spill_vgprs, spill_sgprs, shared_bytes, stack_bytes,
    scratch_bytes, occupancy ... `function` is the kernel it belongs to."""

    name: str
    value: int
    function: str = ""
    line: int = 0


@dataclass(frozen=True)
class Layout:
    """A TTGIR layout/encoding alias (`#blocked = #ttg.blocked<{...}>`, `#mma = #ttg.nvidia_mma<...>`)."""

    alias: str
    kind: str
    text: str
    line: int


@dataclass(frozen=True)
class MatrixOp:
    """A matrix op of an MLIR stage (`tt.dot`, `ttng.warp_group_dot`, `ttng.tc_gen5_mma`, ...) with its
    shape: A is m x k, B is k x n (a batch dimension in front is left out). `encoding` is the result's
    layout as written (`mma`, `mma1` for an alias `#mma`; `blocked` when the dot runs on FMA units),
    to be looked up among the stage's Layout records. It follows the op's Instruction record."""

    op: str
    line: int
    m: int | None
    n: int | None
    k: int | None
    encoding: str = ""
    elem_bits: int | None = None       # A's element width
    function: str = ""
    loc: SourceLoc | None = None


@dataclass(frozen=True)
class MemoryOp:
    """A global-memory load of an MLIR stage (`tt.load`, `ttg.async_copy_global_to_local`, AMD's buffer
    loads) with what the compiler knows of it: one element (the pointer is `!tt.ptr<f32>`, not a
    tensor of pointers), the tensor's shape and layout (which says the elements each thread holds),
    the elements the compiler proved contiguous where it recorded them (an async copy's `contiguity`),
    and the function arguments its pointer and mask are computed from. It follows the op's
    Instruction record."""

    op: str
    line: int
    scalar: bool
    shape: tuple[int, ...] = ()
    elem_bits: int | None = None
    encoding: str = ""                     # the pointer tensor's layout alias (`blocked1`)
    contiguity: int | None = None
    volatile: bool = False
    args: tuple[str, ...] = ()             # function arguments the pointer is computed from
    loaded_from: tuple[str, ...] = ()      # ... through values read from memory (an index loaded from them)
    mask_args: tuple[str, ...] = ()        # ... and the mask
    function: str = ""
    loc: SourceLoc | None = None

    @property
    def one_element(self) -> bool:
        """One element: a scalar pointer, or a tensor of one (Inductor's `x0` at XBLOCK=1)."""
        return self.scalar or (bool(self.shape) and all(d == 1 for d in self.shape))

    @property
    def asynchronous(self) -> bool:
        return "async" in self.op or self.op.endswith("to_local")


Record = Union[Instruction, Function, Resource, Layout, MatrixOp, MemoryOp]


# Control characters other than tab/newline/CR, DEL, C1 controls and U+FFFD (undecodable bytes):
# "\x7fELF\x02\x01\x01\x00\x00\x00"
NONTEXT_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")


def looks_binary(line: str) -> bool:
    """A line with NUL, or over 30% non-printable characters: a binary file read as text."""
    if not NONTEXT_RE.search(line):
        return False
    return "\x00" in line or len(NONTEXT_RE.findall(line)) * 10 > len(line) * 3


def check_text(n: int, line: str, message: str) -> None:
    """Raise ParseError(message) at line n when the line is binary data."""
    if looks_binary(line):
        from kinspect.core.errors import ParseError

        raise ParseError(message, line=n)


def iter_lines(lines: str | Iterable[str]) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without its newline) for a str or an iterable of lines."""
    if isinstance(lines, str):
        lines = lines.splitlines()
    for n, line in enumerate(lines, 1):
        if isinstance(line, bytes):
            line = line.decode("utf-8", "replace")
        yield n, line.rstrip("\r\n")
