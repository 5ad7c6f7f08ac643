"""Verdicts in plain words, tied to source lines where the stages carry locations.

Each rule reads a Findings (the metrics of every stage, resources, the kernel's source) and
returns Verdicts; RULES lists them in the order a reader wants them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from kinspect.analysis.metrics import StageMetrics
from kinspect.analysis.resources import Resources
from kinspect.model import Variant

UNIT_NAMES = {
    "hgmma": "HGMMA (wgmma)", "hmma": "HMMA (mma.sync)", "imma": "IMMA", "tcgen05": "tcgen05 MMA (UTC*MMA)",
    "mfma": "v_mfma (MFMA)", "wmma": "v_wmma (WMMA)", "amx": "AMX tile ops", "ime": "IME (smt.vmadot)",
    "sme": "SME outer products",
}
CPU_VECTOR_NAMES = {"riscv": "RVV", "x86": "SIMD (SSE/AVX/AVX-512)", "aarch64": "NEON/SVE"}
MATRIX_WORDS = {"cuda": "tensor cores used", "hip": "matrix cores used"}


@dataclass(frozen=True)
class Verdict:
    text: str
    level: str = "info"          # good | info | warn
    line: int | None = None
    file: str | None = None


@dataclass
class Findings:
    variant: Variant
    isa: StageMetrics | None
    stages: dict[str, StageMetrics]
    resources: Resources

    @property
    def gpu(self) -> bool:
        return self.variant.target.backend in ("cuda", "hip")

    def ir(self) -> list[StageMetrics]:
        return [m for m in self.stages.values() if m is not self.isa]

    def is_kernel_file(self, file: str) -> bool:
        """Is this the kernel's own file (not triton/language/*.py)? Without the kernel's source,
        any file outside Triton's language package counts."""
        src = self.variant.source
        if src is None:
            return "triton/language" not in file.replace(os.sep, "/") and os.path.basename(file) not in (
                "standard.py", "core.py", "math.py")
        return os.path.basename(file) == os.path.basename(src.file)

    def code(self, file: str, line: int) -> str:
        """The source text of a line, when kinspect has the kernel's source."""
        src = self.variant.source
        if src and src.text and os.path.basename(file) == os.path.basename(src.file):
            lines = src.text.splitlines()
            i = line - src.line
            if 0 <= i < len(lines):
                return lines[i].strip()
        return ""

    def where(self, file: str, line: int) -> str:
        code = self.code(file, line)
        known = self.variant.source is not None and self.is_kernel_file(file)
        place = f"line {line}" if known else f"{os.path.basename(file)}:{line}"
        return f"{place} {_short(code)}".rstrip()


def _short(code: str, width: int = 48) -> str:
    return code if len(code) <= width else code[: width - 1] + "…"


def _fmt_widths(widths) -> str:
    return ", ".join(f"{n}× {bits}-bit" for bits, n in sorted(widths.items(), reverse=True))


MINOR_SHARE = 0.1  # a line with less than this share of the matrix ops is folded into "other lines"


def matrix_rule(f: Findings) -> list[Verdict]:
    if f.isa is None:
        return []
    out = []
    words = MATRIX_WORDS.get(f.variant.target.backend, "matrix units used")
    total = f.isa.matrix_total
    attributed = 0
    for (file, line), ls in sorted(f.isa.lines.items(), key=lambda kv: kv[0][1]):
        n = sum(ls.matrix.values())
        if n and f.is_kernel_file(file) and n >= MINOR_SHARE * total:
            attributed += n
            units = ", ".join(f"{k} {UNIT_NAMES.get(u, u)}" for u, k in ls.matrix.most_common())
            out.append(Verdict(f"{f.where(file, line)} → {units}: {words}", "good", line, file))
    rest = total - attributed
    if rest > 0:
        units = ", ".join(f"{n} {UNIT_NAMES.get(u, u)}" for u, n in f.isa.matrix.most_common())
        out.append(Verdict(f"{units}: {words}" if not out else f"(+{rest} matrix instructions at other lines)",
                           "good"))
    if total == 0:
        for m in f.ir():
            for (file, line), ls in sorted(m.lines.items()):
                if ls.matrix and f.is_kernel_file(file):
                    out.append(Verdict(f"{f.where(file, line)} → no matrix instructions in {f.isa.dialect}: "
                                       f"the dot runs on FMA/vector units", "warn", line, file))
            if out:
                break
    return out


def loads_rule(f: Findings) -> list[Verdict]:
    """Load widths per source line. Lines come from LLVM IR when there is one: Triton emits GPU
    loads as inline PTX, and the PTX/SASS line tables then place them at later lines (seen: the
    fused kernel's 128-bit loads at the tl.exp line in SASS, at the tl.load lines in LLVM IR)."""
    if f.isa is None or not f.gpu:
        return []
    source = next((m for m in f.ir() if m.dialect == "llvm" and m.load_widths), f.isa)
    out = []
    for (file, line), ls in sorted(source.lines.items(), key=lambda kv: kv[0][1]):
        if not ls.load_widths or not f.is_kernel_file(file):
            continue
        widest = max(ls.load_widths)
        if min(ls.load_widths) >= 128:
            out.append(Verdict(f"{f.where(file, line)} loads are {widest}-bit", "good", line, file))
        elif widest <= 32:
            out.append(Verdict(f"{f.where(file, line)} loads are {widest}-bit: not vectorized", "warn", line, file))
        else:
            out.append(Verdict(f"{f.where(file, line)} loads: {_fmt_widths(ls.load_widths)}", "info", line, file))
    return out


def spill_rule(f: Findings) -> list[Verdict]:
    if f.isa is None:
        return []
    m, r = f.isa, f.resources
    if f.gpu:
        if m.spill_loads or m.spill_stores or (r.spills or 0) > 0:
            return [Verdict(f"register spills: {m.spill_stores} spill stores, {m.spill_loads} spill loads "
                            f"({r.spills or 0} bytes of local memory/scratch)", "warn")]
        return [Verdict("no register spills", "good")] if r.registers is not None or m.instructions else []
    if m.spills_in_loops:
        return [Verdict(f"{m.spills_in_loops} stack loads/stores inside loops: register pressure spills in the "
                        f"hot path", "warn")]
    return []


def cpu_vector_rule(f: Findings) -> list[Verdict]:
    if f.isa is None or f.gpu or f.isa.dialect not in CPU_VECTOR_NAMES:
        return []
    name = CPU_VECTOR_NAMES[f.isa.dialect]
    m = f.isa
    if m.vector == 0:
        return [Verdict(f"no vector instructions: {name} unused ({m.scalar_fp} scalar FP instructions)", "warn")]
    share = m.vector / m.instructions if m.instructions else 0
    units = ", ".join(f"{u} {n}" for u, n in m.vector_units.most_common())
    out = [Verdict(f"{m.vector} vector instructions ({share:.0%} of {m.instructions}): {name} used"
                   + (f" ({units})" if units else ""), "good")]
    if m.vtypes:
        mix = ", ".join(f"{k}×{n}" for k, n in m.vtypes.most_common(6))
        out.append(Verdict(f"vsetvli configurations (SEW,LMUL): {mix}", "info"))
    if m.access.get("strided") or m.access.get("indexed"):
        out.append(Verdict(f"vector memory: {m.access.get('unit', 0)} unit-stride, {m.access.get('strided', 0)} "
                           f"strided, {m.access.get('indexed', 0)} indexed (gather/scatter)", "info"))
    return out


def reduction_rule(f: Findings) -> list[Verdict]:
    if f.isa is None or f.gpu:
        return []
    m = f.isa
    out = []
    if m.reductions.get("ordered"):
        ops = ", ".join(op for op, _ in m.mnemonics.most_common() if "redosum" in op or op == "fadda") or "ordered"
        out.append(Verdict(f"{m.reductions['ordered']} ordered reductions ({ops}): strictly sequential; "
                           f"unordered forms need reassociation allowed", "warn"))
    if m.reductions.get("unordered") or m.matrix_total:
        return out
    # A reduction in the IR that the machine code does as a run of scalar FP adds on one location.
    ir_reduce = [(file, line) for ir in f.ir() for (file, line), ls in ir.lines.items()
                 if ls.kinds.get("reduce") and f.is_kernel_file(file)]
    chains = [(ls.scalar_fp, file, line) for (file, line), ls in m.lines.items() if ls.scalar_fp >= 4]
    if not chains and m.scalar_fp >= 4 and any(ir.kinds.get("reduce") for ir in f.ir()):
        chains = [(m.scalar_fp, "", 0)]
    if chains:
        n, file, line = max(chains)
        at = f" at {os.path.basename(file)}:{line}" if file else ""
        head = f"{f.where(*ir_reduce[0])} " if ir_reduce else ""
        kline = ir_reduce[0][1] if ir_reduce else None
        out.append(Verdict(f"{head}reduction is a scalar FP chain: {n} scalar FP adds{at}, no vector reduction",
                           "warn", kline, ir_reduce[0][0] if ir_reduce else None))
    return out


def resource_rule(f: Findings) -> list[Verdict]:
    r = f.resources
    if not f.gpu or r.registers is None:
        return []
    shared = f"{(r.shared_bytes or 0) / 1024:g} KiB shared memory" if r.shared_bytes is not None else ""
    occ = f"; occupancy {r.occupancy.describe()}" if r.occupancy else ""
    return [Verdict(f"{r.registers} registers, {shared}{occ}", "info")]


RULES: tuple[Callable[[Findings], list[Verdict]], ...] = (
    matrix_rule, loads_rule, spill_rule, cpu_vector_rule, reduction_rule, resource_rule,
)


def verdicts(f: Findings) -> list[Verdict]:
    return [v for rule in RULES for v in rule(f)]
