"""The program view of many kernels' variants: one KernelView per kernel (its row, speed of light,
provenance and counters), ranked, and the full analysis of the kernels chosen for detail. Made once;
the terminal table, the HTML report and the JSON all read it (kinspect.render.program, .html, .json).

    kernels, busiest, sol = ranked_kernels(variants, summaries(variants))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from kinspect.analysis import VariantReport
from kinspect.analysis.explain import KernelView, kernel_view
from kinspect.analysis.sol import ProgramSol
from kinspect.analysis.summary import KernelRow, VariantMetrics
from kinspect.core.model import Variant


@dataclass(frozen=True)
class ProgramView:
    kernels: tuple[KernelView, ...]              # ranked: by headroom when timed against ceilings, else busiest first
    details: tuple[VariantReport, ...] = ()      # the full analysis of the chosen kernels' busiest variants
    where: str = ""                              # what was read: a store, a cache, "3 inputs"
    sol: ProgramSol | None = None                # the program's speed of light
    busiest: Mapping[str, Variant] = field(default_factory=dict)    # kernel -> its busiest variant

    @property
    def rows(self) -> tuple[KernelRow, ...]:
        return tuple(k.row for k in self.kernels)

    def kernel(self, name: str) -> KernelView | None:
        return next((k for k in self.kernels if k.kernel == name), None)


def is_program(variants: list[Variant]) -> bool:
    """More than one kernel: the program view comes first."""
    return len({v.kernel for v in variants}) > 1


def ranked(rows: list[KernelRow], sol: ProgramSol | None) -> list[KernelRow]:
    """The rows by headroom, most first (what to fix first), when the capture timed them against
    ceilings; kernels without a headroom follow by GPU time. As they are otherwise."""
    if sol is None or not any(s.headroom_ms is not None for s in sol.speeds.values()):
        return rows
    from kinspect.analysis.sol import by_headroom

    order = {k: i for i, k in enumerate(by_headroom(sol.speeds))}
    return sorted(rows, key=lambda r: order.get(r.kernel, len(order)))


def busiest_variants(rows: list[KernelRow], variants: list[Variant]) -> dict[str, Variant]:
    from kinspect.analysis.summary import variant_key

    by_key = {variant_key(v): v for v in variants}
    return {r.kernel: by_key[r.busiest.key] for r in rows if r.busiest.key in by_key}


def program_view(variants: list[Variant], metrics: list[VariantMetrics], *, details=(), where: str = "",
                 sol: ProgramSol | None = None, counters_failed: Mapping[str, str] | None = None) -> ProgramView:
    """The view of `variants` (whose records are `metrics`, in their order): a row per kernel ranked,
    each with its speed of light (`sol`, made here when not given), provenance and counters."""
    from kinspect.analysis.sol import for_program
    from kinspect.analysis.summary import kernel_rows

    rows = kernel_rows(metrics)
    busiest = busiest_variants(rows, variants)
    sol = sol if sol is not None else for_program(variants)
    failed = counters_failed or {}
    kernels = tuple(kernel_view(r, busiest.get(r.kernel), sol, failed.get(r.kernel, ""))
                    for r in ranked(rows, sol))
    return ProgramView(kernels=kernels, details=tuple(details), where=where, sol=sol, busiest=busiest)
