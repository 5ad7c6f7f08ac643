"""The tune table of a captured program (issue 32), read from its store: for each of the N kernels with the
most headroom, what the program ran, kinspect's winner and max_autotune's pick, the trials each took, the
speedups with their spread and the reason; then each kernel's tune as kinspect prints it.

It reads what `kinspect vec-report STORE --tune N` stored beside each variant as that kernel's tune ended,
so a run cut by a time limit still gives the rows of the kernels it finished; the others say why they have
none (the error vec-report's JSON or its progress gave, or the limit).

    python benchmarks/tune_table.py STORE [-n 5] [--json tune.json] [--progress tune.progress]
        [--details tune_details.txt]

benchmarks/tune_gpu.sh runs it after the H200 tune of the GPT-2 training step.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HEADER = """\
Times: triton.testing.do_bench medians (L2 flushed before each run), every config replayed on the same
captured launch, the same inputs, in the same process; each candidate's output checked against what the
program ran before it is timed (wrong ones are never chosen).
n kinspect: kinspect's own candidates that ran on the device (timed, or run and refused as wrong); the
  timing of what the program ran is not counted; a candidate that equals one of max_autotune's configs
  counts for both.
n max-at: the configs Inductor's own heuristics give with max_autotune on (torch {torch}), each timed here
  as its autotuner times them, the one equal to what the program ran included; configs pruned before
  running (they cannot launch) are not counted.
speedup: median of what the program ran / median of kinspect's winner, ± half the range the p20/p80
  times give; the winner is what the program ran unless a candidate is faster beyond that spread.
vs max-at: max_autotune's pick / kinspect's winner, the same way (>= 1: kinspect's at least as fast)."""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store")
    ap.add_argument("-n", type=int, default=5, help="kernels, most headroom first (vec-report --tune N)")
    ap.add_argument("--json", help="vec-report --tune --json's output, for the kernels it could not tune")
    ap.add_argument("--progress", help="vec-report --tune's progress (stderr), the same for a run cut short")
    ap.add_argument("--details", help="write each kernel's tune as kinspect prints it to this file")
    a = ap.parse_args()

    from kinspect import api
    from kinspect.analysis.sol import by_headroom
    from kinspect.analysis.summary import display_name
    from kinspect.render.tune import render, table_row

    variants = api.resolve_variants([a.store])
    found = api.program(variants, top=0)
    errors = _errors(a.json, a.progress)
    rows, details, torch = [], [], "?"
    for kernel in by_headroom(found.sol.speeds)[:a.n]:
        v = found.busiest.get(kernel)
        tuned = api.tuned(v) if v is not None and v.path else None
        if tuned is None:
            rows.append((display_name(kernel), None, errors.get(kernel) or "no tune stored: vec-report --tune stopped "
                                                                          "before this kernel's tune ended (its time "
                                                                          "limit, or see its progress)"))
            continue
        r, o = tuned
        torch = r.torch or torch
        rows.append((display_name(kernel), (r, o, table_row(r, o)), ""))
        details.append(render(r, o))
    print(HEADER.format(torch=torch), "\n")
    print(f"{'kernel':44} {'ran µs':>8} {'kinspect winner':>30} {'µs':>8} {'n':>3} {'max_autotune pick':>30} "
          f"{'µs':>8} {'n':>3} {'speedup':>13} {'vs max-at':>13}  reason")
    goals = []
    for name, got, why in rows:
        if got is None:
            print(f"{name:44} not tuned: {why[:200]}")
            continue
        r, o, s = got
        f = lambda x: "-" if x is None else f"{x:.1f}"     # noqa: E731
        print(f"{name:44} {f(s['original_us']):>8} {s['winner'] or '-':>30} {f(s['winner_us']):>8} "
              f"{s['kinspect_trials']:>3} {s['max_autotune'] or '-':>30} {f(s['max_autotune_us']):>8} "
              f"{s['max_autotune_trials']:>3} {s['speedup'] or '-':>13} {s['vs_max_autotune'] or '-':>13}  "
              f"{s['reason'][:220]}")
        goals.append((name, o, s))
    print()
    for name, o, s in goals:
        vs = o.versus_max_autotune
        as_fast = "no max_autotune pick to compare" if vs is None else \
            "at least as fast" if vs.ratio >= 1 else "within the spread" if vs.high >= 1 else "slower"
        fewer = s["kinspect_trials"] < s["max_autotune_trials"]
        faster = o.speedup is not None and o.speedup.low > 1 and o.winner is not o.original
        print(f"goal ({name}): against max_autotune's pick {as_fast}; trials {s['kinspect_trials']} against "
              f"{s['max_autotune_trials']} ({'fewer' if fewer else 'not fewer'}); "
              f"{'' if faster else 'not '}measurably faster than what the program ran")
    for name, got, _ in rows:
        for n in (got[0].notes if got else ()):
            print(f"note ({name}): {n}")
    if a.details:
        Path(a.details).write_text("\n\n".join(details) + "\n")
    return 0


def _errors(json_path: str | None, progress_path: str | None) -> dict:
    """{kernel: why it was not tuned}, from vec-report's JSON when it finished, else from its progress."""
    out = {}
    if progress_path and Path(progress_path).is_file():
        for line in Path(progress_path).read_text(errors="replace").splitlines():
            m = re.match(r"not tuned (\S+): (.*)", line)
            if m:
                out[m.group(1)] = m.group(2)
    if json_path and Path(json_path).is_file() and Path(json_path).stat().st_size:
        try:
            for t in json.loads(Path(json_path).read_text()).get("tune", []):
                if "error" in t:
                    out[t["kernel"]] = t["error"]
        except ValueError:
            pass
    return out


if __name__ == "__main__":
    sys.exit(main())
