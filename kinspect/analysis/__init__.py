"""Metrics and verdicts of a variant from its stored stages (no Triton needed).

    report = analyse(variant)
    report.to_json()   # variant, isa, instructions, vector/matrix counts, mnemonics, registers, ...
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from kinspect import backends, ir
from kinspect.isa import find as find_isa
from kinspect.analysis.matrix_lines import place, relocate
from kinspect.analysis.metrics import StageMetrics, measure
from kinspect.analysis.readable import CountedLines, unreadable
from kinspect.analysis.stages import isa_stage, open_lines, text_stages, virtual_stage
from kinspect.analysis.assumed import guesses, qualify
from kinspect.analysis.verdicts import Findings, Verdict, finding, verdicts
from kinspect.core.errors import KinspectError
from kinspect.core.model import Variant
from kinspect.backends.resources import Resources


@dataclass
class VariantReport:
    variant: Variant
    isa: StageMetrics | None
    stages: dict[str, StageMetrics]
    resources: Resources
    verdicts: list[Verdict]
    problems: list[str]
    instead: str = ""           # why a virtual ISA (PTX) is analysed in place of the machine code

    @property
    def isa_name(self) -> str:
        return self.isa.dialect if self.isa else "none"

    def to_json(self) -> dict:
        m = self.isa
        r = self.resources
        return {
            "variant": self.variant.name or self.variant.kernel,
            "kernel": self.variant.kernel,
            "target": str(self.variant.target),
            "path": self.variant.path,
            "isa": self.isa_name,
            "retarget": self.variant.extra.get("retarget"),
            "retargeted_from": self.variant.extra.get("retargeted_from"),
            "backend": self.variant.extra.get("backend", self.variant.target.backend),
            "isa_stage": self.isa_stage_json(),
            "instructions": m.instructions if m else 0,
            "vector_instructions": m.vector if m else 0,
            "matrix_instructions": m.matrix_total if m else 0,
            "matrix_by_unit": dict(m.matrix) if m else {},
            "scalar_fp_instructions": m.scalar_fp if m else 0,
            "load_widths": {str(k): v for k, v in sorted(m.load_widths.items())} if m else {},
            "store_widths": {str(k): v for k, v in sorted(m.store_widths.items())} if m else {},
            "reductions": dict(m.reductions) if m else {},
            "kinds": dict(m.kinds) if m else {},
            "mnemonics": dict(m.mnemonics.most_common()) if m else {},
            "other_mnemonics": m.other if m else 0,
            "registers": r.registers,
            "registers_from": r.source,
            "spills": r.spills,
            "spill_instructions": (m.spill_loads + m.spill_stores) if m else 0,
            "shared_bytes": r.shared_bytes,
            "occupancy": None if r.occupancy is None else {
                "fraction": round(r.occupancy.fraction, 4), "active_warps": r.occupancy.active_warps,
                "max_warps": r.occupancy.max_warps, "limiter": r.occupancy.limiter},
            "verdicts": [{"text": v.text, "level": v.level, "line": v.line, "file": v.file} for v in self.verdicts],
            "assumed": [g.to_json() for g in guesses(self.variant)],
            "per_line": per_line(self),
            "problems": self.problems,
            "notes": list(self.variant.notes),
            # what a captured program launched it with (grids, shapes, dtypes, strides), as record.json keeps it
            "launches": dataclasses.asdict(self.variant.launches) if self.variant.launches else None,
        }

    def isa_stage_json(self) -> dict | None:
        """Which stage is the machine code, and how it was made when kinspect made it."""
        if self.isa is None:
            return None
        s = self.variant.stage(self.isa.stage)
        return {"name": self.isa.stage, "derived_by": s.derived_by if s else None,
                **({"instead_of_machine_code": self.instead} if self.instead else {})}


def per_line(report: VariantReport) -> list[dict]:
    """Instructions each source line produced in each stage, by kind."""
    rows = {}
    for name, m in report.stages.items():
        for (file, line), ls in m.lines.items():
            row = rows.setdefault((file, line), {"file": file, "line": line, "stages": {}})
            row["stages"][name] = {"total": ls.total, **dict(ls.kinds),
                                   **({"matrix_units": dict(ls.matrix)} if ls.matrix else {}),
                                   **({"load_widths": {str(k): v for k, v in ls.load_widths.items()}}
                                      if ls.load_widths else {})}
    return [rows[k] for k in sorted(rows, key=lambda k: (k[0], k[1]))]


def stage_metrics(v: Variant, stage) -> StageMetrics:
    """A stage parsed and measured; `unreadable` says why it is no evidence when it did not parse."""
    gpu = backends.of(v).gpu
    with open_lines(v, stage) as lines:
        counted = CountedLines(lines)
        m = measure(stage.name, stage.dialect, ir.parse(stage.dialect, counted), gpu=gpu)
    m.text_lines, m.first_line = counted.count, counted.first
    m.unreadable = unreadable(stage.name, stage.dialect, m.instructions, counted.count, counted.first)
    return m


def analyse(v: Variant, *, light: bool = False) -> VariantReport:
    """Every text stage parsed and measured, the resources read and the verdicts drawn. `light`
    leaves out the PTX when the variant has machine code: no verdict reads it, and summaries of
    hundreds of variants need not pay for it (its per-line table is then missing)."""
    stages, problems = {}, []
    isa = isa_stage(v)
    instead = ""
    if isa is None and (virtual := virtual_stage(v)) is not None:
        isa, instead = virtual, _instead(v, virtual)
    for s in text_stages(v):
        if light and isa is not None and not instead and getattr(find_isa(s.dialect), "virtual", False):
            continue          # PTX: the machine code below it says more
        try:
            m = stage_metrics(v, s)
        except KinspectError as e:
            problems.append(f"{s.name}: {e}")
            continue
        if m.unreadable:        # never evidence: no verdict, no figure is drawn from it
            problems.append(m.unreadable)
        else:
            stages[s.name] = m
    isa_metrics = stages.get(isa.name) if isa else None
    stated = dict(isa_metrics.resources) if isa_metrics else {}
    res = backends.resources_of(v, stated)
    findings = Findings(v, isa_metrics, stages, res, first_ir=_first_ir(v))
    if isa_metrics is not None:
        findings.placement = place(isa_metrics, findings.ir(), findings.is_kernel_file)
        if findings.placement is not None:
            relocate(isa_metrics, findings.placement)
    problems = [f"stage {p}" for p in problems] + list(v.problems)    # and what its store could not give
    found = qualify(verdicts(findings), v) + [finding(p, "unreadable_stage") for p in problems]
    return VariantReport(v, isa_metrics, stages, res, found, problems, instead if isa_metrics else "")


def _instead(v: Variant, virtual) -> str:
    """Why the virtual ISA stands in for the machine code, in words: what could not be derived."""
    failed = [n.split(" not derived: ", 1) for n in v.notes if " not derived: " in n]
    why = f"{failed[0][0]} not derived: {failed[0][1]}" if failed else "no machine-code stage and none derived"
    return (f"no machine code ({why}): the {virtual.name} is analysed in its place; its counts are "
            f"{virtual.name} instructions (a virtual ISA: before the assembler schedules them and allocates "
            f"registers), not machine instructions; registers and spills unknown")


def _first_ir(v: Variant) -> StageMetrics | None:
    """The IR as built from the Python AST, before any pass (Triton's `source` stage, in caches and
    stores): where a tl.dot the compiler later folds away is still seen."""
    s = v.stage("source")
    if s is None or s.dialect != "mlir" or s.binary:
        return None
    try:
        m = stage_metrics(v, s)
    except KinspectError:
        return None
    return None if m.unreadable else m


PARALLEL_FROM = 8   # analyse this many variants or more in worker processes


def analyse_all(variants: list[Variant], *, light: bool = False) -> list[VariantReport]:
    """`analyse` of each variant, in order; many are analysed in worker processes (kinspect.core.parallel)."""
    from functools import partial

    from kinspect.core.parallel import process_map

    return process_map(partial(analyse, light=light), variants, least=PARALLEL_FROM)
