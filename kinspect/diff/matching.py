"""Which kernel of one run is which kernel of another: the units a program diff compares.

A unit is what a program's table shows as one line: an Inductor kernel (every variant of it: its
configs), or one specialization of a hand-written kernel (its function with its constexprs, options
and argument specialization: `softmax BLOCK=128 w=4` launched beside `softmax BLOCK=64 w=2` is two
units). Units are matched in rounds, each only among what the rounds before left, and each match
says how it was made:

1. the same name and the same source (Inductor), the same function, specialization and source
   (hand-written);
2. the same name (or function and specialization), another source: the kernel changed;
   then the same function, another specialization, where each run has that function left as one
   unit only (its config changed);
3. the same source apart from the kernel's own name (Inductor renumbered it);
4. the same origin (kinspect.files.provenance): the ATen ops it fuses and the model lines that call
   it, under another name (Inductor renumbered and changed it) -- only where exactly one kernel on
   each side has that origin.

What matches nothing is gone (A only) or new (B only). Nothing is matched on a guess at a name.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass

from kinspect.analysis.summary import VariantMetrics
from kinspect.core.model import Variant
from kinspect.files import provenance

# Inductor's kernels, where the record has no source to tell: triton_<kind>_fused_..._<n>
INDUCTOR_NAME = re.compile(r"^triton_(?:poi|per|red|tem|for|spl|mm|bmm)_")
#     inductor_meta={'grid_type': 'Grid1D', ..., 'kernel_name': 'triton_per_fused_sum_14', ...}
INDUCTOR_SOURCE = re.compile(r"\binductor_meta\s*=")
# Hashes in a kernel's source that say nothing of its code: Inductor's 'backend_hash': '91D1D1...'
SOURCE_HASH = re.compile(r"\b(?:[0-9A-Fa-f]{32,64}|[A-Z2-7]{52})\b")


@dataclass(frozen=True)
class Unit:
    key: str                            # the kernel, plus its specialization for a hand-written kernel
    kernel: str
    generated: bool                     # made by Inductor (its source says so, or its provenance)
    variants: tuple[Variant, ...]
    metrics: tuple[VariantMetrics, ...]     # one per variant, same order
    source_hash: str                    # of the source with the kernel's own name and hashes erased
    origin: provenance.Origin | None

    @property
    def busiest(self) -> int:
        """The index of the variant whose figures stand for the unit: the most GPU time, then calls."""
        return max(range(len(self.metrics)),
                   key=lambda i: (self.metrics[i].gpu_ms or 0, self.metrics[i].calls or 0, -i))

    @property
    def variant(self) -> Variant:
        return self.variants[self.busiest]

    @property
    def figures(self) -> VariantMetrics:
        return self.metrics[self.busiest]

    def origin_key(self) -> tuple | None:
        """What an origin match compares: the graph, the ATen ops and the model lines (file name and
        line, which two checkouts of one model share)."""
        o = self.origin
        if o is None or not o.aten:
            return None
        return (o.graph, o.aten, tuple(sorted({(os.path.basename(f.file), f.line) for f in o.lines})))


@dataclass(frozen=True)
class UnitMatch:
    a: Unit | None
    b: Unit | None
    how: str                            # how the two were matched; "gone" or "new" for one side only

    @property
    def kernel(self) -> str:
        return (self.b or self.a).key


def units(variants: list[Variant], metrics: list[VariantMetrics]) -> list[Unit]:
    """The units of one run, in the order of their first variant."""
    groups: dict[str, list[int]] = {}
    info = []
    for i, v in enumerate(variants):
        origin = provenance.read(v.path) if v.path else None
        generated = origin is not None or bool(v.source and INDUCTOR_SOURCE.search(v.source.text or "")) \
            or bool(INDUCTOR_NAME.match(v.kernel))
        key = v.kernel if generated else f"{v.kernel} {specialization(v)}".strip()
        info.append((generated, origin))
        groups.setdefault(key, []).append(i)
    out = []
    for key, idx in groups.items():
        first = variants[idx[0]]
        generated, origin = info[idx[0]]
        origin = origin or next((info[i][1] for i in idx if info[i][1] is not None), None)
        out.append(Unit(key=key, kernel=first.kernel, generated=generated, variants=tuple(variants[i] for i in idx),
                        metrics=tuple(metrics[i] for i in idx), source_hash=source_hash(first), origin=origin))
    return out


def specialization(v: Variant) -> str:
    """A hand-written kernel's specialization in words: constexprs, options, argument types and alignment."""
    parts = [f"{k}={x}" for k, x in sorted(v.constexprs.items())]
    parts += [f"{short}={v.options[k]}" for k, short in (("num_warps", "w"), ("num_stages", "s"))
              if v.options.get(k) is not None]
    spec = v.specialization()
    parts += [spec[k] for k in sorted(spec)]
    return " ".join(parts)


def source_hash(v: Variant) -> str:
    """The kernel's source with its own name and the hashes in it erased, hashed: two runs' kernels
    with this equal are the same code (Inductor renumbers kernels between compiles of one model)."""
    text = (v.source.text if v.source else "") or ""
    if not text:
        return ""
    text = SOURCE_HASH.sub("<hash>", text.replace(v.kernel, "<kernel>"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def match(a: list[Unit], b: list[Unit]) -> list[UnitMatch]:
    """Every unit of `a` and `b` once: matched pairs in the order of `a`, then B's new units."""
    left_a, left_b = list(a), list(b)
    pairs: list[UnitMatch] = []

    def take(rounds_key, how, unique: bool = False):
        index: dict = {}
        for u in left_b:
            k = rounds_key(u)
            if k is not None:
                index.setdefault(k, []).append(u)
        counts: dict = {}
        if unique:
            for u in left_a:
                k = rounds_key(u)
                counts[k] = counts.get(k, 0) + 1
        for u in list(left_a):
            k = rounds_key(u)
            found = index.get(k) if k is not None else None
            if not found or (unique and (len(found) > 1 or counts.get(k, 0) > 1)):
                continue
            other = found.pop(0)
            left_a.remove(u)
            left_b.remove(other)
            pairs.append(UnitMatch(u, other, how(u, other) if callable(how) else how))

    take(lambda u: (u.key, u.source_hash),
         lambda x, y: "name and source" if x.generated else "function, specialization and source")
    take(lambda u: u.key,
         lambda x, y: "name (source changed)" if x.generated else "function and specialization (source changed)")
    by_function_a = _launched_per_function(left_a)
    by_function_b = _launched_per_function(left_b)
    take(lambda u: None if u.generated or not _sole(u, by_function_a, by_function_b) else (u.kernel, "function"),
         "function (specialization changed)")
    take(lambda u: ("src", u.source_hash) if u.generated and u.source_hash else None,
         "source (renamed)", unique=True)
    take(lambda u: u.origin_key() if u.generated else None, _by_origin, unique=True)
    order = {id(u): i for i, u in enumerate(a)}
    pairs.sort(key=lambda m: order[id(m.a)])
    return pairs + [UnitMatch(u, None, "gone") for u in left_a] + [UnitMatch(None, u, "new") for u in left_b]


def _by_origin(a: Unit, b: Unit) -> str:
    o = a.origin
    where = o.short() if o is not None else ""
    return f"origin (renamed): {where}" if where else "origin (renamed)"


def _launched_per_function(us: list[Unit]) -> dict[str, int]:
    out: dict[str, int] = {}
    for u in us:
        if not u.generated:
            out[u.kernel] = out.get(u.kernel, 0) + 1
    return out


def _sole(u: Unit, a: dict, b: dict) -> bool:
    """Each run has this function left as one unit only: the one is the other, specialized anew."""
    return a.get(u.kernel, 0) == 1 and b.get(u.kernel, 0) == 1
