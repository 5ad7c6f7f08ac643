"""Which metric moves with runtime across a sweep: rank correlation, stated as the data shows it.

With runtimes for at least MIN_VARIANTS variants, each metric that varies is ranked against the
median runtime (Spearman's rho, ties averaged). Metrics with |rho| >= STRONG are named, strongest
first, with the direction and the figures; nothing is said about cause.
"""

from __future__ import annotations

from dataclasses import dataclass

from kinspect.diff.table import Row

MIN_VARIANTS = 3
STRONG = 0.8

# metric name -> how to read it from a row
METRICS = {
    "registers": lambda r: r.registers,
    "spills": lambda r: r.spills,
    "shared memory": lambda r: r.shared_bytes,
    "occupancy": lambda r: r.occupancy,
    "instructions": lambda r: r.instructions,
    "vector instructions": lambda r: r.vector,
    "matrix instructions": lambda r: r.matrix,
    "code size": lambda r: r.code_bytes,
}


@dataclass(frozen=True)
class Link:
    metric: str
    rho: float
    variants: int

    def describe(self) -> str:
        direction = "rises" if self.rho > 0 else "falls"
        return (f"runtime {direction} with {self.metric} across these {self.variants} variants "
                f"(Spearman rho {self.rho:+.2f}); a correlation in this sweep, not a measured cause")


def ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(x: list[float], y: list[float]) -> float | None:
    rx, ry = ranks(x), ranks(y)
    n = len(x)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / (sxx * syy) ** 0.5


def explain(rows: list[Row]) -> list[Link]:
    """Metrics that move with runtime, strongest first; empty when there is too little data."""
    timed = [r for r in rows if r.runtime is not None]
    if len(timed) < MIN_VARIANTS:
        return []
    runtime = [r.runtime.median_ms for r in timed]
    links = []
    for name, get in METRICS.items():
        pairs = [(get(r), t) for r, t in zip(timed, runtime) if get(r) is not None]
        if len(pairs) < MIN_VARIANTS:
            continue
        rho = spearman([float(p[0]) for p in pairs], [p[1] for p in pairs])
        if rho is not None and abs(rho) >= STRONG:
            links.append(Link(name, round(rho, 3), len(pairs)))
    return sorted(links, key=lambda link: -abs(link.rho))
