"""Finding stored variants by what a user types: a folder, or a name, kernel name or prefix in a store."""

from __future__ import annotations

from pathlib import Path

from kinspect.files import sources
from kinspect.core.errors import UsageError
from kinspect.core.model import Variant, natural
from kinspect.files.store import DEFAULT_OUT


def kind_of(path: Path) -> str:
    """What a path holds, as `kinspect ls` names it: "kinspect store", "Triton dump", "trace", ..."""
    return sources.discover(path).kind


def matching(spec: str, variants: list[Variant]) -> list[Variant]:
    """The variants a name typed by a user names: a folder name, a unique prefix of one, a kernel name."""
    return [v for v in variants if v.name == spec or v.name.startswith(spec) or v.kernel == spec
            or Path(v.path).parent.name == spec]


def row(spec: str, store: str | Path) -> Variant | None:
    """The variant in row `spec` of `kinspect ls STORE` (numbered from 1), else None: what a user who
    read the listing types (`vec-report 6`, `diff 2 3`)."""
    if not spec.isdigit() or Path(spec).exists():
        return None
    root = Path(store)
    if not root.is_dir():
        return None
    listing = sources.discover(root)
    if listing.kind == "empty":
        return None
    variants = sources.readable(listing, announce=False).variants
    if 1 <= int(spec) <= len(variants):
        return sorted(variants, key=natural)[int(spec) - 1]
    return None


def handle(name: str, folder: str | Path, store: str | Path, values: dict | None = None) -> str:
    """How a suggested command line names the variant at `folder`: what the user typed (with its -p
    values) where that names it alone in every command, else its row in `kinspect ls STORE`."""
    try:
        if Path(find_variant(name, store, values=values).path).resolve() == Path(folder).resolve():
            return name + "".join(f" -p {k}={v}" for k, v in (values or {}).items())
    except Exception:   # ambiguous or unreadable: the row number below, or the folder itself
        pass
    root = Path(store)
    if root.is_dir():
        variants = sorted(sources.discover(root).variants, key=natural)
        for n, v in enumerate(variants, 1):
            if Path(v.path).resolve() == Path(folder).resolve():
                return str(n)
    return str(folder)


def find_variant(spec: str, out_dir: str | Path = DEFAULT_OUT, *, prefer=None,
                 values: dict | None = None) -> Variant:
    """A variant by folder path, or by folder name / kernel name / unique prefix / row number of
    `kinspect ls` in a store; `values` (constexprs or options, as -p gives them) pick among several
    of one kernel. Where several still match, `prefer` (a test of a variant) may pick the one it accepts."""
    from kinspect.analysis.derived import complete
    from kinspect.core.errors import NotFound, did_you_mean

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
                         f"or by its name in it (kinspect show NAME --store {spec}): {names}")
    store = Path(out_dir)
    listing = sources.discover(store) if store.exists() else None
    # an empty store holds no variant of that name: say that, not "nothing to read"
    variants = sources.readable(listing).variants if listing is not None and listing.kind != "empty" else []
    matches = matching(spec, variants)
    if not matches and spec.isdigit() and 1 <= int(spec) <= len(variants):   # its row in kinspect ls
        matches = [sorted(variants, key=natural)[int(spec) - 1]]
    if values:
        matches = [v for v in matches if has_values(v, values)]
    if len(matches) > 1 and prefer is not None:
        preferred = [v for v in matches if prefer(v)]
        matches = preferred if len(preferred) == 1 else matches
    if len(matches) == 1:
        return complete(matches[0])
    if not matches and values:
        given = " ".join(f"-p {k}={x}" for k, x in values.items())
        raise NotFound(f"no variant '{spec}' with {given} in '{store}' (kinspect ls {store})")
    if not matches:
        names = [v.name for v in variants] + sorted({Path(v.path).parent.name for v in variants})
        raise NotFound(f"no variant '{spec}' in '{store}'{did_you_mean(spec, names)} (kinspect ls {store})")
    names = "; ".join(_naming(v, matches, variants) for v in sorted(matches, key=natural)[:8])
    raise UsageError(f"'{spec}' matches {len(matches)} variants; name one by its values or its number in "
                     f"kinspect ls {store}: {names}")


def has_values(v: Variant, values: dict) -> bool:
    """Whether a variant has these constexpr or option values (as -p gives them)."""
    return all(str(v.constexprs.get(k, v.options.get(k))) == str(x) for k, x in values.items())


def _naming(v: Variant, among: list[Variant], variants: list[Variant]) -> str:
    """How to name one of several variants: the -p values (constexprs, then options such as num_warps)
    that pick it alone, as find_variant matches them, else its folder name; and its ls number."""
    def value(x: Variant, k):
        return str(x.constexprs.get(k, x.options.get(k)))

    keys = list(v.constexprs) + [k for k in v.options if k not in v.constexprs]
    differ = [k for k in keys if len({value(o, k) for o in among}) > 1]
    number = sorted(variants, key=natural).index(v) + 1
    for chosen in [[k] for k in differ] + [differ]:     # one value that picks it alone, else all that differ
        if chosen and [o for o in among if all(value(o, k) == value(v, k) for k in chosen)] == [v]:
            return f"{' '.join(f'-p {k}={value(v, k)}' for k in chosen)} (#{number})"
    return f"{v.name} (#{number})"
