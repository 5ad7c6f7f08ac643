"""Why a kernel has several variants: what the JIT specialized differently in each (an argument's type,
its divisibility by 16 or alignment, an int equal to 1, a constexpr, num_warps/num_stages), and which
variants were compiled while the program was already running the kernel: a recompile in the steady
state, which serving engines treat as a bug, named with the launch that triggered it.

A variant counts as compiled while running when it first launched after the program's first step,
another variant of the same kernel had launched before it, and it was compiled at its own first launch
(the JIT's compile, or a cache load, right before it ran; kinspect.core.model.ProcessLaunches.first_at
against Variant.created). The first step is estimated per process from its launches: the kernel it
launched first runs once a step, so its calls are the steps and the process's launches over them one
step's worth; a variant whose first launch came after that many launches (ProcessLaunches.
launches_before) came after the first step. A kernel's backward variant compiled during the first
backward pass is not one. Stores from before kinspect counted launches_before use the time the
program met its last new kernel instead. A capture under the interpreter compiles after the program,
so it cannot tell, and says nothing.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from kinspect.core.model import ArgSpec, Variant

AT_LAUNCH_S = 2.0        # a variant recorded within this long of its first launch was compiled for it


@dataclass(frozen=True)
class VariantWhy:
    name: str                       # the variant's folder name
    differs: tuple[str, ...]        # what sets it apart from the kernel's other variants
    while_running: bool = False     # compiled after another variant of the kernel had launched
    trigger: str = ""               # its first launch's arguments that differ from the earlier variant's

    def to_json(self) -> dict:
        return {"variant": self.name, "differs": list(self.differs), "compiled_while_running": self.while_running,
                "trigger": self.trigger or None}


def facets(v: Variant) -> dict[str, str]:
    """What the JIT specialized a variant on, as `facet: shown value`."""
    out = {f"const:{k}": f"{k}={val}" for k, val in v.constexprs.items()}
    for k, short in (("num_warps", "num_warps"), ("num_stages", "num_stages"), ("num_ctas", "num_ctas")):
        if v.options.get(k) is not None:
            out[k] = f"{short}={v.options[k]}"
    out.update(v.specialization())
    return out


def step_launches(variants: list[Variant]) -> dict:
    """(host, pid) -> launches in one step of that process: all its launches over the calls of the kernel
    it launched first (which runs once a step)."""
    first: dict = {}
    total: dict = {}
    for v in variants:
        for p in (v.launches.processes if v.launches is not None else ()):
            key = (p.host, p.pid)
            total[key] = total.get(key, 0) + p.calls
            if p.first_at is not None and (key not in first or p.first_at < first[key][0]):
                first[key] = (p.first_at, p.calls)
    return {k: total[k] / max(1, first[k][1]) for k in first if first[k][1]}


def _after_first_step(v: Variant, per_step: dict) -> bool | None:
    """Whether the variant first launched after its process's first step; None where not recorded."""
    answers = [p.launches_before >= per_step[(p.host, p.pid)]
               for p in (v.launches.processes if v.launches is not None else ())
               if p.launches_before is not None and (p.host, p.pid) in per_step]
    return None if not answers else all(answers)


def first_step_end(variants: list[Variant]) -> float | None:
    """When the program met its last new kernel: the latest of each kernel name's first launch."""
    firsts: dict[str, float] = {}
    for v in variants:
        at = _first_at(v)
        if at is not None:
            firsts[v.kernel] = min(at, firsts.get(v.kernel, at))
    return max(firsts.values()) if firsts else None


def explain(variants: list[Variant], warm_until: float | None = None, per_step: dict | None = None) -> list[VariantWhy]:
    """One VariantWhy per variant of one kernel (several variants), in the order of their first launch;
    [] for a kernel with one variant. `per_step` (step_launches) and `warm_until` (first_step_end): the
    program's, from all its variants (default: these variants' own)."""
    if len(variants) < 2:
        return []
    found = [facets(v) for v in variants]
    keys = list(dict.fromkeys(k for f in found for k in f))
    varying = [k for k in keys if len({f.get(k) for f in found}) > 1]
    order = sorted(range(len(variants)), key=lambda i: (_first_at(variants[i]) or float("inf"), i))
    if warm_until is None:
        warm_until = first_step_end(variants)
    if per_step is None:
        per_step = step_launches(variants)
    out = []
    for pos, i in enumerate(order):
        v, f = variants[i], found[i]
        differs = tuple(f[k] for k in varying if k in f) or ("the same specialization (another compile of the "
                                                              "same source: a cache miss or another process)",)
        earlier = [variants[j] for j in order[:pos] if _first_at(variants[j]) is not None]
        after = _after_first_step(v, per_step)
        if after is None:           # an older store: the time the program met its last new kernel
            first = _first_at(v)
            after = warm_until is not None and first is not None and first > warm_until
        running = bool(earlier) and _compiled_at_launch(v) and after
        trigger = _trigger(v, earlier[0]) if running else ""
        out.append(VariantWhy(v.name, differs, running, trigger))
    return out


def _first_at(v: Variant) -> float | None:
    if v.launches is None:
        return None
    times = [p.first_at for p in v.launches.processes if p.first_at is not None]
    return min(times) if times else None


def _compiled_at_launch(v: Variant) -> bool:
    first = _first_at(v)
    if first is None or not v.created:
        return False
    try:
        created = datetime.datetime.fromisoformat(v.created).timestamp()
    except ValueError:
        return False
    return abs(first - created) <= AT_LAUNCH_S


def _trigger(v: Variant, before: Variant) -> str:
    """The first launch of `v`, by what its arguments had that `before`'s first launch did not."""
    now, then = _top_args(v), _top_args(before)
    if not now:
        return ""
    changed = [_arg(a) for name, a in now.items() if name in then and _arg(a) != _arg(then[name])]
    was = [_arg(then[name]) for name, a in now.items() if name in then and _arg(a) != _arg(then[name])]
    if not changed:
        return "a launch with the same arguments as before (grid " + "x".join(map(str, _top_grid(v))) + ")"
    return "a launch with " + ", ".join(changed[:4]) + " (before: " + ", ".join(was[:4]) + ")"


def _top_args(v: Variant) -> dict[str, ArgSpec]:
    la = v.launches
    if la is None or not la.signatures:
        return {}
    return {a.name: a for a in la.signatures[0].args}


def _top_grid(v: Variant) -> tuple:
    return v.launches.signatures[0].grid if v.launches and v.launches.signatures else ()


def _arg(a: ArgSpec) -> str:
    if a.kind == "tensor":
        return f"{a.name}: {a.dtype}[{'x'.join(map(str, a.shape))}]" + (
            f" strides ({', '.join(map(str, a.strides))})" if a.strides else "")
    return f"{a.name}={a.value}"
