"""How long a zero-flag `kinspect dump FILE:KERNEL` takes, this tree against another (a worktree of an
earlier commit), on the kernels of an inference-accuracy corpus (benchmarks/inference_accuracy.py).

    python benchmarks/zero_flag_time.py CORPUS_DIR --base TREE [--rounds N] [--only K,K]

Per kernel, the two trees' runs alternate (base, this, base, this, ...), each a fresh process in an
empty folder with no bytecode written, so both see the same machine load and the same disk cache. Prints
per kernel the median seconds of each and the spread (min-max), the ratio this/base, and over all
kernels the median of the ratios and the total of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
TIMEOUT_S = 300


def _once(tree: Path, corpus: Path, entry: dict) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryDirectory() as cwd:
        start = time.monotonic()
        try:
            subprocess.run([sys.executable, "-m", "kinspect", "dump", f"{corpus / entry['file']}:{entry['kernel']}",
                            "--store", "s"], cwd=cwd, env=env, capture_output=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pass
        return time.monotonic() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--base", type=Path, required=True, help="the tree to compare with (a git worktree)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="kernels to time, by name, comma-separated")
    a = ap.parse_args()
    kernels = json.loads((a.corpus / "truth.json").read_text())["kernels"]
    if a.only:
        kernels = [k for k in kernels if k["kernel"] in a.only.split(",")]
    print(f"{'kernel':44} {'base s (spread)':>18} {'this s (spread)':>18} {'this/base':>9}")
    ratios, totals = [], [0.0, 0.0]
    for k in kernels:
        times = {"base": [], "this": []}
        for _ in range(a.rounds):
            times["base"].append(_once(a.base.resolve(), a.corpus.resolve(), k))
            times["this"].append(_once(HERE, a.corpus.resolve(), k))
        med = {t: statistics.median(v) for t, v in times.items()}
        shown = {t: f"{med[t]:.1f} ({min(v):.1f}-{max(v):.1f})" for t, v in times.items()}
        ratios.append(med["this"] / med["base"])
        totals[0] += med["base"]
        totals[1] += med["this"]
        print(f"{k['project'] + '/' + k['kernel']:44.44} {shown['base']:>18} {shown['this']:>18} {ratios[-1]:>8.2f}x",
              flush=True)
    print(f"{len(kernels)} kernels, {a.rounds} rounds each, alternating: median ratio this/base "
          f"{statistics.median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f}); "
          f"total of medians {totals[0]:.0f} s base, {totals[1]:.0f} s this")


if __name__ == "__main__":
    main()
