"""How many of the corpus of real-style kernel files (tests/corpus) each command handles, per target.

    python benchmarks/real_files.py [-t cuda:90,cuda:80,hip:gfx942] [--only ID,ID] [--verbose]

Runs, for every corpus entry and target, `kinspect dump FILE:KERNEL -t T`, `kinspect vec-report
FILE:KERNEL -t T` and `kinspect diff FILE:KERNEL -t T` (an autotuned kernel sweeps its configs;
any other kernel --num-warps 4,8, so there are two variants to compare), each as a user would type
it: only --arg/-p for files without kinspect_examples, no flags for the others. Prints a table of
successes per command and target, then each failure's one-line error, marked "Triton refuses"
where the manifest expects Triton itself to refuse that target (fp8 types, CUDA-only libdevice
names, block pointers on a Triton that removed them). Runs in this process (click's CliRunner);
diff starts its compile workers as it does from the command line.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

COMMANDS = ("dump", "vec-report", "diff")


def main() -> None:
    import warnings

    from click.testing import CliRunner

    from kinspect.cli import main as kinspect
    from tests.corpus.manifest import CORPUS, TARGETS, kernel_path

    warnings.filterwarnings("ignore", message="TRITON_DEFAULT_FP_FUSION is unset")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-t", "--targets", default=",".join(TARGETS))
    ap.add_argument("--only", default=None, help="Corpus entry ids, comma-separated.")
    ap.add_argument("--verbose", action="store_true", help="Print each run as it finishes.")
    opts = ap.parse_args()
    targets = opts.targets.split(",")
    entries = [e for e in CORPUS if not opts.only or e["id"] in opts.only.split(",")]

    runner = CliRunner()
    ok = {(c, t): 0 for c in COMMANDS for t in targets}
    seconds = {c: 0.0 for c in COMMANDS}
    failures = []
    with tempfile.TemporaryDirectory(prefix="kinspect-real-files-") as tmp:
        for e in entries:
            for t in targets:
                for command in COMMANDS:
                    out = Path(tmp, e["id"], t.replace(":", "-"), command)
                    argv = [command, kernel_path(e), "-t", t, "--store", str(out), *e.get("flags", [])]
                    if command == "diff":
                        argv += ["--table", "--no-bench"] + ([] if e.get("configs") else ["--num-warps", "4,8"])
                    start = time.perf_counter()
                    r = runner.invoke(kinspect, argv)
                    seconds[command] += time.perf_counter() - start
                    line = r.output.strip().splitlines()[0] if r.output.strip() else repr(r.exception)
                    if r.exit_code == 0:
                        ok[command, t] += 1
                    else:
                        expected = e.get("refused", {}).get(t)
                        why = "Triton refuses" if expected and expected in line else "FAILS"
                        failures.append(f"  {command:<10} {t:<11} {e['id']:<18} {why}: {line}")
                    if opts.verbose:
                        print(f"{command:<10} {t:<11} {e['id']:<18} exit {r.exit_code}", flush=True)

    width = max(len(t) for t in targets)
    print(f"corpus: {len(entries)} kernels in tests/corpus; successes per command and target")
    print(f"  {'command':<10} " + "  ".join(f"{t:>{width}}" for t in targets) + "   seconds")
    for c in COMMANDS:
        print(f"  {c:<10} " + "  ".join(f"{f'{ok[c, t]}/{len(entries)}':>{width}}" for t in targets)
              + f"   {seconds[c]:7.1f}")
    if failures:
        print("failures:")
        print("\n".join(failures))


if __name__ == "__main__":
    main()
