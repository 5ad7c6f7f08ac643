"""LLVM IR text -> records: Triton's llir for NVPTX and AMDGPU, and the CPU backends' .ll/.llir.

Yields a Function per `define` followed by an Instruction per instruction of its body:
- mnemonic: the opcode (`fadd`, `load`, `shufflevector`); for a call to an intrinsic the
  intrinsic's name (`llvm.vector.reduce.fadd.v16f32`, `llvm.amdgcn.mfma.f32.32x32x4.xf32`); for
  inline asm the asm's main instruction (`wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32`,
  `ld.global.v4.b32`: Triton emits these as PTX inline asm); `call` for other calls.
- op: the key matched in kinspect/isa/llvm.py; info from there, refined by the text:
  vector types (`<8 x float>` -> vector, lanes 8, elem_bits 32, width 256; taken from the result,
  the stored value, or a call's first vector argument when it returns a scalar), fp element
  types, address spaces 1/3/4/5 -> GLOBAL/SHARED/CONSTANT/LOCAL on GPU targets (NVPTX or AMDGPU
  triple, or a `ptx_kernel`/`amdgpu_kernel` definition), and ordered=False for fadd/fmul
  reductions called with `reassoc` or `fast`.
- in_loop: the instruction's block lies between a branch target and a later block that branches
  back to it (textual order, as LLVM prints blocks).
- loc: from `!dbg !N` through the DILocation's outermost `inlinedAt` and its scope's DIFile; the
  locations on the way there are its `inlined` helper lines, outermost first, as MLIR's callsite()s.

Memory: one function is buffered at a time (its loops are known only at its `}`). Functions
without `!dbg` are yielded as soon as they end; with debug info the metadata sits at the END of
the module, so those functions' instructions (and the small DILocation/scope/DIFile tables) are
held until the input ends: memory proportional to the file.

Pure text work: no llvmlite import, so it runs where llvmlite is not installed.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Iterable, Iterator

from kinspect.ir.records import (check_text, Access, Function, Instruction, Kind, OpInfo, Record, SourceLoc,
                                 Space, iter_lines)
from kinspect.isa import llvm as table

# What this parser reads, for the one line that says a stage could not be read.
FORMATS = ("LLVM IR text (.llir, .ll, .ir)",)

# target triple = "x86_64-unknown-linux-gnu"
TRIPLE = re.compile(r'^\s*target\s+triple\s*=\s*"(?P<triple>[^"]*)"')

# define ptx_kernel void @fused_mm_softmax_kernel(ptr addrspace(1) %0, i32 %3) local_unnamed_addr #0 !dbg !4 {
DEFINE = re.compile(r'^define\b(?P<head>[^@]*)@(?P<name>[-\w.$]+|"[^"]*")\s*\(')

# .preheader50:                                     ; preds = %13, %.preheader50
LABEL = re.compile(r'^(?P<label>[-\w.$]+|"[^"]*"):')

#   %12 = tail call float @llvm.vector.reduce.fadd.v64f32(float 0.000000e+00, <64 x float> %11), !dbg !9
INSTRUCTION = re.compile(r'^\s+(?:(?P<result>%[-\w.$]+|%"[^"]*")\s*=\s*)?'
                         r'(?:(?:tail|musttail|notail)\s+)?(?P<opcode>[a-z][a-z0-9_]*)\b(?P<rest>.*)$')

#   store <2 x float> %45, ptr %2, align 4, !dbg !12
ATTACHMENT = re.compile(r',\s*!(?P<kind>[\w.]+)\s+!(?P<id>\d+)')

#   br i1 %27, label %.preheader50, label %.loopexit
BRANCH_TARGET = re.compile(r'\blabel\s+%(?P<label>[-\w.$]+|"[^"]*")')

#   %43 = call float @llvm.maxnum.f32(float %42, float %40)
CALLEE = re.compile(r'@(?P<name>[-\w.$]+|"[^"]*")\s*\(')

#   %r = call reassoc float @llvm.vector.reduce.fadd.v8f32(float -0.000000e+00, <8 x float> %v)
FAST_MATH = re.compile(r'\b(?:reassoc|fast)\b')

#   %67 = tail call { i32, i32 } asm sideeffect "mov.u32 $0, 0x0;\0A\09@$3 ld.global.v2.b32 { $0, $1 }, [ $2 + 0 ];", "=r,=r,l,b"(ptr addrspace(1) %1, i1 true)
INLINE_ASM = re.compile(r'\basm\s+(?:(?:sideeffect|alignstack|inteldialect|unwind)\s+)*"(?P<asm>[^"]*)"')

# mov.u32 $0, 0x0;\n\t@$3 ld.global.v2.b32 { $0, $1 }, [ $2 + 0 ];
ASM_STATEMENT = re.compile(r'[;\n]')

# @$3 ld.global.v2.b32 { $0, $1 }, [ $2 + 0 ]
ASM_INSTRUCTION = re.compile(r'^\s*(?:@!?[$%]?\w+\s+)?(?P<mnemonic>[a-z][\w.:]*)')

# ld.global.v4.b32
PTX_SHAPE = re.compile(r'(?:\.v(?P<lanes>\d+))?\.[bfsu](?P<bits>8|16|32|64)\b')

# <8 x float>  <vscale x 4 x float>  { ptr, i64 }  ptr addrspace(3)  i32
TYPE = re.compile(r'(?P<vector><\s*(?P<vscale>vscale\s+x\s+)?(?P<lanes>\d+)\s+x\s+(?P<velem>\w+)[^>]*>)'
                  r'|(?P<aggregate>\{|<\{|\[\d+\s+x\b)|(?P<ptr>\bptr\b)'
                  r'|(?P<scalar>\b(?:half|bfloat|float|double|fp128|x86_fp80|ppc_fp128|i\d+)\b)')

#   %59 = load <2 x float>, ptr addrspace(3) %58, align 8
ADDRSPACE = re.compile(r'\bptr(?:\s+addrspace\((?P<space>\d+)\))?')

# !9 = !DILocation(line: 267, column: 36, scope: !10, inlinedAt: !12)
METADATA = re.compile(r'^!(?P<id>\d+)\s*=\s*(?:distinct\s+)?!(?P<kind>DILocation|DISubprogram|'
                      r'DILexicalBlockFile|DILexicalBlock|DIFile|DINamespace|DIModule)\((?P<body>.*)\)\s*$')

# !2 = !DIFile(filename: "sum-test.py", directory: "/home/ruiqigao/ruiqi/triton-cpu/python/test/cpu")
FIELD = re.compile(r'\b(?P<key>line|column|scope|inlinedAt|file|filename|directory):\s*'
                   r'(?:!(?P<ref>\d+)|"(?P<str>(?:[^"\\]|\\.)*)"|(?P<int>\d+))')

# directory: "C:\5CUsers\5Ck"
ESCAPE = re.compile(r'\\(?P<hex>[0-9A-Fa-f]{2})')

_FP_TYPES = {"half": 16, "bfloat": 16, "float": 32, "double": 64, "fp128": 128, "x86_fp80": 80,
             "ppc_fp128": 128}
_NO_TYPES = {"br", "switch", "indirectbr", "ret", "unreachable", "resume", "alloca",
             "getelementptr", "fence"}
_CASTS = {"trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp",
          "ptrtoint", "inttoptr", "bitcast", "addrspacecast"}


def target_triple(lines: str | Iterable[str]) -> str | None:
    """The module's `target triple`, or None (Triton's NVPTX llir has none). Reads up to the
    triple or the first `define`, whichever comes first."""
    for _, line in iter_lines(lines):
        m = TRIPLE.match(line)
        if m:
            return m["triple"]
        if line.startswith("define"):
            return None
    return None


def parse(lines: str | Iterable[str]) -> Iterator[Record]:
    """Records for LLVM IR text; see the module docstring for what is buffered."""
    state = _State()
    for n, line in iter_lines(lines):
        check_text(n, line, "binary data, not LLVM IR text; pass the .ll/.llir text (for bitcode, run llvm-dis first)")
        yield from state.feed(n, line)
    yield from state.finish()


@dataclasses.dataclass
class _Function:
    """The function being read: its instructions, blocks and back-branches."""

    record: Function
    gpu: str
    rows: list = dataclasses.field(default_factory=list)   # (Instruction fields, block, dbg id)
    labels: dict = dataclasses.field(default_factory=dict)
    block: int = 0
    loops: list = dataclasses.field(default_factory=list)  # (first block, last block)
    in_switch: bool = False


class _State:
    def __init__(self):
        self.gpu = ""                # "nvptx" or "amdgcn" once known, "" for CPUs
        self.fn: _Function | None = None
        self.pending: list[_Function] = []   # functions waiting for the metadata at the end
        self.locations: dict[int, tuple] = {}   # DILocation: (line, column, scope, inlinedAt)
        self.scopes: dict[int, tuple] = {}      # subprograms and blocks: (file, parent scope)
        self.files: dict[int, str] = {}

    def feed(self, n: int, line: str) -> Iterator[Record]:
        if self.fn is not None:
            if line.startswith("}"):
                yield from self._end_function()
            else:
                self._body(n, line)
            return
        if line.startswith("define"):
            self._begin_function(n, line)
        elif line.startswith("!"):
            self._metadata(line)
        elif line.startswith("target"):
            m = TRIPLE.match(line)
            if m:
                self.gpu = _gpu_of(m["triple"])

    # --- functions ---------------------------------------------------------------------------
    def _begin_function(self, n: int, line: str) -> None:
        m = DEFINE.match(line)
        if not m:
            return
        if not self.gpu:             # Triton's NVPTX llir has no triple, but its kernels say so
            self.gpu = ("nvptx" if "ptx_kernel" in m["head"] else
                        "amdgcn" if "amdgpu_kernel" in m["head"] else "")
        self.fn = _Function(Function(name=m["name"].strip('"'), line=n), self.gpu)

    def _body(self, n: int, line: str) -> None:
        fn = self.fn
        s = line.strip()
        if not s or s[0] in ";#":        # comments, `#dbg_value(...)` records
            return
        if fn.in_switch:                 # the `[ i32 0, label %a ... ]` lines of a switch
            self._branch(fn, s)
            fn.in_switch = not s.startswith("]")
            return
        m = LABEL.match(line)
        if m:
            if fn.rows or fn.labels:
                fn.block += 1
            fn.labels[m["label"].strip('"')] = fn.block
            return
        m = INSTRUCTION.match(line)
        if m:
            self._instruction(fn, n, m["opcode"], m["rest"])

    def _instruction(self, fn: _Function, n: int, opcode: str, rest: str) -> None:
        attachments = list(ATTACHMENT.finditer(rest))     # `, !dbg !9`, `, !tbaa !5` at the end
        body = rest[:attachments[0].start()] if attachments else rest
        dbg = next((int(a["id"]) for a in attachments if a["kind"] == "dbg"), None)
        mnemonic, op, info, shape = _classify(opcode, body, fn.gpu)
        fn.rows.append(((mnemonic, op, info, n) + shape, fn.block, dbg))
        if opcode in ("br", "switch", "indirectbr", "invoke", "callbr"):
            self._branch(fn, body)
            fn.in_switch = opcode == "switch" and body.rstrip().endswith("[")

    def _branch(self, fn: _Function, text: str) -> None:
        """A branch to a block at or before this one closes a loop over the blocks between."""
        for m in BRANCH_TARGET.finditer(text):
            first = fn.labels.get(m["label"].strip('"'))
            if first is not None and first <= fn.block:
                fn.loops.append((first, fn.block))

    def _end_function(self) -> Iterator[Record]:
        fn, self.fn = self.fn, None
        if self.pending or any(dbg is not None for _, _, dbg in fn.rows):
            self.pending.append(fn)
        else:
            yield from self._records(fn)

    def _records(self, fn: _Function) -> Iterator[Record]:
        yield fn.record
        in_loop = set()
        for first, last in fn.loops:
            in_loop.update(range(first, last + 1))
        memo: dict[int, SourceLoc | None] = {}
        for (mnemonic, op, info, n, width, elem_bits, lanes), block, dbg in fn.rows:
            yield Instruction(mnemonic=mnemonic, op=op, info=info, line=n, width=width,
                              elem_bits=elem_bits, lanes=lanes, function=fn.record.name,
                              loc=self._resolve(dbg, memo), in_loop=block in in_loop)

    def finish(self) -> Iterator[Record]:
        if self.fn is not None:          # truncated inside a function: what was read
            self.pending.append(self.fn)
            self.fn = None
        for fn in self.pending:
            yield from self._records(fn)
        self.pending = []

    # --- debug metadata ----------------------------------------------------------------------
    def _metadata(self, line: str) -> None:
        m = METADATA.match(line)
        if not m:
            return
        fields = {}
        for f in FIELD.finditer(m["body"]):
            fields.setdefault(f["key"], int(f["ref"] or f["int"]) if f["str"] is None
                              else _unescape(f["str"]))
        key, kind = int(m["id"]), m["kind"]
        if kind == "DILocation":
            self.locations[key] = (fields.get("line", 0), fields.get("column", 0),
                                   fields.get("scope"), fields.get("inlinedAt"))
        elif kind == "DIFile":
            name, folder = fields.get("filename", ""), fields.get("directory", "")
            self.files[key] = name if not folder or name.startswith("/") else f"{folder}/{name}"
        else:
            self.scopes[key] = (fields.get("file"), fields.get("scope"))

    def _resolve(self, dbg: int | None, memo: dict) -> SourceLoc | None:
        """The outermost inlinedAt location of !dbg, in its scope's file; None when unknown."""
        if dbg is None:
            return None
        if dbg not in memo:
            memo[dbg] = self._lookup(dbg)
        return memo[dbg]

    def _lookup(self, dbg: int) -> SourceLoc | None:
        loc = self.locations.get(dbg)
        chain = []                   # the inlined helpers' locations, innermost first
        for _ in range(256):         # bounded: a malformed cycle must not hang us
            if loc is None or loc[3] not in self.locations:
                break
            chain.append(loc)
            loc = self.locations[loc[3]]
        if loc is None or not loc[0]:
            return None
        inlined = tuple((self._file_of(c[2]), c[0]) for c in reversed(chain) if c[0])
        return SourceLoc(file=self._file_of(loc[2]), line=loc[0], column=loc[1], inlined=inlined)

    def _file_of(self, scope: int | None) -> str:
        for _ in range(256):
            if scope not in self.scopes:
                return ""
            file, parent = self.scopes[scope]
            if file in self.files:
                return self.files[file]
            scope = parent
        return ""


# --- classification ----------------------------------------------------------------------------
def _classify(opcode: str, body: str, gpu: str) -> tuple[str, str, OpInfo, tuple]:
    """(mnemonic, op, info, (width, elem_bits, lanes)) for one instruction."""
    if opcode not in ("call", "invoke", "callbr"):
        info = table.lookup_opcode(opcode)
        shape = _shape(opcode, body)
        return opcode, opcode, _refine(info, body, gpu, shape), shape[:3]
    asm = INLINE_ASM.search(body)
    if asm:
        mnemonic = _asm_mnemonic(asm["asm"])
        op, info = table.lookup_inline_asm(mnemonic)
        return mnemonic, op, *_asm_shape(mnemonic, info)
    callee = CALLEE.search(body)
    name = callee["name"].strip('"') if callee else ""
    if not name.startswith("llvm."):
        return opcode, opcode, table.lookup_opcode(opcode), (None, None, None)
    op, info = table.lookup_intrinsic(name)
    if info.ordered and FAST_MATH.search(body[:callee.start()]):
        info = _replace(info, ordered=False)
    ret, args = body[:callee.start()], body[callee.end():]
    found = TYPE.search(ret)
    if not (found and found["vector"]):
        found = next((t for t in TYPE.finditer(args) if t["vector"]), found)
    shape = _describe(found)
    return name, op, _refine(info, args, gpu, shape), shape[:3]


def _shape(opcode: str, body: str) -> tuple:
    """(width, elem_bits, lanes, vector?, fp?) of the value an instruction computes or stores."""
    if opcode in _NO_TYPES:
        return _describe(None)
    if opcode in _CASTS and " to " in body:
        return _describe(TYPE.search(body, body.rindex(" to ")))
    if opcode in ("select", "atomicrmw", "cmpxchg") and "," in body:
        return _describe(TYPE.search(body, body.index(",")))
    first = TYPE.search(body)
    if opcode == "shufflevector" and first is not None and first["vector"]:
        mask = [t for t in TYPE.finditer(body) if t["vector"]][-1]
        width, bits, _, vector, fp = _describe(first)
        lanes = int(mask["lanes"])
        return (lanes * bits if bits and not mask["vscale"] else None), bits, lanes, vector, fp
    return _describe(first)


def _describe(t: re.Match | None) -> tuple:
    if t is None or t["aggregate"] or t["ptr"]:
        return None, None, None, False, False
    if t["scalar"]:
        bits = _bits(t["scalar"])
        return bits, bits, None, False, t["scalar"] in _FP_TYPES
    bits, lanes = _bits(t["velem"]), int(t["lanes"])
    width = lanes * bits if bits and not t["vscale"] else None
    return width, bits, lanes, True, t["velem"] in _FP_TYPES


def _bits(name: str) -> int | None:
    if name in _FP_TYPES:
        return _FP_TYPES[name]
    return int(name[1:]) if name[0] == "i" and name[1:].isdigit() else None


def _refine(info: OpInfo, operands: str, gpu: str, shape: tuple) -> OpInfo:
    """Apply what the instruction's text says on top of the table's entry."""
    _, _, _, vector, fp = shape
    changes = {}
    if vector and not info.vector:
        changes["vector"] = True
    if fp and not info.fp:
        changes["fp"] = True
    memory = info.kind in (Kind.LOAD, Kind.STORE, Kind.ATOMIC)
    if memory and vector and info.access is Access.NONE:
        changes["access"] = Access.UNIT
    if memory and gpu and info.space is Space.NONE:
        spaces = [m["space"] for m in ADDRSPACE.finditer(operands)]
        space = table.ADDRESS_SPACES[gpu].get(int(spaces[-1] or 0)) if spaces else None
        if space is not None:
            changes["space"] = space
    return _replace(info, **changes) if changes else info


@functools.lru_cache(maxsize=1024)
def _replace(info: OpInfo, **changes) -> OpInfo:
    """dataclasses.replace, cached: a module repeats few (entry, refinement) pairs many times."""
    return dataclasses.replace(info, **changes)


def _asm_mnemonic(asm: str) -> str:
    """The instruction that gives an inline-asm block its purpose: the first one the table
    classifies as more than a move, else the first instruction, else `asm`."""
    text = ESCAPE.sub(lambda m: chr(int(m["hex"], 16)), asm)
    found = []
    for statement in ASM_STATEMENT.split(text):
        statement = statement.lstrip("{} \t")     # PTX scoping braces around a block
        m = ASM_INSTRUCTION.match(statement)
        if m and not statement.startswith(("//", ".")):
            found.append(m["mnemonic"])
    for mnemonic in found:
        if table.lookup_inline_asm(mnemonic)[1].kind not in (Kind.MOVE, Kind.OTHER):
            return mnemonic
    return found[0] if found else "asm"


def _asm_shape(mnemonic: str, info: OpInfo) -> tuple[OpInfo, tuple]:
    """PTX memory instructions state their shape: ld.global.v4.b32 moves 4 x 32 bits."""
    if info.kind not in (Kind.LOAD, Kind.STORE):
        return info, (None, None, None)
    m = PTX_SHAPE.search(mnemonic)
    if not m:
        return info, (None, None, None)
    bits, lanes = int(m["bits"]), int(m["lanes"] or 1)
    if lanes > 1:
        info = _replace(info, vector=True, access=Access.UNIT)
    return info, (bits * lanes, bits, lanes if lanes > 1 else None)


def _gpu_of(triple: str) -> str:
    arch = triple.split("-", 1)[0]
    if arch.startswith("nvptx"):
        return "nvptx"
    if arch.startswith(("amdgcn", "amdgpu")):
        return "amdgcn"
    return ""


def _unescape(s: str) -> str:
    return ESCAPE.sub(lambda m: chr(int(m["hex"], 16)), s)
