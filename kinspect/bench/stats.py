"""Summary statistics of repeated timings."""

from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    p20: float
    p80: float
    mean: float
    cv: float          # standard deviation / mean

    def to_json(self) -> dict:
        return {k: round(v, 6) if isinstance(v, float) else v for k, v in vars(self).items()}


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default 'linear' method)."""
    if not sorted_values:
        raise ValueError("no values")
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(values: list[float]) -> Summary:
    v = sorted(values)
    mean = statistics.fmean(v)
    sd = statistics.stdev(v) if len(v) > 1 else 0.0
    return Summary(n=len(v), median=quantile(v, 0.5), p20=quantile(v, 0.2), p80=quantile(v, 0.8), mean=mean,
                   cv=sd / mean if mean else 0.0)


@dataclass(frozen=True)
class Runtime:
    """A variant's measured runtime and what it achieves."""

    median_ms: float
    p20_ms: float
    p80_ms: float
    cv: float = 0.0
    runs: int = 0
    gbps: float | None = None
    tflops: float | None = None
    roofline_pct: float | None = None    # of the device's measured copy bandwidth
    roofline_of: str = ""                # what the percentage is of
    method: str = ""                     # how it was timed: tool, warmup, repetitions, flush, size
    gpu: str = ""                        # the GPU that timed it, where a sweep timed on several (index, model)
    vs_baseline: float | None = None     # its median over the baseline's (the sweep's first variant) on that GPU
    copy_gbps: float | None = None       # the roofs a roofline plot draws: measured copy bandwidth
    peak_tflops: float | None = None     # and measured torch.matmul FLOP/s in the kernel's dtype
