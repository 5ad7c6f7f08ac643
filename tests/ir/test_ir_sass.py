"""SASS parser and NVIDIA SASS table: real nvdisasm/cuobjdump output, checked against cuobjdump."""

import collections
import itertools
import re
import subprocess
import tracemalloc
from pathlib import Path

import pytest

from kinspect.ir import records

from kinspect.core.errors import ParseError
from kinspect.ir import sass
from kinspect.ir.records import Access, Function, Instruction, Kind, Resource, Space
from kinspect.isa import nvidia
from tests.helpers import BLOCK, KERNELS, dot_line, instructions



def cuobjdump(nvidia_tool, real_variant, target, *flags) -> str:
    v = real_variant("fused_mm_softmax", target, **BLOCK)
    cubin = Path(v.path, v.stage("cubin").file)
    return subprocess.run([nvidia_tool("cuobjdump"), *flags, str(cubin)], check=True,
                          capture_output=True, text=True).stdout


# --- regexes: every one has an example line above it, and the example matches -----------------

def test_instruction_example():
    m = sass._INSTRUCTION.match("        /*0160*/                   LDG.E.128 R16, desc[UR60][R4.64] ;")
    assert m["mnemonic"] == "LDG.E.128"
    m = sass._INSTRUCTION.match("        /*0150*/              @!P0 LDG.E.128 R12, [R2.64] ;")
    assert m["mnemonic"] == "LDG.E.128", "the predicate is not part of the mnemonic"


def test_marker_and_inlined_at_examples():
    m = sass._MARKER.match('\t//## File "/tmp/p.py", line 25')
    assert (m["file"], m["line"], m["inlined"]) == ("/tmp/p.py", "25", "")
    m = sass._MARKER.match('\t//## File ".../standard.py", line 203 inlined at "/tmp/p.py", line 25')
    assert sass._marker_loc(m).file == "/tmp/p.py" and sass._marker_loc(m).line == 25
    m = sass._INLINED_AT.search('inlined at "/tmp/p.py", line 25')
    assert (m["file"], m["line"]) == ("/tmp/p.py", "25")


def test_framing_examples():
    assert sass._CUOBJDUMP_FUNCTION.match("\t\tFunction : add_kernel")["name"] == "add_kernel"
    m = sass._TEXT_SECTION.match('\t.section\t.text.fused_mm_softmax_kernel,"ax",@progbits')
    assert m["name"] == "fused_mm_softmax_kernel"
    assert sass._LABEL.match("fused_mm_softmax_kernel:")["name"] == "fused_mm_softmax_kernel"
    assert sass._SECTION_REGISTERS.match('\t.sectioninfo\t@"SHI_REGISTERS=250"')["count"] == "250"


def test_resource_usage_examples():
    m = sass._USAGE_FUNCTION.match(" Function fused_mm_softmax_kernel:")
    assert m["name"] == "fused_mm_softmax_kernel"
    fields = dict(f.groups() for f in sass._USAGE_FIELD.finditer(
        "  REG:255 STACK:0 SHARED:1024 LOCAL:0 CONSTANT[0]:584 TEXTURE:0 SURFACE:0 SAMPLER:0"))
    assert fields["REG"] == "255" and fields["SHARED"] == "1024" and fields["CONSTANT[0]"] == "584"


# --- real output: counts against cuobjdump, tensor cores, vector loads, source lines ----------

@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_opcode_counts_match_cuobjdump(real_stage, real_variant, nvidia_tool, target):
    """Our per-opcode counts of the nvdisasm text equal a plain count over `cuobjdump -sass` of
    the same cubin, and our parse of the cuobjdump text gives the same counts."""
    ours = collections.Counter(i.op for i in instructions(
        sass.parse(real_stage("fused_mm_softmax", target, "sass", **BLOCK))))
    text = cuobjdump(nvidia_tool, real_variant, target, "-sass")
    plain = collections.Counter(re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)", text))
    assert sum(plain.values()) > 100
    assert ours == plain
    from_cuobjdump = list(sass.parse(text))
    assert collections.Counter(i.op for i in instructions(from_cuobjdump)) == plain
    assert [r.name for r in from_cuobjdump if isinstance(r, Function)] == ["fused_mm_softmax_kernel"]
    assert all(i.loc is None for i in instructions(from_cuobjdump)), "cuobjdump has no line markers"


def test_sm90_uses_hgmma_and_128_bit_loads(real_stage):
    found = instructions(sass.parse(real_stage("fused_mm_softmax", "cuda:90", "sass", **BLOCK)))
    hgmma = [i for i in found if i.op == "HGMMA"]
    assert hgmma and all(i.info.kind is Kind.MATRIX and i.info.unit == "hgmma" for i in hgmma)
    assert not [i for i in found if i.op == "HMMA"]
    wide = [i for i in found if i.op == "LDG" and i.width == 128]
    assert wide and all(i.info.space is Space.GLOBAL and i.info.access is Access.UNIT for i in wide)
    assert {i.function for i in found} == {"fused_mm_softmax_kernel"}


def test_sm80_uses_hmma(real_stage):
    found = instructions(sass.parse(real_stage("fused_mm_softmax", "cuda:80", "sass", **BLOCK)))
    hmma = [i for i in found if i.op == "HMMA"]
    assert hmma and all(i.info.unit == "hmma" and i.info.fp for i in hmma)
    assert not [i for i in found if i.op == "HGMMA"]


def test_tensor_core_ops_map_to_the_dot_line(real_stage):
    """Markers (many inlined from triton/language/standard.py) resolve to the kernel's own lines:
    the tensor-core instructions sit on the `tl.dot` line."""
    kernel = str(KERNELS / "fused_mm_softmax.py")
    for target, op in (("cuda:90", "HGMMA"), ("cuda:80", "HMMA")):
        text = real_stage("fused_mm_softmax", target, "sass", **BLOCK)
        if "inlined at" not in text:
            pytest.skip("this Triton's SASS has no 'inlined at' markers (seen with 3.6): nothing to resolve")
        found = instructions(sass.parse(text))
        located = [i for i in found if i.loc is not None]
        assert len(located) > 0.9 * len(found)
        assert {Path(i.loc.file).name for i in located} == {"fused_mm_softmax.py"}, \
            "every located instruction is a kernel line, none inside triton/language"
        on_dot = [i for i in found if i.op == op and i.loc.line == dot_line()]
        assert on_dot and Path(on_dot[0].loc.file) == Path(kernel)


def test_resource_usage_matches_the_raw_text(real_variant, nvidia_tool):
    for target in ("cuda:80", "cuda:90"):
        text = cuobjdump(nvidia_tool, real_variant, target, "--dump-resource-usage")
        raw_line = next(line for line in text.splitlines() if "REG:" in line)
        raw = dict(field.split(":") for field in raw_line.split())
        ours = {r.name: r.value for r in sass.parse_resource_usage(text)}
        assert ours == {"registers": int(raw["REG"]), "stack_bytes": int(raw["STACK"]),
                        "shared_bytes": int(raw["SHARED"]), "local_bytes": int(raw["LOCAL"])}
        assert {r.function for r in sass.parse_resource_usage(text)} == {"fused_mm_softmax_kernel"}


def test_nvdisasm_register_count_agrees_with_cuobjdump(real_stage, real_variant, nvidia_tool):
    """sm80 nvdisasm text states SHI_REGISTERS; it must be cuobjdump's REG for the same cubin."""
    stated = [r for r in sass.parse(real_stage("fused_mm_softmax", "cuda:80", "sass", **BLOCK))
              if isinstance(r, Resource)]
    usage = sass.parse_resource_usage(
        cuobjdump(nvidia_tool, real_variant, "cuda:80", "--dump-resource-usage"))
    registers = next(r.value for r in usage if r.name == "registers")
    assert [(r.name, r.value, r.function) for r in stated] == [
        ("registers", registers, "fused_mm_softmax_kernel")]


# --- widths, predicates, inlining chains, tables ------------------------------------------------

@pytest.mark.parametrize("mnemonic, width", [
    ("LDG.E", 32), ("LDG.E.64", 64), ("LDG.E.128", 128), ("LDG.E.U16", 16), ("LDG.E.S8", 8),
    ("STS.128", 128), ("LDGSTS.E.BYPASS.LTC128B.128", 128), ("LDSM.16.M88.4", 128),
    ("LDSM.16.MT88.2", 64), ("ATOMG.E.ADD.F64", 64), ("UTMALDG.2D", None), ("FADD", None)])
def test_widths(mnemonic, width):
    [i] = instructions(sass.parse(f"        /*0000*/                   {mnemonic} R1, R2 ;"))
    assert (i.mnemonic, i.op, i.width) == (mnemonic, mnemonic.split(".")[0], width)


def test_predicates_are_not_part_of_the_mnemonic():
    text = "\n".join(f"        /*00{k}0*/   {p} BRA `(.L_x_0) ;" for k, p in
                     enumerate(["@P0", "@!P1", "@!PT", "@UP2", "@!UPT"]))
    assert [i.mnemonic for i in instructions(sass.parse(text))] == ["BRA"] * 5


def test_inlining_chains_resolve_to_the_outermost_call_site():
    text = "\n".join([
        '\t//## File "/lib/a.py", line 1 inlined at "/lib/b.py", line 2 inlined at "/k.py", line 3',
        "        /*0000*/                   FADD R1, R2, R3 ;",
        # nvdisasm -gi also prints one marker per level, innermost first
        '\t//## File "/lib/std.py", line 196 inlined at "/lib/std.py", line 216',
        '\t//## File "/lib/std.py", line 216 inlined at "/k.py", line 25',
        '\t//## File "/k.py", line 25',
        "        /*0010*/                   FMNMX R5, R88, R90, !PT ;",
        '\t//## File "/lib/std.py", line 216 inlined at "/k.py", line 30',
        "        /*0020*/                   SHFL.BFLY PT, R155, R10, 0x10, 0x1f ;",
    ])
    assert [(i.loc.file, i.loc.line) for i in instructions(sass.parse(text))] == [
        ("/k.py", 3), ("/k.py", 25), ("/k.py", 30)]


@pytest.mark.parametrize("op, kind, space, unit", [
    ("HMMA", Kind.MATRIX, Space.NONE, "hmma"), ("HGMMA", Kind.MATRIX, Space.NONE, "hgmma"),
    ("UTCHMMA", Kind.MATRIX, Space.NONE, "tcgen05"), ("UTCQMMA", Kind.MATRIX, Space.NONE, "tcgen05"),
    ("UTCOMMA", Kind.MATRIX, Space.NONE, "tcgen05"), ("UTCIMMA", Kind.MATRIX, Space.NONE, "tcgen05"),
    ("IMMA", Kind.MATRIX, Space.NONE, "hmma"), ("DMMA", Kind.MATRIX, Space.NONE, "hmma"),
    ("QGMMA", Kind.MATRIX, Space.NONE, "hgmma"), ("IGMMA", Kind.MATRIX, Space.NONE, "hgmma"),
    ("LDG", Kind.LOAD, Space.GLOBAL, ""), ("STG", Kind.STORE, Space.GLOBAL, ""),
    ("LDS", Kind.LOAD, Space.SHARED, ""), ("STS", Kind.STORE, Space.SHARED, ""),
    ("LDSM", Kind.LOAD, Space.SHARED, "ldsm"), ("LDL", Kind.LOAD, Space.LOCAL, ""),
    ("STL", Kind.STORE, Space.LOCAL, ""), ("LDC", Kind.LOAD, Space.CONSTANT, ""),
    ("LDGSTS", Kind.LOAD, Space.GLOBAL, "ldgsts"), ("UTMALDG", Kind.LOAD, Space.TENSOR, "tma"),
    ("UTMASTG", Kind.STORE, Space.TENSOR, "tma"), ("ATOM", Kind.ATOMIC, Space.NONE, ""),
    ("RED", Kind.ATOMIC, Space.GLOBAL, ""), ("ATOMS", Kind.ATOMIC, Space.SHARED, ""),
    ("MUFU", Kind.SPECIAL, Space.NONE, ""), ("FFMA", Kind.FMA, Space.NONE, ""),
    ("HFMA2", Kind.FMA, Space.NONE, ""), ("DFMA", Kind.FMA, Space.NONE, ""),
    ("FADD", Kind.ARITH, Space.NONE, ""), ("FSETP", Kind.ARITH, Space.NONE, ""),
    ("IMAD", Kind.ARITH, Space.NONE, ""), ("LOP3", Kind.ARITH, Space.NONE, ""),
    ("BRA", Kind.CONTROL, Space.NONE, ""), ("EXIT", Kind.CONTROL, Space.NONE, ""),
    ("BSSY", Kind.CONTROL, Space.NONE, ""), ("BAR", Kind.SYNC, Space.NONE, ""),
    ("WARPGROUP", Kind.SYNC, Space.NONE, ""), ("DEPBAR", Kind.SYNC, Space.NONE, ""),
    ("SHFL", Kind.MOVE, Space.NONE, ""), ("PRMT", Kind.MOVE, Space.NONE, ""),
    ("F2F", Kind.CONVERT, Space.NONE, ""), ("I2F", Kind.CONVERT, Space.NONE, ""),
    ("NOP", Kind.NOP, Space.NONE, "")])
def test_sass_table(op, kind, space, unit):
    info = nvidia.lookup_sass(op)
    assert (info.kind, info.space, info.unit) == (kind, space, unit)


def test_fp_and_packed_flags():
    assert nvidia.lookup_sass("FADD").fp and not nvidia.lookup_sass("IADD3").fp
    assert nvidia.lookup_sass("HFMA2").vector and not nvidia.lookup_sass("FFMA").vector


def test_tables_refuse_duplicates():
    from kinspect.isa.ops import grouped

    with pytest.raises(ValueError, match="lists 'LDG' twice"):
        grouped((nvidia.SASS["LDG"], "LDG STG"), (nvidia.SASS["STG"], "LDG"), where=nvidia.__name__)


# --- bad, odd and big input ---------------------------------------------------------------------

def test_unknown_opcodes_are_other_not_guessed():
    [i] = instructions(sass.parse("        /*0000*/                   FROBNICATE.X R1, R2 ;"))
    assert (i.op, i.info.kind, i.info.unit) == ("FROBNICATE", Kind.OTHER, "")


def test_binary_input_raises_with_the_line_number():
    with pytest.raises(ParseError, match=r"line 2: binary data, not SASS text") as e:
        list(sass.parse("\tcode for sm_90a\n\x7fELF\x02\x01\x01\x00\x00\x00\n"))
    assert e.value.line == 2
    with pytest.raises(ParseError, match="line 1: binary data"):     # no NUL, mostly control
        list(sass.parse("\x01\x02\x03\x04\x05\x06ab"))
    with pytest.raises(ParseError, match="line 3: binary data"):
        list(sass.parse_resource_usage("Resource usage:\n Common:\n\x00\x01"))


def test_binary_example_line():
    assert records.looks_binary("\x7fELF\x02\x01\x01\x00")


def test_empty_and_truncated_input(real_stage):
    assert list(sass.parse("")) == [] and list(sass.parse([])) == []
    assert list(sass.parse_resource_usage("")) == []
    text = real_stage("fused_mm_softmax", "cuda:90", "sass", **BLOCK)
    full = instructions(sass.parse(text))
    cut = text[: len(text) // 2]
    cut = cut[: cut.rindex("LDG") + 5]        # mid-line, mid-mnemonic
    partial = instructions(sass.parse(cut))
    assert 0 < len(partial) < len(full)
    assert partial[-1].op == "LDG" and partial[:-1] == full[: len(partial) - 1]


def test_parse_is_lazy_and_bounded():
    """100k lines from a generator: records come before the input ends, memory stays small."""
    def listing(n, fail_after=None):
        yield "\t\tFunction : big_kernel"
        for k in range(n):
            if fail_after is not None and k == fail_after:
                raise AssertionError("the parser read ahead")
            yield f"        /*{16 * k:04x}*/                   FFMA R{k % 200}, R1, R2, R3 ;"

    records = sass.parse(listing(100_000, fail_after=10))
    assert [type(r) for r in itertools.islice(records, 3)] == [Function, Instruction, Instruction]

    tracemalloc.start()
    try:
        count = sum(1 for _ in sass.parse(listing(100_000)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 100_001
    assert peak < 2_000_000, f"peak {peak} bytes: the parser holds on to lines or records"
