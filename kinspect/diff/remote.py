"""A sweep's compiles and timings through an executor (kinspect.core.executor): on a Ray cluster each
compile runs on any node's CPU into a folder of its own there and comes back as its variant folder's
files, written into the local store atomically (as a local compile writes it); timings run on each GPU
the executor has, the baseline (the sweep's first variant) timed on every GPU used so each row is
compared with the baseline on its own GPU.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path

from kinspect.diff.jobs import Job, JobResult

MAX_PACKED = 256 << 20        # a variant folder larger than this does not come back (a stage is capped lower)


def compile_packed(fields: dict) -> dict:
    """Compile one job (its fields) into a store of its own in a temporary folder and return the variant
    folder's files: {"rel": kernel/variant, "files": {name: bytes}, "metrics": ..., "error": ...}."""
    from kinspect.diff.sweep import compile_job

    with tempfile.TemporaryDirectory(prefix="kinspect-remote-") as tmp:
        job = Job(**{**fields, "out_dir": tmp})
        result = compile_job(job)
        if result.error or not result.path:
            return {"error": result.error or "no variant", "rel": None, "files": {}, "metrics": None}
        folder = Path(result.path)
        files, size = {}, 0
        for p in sorted(folder.rglob("*")):
            if p.is_file() and not p.is_symlink():
                data = p.read_bytes()
                size += len(data)
                if size > MAX_PACKED:
                    return {"error": f"the variant folder is larger than {MAX_PACKED >> 20} MiB", "rel": None,
                            "files": {}, "metrics": None}
                files[str(p.relative_to(folder))] = data
        return {"rel": str(folder.relative_to(tmp)), "files": files, "metrics": result.metrics, "error": None}


def unpack(out_dir: str | os.PathLike, packed: dict) -> str:
    """Write a packed variant folder into the local store, whole or not at all; its path."""
    root = Path(out_dir)
    rel = Path(packed["rel"])
    if rel.is_absolute() or ".." in rel.parts or len(rel.parts) != 2:
        raise ValueError(f"a remote compile named the folder {packed['rel']!r}, not kernel/variant")
    target = root / rel
    if target.is_dir():            # compiled before (reuse): the local copy stands
        return str(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{rel.name}.", dir=target.parent))
    try:
        for name, data in packed["files"].items():
            p = tmp / name
            if ".." in Path(name).parts or Path(name).is_absolute():
                raise ValueError(f"a remote compile named the file {name!r}")
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return str(target)


def compile_all(jobs: list[Job], ex, progress=None) -> list[JobResult]:
    """Every job compiled through the executor, results in the jobs' order."""
    if progress:
        progress(None, len(jobs))
    items = [(dataclasses.asdict(j),) for j in jobs]
    out = []
    for job, r in zip(jobs, ex.map("kinspect.diff.remote:compile_packed", items,
                                   progress=None)):
        if r.error:
            out.append(JobResult(job, error=r.error))
        elif r.value.get("error"):
            out.append(JobResult(job, error=r.value["error"]))
        else:
            out.append(JobResult(job, path=unpack(job.out_dir, r.value), metrics=r.value["metrics"]))
        if progress:
            progress(out[-1], len(jobs))
    return out


def time_stored(path: str, size: str | None):
    """A stored variant's runtime on this worker's GPU (kinspect.bench.runtime.time_variant)."""
    from kinspect.bench.runtime import time_variant
    from kinspect.files.store import read_record

    return time_variant(read_record(Path(path)), size)


@dataclasses.dataclass(frozen=True)
class Timed:
    """A row's runtime, the GPU that timed it and the baseline's runtime on that GPU."""

    runtime: object                  # kinspect.bench.stats.Runtime, or None
    gpu: object = None               # kinspect.core.executor.Gpu
    baseline: object = None          # the first row's Runtime on the same GPU
    error: str | None = None


def time_all(paths: list[str], size: str | None, ex) -> list[Timed]:
    """Time every stored variant; the first is the baseline and is timed on every GPU the executor uses
    (the extra timings pinned), so each row's ratio is to the baseline on its own GPU."""
    gpus = list(getattr(ex, "gpus", []) or [])
    extra = gpus[1:] if len(paths) > 1 else []
    items = [(p, size) for p in paths] + [(paths[0], size) for _ in extra]
    pin = {0: gpus[0]} if gpus else {}
    pin.update({len(paths) + i: g for i, g in enumerate(extra)})
    results = ex.map("kinspect.diff.remote:time_stored", items, gpu=True, pin=pin)
    base = {}
    for r in [results[0]] + results[len(paths):]:
        if r.gpu is not None and r.value is not None:
            base[r.gpu.key] = r.value
    out = []
    for r in results[:len(paths)]:
        out.append(Timed(r.value, r.gpu, base.get(r.gpu.key) if r.gpu is not None else None, r.error))
    return out


def baseline_spread_note(timed: list[Timed]) -> str | None:
    """A line when the baseline's runtime differs between GPUs of one model by more than its spread."""
    by_model: dict = {}
    for t in timed:
        if t.gpu is not None and t.baseline is not None:
            by_model.setdefault(t.gpu.name, {})[t.gpu.key] = (t.gpu, t.baseline)
    lines = []
    for model, runs in by_model.items():
        if len(runs) < 2:
            continue
        lo = min(runs.values(), key=lambda gr: gr[1].median_ms)
        hi = max(runs.values(), key=lambda gr: gr[1].median_ms)
        if hi[1].p20_ms > lo[1].p80_ms:
            hosts = lo[0].host != hi[0].host
            lines.append(f"{model}: the baseline ran {hi[1].median_ms / lo[1].median_ms:.2f}x slower on GPU "
                         f"{hi[0].short(hosts)} than on GPU {lo[0].short(hosts)}, beyond its spread: compare rows by "
                         f"their ratio to the baseline on their own GPU")
    return "; ".join(lines) or None
