"""Reading a variant's stages as line streams, and choosing which stage is the machine code."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from kinspect import backends, isa
from kinspect.core.errors import KinspectError
from kinspect.files import foreign
from kinspect.files.sources import section_lines
from kinspect.core.model import StageFile, Variant


def is_machine_code(s: StageFile) -> bool:
    spec = isa.find(s.dialect)
    return spec is not None and spec.machine


def isa_stage(v: Variant) -> StageFile | None:
    """The variant's own machine code (the first in the registry's rank order, kinspect.isa.machine);
    `asm@<cpu>` stages (dump --retarget) are other CPUs'."""
    for spec in isa.machine():
        for s in v.stages:
            if s.dialect == spec.name and not s.binary and "@" not in s.name:
                return s
    return None


def virtual_stage(v: Variant) -> StageFile | None:
    """A GPU variant's virtual ISA (PTX), analysed in place of machine code it lacks: what a trace
    whose cubin ptxas could not make still holds."""
    if not backends.of(v).gpu:
        return None
    return next((s for s in v.stages if not s.binary and getattr(isa.find(s.dialect), "virtual", False)), None)


def text_stages(v: Variant) -> list[StageFile]:
    """Stages a parser reads, in display order (the AST-level `source` is left out: ttir follows it)."""
    return [s for s in v.stages if isa.find(s.dialect) is not None and not s.binary and s.name != "source"]


@contextlib.contextmanager
def open_lines(v: Variant, s: StageFile) -> Iterator[Iterator[str]]:
    """The stage's lines, streamed; a `section` of a combined file yields only that section."""
    path = Path(v.path, s.file)
    try:
        f = foreign.open_text(path, newline="")
    except foreign.Refused as e:
        raise KinspectError(f"cannot read stage {s.name}: {e}") from None
    with f:
        yield section_lines(f, s.section) if s.section else iter(f)


def backend_isa(v: Variant) -> str:
    return backends.for_target(v.target.backend).isa
