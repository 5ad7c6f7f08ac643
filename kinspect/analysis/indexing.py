"""Which bytes an Inductor kernel reads and writes in one launch: its index expressions evaluated over
its iteration domain (numpy; the source is read with `ast`, never run).

An Inductor kernel covers a domain per range tree (`xindex` in [0, xnumel), `r0_index` in
[0, r0_numel), ...), takes its index variables from it (`x0 = xindex % 768`, `x1 = xindex // 768`) and
adds an expression of them to each pointer (`tl.load(in_ptr0 + (x0 + 768*x1), mask)`). Here each
tree is split into the digits those `//` and `%` use (mixed radix), one numpy axis per digit, and
every assignment of the body is evaluated over those axes by a whitelist evaluator (constants,
names, + - * // % & | ~, comparisons, tl.where, tl.full, .to(), broadcasting): sums stay sums of
per-axis terms, so `x0 + 768*x1` over a 205M-point domain costs two small arrays. A value read from
memory is Opaque (it knows only which axes it varies with): an index that uses one is bounded from
above ("indirect"), a mask that uses one is taken as all true.

The 32-byte sectors each access touches are counted as unions of runs: one group of axes gives the
runs (contiguous element ranges), the others their starting offsets. Sectors are what DRAM moves, so
a strided or misaligned access costs what it costs. Where the count would need more than
MAX_INTERVALS runs, a subset of starting offsets is counted and scaled ("sampled").
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import numpy as np

from kinspect.analysis.kernel_ast import ACCESS_CALLS, ParsedKernel, assignment, call_name

SECTOR = 32
MAX_POINTS = 1 << 23            # the largest array materialized at once
MAX_INTERVALS = 1 << 22         # runs counted per access before sampling starting offsets
MAX_DIGIT = 1 << 16             # a tree's digits are split to about this many values where its size allows
TREES = ("x", "y", "z", "r0_", "r1_", "r")
IDENTITY_CALLS = {"to", "broadcast_to", "reshape", "view", "cast"}
OPAQUE_MODULES = {"triton_helpers", "libdevice", "tl_math", "math"}


class Unsupported(Exception):
    """The expression uses something the evaluator does not model."""


class TooLarge(Exception):
    """An array over these axes would exceed MAX_POINTS."""

    def __init__(self, axes):
        super().__init__(f"{len(axes)} axes")
        self.axes = frozenset(axes)


@dataclass(frozen=True)
class Opaque:
    """A value read from memory (or computed from one): only the axes it varies with are known."""

    axes: frozenset


@dataclass(frozen=True)
class Arr:
    """A materialized array over `axes` (numpy, size 1 on the other axes of the domain)."""

    axes: frozenset
    arr: np.ndarray


@dataclass(frozen=True)
class Sep:
    """const + a sum of terms, each an int array over its own axes (the key; no two keys share an axis),
    + a part read from memory that varies with the axes `opaque` (`r0_1 + 768*tmp10`: an embedding row)."""

    terms: dict
    const: int = 0
    opaque: frozenset | None = None


_UNSET = object()       # an assignment that could not be evaluated: using it is Unsupported


@dataclass
class Axis:
    tree: str
    size: int            # the digit's range
    weight: int          # its place value in the tree's index
    values: np.ndarray   # the digit values evaluated (all of them, or a strided subset when sampling)

    @property
    def scale(self) -> float:
        return self.size / len(self.values)


@dataclass
class Domain:
    axes: list[Axis]
    trees: dict = field(default_factory=dict)       # tree prefix -> its axes (indices), lowest digit first
    max_points: int = MAX_POINTS                    # the largest array materialized at once over it

    def shaped(self, k: int, values) -> np.ndarray:
        shape = [1] * len(self.axes)
        shape[k] = len(values)
        return np.asarray(values, dtype=np.int64).reshape(shape)

    def points(self, axes) -> int:
        n = 1
        for k in axes:
            n *= len(self.axes[k].values)
        return n

    def shape(self, axes) -> tuple[int, ...]:
        return tuple(len(a.values) if k in axes else 1 for k, a in enumerate(self.axes))

    def index(self, tree: str) -> Sep:
        ks = self.trees[tree]
        return Sep({frozenset([k]): self.shaped(k, self.axes[k].values * self.axes[k].weight) for k in ks})


# -- the domain ------------------------------------------------------------------------------------------

def build_domain(k: ParsedKernel, scalars: dict) -> Domain:
    """One axis per digit of each range tree the kernel indexes, from its numels (body constants, else the
    launch's scalar arguments) and the divisors its index variables use."""
    numels = {}
    for t in TREES:
        if _binds(k, t):
            n = k.constants.get(f"{t}numel", scalars.get(f"{t}numel"))
            if type(n) is not int or n < 0:
                raise Unsupported(f"{t}numel unknown")
            numels[t] = n
    if not numels:
        raise Unsupported("no range tree (xindex, r0_index, ...) in the kernel")
    bounds = _boundaries(k, numels, scalars)
    axes, trees = [], {}
    for t, n in numels.items():
        cuts = sorted(b for b in bounds.get(t, ()) if 1 < b < n)
        chain = [1] + cuts + [n]
        if any(chain[i + 1] % chain[i] for i in range(len(chain) - 1)):
            chain = [1, n]          # not a mixed radix: one axis for the whole tree
        chain = _refined(chain)
        trees[t] = []
        for lo, hi in zip(chain, chain[1:]):
            trees[t].append(len(axes))
            axes.append(Axis(t, hi // lo, lo, np.arange(hi // lo, dtype=np.int64)))
    return Domain(axes, trees)


def _refined(chain: list[int]) -> list[int]:
    """A mixed radix with every digit of at most MAX_DIGIT values where its size's factors allow: a
    finer radix keeps every `//` and `%` by the coarser one exact, and sums of small per-digit terms
    are what keeps a large domain cheap."""
    out = [chain[0]]
    for lo, hi in zip(chain, chain[1:]):
        size = hi // lo
        for f in _digits(size):
            out.append(out[-1] * f)
    return out


def _digits(n: int) -> list[int]:
    """n as a product of factors, each at most MAX_DIGIT where n's prime factors allow, smallest first."""
    primes, m, p = [], n, 2
    while p * p <= m and p <= MAX_DIGIT:
        while m % p == 0:
            primes.append(p)
            m //= p
        p += 1
    if m > 1:
        primes.append(m)        # a prime, or a product of primes above MAX_DIGIT: one digit
    out = [1]
    for q in sorted(primes):
        if out[-1] * q <= MAX_DIGIT:
            out[-1] *= q
        else:
            out.append(q)
    return [f for f in out if f > 1] or [n]


def _binds(k: ParsedKernel, tree: str) -> bool:
    return any(_binding(stmt, tree) for stmt in _statements(k.body))


def _binding(stmt, tree: str) -> bool:
    """`xindex = xoffset + tl.arange(0, XBLOCK)[:]` and the like: where the tree's index is made (not an
    alias such as `rindex = r0_index`)."""
    target, value = assignment(stmt)
    if target != f"{tree}index" or value is None:
        return False
    for n in ast.walk(value):
        if isinstance(n, ast.Call) and call_name(n) in ("arange", "full", "program_id"):
            return True
        if isinstance(n, ast.Name) and n.id.endswith(("offset", "base")):
            return True
    return False


def _boundaries(k: ParsedKernel, numels: dict, scalars: dict) -> dict[str, set[int]]:
    """Per tree, the divisors its index (or an alias of it, `x0 = xindex`) is split by: `xindex // D`,
    `xindex % M`, `(xindex // D) % M` (D and D*M)."""
    aliases = {f"{t}index": t for t in numels}
    for stmt in _statements(k.body):
        target, value = assignment(stmt)
        if target and isinstance(value, ast.Name) and value.id in aliases and not _binding(stmt, aliases[value.id]):
            aliases[target] = aliases[value.id]
    out: dict[str, set[int]] = {}

    def number(node):
        v = node.value if isinstance(node, ast.Constant) else \
            k.constants.get(node.id, scalars.get(node.id)) if isinstance(node, ast.Name) else None
        return v if type(v) is int and v > 0 else None

    for stmt in k.body:
        for n in ast.walk(stmt):
            if not (isinstance(n, ast.BinOp) and isinstance(n.op, (ast.FloorDiv, ast.Mod))):
                continue
            m = number(n.right)
            if m is None:
                continue
            left = n.left
            if isinstance(left, ast.Name) and left.id in aliases:
                out.setdefault(aliases[left.id], set()).add(m)
            elif isinstance(n.op, ast.Mod) and isinstance(left, ast.BinOp) and isinstance(left.op, ast.FloorDiv) \
                    and isinstance(left.left, ast.Name) and left.left.id in aliases:
                d = number(left.right)
                if d is not None:
                    out.setdefault(aliases[left.left.id], set()).update((d, d * m))
    return out


def _statements(body):
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With)):
            yield from _statements(stmt.body)
            yield from _statements(getattr(stmt, "orelse", []))




# -- values ---------------------------------------------------------------------------------------------

def axes_of(v) -> frozenset:
    if isinstance(v, (Opaque, Arr)):
        return v.axes
    if isinstance(v, Sep):
        return frozenset().union(*v.terms, v.opaque or ())
    return frozenset()


def _scalar(v) -> bool:
    return isinstance(v, (int, float, bool, np.integer, np.floating, np.bool_))


class Evaluator:
    def __init__(self, domain: Domain, scalars: dict):
        self.d = domain
        self.env: dict = dict(scalars)

    # materializing ------------------------------------------------------------------------------------

    def array(self, v) -> Arr:
        """v as one array over its axes (a value read from memory has none to give: Unsupported)."""
        if isinstance(v, Arr):
            return v
        if isinstance(v, Opaque) or isinstance(v, Sep) and v.opaque is not None:
            raise Unsupported("a value read from memory")
        if isinstance(v, Sep):
            axes = axes_of(v)
            self._check(axes)
            arr = np.asarray(v.const)
            for t in v.terms.values():
                arr = arr + t
            return Arr(axes, arr)
        return Arr(frozenset(), np.asarray(v))

    def sep(self, v) -> Sep:
        if isinstance(v, Sep):
            return v
        if isinstance(v, Opaque):
            return Sep({}, 0, v.axes)
        if isinstance(v, Arr):
            return Sep({v.axes: v.arr}, 0) if v.axes else Sep({}, v.arr.item())
        return Sep({}, v)

    def _check(self, axes) -> None:
        if self.d.points(axes) > self.d.max_points:
            raise TooLarge(axes)

    # arithmetic ---------------------------------------------------------------------------------------

    def add(self, a, b, sign: int = 1):
        if _scalar(a) and _scalar(b):
            return a + sign * b
        if self._floaty(a) or self._floaty(b):
            if self._unknown(a) or self._unknown(b):
                return Opaque(axes_of(a) | axes_of(b))
            x, y = self.array(a), self.array(b)
            self._check(x.axes | y.axes)
            return Arr(x.axes | y.axes, x.arr + sign * y.arr)
        x, y = self.sep(a), self.sep(b)
        terms = dict(x.terms)
        for key, t in y.terms.items():
            t = t if sign == 1 else -t
            overlap = [k for k in terms if k & key]
            if overlap == [key]:
                terms[key] = terms[key] + t
                continue
            union = frozenset(key).union(*overlap)
            self._check(union)
            for k in overlap:
                t = t + terms.pop(k)
            terms[union] = t
        opaque = None if x.opaque is None and y.opaque is None else (x.opaque or frozenset()) | (y.opaque or frozenset())
        return Sep(terms, x.const + sign * y.const, opaque)

    def _floaty(self, v) -> bool:
        """A value not summed as separate integer terms: a float, a boolean."""
        return isinstance(v, Arr) and v.arr.dtype.kind not in "iu" or \
            isinstance(v, Sep) and not isinstance(v.const, (int, np.integer)) or \
            _scalar(v) and not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_))

    def mul(self, a, b):
        if _scalar(a) and _scalar(b):
            return a * b
        if _scalar(b) or _scalar(a):
            c, v = (b, a) if _scalar(b) else (a, b)
            if isinstance(v, Opaque):
                return v
            if isinstance(v, Sep) and isinstance(c, (int, np.integer)) and not isinstance(c, bool):
                return Sep({k: t * c for k, t in v.terms.items()}, v.const * c, v.opaque)
            x = self.array(v)
            return Arr(x.axes, x.arr * c)
        if isinstance(a, Opaque) or isinstance(b, Opaque) or any(isinstance(v, Sep) and v.opaque is not None
                                                                  for v in (a, b)):
            return Opaque(axes_of(a) | axes_of(b))
        x, y = self.array(a), self.array(b)
        self._check(x.axes | y.axes)
        return Arr(x.axes | y.axes, x.arr * y.arr)

    def divmod(self, a, b, op):
        """a // b or a % b; a sum splits when b divides every term but a low part that stays in [0, b)."""
        if self._unknown(a) or self._unknown(b):
            return Opaque(axes_of(a) | axes_of(b))
        if _scalar(a) and _scalar(b):
            if not b:
                raise Unsupported("division by zero")
            return a // b if op is ast.FloorDiv else a % b
        if isinstance(a, Sep) and isinstance(b, (int, np.integer)) and b > 0:
            high = {k: t for k, t in a.terms.items() if not np.any(t % b)}
            low = {k: t for k, t in a.terms.items() if k not in high}
            lo = a.const + sum(int(t.min()) for t in low.values())
            hi = a.const + sum(int(t.max()) for t in low.values())
            if lo >= 0 and hi < b:
                if op is ast.FloorDiv:
                    return Sep({k: t // b for k, t in high.items()}, 0)
                return Sep(low, a.const)
        x, y = self.array(a), self.array(b)
        self._check(x.axes | y.axes)
        with np.errstate(divide="ignore", invalid="ignore"):
            arr = np.floor_divide(x.arr, y.arr) if op is ast.FloorDiv else np.mod(x.arr, y.arr)
        return Arr(x.axes | y.axes, arr)

    def binary(self, op, a, b):
        if op is ast.Add:
            return self.add(a, b)
        if op is ast.Sub:
            return self.add(a, b, -1)
        if op is ast.Mult:
            return self.mul(a, b)
        if op in (ast.FloorDiv, ast.Mod):
            return self.divmod(a, b, op)
        fn = {ast.BitAnd: np.bitwise_and, ast.BitOr: np.bitwise_or, ast.BitXor: np.bitwise_xor,
              ast.Div: np.true_divide, ast.LShift: np.left_shift, ast.RShift: np.right_shift}.get(op)
        if fn is None:
            raise Unsupported(op.__name__)
        return self.elementwise(fn, a, b)

    @staticmethod
    def _unknown(v) -> bool:
        return isinstance(v, Opaque) or isinstance(v, Sep) and v.opaque is not None

    def elementwise(self, fn, *vals):
        if any(self._unknown(v) for v in vals):
            return Opaque(frozenset().union(*(axes_of(v) for v in vals)))
        if all(_scalar(v) for v in vals):
            out = fn(*vals)
            return out.item() if hasattr(out, "item") else out
        arrs = [self.array(v) for v in vals]
        axes = frozenset().union(*(x.axes for x in arrs))
        self._check(axes)
        with np.errstate(divide="ignore", invalid="ignore"):
            return Arr(axes, fn(*(x.arr for x in arrs)))

    # expressions --------------------------------------------------------------------------------------

    def eval(self, node):
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bool, int, float)):
                return node.value
            raise Unsupported("constant")
        if isinstance(node, ast.Name):
            if node.id not in self.env:
                raise Unsupported(f"name {node.id}")
            v = self.env[node.id]
            if v is _UNSET:
                raise Unsupported(f"name {node.id}")
            return v
        if isinstance(node, ast.BinOp):
            return self.binary(type(node.op), self.eval(node.left), self.eval(node.right))
        if isinstance(node, ast.UnaryOp):
            v = self.eval(node.operand)
            if isinstance(node.op, ast.USub):
                return self.mul(v, -1)
            if isinstance(node.op, ast.UAdd):
                return v
            if isinstance(node.op, (ast.Invert, ast.Not)):
                return self.elementwise(np.logical_not if self._boolean(v) or isinstance(node.op, ast.Not)
                                        else np.invert, v)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            fn = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater, ast.GtE: np.greater_equal,
                  ast.Eq: np.equal, ast.NotEq: np.not_equal}.get(type(node.ops[0]))
            if fn is not None:
                return self.elementwise(fn, self.eval(node.left), self.eval(node.comparators[0]))
        if isinstance(node, ast.Subscript):          # x[:, None], x[None, :]: broadcasting, the values stay
            v = self.eval(node.value)
            return v if _is_broadcast(node.slice) else Opaque(axes_of(v))
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.IfExp):
            c = self.eval(node.test)
            if _scalar(c):
                return self.eval(node.body if c else node.orelse)
        raise Unsupported(type(node).__name__)

    def _boolean(self, v) -> bool:
        return isinstance(v, (bool, np.bool_)) or isinstance(v, Arr) and v.arr.dtype == bool

    def call(self, node: ast.Call):
        name = call_name(node)
        f = node.func
        owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
        if name in IDENTITY_CALLS and isinstance(f, ast.Attribute) and owner not in ("tl", *OPAQUE_MODULES):
            return self.eval(f.value)                           # x.to(tl.float32)
        if owner == "tl" and name in ("broadcast_to", "reshape", "view", "cast") and node.args:
            return self.eval(node.args[0])
        if owner == "tl" and name == "full" and len(node.args) >= 2:
            return self.eval(node.args[1])
        if owner == "tl" and name == "where" and len(node.args) == 3:
            c, a, b = (self.eval(x) for x in node.args)
            if _scalar(c) and not isinstance(c, np.ndarray):
                return a if c else b
            return self.elementwise(np.where, c, a, b)
        if owner in ("tl", *OPAQUE_MODULES) and name not in ("arange", "program_id", "num_programs"):
            return Opaque(self._axes_of_args(node))             # loads, reductions, math on data
        raise Unsupported(f"call {name}")

    def _axes_of_args(self, node: ast.Call) -> frozenset:
        """The axes a call's result may vary with: those of its operands (keywords such as
        eviction_policy say how, not what)."""
        axes = frozenset()
        for a in [*node.args, *(k.value for k in node.keywords if k.arg in ("mask", "other"))]:
            if isinstance(a, ast.Constant) and not isinstance(a.value, (int, float)):
                continue                                 # None (no mask), a string
            try:
                axes |= axes_of(self.eval(a))
            except Unsupported:
                axes |= frozenset(range(len(self.d.axes)))
        return axes

    # statements ---------------------------------------------------------------------------------------

    def run(self, body, on_access) -> None:
        """Evaluate the body's assignments in order; `on_access(call_node)` at each load/store/atomic, with
        the environment as it is there."""
        for stmt in body:
            if isinstance(stmt, (ast.For, ast.While, ast.With)):
                if isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name):
                    self.env[stmt.target.id] = _UNSET
                self.run(stmt.body, on_access)
                continue
            if isinstance(stmt, ast.If):
                self.run(stmt.body, on_access)
                self.run(stmt.orelse, on_access)
                continue
            for n in ast.walk(stmt):
                if isinstance(n, ast.Call) and call_name(n) in ACCESS_CALLS and isinstance(n.func, ast.Attribute):
                    on_access(n)
            target, value = assignment(stmt)
            if target is None or value is None:
                continue
            self.env[target] = self._assigned(stmt, target, value)

    def _assigned(self, stmt, target: str, value):
        for t in self.d.trees:
            if target == f"{t}mask":
                return True                  # the domain is [0, numel): the tree's own mask holds everywhere
            if _binding(stmt, t):
                return self.d.index(t)
            if target in (f"{t}offset", f"{t}base"):
                return self.env.get(target, _UNSET)
        try:
            return self.eval(value)
        except Unsupported:
            return _UNSET


def _is_broadcast(s) -> bool:
    items = s.elts if isinstance(s, ast.Tuple) else [s]
    return all(isinstance(i, ast.Slice) and i.lower is None and i.upper is None and i.step is None or
               isinstance(i, ast.Constant) and i.value is None for i in items)


# -- counting sectors ------------------------------------------------------------------------------------

@dataclass
class Count:
    """Sectors one access touches: exact `runs` (start, end sector pairs, to union with the pointer's
    other accesses), plus `extra` sectors counted apart (sampled or bounded)."""

    starts: np.ndarray
    ends: np.ndarray
    extra: float = 0.0
    how: str = "exact"            # exact | scalar | sampled | indirect | masked by data


def union_size(starts: np.ndarray, ends: np.ndarray) -> int:
    """Sectors covered by inclusive intervals [start, end]."""
    if not len(starts):
        return 0
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    before = np.concatenate(([s[0] - 1], reach[:-1]))
    return int(np.maximum(0, e - np.maximum(s, before + 1) + 1).sum())


def count(ev: Evaluator, offset, mask, elem: int) -> Count:
    """The sectors an access with this offset (in elements) and mask touches over the domain."""
    empty = np.zeros(0, dtype=np.int64)
    how = "exact"
    if ev._unknown(mask):
        mask, how = True, "masked by data"
    if _scalar(mask) and not mask:
        return Count(empty, empty, how=how)
    off = ev.sep(offset)
    unknown = off.opaque or frozenset()
    groups = list(off.terms.items())
    const = off.const
    if not _scalar(mask):
        m = ev.array(mask)
        tied = [(k, t) for k, t in groups if k & m.axes]
        if tied:
            groups = [g for g in groups if g not in tied]
            axes = m.axes.union(*(k for k, _ in tied))
            ev._check(axes)
            shape = ev.d.shape(axes)
            vals = sum((np.broadcast_to(t, shape) for _, t in tied), np.zeros(shape, dtype=np.int64))
            groups.append((axes, vals[np.broadcast_to(m.arr, shape)]))
        elif not np.any(m.arr):
            return Count(empty, empty, how=how)
    if unknown:
        tied = [(k, t) for k, t in groups if k & unknown]
        groups = [g for g in groups if g not in tied]
        unknown = unknown.union(*(k for k, _ in tied))
    uniques = [np.unique(np.asarray(t).ravel()) for _, t in groups]
    if any(len(u) == 0 for u in uniques):
        return Count(empty, empty, how=how)
    # the runs come from the group that makes the fewest intervals: fewest runs per value
    runs = [_runs(u) for u in uniques]
    inner = min(range(len(uniques)), key=lambda i: len(runs[i][0]) / len(uniques[i])) if uniques else None
    runs_s, runs_e = runs[inner] if inner is not None else (np.zeros(1, np.int64), np.zeros(1, np.int64))
    outer = np.array([const], dtype=np.int64)
    scale = 1.0
    for i, u in enumerate(uniques):
        if i != inner:
            outer = np.unique(np.add.outer(outer, u).ravel())
            if len(outer) * len(runs_s) > MAX_INTERVALS:
                keep = max(1, MAX_INTERVALS // len(runs_s))
                step = -(-len(outer) // keep)
                scale *= len(outer) / len(outer[::step])
                outer = outer[::step]
    starts = ((outer[:, None] + runs_s[None, :]) * elem // SECTOR).ravel()
    ends = ((outer[:, None] + runs_e[None, :]) * elem // SECTOR).ravel()
    scale *= _sampled_scale(ev, frozenset().union(*off.terms, axes_of(mask)) - unknown)
    if unknown:
        # a value read from memory picks the offset: each combination of the axes it varies with may
        # land anywhere, so at most that many copies of the known part
        combos = ev.d.points(unknown) * _sampled_scale(ev, unknown)       # every combination, sampled or not
        return Count(empty, empty, extra=union_size(starts, ends) * scale * combos, how="indirect")
    if scale != 1.0:
        return Count(empty, empty, extra=union_size(starts, ends) * scale, how="sampled")
    if not groups and how == "exact":
        how = "scalar"
    return Count(starts, ends, how=how)


def _runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique element offsets as inclusive runs of consecutive elements."""
    breaks = np.flatnonzero(np.diff(values) != 1)
    starts = np.concatenate(([values[0]], values[breaks + 1]))
    ends = np.concatenate((values[breaks], [values[-1]]))
    return starts, ends


def _sampled_scale(ev: Evaluator, axes) -> float:
    s = 1.0
    for k in axes:
        s *= ev.d.axes[k].scale
    return s
