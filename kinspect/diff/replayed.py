"""Captured variants compiled again in a sweep (`kinspect diff VARIANT -p ...`): the sweep's Jobs that
recompile a captured launch with the swept values, what the diff's notes say of them, and what a
worker does with such a Job (kinspect.compile.replayed compiles the launch)."""

from __future__ import annotations

import itertools
from pathlib import Path

from kinspect.diff.jobs import Job, JobResult
from kinspect.core.errors import KinspectError, UsageError
from kinspect.core.model import Variant
from kinspect.replay.spec import from_variant


def jobs(variants: list[Variant], *, targets=(None,), constexprs: dict[str, list] | None = None,
         num_warps=(None,), num_stages=(None,), out_dir: str | Path = "") -> list[Job]:
    """Sweep Jobs that compile each captured variant's most frequent launch again, for every
    combination of the values; a name in `constexprs` must be one of its constexprs or scalars."""
    constexprs = constexprs or {}
    keys = list(constexprs)
    out = []
    for v in variants:
        spec = from_variant(v)
        settable = {a.name for a in spec.args if a.kind not in ("tensor", "tensordesc")}
        unknown = [k for k in keys if k not in settable]
        if unknown:
            from kinspect.core.errors import did_you_mean

            raise UsageError(f"-p {unknown[0]}: '{v.kernel}' has no constexpr or scalar '{unknown[0]}'"
                             f"{did_you_mean(unknown[0], settable)}; its constexprs: "
                             f"{', '.join(spec.constexpr_names()) or 'none'}")
        values = itertools.product(*(constexprs[k] for k in keys))
        for target, vals, w, s in itertools.product(targets or (None,), values, num_warps or (None,),
                                                    num_stages or (None,)):
            out.append(Job(kernel=v.kernel, target=target or spec.target, constexprs=tuple(zip(keys, vals)),
                           num_warps=w, num_stages=s, out_dir=str(out_dir), replay=str(Path(v.path).resolve())))
    return out


def replayed_note(v: Variant) -> str:
    """What a sweep of a captured variant compiled again, for the diff's notes."""
    from kinspect.replay.spec import how

    spec = from_variant(v)
    return f"{v.kernel} compiled again with its captured launch ({spec.describe()}); the kernel {how(spec)}"


def compile_job(job: Job) -> JobResult:
    """A sweep Job with `replay` set, compiled in a worker: an JobResult with the stored folder and
    its record of figures, or the error line."""
    from kinspect.analysis.summary import summaries
    from kinspect.compile.replayed import compile_spec
    from kinspect.replay.spec import load

    try:
        variant = compile_spec(load(job.replay), out_dir=job.out_dir, target=job.target,
                               overrides=dict(job.constexprs), num_warps=job.num_warps, num_stages=job.num_stages)
        figures = summaries([variant], jobs=1)[0]
    except KinspectError as e:
        return JobResult(job, error=str(e))
    return JobResult(job, path=variant.path, metrics=figures.to_json())
