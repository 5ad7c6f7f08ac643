"""PTX parser and NVIDIA PTX table, on real Triton PTX and on small hand-written cases."""

import collections
import itertools
import tracemalloc

import pytest

from kinspect.ir import records

from kinspect.core.errors import ParseError
from kinspect.ir import ptx
from kinspect.ir.records import Access, Function, Instruction, Kind, Resource, Space
from kinspect.isa import nvidia
from tests.helpers import BLOCK, KERNELS, dot_line, instructions


def one(text: str) -> Instruction:
    [i] = instructions(ptx.parse(text))
    return i


# --- regexes ----------------------------------------------------------------------------------

def test_function_examples():
    m = ptx._FUNCTION.match(".visible .entry fused_mm_softmax_kernel(")
    assert m["name"] == "fused_mm_softmax_kernel" and not m["extern"]
    assert ptx._FUNCTION.match(".func  (.param .b32 func_retval0) helper(")["name"] == "helper"


def test_loc_and_file_examples():
    m = ptx._LOC.match("\t.loc\t1 22 25                         // fused_mm_softmax.py:22:25")
    assert (m["file"], m["line"], m["col"], m["ifile"], m["hint"]) == ("1", "22", "25", None,
                                                                      "fused_mm_softmax.py")
    m = ptx._LOC.match("\t.loc\t2 196 12, function_name $L__info_string0, inlined_at 2 216 16 "
                       "// standard.py:196:12")
    assert (m["ifile"], m["iline"], m["icol"]) == ("2", "216", "16")
    m = ptx._FILE.match('\t.file\t1 "/work/main/kernels/fused_mm_softmax.py"')
    assert (m["index"], m["path"]) == ("1", "/work/main/kernels/fused_mm_softmax.py")


def test_declaration_examples():
    m = ptx._REG.match("\t.reg .f32 \t%f<123>;")
    assert m["type"] == "f32" and ptx._reg_count(m["names"]) == 123
    assert ptx._REG_RANGE.match("%f<123>")["count"] == "123"
    assert ptx._REQNTID.match(".reqntid 128")["dims"] == "128"
    assert ptx._MAXNREG.match(".maxnreg 128")["count"] == "128"
    assert ptx._LABEL.match("$L__BB0_2:")["name"] == "$L__BB0_2"


def test_instruction_and_cp_size_examples():
    m = ptx._INSTRUCTION.match("@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ]")
    assert m["mnemonic"] == "ld.global.v4.b32"
    assert ptx._CP_SIZE.search("[ %r116 + 0 ], [ %rd65 + 0 ], 0x10, %r118")["bytes"] == "0x10"


# --- real PTX ---------------------------------------------------------------------------------

def test_sm90_fused_kernel(real_stage):
    text = real_stage("fused_mm_softmax", "cuda:90", "ptx", **BLOCK)
    records = list(ptx.parse(text))
    assert [r.name for r in records if isinstance(r, Function)] == ["fused_mm_softmax_kernel"]
    found = instructions(records)
    wgmma = [i for i in found if i.op == "wgmma.mma_async"]
    assert wgmma and all(i.info.kind is Kind.MATRIX and i.info.unit == "hgmma" and i.info.fp
                         for i in wgmma)
    loads = [i for i in found if i.mnemonic == "ld.global.v4.b32"]
    assert loads and {(i.width, i.elem_bits, i.lanes, i.info.space, i.info.access, i.info.vector)
                      for i in loads} == {(128, 32, 4, Space.GLOBAL, Access.UNIT, True)}
    regs = {r.name: r.value for r in records if isinstance(r, Resource)}
    assert regs["ptx_reg_b32"] > 0 and regs["threads"] == 128


def test_counts_match_a_plain_count_of_the_text(real_stage):
    """Independent of our regexes: statements counted with str methods over the raw text."""
    text = real_stage("fused_mm_softmax", "cuda:90", "ptx", **BLOCK)
    found = collections.Counter(i.mnemonic for i in instructions(ptx.parse(text)))
    for mnemonic in ("ld.global.v4.b32", "st.global.v4.b32", "bar.sync", "ex2.approx.f32"):
        plain = sum(1 for line in text.splitlines()
                    if mnemonic in line.split("//")[0].split())
        assert found[mnemonic] == plain, mnemonic
    plain_wgmma = sum(line.split()[0].startswith("wgmma.mma_async")
                      for line in text.splitlines() if line.strip())
    assert sum(n for m, n in found.items() if m.startswith("wgmma.mma_async")) == plain_wgmma > 0


def test_file_table_at_the_end_still_gives_full_paths(real_stage):
    text = real_stage("fused_mm_softmax", "cuda:90", "ptx", **BLOCK)
    lines = text.splitlines()
    first_file = next(n for n, line in enumerate(lines, 1) if line.lstrip().startswith(".file"))
    found = instructions(ptx.parse(text))
    assert found[-1].line < first_file, "Triton declares .file after the code (the hard case)"
    if "inlined_at" not in text:
        pytest.skip("this Triton's PTX carries no inlined_at (seen with 3.6): inlined code stays in standard.py")
    kernel = str(KERNELS / "fused_mm_softmax.py")
    assert {i.loc.file for i in found if i.loc} == {kernel}, "inlined code resolves to the kernel"
    on_dot = [i for i in found if i.op == "wgmma.mma_async" and i.loc.line == dot_line()]
    assert on_dot


def test_sm80_fused_kernel_uses_mma_sync(real_stage):
    found = instructions(ptx.parse(real_stage("fused_mm_softmax", "cuda:80", "ptx", **BLOCK)))
    mma = [i for i in found if i.op == "mma"]
    assert mma and all(i.info.unit == "hmma" and i.info.kind is Kind.MATRIX for i in mma)
    assert not [i for i in found if i.op.startswith("wgmma")]


def test_matmul_uses_16_byte_cp_async_on_sm80(real_stage):
    found = instructions(ptx.parse(real_stage("matmul", "cuda:80", "ptx")))
    copies = [i for i in found if i.op == "cp.async"]
    assert copies and {(i.width, i.info.space, i.info.vector) for i in copies} == {
        (128, Space.GLOBAL, True)}
    assert {i.info.kind for i in found if i.op.startswith("cp.async.")} == {Kind.SYNC}


# --- hand-written cases -----------------------------------------------------------------------

@pytest.mark.parametrize("statement, op, kind, space, width, fp", [
    ("ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];", "ld", Kind.LOAD, Space.GLOBAL, 128, False),
    ("ld.shared.v2.f32 {%f1, %f2}, [%r1];", "ld", Kind.LOAD, Space.SHARED, 64, False),
    ("ld.local.u16 %rs1, [%rd1];", "ld", Kind.LOAD, Space.LOCAL, 16, False),
    ("ld.param.b64 %rd1, [k_param_0];", "ld", Kind.LOAD, Space.CONSTANT, 64, False),
    ("ld.const.b32 %r1, [c];", "ld", Kind.LOAD, Space.CONSTANT, 32, False),
    ("st.shared::cta.v4.b32 [%r1], {%r2, %r3, %r4, %r5};", "st", Kind.STORE, Space.SHARED, 128, False),
    ("ld.b32 %r1, [%rd1];", "ld", Kind.LOAD, Space.NONE, 32, False),
    ("atom.global.add.f32 %f1, [%rd1], %f2;", "atom", Kind.ATOMIC, Space.GLOBAL, 32, True),
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1}, {%r1}, {%r2}, {%f2};", "mma",
     Kind.MATRIX, Space.NONE, None, True),
    ("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r1}, {%r2}, {%r3}, {%r4};", "mma",
     Kind.MATRIX, Space.NONE, None, False),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, "
     "{%r2, %r3}], [%r4];", "cp.async.bulk.tensor", Kind.LOAD, Space.TENSOR, None, False),
    ("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r2, %r3}], [%r4];",
     "cp.async.bulk.tensor", Kind.STORE, Space.TENSOR, None, False),
    ("tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;", "tcgen05.mma",
     Kind.MATRIX, Space.NONE, None, False),
    ("ex2.approx.f32 %f1, %f2;", "ex2", Kind.SPECIAL, Space.NONE, None, True),
    ("rcp.approx.ftz.f32 %f1, %f2;", "rcp", Kind.SPECIAL, Space.NONE, None, True),
    ("fma.rn.f32 %f1, %f2, %f3, %f4;", "fma", Kind.FMA, Space.NONE, None, True),
    ("add.s32 %r1, %r2, %r3;", "add", Kind.ARITH, Space.NONE, None, False),
    ("add.rn.f16x2 %r1, %r2, %r3;", "add", Kind.ARITH, Space.NONE, 32, True),
    ("bar.sync 0;", "bar", Kind.SYNC, Space.NONE, None, False),
    ("shfl.sync.bfly.b32 %r1, %r2, 16, 31, -1;", "shfl", Kind.MOVE, Space.NONE, None, False),
    ("cvt.rn.f16.f32 %rs1, %f1;", "cvt", Kind.CONVERT, Space.NONE, None, True),
    ("@%p1 bra $L__BB0_2;", "bra", Kind.CONTROL, Space.NONE, None, False),
    ("ret;", "ret", Kind.CONTROL, Space.NONE, None, False),
])
def test_statements(statement, op, kind, space, width, fp):
    i = one(f"\t{statement}\n")
    assert (i.op, i.info.kind, i.info.space, i.width, i.info.fp) == (op, kind, space, width, fp)
    assert i.mnemonic == statement.removeprefix("@%p1 ").split()[0].rstrip(";")


def test_packed_types_are_vector_with_lanes():
    i = one("\tadd.rn.f16x2 %r1, %r2, %r3;")
    assert (i.elem_bits, i.lanes, i.info.vector) == (16, 2, True)


def test_inlining_chain_and_late_file_table():
    text = "\n".join([
        ".visible .entry k(",
        ")",
        "{",
        "\t.reg .b32 \t%r<5>;",
        "\t.loc\t1 7 3                          // k.py:7:3",
        "\tadd.s32 \t%r1, %r2, %r3;",
        "\t.loc\t2 216 16, function_name $L__info_string0, inlined_at 1 25 13 // standard.py:216:16",
        "\tmax.f32 \t%r1, %r2, %r3;",
        "\t.loc\t2 196 12, function_name $L__info_string0, inlined_at 2 216 16 // standard.py:196:12",
        "\tmax.f32 \t%r1, %r2, %r3;",
        "}",
        '\t.file\t1 "/src/k.py"',
        '\t.file\t2 "/lib/standard.py"',
    ])
    records = list(ptx.parse(text))
    assert [type(r) for r in records] == [Function, Resource, Instruction, Instruction, Instruction]
    assert [(i.loc.file, i.loc.line, i.loc.column) for i in instructions(records)] == [
        ("/src/k.py", 7, 3), ("/src/k.py", 25, 13), ("/src/k.py", 25, 13)]


def test_missing_file_table_falls_back_to_the_comment(real_stage):
    text = real_stage("add", "cuda:90", "ptx")
    truncated = text[: text.index(".file")]
    found = instructions(ptx.parse(truncated))
    assert found and all(i.loc is None or i.loc.file == "elementwise.py" for i in found)
    assert any(i.loc for i in found)


def test_braces_and_several_statements_on_a_line():
    records = list(ptx.parse("\t{ .reg .pred %p; setp.ne.b32 %p, %r1, 0; @%p st.global.b32 [%rd1], %r2; }"))
    assert [(type(r).__name__, getattr(r, "op", getattr(r, "name", ""))) for r in records] == [
        ("Resource", "ptx_reg_pred"), ("Instruction", "setp"), ("Instruction", "st")]


def test_extern_declarations_are_not_functions():
    text = ".extern .func (.param .b32 func_retval0) vprintf(\n.visible .entry k(\n)"
    assert [r.name for r in ptx.parse(text)] == ["k"]


def test_directives_labels_and_comments_are_not_instructions():
    text = "\n".join(["//", "// Generated by LLVM NVPTX Back-End", ".version 9.4", ".target sm_90a",
                      ".address_size 64", "$L__BB0_1:", "// %bb.0:", "\t// begin inline asm",
                      ".extern .shared .align 16 .b8 global_smem[];", ".b8 109", "{", "}",
                      "\t.param .u64 .ptr .global .align 1 k_param_0,"])
    assert list(ptx.parse(text)) == []


@pytest.mark.parametrize("op, kind, unit", [
    ("ld", Kind.LOAD, ""), ("st", Kind.STORE, ""), ("mma", Kind.MATRIX, "hmma"),
    ("wgmma.mma_async", Kind.MATRIX, "hgmma"), ("wgmma.wait_group", Kind.SYNC, "hgmma"),
    ("tcgen05.mma", Kind.MATRIX, "tcgen05"), ("cp.async", Kind.LOAD, "ldgsts"),
    ("cp.async.bulk", Kind.LOAD, "tma"), ("fma", Kind.FMA, ""), ("ex2", Kind.SPECIAL, ""),
    ("bar", Kind.SYNC, ""), ("shfl", Kind.MOVE, ""), ("cvt", Kind.CONVERT, ""),
    ("ldmatrix", Kind.LOAD, "ldsm")])
def test_ptx_table(op, kind, unit):
    info = nvidia.lookup_ptx(op)
    assert (info.kind, info.unit) == (kind, unit)


def test_ptx_op_picks_the_longest_known_prefix():
    assert nvidia.ptx_op("cp.async.bulk.tensor.2d.shared::cluster.global") == "cp.async.bulk.tensor"
    assert nvidia.ptx_op("cp.async.cg.shared.global") == "cp.async"
    assert nvidia.ptx_op("cp.async.commit_group") == "cp.async.commit_group"
    assert nvidia.ptx_op("ld.global.v4.b32") == "ld"
    assert nvidia.ptx_op("frobnicate.b32") == "frobnicate"


# --- bad, odd and big input -------------------------------------------------------------------

def test_unknown_mnemonics_are_other():
    i = one("\tfrobnicate.sync.b32 %r1, %r2;")
    assert (i.op, i.info.kind, i.width) == ("frobnicate", Kind.OTHER, None)


def test_binary_input_raises_with_the_line_number():
    with pytest.raises(ParseError, match=r"line 3: binary data, not PTX text") as e:
        list(ptx.parse(".version 9.4\n.target sm_90a\n\x7fELF\x02\x01\x01\x00\n"))
    assert e.value.line == 3
    with pytest.raises(ParseError, match="line 1: binary"):
        list(ptx.parse(["\x01\x02\x03\x04\x05\x06ab\n"]))


def test_binary_example_line():
    assert records.looks_binary("\x7fELF\x02\x01\x01\x00")


def test_empty_and_truncated_input(real_stage):
    assert list(ptx.parse("")) == []
    text = real_stage("fused_mm_softmax", "cuda:90", "ptx", **BLOCK)
    cut = text[: len(text) // 2]
    partial = instructions(ptx.parse(cut))
    full = instructions(ptx.parse(text))
    assert 0 < len(partial) < len(full)
    assert [i.mnemonic for i in partial[:-1]] == [i.mnemonic for i in full[: len(partial) - 1]]


def _module(n: int, fail_after: int | None = None, file_first: bool = True):
    if file_first:
        yield '\t.file\t1 "/src/k.py"'
    yield ".visible .entry k("
    yield ")"
    for k in range(n):
        if fail_after is not None and k == fail_after:
            raise AssertionError("the parser read ahead")
        yield f"\t.loc\t1 {k % 50 + 1} 5"
        yield f"\tfma.rn.f32 \t%f{k % 100}, %f1, %f2, %f3;"


def test_parse_is_lazy_and_bounded():
    records = ptx.parse(_module(100_000, fail_after=10))
    assert [type(r) for r in itertools.islice(records, 3)] == [Function, Instruction, Instruction]
    tracemalloc.start()
    try:
        count = sum(1 for _ in ptx.parse(_module(50_000)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 50_001
    assert peak < 2_000_000, f"peak {peak} bytes: the parser holds on to lines or records"


def test_waiting_for_the_file_table_is_capped(monkeypatch):
    """Records wait for a late .file, but never more than _MAX_PENDING of them."""
    monkeypatch.setattr(ptx, "_MAX_PENDING", 10)
    records = ptx.parse(_module(1000, fail_after=30, file_first=False))
    first = list(itertools.islice(records, 5))
    assert isinstance(first[0], Function) and first[1].loc.file == ""     # no file name known
