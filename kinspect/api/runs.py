"""Sweeps, reports, timing and replays: diff (of variants, of two runs, of two Tritons), the executor of a
sweep, report, bench, interpret, repro."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kinspect.analysis.lookup import find_variant
from kinspect.analysis.program_view import is_program
from kinspect.api.tuning import tuned
from kinspect.core.errors import KinspectError, UsageError
from kinspect.core.model import Variant
from kinspect.files.readonly import check_output_path
from kinspect.files.store import DEFAULT_OUT

if TYPE_CHECKING:
    from kinspect.bench.interpreted_check import Interpreted
    from kinspect.bench.measure import BenchResult
    from kinspect.diff.result import DiffResult
    from kinspect.render.html import Report


def diff(items, *, bench: bool = True, **kwargs) -> DiffResult:
    """Compile a sweep (and/or collect saved variants), tabulate their metrics and diff one stage of
    two of them: kinspect.diff.compare, whose keyword arguments it takes. With `bench`, variants
    compiled for the active GPU are timed on it (runtime, GB/s, % of copy bandwidth): shipped
    kernels at `size`, kernels from the user's file with their example arguments, and an autotuned
    kernel's configs beside what Triton's own autotuner picks."""
    import contextlib

    from kinspect.core.executor import fanned_out
    from kinspect.diff.compare import compare

    cluster, gpus = kwargs.pop("cluster", None), kwargs.pop("gpus", None)
    if bench and kwargs.get("timer") is None:
        from kinspect.bench.runtime import autotuner_pick, device_timer
        from kinspect.compile.loader import absolute, is_user_kernel

        own = frozenset(_absolute(i, absolute) for i in items if is_user_kernel(i))   # files the user named
        kwargs["timer"] = device_timer(kwargs.get("size"), own=own)
        kwargs.setdefault("picker", functools.partial(autotuner_pick, own=own) if kwargs["timer"] is not None
                          else None)
    fanning = cluster or (kwargs.get("timer") is not None and gpus != 1)
    with fanned_out(cluster, gpus) if fanning else contextlib.nullcontext() as ex:
        if ex is not None:
            kwargs["ex"] = ex
        return compare(list(items), **kwargs)


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


def report(items, *, variant: str | None = None, metrics=(), bench: bool = True, step=None,
           **kwargs) -> Report:
    """An HTML report (kinspect.render.html.Report) over the variants `items` name, as `diff`
    collects them (a sweep with -p values, saved folders, stores, caches): the metric table, plots,
    and per variant its verdicts, resources, JIT time per stage, source and highlighted stages.
    `variant` names the one shown first (a row number, label or value; default the first, or the
    fastest when there are runtimes); `metrics` are what the sweep plot shows (render.plots.METRICS).
    `step(text)`, if given, is told when the analysis starts (the CLI shows it)."""
    from kinspect.analysis import analyse_all
    from kinspect.diff.compare import find_row
    from kinspect.core.errors import did_you_mean
    from kinspect.render.html import EMBEDDED, Report, embedded_rows
    from kinspect.render.plots import METRICS

    if metrics:
        from kinspect.core.optional import need

        need("matplotlib", "--metric (the report's plots)")
    for m in metrics:
        if m not in METRICS:
            raise UsageError(f"--metric '{m}' is not one kinspect plots{did_you_mean(m, METRICS)}; "
                             f"choose from {', '.join(METRICS)}")
    result = diff(items, bench=bench, text=False, keep_reports=EMBEDDED, **kwargs)
    rows = result.rows
    variants = [r.variant for r in rows]
    program = None
    if is_program(variants):    # a program's kernels: ranked as vec-report ranks them, and no plot across them
        from kinspect.analysis.program_view import program_view

        program = program_view(variants, [r.metrics for r in rows])
    if variant:
        chosen = find_row(variant, rows, option="--variant")
    else:
        from kinspect.analysis.summary import variant_key

        timed = [i for i, r in enumerate(rows) if r.runtime]
        first = program.rows[0].busiest.key if program else None
        chosen = (min(timed, key=lambda i: rows[i].runtime.median_ms) if timed
                  else next((i for i, v in enumerate(variants) if variant_key(v) == first), 0))
    tunes = {i: t for i, v in enumerate(variants) if (t := tuned(v)) is not None}     # row -> kinspect.tune.outcome.Tuned
    shown = embedded_rows(rows, chosen, program)
    if step is not None:
        step(f"analysing {len(shown)} variant{'s' if len(shown) != 1 else ''}"
             + (f" in full (of {len(rows)}: the page carries {EMBEDDED})" if len(shown) < len(rows) else ""))
    todo = [i for i in shown if rows[i].report is None]
    reports = {i: rows[i].report for i in shown} | dict(zip(todo, analyse_all([rows[i].variant for i in todo])))
    return Report(result, reports, chosen=chosen, metrics=metrics, program=program, tunes=tunes)
