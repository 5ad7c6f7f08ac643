"""The `kinspect` group: one-line errors (exit 2), warnings shown once, stage text escaped."""

from __future__ import annotations

import sys

import click

from kinspect.core.errors import KinspectError, KinspectWarning


CONTEXT = dict(help_option_names=["-h", "--help"], max_content_width=100)


class Group(click.Group):
    def invoke(self, ctx):
        import warnings

        from kinspect.files.sources import triton_files_elsewhere

        # paths are bytes: one that is not UTF-8 is printed back as the bytes it was
        for stream in (sys.stdout, sys.stderr):
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="surrogateescape")
        try:
            with triton_files_elsewhere(), warnings.catch_warnings():
                warnings.simplefilter("always", KinspectWarning)
                warnings.showwarning = show_warnings_once(warnings.showwarning)
                return super().invoke(ctx)
        except KinspectError as e:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            from kinspect.render.terminal import clean

            click.echo(f"error: {clean(str(e))}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt as e:
            # Ctrl-C: the shell's code for SIGINT (130), as `capture` gives, never click's "Aborted!" (1)
            click.echo(f"interrupted{interrupted_note(e)}", err=True)
            ctx.exit(130)


def interrupted_note(e: KeyboardInterrupt) -> str:
    """What a step stopped by Ctrl-C kept (kinspect.core.interrupt.Interrupted.done), as a clause."""
    done = getattr(e, "done", None)
    if not done:
        return ": nothing was written"
    kept = getattr(done, "variants", None)
    if kept is not None:
        paths = [getattr(v, "path", "") for v in kept]
    elif isinstance(done, dict):
        paths = [getattr(o, "path", "") for o in done.values()]
    else:
        return ""
    paths = [p for p in paths if p]
    if not paths:
        return ": nothing was kept"
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return f"; kept the {len(paths)} variant(s) finished before: {shown}"


def show_warnings_once(previous):
    """showwarning that prints each KinspectWarning once, as one line on stderr."""
    shown = set()

    def display(message, category, filename, lineno, file=None, line=None):
        if not issubclass(category, KinspectWarning):
            return previous(message, category, filename, lineno, file, line)
        from kinspect.render.terminal import clean

        text = clean(str(message))
        if text not in shown:
            shown.add(text)
            click.echo(f"warning: {text}", err=True)

    return display


@click.group(cls=Group, context_settings=CONTEXT)
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.version_option(package_name="kinspect")
@click.pass_context
def main(ctx, debug):
    """See what your Triton kernels compile to, and why they run as fast as they do."""
    from kinspect.core.errors import quiet_foreign_noise

    quiet_foreign_noise()
    ctx.obj = {"debug": debug}
