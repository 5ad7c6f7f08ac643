"""`kinspect vec-report`: figures and verdicts of a kernel or of a captured program."""

from __future__ import annotations


import click

from kinspect import api
from kinspect.cli.main import CONTEXT, main
from kinspect.cli.options import (arg_option, checked, config_option, constexpr_option, executor_options, launch_options,
                                  retarget_option, store_option, target_option, warps_stages_options)
from kinspect.cli.progress import progress_line
from kinspect.cli.output import echo_report


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
@executor_options
@store_option(help="Store for kernels compiled here.")
def vec_report(targets, target, constexprs, args, num_warps, num_stages, config, launch, from_, run_tests, as_json,
               show_lines,
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
                  num_stages=num_stages, out_dir=out_dir, config=config, launch=launch, from_=from_,
                  run_tests=run_tests)
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
        step("loading and compiling the kernel" if targets and not all(_saved(t) for t in targets)
             else "reading and analysing the variants")
        found = api.vec_report_view(list(targets), retarget=checked(retarget), top=top, every=every, names=names,
                                    jobs=jobs, tune=tune_top, trials=tune_trials, budget_s=tune_budget,
                                    counters=counters or 0, rank=rank, device=device, progress=progress_line,
                                    cluster=click.get_current_context().meta.get("cluster"),
                                    gpus=click.get_current_context().meta.get("gpus"), **kwargs)
    finally:
        step.close()
    _show(found, as_json, show_lines, counters)


def _show(found, as_json: bool, show_lines: bool, counters) -> None:
    import shutil

    from kinspect.render import json
    from kinspect.render.report import page

    if as_json:
        click.echo(json.dumps(json.program(found.program, found.tunes) if found.program is not None
                              else json.vec_report(found.reports)))
        return
    echo_report(page(found.reports, program=found.program, tunes=found.tunes, stored=found.stored, lines=show_lines,
                     counters=bool(counters), width=shutil.get_terminal_size((160, 40)).columns))


def _saved(item: str) -> bool:
    from pathlib import Path

    return Path(item).exists() and not item.endswith(".py")
