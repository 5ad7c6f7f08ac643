"""What `kinspect diff` and `kinspect report` found: the rows of a sweep or of saved variants, the
stage diff of two of them, and what moved with the runtime. A record the views (render/) read; the
command that makes it is kinspect.diff.compare."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kinspect.diff.correlation import Link
from kinspect.diff.sweep import JobResult, Sweep
from kinspect.diff.table import Row
from kinspect.diff.textdiff import StageDiff
from kinspect.core.model import Variant



def stage_rank(dialect: str) -> int | None:
    """Where a stage in this dialect comes among the stages a diff shows when none is named (its
    spec's diff_rank, kinspect.isa: PTX and AMDGCN show a block size's effect most readably; CPU
    assembly next; then SASS, LLVM IR and the MLIR stages); None for a dialect with no parser."""
    from kinspect.isa import find

    spec = find(dialect)
    return spec.diff_rank if spec is not None else None


@dataclass(frozen=True)
class DiffResult:
    rows: list[Row]
    failed: list[JobResult]
    stage: str | None = None
    pair: tuple[int, int] | None = None        # indices into rows
    text: StageDiff | None = None
    links: list[Link] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sweep: Sweep | None = None

    def to_json(self) -> dict:
        d = self.text
        return {
            "variants": [r.to_json() for r in self.rows],
            "failed": [{"job": o.job.describe(), "error": o.error} for o in self.failed],
            "diff": None if d is None else {
                "stage": self.stage, "a": self.rows[self.pair[0]].label, "b": self.rows[self.pair[1]].label,
                "a_file": _stage_path(self.rows[self.pair[0]].variant, self.stage),
                "b_file": _stage_path(self.rows[self.pair[1]].variant, self.stage),
                **stage_diff_json(d)},
            "runtime_moves_with": [{"spearman_rho": dict(x.metrics), "variants": x.variants, "text": x.describe()}
                                   for x in self.links],
            "sweep": None if self.sweep is None else {
                "jobs": len(self.sweep.outcomes), "workers": self.sweep.workers, "cores": self.sweep.cores,
                "seconds": round(self.sweep.seconds, 2)},
            "notes": self.notes,
        }


def stage_diff_json(d: StageDiff) -> dict:
    """A stage diff's figures and hunks, as every diff's JSON gives them."""
    return {"a_lines": d.a_lines, "b_lines": d.b_lines, "raw_changed_lines": d.raw_changed,
            "normalized_changed_lines": d.changed, "shown_changed_lines": d.shown,
            "hunks": [{"a_start": h.a_start, "a_count": h.a_count, "b_start": h.b_start, "b_count": h.b_count,
                       "runs": [{"tag": r.tag, "lines": list(r.lines), "repeat": r.repeat} for r in h.runs]}
                      for h in d.hunks]}


def _stage_path(v: Variant, stage: str) -> str:
    return str(Path(v.path, v.stage(stage).file))
