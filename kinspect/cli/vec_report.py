"""`kinspect vec-report`: figures and verdicts of a kernel or of a captured program."""

from __future__ import annotations


import click

from kinspect import api
from kinspect.cli.main import CONTEXT, main
from kinspect.cli.options import arg_option, checked, config_option, constexpr_option, launch_options, retarget_option, store_option, target_option, warps_stages_options
from kinspect.cli.progress import progress_line
from kinspect.cli.output import echo_report, tune_json, tune_section


@main.command(name="vec-report", context_settings=CONTEXT)
@click.argument("targets", nargs=-1)
@target_option
@constexpr_option
@arg_option
@warps_stages_options
@config_option
@launch_options
@click.option("--json", "as_json", is_flag=True,
              help="JSON: a list with one object per variant; for several kernels an object with the summary "
                   "table (kernels) and the detailed variants.")
@click.option("--lines", "show_lines", is_flag=True, help="Add a table of what each Python line produced per stage.")
@click.option("--top", "top", type=click.IntRange(min=0), default=3, show_default=True,
              help="Several kernels: the details of this many of the top kernels follow the summary.")
@click.option("--all", "every", is_flag=True, help="Several kernels: the details of every kernel.")
@click.option("-k", "--kernel", "names", multiple=True, metavar="NAME",
              help="Several kernels: the details of kernels whose name contains NAME (repeatable).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Processes that analyse variants kinspect has not summarized before (default: one per core).")
@click.option("--tune", "tune_top", type=click.IntRange(min=1), default=None, metavar="N",
              help="A captured program: tune the N kernels with the most headroom on the GPU (kinspect tune).")
@click.option("--trials", "tune_trials", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --tune: at most N of kinspect's candidates run per kernel (default 12).")
@click.option("--budget", "tune_budget", type=click.FloatRange(min=1), default=None, metavar="SECONDS",
              help="With --tune: stop widening a kernel's search after this many seconds (per kernel).")
@click.option("--counters", "counters", type=click.IntRange(min=1), is_flag=False, flag_value=10, default=None,
              metavar="[N]", help="A captured program: replay the N kernels with the most headroom (default 10) "
                                  "under Nsight Compute (ncu) and show their counters beside the findings.")
@click.option("--rank", "rank", type=click.IntRange(min=0), default=None, metavar="N",
              help="A program captured on several ranks: the kernels as rank N launched and timed them.")
@click.option("--device", "device", default=None, metavar="GPU",
              help="A captured program whose store keeps no measured ceilings: the GPU it ran on (H100 SXM, H200, "
                   "A100 80GB, ...), whose datasheet bandwidth then gives the % of bandwidth, said so.")
@retarget_option
@store_option(help="Store for kernels compiled here.")
def vec_report(targets, target, constexprs, args, num_warps, num_stages, config, launch, from_, as_json, show_lines,
               top, every, names, jobs, tune_top, tune_trials, tune_budget, counters, rank, device, retarget, out_dir):
    """Vector, matrix and register use of each variant, with verdicts tied to source lines.

    TARGETS are kernels (shipped names or file.py:name, compiled as in dump), kinspect stores, Triton
    cache or dump folders, or single .ttir/.ttgir/.ll/.llir/.ptx/.sass/.amdgcn/.s/.asm files.
    With none: ./kinspect-out if present, else the Triton cache. Several kernels (a captured program)
    open with one table: a row per kernel, by GPU time when captured with --time, else by the worst
    finding; then the details of the top kernels.
    """
    from kinspect.compile.args import parse_args, parse_constexprs

    kwargs = dict(target=target, constexprs=parse_constexprs(constexprs), args=parse_args(args), num_warps=num_warps,
                  num_stages=num_stages, out_dir=out_dir, config=config, launch=launch, from_=from_)
    retarget = checked(retarget)
    from kinspect.cli import precheck

    precheck.target(target)
    for item in targets:
        precheck.item(item, kwargs["constexprs"], args=kwargs["args"], store=out_dir)
    import sys

    from kinspect.cli.progress import Steps

    # on a terminal, a line on stderr per step once the command has run 2 s (a compile takes 4-9 s here);
    # a log or a pipe gets the report alone, as before
    step = Steps() if sys.stderr.isatty() and not as_json else Steps.silent()
    try:
        return _vec_report(targets, kwargs, retarget, as_json, show_lines, top, every, names, jobs, tune_top,
                           tune_trials, tune_budget, counters, rank, device, out_dir, step)
    finally:
        step.close()


def _vec_report(targets, kwargs, retarget, as_json, show_lines, top, every, names, jobs, tune_top, tune_trials,
                tune_budget, counters, rank, device, out_dir, step):
    import json
    import shutil

    from kinspect.render.report import line_table, vec_report as render

    step("loading and compiling the kernel" if targets and not all(_saved(t) for t in targets)
         else "reading the variants")
    if not retarget:
        variants = api.resolve_variants(list(targets), **kwargs)
        where = _where(targets, variants)
        if rank is not None:
            variants = api.one_rank(variants, rank)
            where += f" (rank {rank})"
        step(f"analysing {len(variants)} variant{'s' if len(variants) != 1 else ''}")
        if api.is_program(variants):
            if (tune_trials or tune_budget) and not tune_top:
                raise click.UsageError("--trials and --budget limit the tune of each kernel: give them with --tune N")
            from kinspect.render.measured import section
            from kinspect.render.program import summary

            found = api.program(variants, top=top, every=every, names=names, where=where,
                                jobs=jobs, counters=counters or 0, device=device)
            tunes = api.tune_program(found, tune_top, out_dir=out_dir, jobs=jobs, trials=tune_trials,
                                     budget_s=tune_budget, progress=progress_line) if tune_top else []
            if as_json:
                out = found.to_json()
                if tune_top:
                    out["tune"] = [tune_json(k, t) for k, t in tunes]
                click.echo(json.dumps(out, indent=1))
                return
            width = shutil.get_terminal_size((160, 40)).columns
            parts = [summary(found.rows, where=found.where, width=width, shown=len(found.details), extras=found.extras,
                             sol=found.sol.to_json() if found.sol is not None else None,
                             detailed=[d.variant.kernel for d in found.details])]
            if counters:
                parts.append(section(found.to_json()))
            parts += [render(r) + (f"\n  per line:\n{line_table(r)}" if show_lines else "") for r in found.details]
            if tune_top:
                parts.append(tune_section(tunes))
            echo_report("\n\n".join(parts))
            return
        if tune_top or tune_trials or tune_budget:
            raise click.UsageError("--tune tunes the kernels of a captured program (a store of several kernels, "
                                   "captured with --time); one variant: kinspect tune VARIANT")
        if counters:
            raise click.UsageError("--counters measures the kernels of a captured program (a store of several "
                                   "kernels, captured with --time)")
        reports = api.vec_report_of(variants)
    else:
        reports = api.vec_report(list(targets), retarget=retarget, **kwargs)
    if as_json:
        click.echo(json.dumps([r.to_json() for r in reports], indent=1))
        return
    if not reports:
        click.echo("no variants found")
    echo_report("\n\n".join(render(r) + (f"\n  per line:\n{line_table(r)}" if show_lines else "") + _tuned(r.variant)
                             for r in reports))


def _saved(item: str) -> bool:
    from pathlib import Path

    return Path(item).exists() and not item.endswith(".py")


def _tuned(variant) -> str:
    """The tune stored beside a variant, in a few lines (kinspect tune wrote it)."""
    found = api.tuned(variant)
    if found is None:
        return ""
    from kinspect.render.tune import summary

    r = found[0]
    return (f"\n  tuned ({len(r.trials)} candidates, {r.budget or 'no limit'}):\n" +
            "\n".join(f"    {line}" for line in summary(*found)))


def _where(targets, variants) -> str:
    """What a program table covers, for its header."""
    if len(targets) == 1:
        return targets[0]
    if not targets:
        from kinspect.files.sources import default_dir

        return str(default_dir())
    return f"{len(targets)} inputs"
