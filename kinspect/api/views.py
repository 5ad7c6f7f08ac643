"""What vec-report shows: variants resolved from a command line, their reports, or the program view of
several kernels (with its counters and tunes); the JSON Schema of every command's --json."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kinspect.analysis.derived import llir_stage, retargeted
from kinspect.api.tuning import tune_program, tuned
from kinspect.core.executor import fanned_out
from kinspect.compile.dump import dump
from kinspect.core.errors import KinspectError, UsageError
from kinspect.core.model import Variant
from kinspect.files.store import DEFAULT_OUT

if TYPE_CHECKING:
    from kinspect.analysis import VariantReport
    from kinspect.files.sources import Listing
    from kinspect.tune.outcome import Tuned


def list_variants(path: str | Path | None = None) -> Listing:
    """(what was listed, variants) for a kinspect store, a Triton cache or a dump folder. Read-only."""
    from kinspect.files import sources

    return sources.discover(path)


def resolve_variants(items, *, target=None, constexprs=None, args=None, num_warps=None, num_stages=None,
                     size=None, out_dir: str | Path = DEFAULT_OUT, config: int | None = None, launch: int | None = None,
                     from_: str | None = None, run_tests: bool = True) -> list[Variant]:
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
                                 from_=from_, run_tests=run_tests).variant)
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
class VecReport:
    """What `kinspect vec-report` shows: the program view of several kernels (with its tunes under --tune),
    or the reports of each variant (with the tune stored beside each, if any)."""

    reports: tuple[VariantReport, ...] = ()     # one per variant (no program)
    program: ProgramView | None = None          # several kernels
    tunes: tuple[Tuned, ...] | None = None      # a kernel's each, tuned by --tune N
    stored: tuple[Tuned | None, ...] = ()       # per report: the tune stored beside its variant


def vec_report_view(items, *, retarget=(), top: int = 3, every: bool = False, names=(), jobs: int | None = None,
                    tune: int | None = None, trials: int | None = None, budget_s: float | None = None,
                    counters: int = 0, rank: int | None = None, device: str | None = None, progress=None,
                    cluster: str | None = None, gpus: int | None = None, **kwargs) -> VecReport:
    """vec-report's decision: several kernels (a captured program) give the program view (`top`, `every`,
    `names`, `counters` as in `program`) and, with `tune` N, the tunes of the N kernels with the most
    headroom (`trials`, `budget_s` per kernel); the tunes and the counters run on every visible GPU, the
    first `gpus` (kinspect.core.executor.fan_out), the tunes on a `cluster`'s; `rank` N keeps what rank N
    of a distributed program launched (one_rank); `device` as in `program`; one kernel gives a report per
    variant (with `retarget`, each variant's LLVM IR compiled for those CPUs is reported after it). Options
    that apply to the other case are a UsageError."""
    if retarget:
        for what, given in (("--tune", tune or trials or budget_s), ("--counters", counters),
                            ("--gpus/--cluster", cluster or gpus),
                            ("--rank", rank is not None)):
            if given:
                raise UsageError(f"{what} applies to the kernels of a captured program; --retarget reports variants")
        reports = vec_report(list(items), retarget=retarget, **kwargs)
        return VecReport(reports=tuple(reports), stored=tuple(tuned(r.variant) for r in reports))
    variants = resolve_variants(list(items), **kwargs)
    where = _where(items, variants)
    if rank is not None:
        variants = one_rank(variants, rank)
        where += f" (rank {rank})"
    if is_program(variants):
        if (trials or budget_s) and not tune:
            raise UsageError("--trials and --budget limit the tune of each kernel: give them with --tune N")
        if (cluster or gpus) and not (tune or counters):
            raise UsageError("--gpus and --cluster say where --tune and --counters run: give them with --tune N or "
                             "--counters")
        if cluster and counters:
            raise UsageError("--counters replays under ncu on this host's GPUs, which read the store here: leave "
                             "--cluster to --tune (run --counters without it)")
        # the counters' GPU workers serve the tunes too (--cluster goes with --tune alone)
        with fanned_out(None, gpus) if counters and gpus != 1 else contextlib.nullcontext() as ex:
            found = program(variants, top=top, every=every, names=names, where=where, jobs=jobs, counters=counters,
                            device=device, ex=ex)
            tunes = tune_program(found, tune, out_dir=kwargs.get("out_dir", DEFAULT_OUT), jobs=jobs, trials=trials,
                                 budget_s=budget_s, progress=progress, cluster=cluster, gpus=gpus,
                                 ex=ex) if tune else None
        return VecReport(program=found, tunes=None if tunes is None else tuple(tunes))
    if (cluster or gpus) and not (tune or trials or budget_s):
        raise UsageError("--gpus and --cluster apply to --tune and --counters of a captured program (a store of "
                         "several kernels); one variant: kinspect tune VARIANT --gpus N")
    if tune or trials or budget_s:
        raise UsageError("--tune tunes the kernels of a captured program (a store of several kernels, captured with "
                         "--time); one variant: kinspect tune VARIANT")
    if counters:
        raise UsageError("--counters measures the kernels of a captured program (a store of several kernels, "
                         "captured with --time)")
    reports = vec_report_of(variants)
    return VecReport(reports=tuple(reports), stored=tuple(tuned(r.variant) for r in reports))


def _where(items, variants) -> str:
    """What a program table covers, for its header."""
    items = list(items)
    if len(items) == 1:
        return items[0]
    if not items:
        from kinspect.files.sources import default_dir

        return str(default_dir())
    return f"{len(items)} inputs"


# The program view lives with the analysis it is made of; the api keeps its names for users and the CLI.
from kinspect.analysis.program_view import ProgramView, is_program, ranked  # noqa: E402,F401  (ranked, is_program: for users)

Program = ProgramView    # its name before it moved


def one_rank(variants: list[Variant], rank: int) -> list[Variant]:
    """The variants as rank `rank` of a distributed program launched them (kinspect.analysis.ranks)."""
    from kinspect.analysis.ranks import for_rank, ranks_of

    ranks = ranks_of(variants)
    if rank not in ranks:
        raise UsageError(f"--rank {rank}: " + (f"the capture has ranks {', '.join(map(str, ranks))}" if ranks else
                                               "the capture recorded no rank (one process, or RANK was not set)"))
    return for_rank(variants, rank)


def program(variants: list[Variant], *, top: int = 3, every: bool = False, names=(), where: str = "",
            jobs: int | None = None, counters: int = 0, device: str | None = None, ex=None) -> ProgramView:
    """Rank the kernels of `variants` (kinspect.analysis.summary; by headroom when the capture timed
    them, kinspect.analysis.program_view.ranked) and analyse in full the busiest variant of the `top` first
    kernels, of every kernel, or of the kernels whose name contains one of `names`. Each timed kernel's
    speed of light comes with it (kinspect.analysis.sol); with `counters`, the busiest variants of that
    many kernels with the most headroom are replayed under Nsight Compute first (measure_counters; on
    the GPUs of `ex`, a kinspect.core.executor, at once).
    `device` names the GPU the program ran on, for a store that keeps no measured ceilings (its datasheet
    bandwidth, said so)."""
    import dataclasses

    from kinspect.analysis.sol import for_program

    from kinspect.analysis import analyse
    from kinspect.analysis.program_view import program_view
    from kinspect.analysis.summary import summaries
    from kinspect.core.errors import NotFound, did_you_mean

    metrics = summaries(variants, jobs=jobs)
    view = program_view(variants, metrics, where=where, sol=for_program(variants, device))
    if counters:
        failed = measure_counters(view.sol, view.busiest, counters, ex)
        view = program_view(variants, metrics, where=where, sol=for_program(variants, device),
                            counters_failed=failed)   # measured bytes replace the estimates
    rows = view.rows
    if names:
        chosen = [r for r in rows if any(n.lower() in r.kernel.lower() for n in names)]
        if not chosen:
            raise NotFound(f"no kernel matches {', '.join(names)}{did_you_mean(names[0], [r.kernel for r in rows])}; "
                           f"kernels: {', '.join(r.name for r in rows[:6])}{' ...' if len(rows) > 6 else ''}")
    else:
        chosen = rows if every else rows[:top]
    return dataclasses.replace(view, details=tuple(analyse(view.busiest[r.kernel]) for r in chosen
                                                   if r.kernel in view.busiest))


def measure_counters(sol, busiest: dict, top: int, ex=None) -> dict:
    """Replay the busiest variant of the `top` kernels with the most headroom under Nsight Compute
    (kinspect.bench.ncu); their counters are written beside them. Returns {kernel: why nothing was
    measured} for those that failed; ncu missing or unable to read counters is a KinspectError. `ex`: a
    local executor of several GPUs splits them over its GPUs (kinspect.bench.ncu.measure_on)."""
    from kinspect.analysis.sol import by_headroom
    from kinspect.bench.ncu import measure_on

    if not sol.speeds:
        raise UsageError("--counters measures the kernels with the most headroom, and no kernel has GPU time: "
                         "capture the program with `kinspect capture --time`")
    kernels = [k for k in by_headroom(sol.speeds) if k in busiest][:top]
    got = measure_on([busiest[k].path for k in kernels], ex)
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


def json_schema(command: str | None = None) -> dict:
    """The JSON Schema of `kinspect COMMAND --json` (kinspect.render.json, made from the records the JSON
    is made of); with no command, {"kinspect_json": VERSION, "commands": {command: its schema}}."""
    from kinspect.core.errors import did_you_mean
    from kinspect.render import json

    if command is None:
        return {"kinspect_json": json.VERSION, "commands": {c: json.command_schema(c) for c in json.COMMANDS}}
    if command not in json.COMMANDS:
        raise UsageError(f"'{command}' has no --json output{did_you_mean(command, list(json.COMMANDS))}; commands "
                         f"with one: {', '.join(json.COMMANDS)}")
    return json.command_schema(command)
