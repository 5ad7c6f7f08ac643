"""The tune table of a captured program (issue 32), read from its store: for each of the N kernels with the
most headroom, what the program ran, kinspect's winner and max_autotune's pick, the trials each took, the
speedups with their spread and the reason; then each kernel's tune as kinspect prints it.

It reads what `kinspect vec-report STORE --tune N` stored beside each variant as that kernel's tune ended,
so a run cut by a time limit still gives the rows of the kernels it finished; the others say why they have
none (the error vec-report's JSON or its progress gave, or the limit).

    python benchmarks/tune_table.py STORE [-n 5] [--json tune.json] [--progress tune.progress]
        [--details tune_details.txt]
    python benchmarks/tune_table.py --json tune.json      # the same table from vec-report's JSON alone

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
to match: kinspect's trials, counted as n kinspect in the order they ran, up to and including the first whose
  median is at most max_autotune's pick's; 0 when what the program ran already is; - when none was.
n max-at: the configs Inductor's own heuristics give with max_autotune on (torch {torch}), each timed here
  as its autotuner times them, the one equal to what the program ran included; configs pruned before
  running (they cannot launch) are not counted.
speedup: median of what the program ran / median of kinspect's winner, ± half the range the p20/p80
  times give; the winner is what the program ran unless a candidate is faster beyond that spread.
vs max-at: max_autotune's pick / kinspect's winner, the same way (>= 1: kinspect's at least as fast)."""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store", nargs="?", help="the capture's store; without it, the tunes in --json alone")
    ap.add_argument("-n", type=int, default=5, help="kernels, most headroom first (vec-report --tune N)")
    ap.add_argument("--json", help="vec-report --tune --json's output: for the kernels it could not tune, or "
                                   "(no store) every row")
    ap.add_argument("--progress", help="vec-report --tune's progress (stderr), the same for a run cut short")
    ap.add_argument("--details", help="write each kernel's tune as kinspect prints it to this file")
    a = ap.parse_args()

    from kinspect.render.tune import reached, render, table_row

    if a.store is None:
        if not a.json:
            ap.error("give the store, or --json with vec-report --tune --json's output")
        if a.details:
            ap.error("--details needs the store: an Inductor kernel's apply line names its autotune lookup key, "
                     "made from the kernel's source")
        tunes = _from_json(a.json, a.n)
    else:
        tunes = _from_store(a.store, a.n, _errors(a.json, a.progress))
    rows, details, torch = [], [], "?"
    for name, tuned, why in tunes:
        if tuned is None:
            rows.append((name, None, why))
            continue
        r, o = tuned
        torch = r.torch or torch
        rows.append((name, (r, o, table_row(r, o)), ""))
        details.append(render(r, o))
    print(HEADER.format(torch=torch), "\n")
    print(f"{'kernel':44} {'ran µs':>8} {'kinspect winner':>30} {'µs':>8} {'n':>3} {'to match':>8} "
          f"{'max_autotune pick':>30} {'µs':>8} {'n':>3} {'speedup':>13} {'vs max-at':>13}  reason")
    goals = []
    for name, got, why in rows:
        if got is None:
            print(f"{name:44} not tuned: {why[:200]}")
            continue
        r, o, s = got
        f = lambda x: "-" if x is None else f"{x:.1f}"     # noqa: E731
        print(f"{name:44} {f(s['original_us']):>8} {s['winner'] or '-':>30} {f(s['winner_us']):>8} "
              f"{s['kinspect_trials']:>3} {_n(s['kinspect_trials_to_match']):>8} {s['max_autotune'] or '-':>30} "
              f"{f(s['max_autotune_us']):>8} "
              f"{s['max_autotune_trials']:>3} {s['speedup'] or '-':>13} {s['vs_max_autotune'] or '-':>13}  "
              f"{s['reason'][:220]}")
        goals.append((name, r, o, s))
    print()
    for name, r, o, s in goals:
        vs = o.versus_max_autotune
        as_fast = "no max_autotune pick to compare" if vs is None else \
            "at least as fast" if vs.ratio >= 1 else "within the spread" if vs.high >= 1 else "slower"
        faster = o.speedup is not None and o.speedup.low > 1 and o.winner is not o.original
        print(f"goal ({name}): against max_autotune's pick {as_fast}"
              + (f"; {reached(r, o)}; {_fewer(s)}" if o.max_autotune is not None else "")
              + f"; {'' if faster else 'not '}measurably faster than what the program ran")
    for name, got, _ in rows:
        for n in (got[0].notes if got else ()):
            print(f"note ({name}): {n}")
    if a.details:
        Path(a.details).write_text("\n\n".join(details) + "\n")
    return 0


def _from_store(store: str, n: int, errors: dict) -> list:
    """[(kernel's display name, (TuneResult, Outcome) or None, why not tuned)] of the n kernels of the captured
    program with the most headroom, each from the tune stored beside its busiest variant."""
    from kinspect import api
    from kinspect.analysis.sol import by_headroom
    from kinspect.analysis.summary import display_name

    found = api.program(api.resolve_variants([store]), top=0)
    out = []
    for kernel in by_headroom(found.sol.speeds)[:n]:
        v = found.busiest.get(kernel)
        t = api.tuned(v) if v is not None and v.path else None
        tuned = (t.result, t.outcome) if t is not None else None
        out.append((display_name(kernel), tuned, "" if tuned else errors.get(kernel) or
                    "no tune stored: vec-report --tune stopped before this kernel's tune ended (its time limit, "
                    "or see its progress)"))
    return out


def _from_json(path: str, n: int) -> list:
    """The same rows from vec-report --tune --json's output alone (its tunes, most headroom first, as it wrote
    them)."""
    from kinspect.analysis.summary import display_name
    from kinspect.tune.outcome import outcome
    from kinspect.tune.result import TuneResult

    try:
        tunes = json.loads(Path(path).read_text())["tune"][:n]
        return [(display_name(t["kernel"]), None, t["error"]) if t.get("error") else
                (display_name(t["kernel"]), (lambda r: (r, outcome(r)))(TuneResult.from_json(t)), "") for t in tunes]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"{path}: not vec-report --tune --json's output ({type(e).__name__}: {str(e)[:80]})", file=sys.stderr)
        sys.exit(2)


def _n(x) -> str:
    return "-" if x is None else str(x)


def _fewer(s: dict) -> str:
    """The 'fewer timed trials' goal, judged on the trials kinspect took to reach max_autotune's pick's time."""
    k, m = s["kinspect_trials_to_match"], s["max_autotune_trials"]
    out = f"trials to reach it: {'fewer' if k is not None and k < m else 'not fewer'}"
    if m == 1:
        out += " (max_autotune has a single config, so fewer can only mean 0: the program's own config)"
    return out


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
                if t.get("error"):
                    out[t["kernel"]] = t["error"]
        except ValueError:
            pass
    return out


if __name__ == "__main__":
    sys.exit(main())
