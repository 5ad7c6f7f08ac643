"""Frozen records shared across kinspect: targets, stages, compile times and variants.

A Variant is what kinspect stores per compiled kernel: its target, specialization, stage files
and JIT times. It round-trips through `record.json` (see store.py) and never holds Triton objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field, asdict
from typing import Any

RECORD_VERSION = 1


@dataclass(frozen=True)
class Target:
    """A compile target: `cuda:90`, `hip:gfx942`, `cpu:x86_64`, `spine_triton:riscv64`."""

    backend: str
    arch: str
    warp_size: int = 0

    def __str__(self) -> str:
        return f"{self.backend}:{self.arch}"

    @property
    def slug(self) -> str:
        """A folder-safe form: `cuda-90`."""
        return f"{self.backend}-{self.arch}".replace(":", "-").replace("/", "-")


@dataclass(frozen=True)
class StageKind:
    """What a backend says about one of its stages.

    `ext` is the file extension Triton uses in its cache (`ptx`, `cubin`); `dialect` names the
    parser that reads it (`mlir`, `llvm`, `ptx`, `sass`, `amdgcn`, `riscv`, ...); `binary` stages
    are kept but not shown as text; `derived_from` names the stage a derived stage is made from.
    """

    name: str
    ext: str
    dialect: str
    binary: bool = False
    order: int = 100
    derived_from: str | None = None
    title: str = ""


@dataclass(frozen=True)
class StageFile:
    """One stage of one variant, as stored: its name, file (relative to the variant folder),
    size and line count (None for binary stages)."""

    name: str
    file: str
    bytes: int
    lines: int | None
    dialect: str
    binary: bool = False
    derived_by: str | None = None
    section: str | None = None  # part of a combined file (triton-cpu test dumps: "LLVM IR", "ASM")


@dataclass(frozen=True)
class CompileTimes:
    """Triton's CompileTimes in microseconds: IR initialisation, each lowering stage, storing."""

    ir_initialization_us: int
    stages: tuple[tuple[str, int], ...]
    store_results_us: int

    @property
    def total_us(self) -> int:
        return self.ir_initialization_us + sum(us for _, us in self.stages) + self.store_results_us


@dataclass(frozen=True)
class SourceRef:
    """Where the kernel's Python source is: file and first line of the `def`."""

    file: str
    line: int
    text: str = ""


@dataclass(frozen=True)
class Variant:
    """One compiled variant of one kernel."""

    kernel: str
    hash: str
    target: Target
    offline: bool
    signature: dict[str, str]
    constexprs: dict[str, Any]
    attributes: dict[str, Any]
    options: dict[str, Any]
    stages: tuple[StageFile, ...]
    times: CompileTimes | None
    cache_hit: bool
    triton_version: str
    source: SourceRef | None = None
    origin: str = "kinspect"  # kinspect | capture | triton-cache | triton-dump | spine-dump | ...
    created: str = ""
    notes: tuple[str, ...] = ()
    name: str = ""  # the folder name in a store
    path: str = ""  # the folder on disk, set when read back; not saved
    extra: dict[str, Any] = field(default_factory=dict)

    def stage(self, name: str) -> StageFile | None:
        for s in self.stages:
            if s.name == name:
                return s
        return None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("path")
        d["record_version"] = RECORD_VERSION
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any], path: str = "") -> "Variant":
        d = dict(d)
        version = d.pop("record_version", None)
        if version != RECORD_VERSION:
            raise ValueError(f"record_version {version!r} (this kinspect reads {RECORD_VERSION})")
        times = d.get("times")
        source = d.get("source")
        return cls(
            **{**d,
               "target": Target(**d["target"]),
               "stages": tuple(StageFile(**s) for s in d["stages"]),
               "times": CompileTimes(times["ir_initialization_us"],
                                     tuple((n, us) for n, us in times["stages"]),
                                     times["store_results_us"]) if times else None,
               "source": SourceRef(**source) if source else None,
               "notes": tuple(d.get("notes", ())),
               "path": path})
