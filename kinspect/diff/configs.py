"""What a sweep says about an autotuned kernel's configs: how each variant was loaded, what
pruning kept, and (when timed) which config wins, by how much, beside Triton's own pick."""

from __future__ import annotations

import json
from typing import Callable

from kinspect.diff.table import Row, config_index
from kinspect.core.model import Variant


def user_notes(variants: list[Variant]) -> list[str]:
    """Each distinct load line and autotune note of the user kernels in the sweep, once."""
    notes: list[str] = []
    per_variant = ("prune_configs_by drops",)    # said in each variant's own summary instead
    for v in variants:
        user = v.user
        if user is None:
            continue
        tuning = user.autotune.notes if user.autotune is not None else ()
        for n in [user.loaded] + [x for x in tuning if not x.startswith(per_variant)]:
            if n and n not in notes:
                notes.append(n)
    return notes


def _group(r: Row) -> str:
    """Rows that differ only by config: same kernel, target and everything the user fixed."""
    user = r.variant.user
    if user is None:
        return json.dumps([None, str(r.variant.target), None, None])
    return json.dumps([user.kernel, str(r.variant.target), user.constexprs, list(user.args)],
                      sort_keys=True, default=str)


def config_verdicts(rows: list[Row], picker: Callable[[Variant], dict | None] | None = None) -> list[str]:
    """For each kernel whose configs were timed: the fastest, how much faster than the slowest and
    the next, and what Triton's autotuner picks for the same example (`picker`)."""
    groups: dict[str, list[Row]] = {}
    for r in rows:
        if r.runtime is not None and config_index(r.variant) is not None:
            groups.setdefault(_group(r), []).append(r)
    out = []
    for group in groups.values():
        if len(group) < 2:
            continue
        ranked = sorted(group, key=lambda r: r.runtime.median_ms)
        best, second, worst = ranked[0], ranked[1], ranked[-1]
        ms = best.runtime.median_ms
        kernel = best.variant.kernel
        out.append(f"{kernel}: fastest config {config_index(best.variant)} ({ms:.4g} ms): "
                   f"{second.runtime.median_ms / ms:.2f}x ahead of the next, config {config_index(second.variant)}; "
                   f"{worst.runtime.median_ms / ms:.2f}x faster than the slowest, config {config_index(worst.variant)}"
                   f"{_overlap(best, second)}")
        if picker is not None:
            out.append(_pick_line(kernel, best, group, picker))
    return out


def _overlap(a: Row, b: Row) -> str:
    """A warning when the two fastest overlap within their p20-p80 ranges: the order may flip."""
    if a.runtime.p80_ms >= b.runtime.p20_ms:
        return " (their p20-p80 ranges overlap: too close to call)"
    return ""


def _pick_line(kernel: str, best: Row, group: list[Row], picker) -> str:
    try:
        pick = picker(best.variant)
    except Exception as e:  # the autotuner's own benchmark failed on this device
        message = str(e).strip().splitlines()
        return f"{kernel}: Triton's autotuner could not run here: {type(e).__name__}: {message[-1] if message else ''}"
    if not pick:
        return f"{kernel}: Triton's autotuner was not run (no device, or not an autotuned kernel)"
    if pick.get("skipped"):
        return f"{kernel}: Triton's autotuner was not run: {pick['skipped']}"
    key = ", ".join(f"{k}={v}" for k, v in (pick.get("key") or {}).items()) or "no key"
    index = pick["config"]
    own = f"; its own do_bench {pick['ms']:.4g} ms" if pick.get("ms") else ""
    line = f"{kernel}: Triton's autotuner picks config {index} for key {key} ({pick.get('benchmarked', '?')} " \
           f"configs benchmarked{own})"
    if index == config_index(best.variant):
        return line + ": the same as kinspect's fastest"
    ours = next((r for r in group if config_index(r.variant) == index), None)
    if ours is None:
        return line + ": a config this sweep did not time"
    return line + f"; kinspect timed it at {ours.runtime.median_ms:.4g} ms, " \
                  f"{ours.runtime.median_ms / best.runtime.median_ms:.2f}x the fastest"
