"""AMDGCN parser and AMD table, on real gfx942 output and on small hand-written cases."""

import collections
import itertools
import tracemalloc

import pytest

from kinspect.ir import records

from kinspect.core.errors import ParseError
from kinspect.ir import amdgcn
from kinspect.ir.records import Access, Function, Instruction, Kind, Resource, Space
from kinspect.isa import amd
from tests.helpers import BLOCK, KERNELS, dot_line, instructions

TARGET = "hip:gfx942"


def one(line: str) -> Instruction:
    [i] = instructions(amdgcn.parse(line))
    return i


def resources(records) -> dict[str, int]:
    return {r.name: r.value for r in records if isinstance(r, Resource)}


# --- regexes ----------------------------------------------------------------------------------

def test_instruction_and_label_examples():
    assert amdgcn._INSTRUCTION.match("\tglobal_load_dwordx4 v[0:3], v[4:5], off")["mnemonic"] == \
        "global_load_dwordx4"
    m = amdgcn._LABEL.match("fused_mm_softmax_kernel:                ; @fused_mm_softmax_kernel")
    assert m["name"] == "fused_mm_softmax_kernel"
    m = amdgcn._SYMBOL.match("\t.globl\tfused_mm_softmax_kernel         ; -- Begin function fused_mm_softmax_kernel")
    assert m["globl"] == "fused_mm_softmax_kernel"
    assert amdgcn._SYMBOL.match("\t.type\tfused_mm_softmax_kernel,@function")["typed"] == \
        "fused_mm_softmax_kernel"


def test_location_examples():
    m = amdgcn._FILE.match('\t.file\t1 "/work/main/kernels" "fused_mm_softmax.py"')
    assert (m["index"], m["first"], m["second"]) == ("1", "/work/main/kernels", "fused_mm_softmax.py")
    line = "\t.loc\t2 314 12 is_stmt 1              ; standard.py:314:12 @[ fused_mm_softmax.py:27:19 ]"
    assert amdgcn._LOC.match(line).group("file", "line", "col") == ("2", "314", "12")
    assert amdgcn._CALL_SITE.search("@[ fused_mm_softmax.py:27:19").group("file", "line", "col") == \
        ("fused_mm_softmax.py", "27", "19")


def test_resource_examples():
    assert amdgcn._AMDHSA_KERNEL.match("\t.amdhsa_kernel fused_mm_softmax_kernel")["name"] == \
        "fused_mm_softmax_kernel"
    assert amdgcn._AMDHSA_FIELD.match("\t\t.amdhsa_next_free_vgpr 300").group("key", "value") == \
        ("next_free_vgpr", "300")
    assert amdgcn._COMMENT_FIELD.match("; NumVgprs: 256").group("key", "value") == ("NumVgprs", "256")
    m = amdgcn._YAML_FIELD.match("  - .agpr_count:     44")
    assert (m["indent"], m["key"], m["value"]) == ("  - ", "agpr_count", "44")
    assert amdgcn._YAML_FIELD.match("    .vgpr_count:     300")["indent"] == "    "
    assert amdgcn._SPILL.search("; 4-byte Folded Spill")


# --- real gfx942 output -----------------------------------------------------------------------

def test_fused_kernel_uses_mfma_and_wide_loads(real_stage):
    records = list(amdgcn.parse(real_stage("fused_mm_softmax", TARGET, "amdgcn", **BLOCK)))
    assert [r.name for r in records if isinstance(r, Function)] == ["fused_mm_softmax_kernel"]
    found = instructions(records)
    mfma = [i for i in found if i.op.startswith("v_mfma_")]
    assert mfma and all(i.info.kind is Kind.MATRIX and i.info.unit == "mfma" and i.info.fp
                        for i in mfma)
    wide = [i for i in found if i.info.kind is Kind.LOAD and i.info.space is Space.GLOBAL
            and i.width == 128]
    assert wide and all(i.info.access is Access.UNIT and i.lanes == 4 for i in wide)
    assert {i.function for i in found} == {"fused_mm_softmax_kernel"}


def test_instruction_count_matches_a_plain_count(real_stage):
    """Instruction lines counted with str methods: indented, a lowercase word, not a directive,
    and outside the YAML metadata block."""
    text = real_stage("fused_mm_softmax", TARGET, "amdgcn", **BLOCK)
    code = text.split(".amdgpu_metadata")[0]
    plain = collections.Counter(line.split()[0] for line in code.splitlines()
                                if line[:1] in (" ", "\t") and line.strip()[:1].islower())
    ours = collections.Counter(i.mnemonic for i in instructions(amdgcn.parse(text)))
    assert ours == plain and sum(plain.values()) > 100


def test_resources_agree_with_the_raw_text(real_stage):
    text = real_stage("fused_mm_softmax", TARGET, "amdgcn", **BLOCK)

    def raw(key):    # the number after `key` on its line, read with str methods
        line = next(line for line in text.splitlines() if line.strip().startswith(key))
        return int(line.strip()[len(key):].split()[0])

    found = resources(amdgcn.parse(text))
    assert found["total_vgprs"] == raw(".vgpr_count:") == raw("; TotalNumVgprs:") \
        == raw(".amdhsa_next_free_vgpr")
    assert found["vgprs"] == raw("; NumVgprs:") and found["agprs"] == raw("; NumAgprs:")
    assert found["sgprs"] == raw(".sgpr_count:") and found["explicit_sgprs"] == raw(".amdhsa_next_free_sgpr")
    assert found["shared_bytes"] == raw(".amdhsa_group_segment_fixed_size")
    assert found["scratch_bytes"] == raw("; ScratchSize:")
    assert found["spill_vgprs"] == raw(".vgpr_spill_count:")
    assert found["occupancy"] == raw("; Occupancy:") > 0
    if found["agprs"]:      # gfx90a+: AGPRs sit after accum_offset in one VGPR file
        assert found["total_vgprs"] == found["accum_offset"] + found["agprs"]


def test_each_figure_comes_once(real_stage):
    records = [r for r in amdgcn.parse(real_stage("fused_mm_softmax", TARGET, "amdgcn", **BLOCK))
               if isinstance(r, Resource)]
    keys = [(r.function, r.name) for r in records]
    assert len(keys) == len(set(keys)), "statements of one figure agree, so it is yielded once"
    assert {r.function for r in records} == {"fused_mm_softmax_kernel"}


def test_matrix_ops_map_to_the_dot_line(real_stage):
    """Locations resolve through the `@[ ... ]` inlining chain and the .file table."""
    text = real_stage("fused_mm_softmax", TARGET, "amdgcn", **BLOCK)
    assert "@[" in text, "the test needs inlined locations to mean something"
    found = instructions(amdgcn.parse(text))
    kernel = str(KERNELS / "fused_mm_softmax.py")
    assert {i.loc.file for i in found if i.loc} == {kernel}
    assert [i for i in found if i.op.startswith("v_mfma_") and i.loc.line == dot_line()]


# --- hand-written cases -----------------------------------------------------------------------

@pytest.mark.parametrize("line, op, kind, space, width, fp", [
    ("global_load_dword v1, v[2:3], off", "global_load_dword", Kind.LOAD, Space.GLOBAL, 32, False),
    ("global_load_dwordx2 v[0:1], v[2:3], off", "global_load_dwordx2", Kind.LOAD, Space.GLOBAL, 64, False),
    ("global_load_dwordx3 v[0:2], v[4:5], off", "global_load_dwordx3", Kind.LOAD, Space.GLOBAL, 96, False),
    ("global_load_dwordx4 v[0:3], v[4:5], off", "global_load_dwordx4", Kind.LOAD, Space.GLOBAL, 128, False),
    ("buffer_load_dwordx4 v[0:3], v4, s[0:3], 0 offen", "buffer_load_dwordx4", Kind.LOAD,
     Space.GLOBAL, 128, False),
    ("global_store_dwordx4 v[4:5], v[0:3], off", "global_store_dwordx4", Kind.STORE, Space.GLOBAL,
     128, False),
    ("ds_read_b128 v[0:3], v4", "ds_read_b128", Kind.LOAD, Space.SHARED, 128, False),
    ("ds_write2_b64 v1, v[2:3], v[4:5] offset1:8", "ds_write2_b64", Kind.STORE, Space.SHARED, 128, False),
    ("ds_load_b32 v1, v2", "ds_load_b32", Kind.LOAD, Space.SHARED, 32, False),
    ("ds_store_b64 v1, v[2:3]", "ds_store_b64", Kind.STORE, Space.SHARED, 64, False),
    ("scratch_store_b32 off, v1, off offset:36 ; 4-byte Folded Spill", "scratch_store_b32",
     Kind.STORE, Space.LOCAL, 32, False),
    ("buffer_store_dword v40, off, s[0:3], s33 ; 4-byte Folded Spill", "buffer_store_dword",
     Kind.STORE, Space.LOCAL, 32, False),
    ("buffer_load_dword v40, off, s[0:3], s33 offset:4 ; 4-byte Reload", "buffer_load_dword",
     Kind.LOAD, Space.LOCAL, 32, False),
    ("v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]", "v_mfma_f32_32x32x8_f16",
     Kind.MATRIX, Space.NONE, None, True),
    ("v_mfma_i32_32x32x16_i8 a[0:15], v[0:1], v[2:3], a[0:15]", "v_mfma_i32_32x32x16_i8",
     Kind.MATRIX, Space.NONE, None, False),
    ("v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]", "v_wmma_f32_16x16x16_f16",
     Kind.MATRIX, Space.NONE, None, True),
    ("v_exp_f32_e32 v1, v2", "v_exp_f32", Kind.SPECIAL, Space.NONE, None, True),
    ("v_log_f32_e32 v1, v2", "v_log_f32", Kind.SPECIAL, Space.NONE, None, True),
    ("v_rcp_f32_e32 v1, v2", "v_rcp_f32", Kind.SPECIAL, Space.NONE, None, True),
    ("v_fma_f32 v1, v2, v3, v4", "v_fma_f32", Kind.FMA, Space.NONE, None, True),
    ("v_fmac_f32_e32 v1, v2, v3", "v_fmac_f32", Kind.FMA, Space.NONE, None, True),
    ("v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7]", "v_pk_fma_f32", Kind.FMA, Space.NONE, None, True),
    ("v_mad_u64_u32 v[0:1], s[0:1], v2, s3, v[4:5]", "v_mad_u64_u32", Kind.ARITH, Space.NONE,
     None, False),
    ("v_add_f32_dpp v1, v2, v3 row_shr:1", "v_add_f32", Kind.ARITH, Space.NONE, None, True),
    ("v_add_u32_e32 v1, v2, v3", "v_add_u32", Kind.ARITH, Space.NONE, None, False),
    ("v_max_f64 v[0:1], v[2:3], v[4:5]", "v_max_f64", Kind.ARITH, Space.NONE, None, True),
    ("s_and_b32 s3, s2, 0xc0", "s_and_b32", Kind.ARITH, Space.NONE, None, False),
    ("s_and_saveexec_b64 s[0:1], vcc", "s_and_saveexec_b64", Kind.CONTROL, Space.NONE, None, False),
    ("s_waitcnt vmcnt(0)", "s_waitcnt", Kind.SYNC, Space.NONE, None, False),
    ("s_barrier", "s_barrier", Kind.SYNC, Space.NONE, None, False),
    ("s_branch .LBB0_2", "s_branch", Kind.CONTROL, Space.NONE, None, False),
    ("s_cbranch_scc1 .LBB0_2", "s_cbranch_scc1", Kind.CONTROL, Space.NONE, None, False),
    ("s_load_dwordx2 s[2:3], s[0:1], 0x0", "s_load_dwordx2", Kind.LOAD, Space.CONSTANT, 64, False),
    ("v_cvt_f16_f32_e32 v1, v2", "v_cvt_f16_f32", Kind.CONVERT, Space.NONE, None, True),
    ("ds_bpermute_b32 v1, v2, v3", "ds_bpermute_b32", Kind.MOVE, Space.NONE, None, False),
    ("s_nop 0", "s_nop", Kind.NOP, Space.NONE, None, False),
])
def test_instructions(line, op, kind, space, width, fp):
    i = one(f"\t{line}")
    assert (i.mnemonic, i.op, i.info.kind, i.info.space, i.width, i.info.fp) == (
        line.split()[0], op, kind, space, width, fp)


def test_packed_ops_are_vector():
    assert one("\tv_pk_add_f32 v[0:1], v[2:3], v[4:5]").info.vector
    assert not one("\tv_add_f32_e32 v1, v2, v3").info.vector


def test_yaml_metadata_with_the_name_last():
    text = "\n".join([
        "\t.amdgpu_metadata", "---", "amdhsa.kernels:",
        "  - .agpr_count:     4",
        "    .args:",
        "      - .address_space:  global",
        "        .name:           x_ptr",
        "        .size:           8",
        "    .name:           first",
        "    .vgpr_count:     40",
        "  - .name:           second",
        "    .sgpr_spill_count: 3",
        "    .vgpr_spill_count: 2",
        "amdhsa.target:   amdgcn-amd-amdhsa--gfx942",
        "amdhsa.version:", "  - 1", "  - 2", "...", "\t.end_amdgpu_metadata",
    ])
    found = [(r.function, r.name, r.value) for r in amdgcn.parse(text)]
    assert found == [("first", "agprs", 4), ("first", "total_vgprs", 40),
                     ("second", "spill_sgprs", 3), ("second", "spill_vgprs", 2)]


def test_functions_from_labels_of_declared_symbols():
    text = "\n".join(["\t.globl\tk", "\t.type\thelper,@function", "k:", ".LBB0_1:", "\ts_endpgm",
                      "helper:", "\ts_setpc_b64 s[30:31]", "\t.amdhsa_kernel other",
                      "\t\t.amdhsa_next_free_vgpr 8", "\t.end_amdhsa_kernel"])
    records = list(amdgcn.parse(text))
    assert [(type(r).__name__, getattr(r, "function", None) or r.name) for r in records] == [
        ("Function", "k"), ("Instruction", "k"), ("Function", "helper"), ("Instruction", "helper"),
        ("Function", "other"), ("Resource", "other")]


def test_line_zero_has_no_location():
    text = '\t.file\t1 "/src" "k.py"\n\t.loc\t1 0 0 is_stmt 0 ; :0:0\n\ts_endpgm'
    assert one(text).loc is None
    text = '\t.file\t1 "/src" "k.py"\n\t.loc\t1 5 2 ; k.py:5:2\n\ts_endpgm'
    assert (one(text).loc.file, one(text).loc.line) == ("/src/k.py", 5)


@pytest.mark.parametrize("mnemonic, op", [
    ("v_max_f32_e32", "v_max_f32"), ("v_mov_b32_dpp", "v_mov_b32"), ("v_add_f32_sdwa", "v_add_f32"),
    ("v_cndmask_b32_e64", "v_cndmask_b32"), ("global_load_dwordx4", "global_load_dwordx4")])
def test_op_name_strips_the_encoding(mnemonic, op):
    assert amd.op_name(mnemonic) == op


def test_families_are_ordered_narrow_first():
    """A prefix that shadows a later, narrower one would make the later entry dead data."""
    prefixes = [p for p, _ in amd.FAMILIES]
    for i, wide in enumerate(prefixes):
        for narrow in prefixes[i + 1:]:
            assert not narrow.startswith(wide), f"{wide!r} hides the later {narrow!r}"


# --- bad, odd and big input -------------------------------------------------------------------

def test_unknown_mnemonics_are_other():
    i = one("\tv_frobnicate_b32 v1, v2")
    assert (i.op, i.info.kind, i.info.unit) == ("v_frobnicate_b32", Kind.OTHER, "")


def test_binary_input_raises_with_the_line_number():
    with pytest.raises(ParseError, match=r"line 2: binary data, not AMDGCN text") as e:
        list(amdgcn.parse('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n\x7fELF\x02\x01\x01\x00\n'))
    assert e.value.line == 2
    with pytest.raises(ParseError, match="line 1: binary"):
        list(amdgcn.parse("\x01\x02\x03\x04\x05\x06ab"))


def test_binary_example_line():
    assert records.looks_binary("\x7fELF\x02\x01\x01\x00")


def test_empty_and_truncated_input(real_stage):
    assert list(amdgcn.parse("")) == []
    text = real_stage("fused_mm_softmax", TARGET, "amdgcn", **BLOCK)
    full = list(amdgcn.parse(text))
    # cut at line boundaries: a cut inside a word is a different (shorter) instruction, not a prefix
    for cut in (text[: text.rindex("\n", 0, len(text) // 2)], text[: text.index(".vgpr_count")]):
        partial = list(amdgcn.parse(cut))
        assert 0 < len(partial) < len(full) and partial == full[: len(partial)]


def _module(n: int, fail_after: int | None = None):
    yield "\t.globl\tk"
    yield "k:"
    yield '\t.file\t1 "/src" "k.py"'
    for k in range(n):
        if fail_after is not None and k == fail_after:
            raise AssertionError("the parser read ahead")
        yield f"\t.loc\t1 {k % 50 + 1} 5 ; k.py:{k % 50 + 1}:5"
        yield f"\tv_fma_f32 v{k % 200}, v1, v2, v3"


def test_parse_is_lazy_and_bounded():
    records = amdgcn.parse(_module(100_000, fail_after=10))
    assert [type(r) for r in itertools.islice(records, 3)] == [Function, Instruction, Instruction]
    tracemalloc.start()
    try:
        count = sum(1 for _ in amdgcn.parse(_module(50_000)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 50_001
    assert peak < 2_000_000, f"peak {peak} bytes: the parser holds on to lines or records"
