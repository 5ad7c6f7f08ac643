"""Where a kernel was launched from, and what each call site cost: a library kernel's rows name the user's
lines (kinspect.hooks.callsite records the first launch of each signature key with its call site).

Calls per site are counted exactly (each signature key's calls, keys being per site). GPU time is
timed per variant, not per site: a variant launched from one site gives it all its time; a variant
launched from several splits its time by their calls (its mean per call), marked `estimated`.
"""

from __future__ import annotations

from dataclasses import dataclass

from kinspect.core.model import CallSite, Variant


@dataclass(frozen=True)
class SiteCost:
    site: CallSite | None           # None: launches past the signatures kept, or recorded before sites were
    calls: int
    gpu_ms: float | None = None
    estimated: bool = False         # split from a variant's time by calls

    def to_json(self) -> dict:
        return {"site": self.site.describe() if self.site is not None else None,
                "file": self.site.file if self.site is not None else None,
                "line": self.site.line if self.site is not None else None,
                "calls": self.calls, "gpu_ms": None if self.gpu_ms is None else round(self.gpu_ms, 4),
                "gpu_ms_estimated": self.estimated}


def call_sites(variants: list[Variant]) -> list[SiteCost]:
    """The call sites of one kernel's variants, most GPU time (else calls) first; [] where no launch
    recorded a site."""
    calls: dict = {}
    ms: dict = {}
    estimated: set = set()
    for v in variants:
        la = v.launches
        if la is None or not la.calls:
            continue
        by_site: dict = {}
        for s in la.signatures:
            by_site[s.site] = by_site.get(s.site, 0) + s.calls
        rest = la.calls - sum(by_site.values())
        if rest > 0:
            by_site[None] = by_site.get(None, 0) + rest
        for site, n in by_site.items():
            calls[site] = calls.get(site, 0) + n
        if la.gpu is not None and la.gpu.calls:
            for site, n in by_site.items():
                share = n / la.calls
                ms[site] = ms.get(site, 0.0) + la.gpu.total_ms * share
                if share < 1:
                    estimated.add(site)
    if not any(site is not None for site in calls):
        return []
    out = [SiteCost(site, n, ms.get(site), site in estimated) for site, n in calls.items()]
    return sorted(out, key=lambda s: (-(s.gpu_ms or 0.0), -s.calls, s.site is None,
                                      s.site.describe() if s.site else ""))


def short(site: CallSite | None) -> str:
    """A call site in a table cell: the file's name and the line."""
    if site is None:
        return "-"
    if not site.file:
        return site.function
    return f"{site.file.rsplit('/', 1)[-1]}:{site.line}"
