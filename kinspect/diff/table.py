"""One row of metrics per variant, and the labels that tell a sweep's variants apart."""

from __future__ import annotations

from dataclasses import dataclass, field

from kinspect.analysis import analyse
from kinspect.analysis.code_size import code_bytes
from kinspect.bench.stats import Runtime
from kinspect.model import Variant


@dataclass(frozen=True)
class Row:
    label: str
    variant: Variant
    isa: str
    registers: int | None
    spills: int | None
    shared_bytes: int | None
    occupancy: float | None
    occupancy_limiter: str
    instructions: int
    vector: int
    matrix: int
    matrix_units: dict[str, int]
    code_bytes: int | None
    jit_us: int | None
    jit_stages: dict[str, int] = field(default_factory=dict)
    runtime: Runtime | None = None
    findings: list[dict] = field(default_factory=list)   # {kind, severity, text, advice}, worst first

    def to_json(self) -> dict:
        v = self.variant
        return {
            "label": self.label, "variant": v.name or v.kernel, "kernel": v.kernel, "path": v.path,
            "target": str(v.target), "constexprs": v.constexprs, "config": config_index(v),
            "num_warps": v.options.get("num_warps"), "num_stages": v.options.get("num_stages"),
            "isa": self.isa, "registers": self.registers, "spills": self.spills, "shared_bytes": self.shared_bytes,
            "occupancy": self.occupancy, "occupancy_limiter": self.occupancy_limiter or None,
            "instructions": self.instructions, "vector_instructions": self.vector,
            "matrix_instructions": self.matrix, "matrix_by_unit": self.matrix_units, "code_bytes": self.code_bytes,
            "jit_ms": None if self.jit_us is None else round(self.jit_us / 1000, 1),
            "jit_ms_by_stage": {k: round(us / 1000, 1) for k, us in self.jit_stages.items()},
            "cache_hit": v.cache_hit if v.times else None,
            "runtime": None if self.runtime is None else vars(self.runtime),
            "findings": self.findings,
        }


def metrics(v: Variant, report=None) -> dict:
    """A variant's row figures (everything but label, variant and runtime), as plain JSON values:
    a sweep's worker measures them beside the compile and sends them back. `report` is the variant's
    analysis when it was made already."""
    report = report if report is not None else analyse(v)
    m, r = report.isa, report.resources
    stages = {}
    if v.times is not None:
        stages = {"source": v.times.ir_initialization_us, **dict(v.times.stages)}
    return dict(isa=report.isa_name, registers=r.registers, spills=r.spills, shared_bytes=r.shared_bytes,
                occupancy=None if r.occupancy is None else round(r.occupancy.fraction, 4),
                occupancy_limiter=r.occupancy.limiter if r.occupancy else "",
                instructions=m.instructions if m else 0, vector=m.vector if m else 0,
                matrix=m.matrix_total if m else 0, matrix_units=dict(m.matrix) if m else {},
                code_bytes=code_bytes(v), jit_us=v.times.total_us if v.times else None, jit_stages=stages,
                findings=findings_of(report))


def findings_of(report) -> list[dict]:
    """A variant's findings (analysis.findings), worst first, as plain values."""
    found = sorted((x for x in report.verdicts if x.kind), key=lambda x: -x.severity)
    return [{"kind": x.kind, "severity": x.severity, "text": x.text, "advice": x.what_to_try} for x in found]


def rows(variants: list[Variant], known: dict[str, dict] | None = None,
         reports: dict | None = None) -> list[Row]:
    """One Row per variant; `known` maps a variant's path to figures a worker measured already. The
    analyses made here (in parallel when there are many) are put in `reports`, by id() of the variant
    (stage files of one folder share a path)."""
    from kinspect.analysis import analyse_all

    known = known or {}
    figures = [known.get(v.path) for v in variants]
    todo = [i for i, f in enumerate(figures) if f is None]
    for i, report in zip(todo, analyse_all([variants[i] for i in todo])):
        figures[i] = metrics(variants[i], report)
        if reports is not None:
            reports[id(variants[i])] = report
    return [Row(label=label, variant=v, **f) for label, v, f in zip(labels(variants), variants, figures)]


def _facets(v: Variant) -> dict[str, str]:
    """What can tell two variants apart, as `key: shown value`."""
    facets = {"kernel": v.kernel, "file": v.source.file if v.source else "", "target": str(v.target)}
    if v.extra.get("retarget"):
        facets["target"] = f"{v.target}@{v.extra['retarget']}"
    config = config_index(v)
    if config is not None:   # an autotuned kernel's rows are named by their config first
        facets["config"] = f"config={config}"
    facets.update({f"const:{k}": f"{k}={val}" for k, val in v.constexprs.items()})
    facets.update({k: f"{short}={v.options[k]}" for k, short in (("num_warps", "w"), ("num_stages", "s"),
                                                                  ("num_ctas", "ctas"), ("maxnreg", "maxnreg"))
                   if v.options.get(k) is not None})
    facets.update(v.specialization())
    return facets


def config_index(v: Variant) -> int | None:
    """The autotune config a user kernel's variant was compiled with (kinspect.compile.user)."""
    config = ((v.extra.get("user") or {}).get("autotune") or {}).get("config")
    return config["index"] if config else None


def labels(variants: list[Variant]) -> list[str]:
    """Each variant named by what differs across the list: `BLOCK_SIZE=64 w=8`, `cuda:80`, ..."""
    facets = [_facets(v) for v in variants]
    keys = list(dict.fromkeys(k for f in facets for k in f))
    varying = [k for k in keys if len({f.get(k) for f in facets}) > 1]
    # the file tells variants apart only where one kernel name comes from several files (before.py and
    # after.py); generated files (Inductor's hashed names) would only hide the kernel's name
    files_of = {}
    for f in facets:
        files_of.setdefault(f["kernel"], set()).add(f["file"])
    same_name = any(len(files) > 1 for files in files_of.values())
    out = []
    for v, f in zip(variants, facets):
        parts = []
        for k in varying:
            if k == "file":
                continue
            if k == "kernel" and same_name:
                parts.append(_short_source(f"{f['file']}:{f['kernel']}" if f["file"] else f["kernel"],
                                           [f"{g['file']}:{g['kernel']}" for g in facets]))
            elif k in f:
                parts.append(f[k])
            elif not k.startswith(("type:", "align:")):   # another kernel's argument: nothing to say
                parts.append(f"{k}=-")
        if "kernel" not in varying and "file" in varying and same_name:
            parts.insert(0, _short_source(f"{f['file']}:{f['kernel']}", [f"{g['file']}:{g['kernel']}" for g in facets]))
        out.append(" ".join(parts) or (v.name or v.kernel))
    if len(set(out)) < len(out):  # the same compile twice (two stores): tell them apart by folder
        out = [f"{label} [{v.name or v.path}]" for label, v in zip(out, variants)]
    return out


def _short_source(value: str, all_values: list[str]) -> str:
    """`a.py:kern` rather than the whole path when the file names already differ."""
    import os

    names = [os.path.basename(x) for x in all_values]
    return os.path.basename(value) if len(set(names)) == len(set(all_values)) else value
