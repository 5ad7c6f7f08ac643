"""Captured variants compiled again in a sweep's worker processes: a diff sweep over a captured
launch's constexprs (jobs), and the compile step of `capture --interpret` (compile_pending).
Each job is compiled by kinspect.replay.compile in a worker (kinspect.diff.sweep dispatches there)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
from pathlib import Path
from typing import Callable

from kinspect.errors import UsageError
from kinspect.model import Variant
from kinspect.replay.spec import from_variant


def jobs(variants: list[Variant], *, targets=(None,), constexprs: dict[str, list] | None = None,
         num_warps=(None,), num_stages=(None,), out_dir: str | Path = "") -> list:
    """Sweep Jobs that compile each captured variant's most frequent launch again, for every
    combination of the values; a name in `constexprs` must be one of its constexprs or scalars."""
    from kinspect.diff.jobs import Job

    constexprs = constexprs or {}
    keys = list(constexprs)
    out = []
    for v in variants:
        spec = from_variant(v)
        settable = {a.name for a in spec.args if a.kind not in ("tensor", "tensordesc")}
        unknown = [k for k in keys if k not in settable]
        if unknown:
            from kinspect.errors import did_you_mean

            raise UsageError(f"-p {unknown[0]}: '{v.kernel}' has no constexpr or scalar '{unknown[0]}'"
                             f"{did_you_mean(unknown[0], settable)}; its constexprs: "
                             f"{', '.join(spec.constexpr_names()) or 'none'}")
        values = itertools.product(*(constexprs[k] for k in keys))
        for target, vals, w, s in itertools.product(targets or (None,), values, num_warps or (None,),
                                                    num_stages or (None,)):
            out.append(Job(kernel=v.kernel, target=target or spec.target, constexprs=tuple(zip(keys, vals)),
                           num_warps=w, num_stages=s, out_dir=str(out_dir), replay=str(Path(v.path).resolve())))
    return out


def replayed_note(v: Variant) -> str:
    """What a sweep of a captured variant compiled again, for the diff's notes."""
    from kinspect.replay.spec import how

    spec = from_variant(v)
    return f"{v.kernel} compiled again with its captured launch ({spec.describe()}); the kernel {how(spec)}"


# -- capture --interpret: the compile step after the program --------------------------------------------

@dataclasses.dataclass(frozen=True)
class Compiled:
    """What the compile step of an interpreted capture made."""

    variants: list[Variant]
    failed: list[tuple[str, str]]        # (kernel, error line)
    seconds: float = 0.0


def compile_pending(out: Path, *, progress: Callable | None = None, jobs_limit: int | None = None) -> Compiled:
    """Compile every kernel and specialization the interpreted processes of a capture launched
    (their files under `<out>/.kinspect-interpret/`), in parallel workers, into the store; write each
    process's launch counts beside the variant it launched; then remove those files."""
    from kinspect.store import INTERPRET_PENDING, Store

    folder = Path(out) / INTERPRET_PENDING
    if not folder.is_dir():
        return Compiled([], [])
    with Store(out).lock():     # the workers write under this process's lock (held already by capture)
        return _compile_pending(Path(out), folder, progress, jobs_limit)


def _compile_pending(out: Path, folder: Path, progress, jobs_limit) -> Compiled:
    import shutil
    import time

    from kinspect.diff import sweep
    from kinspect.model import launches_from_json
    from kinspect.store import read_record, write_launches

    t0 = time.perf_counter()
    unique: dict[str, dict] = {}          # one entry per specialization, whichever processes launched it
    for path in sorted(folder.glob("*.json")):
        try:
            d = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for entry in d.get("specs", ()):
            spec = entry["spec"]
            # a specialization is its types, alignment, options and its constexprs' values (BLOCK=32 and
            # BLOCK=128 of one kernel are two variants)
            constexprs = {a["name"]: a.get("value") for a in spec["args"]
                          if spec["signature"].get(a["name"]) == "constexpr"}
            key = json.dumps([spec["kernel"], spec["target"], spec["signature"], spec["attributes"], spec["options"],
                              constexprs, (spec.get("source") or {}).get("file"), (spec.get("source") or {}).get("line")],
                             sort_keys=True, default=str)
            slot = unique.setdefault(key, {"spec": spec, "launches": []})
            if entry.get("launches"):
                slot["launches"].append((d["host"], int(d["pid"]), launches_from_json(entry["launches"])))
    specs_dir = folder / "specs"
    specs_dir.mkdir(exist_ok=True)
    job_list = []
    for i, slot in enumerate(unique.values()):
        path = specs_dir / f"{i}.json"
        path.write_text(json.dumps(slot["spec"]))
        job_list.append(sweep.Job(kernel=slot["spec"]["kernel"], target=slot["spec"]["target"], out_dir=str(out),
                                  replay=str(path)))
    # The workers must not run under the interpreter, nor this process compile if its Triton does
    # (the Python API's capture inside an interpreted program).
    import sys

    from kinspect.environ import patched

    interpreted_here = "triton" in sys.modules and os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
    with patched({"TRITON_INTERPRET": None}):
        result = sweep.run(job_list, workers=jobs_limit, progress=progress,
                           subprocesses=interpreted_here) if job_list else None
    from kinspect.launches import merge

    failed, by_folder = [], {}
    for outcome, slot in zip(result.outcomes if result else (), unique.values()):
        if not outcome.path:
            failed.append((outcome.job.kernel, outcome.error or "failed"))
            continue
        per_process = by_folder.setdefault(outcome.path, {})
        for host, pid, launches in slot["launches"]:
            per_process.setdefault((host, pid), []).append(launches)
    variants = []
    for path, per_process in by_folder.items():     # two records that compiled to one variant count together
        for (host, pid), items in per_process.items():
            write_launches(Path(path), merge(items), host=host, pid=pid)
        variants.append(read_record(Path(path)))
    shutil.rmtree(folder, ignore_errors=True)
    return Compiled(variants, failed, time.perf_counter() - t0)
