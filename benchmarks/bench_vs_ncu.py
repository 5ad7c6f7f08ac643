"""Is `kinspect bench` right and steady? Its median vs Nsight Compute's gpu__time_duration, and the
spread of the median over repeated benches (each a fresh process). Needs a GPU and ncu.

    python benchmarks/bench_vs_ncu.py [--kernel softmax] [--size 8192x8192] [--repeats 5] [--launches 20]

Prints each bench's median, the CV of the medians, ncu's median over its launches
(`ncu --clock-control none --cache-control all`: boost clocks as in the bench, caches flushed
before each launch as do_bench flushes L2), and the ratio kinspect / ncu (goal: within 5%).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import statistics
import subprocess
import sys
import tempfile


def launch_only(kernel: str, size: str, launches: int) -> None:
    """The process ncu profiles: the kernel's launches, nothing else on the device."""
    import torch

    from kinspect.bench.first_call import isolated
    from kinspect.bench.prepared import prepare

    launch = prepare(kernel, device="cuda", constexprs={}, args={}, size=size, num_warps=None, num_stages=None)
    with isolated(launch.fn):
        for _ in range(launches):
            launch()
        torch.cuda.synchronize()


def bench_medians(kernel: str, size: str, repeats: int) -> list[dict]:
    out = []
    with tempfile.TemporaryDirectory() as store:
        for _ in range(repeats):
            proc = subprocess.run([sys.executable, "-m", "kinspect", "bench", kernel, "--size", size, "--json",
                                   "--no-compile", "--store", store], capture_output=True, text=True, check=True)
            out.append(json.loads(proc.stdout))
    return out


def ncu_times(kernel: str, size: str, launches: int) -> list[float]:
    exe = shutil.which("ncu")
    if exe is None:
        raise SystemExit("ncu not found on PATH")
    cmd = [exe, "--clock-control", "none", "--cache-control", "all", "--metrics", "gpu__time_duration.sum",
           "--csv", "--print-units", "base", sys.executable, __file__, "--launch-only", "--kernel", kernel,
           "--size", size, "--launches", str(launches)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    rows = [r for r in csv.DictReader(io.StringIO(proc.stdout[proc.stdout.find('"ID"'):]))
            if r.get("Metric Name") == "gpu__time_duration.sum"]
    if not rows:
        raise SystemExit(f"ncu gave no gpu__time_duration rows (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return [float(r["Metric Value"].replace(",", "")) / 1e6 for r in rows]  # ns -> ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", default="softmax")
    ap.add_argument("--size", default="8192x8192")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--launches", type=int, default=20)
    ap.add_argument("--launch-only", action="store_true")
    a = ap.parse_args()
    if a.launch_only:
        return launch_only(a.kernel, a.size, a.launches)
    results = bench_medians(a.kernel, a.size, a.repeats)
    medians = [r["steady"]["ms"]["median"] for r in results]
    for i, r in enumerate(results, 1):
        t = r["throughput"]
        print(f"bench {i}: median {r['steady']['ms']['median']:.5f} ms, CV within {r['steady']['ms']['cv']:.2%}, "
              f"{t['gbps']:,.0f} GB/s = {t['pct_of_copy_bandwidth']:.1f}% of copy "
              f"({t['copy_bandwidth']['gbps']:,.0f} GB/s); torch x{r['references'][0]['speedup_of_kernel']:.3f}")
    cv = statistics.stdev(medians) / statistics.fmean(medians) if len(medians) > 1 else 0.0
    print(f"median of medians {statistics.median(medians):.5f} ms; CV of the {len(medians)} medians {cv:.2%}")
    nc = ncu_times(a.kernel, a.size, a.launches)
    ncu_median = statistics.median(nc[1:] if len(nc) > 1 else nc)  # the first launch follows the compile
    ratio = statistics.median(medians) / ncu_median
    print(f"ncu gpu__time_duration: median {ncu_median:.5f} ms over {len(nc)} launches "
          f"(min {min(nc):.5f}, max {max(nc):.5f})")
    print(f"kinspect / ncu = {ratio:.3f} ({abs(ratio - 1):.1%} apart; goal within 5%)")


if __name__ == "__main__":
    main()
