"""The functions a user or the CLI calls. Each CLI command is a thin shell over one of these."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kinspect.errors import KinspectError, UsageError
from kinspect.model import Variant

DEFAULT_OUT = "kinspect-out"

# Compiling one variant and retargeting one live below the commands that use them (a sweep's workers,
# diff, passes); the api keeps their names for users and the CLI.
from kinspect.compile.dump import DumpResult, dump  # noqa: E402  (after DEFAULT_OUT, which dump's default is)
from kinspect.derived import add_retargets, llir_stage, retargeted  # noqa: E402
from kinspect.lookup import find_variant, readable as _readable  # noqa: E402


def stage_text(variant: Variant, stage: str) -> str:
    """A stored stage's text; a binary stage or an unknown name is a clear error."""
    from kinspect.errors import NotFound, did_you_mean

    s = variant.stage(stage)
    if s is None:
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
    return Path(variant.path, s.file).read_text(errors="replace")


HIGHLIGHT_MAX_BYTES = 8 << 20   # past this a stage is shown streamed, without colours (pygments holds it all)


def stage_chunks(variant: Variant, stage: str, size: int = 1 << 20):
    """A text stage in chunks of `size` characters: shows a stage of any size in bounded memory.
    Checks as stage_text does (unknown or binary stage) before the first chunk."""
    s = variant.stage(stage)
    if s is None or s.binary:
        stage_text(variant, stage)   # raises the right error
    path = Path(variant.path, s.file)

    def chunks():
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            yield from iter(lambda: f.read(size), "")

    return chunks()


def stage_bytes(variant: Variant, stage: str) -> int:
    s = variant.stage(stage)
    return Path(variant.path, s.file).stat().st_size if s is not None else 0


def list_variants(path: str | Path | None = None):
    """(what was listed, variants) for a kinspect store, a Triton cache or a dump folder. Read-only."""
    from kinspect import sources

    return sources.discover(path)


def resolve_variants(items, *, target=None, constexprs=None, args=None, num_warps=None, num_stages=None,
                     size=None, out_dir: str | Path = DEFAULT_OUT, config: int | None = None, launch: int | None = None,
                     from_: str | None = None) -> list[Variant]:
    """Variants named on a command line: folders and stage files as they are; kernels (shipped or
    file.py:name) compiled as `dump` does. No items: ./kinspect-out if present, else the Triton cache."""
    from kinspect import sources
    from kinspect.compile.user import is_user_kernel

    from kinspect.derived import complete

    if not items:
        return [complete(v) for v in _readable(sources.discover(None)).variants]
    variants = []
    for item in items:
        p = Path(item)
        if p.exists() and not is_user_kernel(item):
            variants += [complete(v) for v in _readable(sources.discover(p)).variants]
        else:
            variants.append(dump(item, target=target, constexprs=constexprs, args=args, num_warps=num_warps,
                                 num_stages=num_stages, size=size, out_dir=out_dir, config=config, launch=launch,
                                 from_=from_).variant)
    return variants


def vec_report(items, *, retarget=(), **kwargs):
    """Analysis reports (kinspect.analysis.VariantReport) for the variants named by `items`; with
    `retarget` CPU specs, each variant's LLVM IR compiled for those CPUs is reported after it.
    An as-compiled variant with no machine code (a lone .ll file) is left out when retargeting."""
    return vec_report_of(resolve_variants(items, **kwargs), retarget=retarget)


def vec_report_of(variants: list[Variant], *, retarget=()):
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

    def to_json(self) -> dict:
        return {"where": self.where, "kernels": [r.to_json() for r in self.rows],
                "variants": [d.to_json() for d in self.details]}


def is_program(variants: list[Variant]) -> bool:
    """More than one kernel: the program view comes first."""
    return len({v.kernel for v in variants}) > 1


def program(variants: list[Variant], *, top: int = 3, every: bool = False, names=(), where: str = "",
            jobs: int | None = None) -> Program:
    """Rank the kernels of `variants` (kinspect.analysis.summary) and analyse in full the busiest
    variant of the `top` first kernels, of every kernel, or of the kernels whose name contains one
    of `names`."""
    from kinspect.analysis import analyse
    from kinspect.analysis.summary import kernel_rows, summaries, variant_key
    from kinspect.errors import NotFound, did_you_mean

    rows = kernel_rows(summaries(variants, jobs=jobs))
    if names:
        chosen = [r for r in rows if any(n.lower() in r.kernel.lower() for n in names)]
        if not chosen:
            raise NotFound(f"no kernel matches {', '.join(names)}{did_you_mean(names[0], [r.kernel for r in rows])}; "
                           f"kernels: {', '.join(r.name for r in rows[:6])}{' ...' if len(rows) > 6 else ''}")
    else:
        chosen = rows if every else rows[:top]
    by_key = {variant_key(v): v for v in variants}
    details = [analyse(by_key[r.busiest.key]) for r in chosen]
    return Program(rows=rows, details=details, where=where)


def diff(items, *, bench: bool = True, **kwargs):
    """Compile a sweep (and/or collect saved variants), tabulate their metrics and diff one stage of
    two of them: kinspect.diff.compare, whose keyword arguments it takes. With `bench`, variants
    compiled for the active GPU are timed on it (runtime, GB/s, % of copy bandwidth): shipped
    kernels at `size`, kernels from the user's file with their example arguments, and an autotuned
    kernel's configs beside what Triton's own autotuner picks."""
    from kinspect.diff.compare import compare

    if bench and kwargs.get("timer") is None:
        from kinspect.bench.runtime import autotuner_pick, device_timer

        kwargs["timer"] = device_timer(kwargs.get("size"))
        kwargs.setdefault("picker", autotuner_pick if kwargs["timer"] is not None else None)
    return compare(list(items), **kwargs)


def bench(kernel: str, **kwargs):
    """Run a kernel on the device: its first call (cold and warm, split into JIT stages), steady-state
    quantiles, throughput against the device's measured copy bandwidth and matmul peak, its torch
    reference (eager and torch.compile), a correctness check and its registers and vector/matrix use:
    kinspect.bench.measure.bench, whose keyword arguments it takes. With no device, a UsageError
    that names `--interpret` and `dump`."""
    from kinspect.bench.measure import bench as run
    from kinspect.replay.launch import captured

    return run(kernel, replay=captured(kernel, kwargs.get("out_dir", DEFAULT_OUT)), **kwargs)


def interpret(kernel: str, *, out_dir: str | Path = DEFAULT_OUT, **kwargs):
    """Run a kernel under Triton's interpreter (no device) and check it against its torch reference;
    a captured variant (a folder, or its name in the store `out_dir`) runs its most frequent launch."""
    from kinspect.optional import need

    need("numpy", "--interpret (Triton's interpreter)")
    from kinspect.bench.interpret import interpret as run
    from kinspect.replay.launch import captured

    return run(kernel, replay=captured(kernel, out_dir), **kwargs)


def interpret_many(runs: list[dict]):
    """Several interpreter runs (dicts of `interpret`'s keyword arguments plus `kernel`) in one child
    process, so the interpreter's start-up is paid once; one Interpreted per run, in order."""
    from kinspect.bench.interpret import interpret_many as run

    return run(runs)


@dataclass(frozen=True)
class Repro:
    path: Path
    variant: Variant
    spec: object         # kinspect.replay.spec.ReplaySpec
    how: str             # how the script gets the kernel


def repro(variant: str, output: str | Path, *, interpret: bool = False, embed: bool = False, launch: int = 1,
          out_dir: str | Path = DEFAULT_OUT) -> Repro:
    """Write a standalone script that launches a captured variant's `launch`-th most frequent
    captured launch once (kinspect.replay.script); with `interpret` it runs under TRITON_INTERPRET."""
    from kinspect.replay import script
    from kinspect.replay.spec import from_variant

    v = find_variant(variant, out_dir, prefer=lambda x: x.ran)
    path = check_output_path(output, "script", [variant])
    spec = from_variant(v, launch)
    how = script.write(spec, path, interpret=interpret, embed=embed, label=variant, triton_version=v.triton_version)
    return Repro(path=path, variant=v, spec=spec, how=how)


def check_output_path(path: str | Path, what: str, items=()) -> Path:
    """A file kinspect may write (`what`: "script", "report"): in an existing, writable folder, not a
    folder itself, and outside every Triton cache or dump folder kinspect reads (the default cache, and
    the folders named in `items` that are not kinspect stores)."""
    from kinspect import sources
    from kinspect.store import is_store

    out = Path(path)
    folder = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        example = out / ("report.html" if what == "report" else "repro.py")
        raise UsageError(f"-o '{out}' is a folder; give a file name such as {example}")
    if not folder.is_dir():
        raise UsageError(f"cannot write '{out}': folder '{folder}' does not exist; create it or choose another -o")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"cannot write the {what} '{out}': folder '{folder}' is not writable; choose another -o")
    guarded = [sources.triton_cache_dir()] + [Path(i) for i in items if Path(i).is_dir() and not is_store(Path(i))]
    target = folder.resolve()
    for g in guarded:
        g = g.resolve()
        if target == g or g in target.parents:
            raise UsageError(f"-o '{out}' is inside '{g}', which kinspect only reads (a Triton cache or dump "
                             f"folder); write the {what} elsewhere")
    return out


def annotated_stage(variant: Variant, stage: str) -> str:
    """The stage's text with a `;; file:line  code` header wherever the Python line changes."""
    return "".join(annotated_chunks(variant, stage))


def annotated_chunks(variant: Variant, stage: str, size: int = 1 << 20):
    """annotated_stage in chunks of about `size` characters, in memory that does not grow with
    the stage: only the lines where the location changes are kept between the two passes."""
    from kinspect import ir
    from kinspect.analysis.stages import open_lines
    from kinspect.analysis.verdicts import Findings
    from kinspect.ir.records import Instruction
    from kinspect.render.report import annotate

    s = variant.stage(stage)
    if s is None or s.binary:
        stage_text(variant, stage)   # raises the right error
    locs, last = {}, None
    with open_lines(variant, s) as lines:
        for r in ir.parse(s.dialect, lines):
            if isinstance(r, Instruction) and r.loc is not None and (r.loc.file, r.loc.line) != last:
                last = locs[r.line] = (r.loc.file, r.loc.line)
    finder = Findings(variant, None, {}, None)
    with open_lines(variant, s) as lines:
        chunk, held = [], 0
        for text in annotate(lines, locs, finder.code):
            chunk.append(text)
            held += len(text)
            if held >= size:
                yield "".join(chunk)
                chunk, held = [], 0
        if chunk:
            yield "".join(chunk)


def report(items, *, variant: str | None = None, metrics=(), bench: bool = True, **kwargs):
    """An HTML report (kinspect.render.html.Report) over the variants `items` name, as `diff`
    collects them (a sweep with -p values, saved folders, stores, caches): the metric table, plots,
    and per variant its verdicts, resources, JIT time per stage, source and highlighted stages.
    `variant` names the one shown first (a row number, label or value; default the first, or the
    fastest when there are runtimes); `metrics` are what the sweep plot shows (render.plots.METRICS)."""
    from kinspect.analysis import analyse
    from kinspect.diff.compare import find_row
    from kinspect.errors import did_you_mean
    from kinspect.render.html import Report
    from kinspect.render.plots import METRICS

    if metrics:
        from kinspect.optional import need

        need("matplotlib", "--metric (the report's plots)")
    for m in metrics:
        if m not in METRICS:
            raise UsageError(f"--metric '{m}' is not one kinspect plots{did_you_mean(m, METRICS)}; "
                             f"choose from {', '.join(METRICS)}")
    result = diff(items, bench=bench, text=False, **kwargs)
    rows = result.rows
    reports = [result.reports.get(id(r.variant)) or analyse(r.variant) for r in rows]
    variants = [r.variant for r in rows]
    program = None
    if is_program(variants):    # a program's kernels: ranked, and no plot across them
        from kinspect.analysis.summary import kernel_rows, summarize

        program = kernel_rows([summarize(v, rep) for v, rep in zip(variants, reports)])
    if variant:
        chosen = find_row(variant, rows, option="--variant")
    else:
        timed = [i for i, r in enumerate(rows) if r.runtime]
        from kinspect.analysis.summary import variant_key

        first = program[0].busiest.key if program else None
        chosen = (min(timed, key=lambda i: rows[i].runtime.median_ms) if timed
                  else next((i for i, v in enumerate(variants) if variant_key(v) == first), 0))
    return Report(result, reports, chosen=chosen, metrics=metrics, program=program)
