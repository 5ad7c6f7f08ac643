"""Every command's `--json`, made here and only here, from the records the other views read.

    text = dumps(vec_report(reports))     # the JSON of a command, as it prints it
    COMMANDS["vec-report"]                # the records its JSON is made of: their schema (kinspect schema)

Each output is a frozen dataclass below; its JSON is kinspect.core.records.to_json of it and its JSON
Schema is kinspect.core.records.schema of the same class, so the two cannot disagree. A figure has one
name in every command (the `Figures` every variant carries: `vector_instructions`, `occupancy` as a
fraction, `jit_ms`); docs/json.md lists the names and what changed from earlier kinspect versions.
Every output object carries `kinspect_json` (VERSION), raised when a key changes name or shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kinspect.core.records import doc, flat, schema, to_json
from kinspect.files.counters import Counters   # as kept beside the variant (counters.json)
from kinspect.tune.result import Baseline, TrialCode      # a candidate's code's figures, the original on its GPU

VERSION = 1
VERSION_DOC = "the version of kinspect's JSON shapes (docs/json.md); raised when a key changes name or shape"


def _version() -> Any:
    return field(default=VERSION, metadata={"doc": VERSION_DOC, "const": VERSION})


# -- the figures every variant carries ---------------------------------------------------------------

@dataclass(frozen=True)
class Finding:
    """A finding: what may cost time in the compiled code, and what to try."""

    kind: str
    severity: int = doc("1 (note) to 3 (worst)")
    text: str
    advice: str
    line: int | None = doc("the kernel's source line it points at")


@dataclass(frozen=True)
class Figures:
    """The figures of a variant's machine code; one name each in every command's JSON."""

    isa: str = doc("the dialect of its machine code (sass, amdgcn, riscv, x86, ...); none without one")
    instructions: int
    vector_instructions: int
    matrix_instructions: int
    matrix_by_unit: dict[str, int]
    registers: int | None
    spills: int | None
    shared_bytes: int | None
    occupancy: float | None = doc("the fraction of the device's warps per SM (or CU) the kernel can keep active")
    occupancy_limiter: str | None = doc("what limits the occupancy: registers, shared memory, warps, ...")


def _figures(m) -> Figures:
    """From a kinspect.analysis.summary.VariantMetrics."""
    return Figures(isa=m.isa, instructions=m.instructions, vector_instructions=m.vector, matrix_instructions=m.matrix,
                   matrix_by_unit=dict(m.matrix_units), registers=m.registers, spills=m.spills,
                   shared_bytes=m.shared_bytes, occupancy=m.occupancy, occupancy_limiter=m.occupancy_limiter or None)


def _findings(m) -> list[Finding]:
    return [Finding(kind=f.kind, severity=f.severity, text=f.text, advice=f.advice, line=f.line) for f in m.findings]


@dataclass(frozen=True)
class Compile:
    """What compiling a variant made and cost."""

    code_bytes: int | None = doc("the size of its machine code")
    jit_ms: float | None = doc("the JIT's time for it, every stage")
    jit_ms_by_stage: dict[str, float] = doc("the JIT's time per stage (source: building the IR from the AST)")


def _compile(m) -> Compile:
    return Compile(code_bytes=m.code_bytes, jit_ms=_ms(m.jit_us),
                   jit_ms_by_stage={k: round(us / 1000, 1) for k, us in m.jit_stages})


def _ms(us: int | None) -> float | None:
    return None if us is None else round(us / 1000, 1)


# -- vec-report -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class VerdictJson:
    text: str
    level: str
    line: int | None
    file: str | None


@dataclass(frozen=True)
class IsaStage:
    """Which stage is the machine code, and what made it when kinspect did."""

    name: str
    derived_by: str | None
    instead_of_machine_code: str | None = doc("why a virtual ISA (PTX) is analysed in place of the machine code",
                                              default=None)


@dataclass(frozen=True)
class PerLine:
    """What one source line produced in each stage: its instructions in total and by kind."""

    file: str
    line: int
    stages: dict[str, dict[str, Any]] = doc("stage -> {total, a count per kind, matrix_by_unit, load_widths}")


@dataclass(frozen=True)
class AssumedJson:
    """A value kinspect assumed to compile the variant (no launch of the file gave it)."""

    name: str = doc("the kernel's parameter, or wrapper:input for a wrapper's input (made up, or read from a test)")
    spec: str = doc("as --arg / -p spell it: *fp32, i32:1024, 64")
    why: str
    kind: str = doc("pointer, pow2, int, float, input (a wrapper's made-up input), tested (one read from the "
                    "project's test), ...; empty when the record did not say")


@dataclass(frozen=True)
class VariantJson:
    """One variant's figures and verdicts (vec-report)."""

    kinspect_json: int = _version()
    variant: str = ""
    kernel: str = ""
    target: str = ""
    path: str = ""
    backend: str = ""
    isa_stage: IsaStage | None = None
    retarget: str | None = doc("the CPU its LLVM IR was compiled for by --retarget", default=None)
    retargeted_from: str | None = None
    figures: Figures = flat(default=None)
    occupancy_active_warps: int | None = None
    occupancy_max_warps: int | None = None
    registers_from: str = doc("where the register figure came from", default="")
    scalar_fp_instructions: int = 0
    spill_instructions: int = 0
    load_widths: dict[str, int] = doc("bits per load -> loads", default_factory=dict)
    store_widths: dict[str, int] = field(default_factory=dict)
    reductions: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, int] = doc("instruction kind -> instructions", default_factory=dict)
    mnemonics: dict[str, int] = field(default_factory=dict)
    other_mnemonics: int = 0
    verdicts: list[VerdictJson] = field(default_factory=list)
    assumed: list[AssumedJson] = doc("the values kinspect assumed to compile it (verdicts that rest on one say so)",
                                     default_factory=list)
    per_line: list[PerLine] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    launches: dict | None = doc("what a captured program launched it with (grids, shapes, dtypes, strides), as "
                                "record.json keeps it", default=None)


def _assumed(v) -> list[AssumedJson]:
    from kinspect.analysis.assumed import guesses

    return [AssumedJson(name=g.name, spec=g.spec, why=g.why, kind=g.kind) for g in guesses(v)]


def variant_json(report) -> VariantJson:
    """From a kinspect.analysis.VariantReport."""
    v, m, r = report.variant, report.isa, report.resources
    occ = r.occupancy
    s = v.stage(m.stage) if m else None
    return VariantJson(
        variant=v.name or v.kernel, kernel=v.kernel, target=str(v.target), path=v.path,
        backend=v.backend or v.target.backend,
        isa_stage=None if m is None else IsaStage(name=m.stage, derived_by=s.derived_by if s else None,
                                                  instead_of_machine_code=report.instead or None),
        retarget=v.retarget.spec if v.retarget else None, retargeted_from=v.retarget.source if v.retarget else None,
        figures=Figures(isa=report.isa_name, instructions=m.instructions if m else 0,
                        vector_instructions=m.vector if m else 0, matrix_instructions=m.matrix_total if m else 0,
                        matrix_by_unit=dict(m.matrix) if m else {}, registers=r.registers, spills=r.spills,
                        shared_bytes=r.shared_bytes, occupancy=None if occ is None else round(occ.fraction, 4),
                        occupancy_limiter=occ.limiter if occ else None),
        occupancy_active_warps=occ.active_warps if occ else None, occupancy_max_warps=occ.max_warps if occ else None,
        registers_from=r.source, scalar_fp_instructions=m.scalar_fp if m else 0,
        spill_instructions=(m.spill_loads + m.spill_stores) if m else 0,
        load_widths={str(k): n for k, n in sorted(m.load_widths.items())} if m else {},
        store_widths={str(k): n for k, n in sorted(m.store_widths.items())} if m else {},
        reductions=dict(m.reductions) if m else {}, kinds=dict(m.kinds) if m else {},
        mnemonics=dict(m.mnemonics.most_common()) if m else {}, other_mnemonics=m.other if m else 0,
        verdicts=[VerdictJson(text=x.text, level=x.level, line=x.line, file=x.file) for x in report.verdicts],
        assumed=_assumed(v),
        per_line=_per_line(report), problems=list(report.problems), notes=list(v.notes),
        launches=_launches(v))


def _launches(v) -> dict | None:
    import dataclasses

    return dataclasses.asdict(v.launches) if v.launches else None


def _per_line(report) -> list[PerLine]:
    rows: dict[tuple, PerLine] = {}
    for name, m in report.stages.items():
        for (file, line), ls in m.lines.items():
            row = rows.setdefault((file, line), PerLine(file=file, line=line, stages={}))
            row.stages[name] = {"total": ls.total, **dict(ls.kinds),
                                **({"matrix_by_unit": dict(ls.matrix)} if ls.matrix else {}),
                                **({"load_widths": {str(k): n for k, n in ls.load_widths.items()}}
                                   if ls.load_widths else {})}
    return [rows[k] for k in sorted(rows, key=lambda k: (k[0], k[1]))]


def vec_report(reports) -> list[VariantJson]:
    return [variant_json(r) for r in reports]


# -- the program view (vec-report of several kernels) -----------------------------------------------

@dataclass(frozen=True)
class SpeedJson:
    """A kernel's speed of light: its bytes and FLOPs against the device's ceilings."""

    bytes_per_call: float | None
    bytes_method: str | None
    bytes_method_means: str | None
    bytes_upper_bound: bool
    flops_per_call: float | None
    gb_per_s: float | None
    pct_of_bandwidth: float | None = doc("of the device's measured copy bandwidth (or its L2's: bandwidth_ceiling)")
    bandwidth_ceiling: str | None = doc("what pct_of_bandwidth and the memory ideal are against: DRAM, L2 (inputs "
                                        "just written by the kernel before) or L2 and DRAM", default=None)
    tflop_per_s: float | None = None
    pct_of_peak: float | None = doc("of the device's measured matmul peak for the dtype", default=None)
    ideal_ms: float | None = None
    headroom_ms: float | None = doc("GPU time minus the ideal time: what fixing the kernel could win at most",
                                    default=None)
    bound_by: str | None = doc("memory, compute or launch: which ceiling gives the ideal time", default=None)
    speed_notes: list[str] = field(default_factory=list)
    pct_of_bandwidth_of: str | None = doc("the datasheet figure pct_of_bandwidth is a share of, where no copy "
                                          "bandwidth was measured", default=None)


def _round(x: float | None, digits: int) -> float | None:
    return None if x is None else round(x, digits)


def speed_json(s) -> SpeedJson:
    """From a kinspect.analysis.sol.Speed."""
    from kinspect.analysis.traffic import method_text

    s = s.rounded()
    return SpeedJson(bytes_per_call=s.bytes_per_call, bytes_method=s.bytes_method or None,
                     bytes_method_means=method_text(s.bytes_method) or None, bytes_upper_bound=s.upper_bound,
                     flops_per_call=s.flops_per_call, gb_per_s=s.gb_per_s, pct_of_bandwidth=s.pct_of_bandwidth,
                     bandwidth_ceiling=s.bandwidth_ceiling or None, tflop_per_s=s.tflop_per_s,
                     pct_of_peak=s.pct_of_peak, ideal_ms=s.ideal_ms,
                     headroom_ms=s.headroom_ms, bound_by=s.bound_by or None, speed_notes=list(s.notes),
                     pct_of_bandwidth_of=s.bandwidth_of or None)


@dataclass(frozen=True)
class ProvenanceJson:
    """Where a kernel came from."""

    status: str = doc("own source, recorded or not recorded")
    why: str | None
    fix: str | None
    origin: dict | None = doc("Inductor's origin of the kernel: its graph, ATen ops and call sites")
    short: str | None
    lines: list[str]
    note: str | None


def _provenance(p) -> ProvenanceJson | None:
    if p is None:
        return None
    return ProvenanceJson(status=p.status, why=p.why or None, fix=p.fix or None,
                          origin=p.origin.to_json() if p.origin is not None else None, short=p.short or None,
                          lines=list(p.lines), note=p.note or None)


@dataclass(frozen=True)
class PairingJson:
    """A finding beside the counter that speaks to it."""

    kind: str
    finding: str
    verdict: str = doc("confirms, contradicts or not measured")
    measured: str
    demoted: bool


@dataclass(frozen=True)
class Estimate:
    bytes: float | None
    method: str


@dataclass(frozen=True)
class CountersJson:
    """What Nsight Compute measured for the kernel's busiest variant (vec-report --counters)."""

    measured: Counters = flat()
    dram_bytes: float | None
    l1_over_dram: float | None
    estimate: Estimate | None = doc("kinspect's estimate of the bytes per call, to compare")
    figures: list[str]
    findings: list[PairingJson]


def _counters(c) -> CountersJson | None:
    if c is None:
        return None
    m = c.measured
    return CountersJson(measured=m, dram_bytes=m.dram_bytes, l1_over_dram=m.l1_over_dram,
                        estimate=None if c.estimate_bytes is None else Estimate(bytes=c.estimate_bytes,
                                                                                method=c.estimate_method),
                        figures=list(c.figures),
                        findings=[PairingJson(kind=p.kind, finding=p.finding, verdict=p.verdict, measured=p.text,
                                              demoted=p.demoted) for p in c.pairs])


@dataclass(frozen=True)
class CallSiteJson:
    """A line of the user's code that launched the kernel, with its launches and their GPU time."""

    site: str | None = doc("file:line (function) as shown; null for launches past the signatures kept")
    file: str | None
    line: int | None
    calls: int
    gpu_ms: float | None
    gpu_ms_estimated: bool = doc("a variant's time split by calls where it had several call sites")


@dataclass(frozen=True)
class KernelRanksJson:
    """A kernel's launches and GPU time on each rank of a distributed program."""

    gpu_ms_by_rank: dict[str, float]
    calls_by_rank: dict[str, int]
    slowest_rank: int | None
    rank_spread: float | None = doc("the slowest rank's GPU time over the fastest's, minus 1")


@dataclass(frozen=True)
class VariantWhyJson:
    """Why a kernel has this variant: what the JIT specialized differently in it."""

    variant: str
    differs: list[str] = doc("what sets it apart from the kernel's other variants")
    compiled_while_running: bool = doc("compiled after another variant of the kernel had launched")
    trigger: str | None = doc("its first launch's arguments that differ from the earlier variant's")


def _why(w) -> VariantWhyJson:
    return VariantWhyJson(variant=w.name, differs=list(w.differs), compiled_while_running=w.while_running,
                          trigger=w.trigger or None)


def _site(s) -> CallSiteJson:
    return CallSiteJson(site=s.site.describe() if s.site is not None else None,
                        file=s.site.file if s.site is not None else None,
                        line=s.site.line if s.site is not None else None,
                        calls=s.calls, gpu_ms=_round(s.gpu_ms, 4), gpu_ms_estimated=s.estimated)


def _kernel_ranks(k) -> KernelRanksJson | None:
    if k is None:
        return None
    slow = k.slowest
    return KernelRanksJson(gpu_ms_by_rank={str(r): round(ms, 4) for r, ms in sorted(k.gpu_ms.items())},
                           calls_by_rank={str(r): n for r, n in sorted(k.calls.items())},
                           slowest_rank=None if slow is None else slow[0], rank_spread=_round(k.spread, 4))


@dataclass(frozen=True)
class Kernel:
    """One kernel of a program: its variants summed, the figures of its busiest variant, its speed of
    light, where it came from and its counters."""

    kernel: str
    name: str = doc("the kernel's name as the table shows it (cut where long)")
    variants: int
    calls: int | None
    gpu_ms: float | None
    gpu_share: float | None = doc("of all the GPU time captured in the kernels")
    tuning_calls: int = doc("launches by autotuners benchmarking configs (not in calls)")
    tuning_ms: float
    jit_ms: float | None
    cache_hit: bool = doc("every variant's JIT time was a lookup in Triton's on-disk cache")
    figures: Figures = flat()
    busiest_variant: str
    top_finding: Finding | None
    finding_kinds: list[str] = doc("the kinds of finding among all its variants")
    speed: SpeedJson = flat()
    provenance: ProvenanceJson | None
    counters: CountersJson | None
    counters_failed: str | None = doc("why --counters measured nothing for it")
    call_sites: list[CallSiteJson] = doc("the user's lines that launched it, most GPU time first ([] where none was "
                                         "recorded)")
    ranks: KernelRanksJson | None = doc("its GPU time per rank (a program captured on several ranks)")
    variants_explained: list[VariantWhyJson] = doc("with several variants: what the JIT specialized differently in "
                                                   "each")


def kernel_json(k) -> Kernel:
    """From a kinspect.analysis.explain.KernelView."""
    r = k.row
    b = r.busiest
    top = r.top
    return Kernel(kernel=r.kernel, name=r.name, variants=len(r.variants), calls=r.calls, gpu_ms=r.gpu_ms,
                  gpu_share=r.share, tuning_calls=sum(v.tuning_calls for v in r.variants),
                  tuning_ms=sum(v.tuning_ms for v in r.variants), jit_ms=_ms(r.jit_us), cache_hit=r.jit_cached,
                  figures=_figures(b), busiest_variant=b.path,
                  top_finding=None if top is None else Finding(kind=top.kind, severity=top.severity, text=top.text,
                                                               advice=top.advice, line=top.line),
                  finding_kinds=sorted({f.kind for v in r.variants for f in v.findings}), speed=speed_json(k.speed),
                  provenance=_provenance(k.provenance), counters=_counters(k.counters),
                  counters_failed=k.counters_failed or None, call_sites=[_site(s) for s in k.call_sites],
                  ranks=_kernel_ranks(k.ranks), variants_explained=[_why(w) for w in k.variants_explained])


@dataclass(frozen=True)
class OtherKernel:
    name: str
    calls: int
    ms: float


@dataclass(frozen=True)
class RankSpreadJson:
    """What differs between the ranks of a distributed program."""

    ranks: list[int]
    gpu_ms_by_rank: dict[str, float] = doc("each rank's Triton kernels' GPU time")
    slowest_rank: int | None
    launched_on_some_ranks_only: dict[str, list[int]] = doc("kernel -> the ranks that launched it")
    configured_differently: dict[str, dict[str, str]] = doc("kernel -> rank -> the config its autotuner chose")
    notes: list[str]


def _rank_spread(r) -> RankSpreadJson | None:
    if r is None:
        return None
    slow = r.slowest
    return RankSpreadJson(ranks=list(r.ranks),
                          gpu_ms_by_rank={str(k): round(ms, 4) for k, ms in sorted(r.gpu_ms.items())},
                          slowest_rank=None if slow is None else slow[0],
                          launched_on_some_ranks_only={k: list(rs) for k, rs in r.only_on.items()},
                          configured_differently={k: {str(n): c for n, c in sorted(by.items())}
                                                  for k, by in r.configured.items()}, notes=list(r.notes()))


@dataclass(frozen=True)
class SpeedOfLight:
    """The program against the device's ceilings."""

    gpu_ms: float
    ideal_ms: float | None
    headroom_ms: float | None
    gpu_ms_with_ideal: float = doc("GPU time of the kernels with an ideal time")
    ceilings: dict | None = doc("the device's measured copy bandwidth and matmul peaks, and where they come from")
    ceilings_note: str
    launch_floor_us: float | None
    launch_floor_note: str
    ranked_by_headroom: list[str]
    triton_share_of_gpu_time: float | None
    largest_other_kernels: list[OtherKernel] | None = doc("the largest GPU work no launch hook saw, communication "
                                                          "and autotuners' benchmarks apart")
    share_window: str | None
    communication_kernels: list[OtherKernel] | None = doc("NCCL's kernels among the other GPU work")
    tuning_gpu_ms: float | None = doc("GPU time inside autotuners' benchmarks: Triton's launches and the other "
                                      "kernels (L2 flushes)")
    tuning_other_kernels: list[OtherKernel] | None = doc("the other kernels launched inside autotuners' benchmarks")
    ranks: RankSpreadJson | None
    compiled_while_running: dict[str, list[VariantWhyJson]] = doc("kernel -> its variants compiled after another of "
                                                                  "it had launched")


def sol_json(sol) -> SpeedOfLight | None:
    """From a kinspect.analysis.sol.ProgramSol."""
    if sol is None:
        return None
    from kinspect.analysis.sol import by_headroom

    c, t, o, share = sol.ceilings, sol.total, sol.others, sol.triton_share
    shared = share is not None
    comm = o.communication if shared else {}
    tuning = o is not None and bool(o.tuning)

    def others(kernels: dict) -> list[OtherKernel]:
        return [OtherKernel(name=n, calls=k["calls"], ms=k["ms"]) for n, k in kernels.items()][:5]

    return SpeedOfLight(
        gpu_ms=round(t.gpu_ms, 4), ideal_ms=_round(t.ideal_ms, 4), headroom_ms=_round(t.headroom_ms, 4),
        gpu_ms_with_ideal=round(t.covered_ms, 4),
        ceilings=None if c is None else {**c.to_json(), "source": c.source}, ceilings_note=sol.ceilings_note,
        launch_floor_us=sol.floor_us, launch_floor_note=sol.floor_note, ranked_by_headroom=by_headroom(sol.speeds),
        triton_share_of_gpu_time=round(share, 4) if shared else None,
        largest_other_kernels=others({n: k for n, k in o.kernels.items() if n not in comm}) if shared else None,
        share_window=(o.window or None) if shared else None,
        communication_kernels=others(comm) if shared else None,
        tuning_gpu_ms=round(sol.tuning_ms + o.tuning_ms, 4) if tuning else
        (round(sol.tuning_ms, 4) if sol.tuning_ms else None),
        tuning_other_kernels=others(o.tuning) if tuning else None, ranks=_rank_spread(sol.ranks),
        compiled_while_running={k: [_why(w) for w in ws if w.while_running] for k, ws in sol.variants.items()
                                if any(w.while_running for w in ws)})


# -- tune -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CandidateJson:
    """A config a tune tried."""

    constexprs: dict[str, int]
    num_warps: int
    num_stages: int
    why: str = doc("the finding kind or step that proposed it")
    origin: str = doc("original, kinspect, inductor, max_autotune or autotune")


@dataclass(frozen=True)
class TuneSummary:
    """A tune in one row of the tune table: the winner against what the program ran and the autotuners' picks."""

    kernel: str
    original_us: float | None
    winner: str | None
    winner_us: float | None
    kinspect_trials: int
    kinspect_trials_to_match: int | None = doc("kinspect's trials until one was as fast as max_autotune's pick")
    match: str | None
    max_autotune: str | None
    max_autotune_us: float | None
    max_autotune_trials: int
    autotune: str | None
    autotune_us: float | None
    autotune_trials: int
    speedup: str | None
    vs_max_autotune: str | None
    reason: str


@dataclass(frozen=True)
class TrialJson:
    candidate: CandidateJson
    status: str = doc("timed, pruned, failed or wrong")
    why: str
    grid: list[int]
    median_ms: float | None
    p20_ms: float | None
    p80_ms: float | None
    runs: int
    code: TrialCode
    finding_kinds: list[str]
    gpu: str | None = doc("the GPU that ran it, where the tune ran on several", default=None)
    baseline: Baseline | None = doc("the original config timed on that GPU, where another GPU timed the original",
                                    default=None)


@dataclass(frozen=True)
class Tune:
    """A kernel's tune: every candidate with what became of it, and the summary of its outcome; or the
    error that kept it from being tuned."""

    kinspect_json: int = _version()
    kernel: str = ""
    error: str | None = doc("why the kernel was not tuned (the rest is then empty)", default=None)
    variant: str | None = None
    target: str | None = None
    finding_kinds: list[str] = doc("the finding kinds the tune started from", default_factory=list)
    trials: list[TrialJson] = field(default_factory=list)
    seconds: float | None = None
    budget: str | None = None
    notes: list[str] = field(default_factory=list)
    torch: str | None = doc("the torch whose Inductor heuristics gave its and max_autotune's configs", default=None)
    summary: TuneSummary | None = None


def tune_json(t) -> Tune:
    """From a kinspect.tune.outcome.Tuned."""
    if t.result is None:
        return Tune(kernel=t.kernel, error=t.error)
    from kinspect.render.tune import table_row

    r = t.result
    return Tune(kernel=r.kernel, variant=r.variant, target=r.target, finding_kinds=list(r.findings),
                trials=[_trial(x) for x in r.trials], seconds=round(r.seconds, 2), budget=r.budget,
                notes=list(r.notes), torch=r.torch, summary=TuneSummary(**table_row(r, t.outcome)))


def _trial(t) -> TrialJson:
    c = t.candidate
    return TrialJson(candidate=CandidateJson(constexprs=dict(c.constexprs), num_warps=c.num_warps,
                                             num_stages=c.num_stages, why=c.why, origin=c.origin),
                     status=t.status, why=t.why, grid=list(t.grid),
                     median_ms=t.median_ms, p20_ms=t.p20_ms, p80_ms=t.p80_ms, runs=t.runs, code=t.code,
                     finding_kinds=list(t.findings), gpu=t.gpu or None, baseline=t.baseline)


@dataclass(frozen=True)
class Program:
    """A captured program (vec-report of several kernels): a row per kernel, ranked, and the details of
    the chosen kernels' busiest variants."""

    kinspect_json: int = _version()
    where: str = doc("what was read: a store, a cache, N inputs", default="")
    kernels: list[Kernel] = field(default_factory=list)
    variants: list[VariantJson] = field(default_factory=list)
    speed_of_light: SpeedOfLight | None = None
    tune: list[Tune] | None = doc("with --tune: the tunes, most headroom first", default=None)


def program(view, tunes=None) -> Program:
    """From a kinspect.analysis.program_view.ProgramView, with the tunes of vec-report --tune."""
    return Program(where=view.where, kernels=[kernel_json(k) for k in view.kernels],
                   variants=[variant_json(d) for d in view.details], speed_of_light=sol_json(view.sol),
                   tune=None if tunes is None else [tune_json(t) for t in tunes])


# -- diff -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RuntimeJson:
    """A variant's measured runtime on the device, and what it achieves."""

    median_ms: float
    p20_ms: float
    p80_ms: float
    cv: float
    runs: int
    gb_per_s: float | None
    tflop_per_s: float | None
    pct_of_bandwidth: float | None = doc("of what roofline_of names (the device's measured copy bandwidth)")
    roofline_of: str = ""
    method: str = ""
    copy_gbps: float | None = None
    peak_tflops: float | None = None
    gpu: str = doc("the GPU that timed it, where a sweep timed on several: index, model, host", default="")
    vs_baseline: float | None = doc("its median over the first row's timed on the same GPU, where a sweep "
                                    "timed on several", default=None)


def _runtime(r) -> RuntimeJson | None:
    if r is None:
        return None
    return RuntimeJson(median_ms=r.median_ms, p20_ms=r.p20_ms, p80_ms=r.p80_ms, cv=r.cv, runs=r.runs, gb_per_s=r.gbps,
                       tflop_per_s=r.tflops, pct_of_bandwidth=r.roofline_pct, roofline_of=r.roofline_of,
                       method=r.method, copy_gbps=r.copy_gbps, peak_tflops=r.peak_tflops, gpu=r.gpu,
                       vs_baseline=r.vs_baseline)


@dataclass(frozen=True)
class RowJson:
    """One variant of a sweep or of saved variants."""

    label: str = doc("what tells it apart from the others: BLOCK_SIZE=64 w=8, cuda:80, ...")
    variant: str
    kernel: str
    path: str
    target: str
    constexprs: dict[str, Any]
    config: int | None = doc("the autotune config a user kernel's variant was compiled with")
    num_warps: int | None
    num_stages: int | None
    figures: Figures = flat()
    compile: Compile = flat()
    cache_hit: bool | None
    runtime: RuntimeJson | None
    findings: list[Finding]
    assumed: list[AssumedJson] = doc("the values kinspect assumed to compile it")


def row_json(row) -> RowJson:
    """From a kinspect.diff.table.Row."""
    from kinspect.diff.table import config_index

    v, m = row.variant, row.metrics
    return RowJson(label=row.label, variant=v.name or v.kernel, kernel=v.kernel, path=v.path, target=str(v.target),
                   constexprs=v.constexprs, config=config_index(v), num_warps=v.num_warps,
                   num_stages=v.num_stages, figures=_figures(m), compile=_compile(m),
                   cache_hit=v.cache_hit if v.times else None, runtime=_runtime(row.runtime), findings=_findings(m),
                   assumed=_assumed(v))


@dataclass(frozen=True)
class RunJson:
    tag: str
    lines: list[str]
    repeat: int


@dataclass(frozen=True)
class HunkJson:
    a_start: int
    a_count: int
    b_start: int
    b_count: int
    runs: list[RunJson]


@dataclass(frozen=True)
class StageHunks:
    """A stage's normalized diff: its figures and hunks."""

    stage: str
    a_lines: int
    b_lines: int
    raw_changed_lines: int
    normalized_changed_lines: int
    shown_changed_lines: int
    hunks: list[HunkJson]


@dataclass(frozen=True)
class StageDiffJson:
    """The normalized diff of one stage of two variants: the two, their files, and the diff's figures
    and hunks (StageHunks, in the same object)."""

    diff: StageHunks = flat()
    a: str = ""
    b: str = ""
    a_file: str = ""
    b_file: str = ""


@dataclass(frozen=True)
class Failed:
    job: str
    error: str


@dataclass(frozen=True)
class LinkJson:
    spearman_rho: dict[str, float]
    variants: int
    text: str


@dataclass(frozen=True)
class SweepRun:
    jobs: int
    workers: int
    cores: int
    seconds: float


@dataclass(frozen=True)
class Diff:
    """A sweep (or saved variants): a row per variant, the diff of one stage of two of them, and what
    moved with the runtime."""

    kinspect_json: int = _version()
    variants: list[RowJson] = field(default_factory=list)
    failed: list[Failed] = field(default_factory=list)
    diff: StageDiffJson | None = None
    runtime_moves_with: list[LinkJson] = field(default_factory=list)
    sweep: SweepRun | None = None
    notes: list[str] = field(default_factory=list)


def diff(result) -> Diff:
    """From a kinspect.diff.result.DiffResult."""
    from pathlib import Path

    d, rows = result.text, result.rows
    stage_diff = None
    if d is not None:
        a, b = (rows[i] for i in result.pair)
        stage_diff = StageDiffJson(
            diff=_stage_hunks(d), a=a.label, b=b.label,
            a_file=str(Path(a.variant.path, a.variant.stage(result.stage).file)),
            b_file=str(Path(b.variant.path, b.variant.stage(result.stage).file)))
    s = result.sweep
    return Diff(variants=[row_json(r) for r in rows],
                failed=[Failed(job=o.job.describe(), error=o.error) for o in result.failed], diff=stage_diff,
                runtime_moves_with=[LinkJson(spearman_rho=dict(x.metrics), variants=x.variants, text=x.describe())
                                    for x in result.links],
                sweep=None if s is None else SweepRun(jobs=len(s.outcomes), workers=s.workers, cores=s.cores,
                                                      seconds=round(s.seconds, 2)),
                notes=list(result.notes))


# -- diff of two runs (kinspect diff STORE_A STORE_B, diff --python) -----------------------------------

@dataclass(frozen=True)
class RunSide:
    """One run of a program diff: where it was read, what it ran with, how many steps its calls stand for."""

    path: str
    kind: str = doc("kinspect store, trace, or compiled offline (diff --python)")
    variants: int
    triton: list[str] = doc("the Triton versions in its records (one, unless the store mixes runs)")
    torch: str | None
    python: str | None
    device: str | None
    steps: int
    steps_from: str = doc("--steps, or how the steps were guessed")
    gpu_ms: float | None = doc("every Triton kernel's GPU time, all steps")
    step_gpu_ms: float | None
    other_gpu_ms_per_step: float | None = doc("the rest of the GPU work the capture's profiler saw, per step")


@dataclass(frozen=True)
class KernelSide:
    """A kernel in one run: its variants, launches and figures."""

    kernel: str
    variants: list[str]
    path: str
    target: str
    triton_version: str
    constexprs: dict[str, Any]
    num_warps: int | None
    num_stages: int | None
    calls: int | None
    gpu_ms: float | None
    gpu_ms_per_step: float | None
    us_per_call: float | None = doc("the median of its sampled launches")
    us_per_call_p20: float | None
    us_per_call_p80: float | None
    timed_samples: int
    figures: Figures = flat()
    scalar_instructions: int = doc("instructions that are neither vector nor matrix instructions")
    finding_kinds: list[str]
    origin: str | None = doc("Inductor's origin of the kernel, short")


@dataclass(frozen=True)
class KernelChangeJson:
    """A kernel matched across the two runs (or only in one), with what changed."""

    kernel: str
    match: str = doc("how A's and B's were matched, or gone / new")
    a: KernelSide | None
    b: KernelSide | None
    lost_ms_per_step: float | None = doc("B's GPU time per step minus A's")
    per_call_change: float | None = doc("B's time per call over A's, minus 1")
    beyond_spread: bool | None = doc("the two spreads (p20-p80) do not overlap; null: too few samples")
    deltas: dict[str, Any] = doc("figure -> B minus A, for the figures that differ")
    findings_appeared: list[str]
    findings_vanished: list[str]
    config_changed: list[str]


@dataclass(frozen=True)
class StageStepJson:
    stage: str
    identical: bool
    normalized_changed_lines: int


@dataclass(frozen=True)
class PairJson:
    """One kernel's stages in both runs: which differ, the first that does, and the diffs."""

    kernel: str
    a_variant: str
    b_variant: str
    stages: list[StageStepJson]
    first_differing_stage: str | None
    isa_diff: StageHunks | None
    first_stage_diff: StageHunks | None


@dataclass(frozen=True)
class RunDiff:
    """Two runs of a program, kernel by kernel (diff STORE_A STORE_B; diff --python: one kernel under two
    Tritons)."""

    kinspect_json: int = _version()
    a: RunSide | None = None
    b: RunSide | None = None
    step_gpu_ms_change: float | None = None
    kernels: list[KernelChangeJson] = doc("most GPU time lost per step first", default_factory=list)
    pair: PairJson | None = None
    story: str = doc("the top change in words", default="")
    notes: list[str] = field(default_factory=list)


def _hunks(d) -> list[HunkJson]:
    return [HunkJson(a_start=h.a_start, a_count=h.a_count, b_start=h.b_start, b_count=h.b_count,
                     runs=[RunJson(tag=r.tag, lines=list(r.lines), repeat=r.repeat) for r in h.runs]) for h in d.hunks]


def _stage_hunks(d) -> StageHunks | None:
    if d is None:
        return None
    return StageHunks(stage=d.stage, a_lines=d.a_lines, b_lines=d.b_lines, raw_changed_lines=d.raw_changed,
                      normalized_changed_lines=d.changed, shown_changed_lines=d.shown, hunks=_hunks(d))


def _run_side(r) -> RunSide:
    return RunSide(path=r.path, kind=r.kind, variants=r.variants, triton=list(r.triton), torch=r.torch or None,
                   python=r.python or None, device=r.device or None, steps=r.steps, steps_from=r.steps_from,
                   gpu_ms=r.gpu_ms, step_gpu_ms=r.step_ms,
                   other_gpu_ms_per_step=None if r.other_ms is None else r.other_ms / r.steps)


def _kernel_side(side, steps: int) -> KernelSide:
    from kinspect.diff.programs import scalar

    m, v, t = side.figures, side.unit.variant, side.timing
    return KernelSide(kernel=side.unit.kernel, variants=[x.name or x.path for x in side.unit.variants], path=v.path,
                      target=str(v.target), triton_version=v.triton_version, constexprs=v.constexprs,
                      num_warps=v.num_warps, num_stages=v.num_stages, calls=t.calls,
                      gpu_ms=t.gpu_ms, gpu_ms_per_step=None if t.gpu_ms is None else t.gpu_ms / steps,
                      us_per_call=_round(t.us, 3), us_per_call_p20=_round(t.p20_us, 3),
                      us_per_call_p80=_round(t.p80_us, 3), timed_samples=t.samples, figures=_figures(m),
                      scalar_instructions=scalar(m), finding_kinds=sorted({f.kind for f in m.findings}),
                      origin=side.unit.origin.short() if side.unit.origin else None)


def run_diff(d) -> RunDiff:
    """From a kinspect.diff.programs.ProgramDiff."""
    a_steps, b_steps = d.a.steps, d.b.steps
    p = d.pair
    return RunDiff(
        a=_run_side(d.a), b=_run_side(d.b),
        step_gpu_ms_change=None if d.a.step_ms is None or d.b.step_ms is None else d.b.step_ms - d.a.step_ms,
        kernels=[KernelChangeJson(kernel=c.kernel, match=c.how, a=_kernel_side(c.a, a_steps) if c.a else None,
                                  b=_kernel_side(c.b, b_steps) if c.b else None,
                                  lost_ms_per_step=_round(c.lost_ms_per_step, 6),
                                  per_call_change=_round(c.per_call_change, 4), beyond_spread=c.beyond_spread,
                                  deltas=dict(c.deltas), findings_appeared=list(c.appeared),
                                  findings_vanished=list(c.vanished), config_changed=list(c.config))
                 for c in d.changes],
        pair=None if p is None else PairJson(
            kernel=p.kernel, a_variant=p.a.path, b_variant=p.b.path,
            stages=[StageStepJson(stage=x.stage, identical=x.identical, normalized_changed_lines=x.changed_lines)
                    for x in p.stages],
            first_differing_stage=p.first, isa_diff=_stage_hunks(p.isa), first_stage_diff=_stage_hunks(p.first_diff)),
        story=d.story, notes=list(d.notes))


# -- bench ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CheckJson:
    """The kernel's output against its reference."""

    ok: bool
    error: float = doc("max |difference| over max |reference|")
    max_abs: float
    scale: float
    tolerance: float
    precision: str
    against: str
    shape_ok: bool


def _check(c) -> CheckJson | None:
    return None if c is None else CheckJson(**c.to_json())


@dataclass(frozen=True)
class ThroughputJson:
    """What the kernel achieves against the device's measured ceilings."""

    gb_per_s: float | None
    pct_of_bandwidth: float | None = doc("of the device's measured copy bandwidth")
    copy_bandwidth: dict | None = doc("the device's measured copy bandwidth record")
    tflop_per_s: float | None = None
    pct_of_peak: float | None = doc("of the device's measured matmul peak for the dtype", default=None)
    peak_flops: dict | None = None
    note: str | None = doc("why a percentage is missing", default=None)


@dataclass(frozen=True)
class Quantiles:
    """Repeated timings, ms per run."""

    n: int
    median: float
    p20: float
    p80: float
    mean: float
    cv: float = doc("standard deviation over mean")


def _quantiles(q) -> Quantiles | None:
    return None if q is None else Quantiles(**{k: round(v, 6) if isinstance(v, float) else v for k, v in vars(q).items()})


@dataclass(frozen=True)
class TimingJson:
    """Steady-state timing: ms per run (the device's time on a GPU), and how it was measured."""

    ms: Quantiles
    cpu_ms: Quantiles | None = doc("CPU ms per run, all threads (CPU backends)")
    busy_threads: float | None
    warmup_ms: int
    rep_ms: int
    flush_bytes: int | None = doc("the L2 flush buffer zeroed before each run (GPU)")
    tool: str
    threads: str | None


def timing_json(t) -> TimingJson | None:
    """From a kinspect.bench.timing.Timing."""
    if t is None:
        return None
    return TimingJson(ms=_quantiles(t.wall), cpu_ms=_quantiles(t.cpu),
                      busy_threads=None if t.busy_threads is None else round(t.busy_threads, 2), warmup_ms=t.warmup_ms,
                      rep_ms=t.rep_ms, flush_bytes=t.flush_bytes, tool=t.tool, threads=t.threads or None)


@dataclass(frozen=True)
class FirstCallJson:
    """A first call: its wall time, split into the JIT's stages, Triton's start-up and the rest."""

    wall_ms: float
    cache_hit: bool
    jit_ms: float
    triton_startup_ms: float
    jit_ms_by_stage: dict[str, float]
    rest_ms: float


def first_call_json(f) -> FirstCallJson:
    return FirstCallJson(wall_ms=round(f.wall_ms, 3), cache_hit=f.cache_hit, jit_ms=round(f.jit_ms, 3),
                         triton_startup_ms=round(f.startup_ms, 3),
                         jit_ms_by_stage={k: round(v, 3) for k, v in f.stages_ms().items()},
                         rest_ms=round(f.rest_ms, 3))


@dataclass(frozen=True)
class ReferenceJson:
    name: str
    timing: TimingJson | None
    speedup_of_kernel: float | None
    compile_ms: float | None
    error: str | None


@dataclass(frozen=True)
class FirstCallsJson:
    cold: FirstCallJson = doc("the first call in a fresh process")
    warm: FirstCallJson = doc("the first call again, the binary in Triton's cache")
    in_user_triton_cache: bool | None


@dataclass(frozen=True)
class Asm:
    """The figures of the variant bench ran."""

    figures: Figures = flat()
    compile: Compile = flat()
    findings: list[Finding] = field(default_factory=list)
    loaded: dict | None = doc("what the loaded kernel reported (registers, spills, shared)", default=None)


@dataclass(frozen=True)
class Bench:
    """A kernel timed on the device: first call, steady state, throughput, references, check, figures."""

    kinspect_json: int = _version()
    kernel: str = doc("the kernel as named on the command line", default="")
    variant: str | None = None
    path: str = ""
    target: str = ""
    target_note: str = ""
    size: str = ""
    dtype: str = ""
    constexprs: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    first_call: FirstCallsJson | None = None
    steady: TimingJson | None = None
    throughput: ThroughputJson | None = None
    references: list[ReferenceJson] = field(default_factory=list)
    check: CheckJson | None = None
    asm: Asm | None = None
    method: dict | None = doc("how it was timed: clocks, flush, device", default=None)
    profile: dict | None = None
    launch_path: dict | None = doc("the Python side of a launch against its GPU time", default=None)
    notes: list[str] = field(default_factory=list)
    passes: dict | None = doc("with --passes: MLIR pass times and IR snapshots", default=None)


def throughput(t) -> ThroughputJson:
    """From a kinspect.bench.measure.Throughput."""
    return ThroughputJson(gb_per_s=t.gbps, pct_of_bandwidth=t.pct_copy, copy_bandwidth=t.copy, tflop_per_s=t.tflops,
                          pct_of_peak=t.pct_peak, peak_flops=t.peak, note=t.note or None)


def bench(result, passes=None) -> Bench:
    """From a kinspect.bench.measure.BenchResult (and kinspect.compile.passes' result with --passes)."""
    v, m = result.variant, result.metrics
    f, c = _figures(m), _compile(m)
    return Bench(
        kernel=result.label, variant=v.name, path=v.path, target=str(v.target), target_note=result.target_note,
        size=result.size, dtype=result.dtype, constexprs=v.constexprs, options=v.options,
        first_call=FirstCallsJson(cold=first_call_json(result.first.cold), warm=first_call_json(result.first.warm),
                                  in_user_triton_cache=result.in_user_cache),
        steady=timing_json(result.steady),
        throughput=throughput(result.throughput),
        references=[ReferenceJson(name=r.name, timing=timing_json(r.timing),
                                  speedup_of_kernel=None if r.ratio is None else round(r.ratio, 4),
                                  compile_ms=None if r.compile_ms is None else round(r.compile_ms, 1),
                                  error=r.error or None)
                    for r in result.references], check=_check(result.check),
        asm=Asm(figures=f, compile=c, findings=_findings(m), loaded=None if v.loaded is None else to_json(v.loaded)), method=result.method,
        profile=result.profile.to_json() if result.profile else None,
        launch_path=result.launch.to_json() if result.launch else None, notes=list(result.notes),
        passes=passes.to_json() if passes else None)


@dataclass(frozen=True)
class InterpretedJson:
    """A kernel run under Triton's interpreter and checked against its reference (bench --interpret)."""

    kinspect_json: int = _version()
    kernel: str = ""
    size: str = ""
    grid: list[int] = field(default_factory=list)
    interpreter_ms: float = 0.0
    check: CheckJson | None = None
    note: str = ""


def interpreted(result) -> InterpretedJson:
    """From a kinspect.bench.interpreted_check.Interpreted."""
    from kinspect.bench.interpreted_check import NOTE

    return InterpretedJson(kernel=result.label, size=result.size, grid=list(result.grid), interpreter_ms=result.wall_ms,
                           check=_check(result.check), note=NOTE)


# -- capture ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CapturedVariant:
    kernel: str
    variant: str | None
    path: str
    target: str
    constexprs: dict[str, Any]
    options: dict[str, Any]
    calls: int
    gpu_ms: float | None
    tuning_calls: int
    tuning_ms: float
    notes: list[str]
    launches: dict | None = doc("its launches (grids, shapes, dtypes, strides), as record.json keeps them")


@dataclass(frozen=True)
class CaptureTimingJson:
    """How the capture timed launches on the GPU."""

    method: str = doc("profiler or events")
    ms: float = doc("what timing cost on the CPU side")
    failed: str | None = doc("why the timer could not start")
    coverage: str | None = doc("which launches were timed (--time-sample)")
    other_kernels: dict[str, dict[str, Any]] = doc("GPU work no launch hook saw: name -> calls, ms")
    tuning_other_kernels: dict[str, dict[str, Any]] = doc("those launched inside autotuners' benchmarks (their L2 "
                                                          "flushes): name -> calls, ms")
    window: str | None = doc("when the profiler read the other kernels")


@dataclass(frozen=True)
class Capture:
    """What a capture recorded (capture --json)."""

    kinspect_json: int = _version()
    exit_code: int = doc("the program's exit code", default=0)
    variants: list[CapturedVariant] = field(default_factory=list)
    launches: int = 0
    hook_ms: float = doc("time observing launches took, all processes", default=0.0)
    per_launch_us: float = 0.0
    observed: dict[str, int] = doc("how launches were observed -> variants", default_factory=dict)
    static_launcher: str = ""
    timing: CaptureTimingJson | None = None
    unattributed: dict = doc("GPU work the launch hooks did not attribute to a variant", default_factory=dict)
    autotune: list[dict] = doc("the configs triton.autotune chose, per kernel and key", default_factory=list)
    interpret: str | None = doc("the target launches under the interpreter were compiled for", default=None)
    compile_s: float = 0.0
    derive_s: float = 0.0
    notes: list[str] = field(default_factory=list)


def capture(result) -> Capture:
    """From a kinspect.files.captured.CaptureResult."""
    def variant(v) -> CapturedVariant:
        la, gpu = v.launches, v.launches.gpu if v.launches else None
        return CapturedVariant(kernel=v.kernel, variant=v.name, path=v.path, target=str(v.target),
                               constexprs=v.constexprs, options=v.options, calls=la.calls if la else 0,
                               gpu_ms=gpu.total_ms if gpu else None, tuning_calls=la.tuning_calls if la else 0,
                               tuning_ms=la.tuning_ms if la else 0.0, notes=list(v.notes), launches=_launches(v))

    t = result.timing
    return Capture(exit_code=result.code, variants=[variant(v) for v in result.variants], launches=result.launches,
                   hook_ms=result.hook_ms, per_launch_us=result.per_launch_us, observed=dict(result.observed),
                   static_launcher=result.static_launcher,
                   timing=None if t is None else CaptureTimingJson(
                       method=t.method, ms=t.ms, failed=t.failed or None, coverage=t.coverage or None,
                       other_kernels=dict(t.other_kernels), tuning_other_kernels=dict(t.tuning_other_kernels),
                       window=t.window or None),
                   unattributed=dict(result.unattributed), autotune=[d.to_json() for d in result.autotune],
                   interpret=result.interpret, compile_s=result.compile_s, derive_s=result.derive_s,
                   notes=list(result.notes))


# -- every command ----------------------------------------------------------------------------------

# command -> the records its --json is made of (one of them, or a list of the first)
COMMANDS: dict[str, tuple[str, tuple]] = {
    "vec-report": ("a list with one object per variant; for several kernels (a captured program) one object",
                   (list[VariantJson], Program)),
    "diff": ("one object: a sweep's or saved variants' table and stage diff; of two runs (STORE_A STORE_B, "
             "--python) the kernels matched across them", (Diff, RunDiff)),
    "bench": ("one object; with --interpret the interpreter's check", (Bench, InterpretedJson)),
    "capture": ("one line after the program's own output", (Capture,)),
    "tune": ("one object", (Tune,)),
}


def command_schema(command: str) -> dict:
    """The JSON Schema of `kinspect COMMAND --json`."""
    what, shapes = COMMANDS[command]
    parts = [schema(s) for s in shapes]
    body = parts[0] if len(parts) == 1 else {"anyOf": parts}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **body, "title": f"kinspect {command} --json",
            "description": f"{what}; kinspect_json {VERSION}" + (f". {body['description']}" if "description" in body
                                                                 else "")}


def dumps(record, *, indent: int | None = 1) -> str:
    """A command's output record (or list of records) as the JSON it prints."""
    return json.dumps(to_json(record), indent=indent, default=str)
