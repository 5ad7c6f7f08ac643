"""isa.elf against readelf and cuobjdump: real cubins and hsaco compiled here by Triton (offline), and
objects LLVM makes for ELF32 and ELF64 in both byte orders (the reader it replaced knew ELF64 only)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kinspect.backends.tools import elf_isa
from kinspect.isa.elf import machine, text_bytes

READELF = shutil.which("readelf")
# "  [19] .text.k PROGBITS  0000000000000000 00c600 004a80 00  AX  3  10 128" (ELF32: 8-digit addresses)
SECTION = re.compile(r"^\s*\[\s*\d+\]\s+\S+\s+(?P<type>\S+)\s+[0-9a-f]{8,16}\s+[0-9a-f]+\s+(?P<size>[0-9a-f]+)\s+"
                     r"[0-9a-f]+\s+(?P<flags>[A-Za-z]*)\s+\d", re.M)
MACHINES = {"NVIDIA CUDA architecture": 190, "AMD GPU": 224, "Intel 80386": 3, "ARM": 40, "PowerPC64": 21,
            "RISC-V": 243, "MIPS R3000": 8, "Advanced Micro Devices X86-64": 62, "AArch64": 183}
# an object per ELF class and byte order, made by LLVM (llvmlite) from one function
TRIPLES = {"i386-unknown-linux-gnu": ("ELF32", "little"), "armebv7-unknown-linux-gnueabi": ("ELF32", "big"),
           "powerpc64-unknown-linux-gnu": ("ELF64", "big"), "riscv64-unknown-linux-gnu": ("ELF64", "little"),
           "aarch64_be-unknown-linux-gnu": ("ELF64", "big")}
ISAS = {"riscv64-unknown-linux-gnu": "riscv", "aarch64_be-unknown-linux-gnu": "aarch64"}
IR = """define i32 @f(i32 %a, i32 %b) {
  %c = mul i32 %a, %b
  %d = add i32 %c, %a
  ret i32 %d
}"""


def readelf(path: Path) -> tuple[int, int, str, str]:
    """(bytes of executable sections that hold data, e_machine, class, byte order) as readelf reads them."""
    if READELF is None:
        pytest.skip("readelf not installed")
    sections = subprocess.run([READELF, "-SW", str(path)], capture_output=True, text=True, check=True).stdout
    total = sum(int(m["size"], 16) for m in SECTION.finditer(sections) if "X" in m["flags"] and m["type"] != "NOBITS")
    header = subprocess.run([READELF, "-h", str(path)], capture_output=True, text=True, check=True).stdout
    fields = dict(line.strip().split(":", 1) for line in header.splitlines() if ":" in line)
    order = "big" if "big endian" in fields["Data"] else "little"
    return total, MACHINES[fields["Machine"].strip()], fields["Class"].strip(), order


def binary(v, name: str) -> Path:
    return Path(v.path, v.stage(name).file)


@pytest.mark.parametrize("kernel, target, stage, constexprs", [
    ("fused_mm_softmax", "cuda:90", "cubin", {"BLOCK_SIZE": 64}),
    ("softmax", "cuda:80", "cubin", {}),
    ("fused_mm_softmax", "hip:gfx942", "hsaco", {"BLOCK_SIZE": 32}),
])
def test_real_gpu_binaries_agree_with_readelf(real_variant, kernel, target, stage, constexprs):
    path = binary(real_variant(kernel, target, **constexprs), stage)
    size, number, cls, order = readelf(path)
    assert (cls, order) == ("ELF64", "little")
    assert text_bytes(path) == size > 0
    assert machine(path) == number


def test_cubin_code_bytes_are_cuobjdumps_instructions(real_variant, nvidia_tool):
    """Every SASS instruction is 16 bytes on sm_70 and later: the executable bytes are cuobjdump's count."""
    path = binary(real_variant("fused_mm_softmax", "cuda:90", BLOCK_SIZE=64), "cubin")
    sass = subprocess.run([nvidia_tool("cuobjdump"), "-sass", str(path)], capture_output=True, text=True,
                          check=True).stdout
    assert text_bytes(path) == 16 * len(re.findall(r"^\s*/\*[0-9a-f]{4}\*/", sass, re.M))


@pytest.mark.parametrize("triple", sorted(TRIPLES))
def test_both_classes_and_byte_orders_agree_with_readelf(tmp_path, triple):
    llvm = pytest.importorskip("llvmlite.binding")
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    module = llvm.parse_assembly(IR)
    module.triple = triple
    path = tmp_path / "f.o"
    path.write_bytes(llvm.Target.from_triple(triple).create_target_machine().emit_object(module))
    size, number, cls, order = readelf(path)
    assert (cls, order) == TRIPLES[triple]
    assert text_bytes(path) == size > 0
    assert machine(path) == number
    # the object disassembles as the ISA whose spec names its machine (none for those kinspect has no ISA of)
    assert elf_isa(path) == ISAS.get(triple)


def test_what_is_not_an_elf_object_or_is_cut_short_gives_none(real_variant, tmp_path):
    cubin = binary(real_variant("fused_mm_softmax", "cuda:90", BLOCK_SIZE=64), "cubin").read_bytes()
    shoff = int.from_bytes(cubin[0x28:0x30], "little")      # e_shoff of an ELF64 little-endian header
    cases = {"empty": b"", "text": b"not an object\n", "magic only": b"\x7fELF", "header cut": cubin[:40],
             "sections cut": cubin[:shoff + 100], "bad class": cubin[:4] + b"\x07" + cubin[5:]}
    for name, data in cases.items():
        path = tmp_path / f"{name}.cubin"
        path.write_bytes(data)
        assert text_bytes(path) is None, name
    assert machine(tmp_path / "text.cubin") is None and machine(tmp_path / "missing.cubin") is None
