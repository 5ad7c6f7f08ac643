"""`kinspect ls`: what a store, cache, dump folder or trace holds."""

from __future__ import annotations


import click

from kinspect import api
from kinspect.cli.main import CONTEXT, main
from kinspect.cli.output import echo


@main.command(name="ls", context_settings=CONTEXT)
@click.argument("path", required=False)
@click.option("--kernels", "show_kernels", is_flag=True, help="List the kernels kinspect ships instead.")
@click.option("--launches", "show_launches", is_flag=True,
              help="Under each captured variant, what the program launched it with: calls, grid, and each "
                   "argument's dtype, shape and strides or value (the most frequent signatures).")
def ls_cmd(path, show_kernels, show_launches):
    """List variants in a kinspect store, a Triton cache or a dump folder (read-only).

    PATH defaults to ./kinspect-out when present, else TRITON_CACHE_DIR (or ~/.triton/cache).
    """
    from kinspect.render.terminal import clean, variants_table

    if show_kernels:
        from kinspect import kernels

        width = max(map(len, kernels.names())) + 1
        for name in kernels.names():
            click.echo(f"  {name:<{width}} {kernels.get(name).summary}")
        return
    listing = api.readable(api.list_variants(path), announce=False)
    echo(f"{clean(str(listing.path))} ({listing.kind}): {len(listing.variants)} variant(s)")
    for w in listing.warnings:
        echo(f"  warning: {clean(w)}")
    if listing.variants:
        table = variants_table(sorted(listing.variants, key=api.natural))
        if show_launches:
            from kinspect.render.launches import launch_lines

            head, *rows = table.splitlines()
            lines = [head]
            for row, v in zip(rows, sorted(listing.variants, key=api.natural)):
                lines.append(row)
                lines += [f"       {clean(x)}" for x in launch_lines(v)] or ["       (no launches recorded)"]
            table = "\n".join(lines)
        echo(table)
