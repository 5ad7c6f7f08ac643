"""A sweep's compile worker: `python -m kinspect.diff.worker`, started by kinspect.diff.sweep.

Reads one job per line on stdin (a sweep.Job as JSON) and writes one line per job on stdout:
{"path": the stored variant folder, "metrics": its row figures} or {"error": the one-line message}.
A line {"plan": {...}} asks which autotune configs to sweep instead (sweep.configs_of). Anything Triton prints
goes to stderr, so stdout carries only the answers.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    from kinspect.core.errors import quiet_foreign_noise

    quiet_foreign_noise()    # as the CLI does
    answers = sys.stdout
    sys.stdout = sys.stderr  # a print inside a kernel file or Triton must not corrupt the answers
    from kinspect.diff.sweep import Job, compile_job, configs_of

    for line in sys.stdin:
        d = json.loads(line)
        try:
            if "plan" in d:
                answer = configs_of(**d["plan"])
            else:
                job = Job(**{**d, "constexprs": tuple(tuple(kv) for kv in d["constexprs"]), "args": tuple(d["args"])})
                outcome = compile_job(job)
                answer = {"path": outcome.path, "error": outcome.error, "metrics": outcome.metrics,
                          "reused": outcome.reused}
        except Exception as e:  # not a KinspectError: a bug, or a crash inside Triton's Python
            answer = {"error": f"{type(e).__name__}: {e}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
