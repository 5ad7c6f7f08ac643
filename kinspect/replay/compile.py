"""Compile captured launches again, offline: `kinspect diff VARIANT -p ... --num-warps ...` and the
compile step of `kinspect capture --interpret` (kinspect.replay.sweep makes their jobs).

Each is a sweep Job (kinspect.diff.jobs) whose `replay` names a variant folder or a spec file;
the sweep's workers hand it to `compile_job`, which rebuilds the kernel and its captured arguments
on the CPU and compiles through kinspect's own path (compile-only driver, `kernel.warmup` with the
tensors): the JIT specializes the arguments as it did in the program.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from kinspect.errors import KinspectError
from kinspect.model import Variant
from kinspect.replay.spec import LAUNCH_OPTIONS, DEFAULT_LAUNCH_OPTIONS, SOURCE_FILE, ReplaySpec


def compile_spec(spec: ReplaySpec, *, out_dir: str | Path, target: str | None = None, overrides: dict | None = None,
                 num_warps: int | None = None, num_stages: int | None = None) -> Variant:
    """Compile the launch `spec` describes (with constexpr or scalar `overrides`, other warps or
    stages) for `target` (default: what it was compiled for) into the store at `out_dir`."""
    from kinspect.compile.variant import compile_variant
    from kinspect.compile.targets import resolve
    from kinspect.replay.args import values
    from kinspect.replay.spec import kernel

    resolved = resolve(target or spec.target)
    fn = kernel(spec)
    vals = values(spec.args, spec.signature, spec.attributes, "cpu", overrides=overrides)
    allowed = LAUNCH_OPTIONS.get(resolved.target.backend, DEFAULT_LAUNCH_OPTIONS)
    options = {k: v for k, v in spec.options.items() if k in allowed}
    options.update({k: v for k, v in (("num_warps", num_warps), ("num_stages", num_stages)) if v is not None})
    variant = compile_variant(fn, args=vals.args, constexprs=vals.constexprs, grid=spec.grid, resolved=resolved,
                              out_dir=out_dir, group=spec.kernel, options=options)
    notes = []
    if not overrides and num_warps is None and num_stages is None and str(resolved.target) == spec.target:
        notes += specialization_notes(spec, variant)
    return _finished(variant, spec, notes)


def _finished(variant: Variant, spec: ReplaySpec, notes: list[str]) -> Variant:
    """Keep the captured source beside the variant (so it replays without the program's files) and
    add `notes` to its record."""
    from kinspect.store import Store, write_atomic

    folder = Path(variant.path)
    if spec.source is not None and not (folder / SOURCE_FILE).exists():
        write_atomic(folder / SOURCE_FILE, json.dumps(spec.source.to_json()))
    new = [n for n in notes if n not in variant.notes]
    if new or (spec.origin and variant.origin != spec.origin):
        variant = dataclasses.replace(variant, notes=variant.notes + tuple(new), origin=spec.origin or variant.origin)
        Store(folder.parent.parent).update_record(variant)
    return variant


def specialization_notes(spec: ReplaySpec, variant: Variant) -> list[str]:
    """What differs between the specialization the launch had and the one the replay compiled
    (nothing, when the arguments were rebuilt faithfully)."""
    if not spec.attributes and not spec.signature:
        return []
    out = []
    names = sorted(set(spec.attributes) | set(variant.attributes))
    differ = [n for n in names if _attrs(spec.attributes.get(n)) != _attrs(variant.attributes.get(n))]
    if differ:
        shown = "; ".join(f"{n}: {spec.attributes.get(n) or '-'} captured, {variant.attributes.get(n) or '-'} here"
                          for n in differ[:3])
        out.append(f"replayed with another specialization than captured: {shown}")
    types = [n for n, t in spec.signature.items() if variant.signature.get(n) not in (None, t)]
    if types:
        out.append("replayed with other argument types than captured: " + ", ".join(
            f"{n} {spec.signature[n]} -> {variant.signature[n]}" for n in types[:3]))
    return out


def _attrs(a) -> dict:
    return {str(k): v for k, v in (a or {}).items()}


def compile_job(job):
    """A sweep Job with `replay` set, compiled in a worker: an Outcome with the stored folder and
    its row figures, or the error line."""
    from kinspect.diff.jobs import Outcome
    from kinspect.diff.table import metrics
    from kinspect.replay.spec import load

    try:
        variant = compile_spec(load(job.replay), out_dir=job.out_dir, target=job.target,
                               overrides=dict(job.constexprs), num_warps=job.num_warps, num_stages=job.num_stages)
        figures = metrics(variant)
    except KinspectError as e:
        return Outcome(job, error=str(e))
    return Outcome(job, path=variant.path, metrics=figures)
