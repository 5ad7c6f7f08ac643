"""CPU backends. Triton calls all three `cpu` (GPUTarget("cpu", ...)); their stage names tell them apart.

- triton-cpu: ttir -> ttcir -> tttcir -> llir -> asm -> so. Its asm is the host's, made from the llir.
- spine-triton (SpacemiT, RISC-V): ttir -> linalgdir -> llir -> so; no asm stage. Its last step
  (3.6.0+spacemit.a5, for a K1) runs `opt -mcpu=spacemit-x60 -passes=loop-vectorize
  -force-vector-width=32 -force-vector-interleave=2` and `llc -O3 -mcpu=spacemit-x60
  --mattr=64bit,a,b,c,d,f,i,m,v,zfh,zvfh,zicbop,zicbom,zicboz`, so assembly regenerated from its llir
  uses those flags (kinspect.backends.retarget's `spine-triton` preset).
- triton-shared: ttir -> ttsharedir -> llir -> obj (older versions: cpuasm, text assembly); plain
  `llc` with no target flags, i.e. the host.

Their assembly stage is derived when it is missing: disassembled from the .so/.o when llvm-objdump
or objdump is on PATH, else compiled again from the llir with llvmlite using the backend's flags.
"""

from __future__ import annotations

from pathlib import Path

from kinspect.backends import Backend, Deriver, register
from kinspect.backends.tools import disassemble
from kinspect.core.model import StageKind

# "asm": CPU assembly whose ISA (x86, aarch64, riscv) is decided per variant (see backends.dialect_of).
ASM = StageKind("asm", "asm", "asm", order=60, title="assembly")


def _disassemble(path: Path) -> tuple[str, str]:
    asm, how = disassemble(path)
    return asm, f"disassembled from {path.suffix.lstrip('.') or path.name} with {how}"


def _regenerate(fallback: str, by_core: dict[str, str] | None = None):
    """A deriver run: the llir compiled again with llvmlite, for the triple and CPU the IR names,
    else for `fallback` (a kinspect.backends.retarget spec: the backend's own llc flags), or for the spec
    `by_core` gives the core its Triton metadata names (spine-triton's target is the core)."""

    def run(path: Path) -> tuple[str, str]:
        from kinspect.backends import retarget

        retarget.binding("the assembly from the LLVM IR")   # without llvmlite, one line that says so
        text = path.read_text(errors="replace")
        core = _core_of(path) if by_core is not None else None
        spec = by_core.get(core, by_core.get("*", fallback)) if core and by_core is not None else fallback
        target = retarget.own_target(text, spec)
        out = retarget.compile_ir(text, target, purpose="the assembly from the LLVM IR")
        exact = core in ("spacemit-x60", "spacemit-a60")
        nearest = f" (the nearest LLVM {out.llvm.split()[1]} has to {core})" if core and not exact else ""
        return out.asm, f"regenerated from llir with {out.llvm}: {target.describe()}{nearest}"

    return run


def _core_of(llir: Path) -> str | None:
    """The core a spine-triton variant was compiled for: the arch of the target in the Triton
    metadata beside its llir (`<k>.json` in a cache or store), e.g. spacemit-x60, spacemit-a100."""
    import json

    meta = llir.with_suffix(".json")
    try:
        arch = json.loads(meta.read_text())["target"]["arch"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return arch if isinstance(arch, str) and arch.startswith("spacemit-") else None


def _asm_from(fallback: str, by_core: dict[str, str] | None = None) -> tuple[Deriver, ...]:
    return (Deriver(ASM, _disassemble, "objdump", sources=("so", "o", "obj")),
            Deriver(ASM, _regenerate(fallback, by_core), "llvmlite", sources=("llir", "ll")))


# spine-triton compiles for the core its target names. LLVM 22 models the X60 only. The A60 has the
# X60's ISA (spine-triton compiled it as spacemit-x60 until May 2026); the K3's A100 is an in-order
# X60-like core with 1024-bit vectors, so the X60 model with VLEN 1024 is the nearest; the K3's X100
# (out of order, RVA23, VLEN 256) and any other core get RVA23's features on a generic core.
SPINE_CORES = {"spacemit-x60": "spine-triton", "spacemit-a60": "spine-triton",
               "spacemit-a100": "spine-triton:+zvl1024b", "*": "rva23-vlen256-spine"}


def _stages(*names: tuple[str, str, int, str], binary=("so", "o", "obj")) -> tuple[StageKind, ...]:
    return tuple(StageKind(name, name, dialect, binary=name in binary, order=order, title=title)
                 for name, dialect, order, title in names)


COMMON_HEAD = (("source", "mlir", 0, "Triton IR as generated from the AST"), ("ttir", "mlir", 10, "TTIR"))
COMMON_TAIL = (("llir", "llvm", 40, "LLVM IR"), ("so", "elf", 70, "shared object"), ("json", "json", 90, "metadata"))

register(Backend(
    name="triton-cpu",
    triton_names=("cpu",),
    markers=("ttcir", "tttcir", "asm"),
    stages=_stages(*COMMON_HEAD, ("ttcir", "mlir", 20, "TTCIR"), ("tttcir", "mlir", 30, "TTTCIR"),
                   ("asm", "asm", 60, "assembly"), *COMMON_TAIL),
    derivers=_asm_from("host"),
    dump_stages=("source", "ttir", "ttcir", "tttcir", "asm", "llir"),
    dump_marks=("ttcir", "tttcir", "asm", "so"),
))

register(Backend(
    name="spine-triton",
    triton_names=("cpu",),
    markers=("linalgdir",),
    isa="riscv",
    stages=_stages(*COMMON_HEAD, ("linalgdir", "mlir", 20, "Linalg IR"), ("llmlir", "mlir", 30, "LLVM dialect"),
                   ("s", "asm", 60, "assembly"), ("o", "elf", 65, "object"), *COMMON_TAIL),
    derivers=_asm_from("spine-triton", SPINE_CORES),
    # spine-triton 3.6's examples activate its driver themselves (`triton.runtime.driver.set_active(CPUDriver())`)
    plugin="spine_triton",
    by_hand=True,
    # its per-kernel dump folders (recent versions): <k>/<k>.ttir, .linalgdir, .ll, .s
    dump_stages=("ttir", "linalgdir", "ll", "s", "llir"),
    dump_marks=("linalgdir", "ll", "s", "so"),
    # it adds debug info to its llir only when SPINE_TRITON_DUMP_PATH is set (it then runs spine-opt again
    # with -mlir-print-debuginfo)
    no_lines_note="this spine-triton code carries no debug info (spine-triton adds it to its LLVM IR only in runs "
                  "with SPINE_TRITON_DUMP_PATH set)",
))

register(Backend(
    name="triton-shared",
    triton_names=("cpu",),
    markers=("ttsharedir", "cpuasm"),
    stages=_stages(*COMMON_HEAD, ("ttsharedir", "mlir", 20, "TTSharedIR (Linalg)"),
                   ("llmlir", "mlir", 30, "LLVM dialect"), ("cpuasm", "asm", 60, "assembly"),
                   ("obj", "elf", 65, "object"), *COMMON_TAIL),
    derivers=_asm_from("host"),
    plugin="triton_shared",
    by_hand=True,           # activated by hand, as spine-triton's
))
