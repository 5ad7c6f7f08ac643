"""How fast the program view is on a store of many variants: `kinspect vec-report STORE` and
`kinspect report STORE`, end to end (process start and imports included), cold (an empty kinspect
cache: every variant analysed, in one worker process per core) and warm (summaries and highlighted
stages from the cache), against the same cold run in one process (--jobs 1).

    python benchmarks/program_view.py [--variants 300] [--report-variants 30] [--rounds 3]

The store is made from the real capture in tests/fixtures/capture (22 Inductor kernels of a
torch.compile'd TransformerEncoderLayer, captured on an H100), its variant folders copied until
there are --variants of them. Goals on 2 cores: vec-report >= 50 variants/s cold and >= 500
variants/s warm; report of 30 variants <= 5 s cold. Prints the median and the spread of the rounds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "tests" / "fixtures" / "capture" / "transformer_h100.tgz"


def make_store(folder: Path, n: int) -> Path:
    """A store of n variants: the capture's, and copies of them under other folder names."""
    with tarfile.open(CAPTURE) as tar:
        tar.extractall(folder / "src", filter="data")
    src = folder / "src" / "tf"
    variants = sorted(p for p in src.glob("*/*") if (p / "record.json").is_file())
    out = folder / f"store{n}"
    for i in range(n):
        v = variants[i % len(variants)]
        shutil.copytree(v, out / v.parent.name / (v.name if i < len(variants) else f"{v.name}-copy{i}"))
    return out


def timed(argv: list[str], cache: Path) -> float:
    env = {**os.environ, "KINSPECT_CACHE_DIR": str(cache), "NO_COLOR": "1"}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "kinspect", *argv], capture_output=True, text=True, env=env)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"kinspect {' '.join(argv)} failed: {proc.stderr.strip()[-2000:]}")
    return took


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):6.2f} s (min {min(xs):.2f}, max {max(xs):.2f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", type=int, default=300)
    ap.add_argument("--report-variants", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kinspect-program-") as tmp:
        tmp = Path(tmp)
        big, small = make_store(tmp, a.variants), make_store(tmp, a.report_variants)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        t = {k: [] for k in ("cold", "cold-1", "warm", "report-cold", "report-warm")}
        for r in range(a.rounds):   # each round: every measurement once, each cold one with an empty cache
            cache = tmp / f"cache{r}"
            t["cold-1"].append(timed(["vec-report", str(big), "--jobs", "1"], tmp / f"cache1-{r}"))
            t["cold"].append(timed(["vec-report", str(big)], cache))
            t["warm"].append(timed(["vec-report", str(big)], cache))
            out = tmp / f"r{r}.html"
            t["report-cold"].append(timed(["report", str(small), "-o", str(out)], tmp / f"rcache{r}"))
            t["report-warm"].append(timed(["report", str(small), "-o", str(out)], tmp / f"rcache{r}"))
            print(f"  round {r + 1}/{a.rounds}: " + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in t.items()), flush=True)
        n = a.variants
        rate = lambda k: n / statistics.median(t[k])
        print(f"\nkinspect vec-report of {n} variants (22 kernels), end to end, {cores} core(s):")
        print(f"  cold, one process (--jobs 1)  {spread(t['cold-1'])}  {rate('cold-1'):7.0f} variants/s")
        print(f"  cold, one process per core    {spread(t['cold'])}  {rate('cold'):7.0f} variants/s   "
              f"{statistics.median(t['cold-1']) / statistics.median(t['cold']):.2f}x the single process  (goal >= 50/s)")
        print(f"  warm (summaries cached)       {spread(t['warm'])}  {rate('warm'):7.0f} variants/s   "
              f"{statistics.median(t['cold']) / statistics.median(t['warm']):.1f}x cold  (goal >= 500/s)")
        print(f"\nkinspect report of {a.report_variants} variants, end to end:")
        print(f"  cold  {spread(t['report-cold'])}  (goal <= 5 s)")
        print(f"  warm  {spread(t['report-warm'])}")


if __name__ == "__main__":
    main()
