"""How long a newcomer's mistakes take to be told (issue 30): each command line below, in a fresh
process, until its one-line error. Target: under 1.5 s each, nothing compiled, torch not imported.

    python benchmarks/cli_mistakes.py [--runs 5] [--against /path/to/other/kinspect/checkout]

Runs alternate between the commands (and, with --against, between this checkout and another, e.g.
a worktree of an older commit with its own venv: its python is taken from <path>/.venv), so machine
load falls on all alike. Prints per command the median and the spread (min-max) in seconds.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MISTAKES = [
    "diff softmax -p BLOCK_SIZE=256,512",        # the constexpr is BLOCK_N
    "dump softmax --stage sas",                  # sass
    "diff softmax -p BLOCK_N=32 64",             # -p BLOCK_N=32,64
    "dump softmax -p BLOCK_SIZE=32 64",          # click's own: one argument too many
    "dump softmax -t cuda:91",                   # no such GPU (LLVM used to abort the process)
    "dump nosuchkernel",
    "vec-report nosuch/dir",
    "vec-report tests/fixtures/capture",         # a folder of .tgz archives
    "vec-report tests/fixtures/capture/gpt2_h200.tgz",
    "report fused_mm_softmax -p BLOCK=32,64",
]


def once(python: str, cwd: Path, line: str, store: str) -> tuple[float, int, str]:
    t0 = time.perf_counter()
    p = subprocess.run([python, "-m", "kinspect", *line.split(), "--store", store], cwd=cwd, capture_output=True,
                       text=True)
    return time.perf_counter() - t0, p.returncode, (p.stderr.strip().splitlines() or [""])[-1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--against", type=Path, default=None)
    a = ap.parse_args()
    sides = [("this", sys.executable, ROOT)]
    if a.against:
        sides.append(("against", str(a.against / ".venv" / "bin" / "python"), a.against))
    times: dict = {(s, m): [] for s, _, _ in sides for m in MISTAKES}
    last: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.runs):
            for m in MISTAKES:
                for name, python, cwd in sides:
                    s, code, line = once(python, cwd, m, str(Path(tmp) / "store"))
                    times[(name, m)].append(s)
                    last[(name, m)] = (code, line)
    for m in MISTAKES:
        for name, _, _ in sides:
            t = times[(name, m)]
            code, line = last[(name, m)]
            print(f"{name:>7}  {statistics.median(t):5.2f} s ({min(t):.2f}-{max(t):.2f})  exit {code}  "
                  f"kinspect {m}\n{'':>9}{line[:150]}")


if __name__ == "__main__":
    main()
