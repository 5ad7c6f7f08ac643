"""Bytes a captured variant moves per call, estimated from its launch records and its source.

    t = traffic(variant)          # None when the variant has no recorded launch
    t.bytes, t.method, t.upper_bound, t.pointers

Three methods, best first; each estimate says which it used:
- "index expressions": each tl.load / tl.store / tl.atomic_* pointer's index evaluated over the
  launch's domain, masks applied, counted in 32-byte sectors per pointer (kinspect.analysis.indexing;
  an Inductor kernel's range trees, or a hand-written kernel's program ids, aranges and loops over
  the recorded grid: kinspect.analysis.launch_domain). Exact, but for indices read from memory (a gather, an embedding:
  an upper bound, said so per pointer) and domains too large to count whole (sampled, said so).
- "Inductor's kernel_num_gb": the kernel's own estimate, in its metadata when Inductor was asked for
  it (TORCHINDUCTOR_BENCHMARK_KERNEL=1); kept beside the first as a second opinion.
- "tensor sizes": every tensor argument's bytes once (twice for an argument the kernel mutates):
  what the launch record alone says, where the index expressions could not be evaluated (the note
  says why).

Estimates are cached per variant and launch signature in kinspect's cache; a variant launched with
several signatures gets the mean over its launches.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass

from kinspect.analysis.kernel_ast import ParsedKernel, call_name, element_bytes, parse, split_pointer
from kinspect.core.model import ArgSpec, Variant

TRAFFIC_VERSION = 2       # bump when an estimate would come out differently
INDEX = "index expressions"
INDUCTOR = "Inductor's kernel_num_gb"
TENSORS = "tensor sizes"
METHOD_TEXT = {
    INDEX: "the kernel's index expressions evaluated over the launch's domain, counted in 32-byte sectors",
    INDUCTOR: "Inductor's own estimate in the kernel's metadata (kernel_num_gb)",
    TENSORS: "each tensor argument's bytes once (twice where the kernel mutates it): an upper bound for a "
             "kernel that reads each element once",
}
# How sure each pointer's count is, least sure last (a pointer takes the least sure of its accesses).
HOW_ORDER = ("scalar", "exact", "sampled", "masked by data", "indirect", "whole tensor")
RETRIES = 4               # times a too-large domain is sampled more coarsely before giving up
def method_text(described: str) -> str:
    """What a bytes method (as Traffic.describe gives it) means, in a sentence; "" for another."""
    return next((text for name, text in METHOD_TEXT.items() if described.startswith(name)), "")




@dataclass(frozen=True)
class PointerBytes:
    name: str
    read: int
    written: int
    how: str                  # one of HOW_ORDER


@dataclass(frozen=True)
class Traffic:
    bytes_read: int
    bytes_written: int
    method: str               # INDEX | INDUCTOR | TENSORS
    upper_bound: bool = False
    sampled: bool = False
    pointers: tuple[PointerBytes, ...] = ()
    notes: tuple[str, ...] = ()
    inductor_bytes: int | None = None    # Inductor's kernel_num_gb, where the metadata has it
    seconds: float = 0.0                 # what the estimate took (not counting the cache)

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written

    def describe(self) -> str:
        what = "an upper bound" if self.upper_bound else "sampled" if self.sampled else ""
        return f"{self.method}{f' ({what})' if what else ''}"

    def to_json(self) -> dict:
        d = dataclasses.asdict(self)
        d["bytes"] = self.bytes
        d["how"] = self.describe()
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Traffic":
        return cls(bytes_read=int(d["bytes_read"]), bytes_written=int(d["bytes_written"]), method=str(d["method"]),
                   upper_bound=bool(d.get("upper_bound")), sampled=bool(d.get("sampled")),
                   pointers=tuple(PointerBytes(str(p["name"]), int(p["read"]), int(p["written"]), str(p["how"]))
                                  for p in d.get("pointers") or ()),
                   notes=tuple(str(n) for n in d.get("notes") or ()),
                   inductor_bytes=None if d.get("inductor_bytes") is None else int(d["inductor_bytes"]),
                   seconds=float(d.get("seconds") or 0.0))


def traffic(v: Variant) -> Traffic | None:
    """Bytes per call of a launched variant: the mean over its recorded launch signatures, weighted by
    their calls; None when it has no launch record."""
    la = v.launches
    if la is None or not la.signatures:
        return None
    k = parse(v)
    seen: dict[tuple, tuple[Traffic, int]] = {}
    for s in la.signatures:
        key = tuple(s.args)
        if key in seen:
            seen[key] = (seen[key][0], seen[key][1] + s.calls)
        else:
            seen[key] = (_cached(v, k, s.args, s.grid), s.calls)
    items = list(seen.values())
    if len(items) == 1:
        return items[0][0]
    calls = sum(n for _, n in items) or 1
    first = items[0][0]
    return dataclasses.replace(
        first, bytes_read=round(sum(t.bytes_read * n for t, n in items) / calls),
        bytes_written=round(sum(t.bytes_written * n for t, n in items) / calls),
        upper_bound=any(t.upper_bound for t, _ in items), sampled=any(t.sampled for t, _ in items),
        notes=tuple(dict.fromkeys(n for t, _ in items for n in t.notes)) +
        (f"the mean over {len(items)} launch signatures, weighted by their calls",))


def launch_traffic(v: Variant, args: tuple[ArgSpec, ...], grid: tuple[int, ...] = ()) -> Traffic:
    """Bytes per call of one launch signature of `v` (what `kinspect bench` replays), estimated as the
    program view estimates them."""
    return _cached(v, parse(v), tuple(args), tuple(grid))


def _cached(v: Variant, k: ParsedKernel | None, args: tuple[ArgSpec, ...], grid: tuple[int, ...] = ()) -> Traffic:
    from kinspect.core.cache import cache_dir, key_of, write_text
    from kinspect.core.errors import KinspectError

    text = v.source.text if v.source else ""
    key = key_of(str(TRAFFIC_VERSION), v.hash, hashlib.sha256(text.encode()).hexdigest(),
                 json.dumps(v.signature, sort_keys=True), repr(args), repr(tuple(grid)))
    path = cache_dir() / "traffic" / key[:2] / f"{key}.json"
    try:
        return Traffic.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError, KeyError):
        pass
    t = estimate(v, k, args, grid)
    try:
        write_text(path, json.dumps(t.to_json()))
    except KinspectError:
        pass          # an unwritable cache costs time next run, nothing else
    return t


def estimate(v: Variant, k: ParsedKernel | None, args: tuple[ArgSpec, ...], grid: tuple[int, ...] = ()) -> Traffic:
    """One launch signature's bytes (not cached); `grid` is needed for a hand-written kernel."""
    t0 = time.perf_counter()
    meta = k.inductor_meta if k is not None else {}
    gb = meta.get("kernel_num_gb")
    inductor_bytes = round(float(gb) * 1e9) if isinstance(gb, (int, float)) and gb > 0 else None
    notes: list[str] = []
    if k is not None:
        from kinspect.core.optional import has

        if has("numpy"):
            try:
                t = _by_index(v, k, args, tuple(grid))
                return dataclasses.replace(t, inductor_bytes=inductor_bytes, seconds=time.perf_counter() - t0)
            except _GiveUp as e:
                notes.append(f"index expressions not evaluated: {e}")
            except Exception as e:      # a kernel this evaluator gets wrong must not cost the program view
                notes.append(f"index expressions not evaluated (kinspect could not read them: {type(e).__name__}: "
                             f"{e}); please report the kernel")
        else:
            notes.append("index expressions not evaluated: numpy is not installed (pip install numpy)")
    if inductor_bytes is not None:
        return Traffic(inductor_bytes, 0, INDUCTOR, notes=(*notes, "Inductor does not split reads from writes"),
                       inductor_bytes=inductor_bytes, seconds=time.perf_counter() - t0)
    mutated = set(meta.get("mutated_arg_names") or ()) | {a.name for a in args if a.name.startswith("in_out_ptr")}
    read = written = 0
    pointers = []
    for a in args:
        if a.kind != "tensor":
            continue
        n = _span(a) * (element_bytes(v.signature.get(a.name, "")) or element_bytes(a.dtype) or 4)
        twice = a.name in mutated
        read += n
        written += n if twice else 0
        pointers.append(PointerBytes(a.name, n, n if twice else 0, "whole tensor"))
    return Traffic(read, written, TENSORS, upper_bound=True, pointers=tuple(pointers), notes=tuple(notes),
                   inductor_bytes=inductor_bytes, seconds=time.perf_counter() - t0)


def _span(a: ArgSpec) -> int:
    """Elements a tensor argument spans in memory (its shape through its strides)."""
    if any(n == 0 for n in a.shape):
        return 0
    return 1 + sum((n - 1) * abs(s) for n, s in zip(a.shape, a.strides))


class _GiveUp(Exception):
    pass


def _by_index(v: Variant, k: ParsedKernel, args: tuple[ArgSpec, ...], grid: tuple[int, ...]) -> Traffic:
    from kinspect.analysis import indexing as ix
    from kinspect.analysis import launch_domain

    scalars = {**{n: x for n, x in v.constexprs.items() if type(x) in (int, float, bool)},
               **{a.name: a.value for a in args if a.kind in ("int", "float", "bool") and a.value is not None}}
    try:
        domain = ix.build_domain(k, scalars) if k.inductor else launch_domain.build_domain(k, scalars, grid)
    except ix.Unsupported as e:
        raise _GiveUp(str(e)) from None
    for _ in range(RETRIES + 1):
        try:
            return _count_all(v, k, args, domain, scalars)
        except ix.TooLarge as e:
            if not _sample(domain, e.axes):
                break
        except ix.Unsupported as e:         # a hand-written kernel's loop or broadcast not modelled
            raise _GiveUp(str(e)) from None
    raise _GiveUp("the domain is too large to evaluate")


def _sample(domain, axes) -> bool:
    """Evaluate fewer values of the outermost of `axes`, evenly spread: single values of an outer digit
    (each its own rows), blocks of consecutive values of a tree's lowest digit (so runs of neighbouring
    elements stay runs). Whether anything could be taken away."""
    import numpy as np

    candidates = [k for k in axes if len(domain.axes[k].values) > 1]
    if not candidates:
        return False
    k = max(candidates, key=lambda i: (domain.axes[i].weight, len(domain.axes[i].values)))
    ax = domain.axes[k]
    n = len(ax.values)
    keep = max(1, n * domain.max_points // (4 * domain.points(axes)))
    block = 1 if ax.weight > 1 else max(1, min(4096, keep // 16))
    starts = np.linspace(0, n - block, max(1, keep // block)).astype(np.int64)
    ax.values = np.unique(ax.values[(starts[:, None] + np.arange(block)[None, :]).ravel()])
    return True


def _count_all(v: Variant, k: ParsedKernel, args, domain, scalars) -> Traffic:
    import numpy as np

    from kinspect.analysis import indexing as ix
    from kinspect.analysis.kernel_ast import ACCESS_CALLS

    from kinspect.analysis.launch_domain import LaunchEvaluator

    # a pointer parameter stands for offset 0: `in_ptr0 + (x1)` inside a call is its offset
    ptrs = [p for p in k.params if v.signature.get(p, "").startswith("*")]
    env = {**scalars, **{p: 0 for p in ptrs}}
    ev = ix.Evaluator(domain, env) if k.inductor else LaunchEvaluator(domain, env, ptrs)
    tensors = {a.name: a for a in args if a.kind == "tensor"}
    found: dict[tuple[str, str], list] = {}
    unknown: list[int] = []             # lines of accesses whose pointer is not known
    whole: dict[str, str] = {}          # pointer -> why it is counted as its whole tensor
    notes: list[str] = []

    def on_access(call: ast.Call) -> None:
        kind = ACCESS_CALLS[call_name(call)]
        pointer, index = _pointer(call, k.params)
        if not k.inductor and call.args and not _descriptor(call) and not _block_pointer_base(call, k):
            # a hand-written kernel moves its pointers (`X += row * stride`, `a_ptrs = a_ptr + ...`): the
            # offset is the whole expression, each parameter standing for where the kernel moved it
            pointer, index = ev.pointer_of(call.args[0]), call.args[0]
            if pointer is None:
                unknown.append(call.lineno)
                return
        if pointer is None:
            name = _block_pointer_base(call, k)
            if name is not None:
                whole[name] = "a block pointer or tensor descriptor"
            return
        mask_pos = 1 if kind == "load" else 2
        mask = call.args[mask_pos] if len(call.args) > mask_pos else \
            next((kw.value for kw in call.keywords if kw.arg == "mask"), None)
        try:
            offset = ev.eval(index)
        except ix.Unsupported as e:
            whole[pointer] = f"its index uses {e}"
            return
        if not k.inductor and ev._unknown(offset):
            whole[pointer] = "its index is read from memory (a gather)"
            return
        m = True
        if mask is not None and not (isinstance(mask, ast.Constant) and mask.value is None):
            try:
                m = ev.eval(mask)
            except ix.Unsupported:
                m = ix.Opaque(frozenset())
        elem = element_bytes(v.signature.get(pointer, "")) or \
            (element_bytes(tensors[pointer].dtype) if pointer in tensors else None) or 4
        c = ix.count(ev, offset, m, elem)
        for direction in ("read", "written") if kind == "atomic" else ("read",) if kind == "load" else ("written",):
            found.setdefault((pointer, direction), []).append(c)

    ev.run(k.body, on_access)
    for name, helper in getattr(ev, "handed", {}).items():
        whole.setdefault(name, f"it is handed to the helper {helper}(), whose loads and stores are not read here")
    if unknown:
        raise _GiveUp(f"the pointer of the access on line {unknown[0] + k.first_line - 1} could not be traced to one "
                      f"argument")
    if not k.inductor and whole and set(whole) >= {p for p, _ in found}:
        raise _GiveUp("; ".join(f"{name}: {why}" for name, why in whole.items()))
    pointers = []
    read = written = 0
    upper = sampled = False
    for name in dict.fromkeys([p for p, _ in found] + list(whole)):
        cap = _extent_sectors(tensors.get(name), v.signature.get(name, ""))
        got, hows = {}, []
        for direction in ("read", "written"):
            counts = found.get((name, direction), [])
            if name in whole and (counts or direction == "read"):
                sectors = cap if cap is not None else 0
                hows.append("whole tensor")
            elif counts:
                starts = np.concatenate([c.starts for c in counts])
                ends = np.concatenate([c.ends for c in counts])
                sectors = ix.union_size(starts, ends) + sum(c.extra for c in counts)
                sectors = min(sectors, cap) if cap is not None else sectors
                hows += [c.how for c in counts]
            else:
                sectors = 0
            got[direction] = int(round(sectors)) * ix.SECTOR
        how = max(hows, key=HOW_ORDER.index) if hows else "exact"
        upper |= how in ("indirect", "masked by data", "whole tensor")
        sampled |= how == "sampled"
        if name in whole:
            notes.append(f"{name}: counted as its whole tensor ({whole[name]})")
        pointers.append(PointerBytes(name, got["read"], got["written"], how))
        read += got["read"]
        written += got["written"]
    if any(p.how == "indirect" for p in pointers):
        notes.append("indices read from memory (a gather, an embedding): at most one row per index, an upper bound")
    if sampled:
        notes.append("the domain was too large to count whole: a sample of it, scaled")
    return Traffic(read, written, INDEX, upper_bound=upper, sampled=sampled, pointers=tuple(pointers),
                   notes=tuple(notes))


def _pointer(call: ast.Call, params) -> tuple[str | None, ast.expr | None]:
    if _descriptor(call):
        return None, None
    return split_pointer(call.args[0], params) if call.args else (None, None)


def _descriptor(call: ast.Call) -> bool:
    """desc.load([...]): a tensor descriptor's access."""
    return isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and call.func.value.id != "tl"


def _block_pointer_base(call: ast.Call, k: ParsedKernel) -> str | None:
    return next((a.pointer for a in k.accesses if a.block_ptr and a.line == call.lineno), None)


def _extent_sectors(a: ArgSpec | None, triton_type: str) -> int | None:
    if a is None:
        return None
    elem = element_bytes(triton_type) or element_bytes(a.dtype) or 4
    return -(-_span(a) * elem // 32)
