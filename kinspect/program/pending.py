"""The compile step of `kinspect capture --interpret` (and of kinspect.capture() under the interpreter):
the specializations the interpreted processes launched (their pending files) compiled for the target
in a sweep's worker processes (kinspect.diff.sweep, whose workers compile each captured launch with
kinspect.compile.replayed), each process's launch counts merged into the variant it launched."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Callable

from kinspect.core.errors import KinspectError
from kinspect.core.model import Variant


@dataclasses.dataclass(frozen=True)
class Compiled:
    """What the compile step of an interpreted capture made."""

    variants: list[Variant]
    failed: list[tuple[str, str]]        # (kernel, error line)
    seconds: float = 0.0
    left: int = 0                        # specializations left to compile (the step was interrupted)
    targets: tuple[str, ...] = ()        # what they were compiled for
    notes: tuple[str, ...] = ()          # pending files that could not be read


def compile_pending(out: Path, *, progress: Callable | None = None, jobs_limit: int | None = None) -> Compiled:
    """Compile every kernel and specialization the interpreted processes of a capture launched
    (their files under `<out>/.kinspect-interpret/`), in parallel workers, into the store; merge each
    process's launch counts into the variant it launched; then remove those files.

    Ctrl-C stops the workers and raises kinspect.core.interrupt.Interrupted with the Compiled so far: each
    variant compiled before is whole (its launches merged), and the pending files keep only what is
    left, which the next compile_pending (`kinspect capture --resume`) compiles."""
    from kinspect.files.store import INTERPRET_PENDING, Outside, Store, contained

    folder = Path(out) / INTERPRET_PENDING
    if not folder.is_dir():
        return Compiled([], [])
    try:
        contained(Path(out), INTERPRET_PENDING)
    except Outside:
        raise KinspectError(f"'{folder}' is a link out of the store; kinspect does not compile or write through it: "
                            f"remove it") from None
    with Store(out).lock():     # the workers write under this process's lock (held already by capture)
        return _compile_pending(Path(out), folder, progress, jobs_limit)


def _pending(folder: Path) -> tuple[dict[str, dict], dict[Path, dict], list[str]]:
    """The specializations the pending files of `folder` hold, one per key however many processes
    launched it ({"spec", "launches": [(host, pid, Launches)]}), the files as read, and a line for
    each file that could not be read (checked: kinspect.files.schema.PENDING)."""
    from kinspect.files import schema
    from kinspect.core.model import launches_from_json
    from kinspect.files.store import load_json

    unique: dict[str, dict] = {}
    files, notes = {}, []
    for path in sorted(folder.glob("*.json")):
        try:
            d = files[path] = load_json(folder, path.name, schema.PENDING)
        except KinspectError as e:
            notes.append(f"interpreted launches {e}; not compiled")
            continue
        for entry in d["specs"]:
            slot = unique.setdefault(_key(entry["spec"]), {"spec": entry["spec"], "launches": []})
            if entry.get("launches"):
                slot["launches"].append((d["host"], d["pid"], launches_from_json(entry["launches"])))
    return unique, files, notes


def _key(spec: dict) -> str:
    """A specialization: its types, alignment, options and its constexprs' values (BLOCK=32 and
    BLOCK=128 of one kernel are two variants)."""
    constexprs = {a["name"]: a.get("value") for a in spec["args"] if spec["signature"].get(a["name"]) == "constexpr"}
    return json.dumps([spec["kernel"], spec["target"], spec["signature"], spec.get("attributes", {}),
                       spec.get("options", {}), constexprs, (spec.get("source") or {}).get("file"),
                       (spec.get("source") or {}).get("line")], sort_keys=True, default=str)


def _compile_pending(out: Path, folder: Path, progress, jobs_limit) -> Compiled:
    import shutil
    import sys
    import time

    from kinspect.diff import sweep
    from kinspect.core.environ import patched
    from kinspect.core.interrupt import Interrupted, deferred
    from kinspect.files.store import write_atomic

    t0 = time.perf_counter()
    unique, files, notes = _pending(folder)
    specs_dir = folder / "specs"
    if specs_dir.is_symlink():
        specs_dir.unlink()
    specs_dir.mkdir(exist_ok=True)
    job_list = []
    for i, slot in enumerate(unique.values()):
        path = specs_dir / f"{i}.json"
        write_atomic(path, json.dumps(slot["spec"]))
        job_list.append(sweep.Job(kernel=slot["spec"]["kernel"], target=slot["spec"]["target"], out_dir=str(out),
                                  replay=str(path)))
    # The workers must not run under the interpreter, nor this process compile if its Triton does
    # (the Python API's capture inside an interpreted program).
    interpreted_here = "triton" in sys.modules and os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
    stopped = None
    try:
        with patched({"TRITON_INTERPRET": None}):
            outcomes = dict(enumerate(sweep.run(job_list, workers=jobs_limit, progress=progress,
                                                subprocesses=interpreted_here).outcomes)) if job_list else {}
    except Interrupted as e:
        outcomes, stopped = e.done, e
    slots = list(unique.values())
    with deferred(reraise=False) as got:      # what was compiled is kept whole, whatever comes now
        variants, failed = _keep([(outcomes[i], slots[i]) for i in sorted(outcomes)])
        if stopped is None and not got:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            _leave(files, {_key(slots[i]["spec"]) for i in outcomes})
            shutil.rmtree(specs_dir, ignore_errors=True)
    compiled = Compiled(variants, failed, time.perf_counter() - t0, left=len(slots) - len(outcomes),
                        targets=tuple(dict.fromkeys(slot["spec"]["target"] for slot in slots)), notes=tuple(notes))
    if stopped is not None or got:
        raise Interrupted(compiled)
    return compiled


def _keep(done: list[tuple]) -> tuple[list[Variant], list[tuple[str, str]]]:
    """Each compiled variant with the launches its processes recorded merged into its record (two
    specializations that compiled to one variant count together); the failed ones' error lines."""
    from kinspect.files.launches import merge
    from kinspect.files.store import merge_launches, read_record, write_launches

    failed, by_folder = [], {}
    for outcome, slot in done:
        if not outcome.path:
            failed.append((outcome.job.kernel, outcome.error or "failed"))
            continue
        per_process = by_folder.setdefault(outcome.path, {})
        for host, pid, launches in slot["launches"]:
            per_process.setdefault((host, pid), []).append(launches)
    variants = []
    for path, per_process in by_folder.items():
        for (host, pid), items in per_process.items():
            write_launches(Path(path), merge(items), host=host, pid=pid)
        merge_launches(Path(path))      # now: a later compile of the same process's launches adds to them
        variants.append(read_record(Path(path)))
    return variants, failed


def _leave(files: dict[Path, dict], done: set[str]) -> None:
    """Take what was compiled out of the pending files; a file left with nothing goes."""
    from kinspect.files.store import write_atomic

    for path, d in files.items():
        specs = [e for e in d["specs"] if _key(e["spec"]) not in done]
        if not specs:
            path.unlink(missing_ok=True)
        elif len(specs) < len(d["specs"]):
            write_atomic(path, json.dumps({**d, "specs": specs}, default=str))
