"""`kinspect targets`: the targets and CPUs kinspect compiles for."""

from __future__ import annotations


import click

from kinspect.cli.main import CONTEXT, main


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
