"""How much faster a sweep compiles in parallel than one variant after another.

    python benchmarks/sweep_speedup.py [--kernel fused_mm_softmax] [-p BLOCK_SIZE=32,64,128]
                                       [--num-warps 4,8] [--num-stages 2,3] [-t cuda:90] [--repeat 1]

Runs `kinspect diff ... --table --json` in fresh processes, first with --jobs 1 (each variant
compiled in turn, in the kinspect process) and then with the default (one worker process per core),
each into a fresh store, and prints both times and their ratio: the sweep phase (each variant
compiled and analysed, as the sweep reports it) and the whole command (process start, imports,
the table and all). The goal on a
2-core machine is >= 1.7x; a GPU host's cores are all used the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def one(argv: list[str], jobs: str | None) -> tuple[float, float, int, int]:
    with tempfile.TemporaryDirectory(prefix="kinspect-bench-") as out:
        cmd = [sys.executable, "-m", "kinspect.cli", "diff", *argv, "--table", "--no-bench", "--json", "--store", out]
        if jobs:
            cmd += ["--jobs", jobs]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"kinspect diff failed: {proc.stderr.strip() or proc.stdout.strip()}")
        d = json.loads(proc.stdout)
        return d["sweep"]["seconds"], wall, d["sweep"]["workers"], len(d["variants"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", default="fused_mm_softmax")
    ap.add_argument("-p", default="BLOCK_SIZE=32,64,128")
    ap.add_argument("--num-warps", default="4,8")
    ap.add_argument("--num-stages", default="2,3")
    ap.add_argument("-t", default="cuda:90")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each; the best is kept")
    a = ap.parse_args()
    argv = [a.kernel, "-p", a.p, "--num-warps", a.num_warps, "--num-stages", a.num_stages, "-t", a.t]
    seq = min((one(argv, "1") for _ in range(a.repeat)), key=lambda r: r[0])
    par = min((one(argv, None) for _ in range(a.repeat)), key=lambda r: r[0])
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"sweep: kinspect diff {' '.join(argv)}  ({seq[3]} variants, {cores} cores)")
    print(f"  sequential (--jobs 1):     sweep {seq[0]:6.1f} s   whole command {seq[1]:6.1f} s")
    print(f"  parallel ({par[2]} processes):   sweep {par[0]:6.1f} s   whole command {par[1]:6.1f} s")
    print(f"  speedup: sweep {seq[0] / par[0]:.2f}x, whole command {seq[1] / par[1]:.2f}x  (goal: >= 1.7x on 2 cores)")


if __name__ == "__main__":
    main()
