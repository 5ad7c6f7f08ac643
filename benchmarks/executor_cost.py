"""What the executor (kinspect.core.executor) costs on a small sweep, against the sweep's own workers.

    python benchmarks/executor_cost.py [--kernel softmax] [-p BLOCK_N=256,512,1024,2048] [-t cuda:90]
                                       [--rounds 5] [--ray]

A 4-variant sweep, compiled into a fresh store each round, alternating:

- sweep: kinspect.diff.sweep.run, the sweep's own worker processes (what `kinspect diff` runs on this
  machine: a local sweep's compiles never go through the executor);
- executor: kinspect.diff.remote.compile_all through a LocalExecutor (one process per job, each variant
  folder packed and written back into the store, as a Ray cluster's compiles are);
- ray (--ray, with the extra installed): the same through a local Ray of as many CPUs as this machine has.

Prints each path's median wall time with its spread (min-max over the rounds) and the ratio of each to
the sweep's (the issue's bound: <= 1.05 for the path a small sweep takes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def jobs_for(kernel: str, target: str, sweep: str, out: str):
    from kinspect.compile.args import parse_sweep
    from kinspect.diff import sweep as sw

    return sw.cross([kernel], targets=[target], constexprs=parse_sweep([sweep]), out_dir=out)


def by_sweep(kernel, target, sweep) -> float:
    from kinspect.diff import sweep as sw
    from kinspect.files.store import Store

    with tempfile.TemporaryDirectory(prefix="kinspect-cost-") as out:
        t0 = time.perf_counter()
        with Store(out).lock():          # the workers write under this process's lock, as in `kinspect diff`
            outcomes = sw.run(jobs_for(kernel, target, sweep, out)).outcomes
        took = time.perf_counter() - t0
        assert all(o.path and not o.error for o in outcomes), [o.error for o in outcomes]
        return took


def by_executor(kernel, target, sweep, ex) -> float:
    from kinspect.diff.remote import compile_all
    from kinspect.files.store import Store

    with tempfile.TemporaryDirectory(prefix="kinspect-cost-") as out:
        t0 = time.perf_counter()
        with Store(out).lock():
            outcomes = compile_all(jobs_for(kernel, target, sweep, out), ex)
        took = time.perf_counter() - t0
        assert all(o.path and not o.error for o in outcomes), [o.error for o in outcomes]
        return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", default="softmax")
    ap.add_argument("-p", dest="sweep", default="BLOCK_N=256,512,1024,2048")
    ap.add_argument("-t", dest="target", default="cuda:90")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ray", action="store_true")
    a = ap.parse_args()
    from kinspect.core.executor import LocalExecutor, RayExecutor

    os.environ.setdefault("KINSPECT_CACHE_DIR", tempfile.mkdtemp(prefix="kinspect-cost-cache-"))
    paths = {"sweep": lambda: by_sweep(a.kernel, a.target, a.sweep),
             "executor": lambda: by_executor(a.kernel, a.target, a.sweep, LocalExecutor())}
    if a.ray:
        ray_ex = RayExecutor(num_cpus=os.cpu_count())
        paths["ray"] = lambda: by_executor(a.kernel, a.target, a.sweep, ray_ex)
    n = len(jobs_for(a.kernel, a.target, a.sweep, "x"))
    print(f"{n}-variant sweep of {a.kernel} ({a.sweep}, {a.target}) on {os.cpu_count()} cores, {a.rounds} rounds "
          f"alternating, each into a fresh store (Triton's cache is warm after the first round)")
    for f in paths.values():       # one round each first: imports and Triton's cache, not counted
        f()
    times: dict[str, list[float]] = {k: [] for k in paths}
    for _ in range(a.rounds):
        for name, f in paths.items():
            times[name].append(f())
    base = statistics.median(times["sweep"])
    print(f"{'path':<10} {'median s':>9} {'min-max s':>13} {'vs sweep':>9}")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:<10} {m:9.2f} {min(ts):6.2f}-{max(ts):<6.2f} {m / base:9.2f}")


if __name__ == "__main__":
    main()
