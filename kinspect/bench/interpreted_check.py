"""`kinspect bench --interpret`: run the kernel under Triton's interpreter and check it against
its torch reference, on the CPU, no device needed.

TRITON_INTERPRET is read when `@triton.jit` decorates a function (the kernel's and Triton's own
library functions), so the check runs in a child process started with it set: the caller's
process and its already-decorated kernels are left as they are.

    python -m kinspect.bench.interpreted_check '{"kernel": "softmax", "size": "37x100", ...}'

prints one JSON line: the check, or {"error": "..."}. Given a JSON list of requests, it prints one
line per request: `interpret_many` checks several kernels or sizes for one child's start-up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

from kinspect.bench.check import Check
from kinspect.core.errors import KinspectError

TIMEOUT_S = 600
NOTE = ("Triton's interpreter runs the kernel's Python with numpy on the CPU, one program at a time: "
        "it checks results, not speed")


@dataclass(frozen=True)
class Interpreted:
    label: str
    size: str
    grid: tuple
    wall_ms: float
    check: Check | None

    def to_json(self) -> dict:
        return {"kernel": self.label, "size": self.size, "grid": list(self.grid), "interpreter_ms": self.wall_ms,
                "check": self.check.to_json() if self.check else None, "note": NOTE}


def interpret(kernel: str, *, constexprs: dict | None = None, args: tuple[str, ...] = (), size: str | None = None,
              num_warps: int | None = None, num_stages: int | None = None, replay: str | None = None) -> Interpreted:
    """Run `kernel` under the interpreter in a child process; `args` are `--arg` strings; `replay`
    a captured variant's folder, whose most frequent launch runs instead (kinspect.replay)."""
    return interpret_many([dict(kernel=kernel, constexprs=constexprs, args=args, size=size, num_warps=num_warps,
                                num_stages=num_stages, replay=replay)])[0]


def interpret_many(runs: list[dict]) -> list[Interpreted]:
    """Several `interpret` runs (each a dict of its keyword arguments plus `kernel`) in one child
    process: the interpreter's start-up (importing torch and Triton) is paid once. The first run
    that fails raises, naming its kernel."""
    requests = [{"kernel": r["kernel"], "constexprs": r.get("constexprs") or {}, "args": list(r.get("args") or ()),
                 "size": r.get("size"), "num_warps": r.get("num_warps"), "num_stages": r.get("num_stages"),
                 "replay": r.get("replay")} for r in runs]
    names = ", ".join(dict.fromkeys(r["kernel"] for r in requests))
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    try:
        proc = subprocess.run([sys.executable, "-m", "kinspect.bench.interpreted_check", json.dumps(requests)],
                              capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise KinspectError(f"the interpreter ran '{names}' for over {TIMEOUT_S} s; pass a smaller --size") from None
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if len(lines) < len(requests) and not any("error" in json.loads(ln) for ln in lines):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise KinspectError(f"the interpreter's process for '{names}' failed (exit {proc.returncode}): {tail}")
    results = []
    for line in lines:
        out = json.loads(line)
        if "error" in out:
            raise KinspectError(out["error"])
        check = None if out["check"] is None else Check.from_json(out["check"])
        results.append(Interpreted(label=out["label"], size=out["size"], grid=tuple(out["grid"]),
                                   wall_ms=out["wall_ms"], check=check))
    return results


def _child(request: dict) -> dict:
    import time

    from kinspect import kernels
    from kinspect.bench.check import compare
    from kinspect.bench.measure import _preparer
    from kinspect.compile.args import parse_args
    from kinspect.compile.user import is_user_kernel

    kernel = request["kernel"]
    size = request["size"]
    replay = request.get("replay")
    if not size and not replay and not is_user_kernel(kernel):
        spec = kernels.get(kernel)
        size = spec.small_size or spec.default_size
    launch = _preparer(kernel, replay)(device="cpu", constexprs=request["constexprs"], args=parse_args(request["args"]),
                                       size=size, num_warps=request["num_warps"], num_stages=request["num_stages"])
    t0 = time.perf_counter()
    launch()
    wall = (time.perf_counter() - t0) * 1e3
    check = None
    if launch.reference is not None and launch.output:
        ref = launch.reference(*launch.input_values())
        check = compare(launch.args[launch.output], ref, precision=launch.dtype).to_json()
    return {"label": launch.label, "size": launch.size, "grid": list(launch.grid_size()), "wall_ms": round(wall, 1),
            "check": check}


def main(argv: list[str]) -> int:
    import warnings

    warnings.filterwarnings("ignore")
    given = json.loads(argv[1])
    for request in given if isinstance(given, list) else [given]:
        out = _run(request)
        print(json.dumps(out, default=str), flush=True)
        if "error" in out:
            break
    return 0


def _run(request: dict) -> dict:
    try:
        return _child(request)
    except KinspectError as e:
        return {"error": str(e)}
    except Exception as e:  # the kernel itself failed under the interpreter: say where, in one line
        text = str(e).strip().splitlines()
        return {"error": f"'{request['kernel']}' failed under the interpreter: "
                         f"{type(e).__name__}: {text[-1] if text else ''}"}


if __name__ == "__main__":
    sys.exit(main(sys.argv))
