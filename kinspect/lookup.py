"""Finding stored variants by what a user types: a folder, or a name, kernel name or prefix in a store."""

from __future__ import annotations

from pathlib import Path

from kinspect.errors import KinspectError, UsageError, warn
from kinspect.model import Variant


def readable(listing, *, announce: bool = True):
    """The listing, or a KinspectError when it holds nothing readable: no kernels at all, or kernels
    none of which could be read (every record or metadata file corrupt, say): an empty report would
    hide that. With `announce`, what could not be read is said as warnings (kinspect.errors.warn)."""
    if listing.kind == "empty":
        raise KinspectError(f"nothing to read in '{listing.path}': no kinspect store, Triton cache or dump folder "
                            f"there; give one of those, or a stage file")
    if not listing.variants and listing.warnings:
        more = f" (and {len(listing.warnings) - 1} more)" if len(listing.warnings) > 1 else ""
        raise KinspectError(f"no variant in '{listing.path}' could be read: {listing.warnings[0].removesuffix('; skipped')}{more}; "
                            f"recompile the kernel or remove that folder (kinspect ls {listing.path})")
    if announce:
        for line in listing.warnings:
            warn(line)
    return listing


def find_variant(spec: str, out_dir: str | Path = "kinspect-out", *, prefer=None) -> Variant:
    """A variant by folder path, or by folder name / kernel name / unique prefix in a store. Where
    several match, `prefer` (a test of a variant) may pick the one it accepts."""
    from kinspect import sources
    from kinspect.errors import NotFound, did_you_mean

    from kinspect.derived import complete

    p = Path(spec)
    if p.exists():
        listing = readable(sources.discover(p), announce=False)   # the command says what matters to it
        if len(listing.variants) == 1:
            return complete(listing.variants[0])
        raise UsageError(f"'{spec}' holds {len(listing.variants)} variants; name one folder of: "
                         + ", ".join(v.name for v in listing.variants[:8]))
    store = Path(out_dir)
    variants = sources.discover(store).variants if store.exists() else []
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
