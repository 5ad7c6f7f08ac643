"""Launch records: merging what several processes (or several captures) recorded of one variant.

Pure functions over kinspect.core.model.Launches; the hooks that record launches live in
kinspect.hooks.launch_counts, the files that hold them in kinspect.files.store.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Iterable

from kinspect.core.model import GpuTime, Launches, LaunchSignature, ProcessLaunches

SIGNATURES = 16     # distinct argument signatures kept per variant (the most frequent)
GRIDS = 16          # distinct grids kept per variant
SAMPLES = 512       # device-time samples kept per variant, for its median


def merge(items: Iterable[Launches | None]) -> Launches | None:
    """One Launches from several (processes, captures): counts add up, the same signature from the
    same process is one entry, and the caps keep the most frequent."""
    items = [x for x in items if x is not None]
    if not items:
        return None
    if len(items) == 1:
        return items[0]
    grids: Counter = Counter()
    sigs: dict[tuple, int] = {}
    other = 0
    procs: dict[tuple, ProcessLaunches] = {}
    for x in items:
        grids.update(dict(x.grids))
        other += x.other_calls
        for s in x.signatures:
            key = (s.grid, s.args, s.pid, s.rank, s.site)
            sigs[key] = sigs.get(key, 0) + s.calls
        for p in x.processes:
            k = (p.pid, p.host)
            old = procs.get(k)
            procs[k] = p if old is None else ProcessLaunches(
                p.pid, p.rank if p.rank is not None else old.rank, p.host, old.calls + p.calls,
                gpu_ms=None if old.gpu_ms is None and p.gpu_ms is None else (old.gpu_ms or 0.0) + (p.gpu_ms or 0.0),
                timed=old.timed + p.timed,
                first_at=min((x for x in (old.first_at, p.first_at) if x is not None), default=None),
                launches_before=min((x for x in (old.launches_before, p.launches_before) if x is not None),
                                    default=None))
    ranked = sorted(sigs.items(), key=lambda kv: -kv[1])
    kept, dropped = ranked[:SIGNATURES], ranked[SIGNATURES:]
    top_grids = grids.most_common(GRIDS)
    return Launches(
        calls=sum(x.calls for x in items),
        grids=tuple(top_grids),
        signatures=tuple(LaunchSignature(grid=k[0], args=k[1], calls=n, pid=k[2], rank=k[3], site=k[4])
                         for k, n in kept),
        other_calls=other + sum(n for _, n in dropped),
        processes=tuple(sorted(procs.values(), key=lambda p: (p.host, p.pid))),
        gpu=merge_gpu([x.gpu for x in items]),
        tuning_calls=sum(x.tuning_calls for x in items), tuning_ms=sum(x.tuning_ms for x in items))


def merge_gpu(items: Iterable[GpuTime | None]) -> GpuTime | None:
    items = [g for g in items if g is not None and g.calls]
    if not items:
        return None
    if len(items) == 1:
        return items[0]
    # Each sample stands for calls/len(samples) launches; draw the merged sample in proportion, with a
    # fixed seed so the same records give the same median.
    rng = random.Random(0)
    weighted = []
    for g in items:
        if g.samples_ms:
            weight = g.calls / len(g.samples_ms)
            weighted += [(rng.random() ** (1 / weight), x) for x in g.samples_ms]
    samples = tuple(x for _, x in sorted(weighted, reverse=True)[:SAMPLES])
    return GpuTime(calls=sum(g.calls for g in items), total_ms=sum(g.total_ms for g in items), samples_ms=samples)
