"""One row per variant of a sweep or of saved variants: its label (what tells it apart from the
others), its record of figures (kinspect.analysis.summary.VariantMetrics, the one every view reads)
and its runtime where it was timed."""

from __future__ import annotations

from dataclasses import dataclass, field

from kinspect.analysis.summary import VariantMetrics
from kinspect.bench.stats import Runtime
from kinspect.core.model import Variant


@dataclass(frozen=True)
class Row:
    label: str
    variant: Variant
    metrics: VariantMetrics
    runtime: Runtime | None = None
    # the variant's full analysis (kinspect.analysis.VariantReport) when it was made for this row: a
    # report shows it (verdicts, stages) without analysing the variant again
    report: object = field(default=None, compare=False, repr=False)

def rows(variants: list[Variant], known: dict[str, VariantMetrics] | None = None, *,
         keep_reports: bool | int = False) -> list[Row]:
    """One Row per variant; `known` maps a variant's path to its record made already (by a sweep's
    worker, beside the compile). The rest come from kinspect's cache or are analysed here (in
    parallel when there are many); with `keep_reports` those analyses are full and kept on their rows
    (a number: only where there are at most that many variants, since a full analysis is far larger
    than a row's figures)."""
    from kinspect.analysis import analyse_all
    from kinspect.analysis.summary import remember, summaries

    known = known or {}
    figures = [known.get(v.path) for v in variants]
    reports: list = [None] * len(variants)
    todo = [i for i, f in enumerate(figures) if f is None]
    if keep_reports is True or (keep_reports and len(variants) <= keep_reports):
        for i, report in zip(todo, analyse_all([variants[i] for i in todo])):
            figures[i], reports[i] = remember(variants[i], report), report
    else:
        for i, made in zip(todo, summaries([variants[i] for i in todo])):
            figures[i] = made
    return [Row(label=label, variant=v, metrics=m, report=r)
            for label, v, m, r in zip(labels(variants), variants, figures, reports)]


def _facets(v: Variant) -> dict[str, str]:
    """What can tell two variants apart, as `key: shown value`."""
    facets = {"kernel": v.kernel, "file": v.source.file if v.source else "", "target": str(v.target)}
    if v.retarget:
        facets["target"] = f"{v.target}@{v.retarget.spec}"
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
    tuning = v.user.autotune if v.user is not None else None
    return tuning.config.index if tuning is not None and tuning.config is not None else None


def labels(variants: list[Variant], named: bool = False) -> list[str]:
    """Each variant named by what differs: `BLOCK_SIZE=64 w=8`, `cuda:80`, ... Among variants of several
    kernels (or `named`), the kernel's name, then what differs among that kernel's own variants (another
    kernel's constexprs and arguments say nothing of this one)."""
    facets = [_facets(v) for v in variants]
    kernels = {}          # kernel name -> the facets of its variants (from one file or several)
    for f in facets:
        kernels.setdefault(f["kernel"], []).append(f)
    # the file tells variants apart only where one kernel name comes from several files (before.py and
    # after.py); generated files (Inductor's hashed names) would only hide the kernel's name
    same_name = any(len({g["file"] for g in own}) > 1 for own in kernels.values())
    several = named or len(kernels) > 1 or same_name
    across = [k for k in ("target",) if len({f[k] for f in facets}) > 1]    # said of every row where it varies
    out = []
    for v, f in zip(variants, facets):
        own = kernels[f["kernel"]]
        keys = list(dict.fromkeys(k for g in own for k in g))
        varying = [k for k in keys if k not in ("kernel", "file", *across) and len({g.get(k) for g in own}) > 1]
        parts = []
        if several:
            parts.append(_short_source(f"{f['file']}:{f['kernel']}", [f"{g['file']}:{g['kernel']}" for g in facets])
                         if same_name and f["file"] else f["kernel"])
        parts += [f[k] for k in across]
        for k in varying:
            if k in f:
                parts.append(f[k])
            elif not k.startswith(("type:", "align:")):   # a facet only some of its variants have (a config)
                parts.append(f"{k.split(':', 1)[-1]}=-")
        out.append(" ".join(parts) or (v.name or v.kernel))
    if len(set(out)) < len(out):  # the same compile twice (two stores): tell them apart by folder
        out = [f"{label} [{v.name or v.path}]" for label, v in zip(out, variants)]
    return out


def _short_source(value: str, all_values: list[str]) -> str:
    """`a.py:kern` rather than the whole path when the file names already differ."""
    import os

    names = [os.path.basename(x) for x in all_values]
    return os.path.basename(value) if len(set(names)) == len(set(all_values)) else value
