"""Triton backends as data: their stages, and the stages kinspect derives from them.

A backend module declares a Backend (its Triton target names, its stages in display order, its
derivers) and registers it with one line. Stage names a backend does not declare still work: they
come from Triton's metadata group and get a generic StageKind (see `stage_kind`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kinspect.errors import NotFound, did_you_mean
from kinspect.model import StageKind


@dataclass(frozen=True)
class Deriver:
    """Makes a derived stage (e.g. SASS) from a stored stage (e.g. cubin).

    `run(source_file)` returns the text, or (text, how it was made), and may raise; the failure
    is recorded as a note on the variant. `tool` names what did it (`nvdisasm -c -g -gi`).
    `sources` are the stages it can start from, tried in order (default: stage.derived_from);
    several Derivers of one stage are alternatives: the first that succeeds makes it.
    """

    stage: StageKind
    run: Callable[[Path], "str | tuple[str, str]"]
    tool: str
    sources: tuple[str, ...] = ()

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.sources or ((self.stage.derived_from,) if self.stage.derived_from else ())


@dataclass(frozen=True)
class Backend:
    name: str
    triton_names: tuple[str, ...]      # GPUTarget.backend values this backend compiles for
    stages: tuple[StageKind, ...]
    derivers: tuple[Deriver, ...] = ()
    isa: str = ""                      # dialect of the final assembly (sass, amdgcn, x86, riscv, ...)
    # Stage names only this backend makes: they tell apart backends that share a Triton name
    # (triton-cpu, spine-triton and triton-shared are all "cpu").
    markers: tuple[str, ...] = ()

    def stage_kind(self, name: str) -> StageKind:
        for s in self.stages:
            if s.name == name:
                return s
        for d in self.derivers:
            if d.stage.name == name:
                return d.stage
        return generic_stage(name)


_GENERIC = {
    # extension -> (dialect, binary): for stages a backend did not declare
    "ttir": ("mlir", False), "ttgir": ("mlir", False), "mlir": ("mlir", False), "source": ("mlir", False),
    "llir": ("llvm", False), "ll": ("llvm", False), "ptx": ("ptx", False), "sass": ("sass", False),
    "amdgcn": ("amdgcn", False), "json": ("json", False), "cubin": ("elf", True), "hsaco": ("elf", True),
    "so": ("elf", True), "o": ("elf", True), "obj": ("elf", True), "asm": ("asm", False), "s": ("asm", False),
    "ir": ("llvm", False),
}


def generic_stage(name: str) -> StageKind:
    ext = name.rsplit(".", 1)[-1]
    dialect, binary = _GENERIC.get(ext, ("text", False))
    return StageKind(name=name, ext=name, dialect=dialect, binary=binary, order=500)


_REGISTRY: dict[str, Backend] = {}
_BY_TRITON: dict[str, list[Backend]] = {}   # Triton's backend name -> kinspect backends, default first
_MODULES = ("cuda", "hip", "cpu")


def register(backend: Backend) -> Backend:
    if backend.name in _REGISTRY and _REGISTRY[backend.name] is not backend:
        raise RuntimeError(f"backend {backend.name!r} registered twice")
    _REGISTRY[backend.name] = backend
    for key in backend.triton_names:
        _BY_TRITON.setdefault(key, []).append(backend)
        _REGISTRY.setdefault(key, backend)
    return backend


def _load() -> None:
    if not _REGISTRY:
        for mod in _MODULES:
            importlib.import_module(f"{__name__}.{mod}")


def for_target(backend_name: str, stage_names=()) -> Backend:
    """The backend for a Target.backend value (and, where several share it, the one whose marker
    stages are among `stage_names`); an unknown one gets a generic backend so that live capture
    works unchanged with backends kinspect has never heard of."""
    _load()
    candidates = _BY_TRITON.get(backend_name, [])
    names = set(stage_names)
    for b in candidates:
        if names.intersection(b.markers):
            return b
    if candidates:
        return candidates[0]
    if backend_name in _REGISTRY:
        return _REGISTRY[backend_name]
    return Backend(name=backend_name, triton_names=(backend_name,), stages=())


def of(variant) -> Backend:
    """The backend that made a Variant: named in its record, else told by its target and stages."""
    _load()
    named = variant.extra.get("backend") if variant.extra else None
    if named in _REGISTRY:
        return _REGISTRY[named]
    return for_target(variant.target.backend, [s.name for s in variant.stages])


def dialect_of(kind: StageKind, backend: Backend, arch: str, path: Path | None = None,
               text: str | None = None) -> str:
    """The parser dialect of a stage file: a backend's generic "asm" becomes the ISA of its
    target (x86, aarch64, riscv: the ISA whose arches name it), else the ISA its text (at `path`,
    or `text`) shows."""
    from kinspect import isa
    from kinspect.isa.detect import isa_of_asm

    if kind.dialect != "asm":
        return kind.dialect
    if backend.isa:
        return backend.isa
    spec = isa.of_arch(arch)
    if spec is not None:
        return spec.name
    if path is not None and path.is_file():
        with open(path, errors="replace") as f:
            found = isa_of_asm(f)
        if found:
            return found
    return (isa_of_asm(text.splitlines()) if text is not None else None) or "text"


def get(name: str) -> Backend:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise NotFound(f"unknown backend '{name}'{did_you_mean(name, _REGISTRY)}") from None


def all_backends() -> list[Backend]:
    _load()
    return sorted(set(_REGISTRY.values()), key=lambda b: b.name)
