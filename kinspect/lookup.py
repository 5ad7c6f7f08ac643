"""Finding stored variants by what a user types: a folder, or a name, kernel name or prefix in a store."""

from __future__ import annotations

from pathlib import Path

from kinspect.errors import KinspectError, ReadWarning, UsageError
from kinspect.model import Variant


def readable(listing):
    """The listing, or a KinspectError when it found kernels but could read none of them (every
    metadata file corrupt, a trace cut off before its first event): an empty report would hide
    that. What could not be read of the rest is said as ReadWarnings, one line each."""
    import warnings

    if not listing.variants and listing.warnings and listing.kind != "empty":
        more = f" (and {len(listing.warnings) - 1} more)" if len(listing.warnings) > 1 else ""
        fix = ("is the trace complete?" if listing.kind == "trace"
               else "recompile the kernel or remove that folder")
        raise KinspectError(f"no variant in '{listing.path}' could be read: {listing.warnings[0].removesuffix('; skipped')}{more}; "
                            f"{fix} (kinspect ls {listing.path})")
    for w in listing.warnings if listing.kind != "empty" else ():   # "empty": the caller says what it wanted
        warnings.warn(w, ReadWarning, stacklevel=2)
    return listing


def find_variant(spec: str, out_dir: str | Path = "kinspect-out", *, prefer=None) -> Variant:
    """A variant by folder path, or by folder name / kernel name / unique prefix in a store. Where
    several match, `prefer` (a test of a variant) may pick the one it accepts."""
    from kinspect import sources
    from kinspect.errors import NotFound, did_you_mean

    from kinspect.derived import complete

    p = Path(spec)
    if p.exists():
        listing = readable(sources.discover(p))
        if len(listing.variants) == 1:
            return complete(listing.variants[0])
        if not listing.variants:
            raise NotFound(f"no variant in '{spec}': it is not a kinspect store or variant folder, a Triton cache "
                           f"(or one of its entries), a TRITON_KERNEL_DUMP folder (or one of its folders), a trace "
                           f"or a stage file")
        names = ", ".join(v.name for v in listing.variants[:8]) + (" ..." if len(listing.variants) > 8 else "")
        raise UsageError(f"'{spec}' ({listing.kind}) holds {len(listing.variants)} variants; name one by its folder "
                         f"or by its name in it (kinspect show NAME -o {spec}): {names}")
    store = Path(out_dir)
    variants = readable(sources.discover(store)).variants if store.exists() else []
    matches = [v for v in variants if v.name == spec or v.name.startswith(spec) or v.kernel == spec
               or Path(v.path).parent.name == spec]
    if len(matches) > 1 and prefer is not None:
        preferred = [v for v in matches if prefer(v)]
        matches = preferred if len(preferred) == 1 else matches
    if len(matches) == 1:
        return complete(matches[0])
    if not matches:
        names = [v.name for v in variants] + sorted({Path(v.path).parent.name for v in variants})
        raise NotFound(f"no variant '{spec}' in '{store}'{did_you_mean(spec, names)} (kinspect ls {store})")
    raise UsageError(f"'{spec}' matches {len(matches)} variants; name one: "
                     + ", ".join(v.name for v in matches[:8]))
