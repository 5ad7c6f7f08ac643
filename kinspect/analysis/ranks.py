"""A program that ran on several ranks (torchrun, DistributedDataParallel, a tritonparse trace per rank):
each process's launches and GPU time are kept with its rank (kinspect.core.model.ProcessLaunches), so
the program view can show the spread instead of one sum: which rank was slowest on each kernel, a kernel
compiled or launched on some ranks only, an autotuner that chose differently on one rank.

    spread = rank_spread(variants, decisions)     # None for a program of one rank
    one = for_rank(variants, 1)                   # the variants as rank 1 launched them
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kinspect.core.model import AutotuneDecision, GpuTime, Launches, Variant


@dataclass(frozen=True)
class KernelRanks:
    """One kernel's GPU time (and calls) per rank."""

    kernel: str
    gpu_ms: dict = field(default_factory=dict)     # rank -> ms (ranks whose launches were timed)
    calls: dict = field(default_factory=dict)      # rank -> launches

    @property
    def slowest(self) -> tuple[int, float] | None:
        """(rank, ms) of the rank that spent the most GPU time on the kernel."""
        if len(self.gpu_ms) < 2:
            return None
        rank = max(self.gpu_ms, key=lambda r: (self.gpu_ms[r], -r))
        return rank, self.gpu_ms[rank]

    @property
    def spread(self) -> float | None:
        """Slowest over fastest rank's GPU time, minus 1 (0.1: the slowest took 10% longer)."""
        if len(self.gpu_ms) < 2 or min(self.gpu_ms.values()) <= 0:
            return None
        return max(self.gpu_ms.values()) / min(self.gpu_ms.values()) - 1

    def to_json(self) -> dict:
        slow = self.slowest
        return {"gpu_ms_by_rank": {str(r): round(ms, 4) for r, ms in sorted(self.gpu_ms.items())},
                "calls_by_rank": {str(r): n for r, n in sorted(self.calls.items())},
                "slowest_rank": None if slow is None else slow[0],
                "rank_spread": None if self.spread is None else round(self.spread, 4)}


@dataclass(frozen=True)
class RankSpread:
    """What differs between the ranks of one program."""

    ranks: tuple[int, ...]
    gpu_ms: dict                          # rank -> its Triton kernels' GPU time
    kernels: dict                         # kernel -> KernelRanks
    only_on: dict = field(default_factory=dict)       # kernel -> ranks that launched it, where not all did
    configured: dict = field(default_factory=dict)    # kernel -> {rank: the config its autotuner chose}, where
                                                      # the ranks chose differently

    @property
    def slowest(self) -> tuple[int, float] | None:
        if not self.gpu_ms:
            return None
        rank = max(self.gpu_ms, key=lambda r: (self.gpu_ms[r], -r))
        return rank, self.gpu_ms[rank]

    def notes(self) -> list[str]:
        """One line per kernel that not every rank ran or configured alike."""
        out = [f"{k}: launched on rank{'s' if len(rs) > 1 else ''} {', '.join(map(str, rs))} only (of "
               f"{len(self.ranks)})" for k, rs in self.only_on.items()]
        out += [f"{k}: its autotuner chose differently per rank: " +
                "; ".join(f"rank {r} {c}" for r, c in sorted(by.items())) for k, by in self.configured.items()]
        return out

    def to_json(self) -> dict:
        slow = self.slowest
        return {"ranks": list(self.ranks), "gpu_ms_by_rank": {str(r): round(ms, 4) for r, ms in sorted(self.gpu_ms.items())},
                "slowest_rank": None if slow is None else slow[0],
                "launched_on_some_ranks_only": {k: list(rs) for k, rs in self.only_on.items()},
                "configured_differently": {k: {str(r): c for r, c in sorted(by.items())}
                                           for k, by in self.configured.items()},
                "notes": self.notes()}


def ranks_of(variants: list[Variant]) -> tuple[int, ...]:
    return tuple(sorted({p.rank for v in variants if v.launches is not None for p in v.launches.processes
                         if p.rank is not None}))


def rank_spread(variants: list[Variant], decisions: tuple[AutotuneDecision, ...] = ()) -> RankSpread | None:
    """The spread across ranks, or None where fewer than two ranks launched anything."""
    ranks = ranks_of(variants)
    if len(ranks) < 2:
        return None
    kernels: dict[str, KernelRanks] = {}
    total: dict[int, float] = {}
    for v in variants:
        if v.launches is None:
            continue
        k = kernels.setdefault(v.kernel, KernelRanks(v.kernel))
        for p in v.launches.processes:
            if p.rank is None:
                continue
            k.calls[p.rank] = k.calls.get(p.rank, 0) + p.calls
            if p.gpu_ms is not None:
                k.gpu_ms[p.rank] = k.gpu_ms.get(p.rank, 0.0) + p.gpu_ms
                total[p.rank] = total.get(p.rank, 0.0) + p.gpu_ms
    only_on = {name: tuple(sorted(r for r, n in k.calls.items() if n)) for name, k in kernels.items()
               if 0 < len([r for r, n in k.calls.items() if n]) < len(ranks)}
    return RankSpread(ranks=ranks, gpu_ms=total, kernels=kernels, only_on=only_on,
                      configured=_configured(decisions))


def _configured(decisions) -> dict:
    """kernel -> {rank: config} where ranks' autotuners chose different configs for the same key."""
    chosen: dict[tuple, dict[int, str]] = {}
    for d in decisions:
        if d.rank is None:
            continue
        shown = " ".join(f"{k}={v}" for k, v in d.best.kwargs.items()) + "".join(
            f" {k}={v}" for k, v in d.best.options.items())
        chosen.setdefault((d.kernel, d.key), {})[int(d.rank)] = shown.strip()
    out: dict = {}
    for (kernel, _key), by_rank in chosen.items():
        if len(set(by_rank.values())) > 1:
            out[kernel] = by_rank
    return out


def for_rank(variants: list[Variant], rank: int) -> list[Variant]:
    """The variants as one rank launched them: each one's launches cut to that rank's processes (calls,
    signatures, GPU time); a variant that rank never launched is left out (one without launches,
    compiled but not run, stays)."""
    out = []
    for v in variants:
        la = v.launches
        if la is None:
            out.append(v)
            continue
        procs = tuple(p for p in la.processes if p.rank == rank)
        if not procs:
            continue
        calls = sum(p.calls for p in procs)
        timed = sum(p.timed for p in procs)
        ms = sum(p.gpu_ms or 0.0 for p in procs)
        only = all(p.rank == rank for p in la.processes)
        gpu = la.gpu if only else (GpuTime(timed, ms) if timed else None)
        out.append(replace(v, launches=Launches(
            calls=calls, grids=la.grids if only else (), signatures=tuple(s for s in la.signatures if s.rank == rank),
            other_calls=la.other_calls if only else 0, processes=procs, gpu=gpu,
            tuning_calls=la.tuning_calls if only else 0, tuning_ms=la.tuning_ms if only else 0.0)))
    return out
