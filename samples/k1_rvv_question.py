"""The K1 question, replayed on a folder copied off the board:
"does my fused_mm_softmax use RVV on the SpacemiT X60, and what changes with force-vector-width?"

    python samples/k1_rvv_question.py [FOLDER] [--kernel fused_mm_softmax]

FOLDER is what spine-triton (or triton-cpu / triton-shared) left on the board: its Triton cache
(~/.triton/cache), a SPINE_TRITON_DUMP_PATH folder, or a TRITON_SHARED_DUMP_PATH folder, copied
here as it is. Without FOLDER the sample uses the real softmax that ships in kinspect's test
fixtures (a Triton softmax taken through a triton-shared RISC-V pipeline), so it runs anywhere.

For each kernel it reports the assembly as the board's toolchain made it (disassembled from the
.so, or compiled again from the llir with spine-triton's flags) and the same LLVM IR compiled for
spacemit-x60 with and without spine-triton's -force-vector-width=32 -force-vector-interleave=2,
and for generic-rv64 (no V) as the baseline. Nothing is written into FOLDER.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kinspect import api
from kinspect.analysis import analyse
from kinspect.analysis.verdicts import WHOLE_REGISTER
from kinspect.errors import KinspectError

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "cpu" / "triton-shared-riscv-softmax"
CPUS = ("generic-rv64", "spacemit-x60", "spacemit-x60-spine")


def row(label: str, report) -> str:
    m = report.isa
    if m is None:
        return f"  {label:<22} no machine code"
    ops = m.mnemonics
    vset = sum(n for op, n in ops.items() if op.startswith("vset"))
    whole = sum(n for op, n in m.vector_ops.items() if WHOLE_REGISTER.match(op))
    fma = sum(n for op, n in ops.items() if op.startswith(("vfmacc", "vfmadd", "vfwmacc")))
    libm = sum(n for c, n in m.calls.items() if c in ("expf", "exp", "logf", "tanhf"))
    return (f"  {label:<22}{m.instructions:>7}{m.vector:>8}{ops['vle32.v']:>7}{ops['vse32.v']:>7}{vset:>7}"
            f"{fma:>7}{m.reductions.get('ordered', 0):>8}{whole:>8}{libm:>6}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("folder", nargs="?", default=str(FIXTURE))
    ap.add_argument("--kernel", default=None, help="only this kernel (default: every kernel in FOLDER)")
    a = ap.parse_args(argv)
    try:
        variants = [v for v in api.resolve_variants([a.folder]) if a.kernel in (None, v.kernel)]
        if not variants:
            print(f"error: no kernel{' ' + repr(a.kernel) if a.kernel else ''} in '{a.folder}'", file=sys.stderr)
            return 2
        for v in variants:
            compiled = analyse(v)
            others = [(cpu, analyse(api.retargeted(v, cpu))) for cpu in CPUS]
            print(f"{v.kernel}  ({v.origin}, {v.path})")
            how = compiled.variant.stage(compiled.isa.stage).derived_by if compiled.isa else None
            print(f"  as compiled: {how or 'the backend’s own assembly stage'}")
            print(f"  {'':<22}{'instr':>7}{'vector':>8}{'vle32':>7}{'vse32':>7}{'vset':>7}{'vfmacc':>7}"
                  f"{'ordered':>8}{'wholeR':>8}{'expf':>6}")
            print(row("as compiled", compiled))
            for cpu, r in others:
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
