"""`kinspect show`: one stage of a variant."""

from __future__ import annotations


import click

from kinspect import api
from kinspect.cli.main import CONTEXT, main
from kinspect.cli.options import store_option, values_option
from kinspect.cli.output import print_stage


@main.command(context_settings=CONTEXT)
@click.argument("variant")
@click.option("--stage", required=True, help="ttir, ttgir, llir, ptx, sass, amdgcn, asm, ...")
@click.option("--lines", is_flag=True, help="Mark where each Python line's code starts.")
@click.option("--raw", is_flag=True, help="The stage's file exactly as stored (SASS without its control-code column).")
@values_option
@store_option(help="Store to look in (a Triton cache, a dump folder or a trace too).")
def show(variant, stage, lines, raw, values, out_dir):
    """Print one stage of VARIANT, highlighted, optionally annotated with Python lines. SASS shows
    each instruction's scheduling control codes (wait:read:write:yield:stall) before it.

    VARIANT is a folder (a kinspect variant, one Triton cache entry, one TRITON_KERNEL_DUMP folder), a
    trace or stage file holding one variant, or a folder name, kernel name (with -p values to pick one
    of its variants), unique prefix or row number of `kinspect ls` in the store (--store, which may be
    a Triton cache, a dump folder or a trace too).
    """
    if raw and lines:
        raise click.UsageError("--raw prints the stage as stored; --lines adds headers to it: choose one")
    from kinspect.compile.args import parse_constexprs

    v = api.find_variant(variant, out_dir, values=parse_constexprs(values))
    print_stage(v, stage, lines=lines, raw=raw)
