"""The dialects kinspect reads, as a registry of specs: one `Isa` per dialect (TTIR/TTGIR MLIR, LLVM IR,
PTX, SASS, AMDGCN, RISC-V, x86, AArch64), each declared beside its opcode table in this package.

A spec says how the text is parsed (the module of kinspect.ir that parses it) and coloured (its pygments
lexer), and for machine code how it is recognised (LLVM triples, target arches, a line only it has, its
ELF machine) and what the verdicts call its parts (its vector unit, its fused multiply-adds, its
reductions). Callers ask the registry (`get(name)`, `machine()`, `of_arch(arch)`), never compare names.

A new ISA is one module holding its table, parser, lexer and spec, plus one registration: a line in
BUILTIN here, or, outside kinspect, an entry point in the `kinspect.isas` group naming the spec
(`toy = my_package.toy_isa:SPEC`). A name registered twice is an error when the registry loads; an
unknown name is an error that lists the known ones.

Parsers and lexers are named by import path ("kinspect.ir.riscv", "pygments.lexers:GasLexer"), not
imported: the registry sits below kinspect.ir and kinspect.render, which import what a spec names when
asked, so `import kinspect.isa` stays cheap and the layers stay one-way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kinspect.core.plugins import Registry

ENTRY_POINTS = "kinspect.isas"
# The modules that declare kinspect's own specs (each registers its specs when imported).
BUILTIN = ("kinspect.isa.mlir", "kinspect.isa.llvm", "kinspect.isa.nvidia", "kinspect.isa.amd",
           "kinspect.isa.x86", "kinspect.isa.riscv", "kinspect.isa.aarch64")


@dataclass(frozen=True)
class Isa:
    """One dialect: an IR (MLIR, LLVM IR, PTX) or machine code (`machine`)."""

    name: str                          # the dialect a stage carries (StageFile.dialect): "riscv"
    title: str                         # for people: "RISC-V"
    parser: str                        # module with parse(lines) -> kinspect.ir records, and FORMATS
    lexer: str = ""                    # "module:Class" of its pygments lexer; "" shows plain text
    extensions: tuple[str, ...] = ()   # suffixes of a lone stage file in it: (".ptx",)
    machine: bool = False              # machine code: what "the ISA" of a variant is
    rank: int = 100                    # machine code: the order a variant's ISA stage is chosen in, and
                                       # the order telltales vote in (lower first)
    diff_rank: int = 100               # the order `diff` picks the stage it shows by default (lower first)
    virtual: bool = False              # a virtual ISA (PTX): the machine code below it says more
    control_codes: bool = False        # its listings carry scheduling control codes (`show` prints them)
    # CPU machine code: how a target, a file or an object names it
    arches: tuple[str, ...] = ()       # Target.arch values of its CPU targets, the one kinspect writes first
    triples: tuple[str, ...] = ()      # LLVM target-triple prefixes
    telltale: re.Pattern | None = None  # a line of assembly only this ISA has
    elf_machine: int | None = None     # ELF e_machine of its objects
    objdump: str = ""                  # the cross objdump that decodes it, besides llvm-objdump and objdump
    objdump_mattr: str = ""            # what llvm-objdump must be told to decode all of it (--mattr)
    comment: str = "#"                 # how its assembly starts a comment (diffs strip them)
    # what the verdicts call its parts
    vector_name: str = ""              # its vector unit: "RVV"; "" for GPUs and IRs
    fma_names: str = ""                # its vector fused multiply-adds: "vfmacc/vfmadd"
    unordered_reduction: str = ""      # its tree (unordered) FP reduction: "vfredusum"
    ordered_reduction: re.Pattern | None = None   # mnemonics of its strictly ordered FP reductions
    vector_config: re.Pattern | None = None       # mnemonics that set the vector length and type (vsetvli)
    vector_config_words: str = ""                 # how a verdict names them: "vsetvli/vsetivli; SEW,LMUL mix"
    register_spill: re.Pattern | None = None      # whole-register vector loads/stores (LLVM's spills)
    matrix_unit: str = ""              # a matrix engine its cores may have, as its OpInfo unit: "ime"
    matrix_name: str = ""              # its name: "IME"
    matrix_ops: str = ""               # its mnemonics begin so: "smt.vmadot"
    matrix_absent: tuple[tuple[tuple[str, ...], str], ...] = ()   # (arches, why a dot cannot use it there)

    @property
    def cpu(self) -> bool:
        """Machine code of CPU targets (it names their arches)."""
        return bool(self.arches)


REGISTRY: Registry[Isa] = Registry("dialect", Isa, ENTRY_POINTS, BUILTIN)


def register(spec: Isa) -> Isa:
    return REGISTRY.register(spec)


def get(name: str) -> Isa:
    return REGISTRY.get(name)


def find(name: str) -> Isa | None:
    """The spec of a dialect, or None for one kinspect has no parser for (json, elf, a stage it keeps)."""
    return REGISTRY.find(name)


def all_isas() -> list[Isa]:
    return REGISTRY.values()


def machine() -> list[Isa]:
    """Machine-code dialects, in rank order: which stage of a variant is its ISA."""
    return sorted((s for s in all_isas() if s.machine), key=lambda s: s.rank)


def of_arch(arch: str) -> Isa | None:
    """The CPU ISA a target's arch names (x86_64, arm64, riscv64, ...), or None."""
    arch = arch.lower()
    return next((s for s in all_isas() if arch in s.arches), None)


def of_triple(triple: str) -> Isa | None:
    return next((s for s in all_isas() if triple.startswith(s.triples)), None) if triple else None


def of_elf(machine_id: int) -> Isa | None:
    return next((s for s in all_isas() if s.elf_machine == machine_id), None)


def of_extension(suffix: str) -> Isa | None:
    return next((s for s in all_isas() if suffix in s.extensions), None)


def telltales() -> list[tuple[Isa, re.Pattern]]:
    return [(s, s.telltale) for s in machine() if s.telltale is not None]

