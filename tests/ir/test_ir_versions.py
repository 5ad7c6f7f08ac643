"""One kernel compiled by Triton 3.6 and by Triton 3.9 (tests/fixtures/versions), read in every
dialect they print: the same cubin as Triton's dump, nvdisasm and cuobjdump give the same
instructions with the same control codes; AMDGCN of both versions is read."""

import collections
import gzip

import pytest

from kinspect.ir import amdgcn, sass
from kinspect.ir.records import Control, Function, Kind, Resource
from tests.helpers import instructions, TESTS

VERSIONS = TESTS / "fixtures" / "versions"
TRITONS = ("triton-3.6", "triton-3.9")


def listing(version: str, name: str) -> str:
    path = VERSIONS / version / "cuda-90" / name
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


@pytest.mark.parametrize("version", TRITONS)
def test_the_three_sass_dialects_of_one_cubin_agree(version):
    dialects = {name: list(sass.parse(listing(version, name)))
                for name in ("tile_mm.sass", "tile_mm.nvdisasm.sass.gz", "tile_mm.cuobjdump.sass.gz")}
    found = {name: instructions(records) for name, records in dialects.items()}
    counts = {name: collections.Counter(i.op for i in ins) for name, ins in found.items()}
    triton, nvdisasm, cuobjdump = counts.values()
    assert sum(triton.values()) > 100 and triton == nvdisasm == cuobjdump
    assert triton["HGMMA"] > 0
    controls = [[i.control for i in ins] for ins in found.values()]
    assert all(c is not None for c in controls[0]) and controls[0] == controls[1] == controls[2]
    assert {r.name for records in dialects.values() for r in records if isinstance(r, Function)} == {"tile_mm"}
    located = [i for i in found["tile_mm.nvdisasm.sass.gz"] if i.loc is not None]
    assert len(located) > 0.9 * len(found["tile_mm.nvdisasm.sass.gz"])
    assert all(i.loc is None for i in found["tile_mm.sass"]), "Triton's dump has no line markers"


def test_control_codes_as_triton_prints_them():
    """Triton's notation read back is the notation printed; a yield, barriers and a wait mask are seen."""
    text = listing("triton-3.9", "tile_mm.sass")
    lines = [line for line in text.splitlines() if sass.TRITON_INSTRUCTION.match(line)]
    parsed = instructions(sass.parse(text))
    assert [line.split("\t")[0] for line in lines] == [i.control.notation() for i in parsed]
    codes = [i.control for i in parsed]
    assert any(c.yield_ for c in codes) and any(c.write_barrier is not None for c in codes)
    assert any(c.read_barrier is not None for c in codes) and any(c.wait_mask for c in codes)


def test_control_code_examples():
    m = sass.TRITON_INSTRUCTION.match("02:-:-:Y:2\t@!P0 LEA R244, R3, R2, 0x7;")
    assert m["mnemonic"] == "LEA"
    assert sass.triton_control(m) == Control(wait_mask=2, read_barrier=None, write_barrier=None, yield_=True, stall=2)
    assert Control(2, None, None, True, 2).waits_on == (1,)
    # LDC R1, c[0x0][0x28] as nvdisasm -hex prints it: high word 0x000fe20000000800 = stall 1, no yield
    assert sass.decode_control(0x000FE20000000800) == Control(0, None, None, False, 1)
    assert sass.ENCODING_HIGH.match(" " * 100 + "/* 0x000fe20000000800 */")["word"] == "000fe20000000800"
    [i] = instructions(sass.parse("        /*0000*/   LDC R1, c[0x0][0x28] ;   /* 0x00000a00ff017b82 */\n"
                                  "                                           /* 0x000fe20000000800 */\n"))
    assert i.op == "LDC" and i.control.notation() == "--:-:-:-:1"


def test_ptx_line_markers_are_not_python_lines():
    """tritonparse's SASS (nvdisasm -gp) names the PTX line after the Python line: the Python line stays."""
    text = ('Function:k\n\t//## File "/tmp/k.py", line 6\n\t//## File ".nv_debug_ptx_txt", line 45\n'
            "        /*0010*/                   S2R R0, SR_TID.X ;\n")
    [i] = instructions(sass.parse(text))
    assert (i.function, i.loc.file, i.loc.line) == ("k", "/tmp/k.py", 6)


@pytest.mark.parametrize("version", TRITONS)
def test_amdgcn_of_both_versions(version):
    records = list(amdgcn.parse((VERSIONS / version / "hip-gfx942" / "tile_mm.amdgcn").read_text()))
    found = instructions(records)
    assert len(found) > 50 and not [i.op for i in found if i.info.kind is Kind.OTHER]
    mfma = [i for i in found if i.info.kind is Kind.MATRIX]
    assert [i.op for i in mfma] == ["v_mfma_f32_16x16x16_f16"]   # 64x16x16 tile, 4 warps: one MFMA a step
    assert [r.name for r in records if isinstance(r, Function)] == ["tile_mm"]
    figures = {r.name for r in records if isinstance(r, Resource)}
    assert {"vgprs", "sgprs", "total_vgprs"} <= figures
