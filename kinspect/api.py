"""The functions a user or the CLI calls. Each CLI command is a thin shell over one of these."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kinspect.errors import UsageError
from kinspect.model import Variant

DEFAULT_OUT = "kinspect-out"


@dataclass(frozen=True)
class DumpResult:
    variant: Variant
    label: str          # the kernel as the user named it
    target_note: str    # how the target was chosen: "cuda:90 (offline: no device here)"
    store: Path


def dump(kernel: str, *, target: str | None = None, constexprs: dict | None = None, args: dict | None = None,
         num_warps: int | None = None, num_stages: int | None = None, size: str | None = None,
         out_dir: str | Path = DEFAULT_OUT) -> DumpResult:
    """Compile one variant of a shipped kernel (`fused_mm_softmax`) or a user kernel
    (`path/file.py:name`) for a target and store every stage."""
    from kinspect.compile import compile_variant
    from kinspect.compile.targets import resolve
    from kinspect.compile.user import is_user_kernel, load

    constexprs = dict(constexprs or {})
    resolved = resolve(target)
    options = {"num_warps": num_warps, "num_stages": num_stages}
    if is_user_kernel(kernel):
        uk = load(kernel, args or {}, constexprs)
        fn, call_args, consts, grid, label = uk.fn, uk.args, uk.constexprs, uk.grid, uk.name
        options = {**uk.options, **{k: v for k, v in options.items() if v is not None}}
    else:
        if args:
            raise UsageError(f"--arg is for user kernels (file.py:name); '{kernel}' ships with its own arguments")
        fn, call_args, consts, grid = _shipped(kernel, constexprs, size, resolved)
        label = kernel
    variant = compile_variant(fn, args=call_args, constexprs=consts, grid=grid, resolved=resolved,
                              out_dir=out_dir, group=label, options=options)
    return DumpResult(variant=variant, label=label, target_note=resolved.note, store=Path(out_dir))


def _shipped(name: str, constexprs: dict, size: str | None, resolved):
    import torch

    from kinspect import kernels
    from kinspect.errors import did_you_mean

    spec = kernels.get(name)
    for key in constexprs:
        if key not in spec.constexprs:
            raise UsageError(f"kernel '{name}' has no constexpr '{key}'{did_you_mean(key, spec.constexprs)}; "
                             f"its constexprs: {', '.join(spec.constexprs) or 'none'}")
    device = "cpu"
    if not resolved.offline:
        from triton.runtime import driver

        device = driver.active.get_active_torch_device()
    example = spec.example(size or spec.default_size, getattr(torch, spec.dtype), device, **constexprs)
    return spec.fn, example.args, example.constexprs, example.grid


def stage_text(variant: Variant, stage: str) -> str:
    """A stored stage's text; a binary stage or an unknown name is a clear error."""
    from kinspect.errors import NotFound, did_you_mean

    s = variant.stage(stage)
    if s is None:
        names = [x.name for x in variant.stages]
        raise NotFound(f"variant has no stage '{stage}'{did_you_mean(stage, names)}; its stages: {', '.join(names)}")
    if s.binary:
        text_stages = [x.name for x in variant.stages if not x.binary]
        raise UsageError(f"stage '{stage}' is binary; text stages: {', '.join(text_stages)}")
    return Path(variant.path, s.file).read_text(errors="replace")


def list_variants(path: str | Path | None = None):
    """(what was listed, variants) for a kinspect store, a Triton cache or a dump folder. Read-only."""
    from kinspect import sources

    return sources.discover(path)


def resolve_variants(items, *, target=None, constexprs=None, args=None, num_warps=None, num_stages=None,
                     size=None, out_dir: str | Path = DEFAULT_OUT) -> list[Variant]:
    """Variants named on a command line: folders and stage files as they are; kernels (shipped or
    file.py:name) compiled as `dump` does. No items: ./kinspect-out if present, else the Triton cache."""
    from kinspect import sources
    from kinspect.compile.user import is_user_kernel

    if not items:
        return list(sources.discover(None).variants)
    variants = []
    for item in items:
        p = Path(item)
        if p.exists() and not is_user_kernel(item):
            variants += sources.discover(p).variants
        else:
            variants.append(dump(item, target=target, constexprs=constexprs, args=args, num_warps=num_warps,
                                 num_stages=num_stages, size=size, out_dir=out_dir).variant)
    return variants


def vec_report(items, **kwargs):
    """Analysis reports (kinspect.analysis.VariantReport) for the variants named by `items`."""
    from kinspect.analysis import analyse

    return [analyse(v) for v in resolve_variants(items, **kwargs)]


def find_variant(spec: str, out_dir: str | Path = DEFAULT_OUT) -> Variant:
    """A variant by folder path, or by folder name / kernel name / unique prefix in a store."""
    from kinspect import sources
    from kinspect.errors import NotFound, did_you_mean

    p = Path(spec)
    if p.exists():
        listing = sources.discover(p)
        if len(listing.variants) == 1:
            return listing.variants[0]
        raise UsageError(f"'{spec}' holds {len(listing.variants)} variants; name one folder of: "
                         + ", ".join(v.name for v in listing.variants[:8]))
    store = Path(out_dir)
    variants = sources.discover(store).variants if store.exists() else []
    matches = [v for v in variants if v.name == spec or v.name.startswith(spec) or v.kernel == spec
               or Path(v.path).parent.name == spec]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        names = [v.name for v in variants] + sorted({Path(v.path).parent.name for v in variants})
        raise NotFound(f"no variant '{spec}' in '{store}'{did_you_mean(spec, names)} (kinspect ls {store})")
    raise UsageError(f"'{spec}' matches {len(matches)} variants; name one: "
                     + ", ".join(v.name for v in matches[:8]))


def annotated_stage(variant: Variant, stage: str) -> str:
    """The stage's text with a `;; file:line  code` header wherever the Python line changes."""
    from kinspect import ir
    from kinspect.analysis.stages import open_lines
    from kinspect.analysis.verdicts import Findings
    from kinspect.ir.records import Instruction
    from kinspect.render.report import annotate

    s = variant.stage(stage)
    with open_lines(variant, s) as lines:
        locs = {r.line: (r.loc.file, r.loc.line) for r in ir.parse(s.dialect, lines)
                if isinstance(r, Instruction) and r.loc is not None}
    finder = Findings(variant, None, {}, None)
    with open_lines(variant, s) as lines:
        return "".join(annotate(lines, locs, finder.code))
