"""Finding stored variants by what a user types: a folder, or a name, kernel name or prefix in a store."""

from __future__ import annotations

from pathlib import Path

from kinspect import sources
from kinspect.errors import UsageError
from kinspect.model import Variant
from kinspect.store import DEFAULT_OUT


def kind_of(path: Path) -> str:
    """What a path holds, as `kinspect ls` names it: "kinspect store", "Triton dump", "trace", ..."""
    return sources.discover(path).kind


def find_variant(spec: str, out_dir: str | Path = DEFAULT_OUT, *, prefer=None) -> Variant:
    """A variant by folder path, or by folder name / kernel name / unique prefix in a store. Where
    several match, `prefer` (a test of a variant) may pick the one it accepts."""
    from kinspect.derived import complete
    from kinspect.errors import NotFound, did_you_mean

    p = Path(spec)
    if p.exists():
        listing = sources.readable(sources.discover(p), announce=False)   # the command says what matters to it
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
    listing = sources.discover(store) if store.exists() else None
    # an empty store holds no variant of that name: say that, not "nothing to read"
    variants = sources.readable(listing).variants if listing is not None and listing.kind != "empty" else []
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
