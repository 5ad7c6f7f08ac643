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

    `run(source_file) -> text` may raise; the failure is recorded as a note on the variant.
    `tool` names what did it, for the record (`nvdisasm -c -g -gi`).
    """

    stage: StageKind
    run: Callable[[Path], str]
    tool: str


@dataclass(frozen=True)
class Backend:
    name: str
    triton_names: tuple[str, ...]      # GPUTarget.backend values this backend compiles for
    stages: tuple[StageKind, ...]
    derivers: tuple[Deriver, ...] = ()
    isa: str = ""                      # dialect of the final assembly (sass, amdgcn, x86, riscv, ...)

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
    "so": ("elf", True), "o": ("elf", True), "obj": ("elf", True),
}


def generic_stage(name: str) -> StageKind:
    ext = name.rsplit(".", 1)[-1]
    dialect, binary = _GENERIC.get(ext, ("text", False))
    return StageKind(name=name, ext=name, dialect=dialect, binary=binary, order=500)


_REGISTRY: dict[str, Backend] = {}
_MODULES = ("cuda", "hip")


def register(backend: Backend) -> Backend:
    for key in (backend.name, *backend.triton_names):
        if key in _REGISTRY and _REGISTRY[key] is not backend:
            raise RuntimeError(f"backend key {key!r} registered twice")
        _REGISTRY[key] = backend
    return backend


def _load() -> None:
    if not _REGISTRY:
        for mod in _MODULES:
            importlib.import_module(f"{__name__}.{mod}")


def for_target(backend_name: str) -> Backend:
    """The backend for a Target.backend value; an unknown one gets a generic backend so that live
    capture works unchanged with backends kinspect has never heard of."""
    _load()
    if backend_name in _REGISTRY:
        return _REGISTRY[backend_name]
    return Backend(name=backend_name, triton_names=(backend_name,), stages=())


def get(name: str) -> Backend:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise NotFound(f"unknown backend '{name}'{did_you_mean(name, _REGISTRY)}") from None


def all_backends() -> list[Backend]:
    _load()
    return sorted(set(_REGISTRY.values()), key=lambda b: b.name)
