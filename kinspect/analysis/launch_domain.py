"""The iteration domain of a hand-written (non-Inductor) kernel's launch, for kinspect.analysis.indexing.

A hand-written kernel indexes with `tl.program_id(axis)` (over the recorded grid's axis), `tl.arange(a, b)`
blocks (over the constexprs' values), `for` loops over `range(lo, hi, step)` of scalars and pointers it
moves itself (`x_ptr += row * stride`, `a_ptrs += BLOCK_K * stride_ak` in a loop). Here each program_id,
each arange block and each loop is an axis of an indexing.Domain, and LaunchEvaluator evaluates the body
over them (the source is read with `ast`, never run):

- an arange broadcast into a second dimension (`offs[:, None]`) is another axis than the same arange
  along the last one (`offs[None, :]`, or plain `offs`, as numpy aligns it), so `offs[:, None]*s +
  offs[None, :]` covers a square tile;
- a pointer a loop advances by a loop-invariant step (`p += STEP`, `p = p + STEP`) is its value before
  the loop plus the iteration axis times the step;
- a pointer parameter stands for offset 0, and each name remembers which parameter it points into.

What is not modelled raises indexing.Unsupported (the caller falls back to the tensor-size bound and
says why): a while loop or a loop whose bounds are not known at launch around an access, an index
broadcast into more than two dimensions, a pointer handed to a helper function.
"""

from __future__ import annotations

import ast

import numpy as np

from kinspect.analysis import indexing as ix
from kinspect.analysis.kernel_ast import ACCESS_CALLS, ParsedKernel, assignment, call_name

RANGES = {"range", "static_range"}          # range(...), tl.range(...), tl.static_range(...)
SCALAR_CALLS = {"cdiv": lambda a, b: -(-a // b), "minimum": min, "maximum": max, "min": min, "max": max}
HINTS = {"multiple_of", "max_contiguous", "max_constancy", "assume"}     # say something, change no value
# A hand-written kernel's masks (`offs < n`) tie its program ids to its lanes, so its arrays are as large
# as the launch: sampled from a smaller size than Inductor's (whose own masks hold everywhere).
MAX_POINTS = 1 << 20
POSITIONS = 2                               # an arange's place from the right: plain / [None, :], then [:, None]


def build_domain(k: ParsedKernel, scalars: dict, grid: tuple[int, ...]) -> ix.Domain:
    """Axes for every program_id axis the body reads, every tl.arange call (once per position it may be
    broadcast to) and every for loop (sized when the evaluator reaches it)."""
    if not grid:
        raise ix.Unsupported("the launch's grid was not recorded")
    axes: list[ix.Axis] = []
    trees: dict = {}
    consts = {**k.constants, **scalars}
    for n in _walk(k.body):
        if isinstance(n, ast.Call) and _tl(n) and call_name(n) == "program_id":
            a = _int_arg(n, "axis", consts)
            if a is None or not 0 <= a < len(grid):
                raise ix.Unsupported("tl.program_id of an axis not known at launch")
            key = ("pid", a)
            if key not in trees:
                trees[key] = [len(axes)]
                axes.append(ix.Axis(f"pid{a}", int(grid[a]), 2, np.arange(int(grid[a]), dtype=np.int64)))
        elif isinstance(n, ast.Call) and _tl(n) and call_name(n) == "arange":
            lo, hi = (_value(a, consts) for a in n.args[:2]) if len(n.args) >= 2 else (None, None)
            if type(lo) is not int or type(hi) is not int or hi < lo:
                raise ix.Unsupported("tl.arange with bounds not known at launch")
            for pos in range(POSITIONS):
                trees[("arange", id(n), pos)] = [len(axes)]
                axes.append(ix.Axis(f"arange{n.lineno}", hi - lo, 1, np.arange(lo, hi, dtype=np.int64)))
        elif isinstance(n, (ast.For, ast.While)):
            trees[("loop", id(n))] = [len(axes)]
            axes.append(ix.Axis(f"loop{n.lineno}", 1, 2, np.zeros(1, dtype=np.int64)))
    return ix.Domain(axes, trees, max_points=MAX_POINTS)


def _walk(body):
    for stmt in body:
        yield from ast.walk(stmt)


def _tl(call: ast.Call) -> bool:
    f = call.func
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "tl"


def _int_arg(call: ast.Call, keyword: str, consts: dict):
    node = call.args[0] if call.args else next((kw.value for kw in call.keywords if kw.arg == keyword), None)
    v = _value(node, consts) if node is not None else None
    return v if type(v) is int else None


def _value(node, consts: dict):
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.BinOp):
        a, b = _value(node.left, consts), _value(node.right, consts)
        if type(a) is int and type(b) is int:
            op = type(node.op)
            if op is ast.Add:
                return a + b
            if op is ast.Sub:
                return a - b
            if op is ast.Mult:
                return a * b
            if op is ast.FloorDiv and b:
                return a // b
    return None


class LaunchEvaluator(ix.Evaluator):
    """indexing.Evaluator for a hand-written kernel: program ids, aranges, loops and pointer bases."""

    def __init__(self, domain: ix.Domain, scalars: dict, pointers):
        super().__init__(domain, scalars)
        self.base: dict[str, str] = {p: p for p in pointers}    # name -> the pointer parameter it points into
        self.handed: dict[str, str] = {}      # pointer parameter -> a helper function it is passed to

    # which parameter an expression points into ------------------------------------------------------

    def pointer_of(self, node) -> str | None:
        """The one pointer parameter `node` points into (a value loaded through a pointer is no pointer)."""
        found, todo = set(), [node]
        while todo:
            n = todo.pop()
            if isinstance(n, ast.Call) and call_name(n) in ACCESS_CALLS:
                continue
            if isinstance(n, ast.Name) and n.id in self.base:
                found.add(self.base[n.id])
            todo.extend(ast.iter_child_nodes(n))
        return found.pop() if len(found) == 1 else None

    # expressions --------------------------------------------------------------------------------------

    def eval(self, node):
        if isinstance(node, ast.Subscript) and _broadcast(node.slice) is not None:
            return self._moved(self.eval(node.value), _broadcast(node.slice))
        return super().eval(node)

    def call(self, node: ast.Call):
        name = call_name(node)
        f = node.func
        owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
        if owner == "tl" and name == "program_id":
            a = _int_arg(node, "axis", self.env)
            return ix.Sep({frozenset([self.d.trees[("pid", a)][0]]): self._along(self.d.trees[("pid", a)][0])})
        if owner == "tl" and name == "num_programs":
            a = _int_arg(node, "axis", self.env)
            key = ("pid", a)
            if key in self.d.trees:
                return self.d.axes[self.d.trees[key][0]].size
            raise ix.Unsupported("tl.num_programs of an axis the kernel does not index")
        if owner == "tl" and name == "arange":
            k = self.d.trees[("arange", id(node), 0)][0]
            return ix.Sep({frozenset([k]): self._along(k)})
        if owner == "tl" and name in HINTS and node.args:
            return self.eval(node.args[0])
        if (owner in ("tl", "triton") or not owner and name in ("min", "max")) and name in SCALAR_CALLS:
            vals = [self.eval(a) for a in node.args]
            if len(vals) == 2 and all(ix._scalar(x) for x in vals):
                return SCALAR_CALLS[name](*vals)
            if name in ("minimum", "maximum", "min", "max") and len(vals) == 2:
                return self.elementwise(np.minimum if name in ("minimum", "min") else np.maximum, *vals)
            raise ix.Unsupported(f"call {name}")
        return super().call(node)

    def _along(self, k: int) -> np.ndarray:
        return self.d.shaped(k, self.d.axes[k].values)

    def _moved(self, v, shift: int):
        """v broadcast `shift` places to the left (`[:, None]` is 1): its arange axes move to their copies
        at that position."""
        if not shift:
            return v
        where = {}
        for key, ks in self.d.trees.items():
            if key[0] == "arange" and key[2] == 0:
                if key[2] + shift >= POSITIONS:
                    raise ix.Unsupported("an index broadcast into more than two dimensions")
                where[ks[0]] = self.d.trees[("arange", key[1], key[2] + shift)][0]
        moving = [k for k in ix.axes_of(v) if k in where]
        if not moving:
            if any(k in where.values() for k in ix.axes_of(v)):
                raise ix.Unsupported("an index broadcast into more than two dimensions")
            return v
        m = {k: where.get(k, k) for k in ix.axes_of(v)}

        def arr(a):
            a = np.asarray(a)
            if a.ndim != len(self.d.axes):
                return a
            for src in moving:
                a = np.swapaxes(a, src, where[src])
            return a

        if isinstance(v, ix.Opaque):
            return ix.Opaque(frozenset(m[k] for k in v.axes))
        if isinstance(v, ix.Arr):
            return ix.Arr(frozenset(m[k] for k in v.axes), arr(v.arr))
        terms = {frozenset(m[k] for k in key): arr(t) for key, t in v.terms.items()}
        opaque = None if v.opaque is None else frozenset(m[k] for k in v.opaque)
        return ix.Sep(terms, v.const, opaque)

    # statements ---------------------------------------------------------------------------------------

    def run(self, body, on_access) -> None:
        for stmt in body:
            if isinstance(stmt, ast.For):
                self._loop(stmt, on_access)
                continue
            if isinstance(stmt, ast.While):
                if _has_access(stmt):
                    raise ix.Unsupported("a while loop around a load or store")
                self._forget(stmt.body)
                continue
            if isinstance(stmt, ast.If):
                try:
                    c = self.eval(stmt.test)
                except ix.Unsupported:
                    c = None
                if ix._scalar(c):                # a constexpr branch: only the taken side runs
                    self.run(stmt.body if c else stmt.orelse, on_access)
                else:
                    self.run(stmt.body, on_access)
                    self.run(stmt.orelse, on_access)
                continue
            if isinstance(stmt, ast.With):
                self.run(stmt.body, on_access)
                continue
            self._statement(stmt, on_access)

    def _statement(self, stmt, on_access) -> None:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and call_name(n) in ACCESS_CALLS and isinstance(n.func, ast.Attribute):
                on_access(n)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id not in SCALAR_CALLS:
                # a @triton.jit helper: its loads and stores are in another function's text, not read here
                for a in [*n.args, *(kw.value for kw in n.keywords)]:
                    p = self.pointer_of(a)
                    if p is not None:
                        self.handed.setdefault(p, n.func.id)
        target, value = assignment(stmt)
        if target is None or value is None:
            return
        base = self.pointer_of(value)
        if base is not None:
            self.base[target] = base
        else:
            self.base.pop(target, None)
        self.env[target] = self._assigned(stmt, target, value)

    def _assigned(self, stmt, target, value):
        try:
            return self.eval(value)
        except ix.Unsupported:
            return ix._UNSET

    def _loop(self, stmt: ast.For, on_access) -> None:
        it = stmt.iter
        bounds = None
        if isinstance(it, ast.Call) and call_name(it) in RANGES and isinstance(stmt.target, ast.Name):
            try:
                vals = [self.eval(a) for a in it.args]
            except ix.Unsupported:
                vals = []
            if 1 <= len(vals) <= 3 and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in vals):
                lo, hi, step = (0, vals[0], 1) if len(vals) == 1 else (*vals, 1)[:3]
                if step:
                    bounds = (int(lo), int(hi), int(step))
        if bounds is None:
            if _has_access(stmt):
                raise ix.Unsupported("a for loop whose range is not known at launch around a load or store")
            self._forget(stmt.body)
            return
        lo, hi, step = bounds
        n = len(range(lo, hi, step))
        k = self.d.trees[("loop", id(stmt))][0]
        if n == 0:
            return
        if self.d.axes[k].size != n:          # (a retry keeps the sample traffic._sample took of it)
            self.d.axes[k].size = n
            self.d.axes[k].values = np.arange(n, dtype=np.int64)
        i = ix.Sep({frozenset([k]): self._along(k)})
        assigned = [t for s in stmt.body for n2 in ast.walk(s) if isinstance(n2, ast.stmt)
                    for t in [assignment(n2)[0]] if t]
        inner = set(assigned)
        carried = {}
        for s in stmt.body:
            name, step_node = _advance(s)
            if name is None or name not in self.env or assigned.count(name) > 1 or any(
                    isinstance(x, ast.Name) and (x.id in inner or x.id == stmt.target.id) for x in ast.walk(step_node)):
                continue
            try:
                carried[id(s)] = (name, self.eval(step_node), self.env[name])
            except ix.Unsupported:
                continue
        for name, d, before in carried.values():
            self.env[name] = self.add(before, self.mul(i, d))
        self.env[stmt.target.id] = self.add(lo, self.mul(i, step))
        for s in stmt.body:
            if id(s) in carried:
                continue
            if isinstance(s, (ast.For, ast.While, ast.If, ast.With)):
                self.run([s], on_access)
            else:
                self._statement(s, on_access)
        for name, d, before in carried.values():
            self.env[name] = self.add(before, self.mul(d, n))
        self.env[stmt.target.id] = ix._UNSET

    def _forget(self, body) -> None:
        for s in body:
            for n in ast.walk(s):
                t = assignment(n)[0] if isinstance(n, ast.stmt) else None
                if t:
                    self.env[t] = ix._UNSET


def _advance(stmt) -> tuple[str | None, ast.expr | None]:
    """`p += STEP` or `p = p + STEP`: (p, STEP)."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, stmt.value
    target, value = assignment(stmt)
    if target and isinstance(stmt, ast.Assign) and isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        if isinstance(value.left, ast.Name) and value.left.id == target:
            return target, value.right
    return None, None


def _has_access(stmt) -> bool:
    return any(isinstance(n, ast.Call) and call_name(n) in ACCESS_CALLS and isinstance(n.func, ast.Attribute)
               for n in ast.walk(stmt))


def _broadcast(s) -> int | None:
    """Places a subscript of slices and Nones moves a value to the left: `[:, None]` 1, `[None, :]` 0,
    `[:]` 0; None for a subscript that selects."""
    items = s.elts if isinstance(s, ast.Tuple) else [s]
    kinds = []
    for i in items:
        if isinstance(i, ast.Slice) and i.lower is None and i.upper is None and i.step is None:
            kinds.append(":")
        elif isinstance(i, ast.Constant) and i.value is None:
            kinds.append("n")
        else:
            return None
    if kinds.count(":") != 1:
        return 0 if not kinds.count(":") else None
    return len(kinds) - 1 - kinds.index(":")
