"""Triton backends as a registry: one module per backend declares everything kinspect knows of it.

A backend module (cuda.py, hip.py, cpu.py) declares a Backend: its Triton target names, whether it
runs on a GPU, the targets `-t` takes for it (its presets), its stages in display order and the
stages kinspect derives from them, where its registers and occupancy come from (its resources
function and occupancy limits per arch), how a TRITON_KERNEL_DUMP folder shows it, and what a launch
of its kernels passes back. It registers it with one line. Callers ask the registry
(`of(variant)`, `get(name)`, `for_target(triton_name)`), never compare names.

Other distributions add a backend through an entry point in the `kinspect.backends` group naming
the Backend (`xpu = kinspect_xpu:BACKEND`; kinspect.core.plugins). A name registered twice is an error
when the registry loads; an unknown name is an error that lists the known ones. Stage names a
backend does not declare still work: they come from Triton's metadata group and get a generic
StageKind (see `stage_kind`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from kinspect.core.plugins import Registry
from kinspect.core.model import StageFile, StageKind, Variant

ENTRY_POINTS = "kinspect.backends"
# kinspect's own backend modules (each registers its backends when imported)
BUILTIN = ("kinspect.backends.cuda", "kinspect.backends.hip", "kinspect.backends.cpu")


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
class Preset:
    """A target `-t` takes for a backend: `cuda:90` compiles for arch "90" with 32-thread warps."""

    name: str
    arch: str
    warp_size: int


@dataclass(frozen=True, eq=False)     # a registry entry: one object per backend, compared by identity
class Backend:
    name: str
    triton_names: tuple[str, ...]      # GPUTarget.backend values this backend compiles for (the first: what it
                                       # compiles offline for)
    stages: tuple[StageKind, ...]
    derivers: tuple[Deriver, ...] = ()
    isa: str = ""                      # dialect of the final assembly (sass, amdgcn, x86, riscv, ...)
    # Stage names only this backend makes: they tell apart backends that share a Triton name
    # (triton-cpu, spine-triton and triton-shared are all "cpu").
    markers: tuple[str, ...] = ()
    gpu: bool = False                  # its kernels run on a GPU: registers, occupancy, device timing
    torch_device: str = "cpu"          # torch's device type for its tensors ("cuda" for CUDA and ROCm alike)
    # compiling offline for it (-t)
    plugin: str = ""                   # the Triton backend that compiles for it (triton/backends/<plugin>)
    by_hand: bool = False              # its driver is never active on its own: a program activates it by hand
    presets: tuple[Preset, ...] = ()   # the targets kinspect compiles offline for it (none: on its device only)
    warp_size: int = 0                 # of a target whose arch no preset names
    arch_re: re.Pattern | None = None  # what its arch looks like (`-t cuda:ARCH`), and in words:
    arch_words: str = ""
    int_arch: bool = False             # Triton's GPUTarget takes its arch as an int
    launch_options: tuple[str, ...] = ("num_warps", "num_stages")   # what a launch passes back (replay)
    # reading what it made
    resources: Callable | None = None  # (variant, figures its ISA stage states, occupancy limits) -> Resources
    limits: Mapping[str, object] = field(default_factory=dict)      # arch -> occupancy model (kinspect.backends.resources)
    matrix_words: str = "matrix units used"
    dump_stages: tuple[str, ...] = ()  # the stage files a dump folder holds for it (TRITON_KERNEL_DUMP)
    dump_marks: tuple[str, ...] = ()   # those of them that say a dump entry is its
    arch_in: tuple[tuple[str, re.Pattern], ...] = ()  # (dialect, pattern whose group 1 is the arch in its text)
    ir_triples: tuple[str, ...] = ()   # LLVM triple prefixes of its LLVM IR ("nvptx")
    no_lines_note: str = ""            # why its machine code may carry no Python lines

    @property
    def target_name(self) -> str:
        """What its Target.backend is: the Triton name it compiles offline for."""
        return self.triton_names[0] if self.triton_names else self.name

    def stage_kind(self, name: str) -> StageKind:
        for s in self.stages:
            if s.name == name:
                return s
        for d in self.derivers:
            if d.stage.name == name:
                return d.stage
        return generic_stage(name)

    def own_dialects(self) -> set[str]:
        """The dialects only its stages are in (its machine code, the text that states its arch): a lone
        .ptx or .sass file is NVIDIA's."""
        return {d for d in (self.isa, *(dialect for dialect, _ in self.arch_in)) if d}

    def preset(self, arch: str) -> Preset | None:
        return next((p for p in self.presets if p.arch == arch), None)


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


REGISTRY: Registry[Backend] = Registry("backend", Backend, ENTRY_POINTS, BUILTIN)


def register(backend: Backend) -> Backend:
    return REGISTRY.register(backend)


def reload() -> None:
    """Look for other distributions' backends again (kinspect.core.plugins.Registry.reload)."""
    REGISTRY.reload()


def _by_triton(name: str) -> list[Backend]:
    """The backends whose Triton name this is, kinspect's own first (the default)."""
    return [b for b in REGISTRY.values() if name in b.triton_names]


def for_target(backend_name: str, stage_names=()) -> Backend:
    """The backend for a Target.backend value (and, where several share it, the one whose marker
    stages are among `stage_names`); an unknown one gets a generic backend so that live capture
    works unchanged with backends kinspect has never heard of."""
    candidates = _by_triton(backend_name)
    names = set(stage_names)
    for b in candidates:
        if names.intersection(b.markers):
            return b
    if candidates:
        return candidates[0]
    return REGISTRY.find(backend_name) or Backend(name=backend_name, triton_names=(backend_name,), stages=())


def of(variant) -> Backend:
    """The backend that made a Variant: named in its record, else told by its target and stages."""
    named = variant.extra.get("backend") if variant.extra else None
    found = REGISTRY.find(named) if isinstance(named, str) else None
    return found or for_target(variant.target.backend, [s.name for s in variant.stages])


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
    """A backend by its name, or by a Triton name it compiles for (nvidia: cuda)."""
    found = REGISTRY.find(name)
    if found is None and _by_triton(name):
        return _by_triton(name)[0]
    return found or REGISTRY.get(name)


def all_backends() -> list[Backend]:
    return sorted(REGISTRY.values(), key=lambda b: b.name)


def is_gpu(variant: Variant) -> bool:
    """The variant's kernels run on a GPU (its backend says so)."""
    return of(variant).gpu


def resources_of(variant: Variant, stated: dict[str, int]):
    """Registers, spills and shared memory of a variant, and where each figure came from: what its
    backend's resources function reads (the cubin or the loaded kernel on NVIDIA, the AMDGCN text's
    figures on AMD), with the occupancy those allow under the backend's limits for its arch.
    `stated`: the figures the variant's machine code states about itself (kinspect.ir Resource records)."""
    from kinspect.backends.resources import Resources

    backend = of(variant)
    if backend.resources is None:
        return Resources(shared_bytes=variant.options.get("shared"), extra=tuple(sorted(stated.items())))
    return backend.resources(variant, stated, backend.limits.get(variant.target.arch))


# -- derived stages: what a backend's Derivers make from a variant's stored stages --------------------

def derive(variant: Variant, files: dict[str, Path]) -> tuple[list[StageFile], list[str], dict[str, str | bytes]]:
    """Run the backend's derivers on the variant's stage files (read only): (new stage files,
    notes, contents by file name: text, or bytes for a binary stage). Derivers of one stage are
    alternatives, tried in order; a stage the variant already has in that dialect (a backend's own
    assembly) is not derived again. A derived stage feeds the derivers after it (a cubin made from
    the PTX, then the SASS from that cubin): a binary one through a temporary file, removed here."""
    import shutil
    import tempfile

    backend = of(variant)
    new, failed, texts = [], {}, {}
    have = {backend.stage_kind(s.name).dialect for s in variant.stages if not s.binary}
    stages = {s.name: s for s in variant.stages}
    paths = dict(files)
    scratch = None
    try:
        for d in backend.derivers:
            if d.stage.name in {s.name for s in new} or variant.stage(d.stage.name) is not None \
                    or d.stage.dialect in have:
                continue
            src = next((stages[n] for n in d.inputs if n in stages), None)
            if src is None or src.file not in paths:
                continue
            try:
                out = d.run(paths[src.file])
            except Exception as e:  # a broken binary must not lose the other stages
                failed.setdefault(d.stage.name, []).append(f"{d.tool}: {e}")
                continue
            data, how = (out, d.tool) if isinstance(out, (str, bytes)) else out
            if src.derived_by:      # made from a stage kinspect made: say so wherever this one is shown
                how = f"{how}, from a {src.name} {src.derived_by}"
            fname = src.file.rsplit(".", 1)[0] + "." + d.stage.ext
            if fname in paths or fname == src.file:
                fname = f"{src.file}.{d.stage.ext}"
            texts[fname] = data
            if isinstance(data, bytes):
                scratch = scratch or Path(tempfile.mkdtemp(prefix="kinspect-derive-"))
                paths[fname] = scratch / f"{len(paths)}.{d.stage.ext}"
                paths[fname].write_bytes(data)
                made = StageFile(name=d.stage.name, file=fname, bytes=len(data), lines=None,
                                 dialect=d.stage.dialect, binary=True, derived_by=how)
            else:
                paths[fname] = paths[src.file]    # a text stage is written by the caller; none reads it here
                made = StageFile(name=d.stage.name, file=fname, bytes=len(data.encode()), lines=data.count("\n"),
                                 dialect=dialect_of(d.stage, backend, variant.target.arch, text=data), derived_by=how)
            new.append(made)
            stages[made.name] = made
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    made_names = {s.name for s in new}
    notes = [f"{stage} not derived: {'; '.join(why)}" for stage, why in failed.items() if stage not in made_names]
    return new, notes, texts


def pending_derivers(variant: Variant) -> bool:
    """Whether the variant lacks a stage its backend derives and has the stage to derive it from."""
    backend = of(variant)
    have = {s.name for s in variant.stages}
    dialects = {backend.stage_kind(s.name).dialect for s in variant.stages if not s.binary}
    return any(d.stage.name not in have and d.stage.dialect not in dialects and any(n in have for n in d.inputs)
               for d in backend.derivers)
