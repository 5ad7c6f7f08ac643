"""A sweep's compile worker: `python -m kinspect.diff.worker`, started by kinspect.diff.sweep.

Reads one job per line on stdin (a sweep.Job as JSON) and writes one line per job on stdout:
{"path": the stored variant folder, "metrics": its row figures} or {"error": the one-line message}.
A line {"plan": {...}} asks which autotune configs to sweep instead (see plan). Anything Triton prints
goes to stderr, so stdout carries only the answers.
"""

from __future__ import annotations

import json
import sys
import warnings


def main() -> None:
    # the filter the CLI installs: Triton 3.9 warns in every process that this knob is unset
    warnings.filterwarnings("ignore", message="TRITON_DEFAULT_FP_FUSION is unset")
    answers = sys.stdout
    sys.stdout = sys.stderr  # a print inside a kernel file or Triton must not corrupt the answers
    from kinspect.diff.sweep import Job, compile_job

    for line in sys.stdin:
        d = json.loads(line)
        try:
            if "plan" in d:
                answer = plan(**d["plan"])
            else:
                job = Job(**{**d, "constexprs": tuple(tuple(kv) for kv in d["constexprs"]), "args": tuple(d["args"])})
                outcome = compile_job(job)
                answer = {"path": outcome.path, "error": outcome.error, "metrics": outcome.metrics}
        except Exception as e:  # not a KinspectError: a bug, or a crash inside Triton's Python
            answer = {"error": f"{type(e).__name__}: {e}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


def plan(kernel: str, targets: list, combos: list[dict], args: list[str], only: list[int] | None) -> dict:
    """{"configs": for each target and -p combination, the config numbers to sweep ([None] for a
    kernel that is not autotuned)} or {"error": the one-line message}."""
    from kinspect.compile.args import parse_args
    from kinspect.compile.user import configs_to_sweep
    from kinspect.errors import KinspectError

    try:
        return {"configs": [configs_to_sweep(kernel, target, combo, parse_args(args), only)
                            for target in targets for combo in combos]}
    except KinspectError as e:
        return {"error": str(e)}


if __name__ == "__main__":
    main()
