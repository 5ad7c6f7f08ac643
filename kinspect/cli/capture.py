"""`kinspect capture -- CMD`: record what a program compiles and launches."""

from __future__ import annotations

import sys

import click

from kinspect import api
from kinspect.cli.main import CONTEXT, main
from kinspect.cli.options import store_option
from kinspect.cli.progress import ProgressBar
from kinspect.cli.output import echo


@main.command(context_settings={**CONTEXT, "ignore_unknown_options": True})
@store_option(help="The kinspect store the capture is written to.")
@click.option("--time", "time_method", is_flag=False, flag_value="profiler", default=None,
              type=click.Choice(["profiler", "events"]),
              help="Also time every launch on the GPU: CUPTI's kernel activity records, nothing else profiled (the "
                   "default), or CUDA events around each launch.")
@click.option("--time-sample", "time_sample", type=click.IntRange(min=2), default=None, metavar="N",
              help="Time about one launch in N (windows of launches, kernel records): less cost on a long run; "
                   "implies --time profiler.")
@click.option("--interpret", is_flag=True,
              help="No GPU needed: run COMMAND under TRITON_INTERPRET (kernels run on the CPU) and compile each "
                   "kernel it launched, with the launch's arguments, for -t (default cuda:90).")
@click.option("-t", "--target", default=None, metavar="T", help="With --interpret: the target to compile for "
              "(cuda:80, cuda:90, cuda:100, hip:gfx942, ...).")
@click.option("--json", "as_json", is_flag=True,
              help="Print what was recorded as one JSON line on stdout, and nothing else there: the program's "
                   "own output goes to stderr, so a pipe can parse it.")
@click.option("--resume", "resume", default=None, metavar="STORE",
              help="Run no command: finish what a capture into STORE left undone when Ctrl-C stopped it after its "
                   "program (compiling, deriving stages, merging launch records).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def capture(out_dir, time_method, time_sample, interpret, target, as_json, resume, command):
    """Run COMMAND and record every kernel Triton compiles in it, and how often each variant was
    launched, with which grids and arguments (and with --time, its GPU time), and which config
    triton.autotune chose for which key.

    Ctrl-C after the program (while kinspect compiles or derives) keeps every variant finished and
    exits 130; `kinspect capture --resume STORE` finishes the rest.

    Examples: kinspect capture --store out --time -- python train.py --epochs 1;
    kinspect capture --interpret -t cuda:90 -- python script.py
    """
    import json

    from kinspect.program import run as capture_run
    from kinspect.render.terminal import capture_summary

    if target is not None and not interpret:
        raise click.UsageError("-t names the target --interpret compiles for; a capture without --interpret records "
                               "what the program compiles for its own device")
    if time_sample and time_method == "events":
        raise click.UsageError("--time-sample times windows of kernel records: use it with --time profiler")
    if time_sample and interpret:
        raise click.UsageError("--time-sample measures GPU time; --interpret runs the kernels on the CPU: drop one")
    if resume is not None and (command or interpret or time_method or time_sample):
        raise click.UsageError("--resume finishes a capture already run: give it the store alone, no command, "
                               "--interpret or --time")
    if resume is None and not command:
        raise click.UsageError("nothing to run; e.g. kinspect capture --store out -- python script.py "
                               "(or --resume STORE to finish an interrupted capture)")
    with ProgressBar("deriving SASS / assembly") as progress, ProgressBar("compiling") as compiling:
        steps = dict(progress=lambda done, total: progress(done or None, total), compiling=compiling)
        if resume is not None:
            out_dir = resume
            result = capture_run.resume(resume, **steps)
        else:
            result = capture_run.run(list(command), out_dir, time_method=time_method, time_sample=time_sample or 0,
                                     interpret=(target or "") if interpret else None,
                                     program_stdout=_stderr_fd() if as_json else None, **steps)
    if resume is None and not interpret and not result.variants and result.code != 0 and _no_gpu():
        # Triton's "0 active drivers" traceback above is the program's; what to do instead is kinspect's to say
        import shlex

        flag = "" if out_dir == api.DEFAULT_OUT else f" --store {shlex.quote(str(out_dir))}"
        echo(f"kinspect: nothing recorded: the program stopped (exit {result.code}) and this machine has no GPU; "
             f"`kinspect capture --interpret{flag} -- {shlex.join(command)}` runs its kernels under Triton's "
             f"interpreter and compiles them for -t (default cuda:90)", err=True)
        sys.exit(result.code)
    echo(capture_summary(result, out_dir), err=True)
    if (time_method or time_sample) and any(v.launches and v.launches.gpu for v in result.variants):
        echo(f"  {api.record_ceilings(out_dir)}", err=True)
    if as_json:
        click.echo(json.dumps(result.to_json(), default=str))
    sys.exit(result.code)


def _stderr_fd() -> int:
    """The descriptor the program's standard output goes to under --json: kinspect's stderr."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):   # a stream without one (a test runner's): the process's
        return 2


def _no_gpu() -> bool:
    """No GPU device node and no CPU Triton backend here: a program's kernels cannot run but interpreted."""
    import os

    from kinspect.compile.targets import GPU_NODES, installed_backends, offline_backends

    return sys.platform.startswith("linux") and not any(os.path.exists(p) for p in GPU_NODES) and \
        installed_backends() <= {b.plugin for b in offline_backends()}
