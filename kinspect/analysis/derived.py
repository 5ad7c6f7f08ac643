"""Derived stages for variants kinspect did not write (a Triton cache, a dump folder copied off a
board): SASS from a cubin, assembly from a .so or from the llir. They are made into kinspect's
own cache (kinspect.core.cache), never into the folder they came from, and stay there for next time.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from kinspect import backends
from kinspect.core.cache import cache_dir, file_key, key_of, write_bytes, write_text
from kinspect.core.model import StageFile, Variant

# Origins not completed here: a lone stage file (.ll, .s) is analysed as it is (--retarget compiles a
# lone .ll for a CPU on request), and a retargeted variant is made whole.
NOT_DERIVED = ("retarget", "file")


def complete(variant: Variant) -> Variant:
    """The variant with its backend's derived stages added (as absolute paths into the cache). A
    variant kinspect stored is usually whole already; one captured inside a program
    (kinspect.capture) gets its derived stages here, at first read, since capture leaves them out."""
    if variant.origin in NOT_DERIVED or not variant.path:
        return variant
    if not backends.pending_derivers(variant):
        return variant
    backend = backends.of(variant)
    files = {s.file: Path(variant.path, s.file) for s in variant.stages if s.section is None}
    inputs = sorted({n for d in backend.derivers for n in d.inputs})
    sources = [files[s.file] for s in variant.stages if s.name in inputs and s.file in files]
    if not sources:
        return variant
    # the metadata beside a source counts too: a CPU variant's assembly is made for the core it names
    metadata = [p.with_suffix(".json") for p in sources if p.with_suffix(".json").is_file()]
    key = key_of(backend.name, *(file_key(p) for p in sources + metadata), *(d.tool for d in backend.derivers))
    folder = cache_dir() / "derived" / key
    record_path = folder / "derived.json"
    if record_path.is_file():
        record = json.loads(record_path.read_text())
    else:
        new, notes, texts = backends.derive(variant, files)
        for fname, text in texts.items():
            if isinstance(text, bytes):     # a binary stage (a cubin ptxas made from the PTX)
                write_bytes(folder / fname, text)
            else:
                write_text(folder / fname, text)
        record = {"stages": [dataclasses.asdict(s) for s in new], "notes": notes}
        if not notes:   # a derivation that failed (a tool missing here, say) is tried again next time
            write_text(record_path, json.dumps(record))
    stages = tuple(StageFile(**{**s, "file": str(folder / s["file"])}) for s in record["stages"])
    all_stages = sorted(variant.stages + stages, key=lambda s: (backend.stage_kind(s.name).order, s.name))
    return dataclasses.replace(variant, stages=tuple(all_stages), notes=variant.notes + tuple(record["notes"]))


# -- retargeted variants: a variant's LLVM IR compiled by llvmlite for another CPU ------------------

def add_retargets(variant: Variant, specs) -> Variant:
    """Store `asm@<cpu>` stages (the variant's LLVM IR compiled for each CPU) in its store folder."""
    import dataclasses

    from kinspect.files.store import Store, write_atomic

    stages = list(variant.stages)
    for spec in specs:
        asm = retargeted(variant, spec).stage("asm")
        name = f"asm@{spec}"
        fname = f"{variant.kernel[:100]}.{name.replace(':', '_').replace(',', '_')}.s"
        write_atomic(Path(variant.path, fname), Path(asm.file).read_bytes())
        stages = [s for s in stages if s.name != name] + [dataclasses.replace(asm, name=name, file=fname)]
    variant = dataclasses.replace(variant, stages=tuple(stages))
    Store(Path(variant.path).parent.parent).update_record(variant)
    return variant


def llir_stage(variant: Variant):
    """The variant's LLVM IR stage (llir, else any LLVM-dialect stage)."""
    from kinspect.core.errors import NotFound

    found = variant.stage("llir") or next((s for s in variant.stages if s.dialect == "llvm" and not s.binary), None)
    if found is None:
        raise NotFound(f"'{variant.name or variant.kernel}' has no LLVM IR stage to retarget; its stages: "
                       f"{', '.join(s.name for s in variant.stages) or 'none'}")
    return found


def retargeted(variant: Variant, spec: str) -> Variant:
    """The variant's LLVM IR compiled with llvmlite for another CPU (kinspect.backends.retarget), as a
    variant of its own: its llir and the new assembly, kept in kinspect's cache."""
    import dataclasses
    import json

    from kinspect.backends import retarget
    from kinspect.analysis.stages import open_lines
    from kinspect.core.cache import cache_dir, file_key, key_of, write_text
    from kinspect.core.model import StageFile, Target

    cpu = retarget.parse(spec)
    llir = llir_stage(variant)
    src = Path(variant.path, llir.file).resolve()
    key = key_of("retarget", file_key(src), llir.section or "", cpu.triple, cpu.describe(), retarget.llvm_version())
    folder = cache_dir() / "retarget" / key
    asm_path, record_path = folder / "retargeted.s", folder / "retarget.json"
    if not (record_path.is_file() and asm_path.is_file()):
        with open_lines(variant, llir) as lines:
            out = retarget.compile_ir("".join(lines), cpu)
        write_text(asm_path, out.asm)
        write_text(record_path, json.dumps({"how": f"retargeted with {out.llvm}: {cpu.describe()}",
                                            "remarks": list(out.remarks), "lines": out.asm.count("\n")}))
    record = json.loads(record_path.read_text())
    asm = StageFile(name="asm", file=str(asm_path), bytes=asm_path.stat().st_size, lines=record["lines"],
                    dialect=cpu.isa, derived_by=record["how"])
    return dataclasses.replace(
        variant, target=Target("cpu", cpu.arch), offline=True, origin="retarget",
        stages=(dataclasses.replace(llir, file=str(src)), asm), times=None,
        name=f"{variant.name or variant.kernel}@{spec}", path=str(folder),
        notes=tuple(f"LLVM: {r}" for r in record["remarks"][:5]),
        extra={**variant.extra, "retarget": spec, "retargeted_from": variant.name or variant.kernel,
               "cpu": cpu.cpu, "features": cpu.features})
