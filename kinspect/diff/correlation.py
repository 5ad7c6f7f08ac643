"""Which metric moves with runtime across a sweep: rank correlation, stated as the data shows it.

With runtimes for at least MIN_VARIANTS variants, each metric that varies is ranked against the
median runtime (Spearman's rho, ties averaged). Metrics with |rho| >= STRONG are named with their
direction and figures. Metrics that order the variants the same way (a bigger block raises
registers, shared memory and code size together) are named in one statement that says the sweep
cannot tell them apart; nothing is said about cause.
"""

from __future__ import annotations

from dataclasses import dataclass

from kinspect.diff.table import Row

MIN_VARIANTS = 3
STRONG = 0.8

# metric name -> how to read it from a row
METRICS = {
    "registers": lambda r: r.metrics.registers,
    "spills": lambda r: r.metrics.spills,
    "shared memory": lambda r: r.metrics.shared_bytes,
    "occupancy": lambda r: r.metrics.occupancy,
    "instructions": lambda r: r.metrics.instructions,
    "vector instructions": lambda r: r.metrics.vector,
    "matrix instructions": lambda r: r.metrics.matrix,
    "code size": lambda r: r.metrics.code_bytes,
}


@dataclass(frozen=True)
class Link:
    """Metrics that move with runtime and order the variants alike: (name, rho) strongest first."""

    metrics: tuple[tuple[str, float], ...]
    variants: int

    def describe(self) -> str:
        rises = [name for name, rho in self.metrics if rho > 0]
        falls = [name for name, rho in self.metrics if rho < 0]
        parts = ([f"rises with {_join(rises)}"] if rises else []) + ([f"falls with {_join(falls)}"] if falls else [])
        rhos = sorted({abs(rho) for _, rho in self.metrics})
        rho = f"rho {self.metrics[0][1]:+.2f}" if len(self.metrics) == 1 else (
            f"|rho| {rhos[0]:.2f}" if len(rhos) == 1 else f"|rho| {rhos[0]:.2f} to {rhos[-1]:.2f}")
        together = "; these move together in this sweep, so it cannot tell them apart" if len(self.metrics) > 1 else ""
        return (f"runtime {' and '.join(parts)} across these {self.variants} variants (Spearman {rho}){together}; "
                f"a correlation, not a measured cause")


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


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
    """Metrics that move with runtime, grouped by the order they put the variants in, strongest first;
    empty when there is too little data."""
    timed = [r for r in rows if r.runtime is not None]
    if len(timed) < MIN_VARIANTS:
        return []
    runtime = [r.runtime.median_ms for r in timed]
    # key: (the variants that have the metric, their ranks in runtime's direction)
    groups: dict[tuple, list[tuple[str, float]]] = {}
    for name, get in METRICS.items():
        pairs = [(i, get(r)) for i, r in enumerate(timed) if get(r) is not None]
        if len(pairs) < MIN_VARIANTS:
            continue
        values = [float(v) for _, v in pairs]
        rho = spearman(values, [runtime[i] for i, _ in pairs])
        if rho is None or abs(rho) < STRONG:
            continue
        sign = 1 if rho > 0 else -1
        key = (tuple(i for i, _ in pairs), tuple(ranks([sign * v for v in values])))
        groups.setdefault(key, []).append((name, round(rho, 3)))
    links = [Link(tuple(sorted(ms, key=lambda m: -abs(m[1]))), len(k[0])) for k, ms in groups.items()]
    return sorted(links, key=lambda link: -abs(link.metrics[0][1]))
