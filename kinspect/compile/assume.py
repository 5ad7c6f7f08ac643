"""Example values for the parameters nothing else gives, from what the kernel's code says
(kinspect.compile.infer), each with the reason and the option that changes it.

Pointers get a tensor of POINTER_ELEMENTS elements of the element type the code implies (fp32 when
it implies none), host tensor descriptors a descriptor of 64-wide blocks, integers 1024 (1 for a
stride along a tl.arange's last axis: a contiguous row), floats 1.0. Constexprs: a function the
kernel calls gets an identity function; a dtype the compared one or tl.float32; a string the first
one it is compared with; a block size 64 (a power of two, as tl.arange and block shapes need); a
static loop count 2; an int it is compared with, that one; a flag False; a float (it meets a float
value in arithmetic, or is a term of tl.rsqrt's argument) 1.0. Then the two pointers loaded as a
tl.dot's operands are given one element type, block sizes are halved until every tile whose shape
the code spells stays within MAX_TILE elements, and the tl.static_asserts are checked and the
assumed ints and flags changed until they hold. When the compile fails anyway, `improve` derives
other values from Triton's error (a smaller tile, the other operand's type) for the suggestion.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from dataclasses import dataclass

from kinspect.compile.args import DEFAULT_INT, DTYPES, POINTER_ELEMENTS, WIDE_INT
from kinspect.compile.infer import ADDRESS, EXPLICIT, HABIT, INDEX_BOUND, NEED, OFFSETS, PAIRED, Walk, _tl, walk
from kinspect.core.model import WRAPPER_INPUTS

BLOCK = 64                 # a constexpr block size: a power of two that tl.dot accepts on every target
BLOCK_3D = 16              # in a kernel with 3-D tiles: 64**3 elements take ptxas minutes
LOOP = 2                   # a tl.static_range count: the loop is unrolled, keep it short
OTHER_INT = 4              # an int constexpr the code says nothing more of
CANDIDATES = {"pow2": (64, 128, 32, 256, 16, 512, 8, 1024, 4, 2, 1), "loop": (2, 1, 3, 4, 8),
              "int": (4, 8, 2, 1, 16, 32, 64, 128, 256, 3), "bool": (False, True)}
SEARCH_LIMIT = 4096        # assignments tried per failing static_assert
FLOAT_NAME = ("eps", "epsilon", "scale", "alpha", "beta", "gamma", "momentum", "temperature", "theta", "lr",
              "dropout_p", "p", "sm_scale", "softmax_scale", "slope", "negative_slope")
# the last word of a name that says float too (`current_eps`, `qk_scale`, `softmax_temperature`), as
# the wrappers' rule has it (kinspect.compile.wrappers)
FLOAT_SUFFIX = ("_eps", "_epsilon", "_scale", "_temperature", "_momentum", "_slope")


@dataclass(frozen=True)
class Assumed:
    """One value kinspect assumed, why, and the option that sets it instead."""

    name: str
    value: object
    spec: str            # as --arg or -p would spell it
    why: str
    constexpr: bool
    kind: str = ""       # "pow2", "loop", "int", "bool", ... (how the static_assert search may change it)

    def option(self) -> str:
        if self.kind in WRAPPER_INPUTS:        # a wrapper's input: the whole call is one --from
            return ""
        if self.kind == "function":
            return f"kinspect_examples['...']['constexprs']['{self.name}']"
        import shlex

        value = "''" if self.spec == "''" else shlex.quote(f"{self.name}={self.spec}")
        if self.spec == "''":
            value = f"{self.name}="
        return f"-p {value}" if self.constexpr else f"--arg {value}"

    def to_json(self) -> dict:
        """As a variant's record keeps it (kinspect.analysis.assumed.Guess reads it back)."""
        return {"name": self.name, "spec": self.spec, "why": self.why, "kind": self.kind, "constexpr": self.constexpr,
                "text": self.text()}

    def text(self) -> str:
        shown = f"{self.name}={self.spec}" if self.kind != "function" else f"{self.name}=<identity function>"
        how = "-p" if self.constexpr else "--arg"
        if self.kind in WRAPPER_INPUTS:
            how = "--from"
        if self.kind == "function":
            how = "kinspect_examples"
        return f"{shown}  ({self.why}; set with {how})"


def assume(jit, missing: list[str], given: dict | None = None, warps: int | None = None) -> list[Assumed]:
    """Values for the parameters in `missing` of the JITFunction `jit`, in the kernel's order.
    `warps`: the warps the kernel will be compiled with where it is fewer than 4 (an autotune
    config of num_warps=1): block sizes shrink with it, as the code is written for."""
    w = walk(jit)
    return _decide(w, missing, given or {}, warps)


def _block(warps: int | None) -> tuple[int, str]:
    """The block size to assume, and why it is not BLOCK: 64 wide for 4 warps; 16 a warp below that
    (a 64x64 tile a warp is hundreds of registers a thread, and minutes in LLVM)."""
    if warps is None or warps >= 4:
        return BLOCK, ""
    size = max(16, 16 * warps)
    return size, f"; {size}, for the {warps} warp{'s' if warps > 1 else ''} of its first autotune config"


def _decide(w: Walk, missing: list[str], given: dict, warps: int | None = None) -> list[Assumed]:
    pointers = {p for p in w.names if w.facts[p].pointer and p not in w.constexprs}
    for cands, loaded, line in w.offsets:
        hit = sorted(cands & pointers)
        if hit:
            w.need(loaded, "i32", line, f"its values are offsets into {hit[0]} at line {line}")
    for cands, params, line in w.ptr_offsets:
        if cands & pointers:          # what offsets a pointer is an integer
            for q in params:
                w.facts[q].ints.append((line, f"{OFFSETS} at line {line}"))
    links = {}
    for ptrs, value, line in w.stored:
        for p in ptrs:
            if isinstance(value.dtype, str) and value.dtype != "pointer":
                w.facts[p].elem.append((EXPLICIT, value.dtype, line, f"stores {_tl(value.dtype)} values at line {line}"))
            elif isinstance(value.dtype, tuple) and value.dtype != ("elem", p):
                w.facts[p].elem.append((PAIRED, value.dtype, line, f"stores values cast with "
                                                                   f"{value.dtype[1]} at line {line}"))
            for q in value.pure:
                if q != p:
                    links.setdefault(p, (q, line))
    out: dict[str, Assumed] = {}
    for p in missing:
        if p in w.constexprs:
            out[p] = _constexpr(w, p, warps)
    for p in missing:
        if p not in w.constexprs:
            out[p] = _runtime(w, p, pointers, links, {**given, **{k: a.value for k, a in out.items()}})
    _pair_dot_operands(w, out, links, given)
    _fit_tiles(w, out, given)
    _satisfy_asserts(w, out, given)
    return [out[p] for p in w.names if p in out]


# Triton's largest tensor (TRITON_MAX_TENSOR_NUMEL) is 2**20 elements; assumed tiles stay well under
# it, as compile time grows with the tile
MAX_TILE = 1 << 16


def _fit_tiles(w: Walk, out: dict, given: dict) -> None:
    """Halve assumed block sizes of a tile whose shape (`x.reshape(R, K, 32, 4, 4)`, tl.zeros((M, N)))
    would be larger than MAX_TILE elements; say so in their reasons."""
    for names, const, line in w.tiles:
        def size():
            n = const
            for k in names:
                v = given.get(k, out[k].value if k in out else None)
                if not isinstance(v, int) or isinstance(v, bool):
                    return 0
                n *= v
            return n

        changed = set()
        while size() > MAX_TILE:
            mine = [k for k in names if k in out and out[k].kind == "pow2" and out[k].value > 1]
            if not mine:
                break
            k = max(mine, key=lambda k: out[k].value)
            out[k] = Assumed(k, out[k].value // 2, str(out[k].value // 2), out[k].why, True, "pow2")
            changed.add(k)
        for k in changed:
            out[k] = Assumed(k, out[k].value, out[k].spec, f"{out[k].why}; {out[k].value}, so that the tile at "
                             f"line {line} stays within {MAX_TILE} elements", True, "pow2")


def _pair_dot_operands(w: Walk, out: dict, links: dict, constexprs: dict) -> None:
    """tl.dot takes two operands of one element type: where the two pointers loaded as its operands
    were given different ones, the one with the weaker evidence takes the other's."""
    import torch

    def rank(p):
        ev = [e[0] for e in w.facts[p].elem] + ([NEED] if w.facts[p].options else [])
        return min(ev, default=HABIT + 1)

    for left, right, line in w.dots:
        for a in sorted(left):
            for b in sorted(right):
                x, y = out.get(a), out.get(b)
                if not (x and y and x.kind == y.kind == "pointer") or x.spec == y.spec:
                    continue
                if rank(a) == rank(b):
                    continue
                strong, weak = (x, y) if rank(a) < rank(b) else (y, x)
                dtype = strong.spec[1:]
                value = torch.empty(POINTER_ELEMENTS, dtype=getattr(torch, DTYPES[dtype]))
                why = weak.why.split("; element type")[0]
                out[weak.name] = Assumed(weak.name, value, f"*{dtype}", f"{why}; element type {dtype}: the other "
                                         f"operand of tl.dot at line {line} is {strong.name} ({dtype})", False,
                                         "pointer")


# -- runtime arguments ------------------------------------------------------------------------------

def _runtime(w: Walk, p: str, pointers: set, links: dict, constexprs: dict) -> Assumed:
    import torch

    from kinspect.compile.args import DescriptorSpec

    f = w.facts[p]
    if f.desc and p not in pointers:
        dims, line = f.desc[0]
        dtype, why = _elem(w, p, links, constexprs, default="fp16")
        # a batched descriptor's block is one matrix tile: [1, ..., 64, 64]
        spec = DescriptorSpec(dtype, (1,) * max(dims - 2, 0) + (BLOCK,) * min(dims, 2))
        return Assumed(p, spec, spec.text(), f"a host tensor descriptor: {p}.load at line {line}; {why}", False,
                       "desc")
    dead = _dead_pointer(w, p, constexprs) if p in pointers else None
    if dead:
        flag, value, line = dead
        why = f.ints[0][1] if f.ints else "used as a number"
        return Assumed(p, DEFAULT_INT, f"i32:{DEFAULT_INT}", f"an integer: {why}; the code uses it as a pointer only "
                       f"under `if {'' if value else 'not '}{flag}:` (line {line}), and {flag} is {not value}",
                       False, "int")
    if p in pointers:
        line, how = f.pointer[0]
        dtype, why = _elem(w, p, links, constexprs)
        value = torch.empty(POINTER_ELEMENTS, dtype=getattr(torch, DTYPES[dtype]))
        return Assumed(p, value, f"*{dtype}", f"a pointer: {how}; {why}", False, "pointer")
    if f.floats and not _int_needed(f):
        return Assumed(p, 1.0, "fp32:1.0", f"a float: {f.floats[0][1]}", False, "float")
    address = next((why for _, why in f.ints if ADDRESS in why), None)
    if address:
        return Assumed(p, WIDE_INT, f"i64:{WIDE_INT}", f"a 64-bit integer: {address}", False, "int")
    if f.contiguous:
        line = f.contiguous[0][0]
        return Assumed(p, 1, "i32:1", f"an integer that multiplies a tl.arange along the last axis at line {line}: "
                                      f"a contiguous stride", False, "int")
    if not f.ints and not f.used:
        return Assumed(p, DEFAULT_INT, f"i32:{DEFAULT_INT}", "an integer: the kernel's code does not use it", False,
                       "int")
    if not f.ints and (p.lower() in FLOAT_NAME or p.lower().endswith(FLOAT_SUFFIX)):
        return Assumed(p, 1.0, "fp32:1.0", "a float, by its name: nothing in the code says int or float", False,
                       "float")
    why = f"an integer: {f.ints[0][1]}" if f.ints else "an integer: nothing in the code needs a float or a pointer"
    return Assumed(p, DEFAULT_INT, f"i32:{DEFAULT_INT}", why, False, "int")


def _dead_pointer(w: Walk, p: str, constexprs: dict) -> tuple[str, bool, int] | None:
    """(FLAG, its value there, a line) where every use of `p` as a pointer is under one `if FLAG:`
    branch, FLAG's value is the other, and the code uses `p` as a number outside that branch
    (flash-attention's `SEQLEN_OFFSETS`, an int or a pointer as IS_SEQLEN_OFFSETS_TENSOR says): the
    live code takes a number, and a pointer would not compile."""
    f = w.facts[p]
    shared = set.intersection(*(set(w.guards_at.get(line, ())) for line, _ in f.pointer))
    for flag, value in sorted(shared):
        given = constexprs.get(flag)
        if isinstance(given, bool) and given != value and \
                any((flag, value) not in w.guards_at.get(line, ()) for line, _ in f.ints):
            return flag, value, f.pointer[0][0]
    return None


def _int_needed(f) -> bool:
    """Whether the code needs the value to be an integer (bit operations, a loop bound, //, a
    pointer offset), whatever float arithmetic it also takes part in."""
    return any(any(k in why for k in ("bit", "loop", "division", OFFSETS, INDEX_BOUND, "tl.cdiv", "seed", "offset"))
               for _, why in f.ints)


def _taken(guards: tuple, constexprs: dict, unknown: bool | None = None) -> bool:
    """Whether code under `guards` ((FLAG, True) for `if FLAG:`) runs with the flags' values known;
    a flag not known holds either way, or is `unknown` where that is given."""
    def value(flag):
        v = constexprs[flag] if flag in constexprs else unknown
        return bool(getattr(v, "value", v)) if v is not None else None

    return all(value(flag) is None or value(flag) == want for flag, want in guards)


def _elem(w: Walk, p: str, links: dict, constexprs: dict, default: str = "fp32", depth: int = 0) -> tuple[str, str]:
    """The element type of pointer `p` and why: what the code needs of it, else says of it; where the
    code compares its element type with some (`X.dtype.element_ty == tl.float16`), one of those."""
    # of the element types it is compared with, those of the branches the flags assumed take
    # (`if TRANSPOSE: static_assert(b.dtype == tl.bfloat16) else: static_assert(b.dtype == tl.int16)`)
    # (a flag not known yet taken as False, as an assumed flag is: its `else` first)
    options = [o for o in w.facts[p].options if _taken(w.guards_at.get(o[1], ()), constexprs)] or w.facts[p].options
    options = sorted(options, key=lambda o: not _taken(w.guards_at.get(o[1], ()), constexprs, unknown=False))
    if options:
        needs = [e for e in w.facts[p].elem if e[0] == NEED]
        wants_int = any(e[1][:1] in "iu" for e in needs)
        # floats unless the code needs an integer; where the branches a flag picks say which,
        # those (their order above) unless the code needs otherwise
        guarded = any(w.guards_at.get(o[1]) for o in options)
        fit = [o for o in options if (o[0][:1] in "iu") == wants_int] if needs or not guarded else []
        fit = fit or options
        dtype, line = fit[0]
        why = f"its element type is compared with {_tl(dtype)} at line {line}"
        if needs and wants_int:
            why += f", and {needs[0][3]}"
        return dtype, f"element type {dtype}: {why}"
    evidence = sorted(w.facts[p].elem, key=lambda e: (e[0], e[2]))
    if evidence:
        rank = evidence[0][0]
        top = [e for e in evidence if e[0] == rank]
        if rank == NEED:
            widths = [e for e in top if e[1] not in ("i32", "i1")]
            top = widths or [e for e in top if e[1] == "i32"] or top
        _, dtype, _, why = top[0]
        dtype = _resolve(w, dtype, links, constexprs, depth)
        if dtype:
            return dtype, f"element type {dtype}: {why}"
    if p in links and depth < 4:
        q, line = links[p]
        dtype, _ = _elem(w, q, links, constexprs, default, depth + 1)
        return dtype, f"element type {dtype}: it stores values loaded from {q} at line {line}"
    return default, f"element type {default}: nothing in the code fixes it"


def _resolve(w: Walk, dtype, links: dict, constexprs: dict, depth: int) -> str | None:
    if isinstance(dtype, str):
        return dtype if dtype in DTYPES else None
    kind, name = dtype
    if kind == "param":
        value = constexprs.get(name)
        text = str(value) if value is not None else ""
        return text if text in DTYPES else None
    if kind == "elem" and depth < 4:
        return _elem(w, name, links, constexprs, depth=depth + 1)[0]
    return None


# -- constexprs -------------------------------------------------------------------------------------

def _constexpr(w: Walk, p: str, warps: int | None = None) -> Assumed:
    from kinspect.compile.args import tl_dtype

    f = w.facts[p]
    if f.called:
        arity, line = f.called[0]
        from kinspect.compile.stand_in_fns import BY_ARITY

        fn = BY_ARITY.get(max(arity, 1), BY_ARITY[1])
        return Assumed(p, fn, "identity", f"called as a function at line {line}: an identity function stands in",
                       True, "function")
    dtypes = list(f.dtypes) + [(None, line, why) for kind, v, line, why in f.kinds if kind == "dtype"]
    if dtypes:
        chosen = next((d for d in dtypes if d[0]), None)      # one it is compared with
        value = chosen[0] if chosen else "fp32"
        line, why = dtypes[0][1], dtypes[0][2]
        reason = f"a dtype: {why}" + (f"; the one it is compared with at line {chosen[1]}" if chosen else
                                      "; tl.float32, which every operation accepts")
        return Assumed(p, tl_dtype(value) or tl_dtype("fp32"), value, reason, True, "dtype")
    if f.strs:
        value, line = f.strs[0]
        return Assumed(p, value, repr(value) if value == "" else value,
                       f"a string: compared with {value!r} at line {line}", True, "str")
    kinds = [k for k in f.kinds if k[0] in ("str", "none", "bool", "int")]
    if f.contiguous and not f.pow2:
        return Assumed(p, 1, "1", f"multiplies a tl.arange along the last axis at line {f.contiguous[0][0]}: a "
                                  f"contiguous stride", True, "int")
    if f.numbers:      # the values the code branches on are the ones it is written for
        fits = [(v, line) for v, line in f.numbers if not f.pow2 or (v > 0 and v & (v - 1) == 0)]
        if fits:
            value, line = fits[0]
            return Assumed(p, value, str(value), f"an int: compared with {value} at line {line}", True,
                           "pow2" if f.pow2 else "int")
    # `32 // BITS`: the sub-word a packed format takes, a part of the word (4 of 32: 4-bit values)
    of_word = [(line, literal) for line, _, literal in f.divides if literal and literal >= 4]
    if of_word and not f.pow2:
        line, literal = of_word[0]
        value = max(2, literal // 8)
        return Assumed(p, value, str(value), f"it divides {literal} at line {line}: a part of it (packed values)",
                       True, "int")
    of_block = [line for line, constexpr_dividend, _ in f.divides if constexpr_dividend]
    if of_block and f.pow2:   # `BLOCK_N // SPLIT` where tl.arange takes the quotient: it must stay >= 1
        return Assumed(p, 2, "2", f"it divides a block size at line {of_block[0]} ({f.pow2[0][1]}): small",
                       True, "pow2")
    block, small = _block(warps)
    if f.divides and not f.pow2:
        return Assumed(p, BLOCK, str(BLOCK), f"a group or tile size: it divides at line {f.divides[0][0]}", True,
                       "pow2")
    if f.pow2 and f.loops:    # a tl.static_range count that tl.arange also takes: each unrolled copy is code
        return Assumed(p, LOOP, str(LOOP), f"a power of two: {f.pow2[0][1]}, and a tl.static_range count at line "
                                           f"{f.loops[0][0]}: small, the loop is unrolled", True, "pow2")
    if f.pow2:
        line, why = f.pow2[0]
        if w.rank >= 3:
            return Assumed(p, BLOCK_3D, str(BLOCK_3D), f"a power of two: {why}; small, for the kernel's {w.rank}-D "
                                                       f"tiles", True, "pow2")
        return Assumed(p, block, str(block), f"a power of two: {why}{small}", True, "pow2")
    if f.loops:
        return Assumed(p, LOOP, str(LOOP), f"a tl.static_range count at line {f.loops[0][0]}", True, "loop")
    if kinds and kinds[0][0] in ("str", "int"):
        kind, value, line, why = kinds[0]
        return Assumed(p, value, repr(value) if value == "" else str(value), why, True, kind)
    if f.bools:
        explicit = next((b for b in f.bools if b[0] is not None), None)
        value = explicit[0] if explicit else False
        why = explicit[2] if explicit else f.bools[0][2]
        return Assumed(p, value, str(value), f"a flag: {why}", True, "bool")
    if kinds:
        kind, value, line, why = kinds[0]
        return Assumed(p, value, str(value), why, True, kind)
    if f.nones:
        return Assumed(p, None, "None", f"compared with None at line {f.nones[0][0]}", True, "none")
    if f.floats and not _int_needed(f):
        return Assumed(p, 1.0, "1.0", f"a float: {f.floats[0][1]}", True, "float")
    if f.ints or f.used:
        line = (f.ints or f.used)[0][0]
        return Assumed(p, OTHER_INT, str(OTHER_INT), f"an int: used at line {line}, nothing says more", True, "int")
    return Assumed(p, None, "None", "not used by the kernel's code", True, "none")


def _satisfy_asserts(w: Walk, out: dict, given: dict) -> None:
    """Change assumed ints and flags until every tl.static_assert of the kernel that can be checked
    here holds; note the change in the reason."""
    if not w.asserts:
        return
    ns = dict(w.kernel_globals)

    def values():
        return {**{k: a.value for k, a in out.items()}, **given}

    def holds(cond) -> bool | None:
        try:
            return bool(eval(compile(ast.Expression(cond), "<static_assert>", "eval"), {**ns, **values()}))
        except Exception:
            return None

    failing = [(cond, line) for cond, line in w.asserts if holds(cond) is False]
    if not failing:
        return
    names = list(dict.fromkeys(n.id for cond, _ in failing for n in ast.walk(cond)
                               if isinstance(n, ast.Name) and n.id in out and out[n.id].kind in CANDIDATES))
    if not names:
        return
    saved = {n: out[n] for n in names}
    pools = [CANDIDATES[out[n].kind] for n in names]
    for combo in itertools.islice(itertools.product(*pools), SEARCH_LIMIT):
        for n, v in zip(names, combo):
            out[n] = Assumed(n, v, str(v), saved[n].why, True, saved[n].kind)
        if all(holds(c) is not False for c, _ in w.asserts):
            break
    else:
        out.update(saved)
        return
    lines = ", ".join(str(line) for _, line in failing)
    for n in names:
        if out[n].value != saved[n].value:
            out[n] = Assumed(n, out[n].value, out[n].spec, f"{saved[n].why}; {out[n].value} so that the "
                             f"tl.static_assert at line {lines} holds", True, saved[n].kind)


def check_given(jit, given: dict) -> None:
    """A -p value of the wrong kind for what the code does with it: one line, before Triton's error."""
    from kinspect.core.errors import UsageError

    if not given:
        return
    w = walk(jit)
    for name, value in given.items():
        if name not in w.facts or name not in w.constexprs or not isinstance(value, str) or _is_dtype_word(value):
            continue
        f = w.facts[name]
        if f.strs or f.kinds and f.kinds[0][0] == "str":
            continue
        need = f.pow2[0][1] if f.pow2 else (f"a tl.static_range count at line {f.loops[0][0]}" if f.loops else None)
        if need:
            raise UsageError(f"-p {name}={value}: {name} is an integer in the kernel ({need}); e.g. -p {name}={BLOCK}")


def _is_dtype_word(value) -> bool:
    return hasattr(value, "dtype")


# -- a better guess, from the error the first one met --------------------------------------------------

# Triton's words for a tile too large: "numel (2097152) exceeds triton maximum tensor numel (1048576)"
NUMEL_RE = re.compile(r"numel \((\d+)\) exceeds triton maximum tensor numel \((\d+)\)")
# and for resources: "out of resource: shared_memory, Required: 262144, Hardware limit: 232448."
RESOURCE_RE = re.compile(r"out of resource: \w+, Required: (\d+), Hardware limit: (\d+)")
# tl.dot's operands: "Both operands must be same dtype. Got fp32 and fp16"
SAME_DTYPE_RE = re.compile(r"Both operands must be same dtype\. Got (\w+) and (\w+)")
# what an element type chosen with no evidence says (see _elem)
NO_EVIDENCE = "nothing in the code fixes it"
# what an element type says where it is a habit, or another parameter's (infer.Walk.need's reasons,
# _pair_dot_operands): no evidence of the pointer's own
BORROWED = (NO_EVIDENCE, "as matmul inputs usually are", "'s element type", "the other operand of tl.dot at line")


def borrowed(a: Assumed) -> bool:
    """A pointer's element type that the code does not fix for it alone: a habit (tl.dot's fp16),
    or another pointer's (`tl.dot(p.to(Q.dtype.element_ty), v)` gives V whatever Q is)."""
    return any(text in a.why for text in BORROWED)


def improve(assumed: tuple, error: str) -> tuple[tuple, str]:
    """Other values for what kinspect assumed, derived from the error the assumed ones met: smaller
    block sizes for a tile or a resource over Triton's limit, the other operand's element type for
    a tl.dot of two types. Returns (the new values, what changed and why) or ((), "") when the
    error says nothing kinspect can act on."""
    m = NUMEL_RE.search(error) or RESOURCE_RE.search(error)
    if m:
        over = int(m[1]) / max(int(m[2]), 1)
        return _shrink(assumed, max(1, math.ceil(math.log2(over)) if over > 1 else 1),
                       "the tile is over Triton's limit")
    m = SAME_DTYPE_RE.search(error)
    if m:
        return _retype(assumed, m[1], m[2])
    return (), ""


def _shrink(assumed: tuple, halvings: int, why: str) -> tuple[tuple, str]:
    values = {a.name: a for a in assumed}
    blocks = [a for a in assumed if a.kind == "pow2" and isinstance(a.value, int) and a.value >= 32]
    if not blocks:
        return (), ""
    current = {a.name: a.value for a in blocks}
    for _ in range(halvings):
        name = max(current, key=lambda k: current[k])
        if current[name] < 32:
            break
        current[name] //= 2
    changed = {k: v for k, v in current.items() if v != values[k].value}
    if not changed:
        return (), ""
    for k, v in changed.items():
        a = values[k]
        values[k] = Assumed(k, v, str(v), f"{a.why}; {v}, not {a.value}: {why}", True, a.kind)
    return tuple(values[a.name] for a in assumed), ", ".join(f"{k}={v}" for k, v in changed.items()) + f" ({why})"


def _retype(assumed: tuple, x: str, y: str) -> tuple[tuple, str]:
    """Pointers whose element type nothing fixed take the one of tl.dot's other operand."""
    import torch

    changed, out = [], []
    for a in assumed:
        if a.kind == "pointer" and a.spec in (f"*{x}", f"*{y}") and NO_EVIDENCE in a.why:
            other = y if a.spec == f"*{x}" else x
            if other in DTYPES:
                value = torch.empty(POINTER_ELEMENTS, dtype=getattr(torch, DTYPES[other]))
                a = Assumed(a.name, value, f"*{other}", a.why.replace(f"element type {a.spec[1:]}: {NO_EVIDENCE}",
                            f"element type {other}: tl.dot met {x} and {y}"), False, "pointer")
                changed.append(f"{a.name}={a.spec}")
        out.append(a)
    if not changed:
        return (), ""
    return tuple(out), ", ".join(changed) + f" (tl.dot needs one element type; it met {x} and {y})"
