"""`kinspect report`: one HTML file of a sweep or a program."""

from __future__ import annotations


import click

from kinspect import api
from kinspect.cli.main import CONTEXT, main
from kinspect.cli.options import store_option, sweep_kwargs, sweep_options
from kinspect.cli.progress import ProgressBar, Steps
from kinspect.cli.output import echo


@main.command(context_settings=CONTEXT)
@sweep_options
@click.option("-o", "--output", "output", default="kinspect-report.html", show_default=True,
              help="The HTML file to write (one self-contained file).")
@click.option("--variant", default=None, metavar="N|VALUE",
              help="The variant shown first: a row number or a value such as 64 (default: the first, or the "
                   "fastest when the variants were timed).")
@click.option("--metric", "metrics", multiple=True, metavar="NAME",
              help="What the sweep plot shows (repeatable): runtime, registers, instructions, code, jit, shared, "
                   "occupancy, spills, vector, matrix, gbps, tflops (default: runtime when timed, else registers, "
                   "instructions, code and jit).")
@store_option(help="Store for variants compiled here, and where variant names are looked up.", writes_file=True)
def report(items, constexprs, targets, num_warps, num_stages, configs, args, size, no_bench, retarget, jobs, output,
           variant, metrics, out_dir):
    """Write one offline HTML file: the variants' metric table and plots, and per variant its
    verdicts, resources, JIT time per stage, Python source and every stage highlighted, with each
    source line linked to what it produced.

    ITEMS are what `kinspect diff` takes: kernels (swept with -p), stores, Triton caches, dump
    folders, stage files; two runs of a program (two captured stores or traces) give their program
    diff. The file needs no network and opens in any browser.

    Example: kinspect report fused_mm_softmax -p BLOCK_SIZE=32,64,128 -o r.html
    """
    from kinspect.render.terminal import human_bytes

    if len(items) == 2 and not (constexprs or num_warps or num_stages or configs or args or retarget or variant
                                or metrics) and all(api.is_run(i) for i in items):
        # two runs of a program: the program diff (kinspect diff STORE_A STORE_B) as a page
        from kinspect.render.program_diff_html import save

        path = api.check_output_path(output, "report", items)
        result = api.diff_runs(items[0], items[1])
        echo(f"wrote {path} ({human_bytes(save(result, path))}): {len(result.changes)} kernels of two runs")
        return
    kwargs = sweep_kwargs(items, constexprs, targets, num_warps, num_stages, configs, args, size, no_bench, retarget,
                           jobs, out_dir)
    path = api.check_output_path(output, "report", items)
    step = Steps()
    step("collecting the variants (loading kernels, compiling what the store does not hold)")
    try:
        with ProgressBar() as progress:
            result = api.report(kwargs.pop("items"), **kwargs, variant=variant, metrics=metrics, out_dir=out_dir,
                                progress=progress, step=step)
        step(f"writing {path}")
        size_written = result.save(path)
    finally:
        step.close()
    plots = ", ".join(p.name for p in result.plots) or "none"
    echo(f"wrote {path} ({human_bytes(size_written)}): {len(result.rows)} variant"
               f"{'s' if len(result.rows) != 1 else ''}; plots: {plots}")
    if result.left_out:
        echo(f"note: {result.left_out} variants are in the table only (the page carries {len(result.embedded)}); "
             f"see one with --variant N or kinspect show FOLDER")
