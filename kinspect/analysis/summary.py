"""One record of figures per variant, from which every view is made: the sweep table and its JSON
(kinspect.diff.table), the program table (kinspect.render.program, KernelRow below), the report's
tables and resource cards (kinspect.render.html), bench's asm line, vec-report's JSON.

    rows = kernel_rows(summaries(variants))   # one per kernel, busiest (GPU time, else findings) first

A VariantMetrics is the part of a variant's analysis a table shows (instruction mix, resources and
where their figures came from, code size, JIT time per stage, launches, findings). It is cached per
variant in kinspect's cache, keyed by the record, the stage files' sizes and times, and kinspect's
version, so a second look at a store of hundreds of variants reads one small file per variant;
variants not in the cache are analysed in parallel. Views never compute a figure of their own: two
views showing one variant's registers read the same field.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path

from kinspect.core.model import Variant

SUMMARY_VERSION = 6      # bump when what a summary holds or how it is computed changes
PARALLEL_FROM = 8        # analyse in worker processes from this many uncached variants on


@dataclass(frozen=True)
class FindingRow:
    kind: str
    severity: int
    text: str
    advice: str
    line: int | None = None

    def to_json(self) -> dict:
        """As the sweep's JSON gives it: no line (the variant's own JSON has its verdicts with theirs)."""
        return {"kind": self.kind, "severity": self.severity, "text": self.text, "advice": self.advice}


@dataclass(frozen=True)
class VariantMetrics:
    name: str                   # the variant's folder name (or path) in its store
    kernel: str
    path: str
    target: str
    isa: str
    instructions: int
    vector: int
    matrix: int
    matrix_units: tuple[tuple[str, int], ...]
    registers: int | None
    spills: int | None
    shared_bytes: int | None
    occupancy: float | None
    occupancy_limiter: str
    jit_us: int | None
    startup_us: int
    cache_hit: bool             # the JIT time is a lookup in Triton's on-disk cache, not a compile
    calls: int | None           # launches recorded by capture
    gpu_ms: float | None        # their GPU time, when the capture timed them
    findings: tuple[FindingRow, ...]   # worst first
    constexprs: tuple[tuple[str, str], ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    tuning_calls: int = 0       # launches by autotuners benchmarking it (not in calls)
    tuning_ms: float = 0.0      # their GPU time (not in gpu_ms)
    registers_from: str = ""    # where the register figure came from (cuobjdump, the loaded kernel, ...)
    occupancy_text: str = ""    # the occupancy and what limits it, in words
    code_bytes: int | None = None
    jit_stages: tuple[tuple[str, int], ...] = ()   # JIT µs per stage ("source": building the IR from the AST)
    assumed: tuple[tuple[str, str], ...] = ()   # values kinspect assumed to compile it: (name, spec)

    @property
    def top(self) -> FindingRow | None:
        return max(self.findings, key=lambda f: f.severity, default=None)

    @property
    def key(self) -> tuple[str, str]:
        return self.path, self.name

    def to_json(self) -> dict:
        d = dataclasses.asdict(self)
        d["matrix_units"] = dict(self.matrix_units)
        d["constexprs"], d["options"] = dict(self.constexprs), dict(self.options)
        d["jit_stages"] = dict(self.jit_stages)
        d["assumed"] = dict(self.assumed)
        return d

    @classmethod
    def from_json(cls, d: dict) -> "VariantMetrics":
        return cls(**{**d, "matrix_units": tuple(d["matrix_units"].items()),
                      "constexprs": tuple(d.get("constexprs", {}).items()),
                      "options": tuple(d.get("options", {}).items()),
                      "jit_stages": tuple(d.get("jit_stages", {}).items()),
                      "assumed": tuple(d.get("assumed", {}).items()),
                      "findings": tuple(FindingRow(**f) for f in d["findings"])})

    def figures(self) -> dict:
        """The figures a table row shows, as plain JSON values (bench's `asm` block)."""
        return {"isa": self.isa, "registers": self.registers, "spills": self.spills,
                "shared_bytes": self.shared_bytes, "occupancy": self.occupancy,
                "occupancy_limiter": self.occupancy_limiter, "instructions": self.instructions,
                "vector": self.vector, "matrix": self.matrix, "matrix_units": dict(self.matrix_units),
                "code_bytes": self.code_bytes, "jit_us": self.jit_us, "jit_stages": dict(self.jit_stages),
                "findings": [f.to_json() for f in self.findings]}


def variant_key(v: Variant) -> tuple[str, str]:
    """What names a variant among others: its folder and name (stage files of one folder share the
    folder). VariantMetrics.key gives the same for its variant."""
    return v.path, v.name or Path(v.path).name


def summarize(v: Variant, report=None) -> VariantMetrics:
    """A variant's record from its analysis (made here, skipping the PTX when there is machine code)."""
    from kinspect.analysis import analyse
    from kinspect.analysis.assumed import guesses
    from kinspect.analysis.code_size import code_bytes

    report = report if report is not None else analyse(v, light=True)
    m, r = report.isa, report.resources
    la = v.launches
    found = sorted((x for x in report.verdicts if x.kind), key=lambda x: -x.severity)
    return VariantMetrics(
        name=v.name or Path(v.path).name, kernel=v.kernel, path=v.path, target=str(v.target), isa=report.isa_name,
        instructions=m.instructions if m else 0, vector=m.vector if m else 0,
        matrix=m.matrix_total if m else 0, matrix_units=tuple(sorted(m.matrix.items())) if m else (),
        registers=r.registers, registers_from=r.source, spills=r.spills, shared_bytes=r.shared_bytes,
        occupancy=None if r.occupancy is None else round(r.occupancy.fraction, 4),
        occupancy_limiter=r.occupancy.limiter if r.occupancy else "",
        occupancy_text=r.occupancy.describe() if r.occupancy else "", code_bytes=code_bytes(v),
        jit_us=v.times.total_us if v.times else None, startup_us=v.times.startup_us if v.times else 0,
        jit_stages=(("source", v.times.ir_initialization_us), *v.times.stages) if v.times else (),
        cache_hit=bool(v.cache_hit and v.times),
        calls=la.calls if la else None, gpu_ms=la.gpu.total_ms if la and la.gpu else None,
        tuning_calls=la.tuning_calls if la else 0, tuning_ms=la.tuning_ms if la else 0.0,
        findings=tuple(FindingRow(x.kind, x.severity, x.text, x.what_to_try, x.line) for x in found),
        constexprs=tuple((k, str(x)) for k, x in v.constexprs.items()),
        options=tuple((k, str(v.options[k])) for k in ("num_warps", "num_stages") if k in v.options),
        assumed=tuple((g.name, g.spec) for g in guesses(v)))


# -- the cache ------------------------------------------------------------------------------------

def _key(v: Variant) -> str | None:
    """What the summary depends on: the record as stored, each stage file's size and time, kinspect's
    version. None when the variant has no folder of its own (nothing stable to key on)."""
    from kinspect import __version__
    from kinspect.core.cache import key_of

    if not v.path:
        return None
    parts = [__version__, str(SUMMARY_VERSION), v.path]
    record = Path(v.path, "record.json")
    for p in [record] + [Path(v.path, s.file) for s in v.stages]:
        try:
            st = p.stat()
        except OSError:
            if p is record:
                continue
            return None
        parts.append(f"{p.name}:{st.st_size}:{st.st_mtime_ns}")
    # launches merged from per-process files change the record without changing its stages
    parts.append(repr(v.launches))
    return key_of(*parts)


def _cached(key: str) -> VariantMetrics | None:
    from kinspect.core.cache import cache_dir

    try:
        return VariantMetrics.from_json(json.loads((cache_dir() / "summary" / key[:2] / f"{key}.json").read_text()))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _store(key: str, s: VariantMetrics) -> None:
    from kinspect.core.cache import cache_dir, write_text
    from kinspect.core.errors import KinspectError

    try:
        write_text(cache_dir() / "summary" / key[:2] / f"{key}.json", json.dumps(s.to_json()))
    except KinspectError:
        pass   # an unwritable cache costs time next run, nothing else


def summaries(variants: list[Variant], *, jobs: int | None = None) -> list[VariantMetrics]:
    """The variants' records, in their order: from the cache where it holds them, the rest analysed
    (in `jobs` worker processes when there are many; default one per core) and cached."""
    from kinspect.core.parallel import process_map

    keys = [_key(v) for v in variants]
    out: list[VariantMetrics | None] = [_cached(k) if k else None for k in keys]
    todo = [i for i, s in enumerate(out) if s is None]
    made = process_map(summarize, [variants[i] for i in todo], least=PARALLEL_FROM, jobs=jobs)
    for i, s in zip(todo, made):
        out[i] = s
        if keys[i]:
            _store(keys[i], s)
    return out


def remember(v: Variant, report) -> VariantMetrics:
    """The record of a variant analysed in full elsewhere (a sweep's worker, a report), kept in the cache
    for the next look."""
    made = summarize(v, report)
    key = _key(v)
    if key:
        _store(key, made)
    return made


# -- kernels --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class KernelRow:
    """One kernel of a program: its variants, summed launches and GPU time, and what its busiest
    variant shows."""

    kernel: str
    variants: tuple[VariantMetrics, ...]
    calls: int | None
    gpu_ms: float | None
    share: float | None          # of all the GPU time captured in the rows
    jit_us: int | None           # every variant's JIT time: what a first run pays for this kernel
    busiest: VariantMetrics
    top: FindingRow | None       # the most severe finding among its variants

    @property
    def name(self) -> str:
        return display_name(self.kernel)

    @property
    def jit_cached(self) -> bool:
        """Every variant's JIT time was a cache lookup: the program ran with a warm Triton cache."""
        return all(v.cache_hit for v in self.variants if v.jit_us is not None)

    def to_json(self) -> dict:
        b = self.busiest
        return {"kernel": self.kernel, "name": self.name, "variants": len(self.variants), "calls": self.calls,
                "gpu_ms": self.gpu_ms, "gpu_share": self.share,
                "tuning_calls": sum(v.tuning_calls for v in self.variants),
                "tuning_ms": sum(v.tuning_ms for v in self.variants), "jit_ms": None if self.jit_us is None
                else round(self.jit_us / 1000, 1), "jit_from_cache": self.jit_cached,
                "registers": b.registers, "spills": b.spills, "occupancy": b.occupancy,
                "occupancy_limiter": b.occupancy_limiter or None, "isa": b.isa, "instructions": b.instructions,
                "vector_instructions": b.vector, "matrix_instructions": b.matrix,
                "matrix_by_unit": dict(b.matrix_units), "busiest_variant": b.path,
                "top_finding": None if self.top is None else dataclasses.asdict(self.top),
                "findings": sorted({f.kind for v in self.variants for f in v.findings})}


def kernel_rows(items: list[VariantMetrics]) -> list[KernelRow]:
    """One row per kernel name, ranked: by GPU time when the capture timed launches, else by the
    severity of the worst finding (then launches, then JIT time)."""
    groups: dict[str, list[VariantMetrics]] = {}
    for s in items:
        groups.setdefault(s.kernel, []).append(s)
    total = sum(s.gpu_ms for s in items if s.gpu_ms) or None
    rows = []
    for kernel, vs in groups.items():
        gpu = [s.gpu_ms for s in vs if s.gpu_ms is not None]
        calls = [s.calls for s in vs if s.calls is not None]
        jit = [s.jit_us for s in vs if s.jit_us is not None]
        busiest = max(vs, key=lambda s: (s.gpu_ms or 0, s.calls or 0, -vs.index(s)))
        tops = [s.top for s in vs if s.top is not None]
        gpu_ms = sum(gpu) if gpu else None
        rows.append(KernelRow(kernel=kernel, variants=tuple(vs), calls=sum(calls) if calls else None, gpu_ms=gpu_ms,
                              share=gpu_ms / total if gpu_ms is not None and total else None,
                              jit_us=sum(jit) if jit else None, busiest=busiest,
                              top=max(tops, key=lambda f: f.severity, default=None)))
    timed = any(r.gpu_ms for r in rows)
    return sorted(rows, key=lambda r: ((-(r.gpu_ms or 0),) if timed else ()) +
                  (-(r.top.severity if r.top else 0), -(r.calls or 0), -(r.jit_us or 0), r.kernel))


# Inductor's kernels: triton_<kind>_fused_<ops...>_<n>; the ops are what makes a name long.
INDUCTOR_RE = re.compile(r"^(triton_(?:poi|per|red|tem|for|spl)_(?:fused_)?)(.*?)(_\d+)?$")


def display_name(kernel: str, width: int = 44) -> str:
    """A kernel name cut to `width` where it must be, keeping what tells kernels apart: Inductor's
    prefix and number, and the first ops of its fused list (the full name stays in --json and the
    report's tooltips)."""
    if len(kernel) <= width:
        return kernel
    m = INDUCTOR_RE.match(kernel)
    if m and m[3]:
        head, ops, tail = m[1], m[2], m[3]
        room = width - len(head) - len(tail) - 1
        return head + ops[:max(room, 4)].rstrip("_") + "…" + tail
    return kernel[: width - 9] + "…" + kernel[-8:]
