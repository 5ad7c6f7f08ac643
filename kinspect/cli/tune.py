"""`kinspect tune`: search configs of one captured kernel."""

from __future__ import annotations


import click

from kinspect import api
from kinspect.cli.main import CONTEXT, main
from kinspect.cli.options import executor_options, store_option
from kinspect.cli.progress import progress_line
from kinspect.cli.output import echo


@main.command(context_settings=CONTEXT)
@click.argument("variant")
@click.option("--trials", type=click.IntRange(min=1), default=None, metavar="N",
              help="Run at most N of kinspect's candidates (default 12 when no --budget).")
@click.option("--budget", "budget_s", type=click.FloatRange(min=1), default=None, metavar="SECONDS",
              help="Stop widening the search after this many seconds.")
@click.option("--no-compare", "no_compare", is_flag=True,
              help="Do not time Inductor's own and max_autotune's configs beside kinspect's.")
@click.option("-p", "constexprs", multiple=True, metavar="K=V", help="FILE:KERNEL: a constexpr of its example launch.")
@click.option("--arg", "args", multiple=True, metavar="NAME=TYPE", help="FILE:KERNEL: a runtime argument.")
@click.option("--size", default=None, help="A shipped kernel's example size: N or MxN.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Compile in at most this many processes.")
@click.option("--json", "as_json", is_flag=True, help="The tune as one JSON object.")
@executor_options
@store_option(help="The store that holds VARIANT (a kernel launched here is captured into it).")
def tune(variant, trials, budget_s, no_compare, constexprs, args, size, jobs, as_json, out_dir):
    """Turn VARIANT's findings into a measured fix: candidates from its findings (block sizes, num_warps,
    num_stages within what the kernel accepts), widened step by step within --trials/--budget, pruned by
    their compiled code's resources, replayed on the captured launch, checked against the original's
    output and timed on the GPU; the winner with its reason, and Inductor's own and max_autotune's picks.

    VARIANT: a variant `kinspect capture` recorded (name or folder), or a kernel (shipped, or FILE:KERNEL
    with example values) launched once here first. Example: kinspect tune triton_poi_fused_add_0 --store out
    """
    from kinspect.compile.args import parse_args, parse_constexprs

    meta = click.get_current_context().meta
    found = api.tune(variant, out_dir=out_dir, trials=trials, budget_s=budget_s, compare=not no_compare,
                     progress=None if as_json else progress_line, jobs=jobs, constexprs=parse_constexprs(constexprs),
                     args=parse_args(args), size=size, cluster=meta.get("cluster"), gpus=meta.get("gpus"))
    if as_json:
        from kinspect.render import json

        click.echo(json.dumps(json.tune_json(found)))
        return
    from kinspect.render.tune import render

    echo(render(found.result, found.outcome))
