"""The configs Inductor's own heuristics try for a kernel, as this process's torch would make them.

Inductor writes the heuristic's arguments into the kernel's decorator (kinspect.tune.heuristic reads
them); its config functions (`torch._inductor.runtime.triton_heuristics.pointwise / reduction /
persistent_reduction`, with `return_configs=True`) turn them into the list its CachingAutotuner
benchmarks. With `max_autotune` (and `max_autotune_pointwise`) set in the kernel's inductor_meta they
give the list `torch.compile(mode="max-autotune")` benchmarks: that list, timed on the captured launch
like kinspect's own candidates, is what max_autotune picks from. Inductor's coordinate descent
(`coordinate_descent_tuning`, off by default in max-autotune) is not run: kinspect's widening steps
are that search, started from the findings.
"""

from __future__ import annotations

import copy

from kinspect.core.errors import KinspectError
from kinspect.tune.heuristic import Heuristic
from kinspect.tune.space import Candidate, Knobs

KINDS_WITH_CONFIGS = ("pointwise", "reduction", "persistent_reduction")


def torch_version() -> str:
    import torch

    return str(torch.__version__)


def configs(h: Heuristic, knobs: Knobs, *, max_autotune: bool, left_out: list | None = None) -> list[Candidate]:
    """The candidates Inductor would benchmark for this kernel (max_autotune: as in mode="max-autotune"),
    in its order; those that change something kinspect cannot (another grid rule, other constexprs)
    are left out, each with why in `left_out` (the comparison says it timed fewer than Inductor would)."""
    if h.kind not in KINDS_WITH_CONFIGS:
        raise KinspectError(f"Inductor's '{h.kind}' kernels: kinspect does not rebuild their configs")
    from torch._inductor.runtime import triton_heuristics
    from torch._inductor.runtime.hints import DeviceProperties, ReductionHint, TileHint

    triton_meta = copy.deepcopy(h.triton_meta)
    if isinstance(triton_meta.get("device"), dict):
        fields = getattr(DeviceProperties, "_fields", ())
        triton_meta["device"] = DeviceProperties(**{k: v for k, v in triton_meta["device"].items()
                                                    if not fields or k in fields})
    triton_meta.pop("configs", None)       # specialization attributes, in a form only the compile reads
    meta = copy.deepcopy(h.inductor_meta)
    meta["autotune_hints"] = set(meta.get("autotune_hints") or ())
    meta.update(max_autotune=max_autotune, max_autotune_pointwise=max_autotune, autotune_local_cache=False,
                autotune_remote_cache=False)
    kwargs = dict(size_hints=dict(h.size_hints), triton_meta=triton_meta, filename="kinspect_tune.py",
                  inductor_meta=meta, return_configs=True)
    if h.kind != "pointwise":
        kwargs["reduction_hint"] = getattr(ReductionHint, h.reduction_hint) if h.reduction_hint else False
    elif h.tile_hint:
        kwargs["tile_hint"] = getattr(TileHint, h.tile_hint)
    try:
        found = getattr(triton_heuristics, h.kind)(**kwargs)
    except Exception as e:      # torch's own heuristics on arguments another torch wrote
        raise KinspectError(f"Inductor's {h.kind} heuristic (torch {torch_version()}) refused this kernel's "
                            f"arguments: {type(e).__name__}: {e}") from None
    origin = "max_autotune" if max_autotune else "inductor"
    names = dict(knobs.original.constexprs)
    out = []
    for i, cfg in enumerate(found):
        values = {k: int(v) for k, v in cfg.kwargs.items() if k in names}
        c = Candidate(constexprs=tuple(sorted({**names, **values}.items())), num_warps=int(cfg.num_warps),
                      num_stages=int(cfg.num_stages), why=f"{origin} config {i + 1} of {len(found)}", origin=origin)
        other = set(cfg.kwargs) - set(names) - {"waves_per_eu", "matrix_instr_nonkdim"}
        why = f"sets {', '.join(sorted(other))}, which the tune keeps as captured" if other else \
            knobs.valid(c) if knobs.valid(c) and not _only_idle_warps(knobs.valid(c)) else ""
        if why:
            if left_out is not None:
                left_out.append(f"{c.why} ({c.label()}) not timed: {why}")
            continue
        if all(c.key() != x.key() for x in out):
            out.append(c)
    return out


def _only_idle_warps(why: str) -> bool:
    """kinspect's rule against idle warps is its own, not Inductor's: Inductor's configs keep them."""
    return "threads idle" in why
