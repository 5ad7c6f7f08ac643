"""`kinspect repro`: a script that replays a captured launch."""

from __future__ import annotations


import click

from kinspect import api
from kinspect.cli.main import CONTEXT, main
from kinspect.cli.options import store_option, values_option
from kinspect.cli.output import echo


@main.command(context_settings=CONTEXT)
@click.argument("variant")
@click.option("-o", "--output", default="repro.py", show_default=True, help="The script to write.")
@click.option("--interpret", is_flag=True,
              help="Run under TRITON_INTERPRET on the CPU (the script sets it before importing triton).")
@click.option("--embed", is_flag=True,
              help="Carry the kernel's captured source even where its file could be imported (to share the script).")
@click.option("--launch", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="Replay the N-th most frequent captured argument signature.")
@values_option
@store_option(help="Store to look the variant up in.", writes_file=True)
def repro(variant, output, interpret, embed, launch, values, out_dir):
    """Write a standalone script that launches a captured VARIANT once with its captured arguments:
    fresh tensors of the captured shapes, dtypes and strides, the captured scalars, constexprs,
    options and grid. It needs torch and triton only.

    VARIANT is a variant folder, or a folder name, kernel name (with -p values to pick one of its
    variants), unique prefix or row number of `kinspect ls` in the store.

    Example: kinspect repro triton_red_fused_sum_8 -o repro.py && python repro.py
    """
    from kinspect.render.terminal import clean

    from kinspect.compile.args import parse_constexprs

    r = api.repro(variant, output, interpret=interpret, embed=embed, launch=launch, out_dir=out_dir,
                  values=parse_constexprs(values))
    echo(f"wrote {r.path}: {r.spec.kernel}, {r.spec.counted()}: {r.spec.describe()}")
    echo(f"  the script {clean(r.how)}")
    run = f"python {r.path}"
    echo(f"  run it: {run}" + ("" if interpret else f"  (no GPU: TRITON_INTERPRET=1 {run})"))
