"""`kinspect bench`: time a kernel on the device beside its torch reference."""

from __future__ import annotations

import sys

import click

from kinspect import api
from kinspect.cli.main import CONTEXT, main
from kinspect.cli.options import arg_option, constexpr_option, size_option, store_option, warps_stages_options
from kinspect.cli.output import echo, print_passes


@main.command(context_settings=CONTEXT)
@click.argument("kernel")
@click.option("-t", "--target", default=None, metavar="T", help="device (the default): the active GPU or CPU backend.")
@constexpr_option
@arg_option
@warps_stages_options
@size_option
@click.option("--interpret", is_flag=True,
              help="No device needed: run under TRITON_INTERPRET at a small size and check against torch.")
@click.option("--profile", "profile", default=None, metavar="TRACE.json",
              help="Also run under torch.profiler with the kernel as the op kinspect::KERNEL; write a "
                   "Chrome/Perfetto trace and print the profiler's table.")
@click.option("--bytes", "bytes_moved", type=click.IntRange(min=1), default=None,
              help="Bytes the kernel moves, for GB/s (shipped kernels declare it).")
@click.option("--flops", type=click.IntRange(min=1), default=None, help="FLOPs the kernel does, for TFLOP/s.")
@click.option("--passes", "passes", is_flag=True,
              help="Also time each MLIR pass and keep the IR before each pass that changed it (as dump --passes).")
@click.option("--no-reference", "no_reference", is_flag=True, help="Do not time the torch reference.")
@click.option("--no-compile", "no_compile", is_flag=True, help="Time the torch reference eagerly only.")
@click.option("--warmup", "warmup_ms", type=click.IntRange(min=0), default=25, show_default=True, metavar="MS")
@click.option("--rep", "rep_ms", type=click.IntRange(min=1), default=100, show_default=True, metavar="MS",
              help="About how long to keep timing runs.")
@click.option("--json", "as_json", is_flag=True, help="Everything as one JSON object.")
@store_option()
def bench(kernel, target, constexprs, args, num_warps, num_stages, size, interpret, profile, bytes_moved, flops,
          passes, no_reference, no_compile, warmup_ms, rep_ms, as_json, out_dir):
    """Time KERNEL on the device: first call (JIT stages, cold and warm) vs steady state, GB/s and
    TFLOP/s against what the device measured, torch's time, correctness, and the asm beside it.

    Example: kinspect bench softmax --size 8192x8192 --profile trace.json
    """
    from kinspect.compile.args import parse_args, parse_constexprs
    from kinspect.render import json
    from kinspect.render.bench import render, render_interpreted

    consts = parse_constexprs(constexprs)
    if interpret:
        if profile or passes:
            raise click.UsageError(f"{'--profile' if profile else '--passes'} needs a device; --interpret runs on the CPU")
        result = api.interpret(kernel, constexprs=consts, args=args, size=size, num_warps=num_warps,
                               num_stages=num_stages, out_dir=out_dir)
        echo(json.dumps(json.interpreted(result)) if as_json else render_interpreted(result))
    else:
        result = api.bench(kernel, target=target, constexprs=consts, args=parse_args(args), num_warps=num_warps,
                           num_stages=num_stages, size=size, out_dir=out_dir, references=not no_reference,
                           compiled_reference=not no_compile, bytes_moved=bytes_moved, flops=flops,
                           warmup_ms=warmup_ms, rep_ms=rep_ms, profile=profile)
        found = print_passes(result.variant.path, kernel, target, consts, args, num_warps, num_stages, size) if passes else None
        if as_json:
            click.echo(json.dumps(json.bench(result, found)))
        else:
            echo(render(result))
            if found:
                from kinspect.render.terminal import passes_table

                echo("\n" + passes_table(found))
    if result.check is not None and not result.check.ok:
        sys.exit(1)
