"""The candidates a tune tries: the knobs each finding kind names, stepped within what the kernel
accepts, and the grid each candidate launches with.

    knobs = Knobs.of(spec, heuristic)               # what may change, and its limits
    first = from_findings(knobs, findings)          # the steps the findings name, from the original
    more = neighbours(knobs, best, seen)            # widening: every one-step change of the best so far,
                                                    # each saying which candidate it widened from
    grid = grid_for(knobs, candidate)               # the launch grid for the candidate's blocks

A knob is a tile constexpr (Inductor's XBLOCK / YBLOCK / R0_BLOCK; a user kernel's BLOCK_* powers of
two), num_warps or num_stages; a step halves or doubles it. What a finding kind asks for is data
(MOVES), checked against the kinds kinspect.analysis.findings knows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from kinspect.analysis.findings import KINDS
from kinspect.tune.heuristic import GRID_AXES, MAX_BLOCK, MAX_WARPS, Heuristic

# A move: (knob, direction). "tile" is every tile constexpr, "contiguous" the one along the contiguous
# axis, "parallel" the tiles that decide the grid (smaller: more programs).
MOVES: dict[str, tuple[tuple[str, int], ...]] = {
    "spills": (("tile", -1), ("num_stages", -1), ("num_warps", +1)),
    "low_occupancy": (("num_warps", +1), ("num_warps", -1), ("tile", -1), ("num_stages", -1)),
    "narrow_loads": (("contiguous", +1), ("num_warps", -1)),
    "gather_loads": (("contiguous", +1), ("contiguous", -1)),
    "dot_without_matrix_units": (("tile", +1), ("num_warps", +1)),
    "low_parallelism": (("parallel", -1), ("num_warps", -1)),
}
# findings kinspect derives here (not in analysis.findings): a grid smaller than the device's SMs
LOW_PARALLELISM = "low_parallelism"
assert all(k in KINDS or k == LOW_PARALLELISM for k in MOVES), "MOVES names a finding kind that does not exist"

MAX_STAGES = 5


@dataclass(frozen=True)
class Candidate:
    constexprs: tuple[tuple[str, int], ...]    # every tile knob's value
    num_warps: int
    num_stages: int
    why: str = ""                              # the finding kind or step that proposed it
    origin: str = "kinspect"                   # kinspect, original, inductor, max_autotune, autotune

    def key(self) -> tuple:
        return (self.constexprs, self.num_warps, self.num_stages)

    def label(self) -> str:
        return " ".join([f"{k}={v}" for k, v in self.constexprs] + [f"w{self.num_warps}", f"s{self.num_stages}"])

    def changes(self, other: "Candidate") -> str:
        """What differs from `other`: `XBLOCK 1024->512, num_warps 4->8`."""
        mine, theirs = dict(self.constexprs), dict(other.constexprs)
        parts = [f"{k} {theirs.get(k)}->{v}" for k, v in mine.items() if theirs.get(k) != v]
        parts += [f"{n} {b}->{a}" for n, a, b in (("num_warps", self.num_warps, other.num_warps),
                                                 ("num_stages", self.num_stages, other.num_stages)) if a != b]
        return ", ".join(parts) or "nothing"

    def to_json(self) -> dict:
        return {"constexprs": dict(self.constexprs), "num_warps": self.num_warps, "num_stages": self.num_stages,
                "why": self.why, "origin": self.origin}

    @classmethod
    def from_json(cls, d: dict) -> "Candidate":
        return cls(constexprs=tuple((str(k), int(v)) for k, v in d["constexprs"].items()),
                   num_warps=int(d["num_warps"]), num_stages=int(d["num_stages"]), why=str(d.get("why", "")),
                   origin=str(d.get("origin", "kinspect")))


@dataclass(frozen=True)
class Knobs:
    """What a tune may change in one captured launch, and how the grid follows."""

    original: Candidate
    limits: dict                       # tile knob -> (lowest, highest)
    contiguous: tuple[str, ...]        # tile knobs along the contiguous axis
    grid_axes: tuple                   # per grid axis: (numel value, tile knob) or None (kept as captured)
    captured_grid: tuple[int, ...]
    heuristic: Heuristic | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def of(cls, spec, heuristic: Heuristic | None) -> "Knobs":
        """The knobs of a captured launch (kinspect.replay.spec.ReplaySpec)."""
        consts = {a.name: a.value for a in spec.args if spec.signature.get(a.name) == "constexpr"
                  and isinstance(a.value, int) and not isinstance(a.value, bool)}
        scalars = {a.name: a.value for a in spec.args if a.kind == "int"}
        warps = int(spec.options.get("num_warps") or 4)
        stages = int(spec.options.get("num_stages") or (1 if heuristic else 3))
        notes = []
        if heuristic is not None:
            tiles = {k: v for k, v in consts.items() if k in MAX_BLOCK}
            limits = {k: (1, heuristic.max_block(k)) for k in tiles}
            if heuristic.persistent:       # the whole reduction is one block: R0_BLOCK is not Inductor's to choose
                limits = {k: lim for k, lim in limits.items() if not k.startswith("R")}
            contiguous = ("R0_BLOCK",) if heuristic.reduction_hint == "INNER" and "R0_BLOCK" in limits else \
                tuple(k for k in ("XBLOCK",) if k in limits)
            axes = tuple((scalars.get(n), b) if b in consts and isinstance(scalars.get(n), int) else None
                         for n, b in GRID_AXES.get(heuristic.grid_type, ()))
            if heuristic.grid_type not in GRID_AXES:
                notes.append(f"grid type {heuristic.grid_type or 'unknown'}: the grid is kept as captured, so only "
                             f"num_warps and num_stages are tuned")
                limits = {}
        else:
            tiles = {k: v for k, v in consts.items() if "BLOCK" in k.upper() and v > 0 and v & (v - 1) == 0}
            limits = {k: (16 if _dot_side(k) else 1, max(v * 8, 16)) for k, v in tiles.items()}
            contiguous = tuple(k for k in tiles if k.upper().endswith(("_N", "_K", "SIZE", "BLOCK"))) or tuple(tiles)
            axes, guessed = _infer_axes(tuple(spec.grid), scalars, tiles)
            notes += guessed
        grid = tuple(spec.grid) + (1,) * (3 - len(spec.grid))
        original = Candidate(constexprs=tuple(sorted((k, int(consts[k])) for k in limits)), num_warps=warps,
                             num_stages=stages, why="what the program ran", origin="original")
        knobs = cls(original=original, limits=limits, contiguous=contiguous, grid_axes=tuple(axes),
                    captured_grid=grid, heuristic=heuristic, notes=tuple(notes))
        if any(axes) and knobs.grid(original) != grid:      # the rule does not give what the program launched
            knobs = replace(knobs, limits={}, original=replace(original, constexprs=()),
                            notes=knobs.notes + (f"the grid rule gives {knobs.grid(original)} for the captured blocks, "
                                                 f"not the captured {grid}: only num_warps and num_stages are tuned",))
        return knobs

    def grid(self, c: Candidate) -> tuple[int, ...]:
        """The grid candidate `c` launches with: each axis Inductor (or the inferred rule) computes from a
        block is recomputed for c's block; the others are kept as captured."""
        values = dict(c.constexprs)
        out = list(self.captured_grid)
        for i, axis in enumerate(self.grid_axes):
            if axis is None or axis[1] not in values:
                continue
            numel, block = axis
            out[i] = max(1, math.ceil(numel / values[block]))
        return tuple(out)

    def valid(self, c: Candidate) -> str:
        """"" when `c` is within the limits; else why not."""
        for k, v in c.constexprs:
            lo, hi = self.limits.get(k, (v, v))
            if v < lo or v > hi:
                return f"{k}={v} outside {lo}..{hi}"
        if not 1 <= c.num_warps <= MAX_WARPS:
            return f"num_warps={c.num_warps} outside 1..{MAX_WARPS}"
        if not 1 <= c.num_stages <= MAX_STAGES:
            return f"num_stages={c.num_stages} outside 1..{MAX_STAGES}"
        elements = math.prod(v for _, v in c.constexprs) if c.constexprs else None
        if elements is not None and self.heuristic is not None and c.num_warps > 1 and c.num_warps * 32 > \
                max(elements * _fixed_tiles(self), 32):
            return f"{c.num_warps} warps for a block of {elements * _fixed_tiles(self)} elements (threads idle)"
        return ""


def _fixed_tiles(k: Knobs) -> int:
    """The elements of a block along the dimensions that are not knobs (a persistent reduction's R0_BLOCK)."""
    return 1 if k.heuristic is None or not k.heuristic.persistent else max(
        1, 2 ** math.ceil(math.log2(max(1, k.heuristic.size_hints.get("r0_", 1)))))


def _dot_side(name: str) -> bool:
    return name.upper().endswith(("_M", "_N", "_K"))


def _infer_axes(grid: tuple, scalars: dict, tiles: dict) -> tuple[list, list[str]]:
    """For a kernel without Inductor's grid rule: each grid axis that equals cdiv(n, BLOCK) for exactly
    one (integer argument, tile) pair follows that tile; the others are kept as captured."""
    axes, notes = [], []
    for i, g in enumerate(grid):
        pairs = [(n, b) for n, nv in scalars.items() for b, bv in tiles.items()
                 if isinstance(nv, int) and nv > 0 and math.ceil(nv / bv) == g and g > 1]
        if len(pairs) == 1:
            axes.append((scalars[pairs[0][0]], pairs[0][1]))
            notes.append(f"grid axis {i} guessed as cdiv({pairs[0][0]}, {pairs[0][1]}) (it equals {g} for the "
                         f"captured values); a candidate whose output differs from the original's is refused")
        else:
            axes.append(None)
    return axes, notes


def _steps(knobs: Knobs, c: Candidate, knob: str, direction: int) -> list[Candidate]:
    """`c` with one knob one step up (+1) or down (-1): doubled or halved for tiles and warps, one more or
    less for stages."""
    names = {"tile": list(knobs.limits), "contiguous": list(knobs.contiguous),
             "parallel": [a[1] for a in knobs.grid_axes if a is not None and a[1] in knobs.limits]}.get(knob)
    out = []
    if names is not None:
        values = dict(c.constexprs)
        for n in names:
            if n in values:
                new = values[n] * 2 if direction > 0 else values[n] // 2
                if new >= 1:
                    out.append(replace(c, constexprs=tuple(sorted({**values, n: new}.items()))))
    elif knob == "num_warps":
        out.append(replace(c, num_warps=c.num_warps * 2 if direction > 0 else c.num_warps // 2))
    elif knob == "num_stages":
        out.append(replace(c, num_stages=c.num_stages + direction))
    return out


def from_findings(knobs: Knobs, findings: list[str]) -> list[Candidate]:
    """The first candidates: for each finding kind (worst first), the steps it names, taken from the
    original; each says which finding proposed it."""
    out, seen = [], {knobs.original.key()}
    for kind in findings:
        for knob, direction in MOVES.get(kind, ()):
            for c in _steps(knobs, knobs.original, knob, direction):
                c = replace(c, why=kind, origin="kinspect")
                if c.key() not in seen and not knobs.valid(c):
                    seen.add(c.key())
                    out.append(c)
    return out


WIDENING = "widening from "


def widening(base: Candidate) -> str:
    """The why of a candidate one widening step from `base`: `widening from LABEL (ROOT)`, ROOT what began
    the chain of widening steps that led to `base` (a finding kind, or what the program ran)."""
    w = widened(base.why)
    return f"{WIDENING}{base.label()} ({w[1] if w and w[1] else base.why})"


def widened(why: str) -> tuple[str, str] | None:
    """(the label of the candidate it widened from, the chain's ROOT) of a widening step's why; ("", "") for a
    tune stored before kinspect named them (its why is "widening"); None for a why that is no widening."""
    if why == "widening":
        return "", ""
    if not why.startswith(WIDENING):
        return None
    label, _, root = why[len(WIDENING):].partition(" (")
    return label, root.removesuffix(")")


def short_why(why: str, width: int) -> str:
    """`why` in a column `width` wide: a widening step's without its chain's root when the whole does not fit."""
    w = widened(why)
    if len(why) > width and w is not None and w[0]:
        why = WIDENING + w[0]
    return why[:width]


def neighbours(knobs: Knobs, around: Candidate, seen: set) -> list[Candidate]:
    """Every valid one-step change of `around` not tried yet (Inductor's coordinate descent, from the best
    so far); also two steps of one knob, when one step was tried already. Each says it widened from `around`."""
    why = widening(around)
    out = []
    for knob in ("tile", "num_warps", "num_stages"):
        for direction in (+1, -1):
            for c in _steps(knobs, around, knob, direction):
                for c2 in (c, *(_steps(knobs, c, knob, direction) if c.key() in seen else ())):
                    c2 = replace(c2, why=why, origin="kinspect")
                    if c2.key() not in seen and not knobs.valid(c2) and all(x.key() != c2.key() for x in out):
                        out.append(c2)
    return out


def low_parallelism(knobs: Knobs) -> bool:
    """The captured grid has fewer programs than the device has SMs."""
    sms = knobs.heuristic.sm_count if knobs.heuristic else None
    return sms is not None and math.prod(knobs.captured_grid) < sms


def finding_kinds(findings: list[dict], knobs: Knobs) -> list[str]:
    """The kinds a tune starts from: the variant's findings (worst first), and low parallelism."""
    kinds = list(dict.fromkeys(f["kind"] for f in findings if f.get("kind")))
    if low_parallelism(knobs):
        kinds.append(LOW_PARALLELISM)
    return kinds

