"""Tuning a captured kernel, the tune stored beside a variant, the tunes of a program's kernels."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kinspect.analysis.lookup import find_variant
from kinspect.core.errors import KinspectError, UsageError
from kinspect.core.model import Variant
from kinspect.files.store import DEFAULT_OUT

if TYPE_CHECKING:
    from kinspect.analysis.program_view import ProgramView


def tune(name: str, *, out_dir: str | Path = DEFAULT_OUT, trials: int | None = None, budget_s: float | None = None,
         compare: bool = True, progress=None, jobs: int | None = None, runner_for=None, constexprs=None,
         args=None, size: str | None = None, cluster: str | None = None, gpus: int | None = None, ex=None):
    """Tune a captured variant (a name or folder in the store at `out_dir`), or a kernel (shipped, or
    FILE:KERNEL with example values) whose one launch is captured here first: kinspect.tune.search.tune.
    Stores the result beside the variant and returns it with what it means (kinspect.tune.outcome.Tuned).
    `runner_for(spec)` makes the object that checks and times candidates (default: the GPU Replayer, or
    on several GPUs kinspect.tune.run.OnEveryGpu: every visible GPU, the first `gpus`, or the `cluster`'s;
    `ex` an executor already made, kinspect.core.executor); without one and without a GPU, a UsageError
    of one line."""
    from kinspect.bench.captured import captured
    from kinspect.replay.spec import from_variant
    from kinspect.files.store import read_record
    from kinspect.tune import result, run, search

    folder = captured(name, out_dir, constexprs)
    if folder is None and not _names_kernel(name):
        find_variant(name, out_dir)         # not found: its one line, with the names that are there
        raise UsageError(f"'{name}' is a variant without a captured launch: tune replays a variant "
                         f"`kinspect capture` recorded, or launches a kernel (shipped, or FILE:KERNEL) once here")
    if runner_for is None and not (cluster or ex is not None and ex.name != "local"):   # a cluster's GPUs are there
        line = run.device_line(f"'{name}'", name, out_dir)
        if line:
            raise UsageError(line)
    if folder is None:
        folder = run.record_launch(name, out_dir=out_dir, constexprs=constexprs or {}, args=args or {}, size=size)
    elif constexprs or args or size:
        raise UsageError(f"-p/--arg/--size do not apply to the captured '{name}': tune replays its captured launch")
    v = read_record(Path(folder))
    spec = from_variant(v)
    if trials is None and budget_s is None:
        trials = search.DEFAULT_TRIALS
    with _fanned(ex, runner_for, cluster, gpus) as ex:
        if runner_for is not None:
            runner = runner_for(spec)
        elif ex is not None and (ex.name != "local" or len(ex.gpus) > 1):
            runner = run.OnEveryGpu(folder, ex)
        else:
            runner = run.Replayer(spec)
        found = search.tune(v, runner=runner, trials=trials, budget_s=budget_s, compare=compare,
                            progress=progress, workers=jobs)
    result.write(folder, found)
    return _meaning(found, v)


def _fanned(ex, runner_for, cluster: str | None, gpus: int | None):
    """The executor a tune runs its candidates through: `ex` as given; none where a runner is given; else
    the one --cluster/--gpus make, for this tune (kinspect.core.executor.fanned_out)."""
    import contextlib

    from kinspect.core.executor import fanned_out

    if ex is not None or runner_for is not None or not (cluster or gpus != 1):
        return contextlib.nullcontext(ex)
    return fanned_out(cluster, gpus)


def _names_kernel(name: str) -> bool:
    from kinspect import kernels
    from kinspect.compile.user import is_user_kernel

    return is_user_kernel(name) or name in kernels.names()


def tuned(variant: Variant):
    """The tune stored beside a variant, with what it means; None when it was never tuned."""
    from kinspect.tune import result

    found = result.read(variant.path) if variant.path else None
    return None if found is None else _meaning(found, variant)


def _meaning(found, variant: Variant):
    """A tune of `variant` with its kinspect.tune.outcome.Outcome; an Inductor kernel's names the key of
    Inductor's autotune lookup table for it."""
    from kinspect.replay.spec import generated
    from kinspect.tune import heuristic, outcome

    h = heuristic.read(variant.source.text) if generated(variant.source) else None
    meaning = outcome.outcome(found, heuristic.lookup_key(variant.source.text, h.size_hints) if h is not None else None)
    return outcome.Tuned(kernel=found.kernel, result=found, outcome=meaning)


def tune_program(found: ProgramView, n: int, **kwargs) -> list:
    """Tune the busiest variant of each of the `n` kernels of a program view (api.program) with the most
    headroom, most headroom first: a kinspect.tune.outcome.Tuned each, with its error line where it was
    not tuned."""
    from kinspect.analysis.sol import by_headroom
    from kinspect.tune.outcome import Tuned
    from kinspect.tune.run import device_line

    chosen = by_headroom(found.sol.speeds)[:n]
    first = found.busiest.get(chosen[0]) if chosen else None     # the hint names a variant that is there
    line = (device_line("the kernels of this program", first.path if first is not None and first.path else
                        (chosen[0] if chosen else "VARIANT"))
            if kwargs.get("runner_for") is None and not kwargs.get("cluster") else None)
    if line:
        raise UsageError(line)
    cluster, gpus = kwargs.pop("cluster", None), kwargs.pop("gpus", None)
    if kwargs.get("progress"):
        kwargs["progress"](f"tune: the {len(chosen)} kernel(s) with the most headroom, in this order: "
                           f"{', '.join(chosen)}")
    out = []
    # one executor for every kernel: its GPU workers are started once
    with _fanned(kwargs.pop("ex", None), kwargs.get("runner_for"), cluster, gpus) as ex:
        for kernel in chosen:
            v = found.busiest.get(kernel)
            if v is None or not v.path:
                out.append(Tuned(kernel, error="no variant of it was launched with its arguments recorded"))
                continue
            try:
                out.append(tune(v.path, ex=ex, cluster=cluster, gpus=gpus, **kwargs))
            except KinspectError as e:
                out.append(Tuned(kernel, error=str(e)))
                if kwargs.get("progress"):
                    kwargs["progress"](f"not tuned {kernel}: {e}")
    return out
