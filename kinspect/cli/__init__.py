"""The `kinspect` command. Each command is a thin shell over kinspect.api.

Errors the user can fix are KinspectErrors: one line, exit code 2, no traceback unless --debug.
"""

from __future__ import annotations

import sys

import click

from kinspect import api
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
                warnings.showwarning = _warning(warnings.showwarning)
                return super().invoke(ctx)
        except KinspectError as e:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            from kinspect.render.terminal import clean

            click.echo(f"error: {clean(str(e))}", err=True)
            ctx.exit(2)


def _warning(previous):
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


def _echo(text: str = "", **kwargs) -> None:
    """click.echo of text that may hold data from a store or a program (kernel names, notes, stage
    lines): control characters are shown escaped, never sent to the terminal as they are."""
    from kinspect.render.terminal import clean

    click.echo(clean(text, lines=True), **kwargs)


@click.group(cls=Group, context_settings=CONTEXT)
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.version_option(package_name="kinspect")
@click.pass_context
def main(ctx, debug):
    """See what your Triton kernels compile to, and why they run as fast as they do."""
    from kinspect.core.errors import quiet_foreign_noise

    quiet_foreign_noise()
    ctx.obj = {"debug": debug}


def _options(*options):
    """Several click options as one decorator, in the order they are listed (--help shows them so)."""
    def apply(f):
        for option in reversed(options):
            f = option(f)
        return f
    return apply


# The options that say which one variant of a kernel to compile: dump, vec-report and bench share them
# (diff and report sweep lists of values instead: _sweep_options).
_constexpr_option = click.option("-p", "constexprs", multiple=True, metavar="K=V",
                                 help="A constexpr value, e.g. -p BLOCK_SIZE=64.")
_arg_option = click.option("--arg", "args", multiple=True, metavar="NAME=TYPE",
                           help="A runtime argument of a user kernel: *fp32, *fp16[:SHAPE like 1024x64], i32[:VALUE], "
                                "fp32[:VALUE], 'tensordesc<fp16[64,64]>[:SHAPE]', ...")
_warps_stages_options = _options(click.option("--num-warps", type=int, default=None),
                                 click.option("--num-stages", type=int, default=None))
_config_option = click.option("--config", "config", type=click.IntRange(min=0), default=None, metavar="N",
                              help="An autotuned kernel's config number, as its file lists them (default: the "
                                   "first that prune_configs_by keeps).")
_size_option = click.option("--size", default=None, help="Problem size for the example arguments: N or MxN.")


def _store_option(*, help: str = "The kinspect store: where variants are written and looked up.",
                  writes_file: bool = False):
    """-s/--store DIR: the store, spelled the same in every command. -o/--out DIR, its old spelling
    in dump, diff, vec-report, show, bench and capture, still works with a deprecation line: -o now
    names a file a command writes (report's HTML, repro's script) and nothing else."""
    from click.core import ParameterSource

    def store(ctx, param, value):
        if ctx.get_parameter_source("out_dir") is ParameterSource.DEFAULT and "old_store" in ctx.meta:
            return ctx.meta["old_store"]
        return value

    def old(ctx, param, value):
        if value is None:
            return
        if ctx.get_parameter_source("out_dir") not in (None, ParameterSource.DEFAULT):
            raise click.UsageError("give the store once: --store DIR (-o DIR is its old spelling)")
        click.echo(f"warning: -o {value} names the store; write --store {value} (-o is to go: it names a file "
                   f"written, as in report and repro)", err=True)
        ctx.meta["old_store"] = value

    def decorate(f):
        f = click.option("-s", "--store", "out_dir", default=api.DEFAULT_OUT, show_default=True, metavar="DIR",
                         callback=store, help=help)(f)
        if writes_file:       # its -o is the file it writes
            return f
        return click.option("-o", "--out", "old_out", default=None, hidden=True, expose_value=False,
                            callback=old)(f)

    return decorate


# Of several variants of one kernel in a store, the one with these values (show, repro).
_values_option = click.option("-p", "values", multiple=True, metavar="K=V",
                              help="Of several variants of one kernel, the one with this value, e.g. -p BLOCK_SIZE=32.")


def _retarget_option(f):
    return click.option("--retarget", "retarget", multiple=True, metavar="CPU[:FEATURES]",
                        help="Also compile the LLVM IR with llvmlite for this CPU and report it beside the "
                             "as-compiled result: spacemit-x60, generic-rv64, x86-64-v4, riscv64:+v,+zvl256b, "
                             "... (kinspect targets lists them). Repeatable.")(f)


def _launch_options(f):
    """Which of the file's own launches gives a user kernel's example values."""
    f = click.option("--from", "from_", default=None, metavar="FUNC",
                     help="Take the example values from the launch that calling FUNC in the kernel's file makes "
                          "(`main`, or a call such as 'test_op(4096)'); recorded, never run.")(f)
    return click.option("--launch", "launch", type=click.IntRange(min=0), default=None, metavar="N",
                        help="Use the file's launch number N of the kernel (0: the first; module-level code, then "
                             "its __main__ block, or --from FUNC).")(f)


def _target_option(f):
    return click.option("-t", "--target", default=None, metavar="T",
                        help="cuda:80, cuda:90, cuda:100, hip:gfx942, hip:gfx950 or device "
                             "(default: the active device, else cuda:90 offline).")(f)


@main.command(context_settings=CONTEXT)
@click.argument("kernel")
@_target_option
@_constexpr_option
@_arg_option
@_warps_stages_options
@_config_option
@_launch_options
@_size_option
@click.option("--stage", default=None, help="Print this stage (ttir, ttgir, llir, ptx, sass, amdgcn, ...).")
@click.option("--passes", "passes", is_flag=True,
              help="Also time each MLIR pass and keep the IR before each pass that changed it "
                   "(MLIR_ENABLE_TIMING, MLIR_ENABLE_DUMP), in the variant's passes/ folder.")
@_retarget_option
@_store_option()
def dump(kernel, target, constexprs, args, num_warps, num_stages, config, launch, from_, size, stage, passes, retarget,
         out_dir):
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
                      config=config, launch=launch, from_=from_)
    if stage:
        return _print_stage(result.variant, stage)
    _echo(summary(result.variant, label=result.label, target_note=result.target_note))
    if passes:
        from kinspect.render.terminal import passes_table

        found = _passes(result.variant.path, kernel, target, consts, args, num_warps, num_stages, size)
        _echo("\n" + passes_table(found))


def _passes(variant_path, kernel, target, constexprs, args, num_warps, num_stages, size):
    """The variant compiled again with MLIR pass timing and IR dumps on (kinspect.compile.passes)."""
    from kinspect.compile.passes import collect

    return collect(variant_path, dict(kernel=kernel, target=target, constexprs=constexprs, args=list(args),
                                      num_warps=num_warps, num_stages=num_stages, size=size))


@main.command(name="ls", context_settings=CONTEXT)
@click.argument("path", required=False)
@click.option("--kernels", "show_kernels", is_flag=True, help="List the kernels kinspect ships instead.")
def ls_cmd(path, show_kernels):
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
    _echo(f"{clean(str(listing.path))} ({listing.kind}): {len(listing.variants)} variant(s)")
    for w in listing.warnings:
        _echo(f"  warning: {clean(w)}")
    if listing.variants:
        _echo(variants_table(sorted(listing.variants, key=api.natural)))


@main.command(context_settings={**CONTEXT, "ignore_unknown_options": True})
@_store_option(help="The kinspect store the capture is written to.")
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
              help="After the program's own output, print what was recorded as one JSON line on stdout.")
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
    with _progress_bar("deriving SASS / assembly") as progress, _progress_bar("compiling") as compiling:
        steps = dict(progress=lambda done, total: progress(done or None, total), compiling=compiling)
        if resume is not None:
            out_dir = resume
            result = capture_run.resume(resume, **steps)
        else:
            result = capture_run.run(list(command), out_dir, time_method=time_method, time_sample=time_sample or 0,
                                     interpret=(target or "") if interpret else None, **steps)
    _echo(capture_summary(result, out_dir), err=True)
    if (time_method or time_sample) and any(v.launches and v.launches.gpu for v in result.variants):
        _echo(f"  {api.record_ceilings(out_dir)}", err=True)
    if as_json:
        click.echo(json.dumps(result.to_json(), default=str))
    sys.exit(result.code)


@main.command(name="vec-report", context_settings=CONTEXT)
@click.argument("targets", nargs=-1)
@_target_option
@_constexpr_option
@_arg_option
@_warps_stages_options
@_config_option
@_launch_options
@click.option("--json", "as_json", is_flag=True,
              help="JSON: a list with one object per variant; for several kernels an object with the summary "
                   "table (kernels) and the detailed variants.")
@click.option("--lines", "show_lines", is_flag=True, help="Add a table of what each Python line produced per stage.")
@click.option("--top", "top", type=click.IntRange(min=0), default=3, show_default=True,
              help="Several kernels: the details of this many of the top kernels follow the summary.")
@click.option("--all", "every", is_flag=True, help="Several kernels: the details of every kernel.")
@click.option("-k", "--kernel", "names", multiple=True, metavar="NAME",
              help="Several kernels: the details of kernels whose name contains NAME (repeatable).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Processes that analyse variants kinspect has not summarized before (default: one per core).")
@click.option("--tune", "tune_top", type=click.IntRange(min=1), default=None, metavar="N",
              help="A captured program: tune the N kernels with the most headroom on the GPU (kinspect tune).")
@click.option("--trials", "tune_trials", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --tune: at most N of kinspect's candidates run per kernel (default 12).")
@click.option("--budget", "tune_budget", type=click.FloatRange(min=1), default=None, metavar="SECONDS",
              help="With --tune: stop widening a kernel's search after this many seconds (per kernel).")
@click.option("--counters", "counters", type=click.IntRange(min=1), is_flag=False, flag_value=10, default=None,
              metavar="[N]", help="A captured program: replay the N kernels with the most headroom (default 10) "
                                  "under Nsight Compute (ncu) and show their counters beside the findings.")
@_retarget_option
@_store_option(help="Store for kernels compiled here.")
def vec_report(targets, target, constexprs, args, num_warps, num_stages, config, launch, from_, as_json, show_lines,
               top, every, names, jobs, tune_top, tune_trials, tune_budget, counters, retarget, out_dir):
    """Vector, matrix and register use of each variant, with verdicts tied to source lines.

    TARGETS are kernels (shipped names or file.py:name, compiled as in dump), kinspect stores, Triton
    cache or dump folders, or single .ttir/.ttgir/.ll/.llir/.ptx/.sass/.amdgcn/.s/.asm files.
    With none: ./kinspect-out if present, else the Triton cache. Several kernels (a captured program)
    open with one table: a row per kernel, by GPU time when captured with --time, else by the worst
    finding; then the details of the top kernels.
    """
    import json
    import shutil

    from kinspect.compile.args import parse_args, parse_constexprs
    from kinspect.render.report import line_table, vec_report as render

    kwargs = dict(target=target, constexprs=parse_constexprs(constexprs), args=parse_args(args), num_warps=num_warps,
                  num_stages=num_stages, out_dir=out_dir, config=config, launch=launch, from_=from_)
    retarget = _checked(retarget)
    from kinspect.cli import precheck

    precheck.target(target)
    for item in targets:
        precheck.item(item, kwargs["constexprs"], args=kwargs["args"])
    if not retarget:
        variants = api.resolve_variants(list(targets), **kwargs)
        if api.is_program(variants):
            if (tune_trials or tune_budget) and not tune_top:
                raise click.UsageError("--trials and --budget limit the tune of each kernel: give them with --tune N")
            from kinspect.render.counters import section
            from kinspect.render.program import summary

            found = api.program(variants, top=top, every=every, names=names, where=_where(targets, variants),
                                jobs=jobs, counters=counters or 0)
            tunes = api.tune_program(found, tune_top, out_dir=out_dir, jobs=jobs, trials=tune_trials,
                                     budget_s=tune_budget, progress=_progress) if tune_top else []
            if as_json:
                out = found.to_json()
                if tune_top:
                    out["tune"] = [_tune_json(k, t) for k, t in tunes]
                click.echo(json.dumps(out, indent=1))
                return
            width = shutil.get_terminal_size((160, 40)).columns
            parts = [summary(found.rows, where=found.where, width=width, shown=len(found.details), extras=found.extras,
                             sol=found.sol.to_json() if found.sol is not None else None)]
            if counters:
                parts.append(section(found.to_json()))
            parts += [render(r) + (f"\n  per line:\n{line_table(r)}" if show_lines else "") for r in found.details]
            if tune_top:
                parts.append(_tune_section(tunes))
            _echo("\n\n".join(parts))
            return
        if tune_top or tune_trials or tune_budget:
            raise click.UsageError("--tune tunes the kernels of a captured program (a store of several kernels, "
                                   "captured with --time); one variant: kinspect tune VARIANT")
        if counters:
            raise click.UsageError("--counters measures the kernels of a captured program (a store of several "
                                   "kernels, captured with --time)")
        reports = api.vec_report_of(variants)
    else:
        reports = api.vec_report(list(targets), retarget=retarget, **kwargs)
    if as_json:
        click.echo(json.dumps([r.to_json() for r in reports], indent=1))
        return
    if not reports:
        click.echo("no variants found")
    _echo("\n\n".join(render(r) + (f"\n  per line:\n{line_table(r)}" if show_lines else "") + _tuned(r.variant)
                             for r in reports))


def _tuned(variant) -> str:
    """The tune stored beside a variant, in a few lines (kinspect tune wrote it)."""
    found = api.tuned(variant)
    if found is None:
        return ""
    from kinspect.render.tune import summary

    r = found[0]
    return (f"\n  tuned ({len(r.trials)} candidates, {r.budget or 'no limit'}):\n" +
            "\n".join(f"    {line}" for line in summary(*found)))


def _where(targets, variants) -> str:
    """What a program table covers, for its header."""
    if len(targets) == 1:
        return targets[0]
    if not targets:
        from kinspect.files.sources import default_dir

        return str(default_dir())
    return f"{len(targets)} inputs"


def _checked(specs) -> tuple[str, ...]:
    """--retarget values, each parsed once up front so a typo fails before anything is compiled."""
    from kinspect.backends import retarget

    for spec in specs:
        retarget.parse(spec)
    return tuple(specs)


def _sweep_options(f):
    """The options that say which variants to compile or collect: shared by diff and report."""
    return _options(
        click.argument("items", nargs=-1),
        click.option("-p", "constexprs", multiple=True, metavar="K=V1,V2", help="Constexpr values to sweep, e.g. "
                     "-p BLOCK_SIZE=32,64,128 (repeat -p for several names: every combination is compiled)."),
        click.option("-t", "--target", "targets", default=None, metavar="T1,T2",
                     help="Targets to compile for, e.g. cuda:80,cuda:90 (default: the active device, else cuda:90)."),
        click.option("--num-warps", default=None, metavar="N1,N2", help="num_warps values to sweep, e.g. 4,8."),
        click.option("--num-stages", default=None, metavar="N1,N2", help="num_stages values to sweep, e.g. 2,3."),
        click.option("--config", "configs", default=None, metavar="N1,N2",
                     help="Only these configs of an autotuned kernel (default: every config prune_configs_by "
                          "keeps for the example arguments)."),
        _arg_option,
        _size_option,
        click.option("--no-bench", "no_bench", is_flag=True,
                     help="Do not time the variants even when a GPU is here."),
        click.option("--retarget", "retarget", multiple=True, metavar="CPU1,CPU2",
                     help="Compare each variant's LLVM IR compiled for these CPUs (kinspect targets lists them), "
                          "e.g. --retarget generic-rv64,spacemit-x60 on a CPU backend's .ll or dump folder."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
                     help="Compile processes (default: one per core, at most one per variant)."),
    )(f)


def _sweep_kwargs(items, constexprs, targets, num_warps, num_stages, configs, args, size, no_bench, retarget,
                  jobs, store) -> dict:
    """The sweep options as api.diff / api.report keyword arguments, each checked once."""
    from kinspect.compile.args import parse_int_list, parse_sweep

    from kinspect.cli import precheck

    target_list = [t.strip() for t in targets.split(",")] if targets else [None]
    if not all(t for t in target_list if t is not None):
        raise click.UsageError(f"-t '{targets}' has an empty target")
    sweep = parse_sweep(constexprs)
    for t in target_list:
        precheck.target(t)
    for item in items:
        precheck.item(item, sweep, args=[a.partition("=")[0] for a in args], store=store)
    return dict(items=list(items), constexprs=sweep, targets=target_list,
                configs=parse_int_list(configs, "--config", least=0) if configs is not None else None,
                num_warps=parse_int_list(num_warps, "--num-warps"),
                num_stages=parse_int_list(num_stages, "--num-stages"), args=args, size=size, jobs=jobs,
                bench=not no_bench, retarget=[x.strip() for spec in retarget for x in spec.split(",") if x.strip()])


@main.command(context_settings=CONTEXT)
@_sweep_options
@click.option("--stage", default=None, help="Stage to diff (default: ptx, amdgcn or the CPU assembly).")
@click.option("--pair", default=None, metavar="A,B",
              help="Which two variants to diff: row numbers or values, e.g. --pair 1,3 or --pair 32,128 "
                   "(default: the first two).")
@click.option("--side-by-side", "side", is_flag=True, help="Show the diff in two columns.")
@click.option("--table", "table_only", is_flag=True, help="Only the metric table, no stage diff.")
@click.option("--json", "as_json", is_flag=True, help="Everything as one JSON object.")
@_store_option(help="Store for variants compiled here, and where variant names are looked up.")
def diff(items, constexprs, targets, num_warps, num_stages, configs, args, size, no_bench, retarget, jobs, stage, pair,
         side, table_only, as_json, out_dir):
    """Compile a sweep and compare its variants: a metric table and a normalized diff of one stage.

    ITEMS are kernels (shipped names or file.py:name), compiled for every combination of the -p,
    -t, --num-warps and --num-stages values (and, for an autotuned kernel, of its configs); two
    source files (a.py:kern b.py:kern); or saved variants: kinspect stores, Triton caches, dump
    folders, stage files, variant names in the store.

    Example: kinspect diff fused_mm_softmax -p BLOCK_SIZE=32,64,128 -t cuda:90
    """
    kwargs = _sweep_kwargs(items, constexprs, targets, num_warps, num_stages, configs, args, size, no_bench, retarget,
                           jobs, out_dir)
    import json
    import shutil

    from kinspect.render.sweep import render
    from kinspect.render.terminal import clean, use_color

    with _progress_bar() as progress:
        result = api.diff(kwargs.pop("items"), **kwargs, stage=stage, pair=pair, out_dir=out_dir, progress=progress,
                          text=not table_only)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=1, default=str))
        return
    text = render(result, side=side, width=shutil.get_terminal_size((160, 40)).columns)
    if use_color() and text.count("\n") > 60:
        click.echo_via_pager(clean(text, lines=True))
    else:
        _echo(text)


@main.command(context_settings=CONTEXT)
@_sweep_options
@click.option("-o", "--output", "output", default="kinspect-report.html", show_default=True,
              help="The HTML file to write (one self-contained file).")
@click.option("--variant", default=None, metavar="N|VALUE",
              help="The variant shown first: a row number or a value such as 64 (default: the first, or the "
                   "fastest when the variants were timed).")
@click.option("--metric", "metrics", multiple=True, metavar="NAME",
              help="What the sweep plot shows (repeatable): runtime, registers, instructions, code, jit, shared, "
                   "occupancy, spills, vector, matrix, gbps, tflops (default: runtime when timed, else registers, "
                   "instructions, code and jit).")
@_store_option(help="Store for variants compiled here, and where variant names are looked up.", writes_file=True)
def report(items, constexprs, targets, num_warps, num_stages, configs, args, size, no_bench, retarget, jobs, output,
           variant, metrics, out_dir):
    """Write one offline HTML file: the variants' metric table and plots, and per variant its
    verdicts, resources, JIT time per stage, Python source and every stage highlighted, with each
    source line linked to what it produced.

    ITEMS are what `kinspect diff` takes: kernels (swept with -p), stores, Triton caches, dump
    folders, stage files. The file needs no network and opens in any browser.

    Example: kinspect report fused_mm_softmax -p BLOCK_SIZE=32,64,128 -o r.html
    """
    from kinspect.render.terminal import human_bytes

    kwargs = _sweep_kwargs(items, constexprs, targets, num_warps, num_stages, configs, args, size, no_bench, retarget,
                           jobs, out_dir)
    path = api.check_output_path(output, "report", items)
    step = _steps()
    step("collecting the variants (loading kernels, compiling what the store does not hold)")
    try:
        with _progress_bar() as progress:
            result = api.report(kwargs.pop("items"), **kwargs, variant=variant, metrics=metrics, out_dir=out_dir,
                                progress=progress, step=step)
        step(f"writing {path}")
        size_written = result.save(path)
    finally:
        step.close()
    plots = ", ".join(p.name for p in result.plots) or "none"
    _echo(f"wrote {path} ({human_bytes(size_written)}): {len(result.rows)} variant"
               f"{'s' if len(result.rows) != 1 else ''}; plots: {plots}")


class _steps:
    """Lines on stderr as a long command enters steps that have no count to show as a bar: each
    step's line is shown once the command has run PROGRESS_AFTER_S seconds, so a quick command (or
    one that stops at a one-line error) prints nothing but its answer."""

    def __init__(self):
        import threading
        import time

        self.started = time.monotonic()
        self.current = None
        self.lock = threading.Lock()
        self.timer = threading.Timer(PROGRESS_AFTER_S, self._due)
        self.timer.daemon = True
        self.timer.start()

    def __call__(self, text: str) -> None:
        import time

        with self.lock:
            self.current = text
            if time.monotonic() - self.started >= PROGRESS_AFTER_S:
                self._say()

    def _due(self):
        with self.lock:
            if self.current:
                self._say()

    def _say(self):
        click.echo(f"kinspect: {self.current}", err=True)
        self.current = None

    def close(self):
        self.timer.cancel()


# Progress is shown for steps that take longer than this; on a terminal as a bar, elsewhere as lines.
PROGRESS_AFTER_S = 2.0


class _progress_bar:
    """Progress of a long step on stderr: a bar on a terminal; elsewhere (a log, CI, a pipe) plain
    lines, the first once the step has run PROGRESS_AFTER_S seconds, then at most one every
    PROGRESS_AFTER_S seconds, and the last."""

    def __init__(self, label: str = "compiling"):
        self.label = label

    def __enter__(self):
        import time

        self.bar = None
        self.done = 0
        self.total = None
        self.said = time.monotonic()
        self.spoke = False
        return self.update

    def update(self, outcome, total=None):
        if sys.stderr.isatty():
            if self.bar is None and total:
                self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
                self.bar.__enter__()
            if self.bar is not None and outcome is not None:
                self.bar.update(1)
            return
        import time

        if outcome is not None:
            self.done += 1
        self.total = total or self.total
        now = time.monotonic()
        last = self.total is not None and self.done >= self.total
        if now - self.said >= PROGRESS_AFTER_S or (last and self.spoke):
            self.said, self.spoke = now, True
            of = f"/{self.total}" if self.total else ""
            click.echo(f"kinspect: {self.label} {self.done}{of}", err=True)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)


@main.command(context_settings=CONTEXT)
@click.argument("kernel")
@click.option("-t", "--target", default=None, metavar="T", help="device (the default): the active GPU or CPU backend.")
@_constexpr_option
@_arg_option
@_warps_stages_options
@_size_option
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
@_store_option()
def bench(kernel, target, constexprs, args, num_warps, num_stages, size, interpret, profile, bytes_moved, flops,
          passes, no_reference, no_compile, warmup_ms, rep_ms, as_json, out_dir):
    """Time KERNEL on the device: first call (JIT stages, cold and warm) vs steady state, GB/s and
    TFLOP/s against what the device measured, torch's time, correctness, and the asm beside it.

    Example: kinspect bench softmax --size 8192x8192 --profile trace.json
    """
    import json

    from kinspect.compile.args import parse_args, parse_constexprs
    from kinspect.render.bench import render, render_interpreted

    consts = parse_constexprs(constexprs)
    if interpret:
        if profile or passes:
            raise click.UsageError(f"{'--profile' if profile else '--passes'} needs a device; --interpret runs on the CPU")
        result = api.interpret(kernel, constexprs=consts, args=args, size=size, num_warps=num_warps,
                               num_stages=num_stages, out_dir=out_dir)
        _echo(json.dumps(result.to_json(), indent=1) if as_json else render_interpreted(result))
    else:
        result = api.bench(kernel, target=target, constexprs=consts, args=parse_args(args), num_warps=num_warps,
                           num_stages=num_stages, size=size, out_dir=out_dir, references=not no_reference,
                           compiled_reference=not no_compile, bytes_moved=bytes_moved, flops=flops,
                           warmup_ms=warmup_ms, rep_ms=rep_ms, profile=profile)
        found = _passes(result.variant.path, kernel, target, consts, args, num_warps, num_stages, size) if passes else None
        if as_json:
            click.echo(json.dumps({**result.to_json(), "passes": found.to_json() if found else None}, indent=1,
                                  default=str))
        else:
            _echo(render(result))
            if found:
                from kinspect.render.terminal import passes_table

                _echo("\n" + passes_table(found))
    if result.check is not None and not result.check.ok:
        sys.exit(1)


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
@click.option("-o", "--out", "out_dir", default=api.DEFAULT_OUT, show_default=True, help="kinspect store folder.")
def tune(variant, trials, budget_s, no_compare, constexprs, args, size, jobs, as_json, out_dir):
    """Turn VARIANT's findings into a measured fix: candidates from its findings (block sizes, num_warps,
    num_stages within what the kernel accepts), widened step by step within --trials/--budget, pruned by
    their compiled code's resources, replayed on the captured launch, checked against the original's
    output and timed on the GPU; the winner with its reason, and Inductor's own and max_autotune's picks.

    VARIANT: a variant `kinspect capture` recorded (name or folder), or a kernel (shipped, or FILE:KERNEL
    with example values) launched once here first. Example: kinspect tune triton_poi_fused_add_0 -o out
    """
    import json

    from kinspect.compile.args import parse_args, parse_constexprs

    found = api.tune(variant, out_dir=out_dir, trials=trials, budget_s=budget_s, compare=not no_compare,
                     progress=None if as_json else _progress, jobs=jobs, constexprs=parse_constexprs(constexprs),
                     args=parse_args(args), size=size)
    if as_json:
        click.echo(json.dumps(_tune_json(found[0].kernel, found), indent=1))
        return
    from kinspect.render.tune import render

    _echo(render(*found))


def _progress(line: str) -> None:
    click.echo(line, err=True)


def _tune_json(kernel: str, t) -> dict:
    if isinstance(t, str):
        return {"kernel": kernel, "error": t}
    from kinspect.render.tune import table_row

    return {**t[0].to_json(), "summary": table_row(*t)}


def _tune_section(tunes) -> str:
    from kinspect.render.tune import render

    return "\n\n".join(render(*t) if not isinstance(t, str) else f"tune of {k}: not tuned: {t}" for k, t in tunes)


@main.command(context_settings=CONTEXT)
@click.argument("variant")
@click.option("-o", "--output", default="repro.py", show_default=True, help="The script to write.")
@click.option("--interpret", is_flag=True,
              help="Run under TRITON_INTERPRET on the CPU (the script sets it before importing triton).")
@click.option("--embed", is_flag=True,
              help="Carry the kernel's captured source even where its file could be imported (to share the script).")
@click.option("--launch", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="Replay the N-th most frequent captured argument signature.")
@_values_option
@_store_option(help="Store to look the variant up in.", writes_file=True)
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
    _echo(f"wrote {r.path}: {r.spec.kernel}, {r.spec.calls:,} of {r.spec.total_calls:,} captured launches: "
               f"{r.spec.describe()}")
    _echo(f"  the script {clean(r.how)}")
    run = f"python {r.path}"
    _echo(f"  run it: {run}" + ("" if interpret else f"  (no GPU: TRITON_INTERPRET=1 {run})"))


@main.command(context_settings=CONTEXT)
def targets():
    """Targets kinspect compiles for: Triton targets (-t) and CPUs for --retarget."""
    from kinspect.backends import retarget
    from kinspect.compile.targets import available, presets

    have = set(available())
    click.echo("Triton targets (-t; offline compile, no device needed):")
    for name, (backend, arch, _) in presets().items():
        click.echo(f"  {name:<20} {'' if name in have else '(this triton has no ' + backend.name + ' backend)'}".rstrip())
    click.echo(f"  {'device':<20} the active device's target (a GPU, or a CPU backend such as triton-cpu)")
    from kinspect.core.optional import has, install_line

    llvm = retarget.llvm_version() if has("llvmlite") else f"llvmlite is not installed: {install_line('llvmlite')}"
    click.echo(f"\nCPUs for --retarget ({llvm}):")
    for t in retarget.PRESETS.values():
        click.echo(f"  {t.name:<20} {t.about}")
        click.echo(f"  {'':<20}   {t.describe()}")
    click.echo(f"  {'host':<20} this machine's CPU")
    click.echo(f"  {'ARCH[:FEATURES]':<20} ARCH one of riscv64, x86_64, aarch64; e.g. riscv64:+v,+zvl256b; "
               f"a preset takes :FEATURES too")


@main.command(context_settings=CONTEXT)
@click.argument("variant")
@click.option("--stage", required=True, help="ttir, ttgir, llir, ptx, sass, amdgcn, asm, ...")
@click.option("--lines", is_flag=True, help="Mark where each Python line's code starts.")
@click.option("--raw", is_flag=True, help="The stage's file exactly as stored (SASS without its control-code column).")
@_values_option
@_store_option(help="Store to look in (a Triton cache, a dump folder or a trace too).")
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
    _print_stage(v, stage, lines=lines, raw=raw)


def _print_stage(v, stage: str, *, lines: bool = False, raw: bool = False) -> None:
    """A stage on the terminal: highlighted (through the pager when long), or streamed plain when
    output is not a terminal or the stage is too big to highlight."""
    from kinspect.render.terminal import clean, highlight, use_color

    chunks = api.shown_chunks(v, stage, lines=lines, raw=raw)
    if not use_color() or api.stage_bytes(v, stage) > api.HIGHLIGHT_MAX_BYTES:   # any size, bounded memory
        return _stream(chunks)
    text = "".join(chunks)
    if sys.stdout.isatty():
        text = clean(text, lines=True)
    shown = highlight(text, v.stage(stage).dialect, use_color())
    if text.count("\n") > 60:
        click.echo_via_pager(shown)
    else:
        click.echo(shown, nl=not shown.endswith("\n"))


def _stream(chunks) -> None:
    """Print a stage chunk by chunk (through the pager on a terminal), ending with a newline; on a
    terminal its control characters are shown escaped."""
    from kinspect.render.terminal import clean, use_color

    if sys.stdout.isatty():
        chunks = (clean(c, lines=True) for c in chunks)
    if use_color():
        return click.echo_via_pager(chunks)
    last = ""
    for last in chunks:
        click.echo(last, nl=False)
    if not last.endswith("\n"):
        click.echo()


if __name__ == "__main__":
    main()
