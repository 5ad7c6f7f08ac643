"""`kinspect diff`: a sweep of variants, their table and the diff of a pair."""

from __future__ import annotations


import click

from kinspect import api
from kinspect.cli.main import CONTEXT, main
from kinspect.cli.options import store_option, sweep_kwargs, sweep_options
from kinspect.cli.progress import ProgressBar
from kinspect.cli.output import echo


@main.command(context_settings=CONTEXT)
@sweep_options
@click.option("--stage", default=None, help="Stage to diff (default: ptx, amdgcn or the CPU assembly).")
@click.option("--pair", default=None, metavar="A,B",
              help="Which two variants to diff: row numbers or values, e.g. --pair 1,3 or --pair 32,128 "
                   "(default: the first two).")
@click.option("--side-by-side", "side", is_flag=True, help="Show the diff in two columns.")
@click.option("--table", "table_only", is_flag=True, help="Only the metric table, no stage diff.")
@click.option("--json", "as_json", is_flag=True, help="Everything as one JSON object.")
@store_option(help="Store for variants compiled here, and where variant names are looked up.")
def diff(items, constexprs, targets, num_warps, num_stages, configs, args, size, no_bench, retarget, jobs, stage, pair,
         side, table_only, as_json, out_dir):
    """Compile a sweep and compare its variants: a metric table and a normalized diff of one stage.

    ITEMS are kernels (shipped names or file.py:name), compiled for every combination of the -p,
    -t, --num-warps and --num-stages values (and, for an autotuned kernel, of its configs); two
    source files (a.py:kern b.py:kern); or saved variants: kinspect stores, Triton caches, dump
    folders, stage files, variant names in the store.

    Example: kinspect diff fused_mm_softmax -p BLOCK_SIZE=32,64,128 -t cuda:90
    """
    kwargs = sweep_kwargs(items, constexprs, targets, num_warps, num_stages, configs, args, size, no_bench, retarget,
                           jobs, out_dir)
    import shutil

    from kinspect.render.sweep import render
    from kinspect.render.terminal import clean, use_color

    with ProgressBar() as progress:
        result = api.diff(kwargs.pop("items"), **kwargs, stage=stage, pair=pair, out_dir=out_dir, progress=progress,
                          text=not table_only)
    if as_json:
        from kinspect.render import json

        click.echo(json.dumps(json.diff(result)))
        return
    text = render(result, side=side, width=shutil.get_terminal_size((160, 40)).columns)
    if use_color() and text.count("\n") > 60:
        click.echo_via_pager(clean(text, lines=True))
    else:
        echo(text)
