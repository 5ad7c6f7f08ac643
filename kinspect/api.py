"""The functions a user or the CLI calls. Each CLI command is a thin shell over one of these."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kinspect.core.errors import KinspectError, UsageError
from kinspect.core.model import Variant, natural  # noqa: F401  (natural: the order of kinspect ls)
from kinspect.files.store import DEFAULT_OUT

if TYPE_CHECKING:       # the results the functions below return: records with to_json, or lists of them
    from kinspect.analysis import VariantReport
    from kinspect.bench.interpreted_check import Interpreted
    from kinspect.bench.measure import BenchResult
    from kinspect.diff.result import DiffResult
    from kinspect.render.html import Report
    from kinspect.files.sources import Listing

# Compiling one variant and retargeting one live below the commands that use them (a sweep's workers,
# diff, passes); the api keeps their names for users and the CLI.
from kinspect.compile.dump import DumpResult, dump  # noqa: E402
from kinspect.analysis.derived import add_retargets, llir_stage, retargeted  # noqa: E402
from kinspect.analysis.lookup import find_variant  # noqa: E402
from kinspect.files.sources import readable  # noqa: E402
from kinspect.files.readonly import check_output_path, check_store_folder  # noqa: E402


def stage_text(variant: Variant, stage: str) -> str:
    """A stored stage's text; a binary stage or an unknown name is a clear error."""
    from kinspect.core.errors import NotFound, did_you_mean

    s = variant.stage(stage)
    if s is None:
        refused = next((p for p in variant.problems if p.startswith(f"stage {stage}: ")), None)
        if refused:      # its file leads out of the variant folder (kinspect.files.store.contained)
            raise KinspectError(f"variant {variant.name or variant.kernel}: {refused}")
        names = [x.name for x in variant.stages]
        why = next((n.split(": ", 1)[1] for n in variant.notes if n.startswith(f"{stage} not derived: ")), None)
        if why:  # a stage kinspect derives (SASS from the cubin) failed: say why, not "no such stage"
            from kinspect import backends

            source = next((d.inputs[0] for d in backends.of(variant).derivers if d.stage.name == stage and d.inputs),
                          "binary")
            raise KinspectError(f"no {stage} for '{variant.name or variant.kernel}': {why}; is its {source} "
                                f"truncated or corrupt? Its stages: {', '.join(names)}")
        raise NotFound(f"variant has no stage '{stage}'{did_you_mean(stage, names)}; its stages: {', '.join(names)}")
    if s.binary:
        text_stages = [x.name for x in variant.stages if not x.binary]
        raise UsageError(f"stage '{stage}' is binary; text stages: {', '.join(text_stages)}")
    with _open_stage(variant, s) as f:
        return f.read()


def _open_stage(variant: Variant, s, newline: str | None = None):
    """A stage's file opened as text; one that cannot be opened (gone, unreadable) is one line."""
    from kinspect.files import foreign

    try:
        return foreign.open_text(Path(variant.path, s.file), newline=newline)
    except foreign.Refused as e:
        raise KinspectError(f"variant {variant.name or variant.kernel}: stage {s.name}: "
                            f"{str(e).replace(str(variant.path) + '/', '')}") from None


HIGHLIGHT_MAX_BYTES = 8 << 20   # past this a stage is shown streamed, without colours (pygments holds it all)


def stage_chunks(variant: Variant, stage: str, size: int = 1 << 20):
    """A text stage in chunks of `size` characters: shows a stage of any size in bounded memory.
    Checks as stage_text does (unknown or binary stage) before the first chunk."""
    s = variant.stage(stage)
    if s is None or s.binary:
        stage_text(variant, stage)   # raises the right error
    f = _open_stage(variant, s, newline="")

    def chunks():
        with f:
            yield from iter(lambda: f.read(size), "")

    return chunks()


def stage_bytes(variant: Variant, stage: str) -> int:
    """A stage's size on disk (0 when it has none: the error comes when it is read)."""
    s = variant.stage(stage)
    try:
        return Path(variant.path, s.file).stat().st_size if s is not None else 0
    except OSError:
        return 0


def list_variants(path: str | Path | None = None) -> Listing:
    """(what was listed, variants) for a kinspect store, a Triton cache or a dump folder. Read-only."""
    from kinspect.files import sources

    return sources.discover(path)


def resolve_variants(items, *, target=None, constexprs=None, args=None, num_warps=None, num_stages=None,
                     size=None, out_dir: str | Path = DEFAULT_OUT, config: int | None = None, launch: int | None = None,
                     from_: str | None = None) -> list[Variant]:
    """Variants named on a command line: folders and stage files as they are; kernels (shipped or
    file.py:name) compiled as `dump` does. No items: ./kinspect-out if present, else the Triton cache."""
    from kinspect.files import sources
    from kinspect.compile.user import is_user_kernel

    from kinspect.analysis.derived import complete

    if not items:
        return [complete(v) for v in sources.at_most(sources.readable(sources.discover(None)))]
    from kinspect.analysis.lookup import row

    variants = []
    for item in items:
        p = Path(item)
        if p.exists() and not is_user_kernel(item):
            variants += [complete(v) for v in sources.at_most(sources.readable(sources.discover(p)))]
        elif (numbered := row(item, out_dir)) is not None:     # a row of `kinspect ls STORE`
            variants.append(complete(numbered))
        else:
            variants.append(dump(item, target=target, constexprs=constexprs, args=args, num_warps=num_warps,
                                 num_stages=num_stages, size=size, out_dir=out_dir, config=config, launch=launch,
                                 from_=from_).variant)
    return variants


def vec_report(items, *, retarget=(), **kwargs) -> list[VariantReport]:
    """Analysis reports (kinspect.analysis.VariantReport) for the variants named by `items`; with
    `retarget` CPU specs, each variant's LLVM IR compiled for those CPUs is reported after it.
    An as-compiled variant with no machine code (a lone .ll file) is left out when retargeting."""
    return vec_report_of(resolve_variants(items, **kwargs), retarget=retarget)


def vec_report_of(variants: list[Variant], *, retarget=()) -> list[VariantReport]:
    """vec_report of variants already resolved."""
    from kinspect.analysis import analyse

    reports = []
    for v in variants:
        if retarget:
            llir_stage(v)  # a variant without LLVM IR is a clear error before anything is compiled
        report = analyse(v)
        if v.origin == "file" and report.problems:   # the one stage the user named could not be read
            raise KinspectError(f"{Path(v.path, v.stages[0].file)}: {report.problems[0].split(': ', 1)[-1]}")
        if report.isa is not None or not retarget:
            reports.append(report)
        reports += [analyse(retargeted(v, spec)) for spec in retarget]
    return reports


@dataclass(frozen=True)
class Program:
    """The program view of many kernels' variants: one row per kernel, ranked, and the full analysis
    of the kernels chosen for detail."""

    rows: list            # kinspect.analysis.summary.KernelRow, busiest first
    details: list         # kinspect.analysis.VariantReport of the chosen kernels' busiest variants
    where: str            # what was read: a store, a cache, "3 kernels compiled here"
    sol: object = None    # kinspect.analysis.sol.ProgramSol: speed of light per kernel
    busiest: dict = field(default_factory=dict)    # kernel -> its busiest Variant
    counters: dict = field(default_factory=dict)   # kernel -> why --counters measured nothing for it

    @functools.cached_property
    def extras(self) -> dict:
        """kernel -> what the view says of it beyond its row (kinspect.analysis.explain.kernel_extras):
        speed of light, provenance, counters."""
        from kinspect.analysis.explain import kernel_extras

        out = {r.kernel: kernel_extras(r, self.busiest.get(r.kernel), self.sol) for r in self.rows}
        for k, why in self.counters.items():
            out[k]["counters_failed"] = why
        return out

    def to_json(self) -> dict:
        kernels = [{**r.to_json(), **self.extras[r.kernel]} for r in self.rows]
        return {"where": self.where, "kernels": kernels, "variants": [d.to_json() for d in self.details],
                "speed_of_light": self.sol.to_json() if self.sol is not None else None}


def ranked(rows: list, sol) -> list:
    """The rows by headroom, most first (what to fix first), when the capture timed them against
    ceilings; kernels without a headroom follow by GPU time. As they are otherwise."""
    if sol is None or not any(s.headroom_ms is not None for s in sol.speeds.values()):
        return rows
    from kinspect.analysis.sol import by_headroom

    order = {k: i for i, k in enumerate(by_headroom(sol.speeds))}
    return sorted(rows, key=lambda r: order.get(r.kernel, len(order)))


def one_rank(variants: list[Variant], rank: int) -> list[Variant]:
    """The variants as rank `rank` of a distributed program launched them (kinspect.analysis.ranks)."""
    from kinspect.analysis.ranks import for_rank, ranks_of

    ranks = ranks_of(variants)
    if rank not in ranks:
        raise UsageError(f"--rank {rank}: " + (f"the capture has ranks {', '.join(map(str, ranks))}" if ranks else
                                               "the capture recorded no rank (one process, or RANK was not set)"))
    return for_rank(variants, rank)


def is_program(variants: list[Variant]) -> bool:
    """More than one kernel: the program view comes first."""
    return len({v.kernel for v in variants}) > 1


def program(variants: list[Variant], *, top: int = 3, every: bool = False, names=(), where: str = "",
            jobs: int | None = None, counters: int = 0, device: str | None = None) -> Program:
    """Rank the kernels of `variants` (kinspect.analysis.summary; by headroom when the capture timed
    them, `ranked`) and analyse in full the busiest variant of the `top` first kernels, of every kernel, or of the kernels whose name contains one
    of `names`. Each timed kernel's speed of light comes with it (kinspect.analysis.sol); with
    `counters`, the busiest variants of that many kernels with the most headroom are replayed under
    Nsight Compute first (measure_counters). `device` names the GPU the program ran on, for a store
    that keeps no measured ceilings (its datasheet bandwidth, said so)."""
    from kinspect.analysis import analyse
    from kinspect.analysis.sol import for_program
    from kinspect.analysis.summary import kernel_rows, summaries, variant_key
    from kinspect.core.errors import NotFound, did_you_mean

    rows = kernel_rows(summaries(variants, jobs=jobs))
    by_key = {variant_key(v): v for v in variants}
    busiest = {r.kernel: by_key[r.busiest.key] for r in rows if r.busiest.key in by_key}
    sol = for_program(variants, device)
    failed = {}
    if counters:
        failed = measure_counters(sol, busiest, counters)
        sol = for_program(variants, device)          # measured bytes replace the estimates
    rows = ranked(rows, sol)
    if names:
        chosen = [r for r in rows if any(n.lower() in r.kernel.lower() for n in names)]
        if not chosen:
            raise NotFound(f"no kernel matches {', '.join(names)}{did_you_mean(names[0], [r.kernel for r in rows])}; "
                           f"kernels: {', '.join(r.name for r in rows[:6])}{' ...' if len(rows) > 6 else ''}")
    else:
        chosen = rows if every else rows[:top]
    details = [analyse(by_key[r.busiest.key]) for r in chosen]
    return Program(rows=rows, details=details, where=where, sol=sol, busiest=busiest, counters=failed)


def measure_counters(sol, busiest: dict, top: int) -> dict:
    """Replay the busiest variant of the `top` kernels with the most headroom under Nsight Compute
    (kinspect.bench.ncu); their counters are written beside them. Returns {kernel: why nothing was
    measured} for those that failed; ncu missing or unable to read counters is a KinspectError."""
    from kinspect.analysis.sol import by_headroom
    from kinspect.bench.ncu import measure

    if not sol.speeds:
        raise UsageError("--counters measures the kernels with the most headroom, and no kernel has GPU time: "
                         "capture the program with `kinspect capture --time`")
    kernels = [k for k in by_headroom(sol.speeds) if k in busiest][:top]
    got = measure([busiest[k].path for k in kernels])
    return {k: got[busiest[k].path] for k in kernels if isinstance(got.get(busiest[k].path), str)}


def record_ceilings(out_dir: str | Path) -> str:
    """Measure the GPU's copy bandwidth and matmul peaks (kinspect.bench.device, cached per device and
    driver) and keep them in the store (kinspect.files.ceilings): what `capture --time` does when the program
    has ended. Returns one line saying what was recorded, or why nothing was."""
    from kinspect.files import ceilings
    from kinspect.bench.device import ceilings as measure

    try:
        import torch

        if not torch.cuda.is_available():
            return "device ceilings not measured: no GPU visible to kinspect after the program"
        c = measure("cuda")
        ceilings.write(out_dir, c)
    except Exception as e:      # the capture is done and kept; percentages will say what they use instead
        return f"device ceilings not measured: {type(e).__name__}: {e}"
    return f"device ceilings kept in the store: {c.describe()}"


def diff(items, *, bench: bool = True, **kwargs) -> DiffResult:
    """Compile a sweep (and/or collect saved variants), tabulate their metrics and diff one stage of
    two of them: kinspect.diff.compare, whose keyword arguments it takes. With `bench`, variants
    compiled for the active GPU are timed on it (runtime, GB/s, % of copy bandwidth): shipped
    kernels at `size`, kernels from the user's file with their example arguments, and an autotuned
    kernel's configs beside what Triton's own autotuner picks."""
    from kinspect.diff.compare import compare

    cluster, gpus = kwargs.pop("cluster", None), kwargs.pop("gpus", None)
    if bench and kwargs.get("timer") is None:
        from kinspect.bench.runtime import autotuner_pick, device_timer
        from kinspect.compile.loader import absolute, is_user_kernel

        own = frozenset(_absolute(i, absolute) for i in items if is_user_kernel(i))   # files the user named
        kwargs["timer"] = device_timer(kwargs.get("size"), own=own)
        kwargs.setdefault("picker", functools.partial(autotuner_pick, own=own) if kwargs["timer"] is not None
                          else None)
    if cluster or (kwargs.get("timer") is not None and gpus != 1):
        kwargs["ex"] = fan_out(cluster, gpus)
    try:
        return compare(list(items), **kwargs)
    finally:
        close = getattr(kwargs.get("ex"), "close", None)
        if close is not None:
            close()


def _absolute(item: str, absolute) -> str:
    try:
        return absolute(item)
    except KinspectError:      # not there: the sweep says so in its own words
        return item


def diff_runs(a, b, *, steps=(None, None), pair: str | None = None, text: bool = True):
    """Two captured runs of a program (kinspect stores or traces), kernel by kernel: kinspect.diff.programs."""
    from kinspect.diff.programs import diff_programs

    return diff_programs(a, b, steps=steps, pair=pair, text=text)


def is_run(item) -> bool:
    """A folder or file `diff` reads as one run of a program (a captured store, a trace)."""
    from kinspect.diff.programs import is_run as run

    return run(item)


def diff_tritons(kernel: str, python: str, **kwargs):
    """One kernel compiled by this Triton and by another interpreter's: kinspect.diff.tritons."""
    from kinspect.diff.tritons import diff_tritons as compare

    return compare(kernel, python, **kwargs)


def fan_out(cluster: str | None = None, gpus: int | None = None):
    """The executor of a sweep (kinspect.core.executor): the cluster `--cluster` names, else this machine
    with its first `gpus` visible GPUs (default: all of them)."""
    from kinspect.core.executor import executor, visible_gpus

    try:
        return executor(cluster, None if cluster else visible_gpus()[:gpus] if gpus else None)
    except ValueError as e:
        raise UsageError(str(e)) from None


def bench(kernel: str, **kwargs) -> BenchResult:
    """Run a kernel on the device: its first call (cold and warm, split into JIT stages), steady-state
    quantiles, throughput against the device's measured copy bandwidth and matmul peak, its torch
    reference (eager and torch.compile), a correctness check and its registers and vector/matrix use:
    kinspect.bench.measure.bench, whose keyword arguments it takes. With no device, a UsageError
    that names `--interpret` and `dump`."""
    from kinspect.bench.measure import bench as run

    given = kwargs.get("constexprs")
    replay, kwargs["constexprs"] = _replayed(kernel, kwargs.get("out_dir", DEFAULT_OUT), given)
    picked = given if given and not kwargs["constexprs"] else None     # -p that picked a stored variant
    return run(kernel, replay=replay, picked=picked, **kwargs)


def _replayed(kernel: str, out_dir, constexprs: dict | None) -> tuple[str | None, dict | None]:
    """(the stored variant `kernel` names, or None; the -p values left to apply): -p values that
    picked one of several stored variants of a kernel (as find_variant's hint says) are spent on it."""
    from kinspect.bench.captured import captured

    replay = captured(kernel, out_dir, values=constexprs)
    if replay and constexprs:
        from kinspect.analysis.lookup import has_values
        from kinspect.files.store import read_record

        if has_values(read_record(Path(replay)), constexprs):
            return replay, {}
    return replay, constexprs


def interpret(kernel: str, *, out_dir: str | Path = DEFAULT_OUT, **kwargs) -> Interpreted:
    """Run a kernel under Triton's interpreter (no device) and check it against its torch reference;
    a captured variant (a folder, or its name in the store `out_dir`) runs its most frequent launch."""
    from kinspect.core.optional import need

    need("numpy", "--interpret (Triton's interpreter)")
    from kinspect.bench.interpreted_check import interpret as run

    replay, kwargs["constexprs"] = _replayed(kernel, out_dir, kwargs.get("constexprs"))
    return run(kernel, replay=replay, **kwargs)


def interpret_many(runs: list[dict]) -> list[Interpreted]:
    """Several interpreter runs (dicts of `interpret`'s keyword arguments plus `kernel`) in one child
    process, so the interpreter's start-up is paid once; one Interpreted per run, in order."""
    from kinspect.bench.interpreted_check import interpret_many as run

    return run(runs)


@dataclass(frozen=True)
class Repro:
    path: Path
    variant: Variant
    spec: object         # kinspect.replay.spec.ReplaySpec
    how: str             # how the script gets the kernel


def repro(variant: str, output: str | Path, *, interpret: bool = False, embed: bool = False, launch: int = 1,
          out_dir: str | Path = DEFAULT_OUT, values: dict | None = None) -> Repro:
    """Write a standalone script that launches a captured variant's `launch`-th most frequent
    captured launch once (kinspect.replay.script); with `interpret` it runs under TRITON_INTERPRET.
    `values` (-p) pick one of several variants of a kernel, as in find_variant."""
    from kinspect.replay import script
    from kinspect.replay.spec import of_variant

    v = find_variant(variant, out_dir, prefer=lambda x: x.ran, values=values)
    path = check_output_path(output, "script", [variant])
    spec = of_variant(v, launch)
    how = script.write(spec, path, interpret=interpret, embed=embed, label=variant, triton_version=v.triton_version)
    return Repro(path=path, variant=v, spec=spec, how=how)


def annotated_stage(variant: Variant, stage: str) -> str:
    """The stage's text with a `;; file:line  code` header wherever the Python line changes."""
    return "".join(annotated_chunks(variant, stage))


def annotated_chunks(variant: Variant, stage: str, size: int = 1 << 20):
    """annotated_stage in chunks of about `size` characters, in memory that does not grow with
    the stage: only the lines where the location changes are kept between the two passes."""
    s = variant.stage(stage)
    if s is None or s.binary:
        stage_text(variant, stage)   # raises the right error, before the first chunk
    return _chunked(_annotated_lines(variant, stage), size)


def _annotated_lines(variant: Variant, stage: str):
    from kinspect import ir
    from kinspect.analysis.stages import open_lines
    from kinspect.analysis.verdicts import Findings
    from kinspect.ir.records import Instruction
    from kinspect.render.report import annotate

    s = variant.stage(stage)
    locs, last = {}, None
    with open_lines(variant, s) as lines:
        for r in ir.parse(s.dialect, lines):
            if isinstance(r, Instruction) and r.loc is not None and (r.loc.file, r.loc.line) != last:
                last = locs[r.line] = (r.loc.file, r.loc.line)
    finder = Findings(variant, None, {}, None)
    with open_lines(variant, s) as lines:
        yield from annotate(lines, locs, finder.code)


def _plain_lines(variant: Variant, stage: str):
    from kinspect.analysis.stages import open_lines

    with open_lines(variant, variant.stage(stage)) as lines:
        yield from lines


def shown_chunks(variant: Variant, stage: str, *, lines: bool = False, raw: bool = False, size: int = 1 << 20):
    """A stage as `kinspect show` prints it, in chunks of about `size` characters (bounded memory):
    the file as stored with `raw`; else with `;; file:line` headers when `lines`, and SASS with
    every instruction's control codes in one notation (kinspect.render.sass_listing)."""
    from kinspect import isa
    from kinspect.render.sass_listing import with_control_codes

    s = variant.stage(stage)
    if s is None or s.binary:
        stage_text(variant, stage)   # raises the right error
    if raw:
        return stage_chunks(variant, stage, size)
    text = _annotated_lines(variant, stage) if lines else _plain_lines(variant, stage)
    spec = isa.find(s.dialect)
    if spec is not None and spec.control_codes:
        text = with_control_codes(text)
    return _chunked(text, size)


def _chunked(lines, size: int):
    chunk, held = [], 0
    for text in lines:
        chunk.append(text)
        held += len(text)
        if held >= size:
            yield "".join(chunk)
            chunk, held = [], 0
    if chunk:
        yield "".join(chunk)


def report(items, *, variant: str | None = None, metrics=(), bench: bool = True, step=None,
           **kwargs) -> Report:
    """An HTML report (kinspect.render.html.Report) over the variants `items` name, as `diff`
    collects them (a sweep with -p values, saved folders, stores, caches): the metric table, plots,
    and per variant its verdicts, resources, JIT time per stage, source and highlighted stages.
    `variant` names the one shown first (a row number, label or value; default the first, or the
    fastest when there are runtimes); `metrics` are what the sweep plot shows (render.plots.METRICS).
    `step(text)`, if given, is told when the analysis starts (the CLI shows it)."""
    from kinspect.analysis import analyse
    from kinspect.diff.compare import find_row
    from kinspect.core.errors import did_you_mean
    from kinspect.render.html import Report
    from kinspect.render.plots import METRICS

    if metrics:
        from kinspect.core.optional import need

        need("matplotlib", "--metric (the report's plots)")
    for m in metrics:
        if m not in METRICS:
            raise UsageError(f"--metric '{m}' is not one kinspect plots{did_you_mean(m, METRICS)}; "
                             f"choose from {', '.join(METRICS)}")
    result = diff(items, bench=bench, text=False, keep_reports=True, **kwargs)
    rows = result.rows
    if step is not None:
        step(f"analysing {len(rows)} variant{'s' if len(rows) != 1 else ''}")
    reports = [r.report or analyse(r.variant) for r in rows]
    variants = [r.variant for r in rows]
    program = None
    if is_program(variants):    # a program's kernels: ranked as vec-report ranks them, and no plot across them
        from kinspect.analysis.sol import for_program
        from kinspect.analysis.summary import kernel_rows, variant_key

        kernels = kernel_rows([r.metrics for r in rows])
        by_key = {variant_key(v): v for v in variants}
        sol = for_program(variants)
        program = Program(rows=ranked(kernels, sol), details=[], where="", sol=sol,
                          busiest={r.kernel: by_key[r.busiest.key] for r in kernels if r.busiest.key in by_key})
    if variant:
        chosen = find_row(variant, rows, option="--variant")
    else:
        timed = [i for i, r in enumerate(rows) if r.runtime]
        from kinspect.analysis.summary import variant_key

        first = program.rows[0].busiest.key if program else None
        chosen = (min(timed, key=lambda i: rows[i].runtime.median_ms) if timed
                  else next((i for i, v in enumerate(variants) if variant_key(v) == first), 0))
    tunes = {i: t for i, v in enumerate(variants) if (t := tuned(v)) is not None}
    return Report(result, reports, chosen=chosen, metrics=metrics, program=program, tunes=tunes)


def tune(name: str, *, out_dir: str | Path = DEFAULT_OUT, trials: int | None = None, budget_s: float | None = None,
         compare: bool = True, progress=None, jobs: int | None = None, runner_for=None, constexprs=None,
         args=None, size: str | None = None):
    """Tune a captured variant (a name or folder in the store at `out_dir`), or a kernel (shipped, or
    FILE:KERNEL with example values) whose one launch is captured here first: kinspect.tune.search.tune.
    Stores the result beside the variant and returns (TuneResult, kinspect.tune.outcome.Outcome).
    `runner_for(spec)` makes the object that checks and times candidates (default: the GPU Replayer);
    without one and without a GPU, a UsageError of one line."""
    from kinspect.bench.captured import captured
    from kinspect.replay.spec import from_variant
    from kinspect.files.store import read_record
    from kinspect.tune import result, run, search

    folder = captured(name, out_dir, constexprs)
    if folder is None and not _names_kernel(name):
        find_variant(name, out_dir)         # not found: its one line, with the names that are there
        raise UsageError(f"'{name}' is a variant without a captured launch: tune replays a variant "
                         f"`kinspect capture` recorded, or launches a kernel (shipped, or FILE:KERNEL) once here")
    if runner_for is None:
        line = run.device_line(f"'{name}'", name, out_dir)
        if line:
            raise UsageError(line)
        runner_for = run.Replayer
    if folder is None:
        folder = run.record_launch(name, out_dir=out_dir, constexprs=constexprs or {}, args=args or {}, size=size)
    elif constexprs or args or size:
        raise UsageError(f"-p/--arg/--size do not apply to the captured '{name}': tune replays its captured launch")
    v = read_record(Path(folder))
    spec = from_variant(v)
    if trials is None and budget_s is None:
        trials = search.DEFAULT_TRIALS
    found = search.tune(v, runner=runner_for(spec), trials=trials, budget_s=budget_s, compare=compare,
                        progress=progress, workers=jobs)
    result.write(folder, found)
    return found, _meaning(found, v)


def _names_kernel(name: str) -> bool:
    from kinspect import kernels
    from kinspect.compile.user import is_user_kernel

    return is_user_kernel(name) or name in kernels.names()


def tuned(variant: Variant):
    """The tune stored beside a variant, with what it means; None when it was never tuned."""
    from kinspect.tune import result

    found = result.read(variant.path) if variant.path else None
    return None if found is None else (found, _meaning(found, variant))


def _meaning(found, variant: Variant):
    """kinspect.tune.outcome.Outcome of a tune of `variant`; an Inductor kernel's names the key of
    Inductor's autotune lookup table for it."""
    from kinspect.replay.spec import generated
    from kinspect.tune import heuristic, outcome

    h = heuristic.read(variant.source.text) if generated(variant.source) else None
    return outcome.outcome(found, heuristic.lookup_key(variant.source.text, h.size_hints) if h is not None else None)


def tune_program(found, n: int, **kwargs) -> list[tuple[str, object]]:
    """Tune the busiest variant of each of the `n` kernels of a program view (api.program) with the most
    headroom: [(kernel, (TuneResult, Outcome)) or (kernel, the error line)], most headroom first."""
    from kinspect.analysis.sol import by_headroom
    from kinspect.tune.run import device_line

    chosen = by_headroom(found.sol.speeds)[:n]
    first = found.busiest.get(chosen[0]) if chosen else None     # the hint names a variant that is there
    line = (device_line("the kernels of this program", first.path if first is not None and first.path else
                        (chosen[0] if chosen else "VARIANT"))
            if kwargs.get("runner_for") is None else None)
    if line:
        raise UsageError(line)
    out = []
    if kwargs.get("progress"):
        kwargs["progress"](f"tune: the {len(chosen)} kernel(s) with the most headroom, in this order: "
                           f"{', '.join(chosen)}")
    for kernel in chosen:
        v = found.busiest.get(kernel)
        if v is None or not v.path:
            out.append((kernel, "no variant of it was launched with its arguments recorded"))
            continue
        try:
            out.append((kernel, tune(v.path, **kwargs)))
        except KinspectError as e:
            out.append((kernel, str(e)))
            if kwargs.get("progress"):
                kwargs["progress"](f"not tuned {kernel}: {e}")
    return out
