"""`kinspect diff STORE_A STORE_B`: what changed between two runs of a program, kernel by kernel.

    result = diff_programs("before/", "after/")
    result.changes          # one KernelChange per kernel, most GPU time lost per step first
    result.pair             # the stage diffs of one kernel (the top regression unless --pair names one)
    result.story            # that kernel's change in words

Each run is a kinspect store or a trace (anything kinspect.files.sources reads). Its kernels are
matched with the other run's (kinspect.diff.matching), and each matched pair's figures are compared:
time per call with its spread (p20-p80 of the sampled launches), calls, GPU time per step,
registers, spills, occupancy, instruction mix, shared memory and findings. GPU time per step needs the
number of steps: --steps gives it; otherwise it is the greatest common divisor of the kernels' call
counts (every kernel of a training step is called a whole number of times per step), and the header
says it was guessed so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from kinspect.analysis.summary import VariantMetrics
from kinspect.core.errors import NotFound, UsageError, did_you_mean
from kinspect.core.model import Variant
from kinspect.diff.matching import Unit, UnitMatch, match, units
from kinspect.diff.textdiff import StageDiff

COMPILED = "compiled offline"      # a Run that is one compile (kinspect.diff.tritons), not a program
MIN_SAMPLES = 5          # fewer sampled launches give no spread, and no verdict on the change


@dataclass(frozen=True)
class Run:
    """One side of the diff: where it was read, what it ran with, how many steps its calls stand for."""

    path: str
    kind: str                   # "kinspect store", "trace"
    variants: int
    triton: tuple[str, ...]     # Triton versions in its records (one, unless the store mixes runs)
    torch: str
    device: str
    steps: int
    steps_from: str             # "--steps", or how they were guessed
    gpu_ms: float | None        # every Triton kernel's GPU time, all steps
    other_ms: float | None      # the rest of the GPU work the capture's profiler saw (cuBLAS, copies), all steps
    python: str = ""

    @property
    def step_ms(self) -> float | None:
        return None if self.gpu_ms is None else self.gpu_ms / self.steps



@dataclass(frozen=True)
class UnitTiming:
    """A unit's launches: calls, total GPU time, and the time per call as its sampled launches spread."""

    calls: int | None
    gpu_ms: float | None
    us: float | None            # median per call
    p20_us: float | None
    p80_us: float | None
    samples: int = 0



@dataclass(frozen=True)
class Side:
    unit: Unit
    timing: UnitTiming

    @property
    def figures(self) -> VariantMetrics:
        return self.unit.figures



def scalar(m: VariantMetrics) -> int:
    """Instructions that are neither vector nor matrix instructions."""
    return max(0, m.instructions - m.vector - m.matrix)


# the figures a change compares, as (JSON key, how to read it from a side's VariantMetrics)
FIGURES = (("registers", lambda m: m.registers), ("spills", lambda m: m.spills),
           ("occupancy", lambda m: m.occupancy), ("shared_bytes", lambda m: m.shared_bytes),
           ("instructions", lambda m: m.instructions), ("vector_instructions", lambda m: m.vector),
           ("matrix_instructions", lambda m: m.matrix), ("scalar_instructions", scalar))


@dataclass(frozen=True)
class KernelChange:
    kernel: str                 # as the table names it (B's name when both)
    how: str                    # how A's and B's were matched (kinspect.diff.matching), or "gone" / "new"
    a: Side | None
    b: Side | None
    lost_ms_per_step: float | None      # B's GPU time per step minus A's (a gone kernel: minus A's)
    per_call_change: float | None       # B's time per call / A's - 1
    beyond_spread: bool | None          # the two spreads (p20-p80) do not overlap; None: too few samples
    deltas: dict = field(default_factory=dict)      # figure -> B - A, for the figures that differ
    appeared: tuple[str, ...] = ()      # finding kinds B has and A has not
    vanished: tuple[str, ...] = ()
    config: tuple[str, ...] = ()        # constexprs and options that differ: "XBLOCK 512 -> 1024"

    @property
    def matched(self) -> bool:
        return self.a is not None and self.b is not None

    @property
    def changed(self) -> bool:
        return bool(self.deltas or self.appeared or self.vanished or self.config or not self.matched
                    or self.beyond_spread or "source changed" in self.how or "specialization changed" in self.how)



@dataclass(frozen=True)
class StageStep:
    """One stage of a pair, compared after normalization (kinspect.diff.normalize)."""

    stage: str
    identical: bool
    changed_lines: int          # normalized lines removed + added
    title: str = ""             # as its backend names it (TTGIR, LLVM IR, SASS)


@dataclass(frozen=True)
class PairDiff:
    """The stages of one kernel in both runs: which differ, the first that does, and the diffs shown."""

    kernel: str
    a: Variant
    b: Variant
    stages: tuple[StageStep, ...]
    first: str | None           # the first stage, in compile order, whose normalized text differs
    isa: StageDiff | None       # the machine code's diff
    first_diff: StageDiff | None = None     # the first differing stage's, when it is not the machine code



@dataclass(frozen=True)
class ProgramDiff:
    a: Run
    b: Run
    changes: list[KernelChange]
    pair: PairDiff | None = None
    story: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def timed(self) -> bool:
        return any(c.lost_ms_per_step is not None for c in self.changes)


# -- reading the runs ------------------------------------------------------------------------------

def is_run(path: str | Path) -> bool:
    """A folder or file a program diff reads as one run: a kinspect store holding a captured program
    (launches recorded, or several kernels) or a trace."""
    from kinspect.files import sources, store, traces

    p = Path(path)
    try:
        if p.is_file() or (p.is_dir() and traces.is_trace(p)):
            return traces.is_trace(p)
        if not p.is_dir() or not store.is_store(p) or (p / store.RECORD).is_file():
            return False
        variants = sources.discover(p).variants
    except Exception:        # not readable as a run: the sweep's own reading says why
        return False
    return any(v.launches for v in variants) or len({v.kernel for v in variants}) > 1


def read_run(path: str | Path, steps: int | None) -> tuple[Run, list[Unit], list[str]]:
    from kinspect.analysis.derived import complete
    from kinspect.analysis.summary import summaries
    from kinspect.files import gpu_time, run_info, sources

    listing = sources.readable(sources.discover(Path(path)))
    variants = [complete(v) for v in listing.variants]
    found = units(variants, summaries(variants))
    notes = []
    root = Path(path) if Path(path).is_dir() else None
    info = run_info.read(root) if root is not None else None
    others = gpu_time.read_others(root) if root is not None else None
    device = info.device if info and info.device else ""
    if not device and root is not None:
        from kinspect.files import ceilings

        c = ceilings.read(root)
        device = c.device if c is not None else ""
    calls = [u.metrics[i].calls for u in found for i in range(len(u.metrics)) if u.metrics[i].calls]
    if steps:
        count, how = steps, "--steps"
    elif calls:
        count = math.gcd(*calls)
        how = ("guessed: the greatest common divisor of the kernels' call counts (--steps to set)" if count > 1
               else "not known: the kernels' call counts share no divisor, so figures are per run (--steps to set)")
    else:
        count, how = 1, "no launches recorded"
    gpu = [m.gpu_ms for u in found for m in u.metrics if m.gpu_ms is not None]
    targets = sorted({str(v.target) for v in variants})
    run = Run(path=str(path), kind=listing.kind, variants=len(variants),
              triton=tuple(sorted({v.triton_version for v in variants if v.triton_version})),
              torch=info.torch if info else "", python=info.python if info else "",
              device=device or ("not recorded (" + ", ".join(targets) + ")"),
              steps=count, steps_from=how, gpu_ms=sum(gpu) if gpu else None, other_ms=others.ms if others else None)
    return run, found, notes


def timing(u: Unit) -> UnitTiming:
    from kinspect.bench.stats import quantile
    from kinspect.files.launches import merge_gpu

    calls = [m.calls for m in u.metrics if m.calls is not None]
    gpu = merge_gpu([v.launches.gpu for v in u.variants if v.launches])
    if gpu is None:
        return UnitTiming(calls=sum(calls) if calls else None, gpu_ms=None, us=None, p20_us=None, p80_us=None)
    s = sorted(gpu.samples_ms)
    if s:
        us, p20, p80 = (1e3 * quantile(s, q) for q in (0.5, 0.2, 0.8))
    else:
        us, p20, p80 = 1e3 * gpu.total_ms / gpu.calls, None, None
    return UnitTiming(calls=sum(calls) if calls else gpu.calls, gpu_ms=gpu.total_ms, us=us, p20_us=p20, p80_us=p80,
                  samples=len(s))


# -- comparing -------------------------------------------------------------------------------------

def change(m: UnitMatch, a_steps: int, b_steps: int) -> KernelChange:
    a = Side(m.a, timing(m.a)) if m.a else None
    b = Side(m.b, timing(m.b)) if m.b else None
    per_a = a.timing.gpu_ms / a_steps if a and a.timing.gpu_ms is not None else None
    per_b = b.timing.gpu_ms / b_steps if b and b.timing.gpu_ms is not None else None
    if a and b:
        lost = per_b - per_a if per_a is not None and per_b is not None else None
    else:
        lost = per_b if b else (-per_a if per_a is not None else None)
    if not (a and b):
        return KernelChange(kernel=m.kernel, how=m.how, a=a, b=b, lost_ms_per_step=lost, per_call_change=None,
                            beyond_spread=None)
    ta, tb = a.timing, b.timing
    ratio = tb.us / ta.us - 1 if ta.us and tb.us is not None else None
    beyond = None
    if min(ta.samples, tb.samples) >= MIN_SAMPLES:
        beyond = tb.p20_us > ta.p80_us or tb.p80_us < ta.p20_us
    deltas = {}
    for key, get in FIGURES:
        x, y = get(a.figures), get(b.figures)
        if x is not None and y is not None and x != y:
            deltas[key] = round(y - x, 4) if isinstance(x, float) or isinstance(y, float) else y - x
    kinds_a = {f.kind for f in a.figures.findings}
    kinds_b = {f.kind for f in b.figures.findings}
    return KernelChange(kernel=m.kernel, how=m.how, a=a, b=b, lost_ms_per_step=lost, per_call_change=ratio,
                        beyond_spread=beyond, deltas=deltas, appeared=tuple(sorted(kinds_b - kinds_a)),
                        vanished=tuple(sorted(kinds_a - kinds_b)), config=config_changes(a.unit.variant,
                                                                                       b.unit.variant))


def labelled(changes: list[KernelChange]) -> list[KernelChange]:
    """Each change named by its kernel, with the parts of its specialization that tell it apart from
    the others of that kernel (a hand-written kernel launched with two block sizes is two lines): the
    names a sweep's table gives its variants (kinspect.diff.table.labels)."""
    import dataclasses

    from kinspect.diff.table import labels

    names = labels([(c.b or c.a).unit.variant for c in changes], named=True)
    return [dataclasses.replace(c, kernel=name) for c, name in zip(changes, names)]


def config_changes(a: Variant, b: Variant) -> tuple[str, ...]:
    out = []
    for k in sorted(set(a.constexprs) | set(b.constexprs)):
        x, y = a.constexprs.get(k, "-"), b.constexprs.get(k, "-")
        if x != y:
            out.append(f"{k} {x} → {y}")
    for k in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        x, y = a.options.get(k), b.options.get(k)
        if x != y and not (x is None or y is None):
            out.append(f"{k} {x} → {y}")
    if a.triton_version != b.triton_version and a.triton_version and b.triton_version:
        out.append(f"Triton {a.triton_version} → {b.triton_version}")
    return tuple(out)


def ranked(changes: list[KernelChange]) -> list[KernelChange]:
    """Most GPU time lost per step first (gains last); without times, kernels in both runs that changed
    first (those whose figures moved most first), then the new and gone ones, then the unchanged."""
    def key(c: KernelChange):
        if c.lost_ms_per_step is not None:
            return (0, -c.lost_ms_per_step, c.kernel)
        rank = 2 if not c.changed else 0 if c.matched else 1
        return (1, rank, -sum(abs(v) for v in c.deltas.values()), c.kernel)
    return sorted(changes, key=key)


def top_regression(changes: list[KernelChange]) -> KernelChange | None:
    """The kernel a diff explains when none is named: the matched kernel losing the most time (beyond
    its spread where the spread is known), else the first changed matched kernel."""
    matched = [c for c in changes if c.matched]
    slower = [c for c in matched if (c.lost_ms_per_step or 0) > 0 and c.beyond_spread is not False]
    return (slower or [c for c in matched if c.changed] or matched or [None])[0]


def find_change(word: str, changes: list[KernelChange]) -> KernelChange:
    """--pair KERNEL: a kernel's name as the table shows it, or a part of it that names one kernel."""
    exact = [c for c in changes if word in (c.kernel, c.a and c.a.unit.kernel, c.b and c.b.unit.kernel)]
    found = exact or [c for c in changes if word.lower() in c.kernel.lower()]
    names = [c.kernel for c in changes]
    if not found:
        raise NotFound(f"--pair: no kernel '{word}' in either run{did_you_mean(word, names)}")
    if len(found) > 1 and not exact:
        raise UsageError(f"--pair: '{word}' names {len(found)} kernels: " + ", ".join(c.kernel for c in found[:5]))
    c = found[0]
    if not c.matched:
        raise UsageError(f"--pair: '{c.kernel}' is only in run {'A' if c.a else 'B'} ({c.how}); name a kernel "
                         f"both runs have")
    return c


# -- the stages of one pair ------------------------------------------------------------------------

def stage_steps(a: Variant, b: Variant) -> tuple[list[StageStep], dict]:
    """Each text stage both variants have, in compile order, compared after normalization; and the
    normalized texts (stage -> (a_raw, b_raw, a_norm, b_norm)) for the diffs shown."""
    from kinspect.analysis.stages import open_lines, text_stages
    from kinspect.diff.normalize import normalize
    from kinspect.diff.textdiff import changed_lines

    from kinspect import backends

    steps, texts = [], {}
    names = (a.kernel, b.kernel)
    backend = backends.of(a)
    for s in text_stages(a):
        t = b.stage(s.name)
        if t is None or t.binary or t.dialect != s.dialect:
            continue
        raw = []
        for v, st in ((a, s), (b, t)):
            with open_lines(v, st) as lines:
                raw.append(list(lines))
        na, nb = normalize(raw[0], s.dialect, names=names), normalize(raw[1], t.dialect, names=names)
        same = na.lines == nb.lines
        steps.append(StageStep(s.name, same, 0 if same else changed_lines(na.lines, nb.lines),
                               title=backend.stage_kind(s.name).title or s.name))
        texts[s.name] = (raw[0], raw[1], na, nb)
    return steps, texts


def pair_diff(c: KernelChange) -> PairDiff:
    from kinspect.analysis.stages import isa_stage
    from kinspect.diff.textdiff import diff_stage

    a, b = c.a.unit.variant, c.b.unit.variant
    steps, texts = stage_steps(a, b)
    first = next((s.stage for s in steps if not s.identical), None)
    isa = isa_stage(a)
    isa_name = isa.name if isa is not None and isa.name in texts else None
    isa_diff = diff_stage(isa_name, *texts[isa_name]) if isa_name else None
    first_diff = diff_stage(first, *texts[first]) if first and first != isa_name else None
    return PairDiff(kernel=c.kernel, a=a, b=b, stages=tuple(steps), first=first, isa=isa_diff, first_diff=first_diff)


# -- the command -----------------------------------------------------------------------------------

def diff_programs(a_path: str | Path, b_path: str | Path, *, steps: tuple[int | None, int | None] = (None, None),
                  pair: str | None = None, text: bool = True) -> ProgramDiff:
    from kinspect.diff.story import story

    run_a, units_a, notes_a = read_run(a_path, steps[0])
    run_b, units_b, notes_b = read_run(b_path, steps[1])
    changes = ranked(labelled([change(m, run_a.steps, run_b.steps) for m in match(units_a, units_b)]))
    notes = notes_a + notes_b
    if run_a.steps != run_b.steps and "--steps" not in (run_a.steps_from, run_b.steps_from):
        notes.append(f"the runs' call counts give different step counts ({run_a.steps} and {run_b.steps}): if they "
                     f"ran the same steps, say how many with --steps N")
    chosen = find_change(pair, changes) if pair else top_regression(changes)
    pd = pair_diff(chosen) if chosen is not None and text else None
    return ProgramDiff(a=run_a, b=run_b, changes=changes, pair=pd,
                       story=story(chosen, pd, run_a, run_b) if chosen is not None else "", notes=notes)


def compare_variants(a_path: Path, b_path: Path, *, a_run: tuple[str, dict], b_run: tuple[str, dict],
                     text: bool = True) -> ProgramDiff:
    """Two variants of one kernel compiled by two interpreters (kinspect.diff.tritons), compared as one
    kernel of two runs: `*_run` is (interpreter, what it answered: its Triton, torch and Python)."""
    from kinspect.analysis.derived import complete
    from kinspect.analysis.summary import summaries
    from kinspect.files.store import read_record

    variants = [complete(read_record(p)) for p in (a_path, b_path)]
    found = [units([v], summaries([v]))[0] for v in variants]
    runs = [Run(path=python, kind=COMPILED, variants=1, triton=(d["triton"],),
                torch=d.get("torch", ""), python=d.get("python", ""), device=f"offline ({v.target})", steps=1,
                steps_from="one compile", gpu_ms=None, other_ms=None)
            for (python, d), v in ((a_run, variants[0]), (b_run, variants[1]))]
    c = labelled([change(UnitMatch(found[0], found[1], f"the same variant, Triton {d_a(a_run)} → {d_a(b_run)}"),
                         1, 1)])[0]
    pd = pair_diff(c) if text else None
    from kinspect.diff.story import story

    return ProgramDiff(a=runs[0], b=runs[1], changes=[c], pair=pd, story=story(c, pd, runs[0], runs[1]))


def d_a(run: tuple[str, dict]) -> str:
    return run[1].get("triton", "")
