"""What a kernel's own code says about its parameters, read from its AST (nothing is run).

For every parameter the walk collects evidence, each piece with the line it comes from:
- a pointer: the base of tl.load / tl.store / atomics / tl.make_block_ptr /
  tl.make_tensor_descriptor, offset (`X + offs`) and then used so, or passed on to a @triton.jit
  helper that does; its element type from what the body does with the loaded values (offsets into
  another pointer: an integer index tensor; bit operations, `//`, loop bounds: integers; a mask:
  bools; `.to(..., bitcast=True)`: the width), from what is stored through it (`.to(tl.float16)`
  values), from tl.dot (both operands loaded: fp16, as matmul inputs are; beside a cast operand:
  that type; an int32 accumulator: int8), and from `X.dtype.element_ty` comparisons;
- a host tensor descriptor: `desc.load([i, j])` on the parameter itself;
- a scalar: an integer or a float (an argument of tl.exp and friends, compared with a float);
  an integer that multiplies the last axis of a tl.arange is a contiguous stride;
- a constexpr: a dtype (`.to(P)`, `dtype=P`, compared with tl.float16), a string or an int it is
  compared with, a bool (`if P:`), a power of two (tl.arange, a block shape), a small loop count
  (tl.static_range), a function it is called as, None (`P is None`), and tl.static_asserts.

Evidence is gathered through local variables (branches joined, loops walked twice) and through
@triton.jit helpers the kernel calls (arguments bound to their parameters). kinspect.compile.assume
turns it into example values; this module only reads.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
from dataclasses import dataclass, field, replace

E = frozenset()

# tl functions whose first argument passes through, pointer-ness included (shape and hint ops)
PASS_THROUGH = {"reshape", "view", "broadcast_to", "expand_dims", "trans", "permute", "multiple_of",
                "max_contiguous", "max_constancy", "assume", "ravel", "join", "interleave", "flip"}
# tl functions whose result is computed from their arguments' values (no pointer passes through)
VALUE_OPS = {"sum", "max", "min", "maximum", "minimum", "argmax", "argmin", "cumsum", "cumprod", "abs", "sort",
             "split", "reduce", "associative_scan", "clamp", "fma", "xor_sum", "softmax", "umulhi"}
# tl math functions that take floats only: a scalar parameter passed to one is a float
FLOAT_MATH = {"exp", "exp2", "log", "log2", "log1p", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "tan", "erf", "tanh",
              "sigmoid", "pow", "div_rn", "fdiv", "floor", "ceil", "expm1", "asin", "acos", "atan", "sinh", "cosh",
              "rint", "trunc", "gelu", "silu"}
ATOMICS = {"atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg",
           "atomic_cas"}
# keyword arguments of tl functions and what a constexpr passed to one is: (kind, value)
ARG_KINDS = {"eviction_policy": ("str", ""), "cache_modifier": ("str", ""), "padding_option": ("str", ""),
             "input_precision": ("none", None), "allow_tf32": ("bool", True), "num_stages": ("int", 2),
             "loop_unroll_factor": ("int", 1), "flatten": ("bool", False), "axis": ("int", 0),
             "keep_dims": ("bool", False), "out_dtype": ("dtype", "fp32"), "dtype": ("dtype", "fp32"),
             "max_num_imprecise_acc": ("none", None), "volatile": ("bool", False),
             "sanitize_overflow": ("bool", False), "return_indices": ("bool", False), "reverse": ("bool", False),
             "descending": ("bool", False), "warp_specialize": ("bool", False), "disallow_acc_multi_buffer":
             ("bool", False), "is_pure": ("bool", True), "pack": ("int", 1), "can_reorder": ("bool", False),
             "fp_downcast_rounding": ("none", None), "bitcast": ("bool", False)}
# element types by bit width for `.to(T, bitcast=True)` of a loaded value
INT_OF_WIDTH = {8: "i8", 16: "i16", 32: "i32", 64: "i64"}
# tl.dot_scaled formats -> the element type of the operand
SCALED_FORMATS = {"e2m1": "u8", "e4m3": "fp8e4nv", "e5m2": "fp8e5", "bf16": "bf16", "fp16": "fp16",
                  "e2m3": "u8", "e3m2": "u8"}
MAX_DEPTH = 6        # helpers calling helpers


@dataclass(frozen=True)
class Val:
    """What the walk knows of an expression's value."""

    ptr: frozenset = E        # parameters it may point into (pointer arithmetic keeps the pointer)
    loads: frozenset = E      # parameters whose loaded values flow into it
    pure: frozenset = E       # parameters whose loaded value it is, unchanged
    params: frozenset = E     # parameters it is, as they are (a name, or a helper's parameter bound to one)
    derived: frozenset = E    # parameters its arithmetic uses
    dtype: object = None      # a known element type: "fp16", ("param", P), ("elem", P)
    axis: str | None = None   # for tl.arange-derived values: "last" when it runs along the last axis
    desc: frozenset = E       # block pointers / device descriptors over these pointer parameters
    items: tuple | None = None   # a tuple's items
    isdtype: bool = False     # the value is a dtype itself (tl.float16), `dtype` naming which
    const: object = None      # a constant string it holds ("e4m3"); of two branches, the first's
    ints_of: frozenset = E    # parameters whose loaded values it is, cast to an integer (`tl.load(p + g).to(
    #                           tl.int32)`), or offset by other integers: what it indexes with, they hold
    pid: bool = False         # a program's index, made from tl.program_id with no load (`pid * BLOCK`)

    def all(self) -> frozenset:
        return self.params | self.derived


def join(a: Val | None, b: Val | None) -> Val:
    if a is None:
        return b or Val()
    if b is None:
        return a
    return Val(a.ptr | b.ptr, a.loads | b.loads, a.pure & b.pure if (a.pure and b.pure) else a.pure | b.pure,
               a.params | b.params, a.derived | b.derived, a.dtype if a.dtype == b.dtype else None,
               a.axis if a.axis == b.axis else None, a.desc | b.desc,
               a.items if a.items == b.items else None, a.isdtype and b.isdtype,
               a.const if a.const is not None else b.const, a.ints_of | b.ints_of, a.pid and b.pid)


@dataclass
class Facts:
    """Evidence about one parameter; each entry (…, line, why)."""

    pointer: list = field(default_factory=list)
    elem: list = field(default_factory=list)      # (rank, dtype, line, why); lower rank wins
    options: list = field(default_factory=list)   # element types the code compares its element type with
    desc: list = field(default_factory=list)      # (dims, line)
    ints: list = field(default_factory=list)      # scalar used as an integer
    floats: list = field(default_factory=list)    # scalar used as a float
    contiguous: list = field(default_factory=list)   # multiplies the last axis of an arange
    dtypes: list = field(default_factory=list)    # constexpr used as a dtype: (value or None, line, why)
    strs: list = field(default_factory=list)      # (value, line)
    bools: list = field(default_factory=list)     # (value or None, line, why)
    numbers: list = field(default_factory=list)   # compared with int constants: (value, line)
    pow2: list = field(default_factory=list)      # (line, why)
    loops: list = field(default_factory=list)     # a static loop count: (line,)
    divides: list = field(default_factory=list)   # the right side of // or %, a group or tile size: (line,
    #                                               whether the left side is a constexpr, the int literal it
    #                                               divides: `32 // BITS`, else None)
    called: list = field(default_factory=list)    # (arity, line)
    nones: list = field(default_factory=list)     # (line,)
    kinds: list = field(default_factory=list)     # from a tl keyword: (kind, value, line, why)
    used: list = field(default_factory=list)      # any use at all: (line,)


# element-type ranks: a requirement of the code, an explicit type, a tl.dot pairing, a habit
NEED, EXPLICIT, PAIRED, HABIT = 0, 1, 2, 3


@dataclass
class Frame:
    globals: dict
    offset: int               # add to an AST line to get the file's line
    env: dict
    returns: list = field(default_factory=list)


class Walk:
    """Walks a kernel and the @triton.jit helpers it calls; `facts` per parameter of the kernel."""

    def __init__(self, jit):
        self.jit = jit
        fn = jit.fn
        params = params_of(jit)
        self.names = [p.name for p in params]
        self.constexprs = {p.name for p in params if p.is_constexpr}
        self.facts = {n: Facts() for n in self.names}
        self.offsets: list = []      # (pointer candidates, loaded params, line): loaded values used as offsets
        self.stored: list = []       # (pointer params, value Val, line)
        self.tiles: list = []        # (constexprs, constant factor, line): a tile's shape
        self.dots: list = []         # (params loaded as one operand, as the other, line): tl.dot pairs
        self.ptr_offsets: list = []  # (pointer candidates, params in the offset, line): `X + i * stride`
        self.asserts: list = []      # tl.static_assert conditions in the kernel itself (AST)
        self.kernel_globals = fn.__globals__
        self._stack: list = []
        self._loops = 0           # loops the walk is inside
        self.rank = 1             # the most dimensions a tile is broadcast to
        self._acc = None          # the dtype of the accumulator a `acc += tl.dot(a, b)` adds to
        self._fns: list = []      # helpers being walked (no recursion)
        self._seen: set = set()   # helpers walked with these arguments already
        self.kernel = True
        self.errors: list = []
        self._guards: list = []      # the kernel's `if FLAG:` / `if not FLAG:` the walk is inside: (FLAG, True/False)
        self.guards_at: dict = {}    # file line -> the flags that guard it there

    # -- entry -------------------------------------------------------------------------------------
    def run(self) -> "Walk":
        env = {n: Val(ptr=E if n in self.constexprs else frozenset({n}), params=frozenset({n})) for n in self.names}
        self.function(self.jit.fn, env, kernel=True)
        return self

    def function(self, fn, env: dict, kernel: bool = False) -> Val:
        try:
            src, start = inspect.getsourcelines(fn)
            tree = ast.parse(textwrap.dedent("".join(src)))
        except (OSError, TypeError, SyntaxError, IndentationError) as e:
            self.errors.append(f"{getattr(fn, '__name__', fn)}: {e}")
            return Val()
        node = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        if node is None:
            return Val()
        frame = Frame(fn.__globals__, start - 1, dict(env))
        self._stack.append(frame)
        self.kernel = kernel
        try:
            self.block(node.body, frame)
        finally:
            self._stack.pop()
        out = Val()
        for r in frame.returns:
            out = join(out, r)
        return out

    @property
    def frame(self) -> Frame:
        return self._stack[-1]

    def line(self, node) -> int:
        line = getattr(node, "lineno", 0) + self.frame.offset
        self.guards_at.setdefault(line, tuple(self._guards))
        return line

    def flag(self, test) -> tuple[str, bool] | None:
        """(P, True) for `if P:` on a constexpr parameter of the kernel, (P, False) for `if not P:`."""
        want = True
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, want = test.operand, False
        if not (len(self._stack) == 1 and isinstance(test, ast.Name)):
            return None
        v = self.frame.env.get(test.id)
        (p,) = v.params if v is not None and len(v.params) == 1 else (None,)
        return (p, want) if p in self.constexprs else None

    # -- statements --------------------------------------------------------------------------------
    def block(self, body, frame: Frame) -> None:
        for stmt in body:
            self.stmt(stmt, frame)

    def stmt(self, s, frame: Frame) -> None:
        if isinstance(s, ast.Assign):
            if isinstance(s.value, ast.BinOp) and isinstance(s.value.left, ast.Name):   # acc = acc + tl.dot(..)
                self._acc = getattr(frame.env.get(s.value.left.id), "dtype", None)
            v = self.expr(s.value)
            self._acc = None
            for t in s.targets:
                self.assign(t, v, s.value)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.assign(s.target, self.expr(s.value), s.value)
        elif isinstance(s, ast.AugAssign):
            current = self.expr(s.target)
            self._acc = current.dtype
            value = self.expr(s.value)
            if self._loops and _is_int(current.dtype) and isinstance(s.op, (ast.Add, ast.Sub, ast.Mult)):
                self.need_int(value, s, "added to an integer carried through a loop")
            v = self.binop(s.op, current, value, s, s.target, s.value)
            self._acc = None
            self.assign(s.target, v, None)
        elif isinstance(s, ast.If):
            self.boolish(self.expr(s.test), s.test)
            flag = self.flag(s.test)
            before = dict(frame.env)
            self._guards += [flag] if flag else []
            self.block(s.body, frame)
            if flag:
                self._guards[-1] = (flag[0], not flag[1])
            after_body, frame.env = frame.env, dict(before)
            self.block(s.orelse, frame)
            if flag:
                self._guards.pop()
            frame.env = self._join_env(after_body, frame.env)
        elif isinstance(s, (ast.For, ast.While)):
            if isinstance(s, ast.For):
                self.expr(s.iter)
                self.assign(s.target, Val(), None)
            else:
                self.expr(s.test)
            self._loops += 1
            for _ in range(2):      # loop-carried values: the second pass sees the first's
                before = dict(frame.env)
                self.block(s.body, frame)
                frame.env = self._join_env(before, frame.env)
            self._loops -= 1
            self.block(s.orelse, frame)
        elif isinstance(s, ast.Return):
            if s.value is not None:
                frame.returns.append(self.expr(s.value))
        elif isinstance(s, ast.Expr):
            self.expr(s.value)
        elif isinstance(s, ast.With):
            for item in s.items:
                self.expr(item.context_expr)
            self.block(s.body, frame)
        elif isinstance(s, ast.Assert):
            self.expr(s.test)
        elif isinstance(s, ast.Try):
            self.block(s.body, frame)

    @staticmethod
    def _join_env(a: dict, b: dict) -> dict:
        return {k: join(a.get(k), b.get(k)) for k in {**a, **b}}

    def assign(self, target, v: Val, value_node) -> None:
        env = self.frame.env
        if isinstance(target, ast.Name):
            env[target.id] = v
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value_node, (ast.Tuple, ast.List)) and len(value_node.elts) == len(target.elts):
                for t, n in zip(target.elts, value_node.elts):
                    self.assign(t, self.expr(n), n)
            else:
                items = v.items if v.items and len(v.items) == len(target.elts) else None
                for i, t in enumerate(target.elts):
                    self.assign(t, items[i] if items else replace(v, items=None), None)

    # -- expressions -------------------------------------------------------------------------------
    def expr(self, node) -> Val:
        try:
            return self._expr(node)
        except RecursionError:
            return Val()

    def _expr(self, n) -> Val:
        if isinstance(n, ast.Name):
            if n.id in self.frame.env:
                v = self.frame.env[n.id]
                for p in v.params:
                    self.facts[p].used.append((self.line(n),))
                return v
            obj = self.frame.globals.get(n.id)
            return Val(dtype=_dtype_name(obj), isdtype=True) if _dtype_name(obj) else Val()
        if isinstance(n, ast.Constant):
            c = n.value
            if isinstance(c, str):
                return Val(const=c)
            return Val(dtype="i1" if isinstance(c, bool) else "i32" if isinstance(c, int) else
                       "fp32" if isinstance(c, float) else None)
        if isinstance(n, ast.Attribute):
            return self.attribute(n)
        if isinstance(n, ast.BinOp):
            return self.binop(n.op, self.expr(n.left), self.expr(n.right), n, n.left, n.right)
        if isinstance(n, ast.UnaryOp):
            v = self.expr(n.operand)
            if isinstance(n.op, ast.Invert):
                self.need_int(v, n, "bit operations (~)")
            if isinstance(n.op, ast.Not):
                self.boolish(v, n)
            return replace(v, ptr=E, pure=E, params=E, derived=v.all())
        if isinstance(n, ast.BoolOp):
            out = Val()
            for x in n.values:
                v = self.expr(x)
                self.boolish(v, x)
                out = join(out, replace(v, ptr=E, pure=E))
            return replace(out, params=E)
        if isinstance(n, ast.Compare):
            return self.compare(n)
        if isinstance(n, ast.Call):
            return self.call(n)
        if isinstance(n, ast.Subscript):
            return self.subscript(n)
        if isinstance(n, ast.IfExp):
            self.boolish(self.expr(n.test), n.test)
            body, orelse = self.expr(n.body), self.expr(n.orelse)
            line = self.line(n)
            for x, y in ((body, orelse), (orelse, body)):
                # `tl.load(idx + pid) if idx else tl.cast(pid, tl.int64)`: both sides are one type
                if x.pure and x.dtype is None and isinstance(y.dtype, str) and y.dtype not in ("pointer", "i1") \
                        and not y.isdtype:
                    self.need(x.pure, y.dtype, line, f"its values meet {_tl(y.dtype)} ones in a conditional at "
                                                     f"line {line}")
            return join(body, orelse)
        if isinstance(n, (ast.Tuple, ast.List)):
            items = tuple(self.expr(e) for e in n.elts)
            out = Val(items=items)
            return out
        for child in ast.iter_child_nodes(n):
            if isinstance(child, ast.expr):
                self.expr(child)
        return Val()

    def attribute(self, n: ast.Attribute) -> Val:
        obj = self.resolve(n)
        if _dtype_name(obj):
            return Val(dtype=_dtype_name(obj), isdtype=True)
        # X.dtype.element_ty: X is a pointer, and this is its element type
        if n.attr == "element_ty" and isinstance(n.value, ast.Attribute) and n.value.attr == "dtype":
            base = self.expr(n.value.value)
            for p in base.ptr:
                self.facts[p].pointer.append((self.line(n), f"{p}.dtype.element_ty at line {self.line(n)}"))
            return Val(dtype=("elem", next(iter(base.ptr))) if len(base.ptr) == 1 else None, isdtype=True)
        base = self.expr(n.value)
        if n.attr == "T":
            return base
        if n.attr == "dtype" and len(base.pure) == 1:
            # `v.dtype` of a value loaded from V, unchanged: V's element type (a cast to it says
            # nothing of V itself: tl.dot(p.to(v.dtype), v) never infers V from V)
            return Val(dtype=("elem", next(iter(base.pure))), isdtype=True)
        if n.attr in ("shape", "numel", "dtype", "type"):
            return Val()
        return Val(loads=base.loads)

    def binop(self, op, a: Val, b: Val, n, left, right) -> Val:
        line = self.line(n)
        self.float_operands(op, a, b, line)
        if isinstance(op, (ast.Add, ast.Sub)):
            # pointer arithmetic: the pointer is the left operand when it can be one (`X + offs`)
            ptr = a.ptr if a.ptr else b.ptr
            other = b if a.ptr else a
            if ptr and other.loads and not _is_int(other.dtype):
                self.offsets.append((ptr, other.loads, line))
            elif ptr and other.ints_of:
                self.offsets.append((ptr, other.ints_of, line))
            elif not ptr and "pointer" in (a.dtype, b.dtype):
                # a pointer the code made from a loaded address (`tl.load(ptrs + g).to(tl.pointer_type(
                # tl.float16))`, a grouped GEMM's): what offsets it is an integer
                other = b if a.dtype == "pointer" else a
                if other.loads and not _is_int(other.dtype):
                    self.need(other.loads, "i32", line, f"its values offset a pointer made from an address at line "
                                                        f"{line}")
            if ptr and other.all() - other.ptr:
                self.ptr_offsets.append((ptr, other.all() - other.ptr, line))
            desc = a.desc | b.desc
            dtype = _num_dtype(a, b)
            return Val(ptr=ptr, loads=a.loads | b.loads, derived=a.all() | b.all() | a.derived | b.derived,
                       dtype=dtype, axis=a.axis or b.axis, desc=desc,
                       ints_of=E if ptr or _is_float(dtype) else a.ints_of | b.ints_of, pid=_index_of(a, b))
        if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)):
            self.need_int(a, n, "bit operations")
            self.need_int(b, n, "bit operations")
        elif isinstance(op, ast.FloorDiv):
            self.need_int(a, n, "integer division (//)")
            self.need_int(b, n, "integer division (//)")
        if isinstance(op, (ast.FloorDiv, ast.Mod)):
            literal = left.value if isinstance(left, ast.Constant) and type(left.value) is int else None
            for p in b.params & self.constexprs:
                self.facts[p].divides.append((line, bool(a.all() & self.constexprs), literal))
        elif isinstance(op, ast.Mult):
            for x, y in ((a, b), (b, a)):
                if x.axis == "last":
                    for p in self.scalar_params(y):
                        self.facts[p].contiguous.append((line,))
        dtype = "i1" if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and a.dtype == b.dtype == "i1" \
            else _num_dtype(a, b)
        ints_of = a.ints_of | b.ints_of if isinstance(op, (ast.Mult, ast.FloorDiv, ast.Mod)) and \
            not _is_float(dtype) else E
        return Val(loads=a.loads | b.loads, derived=a.all() | b.all(), axis=a.axis or b.axis, dtype=dtype,
                   ints_of=ints_of, pid=_index_of(a, b) and isinstance(op, (ast.Mult, ast.FloorDiv, ast.Mod)))

    def float_operands(self, op, a: Val, b: Val, line: int) -> None:
        """A parameter added to, subtracted from, multiplying or dividing a float value (`x * scale`
        with x cast to tl.float32, `acc + eps`) is a float, whatever its name."""
        if not isinstance(op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            return
        for x, y in ((a, b), (b, a)):
            if _is_float(y.dtype):
                for p in x.params:
                    self.facts[p].floats.append((line, f"{_OPS[type(op)]} a {_tl(y.dtype)} value at line {line}"))

    def compare(self, n: ast.Compare) -> Val:
        left = n.left
        vals = [self.expr(left)] + [self.expr(c) for c in n.comparators]
        nodes = [left] + list(n.comparators)
        for i, op in enumerate(n.ops):
            for (xn, xv), (yn, yv) in (((nodes[i], vals[i]), (nodes[i + 1], vals[i + 1])),
                                       ((nodes[i + 1], vals[i + 1]), (nodes[i], vals[i]))):
                self._compared(xn, xv, yn, yv, op, n)
        return Val(dtype="i1")      # a comparison's value is a bool, whatever it compared

    def _compared(self, xn, xv: Val, yn, yv: Val, op, n) -> None:
        line = self.line(n)
        if isinstance(xv.dtype, tuple) and xv.dtype[0] == "elem" and isinstance(yv.dtype, str) and yv.isdtype:
            p = xv.dtype[1]      # X.dtype.element_ty (or a name given it) == tl.float16
            self.facts[p].options.append((yv.dtype, line))
            return
        # a loaded value compared with a tl.arange index (`offs_m < seqlen`, seqlen = tl.load(seqlens + b))
        # or with a program's (`if pid_t >= tl.load(lengths + b): return`) is a size: what it was loaded
        # from holds integers
        index = "a tl.arange index" if yv.axis is not None else "a program's index" if yv.pid else ""
        if index and (xv.pure or xv.ints_of) and not _is_float(xv.dtype):
            self.need(xv.pure | xv.ints_of, "i32", line, f"its values bound {index} at line {line}")
        for p in xv.params:
            f = self.facts[p]
            if yv.axis is not None:    # `offs < n_cols`: a size
                f.ints.append((line, f"{INDEX_BOUND} at line {line}"))
            if isinstance(yn, ast.Constant):
                c = yn.value
                if isinstance(c, bool):
                    f.bools.append((c, line, f"compared with {c} at line {line}"))
                elif isinstance(c, str):
                    f.strs.append((c, line))
                elif isinstance(c, int) and isinstance(op, (ast.Eq, ast.NotEq)):
                    f.numbers.append((c, line))
                elif isinstance(c, float):
                    f.floats.append((line, f"compared with {c} at line {line}"))
                elif c is None:
                    f.nones.append((line,))
            elif isinstance(yn, (ast.Tuple, ast.List, ast.Set)) and isinstance(op, (ast.In, ast.NotIn)):
                for e in yn.elts:
                    if isinstance(e, ast.Constant) and isinstance(e.value, str):
                        f.strs.append((e.value, line))
                    elif isinstance(e, ast.Constant) and isinstance(e.value, int):
                        f.numbers.append((e.value, line))
            elif isinstance(yv.dtype, str) and yv.isdtype:
                f.dtypes.append((yv.dtype, line, f"compared with {_tl(yv.dtype)} at line {line}"))

    def subscript(self, n: ast.Subscript) -> Val:
        base = self.expr(n.value)
        sl = n.slice
        self.expr(sl)
        if base.items is not None and isinstance(sl, ast.Constant) and isinstance(sl.value, int) \
                and -len(base.items) <= sl.value < len(base.items):
            return base.items[sl.value]
        axis = base.axis
        if isinstance(sl, ast.Tuple) and any(isinstance(e, ast.Constant) and e.value is None for e in sl.elts):
            self.rank = max(self.rank, len(sl.elts))      # x[:, None, None]: a 3-D tile
        if isinstance(sl, ast.Tuple) and base.axis is not None:
            last = sl.elts[-1] if sl.elts else None
            axis = "last" if isinstance(last, ast.Slice) else "other"
        return replace(base, axis=axis, items=None, params=E, derived=base.all())

    # -- calls -------------------------------------------------------------------------------------
    def resolve(self, func):
        """The object a dotted name refers to in the current function's globals, or None."""
        parts = []
        while isinstance(func, ast.Attribute):
            parts.insert(0, func.attr)
            func = func.value
        if not isinstance(func, ast.Name) or func.id in self.frame.env:
            return None
        obj = self.frame.globals.get(func.id, getattr(builtins, func.id, None))
        for p in parts:
            try:
                obj = getattr(obj, p)
            except Exception:
                return None
        return obj

    def call(self, n: ast.Call) -> Val:
        func = n.func
        line = self.line(n)
        # a method of a value: x.to(T), desc.load([...]), x.reshape(...)
        if isinstance(func, ast.Attribute) and self.resolve(func) is None:
            base = self.expr(func.value)
            return self.method(func.attr, base, n, line)
        obj = self.resolve(func)
        name = getattr(obj, "__name__", None)
        module = getattr(obj, "__module__", "") or ""
        if isinstance(func, ast.Name) and func.id in self.frame.env:     # a constexpr called as a function
            v = self.frame.env[func.id]
            for p in v.params:
                self.facts[p].called.append((len(n.args), line))
            for a in n.args:
                self.expr(a)
            return Val()
        if obj is not None and (module.startswith("triton.language") or (module == "triton" and name == "cdiv")):
            return self.builtin(obj, name, n, line)
        if obj is not None and hasattr(obj, "fn") and hasattr(obj, "params") and len(self._stack) < MAX_DEPTH:
            return self.helper(obj, n)
        vals = [self.expr(a) for a in n.args] + [self.expr(k.value) for k in n.keywords]
        if name in ("range",) and module == "builtins":
            for v in vals:
                self.need_int(v, n, "a loop bound")
            return Val()
        if name in ("int", "len", "min", "max", "float", "bool") and module == "builtins":
            return Val(loads=frozenset().union(*(v.loads for v in vals)) if vals else E)
        return Val(loads=frozenset().union(*(v.loads for v in vals)) if vals else E)

    def terms(self, node) -> set:
        """The parameters a sum or difference adds as they are (`var + eps - shift`)."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            return self.terms(node.left) | self.terms(node.right)
        if isinstance(node, ast.Name) and node.id in self.frame.env:
            return set(self.frame.env[node.id].params)
        return set()

    def bind(self, obj, n: ast.Call) -> dict:
        """Argument nodes by the tl function's parameter names."""
        target = getattr(obj, "fn", obj)
        try:
            params = [p for p in inspect.signature(target).parameters if not p.startswith("_")]
        except (TypeError, ValueError):
            params = []
        out = {}
        for i, a in enumerate(n.args):
            if isinstance(a, ast.Starred):
                break
            out[params[i] if i < len(params) else f"#{i}"] = a
        for k in n.keywords:
            if k.arg:
                out[k.arg] = k.value
        return out

    def builtin(self, obj, name: str, n: ast.Call, line: int) -> Val:
        args = self.bind(obj, n)
        vals = {k: self.expr(v) for k, v in args.items()}
        for k, node in args.items():          # constexprs passed as tl keyword arguments
            if k in ARG_KINDS:
                kind, value = ARG_KINDS[k]
                for p in vals[k].params:
                    self.facts[p].kinds.append((kind, value, line, f"passed as tl.{name}'s {k}= at line {line}"))
        first = next(iter(vals.values()), Val())
        if name in ("load", "load_tensor_descriptor"):
            ptr = vals.get("pointer", vals.get("desc", first))
            chosen = self.need_pointer(ptr, line, f"loaded at line {line}")
            mask = vals.get("mask")
            if mask is not None:
                self.need(mask.pure | mask.loads, "i1", line, f"its values are a mask at line {line}")
            return Val(loads=chosen, pure=chosen)
        if name == "store" or name == "store_tensor_descriptor":
            ptr = vals.get("pointer", vals.get("desc", first))
            chosen = self.need_pointer(ptr, line, f"stored to at line {line}")
            value = vals.get("value")
            if value is not None:
                self.stored.append((chosen, value, line))
            mask = vals.get("mask")
            if mask is not None:
                self.need(mask.pure | mask.loads, "i1", line, f"its values are a mask at line {line}")
            return Val()
        if name in ATOMICS:
            chosen = self.need_pointer(vals.get("pointer", first), line, f"tl.{name} at line {line}")
            if name in ("atomic_and", "atomic_or", "atomic_xor", "atomic_cas"):
                self.need(chosen, "i32", line, f"tl.{name} at line {line}")
            return Val(loads=chosen)
        if name == "make_block_ptr":
            chosen = self.need_pointer(vals.get("base", first), line, f"the base of tl.make_block_ptr at line {line}")
            self.shape_of(args.get("block_shape"), line, "tl.make_block_ptr's block_shape")
            return Val(desc=chosen)
        if name == "advance":
            return first
        if name == "make_tensor_descriptor":
            chosen = self.need_pointer(vals.get("base", first), line,
                                       f"the base of tl.make_tensor_descriptor at line {line}")
            self.shape_of(args.get("block_shape"), line, "a tensor descriptor's block_shape")
            self.indexes(vals.get("shape"), line, f"a tensor descriptor's shape at line {line}")
            return Val(desc=chosen)
        if name == "arange":
            for k in ("start", "end"):
                if k in vals:
                    self.pow2(vals[k], line, f"tl.arange at line {line}")
            return Val(axis="last")
        if name in ("zeros", "full", "empty", "zeros_like"):
            self.shape_of(args.get("shape"), line, f"tl.{name}'s shape")
            dt = vals.get("dtype")
            return Val(dtype=self.dtype_arg(dt, args.get("dtype"), line, f"tl.{name}(..., dtype=) at line {line}"))
        if name in ("reshape", "broadcast_to", "view"):
            self.shape_of(args.get("shape"), line, f"tl.{name}'s shape")
        if name in PASS_THROUGH:
            return replace(first, params=E, derived=first.all())
        if name == "cast":
            return self.convert(first, vals.get("dtype"), args.get("dtype"), args.get("bitcast"), line)
        if name == "where":
            a, b = vals.get("x", Val()), vals.get("y", Val())
            return replace(join(a, b), params=E, pure=E)
        if name == "dot":
            return self.dot(vals.get("input", Val()), vals.get("other", Val()), vals.get("acc"),
                            vals.get("out_dtype"), args.get("out_dtype"), line)
        if name == "dot_scaled":
            for operand, fmt in (("lhs", "lhs_format"), ("rhs", "rhs_format")):
                const = vals[fmt].const if fmt in vals else None
                if const in SCALED_FORMATS and operand in vals:
                    self.need(vals[operand].pure, SCALED_FORMATS[const], line,
                              f"a tl.dot_scaled '{const}' operand at line {line}", rank=EXPLICIT)
                elif fmt in vals:
                    for p in vals[fmt].params:
                        self.facts[p].strs.append(("e4m3", line))
            for scale in ("lhs_scale", "rhs_scale"):
                if scale in vals:
                    self.need(vals[scale].pure, "u8", line, f"tl.dot_scaled scales at line {line}", rank=EXPLICIT)
            return Val(dtype="fp32")
        if name in ("program_id", "num_programs", "cdiv"):
            for v in vals.values():
                if name == "cdiv":
                    self.need_int(v, n, "tl.cdiv")
                for p in self.scalar_params(v):
                    self.facts[p].ints.append((line, f"tl.{name} at line {line}"))
            return Val(pid=name == "program_id")
        if name == "static_assert":
            if "cond" in vals:
                self.boolish(vals["cond"], n)
            if self.kernel and len(self._stack) == 1 and "cond" in args:
                self.asserts.append((args["cond"], line))
            return Val()
        if name == "static_range" or name == "range":
            for v in vals.values():
                if name == "static_range":
                    for p in v.all():
                        self.facts[p].loops.append((line,))
                self.need_int(v, n, "a loop bound")
            return Val()
        if name in FLOAT_MATH:
            for v in vals.values():
                for p in self.scalar_params(v):
                    self.facts[p].floats.append((line, f"tl.{name}({p}) at line {line}"))
            for node in args.values():      # tl.rsqrt(var + eps): a term of a float function's argument
                for p in self.terms(node):
                    self.facts[p].floats.append((line, f"a term of tl.{name}'s argument at line {line}"))
            return Val(loads=frozenset().union(*(v.loads for v in vals.values())) if vals else E)
        if name == "pointer_type":
            return Val(dtype="pointer", isdtype=True)
        if name in ("rand", "randn", "randint", "randint4x", "rand4x", "randn4x"):
            for k in ("seed", "offset", "offsets"):
                if k in vals:
                    self.need_int(vals[k], n, f"tl.{name}'s {k}")
            return Val(dtype="fp32" if name.startswith("rand") and "int" not in name else "i32")
        return Val(loads=frozenset().union(*(v.loads for v in vals.values())) if vals else E)

    def method(self, attr: str, base: Val, n: ast.Call, line: int) -> Val:
        args = [self.expr(a) for a in n.args]
        kw = {k.arg: k.value for k in n.keywords if k.arg}
        kwv = {k: self.expr(v) for k, v in kw.items()}
        if attr == "to":
            dt_node = n.args[0] if n.args else kw.get("dtype")
            dt_val = args[0] if n.args else kwv.get("dtype")
            return self.convert(base, dt_val, dt_node, kw.get("bitcast"), line)
        if attr in ("load", "store") and (base.desc or (base.params and base.ptr)):
            if base.desc:
                chosen = base.desc
            else:
                chosen = base.ptr
                dims = len(n.args[0].elts) if n.args and isinstance(n.args[0], (ast.List, ast.Tuple)) else 2
                for p in chosen:
                    self.facts[p].desc.append((dims, line))
            if args:
                self.indexes(args[0], line, f"a tensor descriptor's offsets at line {line}")
            if attr == "store" and len(args) > 1:
                self.stored.append((chosen, args[1], line))
            return Val(loads=chosen, pure=chosen) if attr == "load" else Val()
        if attr in PASS_THROUGH or attr in ("reshape", "broadcast_to"):
            if attr in ("reshape", "view", "broadcast_to"):
                for a in n.args:
                    self.shape_of(a, line, f".{attr}'s shape")
                if len(n.args) > 1:          # x.reshape(M, K, 32, 4, 4)
                    self.tile(n.args, line)
            return replace(base, params=E, derived=base.all())
        if attr in ("advance",):
            return base
        return Val(loads=base.loads | base.pure, derived=base.all())

    def helper(self, obj, n: ast.Call) -> Val:
        """A @triton.jit helper: its parameters bound to the arguments' values, walked in turn."""
        fn = obj.fn
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            return Val()
        env = {}
        for i, a in enumerate(n.args):
            if isinstance(a, ast.Starred) or i >= len(params):
                break
            env[params[i]] = self.expr(a)
        for k in n.keywords:
            if k.arg in params:
                env[k.arg] = self.expr(k.value)
        for p in params:
            env.setdefault(p, Val())
        key = (id(fn), repr(sorted((k, v) for k, v in env.items() if v.params or v.ptr or v.loads or v.desc)))
        if key in self._seen or fn in self._fns:
            return Val()
        self._seen.add(key)
        kernel = self.kernel
        self._fns.append(fn)
        try:
            return self.function(fn, env)
        finally:
            self._fns.pop()
            self.kernel = kernel

    # -- evidence ----------------------------------------------------------------------------------
    def need_pointer(self, v: Val, line: int, why: str) -> frozenset:
        """The parameters `v` points into, noted as pointers; for a block pointer or a descriptor,
        its base."""
        if v.desc:
            return v.desc
        for p in v.ptr:
            self.facts[p].pointer.append((line, why))
        return v.ptr

    def need(self, params, dtype: str, line: int, why: str, rank: int = NEED) -> None:
        for p in params:
            self.facts[p].elem.append((rank, dtype, line, why))

    def indexes(self, v: Val | None, line: int, what: str) -> None:
        """The items of `v` (a list of sizes or offsets) are integers: what their loaded values came
        from holds integers (`desc.load([tl.load(starts + g) + k, 0])`)."""
        for item in (v.items or ()) if v is not None else ():
            loaded = item.ints_of if _is_int(item.dtype) else item.loads | item.pure
            if loaded and not _is_float(item.dtype):
                self.need(loaded, "i32", line, f"its values are {what}")

    def need_int(self, v: Val, n, why: str) -> None:
        line = self.line(n)
        # an integer already (`.to(tl.int32)`, a comparison) needs nothing of what it was made from
        if not (_is_int(v.dtype) or v.dtype == "i1" or isinstance(v.dtype, tuple)):
            self.need(v.loads | v.pure, "i32", line, f"{why} on its values at line {line}")
        elif v.ints_of:
            self.need(v.ints_of, "i32", line, f"{why} on its values, cast to an integer, at line {line}")
        for p in self.scalar_params(v):
            self.facts[p].ints.append((line, f"{why} at line {line}"))

    def scalar_params(self, v: Val) -> frozenset:
        """Runtime parameters `v` is, as they are (not through a load)."""
        return frozenset(p for p in v.params if p not in self.constexprs)

    def boolish(self, v: Val, node) -> None:
        line = self.line(node)
        for p in v.params:
            self.facts[p].bools.append((None, line, f"a condition at line {line}"))

    def pow2(self, v: Val, line: int, why: str) -> None:
        for p in v.all():
            if p in self.constexprs:
                self.facts[p].pow2.append((line, why))

    def shape_of(self, node, line: int, why: str) -> None:
        if isinstance(node, (ast.Tuple, ast.List)):
            for e in node.elts:
                self.pow2(self.expr(e), line, f"{why} at line {line}")
            self.tile(node.elts, line)
        elif node is not None:
            self.pow2(self.expr(node), line, f"{why} at line {line}")

    def tile(self, dims, line: int) -> None:
        """Note a tile's shape (constants and constexprs named as they are) for the size limit."""
        const, names = 1, []
        for d in dims:
            if isinstance(d, ast.Constant) and isinstance(d.value, int):
                const *= d.value
            elif isinstance(d, ast.Name) and d.id in self.frame.env and \
                    self.frame.env[d.id].params & self.constexprs:
                names += sorted(self.frame.env[d.id].params & self.constexprs)
            else:
                return
        if names:
            self.tiles.append((tuple(names), const, line))

    def dtype_arg(self, v: Val | None, node, line: int, why: str):
        """The dtype an argument names: a literal tl dtype, a constexpr (noted as a dtype), or None."""
        if v is None:
            return None
        if isinstance(v.dtype, str) and v.isdtype:
            return v.dtype
        for p in v.params:
            self.facts[p].dtypes.append((None, line, why))
            return ("param", p)
        if isinstance(v.dtype, tuple) and v.isdtype:
            return v.dtype
        return None

    def convert(self, v: Val, dt: Val | None, dt_node, bitcast_node, line: int) -> Val:
        target = self.dtype_arg(dt, dt_node, line, f".to({_src(dt_node)}) at line {line}")
        bitcast = isinstance(bitcast_node, ast.Constant) and bitcast_node.value is True
        if target == "pointer":
            self.need(v.pure | v.loads, "i64", line, f"its values are pointers at line {line}", rank=NEED)
            for p in self.scalar_params(v):      # an address passed as an int (data_ptr()): 64 bits
                self.facts[p].ints.append((line, f"{ADDRESS} (cast to a pointer at line {line})"))
            return Val(dtype="pointer")
        if bitcast and isinstance(target, str):
            width = _width(target)
            if width in INT_OF_WIDTH:
                self.need(v.pure, INT_OF_WIDTH[width] if not target.startswith(("i", "u")) else target, line,
                          f".to({_tl(target)}, bitcast=True) of its values at line {line}", rank=NEED)
        to_int = _is_int(target)
        return Val(loads=v.loads | v.pure, derived=v.all(), dtype=target, axis=v.axis,
                   ints_of=v.pure | v.ints_of if to_int and not bitcast else E, pid=v.pid and to_int)

    def dot(self, a: Val, b: Val, acc: Val | None, out: Val | None, out_node, line: int) -> Val:
        out_dtype = self.dtype_arg(out, out_node, line, f"tl.dot(out_dtype=) at line {line}") if out else None
        acc_dtype = acc.dtype if acc is not None else getattr(self, "_acc", None)
        if out_dtype == "i32" or acc_dtype == "i32":
            for v in (a, b):
                self.need(v.pure, "i8", line, f"a tl.dot operand with an int32 accumulator at line {line}",
                          rank=PAIRED)
        elif a.pure and b.pure:
            self.dots.append((a.pure, b.pure, line))
            for v in (a, b):
                self.need(v.pure, "fp16", line, f"a tl.dot operand at line {line} (fp16, as matmul inputs usually "
                                                f"are)", rank=HABIT)
        else:
            for x, y in ((a, b), (b, a)):
                if x.pure and not y.pure:
                    if isinstance(y.dtype, tuple) and y.dtype[0] == "elem" and y.dtype[1] in x.pure:
                        # tl.dot(p.to(v.dtype), v): the cast follows V, it says nothing of V; V is
                        # a matmul input like any other
                        self.need(x.pure, "fp16", line, f"a tl.dot operand at line {line} whose other operand is "
                                                        f"cast to its type (fp16, as matmul inputs usually are)",
                                  rank=HABIT)
                        continue
                    if y.dtype is not None:
                        self.need(x.pure, y.dtype, line, f"tl.dot's other operand at line {line} is "
                                                         f"{_describe(y.dtype)}", rank=PAIRED)
                    else:
                        self.need(x.pure, "fp32", line, f"tl.dot's other operand at line {line} is computed in "
                                                         f"fp32", rank=PAIRED)
        return Val(dtype=out_dtype or ("fp32" if acc_dtype is None else acc_dtype), loads=a.loads | b.loads)


ADDRESS = "its value is a device address"   # the why of a 64-bit int
OFFSETS = "it offsets a pointer"      # the why of an integer that pointer arithmetic needs
INDEX_BOUND = "compared with a tl.arange index"   # the why of a size (`offs < n`)
_OPS = {ast.Add: "added to", ast.Sub: "subtracted with", ast.Mult: "multiplies", ast.Div: "divides"}


def _is_float(dtype) -> bool:
    return isinstance(dtype, str) and dtype.startswith(("fp", "bf"))


def _is_int(dtype) -> bool:
    return isinstance(dtype, str) and dtype[:1] in ("i", "u") and dtype != "i1"


def _index_of(a: Val, b: Val) -> bool:
    """Whether arithmetic on `a` and `b` keeps a program's index one: one of them is, and neither is a
    pointer or holds loaded values (`pid * BLOCK + 1`)."""
    return (a.pid or b.pid) and not (a.ptr or b.ptr or a.loads or b.loads or a.pure or b.pure or
                                     _is_float(a.dtype) or _is_float(b.dtype))


def _num_dtype(a: Val, b: Val):
    """The element type of an arithmetic result, where the operands say: the same on both sides, or
    the one side's beside a value of no known type that no load made (a parameter, an index)."""
    if a.dtype == b.dtype:
        return a.dtype
    for x, y in ((a, b), (b, a)):
        if x.dtype is not None and y.dtype is None and not (y.loads or y.pure):
            return x.dtype
    return None


def _dtype_name(obj) -> str | None:
    """'fp16' for tl.float16 (any tl dtype), else None."""
    from kinspect.compile.args import short_dtype

    t = type(obj)
    if t.__name__ == "dtype" and t.__module__.startswith("triton.language"):
        return short_dtype(str(obj))
    return None


def _width(name: str) -> int:
    digits = "".join(ch for ch in name if ch.isdigit())
    if name.startswith("fp8"):
        return 8
    return int(digits[:2]) if digits else 0


def _tl(dtype: str) -> str:
    names = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64", "i1": "int1", "i8": "int8",
             "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
             "u64": "uint64", "fp8e4nv": "float8e4nv", "fp8e5": "float8e5"}
    return f"tl.{names.get(dtype, dtype)}"


def _describe(dtype) -> str:
    if isinstance(dtype, str):
        return _tl(dtype)
    kind, name = dtype
    return f"cast to the constexpr {name}" if kind == "param" else f"cast to {name}'s element type"


def _src(node) -> str:
    try:
        return ast.unparse(node) if node is not None else ""
    except Exception:
        return ""


@dataclass(frozen=True)
class Param:
    name: str
    is_constexpr: bool
    default: object


def params_of(jit) -> list[Param]:
    """A kernel's parameters: the JITFunction's own list, or (under TRITON_INTERPRET, whose stand-in
    has none) its function's signature, a constexpr being annotated so."""
    if hasattr(jit, "params"):
        return [Param(p.name, bool(p.is_constexpr), p.default) for p in jit.params]
    sig = inspect.signature(jit.fn)
    return [Param(p.name, "constexpr" in str(p.annotation), p.default) for p in sig.parameters.values()]


def walk(jit) -> Walk:
    """The evidence in `jit`'s code (a JITFunction) and the helpers it calls."""
    return Walk(jit).run()
