"""Options several commands share, spelled the same everywhere."""

from __future__ import annotations


import click

from kinspect import api


def option_group(*options):
    """Several click options as one decorator, in the order they are listed (--help shows them so)."""
    def apply(f):
        for option in reversed(options):
            f = option(f)
        return f
    return apply


# The options that say which one variant of a kernel to compile: dump, vec-report and bench share them
# (diff and report sweep lists of values instead: sweep_options).
constexpr_option = click.option("-p", "constexprs", multiple=True, metavar="K=V",
                                 help="A constexpr value, e.g. -p BLOCK_SIZE=64.")


arg_option = click.option("--arg", "args", multiple=True, metavar="NAME=TYPE",
                           help="A runtime argument of a user kernel: *fp32, *fp16[:SHAPE like 1024x64], i32[:VALUE], "
                                "fp32[:VALUE], 'tensordesc<fp16[64,64]>[:SHAPE]', ...")


warps_stages_options = option_group(
    click.option("--num-warps", type=click.IntRange(min=1), default=None, metavar="N",
                 help="Warps per program (Triton's num_warps; default: the kernel's config, else 4)."),
    click.option("--num-stages", type=click.IntRange(min=1), default=None, metavar="N",
                 help="Software-pipelining stages of loops (Triton's num_stages; default: the kernel's config, "
                      "else the target's default)."))


config_option = click.option("--config", "config", type=click.IntRange(min=0), default=None, metavar="N",
                              help="An autotuned kernel's config number, as its file lists them (default: the "
                                   "first that prune_configs_by keeps).")


size_option = click.option("--size", default=None, help="Problem size for the example arguments: N or MxN.")


def store_option(*, help: str = "The kinspect store: where variants are written and looked up.",
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
values_option = click.option("-p", "values", multiple=True, metavar="K=V",
                              help="Of several variants of one kernel, the one with this value, e.g. -p BLOCK_SIZE=32.")


def retarget_option(f):
    return click.option("--retarget", "retarget", multiple=True, metavar="CPU[:FEATURES]",
                        help="Also compile the LLVM IR with llvmlite for this CPU and report it beside the "
                             "as-compiled result: spacemit-x60, generic-rv64, x86-64-v4, riscv64:+v,+zvl256b, "
                             "... (kinspect targets lists them). Repeatable.")(f)


def launch_options(f):
    """Which of the file's own launches gives a user kernel's example values."""
    f = click.option("--from", "from_", default=None, metavar="FUNC",
                     help="Take the example values from the launch that calling FUNC in the kernel's file makes "
                          "(`main`, or a call such as 'test_op(4096)'), or that running a test of the project makes "
                          "(a pytest node, 'tests/test_op.py::test_op[fp16]', or a test file); recorded, never run.")(f)
    f = click.option("--no-tests", "run_tests", is_flag=True, flag_value=False, default=True,
                     help="Read the project's tests for the wrapper calls they make, but never run them (by default, "
                          "where no test's text gives a whole call, they run in this process until the kernel's "
                          "first launch, which is recorded and not run).")(f)
    return click.option("--launch", "launch", type=click.IntRange(min=0), default=None, metavar="N",
                        help="Use the file's launch number N of the kernel (0: the first; module-level code, then "
                             "its __main__ block, or --from FUNC).")(f)


def target_option(f):
    return click.option("-t", "--target", default=None, metavar="T",
                        help="cuda:80, cuda:90, cuda:100, hip:gfx942, hip:gfx950 or device "
                             "(default: the active device, else cuda:90 offline).")(f)


def checked(specs) -> tuple[str, ...]:
    """--retarget values, each parsed once up front so a typo fails before anything is compiled."""
    from kinspect.backends import retarget

    for spec in specs:
        retarget.parse(spec)
    return tuple(specs)


def sweep_options(f):
    """The options that say which variants to compile or collect: shared by diff and report."""
    return option_group(
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
        arg_option,
        size_option,
        click.option("--no-bench", "no_bench", is_flag=True,
                     help="Do not time the variants even when a GPU is here."),
        click.option("--retarget", "retarget", multiple=True, metavar="CPU1,CPU2",
                     help="Compare each variant's LLVM IR compiled for these CPUs (kinspect targets lists them), "
                          "e.g. --retarget generic-rv64,spacemit-x60 on a CPU backend's .ll or dump folder."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
                     help="Compile processes (default: one per core, at most one per variant)."),
        executor_options,
    )(f)


def executor_options(f):
    """--gpus N and --cluster: where a sweep's, a tune's or --counters' work fans out (kept in the context:
    sweep_kwargs and the tune commands read them)."""
    def keep(ctx, param, value):
        if value is not None:
            ctx.meta[param.name] = value

    f = click.option("--cluster", default=None, metavar="ray|ray://HOST:PORT", expose_value=False, callback=keep,
                     help="Compile and time on a Ray cluster: 'ray' (RAY_ADDRESS, else a local Ray for the run) or "
                          "ray://HOST:PORT (pip install 'kinspect[ray]').")(f)
    return click.option("--gpus", type=click.IntRange(min=1), default=None, expose_value=False, callback=keep,
                        metavar="N", help="Use the first N visible GPUs (default: all) for timings, a tune's trials "
                                          "and --counters' replays; each timing names its GPU and is compared with "
                                          "the baseline timed on that GPU.")(f)


def sweep_kwargs(items, constexprs, targets, num_warps, num_stages, configs, args, size, no_bench, retarget,
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
    meta = click.get_current_context().meta
    return dict(items=list(items), constexprs=sweep, targets=target_list,
                cluster=meta.get("cluster"), gpus=meta.get("gpus"),
                configs=parse_int_list(configs, "--config", least=0) if configs is not None else None,
                num_warps=parse_int_list(num_warps, "--num-warps"),
                num_stages=parse_int_list(num_stages, "--num-stages"), args=args, size=size, jobs=jobs,
                bench=not no_bench, retarget=[x.strip() for spec in retarget for x in spec.split(",") if x.strip()])
