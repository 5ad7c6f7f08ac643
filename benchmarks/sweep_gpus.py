"""A sweep's timing on one GPU against every GPU of the host, alternating (issue 42).

    python benchmarks/sweep_gpus.py [--kernel softmax] [--rounds 3] [--size 8192x8192] [--ray]

Compiles a sweep of 48 variants of a shipped kernel once (kinspect's store in a temporary folder), then
times every variant through the local executor (kinspect.core.executor: one worker process per GPU,
pinned), on GPU 0 alone and on all visible GPUs, the two alternating for --rounds rounds. Prints the
wall time of each, median and p20-p80, the scaling per GPU added (one GPU's time over N GPUs' time,
divided by N: 1.0 is perfect, the goal is >= 0.8), and whether both found the same winner (the variant
with the lowest ratio to the baseline on its own GPU). --ray adds a third column: the same timings on a
local Ray started for the run (a head with this one node), one actor per GPU. On a host with one GPU it
says so and exits 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", default="softmax")
    ap.add_argument("-p", dest="sweep", default="BLOCK_N=1024,2048,4096,8192,16384,32768")
    ap.add_argument("--num-warps", default="2,4,8,16")
    ap.add_argument("--num-stages", default="1,2")           # 6 x 4 x 2 = 48 variants
    ap.add_argument("--size", default="8192x8192")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ray", action="store_true", help="also time on a local Ray (the ray extra)")
    a = ap.parse_args()

    from kinspect.core.executor import LocalExecutor, visible_gpus

    gpus = visible_gpus()
    if len(gpus) < 2:
        print(f"{len(gpus)} GPU visible: nothing to compare (the benchmark needs a host with several GPUs)")
        return 0
    from kinspect import api
    from kinspect.diff.remote import time_all

    store = Path(tempfile.mkdtemp(prefix="kinspect-sweep-gpus-"))
    name, _, values = a.sweep.partition("=")
    warps = sorted({int(w) for w in a.num_warps.split(",")})
    t0 = time.perf_counter()
    result = api.diff([a.kernel], constexprs={name: [int(v) for v in values.split(",")]}, num_warps=warps,
                      num_stages=[int(s) for s in a.num_stages.split(",")], size=a.size, out_dir=store, bench=False,
                      text=False)
    paths = [r.variant.path for r in result.rows]
    print(f"{len(paths)} variants of {a.kernel} compiled in {time.perf_counter() - t0:.1f} s into {store}; GPUs {gpus}")
    many = f"{len(gpus)} GPUs"
    executors = {"1 GPU": LocalExecutor(gpus=gpus[:1]), many: LocalExecutor(gpus=gpus)}
    if a.ray:
        import os

        from kinspect.core.executor import RayExecutor

        executors[f"{many} ray"] = RayExecutor(num_cpus=os.cpu_count())
    t0 = time.perf_counter()
    for ex in executors.values():
        ex.warm()          # each GPU's worker started once (torch imported): the rounds time the work
    print(f"workers started in {time.perf_counter() - t0:.1f} s (not in the rounds below)")
    walls: dict[str, list[float]] = {k: [] for k in executors}
    winners: dict[str, set] = {k: set() for k in walls}
    for r in range(a.rounds):
        order = list(executors.items())
        order = order[r % len(order):] + order[:r % len(order)]
        for label, ex in order:
            t0 = time.perf_counter()
            timed = time_all(paths, a.size, ex)
            walls[label].append(time.perf_counter() - t0)
            ratios = [(t.runtime.median_ms / t.baseline.median_ms, i) for i, t in enumerate(timed)
                      if t.runtime is not None and t.baseline is not None]
            winners[label].add(min(ratios)[1] if ratios else None)
            used = sorted({t.gpu.index for t in timed if t.gpu is not None})
            print(f"round {r + 1} {label:>8}: {walls[label][-1]:7.2f} s wall, GPUs used {used}, "
                  f"winner #{min(ratios)[1] + 1 if ratios else '-'}")

    def q(xs, p):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(p * len(xs)))]

    print(f"\n{'timing':>10} {'median s':>9} {'p20-p80':>15}")
    for label, xs in walls.items():
        print(f"{label:>10} {statistics.median(xs):9.2f} {q(xs, 0.2):7.2f}-{q(xs, 0.8):<7.2f}")
    t1 = statistics.median(walls["1 GPU"])
    for label in list(walls)[1:]:
        tn = statistics.median(walls[label])
        print(f"{label}: speedup {t1 / tn:.2f}x on {len(gpus)} GPUs: {t1 / tn / len(gpus):.2f} per GPU (goal >= 0.8); "
              f"same winner as 1 GPU: {winners['1 GPU'] == winners[label]}")
    print(f"winners (row numbers from 0): {winners}")
    for ex in executors.values():
        ex.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
