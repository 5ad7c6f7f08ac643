"""What several commands print: text from stores escaped, stages, passes, tunes."""

from __future__ import annotations

import sys

import click

from kinspect import api


def echo(text: str = "", **kwargs) -> None:
    """click.echo of text that may hold data from a store or a program (kernel names, notes, stage
    lines): control characters are shown escaped, never sent to the terminal as they are."""
    from kinspect.render.terminal import clean

    click.echo(clean(text, lines=True), **kwargs)


def echo_report(text: str) -> None:
    """A vec-report on stdout: escaped as `echo` does, in colour on a terminal (NO_COLOR: plain)."""
    from kinspect.render.terminal import clean, paint_report, use_color

    text = clean(text, lines=True)
    click.echo(paint_report(text) if use_color() else text)


def print_stage(v, stage: str, *, lines: bool = False, raw: bool = False) -> None:
    """A stage on the terminal: highlighted (through the pager when long), or streamed plain when
    output is not a terminal or the stage is too big to highlight."""
    from kinspect.render.terminal import clean, highlight, use_color

    chunks = api.shown_chunks(v, stage, lines=lines, raw=raw)
    # a stage's text is data (a foreign stage may carry escapes): shown escaped, piped or not, unless
    # --raw asks for the file's bytes exactly (still escaped on a terminal)
    escape = not raw or sys.stdout.isatty()
    if not use_color() or api.stage_bytes(v, stage) > api.HIGHLIGHT_MAX_BYTES:   # any size, bounded memory
        return stream_chunks(chunks, escape=escape)
    text = "".join(chunks)
    if escape:
        text = clean(text, lines=True)
    shown = highlight(text, v.stage(stage).dialect, use_color())
    if text.count("\n") > 60:
        click.echo_via_pager(shown)
    else:
        click.echo(shown, nl=not shown.endswith("\n"))


def stream_chunks(chunks, *, escape: bool = False) -> None:
    """Print a stage chunk by chunk (through the pager on a terminal), ending with a newline; on a
    terminal (or with `escape`) its control characters are shown escaped."""
    from kinspect.render.terminal import clean, use_color

    if escape or sys.stdout.isatty():
        chunks = (clean(c, lines=True) for c in chunks)
    if use_color():
        return click.echo_via_pager(chunks)
    last = ""
    for last in chunks:
        click.echo(last, nl=False)
    if not last.endswith("\n"):
        click.echo()


def print_passes(variant_path, kernel, target, constexprs, args, num_warps, num_stages, size):
    """The variant compiled again with MLIR pass timing and IR dumps on (kinspect.compile.passes)."""
    from kinspect.compile.passes import collect

    return collect(variant_path, dict(kernel=kernel, target=target, constexprs=constexprs, args=list(args),
                                      num_warps=num_warps, num_stages=num_stages, size=size))


def tune_json(kernel: str, t) -> dict:
    if isinstance(t, str):
        return {"kernel": kernel, "error": t}
    from kinspect.render.tune import table_row

    return {**t[0].to_json(), "summary": table_row(*t)}


def tune_section(tunes) -> str:
    from kinspect.render.tune import render

    return "\n\n".join(render(*t) if not isinstance(t, str) else f"tune of {k}: not tuned: {t}" for k, t in tunes)
