"""A captured variant's launches as people read them: per distinct signature its calls, grid, and each
argument's dtype, shape and strides (tensors) or value (scalars, constexprs). vec-report's details,
`kinspect ls --launches` and the report show these lines; --json carries the record's own `launches`."""

from __future__ import annotations

from kinspect.core.model import ArgSpec, LaunchSignature, Variant

SHOWN = 3       # signatures shown per variant in text (the JSON has them all)


def arg_text(a: ArgSpec) -> str:
    """`x_ptr float32[7x100] strides (100, 1)`, `n_cols=100`."""
    if a.kind in ("tensor", "tensordesc"):
        strides = f" strides ({', '.join(map(str, a.strides))}{',' if len(a.strides) == 1 else ''})" if a.strides else ""
        return f"{a.name} {a.describe()}{strides}"
    return f"{a.name}={a.value!r}" if a.kind != "other" else f"{a.name}={a.value}"


def signature_text(s: LaunchSignature) -> str:
    """One launch signature in one line: `2× grid (7, 1, 1): x_ptr float32[7x100] strides (100, 1), ...`."""
    grid = f"grid {tuple(s.grid)}" if s.grid else "grid not recorded"
    return f"{s.calls:,}× {grid}: {', '.join(arg_text(a) for a in s.args) or 'no arguments'}"


def launch_lines(v: Variant, limit: int = SHOWN) -> list[str]:
    """The variant's launch signatures, most calls first (none for a variant no program launched)."""
    la = v.launches
    if la is None or not la.signatures:
        return []
    ranked = sorted(la.signatures, key=lambda s: -s.calls)
    out = [signature_text(s) for s in ranked[:limit]]
    rest = len(ranked) - limit
    if rest > 0:
        out.append(f"... {rest} more signature(s), {sum(s.calls for s in ranked[limit:]):,} calls (--json has them)")
    if la.other_calls:
        out.append(f"... {la.other_calls:,} more calls with signatures not recorded (the capture keeps the most "
                   f"frequent)")
    return out

