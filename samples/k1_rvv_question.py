"""The K1 question, replayed on a folder copied off the board:
"does my fused_mm_softmax use RVV on the SpacemiT X60, and what changes with force-vector-width?
And how much of the first call is JIT, compared with a steady-state call?"

    python samples/k1_rvv_question.py [FOLDER] [--kernel fused_mm_softmax] [--jit-kernel fused_mm_softmax] [--stable]

FOLDER is what spine-triton (or triton-cpu / triton-shared) left on the board: its Triton cache
(~/.triton/cache), a SPINE_TRITON_DUMP_PATH folder, or a TRITON_SHARED_DUMP_PATH folder, copied
here as it is. Without FOLDER the sample lays out the real softmax that ships in kinspect's test
fixtures (a Triton softmax taken through a triton-shared RISC-V pipeline) as spine-triton's
SPINE_TRITON_DUMP_PATH leaves it, so it runs anywhere and answers as on the board.

First it prints what `kinspect vec-report` answers on the board, for FOLDER: per kernel, RVV used or
not, where (the Python line), what kind (unit-stride loads, FMA form, ordered reductions, libm
calls) and what to try; with several kernels, ranked in one table. Then, for each kernel, the assembly
as the board's toolchain made it (disassembled from the .so, or compiled again from the llir with
spine-triton's flags) and the same LLVM IR compiled for
spacemit-x60 with and without spine-triton's -force-vector-width=32 -force-vector-interleave=2,
and for generic-rv64 (no V) as the baseline. Nothing is written into FOLDER.

Then the JIT against the steady state: the compile times FOLDER recorded per stage (a kinspect
store made by `kinspect capture` on the board has them; a Triton cache or dump folder has none),
the shipped `--jit-kernel` compiled here offline for cuda:90 with Triton's time per stage, and, when
this machine has a device (a GPU, or a CPU Triton backend such as triton-cpu), its first call
(cold and warm) against its steady-state time from `kinspect bench`. Without a device the steady
state is one line saying so. With --stable, times and paths print as placeholders (samples/_expect.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # samples/_expect.py, also when imported by a test
import _expect  # noqa: E402

from kinspect import api
from kinspect.analysis import analyse
from kinspect.isa import get as isa_spec
from kinspect.core.errors import KinspectError

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "cpu" / "triton-shared-riscv-softmax"
CPUS = ("generic-rv64", "spacemit-x60", "spacemit-x60-spine")


def row(label: str, report) -> str:
    m = report.isa
    if m is None:
        return f"  {label:<22} no machine code"
    ops = m.mnemonics
    vset = sum(n for op, n in ops.items() if op.startswith("vset"))
    whole = sum(n for op, n in m.vector_ops.items() if isa_spec("riscv").register_spill.match(op))
    fma = sum(n for op, n in ops.items() if op.startswith(("vfmacc", "vfmadd", "vfwmacc")))
    libm = sum(n for c, n in m.calls.items() if c in ("expf", "exp", "logf", "tanhf"))
    return (f"  {label:<22}{m.instructions:>7}{m.vector:>8}{ops['vle32.v']:>7}{ops['vse32.v']:>7}{vset:>7}"
            f"{fma:>7}{m.reductions.get('ordered', 0):>8}{whole:>8}{libm:>6}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("folder", nargs="?", default=None)
    ap.add_argument("--kernel", default=None, help="only this kernel (default: every kernel in FOLDER)")
    ap.add_argument("--jit-kernel", default="fused_mm_softmax",
                    help="the shipped kernel compiled here and, with a device, benched (default: fused_mm_softmax)")
    ap.add_argument("--no-jit", action="store_true", help="only the vector question")
    _expect.add_flag(ap)
    a = ap.parse_args(argv)
    _expect.configure(a)
    with tempfile.TemporaryDirectory(prefix="kinspect-k1-dump-") as tmp:
        return run(a, a.folder or board_dump(Path(tmp)))


def board_dump(folder: Path) -> str:
    """The fixture as spine-triton's SPINE_TRITON_DUMP_PATH leaves it on the board (<k>_tt.mlir,
    <k>_linalg.mlir, <k>_.ll): what a K1 user's run dumps, so the default answers as on the board."""
    import shutil

    for src, name in (("tt.mlir", "softmax_kernel_tt.mlir"), ("ttshared.mlir", "softmax_kernel_linalg.mlir"),
                      ("ll.ir", "softmax_kernel_.ll")):
        shutil.copyfile(FIXTURE / src, folder / name)
    return str(folder)


def run(a, folder: str) -> int:
    try:
        variants = [v for v in api.resolve_variants([folder]) if a.kernel in (None, v.kernel)]
        if not variants:
            print(f"error: no kernel{' ' + repr(a.kernel) if a.kernel else ''} in '{folder}'", file=sys.stderr)
            return 2
        board_answer(folder, variants)
        print("\nThe same LLVM IR for other X60 builds (kinspect vec-report FOLDER --retarget CPU):")
        for v in variants:
            compiled = analyse(v)
            others = [(cpu, analyse(api.retargeted(v, cpu))) for cpu in CPUS]
            print(f"{v.kernel}  ({v.origin}, {_expect.text(v.path, 'path')})")
            how = compiled.variant.stage(compiled.isa.stage).derived_by if compiled.isa else None
            here = _for_this_machine(how)
            if here:  # IR that names no CPU is compiled for the one running this: its figures are that CPU's
                print(f"  as compiled: for this machine's CPU (the IR names none): {_expect.text(how, 'this machine')}")
            else:
                print(f"  as compiled: {how or 'the backend’s own assembly stage'}")
            print(f"  {'':<22}{'instr':>7}{'vector':>8}{'vle32':>7}{'vse32':>7}{'vset':>7}{'vfmacc':>7}"
                  f"{'ordered':>8}{'wholeR':>8}{'expf':>6}")
            line = row("as compiled", compiled)
            print(f"  {'as compiled':<22}<this machine's CPU>" if here and _expect.stable else line)
            for cpu, r in others:
                if r.isa and row("", r) == row("", compiled):   # the board's own flags: no new figure
                    print(f"  {cpu:<22}   = as compiled (the board's flags give the same code)")
                else:
                    print(row(cpu, r))
            print("  verdicts for spacemit-x60:")
            for verdict in others[1][1].verdicts:
                print(f"    {verdict.text}")
            print()
    except KinspectError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("vector: RVV instructions; vle32/vse32: unit-stride 32-bit vector loads/stores; vset: vsetvli/vsetivli;\n"
          "ordered: vfredosum reductions (sequential); wholeR: whole-register vector loads/stores (LLVM's vector\n"
          "spills); expf: scalar libm calls, one element each.")
    if a.no_jit:
        return 0
    print()
    try:
        jit_vs_steady(variants, a.jit_kernel)
    except KinspectError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def board_answer(folder: str, variants) -> None:
    """What `kinspect vec-report` answers on the board, run in the folder spine-triton dumped into (with
    SPINE_TRITON_DUMP_PATH set, or its Triton cache): per kernel, RVV used or not, where, what kind,
    and what to try. The same functions the command calls, so this is its output."""
    from kinspect.render.program import summary
    from kinspect.render.report import vec_report

    print(f"$ SPINE_TRITON_DUMP_PATH={_expect.text(folder, 'path')} kinspect vec-report")
    if api.is_program(variants):
        found = api.program(variants, where=folder)
        text = "\n\n".join([summary(found)]
                            + [vec_report(r) for r in found.details])
    else:
        text = "\n\n".join(vec_report(r) for r in api.vec_report_of(variants))
    if _expect.stable:
        text = text.replace(str(Path(folder).resolve()), "<path>").replace(folder, "<path>")
    print("\n".join("  " + line for line in text.splitlines()))


def _for_this_machine(how: str | None) -> bool:
    """Whether the as-compiled assembly was made for the CPU running this (IR that names no CPU)."""
    from kinspect.backends import retarget

    return bool(how) and how.endswith(retarget.host().describe())


def stage_times(times) -> str:
    """`source 23.7, ttir 13.8, ...` in ms, from a variant's CompileTimes (Triton's listener)."""
    parts = [("source", times.ir_initialization_us), *times.stages]
    if times.store_results_us:
        parts.append(("store", times.store_results_us))
    return ", ".join(f"{name} {_expect.ms(us / 1e3)}" for name, us in parts)


def jit_vs_steady(variants, kernel: str) -> None:
    from kinspect.compile.targets import active_device_target

    print("JIT time per stage vs steady state")
    recorded = [v for v in variants if v.times is not None]
    for v in recorded:
        print(f"  {v.kernel} as recorded in FOLDER ({v.target}{', cache hit' if v.cache_hit else ''}): "
              f"JIT {_expect.ms(v.times.total_us / 1e3)} ms = {stage_times(v.times)}")
    if not recorded:
        print("  FOLDER records no compile times (a Triton cache or dump folder keeps none); on the board,\n"
              "  `kinspect capture --store DIR -- python your_script.py` records Triton's time per stage, and this\n"
              "  sample prints them for DIR")
    with tempfile.TemporaryDirectory(prefix="kinspect-k1-") as out:
        v = api.dump(kernel, target="cuda:90", out_dir=out).variant
        consts = ", ".join(f"{k}={x}" for k, x in v.constexprs.items())
        print(f"  {kernel} ({consts}) compiled here offline for cuda:90 (Triton's GPU pipeline; a CPU backend\n"
              f"  shares the source and ttir stages, then lowers differently):\n"
              f"    JIT {_expect.ms(v.times.total_us / 1e3)} ms = {stage_times(v.times)}")
        device = active_device_target()
        if device is None:
            print(f"  steady state: no device here (no GPU, no CPU Triton backend such as triton-cpu), so no run to\n"
                  f"  time; on the board or a GPU: `kinspect bench {kernel}` (first call vs steady state)")
            return
        b = api.bench(kernel, out_dir=out, references=False)
        cold, warm, steady = b.first.cold, b.first.warm, b.steady.wall
        print(f"  on {device} (the active device), {kernel} at {b.size}:")
        print(f"    first call, cold (compiles)    {_expect.ms(cold.wall_ms):>8} ms = JIT {_expect.ms(cold.jit_ms)} ms "
              f"({', '.join(f'{k} {_expect.ms(x)}' for k, x in cold.stages_ms().items())}) + "
              f"{_expect.ms(cold.rest_ms)} ms other")
        print(f"    first call, warm (disk cache)  {_expect.ms(warm.wall_ms):>8} ms = JIT {_expect.ms(warm.jit_ms)} ms "
              f"+ {_expect.ms(warm.rest_ms)} ms other")
        print(f"    steady state, median           {_expect.ms(steady.median):>8} ms (p20 {_expect.ms(steady.p20)}, "
              f"p80 {_expect.ms(steady.p80)}, {_expect.count(steady.n)} runs; {b.steady.tool})")
        if steady.median:
            print(f"    the cold first call costs {_expect.figure(cold.wall_ms / steady.median, 'n', '{:,.0f}')} "
                  f"steady-state calls; the warm one {_expect.figure(warm.wall_ms / steady.median, 'n', '{:,.0f}')}")


if __name__ == "__main__":
    sys.exit(main())
