"""GNU-assembler text as LLVM and GCC print it: the part every CPU ISA parser shares.

An ISA module (riscv, x86, aarch64) supplies a Dialect: its comment markers, the registers that
address the stack, and `decode(stmt, stack_regs) -> Decoded`, which turns one instruction
statement into what the ISA tables say about it. This module does the rest: comments, labels,
directives, sections, functions, `.file`/`.loc` source locations, and loops.

Functions start at a label in a text section that was declared `.type name,@function` (ELF) or
`.globl`/`.private_extern` (Mach-O has no `.type`), or that is not an assembler-local label
(`.L*`, and Mach-O's `Ltmp*`, `LBB*`, `lCPI*` ...). Debug and data sections are skipped.

Loops: an instruction is `in_loop` when its basic block lies on a cycle of the function's
control-flow graph (a strongly connected component with more than one block, or a block that
branches to itself). A plain "between a label and a later backward branch to it" rule is not
enough: LLVM places out-of-line blocks after the code that jumps back into the main line (the
masked arm64 sum kernel in tests/fixtures/cpu has dozens of such backward branches and no loop).
This needs the whole function, so one function at a time is buffered; everything else streams.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from typing import AbstractSet, Callable, Iterable, Iterator, Mapping, NamedTuple

from kinspect.core.errors import ParseError
from kinspect.ir.records import (looks_binary, Function, Instruction, OpInfo, Record, Resource, SourceLoc, Space,
                                 iter_lines)


class Stmt(NamedTuple):
    """One instruction statement: mnemonic as written, operands split at top-level commas."""

    line: int
    mnemonic: str
    operands: tuple[str, ...]
    comment: str


class Flow(NamedTuple):
    """How a branch, jump or return leaves its basic block."""

    target: str | None        # label it may jump to (None: indirect or return)
    falls_through: bool       # False for unconditional jumps, returns, tail calls


class Decoded(NamedTuple):
    """What an ISA decoder says about one statement (the driver adds function, loc, in_loop)."""

    op: str
    info: OpInfo
    width: int | None = None
    elem_bits: int | None = None
    lanes: int | None = None
    flow: Flow | None = None
    resources: tuple[str, ...] = ()        # names of Resource(value=1) records to yield after it
    frame_regs: tuple[str, ...] = ()       # registers this instruction makes a frame pointer
    mnemonic: str = ""                     # when not the statement's (x86 `lock` prefix)


Decoder = Callable[[Stmt, AbstractSet[str]], Decoded]


class Dialect(NamedTuple):
    isa: str                               # "riscv", "x86", "aarch64": used in error messages
    comments: tuple[str, ...]              # line-comment markers
    stack_regs: frozenset[str]             # registers that always address the stack
    decode: Decoder
    separator: str | None = None           # statement separator within one line, if any
    rejects: Mapping[str, str] = {}        # directive -> ParseError message


# .type	sum_kernel,@function
TYPE_RE = re.compile(r"^\.type\s+([^\s,]+)\s*,\s*[@%#]?(?:function|gnu_indirect_function)\b")
# .globl	_sum_kernel
GLOBAL_RE = re.compile(r"^\.(?:globl|global|weak|private_extern)\s+([^\s,]+)")
# .file	1 "/home/ruiqigao/ruiqi/triton-cpu/python/test/cpu" "sum-test.py"
FILE_RE = re.compile(r'^\.file\s+(\d+)\s+"((?:[^"\\]|\\.)*)"(?:\s+"((?:[^"\\]|\\.)*)")?')
# .loc	1 13 42 prologue_end
LOC_RE = re.compile(r"^\.loc\s+(\d+)\s+(\d+)(?:\s+(\d+))?")
# .section	__TEXT,__text,regular,pure_instructions
# .section	.text.softmax_kernel,"ax",@progbits
SECTION_RE = re.compile(r'^\.(?:section|pushsection)\s+("[^"]*"|[^\s,]+(?:,[^\s,"]+)?)\s*(?:,\s*"([^"]*)")?')
# .LBB0_2:
LABEL_RE = re.compile(r'\s*("[^"]+"|[A-Za-z_.$][\w.$@]*|\d+):')
# 	vaddss	4(%rsi,%rax,4), %xmm0, %xmm0
STATEMENT_RE = re.compile(r"^\s*([A-Za-z_{][\w.{}]*)\s*(.*)$")
# Ltmp12:
MACHO_LOCAL_RE = re.compile(r"^[Ll](?:BB|tmp|func_|loh|CPI|JTI|exception|set|ltmp|_)")   # Mach-O locals
# 1b
NUMERIC_REF_RE = re.compile(r"^(\d+)([bf])$")          # GNU numeric label: nearest `1:` back/forward
# ldr	q1, [x9, lCPI0_0@PAGEOFF]
CONSTANT_POOL_RE = re.compile(r"(?<![\w.])\.?[Ll]CPI\d+_\d+")        # LLVM constant-pool labels
# vmovups	%zmm0, 64(%rsp)                 # 64-byte Spill
SPILL_COMMENT_RE = re.compile(r"\b(?:Spill|Reload)\b")
def split_operands(text: str) -> tuple[str, ...]:
    """Split at commas outside (), [] and {}: `4(%rsi,%rax,4), %xmm0` -> two operands."""
    if not text:
        return ()
    if "(" not in text and "[" not in text and "{" not in text:
        return tuple(part.strip() for part in text.split(","))
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return tuple(parts)


def is_local_label(name: str) -> bool:
    return name.startswith((".", "$")) or name[:1].isdigit() or bool(MACHO_LOCAL_RE.match(name))


def callee_name(target: str) -> str:
    """`*expf@GOTPCREL(%rip)` -> expf, `expf@plt` -> expf; `*` when the target is a register."""
    target = target.strip().lstrip("*")
    name = re.split(r"[@(]", target, maxsplit=1)[0]
    if not name or name[0] in "%-0123456789":
        return "*"
    return name


def memory_space(stack: bool, address: str, comment: str) -> Space:
    """Space of a memory operand: stack slot, constant pool, or ordinary memory."""
    if stack or (comment and SPILL_COMMENT_RE.search(comment)):
        return Space.STACK
    if "CPI" in address and CONSTANT_POOL_RE.search(address):
        return Space.CONSTANT
    return Space.GLOBAL


_VARIANTS: dict[tuple, tuple[OpInfo, OpInfo]] = {}


def variant(info: OpInfo, **changes) -> OpInfo:
    """`info` with fields changed by what the operands say; shared, like the table's own.

    Keyed by identity: table entries and variants live as long as the module (the value keeps
    `info` alive, so an id is never reused while its entry exists)."""
    key = (id(info), *changes.items())
    hit = _VARIANTS.get(key)
    if hit is None:
        hit = _VARIANTS[key] = (info, replace(info, **changes))
    return hit[1]


def _strip_comment(line: str, markers: tuple[str, ...]) -> tuple[str, str]:
    """(code, comment); markers inside double-quoted strings do not count."""
    cut = -1
    for marker in markers:
        i = line.find(marker)
        if i >= 0 and (cut < 0 or i < cut):
            cut = i
    if cut < 0:
        return line, ""
    if '"' in line[:cut]:                      # rare: a marker may sit inside a string
        in_str, i = False, 0
        while i < len(line):
            ch = line[i]
            if ch == "\\" and in_str:
                i += 2
                continue
            if ch == '"':
                in_str = not in_str
            elif not in_str and any(line.startswith(m, i) for m in markers):
                return line[:i], line[i:]
            i += 1
        return line, ""
    return line[:cut], line[cut:]


def _is_text_section(name: str, flags: str | None) -> bool:
    name = name.strip('"')
    return (name in (".text", ".init", ".fini") or name.startswith(".text.")
            or name.startswith("__TEXT,__text") or bool(flags and "x" in flags))


class _Cfg:
    """Basic blocks of one function, built as statements arrive."""

    def __init__(self):
        self.succ: list[list[int]] = [[]]
        self.labels: dict[str, int] = {}
        self.pending: list[tuple[int, str]] = []
        self.cur = 0
        self.empty = True           # current block has no instruction yet

    def _start(self, falls: bool) -> None:
        new = len(self.succ)
        self.succ.append([])
        if falls:
            self.succ[self.cur].append(new)
        self.cur, self.empty = new, True

    def label(self, name: str) -> None:
        if not self.empty:
            self._start(True)
        self.labels[name] = self.cur

    def instruction(self, flow: Flow | None) -> int:
        """Block of this instruction; a branch, jump or return ends its block."""
        block = self.cur
        self.empty = False
        if flow is not None:
            if flow.target:
                self.pending.append((block, flow.target))
            self._start(flow.falls_through)
        return block

    def cyclic_blocks(self) -> set[int]:
        for block, target in self.pending:
            if target in self.labels:
                self.succ[block].append(self.labels[target])
        return _cyclic(self.succ)


def _cyclic(succ: list[list[int]]) -> set[int]:
    """Nodes on a cycle: iterative Tarjan SCC (functions can have thousands of blocks)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    result: set[int] = set()
    counter = 0
    for root in range(len(succ)):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            if i < len(succ[node]):
                work.append((node, i + 1))
                nxt = succ[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in succ[node]:
                    result.update(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return result


class _Reader:
    """Line-by-line state; finished records collect in `out`."""

    def __init__(self, dialect: Dialect):
        self.d = dialect
        self.out: list[Record] = []
        self.files: dict[str, str] = {}
        self.loc: SourceLoc | None = None
        self.declared: set[str] = set()
        self.in_text = True                    # a snippet without section directives is code
        self.sections: list[bool] = []         # .pushsection stack
        self.previous = True                   # for .previous
        self.function = ""
        self.numeric: dict[str, int] = {}
        self._new_body()

    def _new_body(self) -> None:
        self.body: list[Record] = []
        self.blocks: list[int] = []            # block of each Instruction in body, in order
        self.cfg = _Cfg()
        self.stack_regs = set(self.d.stack_regs)

    def flush(self) -> None:
        if self.blocks:
            loops = self.cfg.cyclic_blocks()
            it = iter(self.blocks)
            for rec in self.body:
                if isinstance(rec, Instruction):
                    if next(it) in loops:
                        rec = replace(rec, in_loop=True)
                self.out.append(rec)
        else:
            self.out.extend(self.body)
        self._new_body()

    # -- one line -------------------------------------------------------------------------------
    def line(self, n: int, raw: str) -> None:
        if looks_binary(raw):
            raise ParseError(f"binary data, not {self.d.isa} assembly; give kinspect the assembly "
                             f"text (.s/.asm), not an object file or archive", line=n)
        code, comment = _strip_comment(raw, self.d.comments)
        at = 0                     # labels are consumed by position: slicing each off was quadratic
        while (m := LABEL_RE.match(code, at)) is not None:
            if self.in_text:
                self._label(m.group(1).strip('"'), n)
            at = m.end()
        code = code[at:].strip()
        if not code:
            return
        if self.d.separator and self.d.separator in code and '"' not in code:
            for part in code.split(self.d.separator):
                if part.strip():
                    self._statement(part.strip(), n, comment)
            return
        self._statement(code, n, comment)

    def _statement(self, code: str, n: int, comment: str) -> None:
        if code[0] == ".":
            self._directive(code, n)
        elif self.in_text:
            self._instruction(code, n, comment)

    def _label(self, name: str, n: int) -> None:
        if name.isdigit():
            count = self.numeric.get(name, 0) + 1
            self.numeric[name] = count
            self.cfg.label(f"{name}@{count}")
            return
        if name in self.declared or not is_local_label(name):
            self.flush()
            self.function = name
            self.loc = None
            self.out.append(Function(name=name, line=n))
        self.cfg.label(name)

    def _directive(self, code: str, n: int) -> None:
        name = code.split(None, 1)[0]
        if name == ".loc":
            self._loc(code)
        elif name == ".file":
            m = FILE_RE.match(code)
            if m:
                directory, base = m.group(2), m.group(3)
                self.files[m.group(1)] = posixpath.join(directory, base) if base is not None else directory
        elif name == ".type":
            m = TYPE_RE.match(code)
            if m:
                self.declared.add(m.group(1).strip('"'))
        elif name in (".globl", ".global", ".weak", ".private_extern"):
            m = GLOBAL_RE.match(code)
            if m:
                self.declared.add(m.group(1).strip('"'))
        elif name in (".text", ".data", ".bss", ".rodata", ".section", ".pushsection",
                      ".popsection", ".previous"):
            self._section(name, code)
        elif name in self.d.rejects:
            raise ParseError(self.d.rejects[name], line=n)

    def _loc(self, code: str) -> None:
        m = LOC_RE.match(code)
        if not m:
            return
        line = int(m.group(2))
        # line 0 is LLVM's "no source line" (compiler-generated code)
        self.loc = SourceLoc(self.files.get(m.group(1), ""), line, int(m.group(3) or 0)) if line else None

    def _section(self, name: str, code: str) -> None:
        if name == ".popsection":
            text = self.sections.pop() if self.sections else True
        elif name == ".previous":
            text = self.previous
        elif name in (".section", ".pushsection"):
            m = SECTION_RE.match(code)
            text = _is_text_section(m.group(1), m.group(2)) if m else False
            if name == ".pushsection":
                self.sections.append(self.in_text)
        else:
            text = name == ".text"
        if self.in_text and not text:
            self.flush()                       # leaving code: the function's CFG is complete
        self.previous, self.in_text = self.in_text, text

    def _instruction(self, code: str, n: int, comment: str) -> None:
        m = STATEMENT_RE.match(code)
        if not m:
            return
        stmt = Stmt(n, m.group(1).lower(), split_operands(m.group(2).strip()), comment)
        dec = self.d.decode(stmt, self.stack_regs)
        if dec.frame_regs:
            self.stack_regs.update(dec.frame_regs)
        flow = dec.flow
        if flow is not None and flow.target:
            flow = flow._replace(target=self._resolve(flow.target))
        self.body.append(Instruction(
            mnemonic=dec.mnemonic or stmt.mnemonic, op=dec.op, info=dec.info, line=n, width=dec.width,
            elem_bits=dec.elem_bits, lanes=dec.lanes, function=self.function, loc=self.loc))
        self.blocks.append(self.cfg.instruction(flow))
        for res in dec.resources:
            self.body.append(Resource(name=res, value=1, function=self.function, line=n))

    def _resolve(self, target: str) -> str:
        m = NUMERIC_REF_RE.match(target)
        if not m:
            return target
        count = self.numeric.get(m.group(1), 0)
        return f"{m.group(1)}@{count if m.group(2) == 'b' else count + 1}"


def parse(lines: str | Iterable[str], dialect: Dialect) -> Iterator[Record]:
    """Records for GNU-assembler text in `dialect`; streams, buffering one function at a time."""
    reader = _Reader(dialect)
    out = reader.out
    for n, raw in iter_lines(lines):
        reader.line(n, raw)
        if out:
            yield from out
            out.clear()
    reader.flush()
    yield from out
