"""What `kinspect diff` and `kinspect report` found: the rows of a sweep or of saved variants, the
stage diff of two of them, and what moved with the runtime. A record the views (render/) read; the
command that makes it is kinspect.diff.compare."""

from __future__ import annotations

from dataclasses import dataclass, field

from kinspect.diff.correlation import Link
from kinspect.diff.sweep import JobResult, Sweep
from kinspect.diff.table import Row
from kinspect.diff.textdiff import StageDiff



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

