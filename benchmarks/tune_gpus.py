"""A tune on one GPU against every GPU of the host, alternating (issue 42).

    python benchmarks/tune_gpus.py [--kernel add] [--size 67108864] [--trials 24] [--rounds 3] [--variant DIR]

Launches the kernel once under kinspect's capture (a shipped kernel, or FILE:KERNEL; --variant: a variant
`kinspect capture` recorded instead), then tunes its captured launch --rounds times on GPU 0 alone and on
every visible GPU, alternating, both through kinspect.tune.run.OnEveryGpu over the local executor (one
worker process per GPU, pinned, started before the rounds). The candidates' compiles are the same in both
and cached after the first round; what differs is the device part: each round's candidates checked and
timed on one GPU, or spread over all of them with the original timed on each.

Prints per round the device seconds (the tune's own split, from its progress line), the wall seconds, the
trials run and the winner; then median and p20-p80 of each, the scaling per GPU added (one GPU's device
time over N GPUs', divided by N: the goal is >= 0.8), and whether both picked the same winners. On a host
with one GPU it says so and exits 0.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def q(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", default="add")
    ap.add_argument("--size", default="67108864")
    ap.add_argument("--trials", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variant", default=None, help="a captured variant's folder (default: launch --kernel once)")
    a = ap.parse_args()

    from kinspect.core.executor import LocalExecutor, visible_gpus

    gpus = visible_gpus()
    if len(gpus) < 2:
        print(f"{len(gpus)} GPU visible: nothing to compare (the benchmark needs a host with several GPUs)")
        return 0
    from kinspect.files.store import read_record
    from kinspect.tune import search
    from kinspect.tune.outcome import outcome
    from kinspect.tune.run import OnEveryGpu, record_launch

    folder = a.variant or record_launch(a.kernel, out_dir=Path(tempfile.mkdtemp(prefix="kinspect-tune-gpus-")),
                                        constexprs={}, args={}, size=a.size)
    v = read_record(Path(folder))
    print(f"tuning {v.kernel} ({folder}) with --trials {a.trials}; GPUs {gpus}")
    one, every = LocalExecutor(gpus=gpus[:1]), LocalExecutor(gpus=gpus)
    t0 = time.perf_counter()
    one.warm()
    every.warm()
    print(f"workers started in {time.perf_counter() - t0:.1f} s (not in the rounds below)")
    many = f"{len(gpus)} GPUs"
    device: dict[str, list[float]] = {"1 GPU": [], many: []}
    wall: dict[str, list[float]] = {"1 GPU": [], many: []}
    winners: dict[str, list[str]] = {"1 GPU": [], many: []}
    for r in range(a.rounds):
        order = [("1 GPU", one), (many, every)]
        if r % 2:
            order.reverse()
        for label, ex in order:
            lines: list[str] = []
            t0 = time.perf_counter()
            found = search.tune(v, runner=OnEveryGpu(folder, ex), trials=a.trials, compare=False,
                                progress=lines.append)
            wall[label].append(time.perf_counter() - t0)
            device_re = r"on the device \(JIT, check, timing\) (\d+(?:\.\d+)?) s"
            split = next((m for line in lines if (m := re.search(device_re, line))), None)
            device[label].append(float(split.group(1)) if split else float("nan"))
            o = outcome(found)
            win = o.winner.candidate.label() if o.winner else "-"
            winners[label].append(win)
            ran = sum(1 for t in found.trials if t.ran)
            used = sorted({t.gpu.split(" (")[0] for t in found.trials if t.gpu}) or ["GPU 0"]
            print(f"round {r + 1} {label:>8}: device {device[label][-1]:6.1f} s, wall {wall[label][-1]:6.1f} s, "
                  f"{ran} trials ran on {', '.join(used)}; winner {win} "
                  f"({o.speedup.describe() if o.speedup else '-'})")
    print(f"\n{'tune':>10} {'device s':>9} {'p20-p80':>15} {'wall s':>8} {'p20-p80':>15}")
    for label in device:
        print(f"{label:>10} {statistics.median(device[label]):9.1f} {q(device[label], 0.2):7.1f}-"
              f"{q(device[label], 0.8):<7.1f} {statistics.median(wall[label]):8.1f} {q(wall[label], 0.2):7.1f}-"
              f"{q(wall[label], 0.8):<7.1f}")
    d1, dn = statistics.median(device["1 GPU"]), statistics.median(device[many])
    print(f"device time {d1 / dn:.2f}x faster on {len(gpus)} GPUs: {d1 / dn / len(gpus):.2f} per GPU (goal >= 0.8); "
          f"winners 1 GPU {sorted(set(winners['1 GPU']))}, {many} {sorted(set(winners[many]))}")
    one.close()
    every.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
