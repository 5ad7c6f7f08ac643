"""`kinspect diff`: a sweep of variants, their table and the diff of a pair."""

from __future__ import annotations


import click

from kinspect import api
from kinspect.cli.main import CONTEXT, main
from kinspect.cli.options import store_option, sweep_kwargs, sweep_options
from kinspect.cli.progress import ProgressBar
from kinspect.cli.output import echo
from kinspect.core.errors import UsageError


@main.command(context_settings=CONTEXT)
@sweep_options
@click.option("--stage", default=None, help="Stage to diff (default: ptx, amdgcn or the CPU assembly).")
@click.option("--pair", default=None, metavar="A,B",
              help="Which two variants to diff: row numbers or values, e.g. --pair 1,3 or --pair 32,128 "
                   "(default: the first two). Of two runs: the KERNEL whose stages to diff (default: the top "
                   "regression).")
@click.option("--steps", default=None, metavar="N[,M]",
              help="Of two runs: the steps each ran, for GPU time per step (default: the greatest common divisor "
                   "of its kernels' call counts, said as a guess).")
@click.option("--python", "python", default=None, metavar="PYTHON",
              help="Compile the kernel with this interpreter's Triton too (another environment with another "
                   "Triton and torch), and compare the two: A is PYTHON's, B this one's.")
@click.option("--side-by-side", "side", is_flag=True, help="Show the diff in two columns.")
@click.option("--table", "table_only", is_flag=True, help="Only the metric table, no stage diff.")
@click.option("--json", "as_json", is_flag=True, help="Everything as one JSON object.")
@store_option(help="Store for variants compiled here, and where variant names are looked up.")
def diff(items, constexprs, targets, num_warps, num_stages, configs, args, size, no_bench, retarget, jobs, stage, pair,
         steps, python, side, table_only, as_json, out_dir):
    """Compile a sweep and compare its variants: a metric table and a normalized diff of one stage.

    ITEMS are kernels (shipped names or file.py:name), compiled for every combination of the -p,
    -t, --num-warps and --num-stages values (and, for an autotuned kernel, of its configs); two
    source files (a.py:kern b.py:kern); or saved variants: kinspect stores, Triton caches, dump
    folders, stage files, variant names in the store.

    Two runs of a program (two stores `kinspect capture` wrote, two traces, or one of each) are compared
    kernel by kernel instead: matched across the runs, ranked by GPU time lost per step, with the
    stage diffs and the story of the top regression. With --python, one kernel is compiled by this
    Triton and another interpreter's, and the two compared.

    Example: kinspect diff fused_mm_softmax -p BLOCK_SIZE=32,64,128 -t cuda:90

    Example: kinspect diff before/ after/ --pair triton_poi_fused_add_3

    Example: kinspect diff kern.py:kern --python ../old/.venv/bin/python -t cuda:90
    """
    sweeping = constexprs or num_warps or num_stages or configs or args or retarget
    if python or (len(items) == 2 and not sweeping and all(api.is_run(i) for i in items)):
        return _two(items, python=python, steps=steps, pair=pair, stage=stage, side=side, table_only=table_only,
                    as_json=as_json, out_dir=out_dir, targets=targets, constexprs=constexprs, num_warps=num_warps,
                    num_stages=num_stages, args=args, size=size, sweeping=sweeping)
    if steps:
        raise UsageError("--steps applies to a diff of two runs (two captured stores or traces)")
    kwargs = sweep_kwargs(items, constexprs, targets, num_warps, num_stages, configs, args, size, no_bench, retarget,
                           jobs, out_dir)
    import json
    import shutil

    from kinspect.render.sweep import render
    from kinspect.render.terminal import clean, use_color

    with ProgressBar() as progress:
        result = api.diff(kwargs.pop("items"), **kwargs, stage=stage, pair=pair, out_dir=out_dir, progress=progress,
                          text=not table_only)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=1, default=str))
        return
    text = render(result, side=side, width=shutil.get_terminal_size((160, 40)).columns)
    if use_color() and text.count("\n") > 60:
        click.echo_via_pager(clean(text, lines=True))
    else:
        echo(text)


def _two(items, *, python, steps, pair, stage, side, table_only, as_json, out_dir, targets, constexprs, num_warps,
         num_stages, args, size, sweeping):
    """Two runs of a program, or one kernel under two Tritons (--python)."""
    import json
    import shutil

    from kinspect.render.program_diff import render

    if stage:
        raise UsageError("--stage picks a stage of a sweep's pair; a diff of two runs or two Tritons shows "
                               "the machine code and the first stage that differs")
    if python:
        from kinspect.compile.args import parse_args, parse_int_list, parse_sweep

        if len(items) != 1:
            raise UsageError(f"--python compiles one kernel (FILE:KERNEL or a shipped name); got {len(items)} "
                                   f"items")
        if steps or pair:
            raise UsageError("--steps and --pair apply to a diff of two runs, not to --python")
        sweep = parse_sweep(constexprs)
        many = [k for k, vs in sweep.items() if len(vs) > 1]
        if many or (targets and "," in targets):
            raise UsageError("--python compares one variant under two Tritons: give one value per -p and one "
                                   "-t")
        warps = parse_int_list(num_warps, "--num-warps") if num_warps else [None]
        stages = parse_int_list(num_stages, "--num-stages") if num_stages else [None]
        if len(warps) > 1 or len(stages) > 1:
            raise UsageError("--python compares one variant: give one --num-warps and one --num-stages")
        parse_args(args)        # a bad --arg fails here, before either interpreter compiles
        result = api.diff_tritons(items[0], python, target=targets, constexprs={k: v[0] for k, v in sweep.items()},
                                  args=args, num_warps=warps[0], num_stages=stages[0], size=size,
                                  out_dir=out_dir, pair_text=not table_only)
    else:
        counts = [None, None]
        if steps:
            parts = steps.split(",")
            if len(parts) > 2 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
                raise UsageError(f"--steps '{steps}': give N (both runs) or N,M (A's and B's), whole numbers "
                                       f"above 0")
            counts = [int(parts[0]), int(parts[-1])]
        result = api.diff_runs(items[0], items[1], steps=tuple(counts), pair=pair, text=not table_only)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=1, default=str))
        return
    echo(render(result, side=side, width=shutil.get_terminal_size((160, 40)).columns))
