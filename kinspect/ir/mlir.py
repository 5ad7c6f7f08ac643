"""MLIR text -> records: TTIR, TTGIR and the CPU backends' MLIR (linalg, memref, vector, LLVM dialect).

Yields, in line order:
- Layout for every TTGIR encoding alias at the top (`#mma = #ttg.nvidia_mma<{...}>`); `kind` is
  the encoding's name as printed (`blocked`, `nvidia_mma`, `amd_mfma`, `nvmma_shared`,
  `swizzled_shared`, `linear`, ...).
- Resource for the module attributes that state a figure (`ttg.num-warps` -> num_warps,
  `ttg.threads-per-warp` -> threads_per_warp, `ttg.shared` -> shared_bytes, `ttg.num-ctas` ->
  num_ctas).
- Function for every function definition (`tt.func`, `func.func`, `llvm.func`, `gpu.func`).
- Instruction for every op, nested region bodies included (tt.reduce combiners, scf.for bodies);
  for a matrix op (tt.dot, ttng.warp_group_dot, ttng.tc_gen5_mma, ...) a MatrixOp after it, with
  the m, n, k its operand types give and its result's layout (what ties machine code's matrix
  instructions to the op's line: kinspect.analysis.matrix_lines).
  mnemonic = op = the op name (`tt.dot`); info from kinspect/isa/mlir.py; lanes/elem_bits from
  the result type (the input type for reductions); width for vector<> and scalar types;
  in_loop for ops inside scf.for/scf.while/scf.parallel/scf.forall/affine.for regions or inside
  a CFG loop (`^bb` blocks reached again by a back-branch, as in the LLVM dialect).

Locations: an op ends with `loc(#locN)` or an inline `loc(...)`; ops with regions carry theirs on
the closing `}` line. Triton prints most of the `#locN = loc(...)` table at the END of the file,
so this parser buffers the ops (compact, proportional to the text; MLIR stages are small) and
resolves locations when the input ends. `callsite(callee at caller)` resolves to the outermost
caller (the kernel's line), `"name"(child)` to its child, `fused[...]` to its first known member,
`unknown` (or an undefined reference, as in a truncated file) to None.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Iterable, Iterator

from kinspect.ir.records import (check_text, Function, FunctionParam, Instruction, Kind, Layout, MatrixOp, MemoryOp,
                                 OpInfo, Record, Resource, SourceLoc, iter_lines)
from kinspect.isa import mlir as table

# What this parser reads, for the one line that says a stage could not be read.
FORMATS = ("MLIR as Triton and its CPU backends print it (.ttir, .ttgir, .ttcir, linalg, the LLVM dialect)",)

# #loc38 = loc("c_max"(#loc11))
LOC_DEF = re.compile(r'^#(?P<alias>loc[\w.$]*)\s*=\s*loc\((?P<body>.*)\)\s*$')

# callsite(#loc12 at #loc45)
LOC_TOKEN = re.compile(r'(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<ref>#[\w.$]+)|(?P<word>[A-Za-z_]\w*)'
                       r'|(?P<int>\d+)|(?P<punct>[()\[\]<>,:]))')

# tt.return loc("f"("k.py":3:4))
PAREN_OR_QUOTE = re.compile(r'[()"\\]')

# #mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 128, 8]}>
LAYOUT_DEF = re.compile(r'^#(?P<alias>[\w.$-]+)\s*=\s*#(?P<dialect>\w+)\.(?P<kind>\w+)<')

# module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}
MODULE_ATTR = re.compile(r'(?<![\w.-])"?(?P<key>[\w.-]+)"?\s*=\s*(?P<value>-?\d+)\s*:\s*i\d+')

#     %c = ttng.warp_group_dot %a_11, %b_18, %cst {inputPrecision = 0 : i32} : !ttg.memdesc<128x128xf32, #shared, #smem> * !ttg.memdesc<128x128xf32, #shared1, #smem> -> tensor<128x128xf32, #mma> loc(#loc37)
OP = re.compile(r'^\s*(?:(?P<results>%[\w.$-]+(?::\d+)?(?:\s*,\s*%[\w.$-]+(?::\d+)?)*)\s*=\s*)?'
                r'(?P<quote>"?)(?P<name>[A-Za-z_][\w$]*(?:\.[\w$]+)*)(?P=quote)(?=[\s(<{:]|$)')

#   tt.func public @fused_mm_softmax_kernel(%a_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("a_ptr"(#loc)), %b_ptr: !tt.ptr<f32>) attributes {noinline = false} {
SYMBOL = re.compile(r'@(?P<name>[\w.$-]+|"[^"]*")')

#   ^bb2(%42: i64 loc("row"(#loc5))):  // 2 preds: ^bb1, ^bb3
BLOCK_LABEL = re.compile(r'^\s*\^(?P<label>[\w.$-]+)\s*[(:]')

#     llvm.cond_br %41, ^bb1, ^bb5 loc(#loc25)
SUCCESSOR = re.compile(r'\^(?P<label>[\w.$-]+)')

# tensor<128x128x!tt.ptr<f32>, #blocked>  vector<8xf32>  !ttg.memdesc<3x128x32xf16, #shared, #smem, mutable>  f32  !llvm.struct<(i64, ptr)>
TYPE = re.compile(r'(?P<shaped>tensor|vector|memref|!ttg\.memdesc|!tt\.memdesc)<'
                  r'(?P<dims>(?:(?:\d+|\?|\*|\[\d+\])x)*)'
                  r'(?:!tt\.ptr<(?P<pointee>[A-Za-z_]\w*)[^>]*>|(?P<elem>[A-Za-z_]\w*))'
                  r'|!tt\.ptr<(?P<ptr>[A-Za-z_]\w*)[^>]*>'
                  r'|(?<![\w.!#%@$"])(?P<scalar>bf16|tf32|f(?:16|32|64|80|128)|f8\w*|f6\w*|f4\w*|i\d+|index)\b'
                  r'|(?P<opaque>![\w.]+)')

#  : (tensor<128x128xf32, #mma>) -> tensor<128xf32, #ttg.slice<{dim = 0, parent = #mma}>>
TYPE_SYNTAX = re.compile(r'"(?:[^"\\]|\\.)*"|->| : | to | into |[()\[\]{}<>]')

#  -> tensor<128x64xf32, #mma>     , !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>
ENCODING = re.compile(r"(?:tensor|!ttg\.memdesc)<[\dx?]*[A-Za-z_]\w*,\s*#(?P<name>[\w.]+)")

#   tt.func public @k(%a_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("a_ptr"(#loc)), %n: i32 loc("n"(#loc))) {
PARAM = re.compile(r'%(?P<name>[\w.$-]+):\s*(?P<type>!tt\.ptr<[^>]*>|[^\s,{)]+)(?P<attrs>\s*\{[^}]*\})?')

# {tt.divisibility = 16 : i32}
DIVISIBILITY = re.compile(r'tt\.divisibility\s*=\s*(?P<n>\d+)')

#     %x_3 = tt.load %x_1, %mask_2 : tensor<512x!tt.ptr<bf16>, #blocked> loc(#loc12)
VALUE = re.compile(r'%(?P<name>[\w.$-]+)(?:#\d+)?')

#   iter_args(%acc = %cst, %a_ptrs_76 = %a_ptrs_55) -> (...)
BINDING = re.compile(r'%(?P<name>[\w.$-]+)\s*=\s*%(?P<value>[\w.$-]+)')

#  : tensor<64x64x!tt.ptr<bf16>, #blocked1> -> <64x64xbf16, #shared, #smem, mutable>
POINTER_TENSOR = re.compile(r'tensor<(?P<dims>(?:\d+x)+)(?:!tt\.ptr<(?P<pointee>\w+)>|(?P<elem>\w+))'
                            r'(?:,\s*#(?P<enc>[\w.]+))?')

# {contiguity = 8 : i32}
CONTIGUITY = re.compile(r'\bcontiguity\s*=\s*(?P<n>\d+)')

# the global loads whose facts MemoryOp records; the second operand after `mask` or `,` is the mask
MEMORY_LOADS = {"tt.load", "ttg.async_copy_global_to_local", "amdg.buffer_load", "amdg.buffer_load_to_local",
                "amdgpu.buffer_load", "amdgpu.buffer_load_to_local"}

MAX_LOC_DEPTH = 64

# scalar type name -> bits (iN and the f8/f6/f4 families are worked out in _bits)
_SCALAR_BITS = {"bf16": 16, "f16": 16, "tf32": 32, "f32": 32, "f64": 64, "f80": 80, "f128": 128}

# op names that define functions, and bare op names the func dialect prints without its prefix
FUNC_OPS = {"tt.func", "func.func", "llvm.func", "gpu.func"}
MODULE_OPS = {"module", "builtin.module", "gpu.module"}
BARE_FUNC_OPS = {"return", "call", "call_indirect"}
LOOP_OPS = {"scf.for", "scf.while", "scf.parallel", "scf.forall", "affine.for", "affine.parallel"}
# ops that read/write one element of a memref: the memref's shape is not the op's width
SCALAR_ACCESS = {"memref.load", "memref.store", "affine.load", "affine.store"}
MODULE_RESOURCES = {"ttg.num-warps": "num_warps", "triton_gpu.num-warps": "num_warps",
                    "ttg.threads-per-warp": "threads_per_warp",
                    "triton_gpu.threads-per-warp": "threads_per_warp",
                    "ttg.shared": "shared_bytes", "triton_gpu.shared": "shared_bytes",
                    "ttg.num-ctas": "num_ctas", "triton_gpu.num-ctas": "num_ctas"}


@dataclasses.dataclass
class _Op:
    """An op waiting for its location (and, for region ops, its closing line)."""

    name: str
    info: OpInfo
    line: int
    function: str
    ctx: tuple          # ((frame id, block index), ...) from the outermost region inwards
    in_loop: bool
    loc: object = None  # parsed loc expression, resolved at the end
    shape: tuple = ()   # (width, elem_bits, lanes, vector type?, fp elements?); () = no types yet
    matrix: tuple = ()  # a matrix op's (m, n, k, encoding, A's element bits)
    memory: dict | None = None   # a global load's MemoryOp fields, its pointer and mask operands
    results: tuple = ()          # a region op's result names (what its scf.yield defines)


@dataclasses.dataclass
class _Frame:
    """One open region: its owner op, its blocks and whether it sits inside a loop op."""

    id: int
    owner: int | None
    function: str
    loop: bool
    ctx: tuple
    labels: dict = dataclasses.field(default_factory=dict)
    block: int = 0
    block_used: bool = False
    last_op: int | None = None
    bare_dialect: str = ""
    carried: tuple = ()    # a loop body's iter_args names, in the order scf.yield passes them


def parse(lines: str | Iterable[str]) -> Iterator[Record]:
    """Records for MLIR text (see the module docstring); buffers ops until the input ends."""
    state = _State()
    for n, line in iter_lines(lines):
        check_text(n, line, "binary data, not MLIR text; pass the stage's text (.ttir, .ttgir, .mlir), not a compiled file")
        yield from state.feed(n, line)
    yield from state.finish()


class _State:
    def __init__(self):
        self.locs: dict[str, object] = {}
        self.out: list = []                 # Function records and _Op entries, in line order
        self.stack: list[_Frame] = [_Frame(0, None, "", False, ((0, 0),))]
        self.loops: dict[int, list] = {}    # frame id -> [(first block, last block)] of CFG loops
        self.frames = 1
        self.in_blob = False
        # data flow, for what a load's pointer is computed from: (function, value) -> the values it uses
        self.uses: dict[tuple[str, str], set] = {}
        self.loaded: set[tuple[str, str]] = set()     # values read from memory (a load's results)
        self.params: dict[str, tuple[FunctionParam, ...]] = {}

    def feed(self, n: int, line: str) -> Iterator[Record]:
        s = line.strip()
        if not s or s.startswith("//"):
            return
        if self.in_blob or s.startswith("{-#"):      # dialect_resources blob at the end
            self.in_blob = not s.startswith("#-}")
            return
        if s.startswith("#"):
            yield from self._alias(n, s)
        elif s.startswith("^"):
            self._block(s)
        elif s.startswith("}"):
            self._close(s)
        else:
            yield from self._op(n, line, s)

    # --- lines -------------------------------------------------------------------------------
    def _alias(self, n: int, s: str) -> Iterator[Record]:
        m = LOC_DEF.match(s)
        if m:
            self.locs[m["alias"]] = _parse_loc(m["body"])
            return
        m = LAYOUT_DEF.match(s)
        if m:
            yield Layout(alias=m["alias"], kind=m["kind"], text=s, line=n)

    def _block(self, s: str) -> None:
        m = BLOCK_LABEL.match(s)
        if not m:
            return
        f = self.stack[-1]
        if f.block_used or f.labels:     # the entry block may be unlabelled or labelled ^bb0
            f.block += 1
            f.block_used = False
            f.ctx = f.ctx[:-1] + ((f.id, f.block),)
        f.labels[m["label"]] = f.block

    def _close(self, s: str) -> None:
        if len(self.stack) > 1:
            f = self.stack.pop()
        else:
            return
        if f.owner is not None:
            op = self.out[f.owner]
            text, loc = _split_loc(s)
            if loc is not None:
                op.loc = _parse_loc(loc)
            if not any(op.shape):        # generic-form ops print their types after the region
                op.shape = _shape(op.name, op.info, " " + text.lstrip("})").strip())
        if s.endswith("{"):              # `} else {`, `} do {`: the same op's next region
            self._push(f.owner, f.loop, f.function, f.bare_dialect)

    def _op(self, n: int, line: str, s: str) -> Iterator[Record]:
        m = OP.match(line)
        name = m["name"] if m else ""
        top = self.stack[-1]
        if name in MODULE_OPS:
            yield from _module_resources(n, s)
            if s.endswith("{"):
                self._push(None, False, "", "")
        elif name in FUNC_OPS:
            self._function(n, name, s)
        elif "." in name:
            self._add_op(n, name, s, line[m.end():])
        elif top.bare_dialect and name in BARE_FUNC_OPS:     # `return` inside func.func
            self._add_op(n, f"{top.bare_dialect}.{name}", s, line[m.end():])
        elif s.endswith("{"):            # `default {`, `(%in: f32 ...) {`: a region of the last op
            owner = top.last_op
            loop = top.loop or (owner is not None and self.out[owner].name in LOOP_OPS)
            self._push(owner, loop, top.function, top.bare_dialect)

    def _function(self, n: int, name: str, s: str) -> None:
        if not s.endswith("{"):          # a declaration: no body, no record
            return
        sym = SYMBOL.search(s)
        fname = sym["name"].strip('"') if sym else ""
        head = s[sym.end():] if sym else s
        params = tuple(FunctionParam(p["name"], p["type"],
                                     int(d["n"]) if (d := DIVISIBILITY.search(p["attrs"] or "")) else None)
                       for p in PARAM.finditer(head.split(" attributes ", 1)[0]))
        self.params[fname] = params
        self.out.append(Function(name=fname, line=n, params=params))
        self._push(None, False, fname, "func" if name == "func.func" else "")

    def _add_op(self, n: int, name: str, s: str, rest: str) -> None:
        top = self.stack[-1]
        text, loc = _split_loc(s)
        has_operands = "%" in _top_level(rest, (" : ",))[0]
        info = table.lookup(name, has_operands=has_operands)
        opens = s.endswith("{")
        op = _Op(name, info, n, top.function, top.ctx, top.loop,
                 loc=_parse_loc(loc) if loc is not None else None, shape=_shape(name, info, text),
                 matrix=_matrix_shape(text) if info.kind is Kind.MATRIX else ())
        if info.ordered and ("reassoc" in text or "fastmath<fast>" in text):
            op.info = _replace(info, ordered=False)
        index = len(self.out)
        self.out.append(op)
        carried = self._flow(top, name, text)
        if name in MEMORY_LOADS:
            op.memory = _memory(name, text)
        top.last_op = index
        top.block_used = True
        if "^" in text:
            self._branch(top, text)
        if opens:
            self._push(index, top.loop or name in LOOP_OPS, top.function, top.bare_dialect)
            self.stack[-1].carried = carried

    def _flow(self, top: _Frame, name: str, text: str) -> tuple:
        """Record which values this op's results are computed from; a loop's iter_args names (what
        its body's scf.yield passes on) are returned for the region it opens."""
        head, _, body = text.partition("=") if text.lstrip().startswith("%") else ("", "", text)
        operands = _top_level(body, (" : ",))[0]
        results = [v["name"] for v in VALUE.finditer(head)]
        used = {v["name"] for v in VALUE.finditer(operands)}
        fn = top.function
        for r in results:
            self.uses.setdefault((fn, r), set()).update(used)
            if name in MEMORY_LOADS:
                self.loaded.add((fn, r))
        carried = []
        for b in BINDING.finditer(operands):           # iter_args(%x = %init), scf.while (%x = %init)
            self.uses.setdefault((fn, b["name"]), set()).add(b["value"])
            carried.append(b["name"])
        if name == "scf.yield" and top.owner is not None:
            owner = self.out[top.owner]
            yielded = [v["name"] for v in VALUE.finditer(operands)]
            if top.carried and owner.name in LOOP_OPS:
                for var, value in zip(top.carried[-len(yielded):] if yielded else (), yielded):
                    self.uses.setdefault((fn, var), set()).add(value)
            for r in owner.results:
                self.uses.setdefault((fn, r), set()).update(yielded)
        if results and name.startswith("scf."):
            self.out[-1].results = tuple(results)
        return tuple(carried)

    def _reaches(self, function: str, value: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(the function's arguments a value is computed from, those of them it reaches only through
        a value read from memory), in their declared order."""
        if value is None:
            return (), ()
        params = {p.name for p in self.params.get(function, ())}
        seen, todo, found, through = {(value, False)}, [(value, False)], set(), set()
        while todo:
            v, loaded = todo.pop()
            if v in params:
                (through if loaded else found).add(v)
            loaded = loaded or (function, v) in self.loaded
            for u in self.uses.get((function, v), ()):
                if (u, loaded) not in seen:
                    seen.add((u, loaded))
                    todo.append((u, loaded))
        order = [p.name for p in self.params.get(function, ())]
        return tuple(n for n in order if n in found), tuple(n for n in order if n in through)

    def _branch(self, f: _Frame, text: str) -> None:
        """A branch back to a block at or before this one closes a loop over the blocks between."""
        for target in SUCCESSOR.findall(text):
            first = f.labels.get(target)
            if first is not None and first <= f.block:
                self.loops.setdefault(f.id, []).append((first, f.block))

    def _push(self, owner: int | None, loop: bool, function: str, bare: str) -> None:
        parent = self.stack[-1]
        fid = self.frames
        self.frames += 1
        self.stack.append(_Frame(fid, owner, function, loop, parent.ctx + ((fid, 0),),
                                 bare_dialect=bare))

    # --- end of input ------------------------------------------------------------------------
    def finish(self) -> Iterator[Record]:
        memo: dict[str, SourceLoc | None] = {}
        for item in self.out:
            if isinstance(item, Function):
                yield item
                continue
            width, elem_bits, lanes, vector, fp = item.shape or _NO_SHAPE
            info = item.info
            if (vector and not info.vector) or (fp and not info.fp):
                info = _replace(info, vector=info.vector or vector, fp=info.fp or fp)
            loc = self._resolve(item.loc, memo)
            yield Instruction(mnemonic=item.name, op=item.name, info=info, line=item.line,
                              width=width, elem_bits=elem_bits, lanes=lanes,
                              function=item.function, loc=loc,
                              in_loop=item.in_loop or self._in_cfg_loop(item.ctx))
            if item.matrix:
                m, n, k, encoding, bits = item.matrix
                yield MatrixOp(op=item.name, line=item.line, m=m, n=n, k=k, encoding=encoding, elem_bits=bits,
                               function=item.function, loc=loc)
            if item.memory is not None:
                fields = dict(item.memory)
                pointer, mask = fields.pop("pointer"), fields.pop("mask")
                args, loaded_from = self._reaches(item.function, pointer)
                yield MemoryOp(op=item.name, line=item.line, **fields, function=item.function, loc=loc,
                               args=args, loaded_from=loaded_from, mask_args=self._reaches(item.function, mask)[0])

    def _in_cfg_loop(self, ctx: tuple) -> bool:
        for fid, block in ctx:
            for first, last in self.loops.get(fid, ()):
                if first <= block <= last:
                    return True
        return False

    def _resolve(self, node, memo: dict, depth: int = 0) -> SourceLoc | None:
        if node is None or depth > 64:
            return None
        tag = node[0]
        if tag == "file":
            return SourceLoc(file=node[1], line=node[2], column=node[3])
        if tag == "ref":
            if node[1] not in memo:
                memo[node[1]] = None     # guards against a reference cycle
                memo[node[1]] = self._resolve(self.locs.get(node[1]), memo, depth + 1)
            return memo[node[1]]
        if tag == "name":
            return self._resolve(node[1], memo, depth + 1)
        if tag == "call":                # the outermost caller is the kernel's own line
            caller = self._resolve(node[2], memo, depth + 1)
            callee = self._resolve(node[1], memo, depth + 1)
            if caller is None or callee is None:
                return caller or callee
            return dataclasses.replace(caller, inlined=caller.inlined + callee.frames)
        for member in node[1]:          # fused
            loc = self._resolve(member, memo, depth + 1)
            if loc is not None:
                return loc
        return None


@functools.lru_cache(maxsize=1024)
def _replace(info: OpInfo, **changes) -> OpInfo:
    """dataclasses.replace, cached: a module repeats few (entry, refinement) pairs many times."""
    return dataclasses.replace(info, **changes)


def _module_resources(n: int, s: str) -> Iterator[Resource]:
    head = s.split("{", 1)[1] if "attributes" in s and "{" in s else ""
    for m in MODULE_ATTR.finditer(head):
        name = MODULE_RESOURCES.get(m["key"])
        if name:
            yield Resource(name=name, value=int(m["value"]), line=n)


# --- locations ---------------------------------------------------------------------------------
def _memory(name: str, text: str) -> dict:
    """A global load's facts from its text: its pointer and mask operands, its shape, element width and
    layout (the pointer tensor's, or the result's where the pointer is a scalar base), and whether it
    loads one element."""
    parts = _top_level(text, (" : ",))
    body = parts[0].partition("=")[2] if parts[0].lstrip().startswith("%") else parts[0]
    body = body.split(name, 1)[-1]
    types = parts[-1] if len(parts) > 1 else ""
    values = [v["name"] for v in VALUE.finditer(body)]
    masked = re.search(r'\bmask\s+%(?P<name>[\w.$-]+)', body)
    if masked:
        mask = masked["name"]
    elif name == "tt.load":
        mask = values[1] if len(values) > 1 else None
    else:
        mask = values[-1] if len(values) > 2 else None
    t = POINTER_TENSOR.search(types)
    contiguity = CONTIGUITY.search(body)
    common = {"pointer": values[0] if values else None, "mask": mask,
              "contiguity": int(contiguity["n"]) if contiguity else None, "volatile": "isVolatile = true" in body}
    if t is None:                          # !tt.ptr<i32>: one element
        scalar = TYPE.search(types)
        bits = _bits(scalar["ptr"] or scalar["scalar"]) if scalar else None
        return {**common, "scalar": True, "shape": (), "elem_bits": bits, "encoding": ""}
    dims = tuple(int(d) for d in t["dims"].split("x")[:-1])
    return {**common, "scalar": False, "shape": dims, "elem_bits": _bits(t["pointee"] or t["elem"]),
            "encoding": t["enc"] or ""}


def _split_loc(s: str) -> tuple[str, str | None]:
    """(text without its trailing `loc(...)`, the loc's inner text or None)."""
    if not s.endswith(")"):
        return s, None
    start = _opening_paren(s)
    i = start - 3
    if start >= 3 and s.startswith("loc(", i) and (i == 0 or s[i - 1] in " \t("):
        return s[:i].rstrip(), s[start + 1:-1]
    return s, None


def _opening_paren(s: str) -> int:
    """Index of the `(` that the `)` ending `s` closes, skipping quoted strings; -1 if none.
    One pass over the line: a line of thousands of nested `loc(` must not cost quadratic time."""
    opens, quoted, escaped_at = [], False, -1
    for m in PAREN_OR_QUOTE.finditer(s):
        c, at = m.group(), m.start()
        if quoted:
            if at == escaped_at:         # the character after a backslash
                continue
            if c == "\\":
                escaped_at = at + 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c == "(":
            opens.append(at)
        elif c == ")" and opens:
            start = opens.pop()
            if at == len(s) - 1:
                return start
    return -1


def _parse_loc(body: str):
    """A loc expression as nested tuples: ("file", path, line, col), ("ref", alias),
    ("name", child), ("call", callee, caller), ("fused", [members]), or None (unknown)."""
    tokens = [(m.lastgroup, m.group(m.lastgroup)) for m in LOC_TOKEN.finditer(body)]
    try:
        node, _ = _loc_expr(tokens, 0)
    except (IndexError, ValueError):
        return None
    return node


def _loc_expr(t: list, i: int, depth: int = 0):
    if depth > MAX_LOC_DEPTH:           # real locations nest a few levels; junk must not blow the stack
        raise ValueError("loc nested too deeply")
    kind, value = t[i]
    if kind == "string":
        text = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        if i + 2 < len(t) and t[i + 1][1] == ":" and t[i + 2][0] == "int":
            line, col, j = int(t[i + 2][1]), 0, i + 3
            if j + 1 < len(t) and t[j][1] == ":" and t[j + 1][0] == "int":
                col, j = int(t[j + 1][1]), j + 2
            return ("file", text, line, col), _skip_range(t, j)
        if i + 1 < len(t) and t[i + 1][1] == "(":
            child, j = _loc_expr(t, i + 2, depth + 1)
            return ("name", child), j + 1
        return None, i + 1
    if kind == "ref":
        return ("ref", value[1:]), i + 1
    if value == "callsite":
        callee, j = _loc_expr(t, i + 2, depth + 1)
        if t[j][1] != "at":
            raise ValueError("callsite without 'at'")
        caller, j = _loc_expr(t, j + 1, depth + 1)
        return ("call", callee, caller), j + 1
    if value == "fused":
        j = i + 1
        if t[j][1] == "<":               # fused<metadata>[...]
            while t[j][1] != ">":
                j += 1
            j += 1
        members, j = [], j + 1
        while t[j][1] != "]":
            member, j = _loc_expr(t, j, depth + 1)
            members.append(member)
            if t[j][1] == ",":
                j += 1
        return ("fused", members), j + 1
    if value == "loc":
        node, j = _loc_expr(t, i + 2, depth + 1)
        return node, j + 1
    return None, i + 1                   # unknown, or a form this parser does not know


def _skip_range(t: list, i: int) -> int:
    """Skip a file location's ` to L:C` range end (newer MLIR prints ranges)."""
    if i < len(t) and t[i][1] == "to":
        i += 1
        while i < len(t) and (t[i][1] == ":" or t[i][0] == "int"):
            i += 1
    return i


# --- types -------------------------------------------------------------------------------------
def _matrix_shape(text: str) -> tuple:
    """(m, n, k, result encoding, A's element bits) of a matrix op from its operand types: A (m x k)
    and B (k x n) are the first two shaped types; the result's (or, for tcgen05, the accumulator's)
    layout is the encoding of the type after `->`, else of the third."""
    parts = _top_level(text, (" : ",))
    if len(parts) < 2:
        return (None, None, None, "", None)
    section = parts[-1]
    shaped = [m for m in TYPE.finditer(section) if m["shaped"] and m["dims"]]
    if len(shaped) < 2:
        return (None, None, None, "", None)
    a = [int(d) for d in shaped[0]["dims"].split("x")[:-1] if d.isdigit()]
    b = [int(d) for d in shaped[1]["dims"].split("x")[:-1] if d.isdigit()]
    if len(a) < 2 or len(b) < 2:
        return (None, None, None, "", None)
    arrow = _top_level(section, ("->",))
    encodings = list(ENCODING.finditer(arrow[-1] if len(arrow) > 1 else section))
    result = encodings[-1 if len(arrow) > 1 else min(2, len(encodings) - 1)]["name"] if encodings else ""
    return (a[-2], b[-1], a[-1], result, _bits(shaped[0]["elem"] or shaped[0]["pointee"]))



def _top_level(text: str, seps: tuple) -> list[str]:
    """Split `text` at the separators (" : ", "->", " to ", " into ") that sit outside (), [],
    {}, <> and strings. `->` is one token, so its `>` never closes a bracket."""
    parts, depth, start = [], 0, 0
    for m in TYPE_SYNTAX.finditer(text):
        token = m.group()
        if token in "([{<":
            depth += 1
        elif token in ")]}>":
            depth -= 1
        elif depth == 0 and token in seps:
            parts.append(text[start:m.start()])
            start = m.end()
    parts.append(text[start:])
    return parts


def _shape(name: str, info: OpInfo, text: str) -> tuple:
    """(width, elem_bits, lanes, vector?, fp?) from an op's types: the input for reductions,
    the result (after `->`, ` to `, ` into `) otherwise; _NO_SHAPE when the text has none."""
    parts = _top_level(text, (" : ",))
    section = parts[-1] if len(parts) > 1 else None
    if section is None:
        arrow = _top_level(text, ("->",))
        if len(arrow) == 1:              # linalg.fill ins(..) outs(..): the last shaped type
            shaped = [m for m in TYPE.finditer(text) if m["shaped"]]
            if not shaped:
                return _NO_SHAPE
            return _describe(shaped[0] if info.kind is Kind.REDUCE else shaped[-1], info)
        section = "->" + arrow[-1]
    types = list(TYPE.finditer(section))
    if not types:
        return _NO_SHAPE
    if info.kind is Kind.REDUCE:
        shaped = [m for m in types if m["shaped"]]
        return _describe(shaped[0] if shaped else types[0], info)
    if name in SCALAR_ACCESS:
        elem = types[0]["elem"] or types[0]["scalar"]
        return _bits(elem), _bits(elem), None, False, _is_float(elem)
    result = _top_level(section, ("->", " to ", " into "))
    if len(result) > 1:
        found = TYPE.search(result[-1])
        if found:
            return _describe(found, info)
    vectors = [m for m in types if m["shaped"] == "vector"]
    return _describe(vectors[-1] if vectors else types[0], info)


_NO_SHAPE = (None, None, None, False, False)


def _describe(m: re.Match, info: OpInfo) -> tuple:
    """(width, elem_bits, lanes, vector?, fp?) for one TYPE match. A pointer element counts as
    its pointee for memory ops (the data moved) and as 64 bits elsewhere (address arithmetic)."""
    memory = info.kind in (Kind.LOAD, Kind.STORE, Kind.ATOMIC)
    if m["opaque"]:                       # !llvm.struct<..>, !ttg.async.token: no element type
        return _NO_SHAPE
    if m["scalar"]:
        bits = _bits(m["scalar"])
        return bits, bits, None, False, _is_float(m["scalar"])
    if m["ptr"]:
        elem = m["ptr"] if memory else None
        bits = _bits(elem) if memory else 64
        return bits, bits, None, False, _is_float(elem)
    elem = m["elem"] or (m["pointee"] if memory else None)
    bits = _bits(elem) if elem else 64
    lanes, scalable = 1, False
    for dim in m["dims"].split("x")[:-1]:
        if dim.startswith("["):
            scalable, dim = True, dim[1:-1]
        if not dim.isdigit():
            return None, bits, None, m["shaped"] == "vector", _is_float(elem)
        lanes *= int(dim)
    vector = m["shaped"] == "vector"
    width = lanes * bits if vector and bits and not scalable else None
    return width, bits, lanes, vector, _is_float(elem)


def _is_float(name: str | None) -> bool:
    return bool(name) and (name[0] == "f" or name[:2] in ("bf", "tf"))


def _bits(name: str | None) -> int | None:
    if not name:
        return None
    if name in _SCALAR_BITS:
        return _SCALAR_BITS[name]
    if name[0] == "i" and name[1:].isdigit():
        return int(name[1:])
    if name[:2] in ("f8", "f6", "f4"):
        return int(name[1])
    return None
