"""A captured launch's kernel in this process, and the launch compiled again, offline: for `kinspect diff
VARIANT -p ... --num-warps ...` (kinspect.diff.replayed makes their jobs) and the compile step of
`kinspect capture --interpret` (kinspect.program.pending).

`kernel(spec)` gets the kernel back where kinspect.replay.spec.plan says: rebuilt from its captured
source, or from its record's text (never imported from the file a record names). `compile_spec`
rebuilds its captured arguments on the CPU and compiles through kinspect's own path (compile-only
driver, `kernel.warmup` with the tensors): the JIT specializes the arguments as it did in the program.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.core.model import Variant
from kinspect.replay.spec import SOURCE_FILE, ReplaySpec, generated, plan


def kernel(spec: ReplaySpec):
    """The captured kernel in this process (a JITFunction, or an InterpretedFunction under
    TRITON_INTERPRET), rebuilt from the source the store holds as `plan` says; never imported from
    the file a record names."""
    from kinspect.replay import source

    p = plan(spec)
    if p.mode == "source":
        return source.rebuild(spec.source)
    ref = spec.ref
    imports = source.INDUCTOR_IMPORTS if generated(ref) else source.TRITON_IMPORTS
    fn = source.rebuild_text(spec.kernel, ref.text, ref.file, ref.line, imports=imports)
    missing = source.unbound(fn, ref.text)
    if missing:
        from kinspect.replay.spec import shown

        raise KinspectError(f"the record of '{shown(spec.kernel)}' holds its source text but not what it uses from its "
                            f"module ({', '.join(shown(n, 40) for n in missing[:6])}{', ...' if len(missing) > 6 else ''})"
                            f": kinspect does not import the file a record names ({shown(ref.file)}); if it is your "
                            f"own file, time the kernel from there: kinspect bench {shown(ref.file)}:"
                            f"{shown(spec.kernel)}")
    return fn


def compile_spec(spec: ReplaySpec, *, out_dir: str | Path, target: str | None = None, overrides: dict | None = None,
                 num_warps: int | None = None, num_stages: int | None = None) -> Variant:
    """Compile the launch `spec` describes (with constexpr or scalar `overrides`, other warps or
    stages) for `target` (default: what it was compiled for) into the store at `out_dir`."""
    from kinspect.compile.variant import compile_variant
    from kinspect.compile.targets import resolve
    from kinspect.replay.args import values

    resolved = resolve(target or spec.target)
    fn = kernel(spec)
    vals = values(spec.args, spec.signature, spec.attributes, "cpu", overrides=overrides)
    allowed = resolved.backend.launch_options
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
    from kinspect.files.store import Store, write_atomic

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
