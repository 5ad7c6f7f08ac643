"""`kinspect bench --profile trace.json`: the kernel under torch.profiler, by name.

A bare Triton launch shows in torch.profiler only as a device kernel with no operator around it.
Here the launch is registered as a torch custom op, `kinspect::<kernel>`, with
torch.library.triton_op and wrap_triton, so the profiler's table and the Chrome/Perfetto trace
show the op and, under it, the Triton kernel.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import warnings
from dataclasses import dataclass
from pathlib import Path

from kinspect.bench.prepared import Launch
from kinspect.core.modes import file_mode
from kinspect.core.errors import UsageError

RUNS = 10
_ops: dict[str, object] = {}        # op name -> registered op (an op can be registered once per process)
_launches: dict[str, Launch] = {}   # op name -> the launch its body runs now


@dataclass(frozen=True)
class Profile:
    path: str
    op: str
    runs: int
    table: str
    op_events: int          # trace events named by the op
    kernel_events: int      # device kernel events of the Triton kernel
    kernel_ms: float | None = None   # their median duration (CUPTI's kernel time; no L2 flush between calls)

    def to_json(self) -> dict:
        return {"trace": self.path, "op": self.op, "runs": self.runs, "op_events": self.op_events,
                "kernel_events": self.kernel_events, "kernel_ms": self.kernel_ms}


def op_name(label: str) -> str:
    return "kinspect::" + (re.sub(r"\W", "_", label).strip("_") or "kernel")


def check_writable(path: str | Path) -> Path:
    """The trace's path, or a one-line error before anything runs."""
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"--profile {path}: folder '{folder}' does not exist")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"--profile {path}: folder '{folder}' is not writable")
    if p.is_dir():
        raise UsageError(f"--profile {path} is a folder; give a file name such as trace.json")
    return p


def signature(launch: Launch) -> tuple[list[str], tuple[str, ...]]:
    """(tensor arg names, mutated names): every tensor argument is an op argument; the output (or,
    when unknown, every tensor) is declared mutated; the op returns nothing."""
    import torch

    tensors = [k for k, v in launch.args.items() if torch.is_tensor(v)]
    mutated = (launch.output,) if launch.output in tensors else tuple(tensors)
    return tensors, mutated


def register(launch: Launch) -> tuple[str, object, list[str]]:
    """The launch as the torch op `kinspect::<kernel>` (registered once per process and name; the
    body runs the latest launch registered under that name)."""
    import inspect

    import torch
    from torch.library import triton_op, wrap_triton

    name = op_name(launch.label)
    tensors, mutated = signature(launch)
    _launches[name] = launch
    if name not in _ops:
        def body(*values):
            now = _launches[name]
            wrap_triton(now.fn)[now.grid](**{**now.args, **dict(zip(tensors, values))}, **now.constexprs,
                                          **now.options)

        # torch infers the op's schema from the Python signature: give the body one named tensor per argument
        body.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=torch.Tensor) for n in tensors],
            return_annotation=None)
        _ops[name] = triton_op(name, body, mutates_args=mutated)
    return name, _ops[name], tensors


def profile(launch: Launch, path: str | Path, *, runs: int = RUNS) -> Profile:
    """Run the launch `runs` times as the op under torch.profiler; write the trace to `path`."""
    p = check_writable(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the profiler's notes on its own cycles are not about the kernel
        return _profile(launch, p, runs)


def _profile(launch: Launch, p: Path, runs: int) -> Profile:
    import tempfile

    import torch
    from torch.profiler import ProfilerActivity

    name, op, tensors = register(launch)
    values = [launch.args[n] for n in tensors]
    cuda = any(v.is_cuda for v in values)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    op(*values)  # outside the profile: the op's first call does its own one-time work
    if cuda:
        torch.cuda.synchronize()
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(runs):
            op(*values)
        if cuda:
            torch.cuda.synchronize()
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent if str(p.parent) else ".")
    os.fchmod(fd, file_mode())      # a trace to share, not owner-only as mkstemp makes it
    os.close(fd)
    try:
        prof.export_chrome_trace(tmp)
        events = json.loads(Path(tmp).read_text()).get("traceEvents", [])
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    kernel_name = getattr(launch.fn, "__name__", "")
    table = prof.key_averages().table(sort_by="device_time_total" if cuda else "cpu_time_total", row_limit=12)
    kernels = [e for e in events if e.get("cat") == "kernel" and kernel_name and kernel_name in str(e.get("name", ""))]
    durations = [float(e["dur"]) / 1e3 for e in kernels if "dur" in e]  # the trace's durations are in µs
    return Profile(path=str(p), op=name, runs=runs, table=table,
                   op_events=sum(1 for e in events if e.get("name") == name), kernel_events=len(kernels),
                   kernel_ms=statistics.median(durations) if durations else None)
