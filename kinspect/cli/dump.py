"""`kinspect dump`: compile a kernel and keep every stage."""

from __future__ import annotations


import click

from kinspect import api
from kinspect.cli.main import CONTEXT, main
from kinspect.cli.options import arg_option, config_option, constexpr_option, launch_options, retarget_option, size_option, store_option, target_option, warps_stages_options
from kinspect.cli.output import echo, print_passes, print_stage


@main.command(context_settings=CONTEXT)
@click.argument("kernel")
@target_option
@constexpr_option
@arg_option
@warps_stages_options
@config_option
@launch_options
@size_option
@click.option("--stage", default=None, help="Print this stage (ttir, ttgir, llir, ptx, sass, amdgcn, ...).")
@click.option("--passes", "passes", is_flag=True,
              help="Also time each MLIR pass and keep the IR before each pass that changed it "
                   "(MLIR_ENABLE_TIMING, MLIR_ENABLE_DUMP), in the variant's passes/ folder.")
@retarget_option
@store_option()
def dump(kernel, target, constexprs, args, num_warps, num_stages, config, launch, from_, run_tests, size, stage, passes,
         retarget, out_dir):
    """Compile KERNEL and store every stage of that variant.

    KERNEL is a shipped kernel (kinspect ls --kernels), path/to/file.py:kernel_name, or
    package.module:kernel_name.
    """
    from kinspect.compile.args import parse_args, parse_constexprs
    from kinspect.render.terminal import summary

    from kinspect.cli import precheck

    consts = parse_constexprs(constexprs)
    parsed_args = parse_args(args)
    precheck.target(target)
    precheck.stage(stage, target)
    precheck.kernel(kernel, consts, args=parsed_args)
    result = api.dump(kernel, target=target, constexprs=consts, args=parsed_args,
                      num_warps=num_warps, num_stages=num_stages, size=size, out_dir=out_dir, retarget=retarget,
                      config=config, launch=launch, from_=from_, run_tests=run_tests)
    if stage:
        return print_stage(result.variant, stage)
    echo(summary(result.variant, label=result.label, target_note=result.target_note))
    if passes:
        from kinspect.render.terminal import passes_table

        found = print_passes(result.variant.path, kernel, target, consts, args, num_warps, num_stages, size)
        echo("\n" + passes_table(found))
