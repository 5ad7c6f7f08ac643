"""MLIR parser and table: real TTIR/TTGIR from Triton 3.9 and the triton-shared CPU fixtures."""


import pytest

from kinspect.core.errors import ParseError
from kinspect.ir import mlir
from kinspect.ir.records import Function, Instruction, Kind, Layout, Resource, Space
from kinspect.isa import mlir as table
from tests.helpers import BLOCK, instructions, kernel_line, TESTS

SHARED = TESTS / "fixtures" / "cpu" / "triton-shared-riscv-softmax"


def parse_one(line: str) -> Instruction:
    """The single op of `line` wrapped in a function."""
    found = instructions(mlir.parse(f"tt.func @k() {{\n{line}\n}}\n"))
    assert len(found) == 1, found
    return found[0]


# --- regexes: every one has an example line above it, and the example means what it says ------

def test_loc_def_and_token_examples():
    m = mlir.LOC_DEF.match('#loc38 = loc("c_max"(#loc11))')
    assert (m["alias"], m["body"]) == ("loc38", '"c_max"(#loc11)')
    tokens = [m.group(m.lastgroup) for m in mlir.LOC_TOKEN.finditer("callsite(#loc12 at #loc45)")]
    assert tokens == ["callsite", "(", "#loc12", "at", "#loc45", ")"]


def test_layout_and_module_examples():
    m = mlir.LAYOUT_DEF.match("#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, "
                              "warpsPerCTA = [4, 1], instrShape = [16, 128, 8]}>")
    assert (m["alias"], m["dialect"], m["kind"]) == ("mma", "ttg", "nvidia_mma")
    attrs = dict(m.groups() for m in mlir.MODULE_ATTR.finditer(
        'module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = '
        '"cuda:90", "ttg.threads-per-warp" = 32 : i32}'))
    assert attrs == {"ttg.num-ctas": "1", "ttg.num-warps": "4", "ttg.threads-per-warp": "32"}


def test_op_symbol_and_block_examples():
    m = mlir.OP.match("    %c = ttng.warp_group_dot %a_11, %b_18, %cst {inputPrecision = 0 : i32} : "
                      "!ttg.memdesc<128x128xf32, #shared, #smem> * !ttg.memdesc<128x128xf32, "
                      "#shared1, #smem> -> tensor<128x128xf32, #mma> loc(#loc37)")
    assert (m["results"], m["name"]) == ("%c", "ttng.warp_group_dot")
    assert mlir.OP.match('    %c_max = "tt.reduce"(%c) <{axis = 0 : i32}> ({')["name"] == "tt.reduce"
    assert mlir.OP.match("    %acc_77:9 = scf.for %acc_88 = %c0_i32 to %1")["name"] == "scf.for"
    m = mlir.SYMBOL.search("  tt.func public @fused_mm_softmax_kernel(%a_ptr: !tt.ptr<f32> "
                           '{tt.divisibility = 16 : i32} loc("a_ptr"(#loc)), %b_ptr: !tt.ptr<f32>) '
                           "attributes {noinline = false} {")
    assert m["name"] == "fused_mm_softmax_kernel"
    assert mlir.BLOCK_LABEL.match('  ^bb2(%42: i64 loc("row"(#loc5))):  // 2 preds: ^bb1, ^bb3')["label"] == "bb2"
    assert mlir.SUCCESSOR.findall("    llvm.cond_br %41, ^bb1, ^bb5 loc(#loc25)") == ["bb1", "bb5"]


def test_type_examples():
    kinds = [(m["shaped"], m["elem"] or m["pointee"] or m["scalar"] or m["opaque"])
             for m in mlir.TYPE.finditer(
                 "tensor<128x128x!tt.ptr<f32>, #blocked>  vector<8xf32>  !ttg.memdesc<3x128x32xf16, "
                 "#shared, #smem, mutable>  f32  !llvm.struct<(i64, ptr)>")]
    assert kinds[:5] == [("tensor", "f32"), ("vector", "f32"), ("!ttg.memdesc", "f16"),
                         (None, "f32"), (None, "!llvm.struct")]
    parts = mlir._top_level(": (tensor<128x128xf32, #mma>) -> tensor<128xf32, #ttg.slice<{dim = 0, "
                            "parent = #mma}>>", ("->",))
    assert len(parts) == 2 and parts[1].strip().startswith("tensor<128xf32")
    tokens = mlir.TYPE_SYNTAX.findall(" : (tensor<128x128xf32, #mma>) -> tensor<128xf32, "
                                      "#ttg.slice<{dim = 0, parent = #mma}>>")
    assert tokens[:6] == [" : ", "(", "<", ">", ")", "->"], "`->` is one token, not a `>`"


# --- shapes and classification of single ops ----------------------------------------------------

def test_vector_type_gives_lanes_and_width():
    op = parse_one("    %s = vector.fma %a, %b, %c : vector<8xf32> loc(unknown)")
    assert (op.lanes, op.elem_bits, op.width) == (8, 32, 256)
    assert op.info.kind is Kind.FMA and op.info.vector and op.info.fp


def test_tensor_type_gives_lanes_without_width():
    op = parse_one("    %x = arith.addf %a, %b : tensor<128x128xf32, #blocked> loc(unknown)")
    assert (op.lanes, op.elem_bits, op.width) == (16384, 32, None)
    assert op.info.kind is Kind.ARITH and op.info.fp and not op.info.vector


def test_load_of_pointer_tensor_moves_the_pointee():
    op = parse_one("    %v = tt.load %p : tensor<1024x!tt.ptr<f16>> loc(unknown)")
    assert (op.lanes, op.elem_bits) == (1024, 16) and op.info.space is Space.GLOBAL


def test_memref_load_is_one_element():
    op = parse_one("    %v = memref.load %m[%i] : memref<1024xf32> loc(unknown)")
    assert (op.lanes, op.elem_bits, op.width) == (None, 32, 32) and op.info.kind is Kind.LOAD


def test_reduction_takes_its_input_shape_and_reassoc_clears_ordered():
    op = parse_one("    %r = vector.reduction <add>, %v : vector<16xf32> into f32 loc(unknown)")
    assert op.info.kind is Kind.REDUCE and op.lanes == 16
    ordered = parse_one("    %r = llvm.intr.vector.reduce.fadd(%s, %v) : (f32, vector<16xf32>) -> f32")
    assert ordered.info.ordered is True
    fast = parse_one("    %r = llvm.intr.vector.reduce.fadd(%s, %v) <{fastmathFlags = "
                     "#llvm.fastmath<reassoc>}> : (f32, vector<16xf32>) -> f32")
    assert fast.info.ordered is False


def test_unknown_op_is_other():
    op = parse_one("    %x = mydialect.frobnicate %a : tensor<4xf32> loc(unknown)")
    assert op.info.kind is Kind.OTHER and op.op == "mydialect.frobnicate"
    assert table.lookup("mydialect.frobnicate").kind is Kind.OTHER


def test_alloc_without_a_source_stores_nothing():
    empty = parse_one("    %a = ttg.local_alloc : () -> !ttg.memdesc<3x128x32xf16, #shared, #smem, "
                      "mutable> loc(unknown)")
    assert empty.info.kind is Kind.OTHER
    filled = parse_one("    %a = ttg.local_alloc %t : (tensor<128x32xf16, #blocked>) -> "
                       "!ttg.memdesc<128x32xf16, #shared, #smem> loc(unknown)")
    assert filled.info.kind is Kind.STORE and filled.info.space is Space.SHARED


# --- locations ---------------------------------------------------------------------------------

LOC_TABLE = """\
tt.func @k() {
  %a = arith.addf %x, %y : f32 loc(#loc5)
  %b = arith.mulf %x, %y : f32 loc(#loc6)
  %c = arith.subf %x, %y : f32 loc(fused[#loc1, #loc2])
  %d = arith.divf %x, %y : f32 loc("inline.py":7:3)
  %e = arith.negf %x : f32 loc(#loc1)
  %f = arith.negf %x : f32 loc(#loc99)
} loc(#loc)
#loc = loc("k.py":1:1)
#loc1 = loc(unknown)
#loc2 = loc("k.py":30:5)
#loc3 = loc("lib.py":200:12)
#loc4 = loc("y"(#loc2))
#loc5 = loc(callsite(#loc3 at #loc4))
#loc6 = loc(callsite(#loc1 at #loc3))
"""


def test_loc_forms_resolve():
    found = {i.line: i.loc for i in instructions(mlir.parse(LOC_TABLE))}
    assert (found[2].file, found[2].line, found[2].column) == ("k.py", 30, 5), "outermost caller"
    assert found[3].file == "lib.py", "an unknown callee's caller"
    assert found[4].line == 30, "fused: the first known member"
    assert (found[5].file, found[5].line, found[5].column) == ("inline.py", 7, 3)
    assert found[6] is None and found[7] is None, "unknown and undefined give None"


def test_truncated_input_gives_what_could_be_read():
    cut = LOC_TABLE.split("} loc(#loc)")[0]
    found = instructions(mlir.parse(cut))
    assert len(found) == 6 and all(i.loc is None or i.loc.file == "inline.py" for i in found)


# --- bad input ---------------------------------------------------------------------------------

def test_empty_input_gives_nothing():
    assert list(mlir.parse("")) == []
    assert list(mlir.parse([])) == []


def test_binary_data_is_a_parse_error_with_its_line():
    with pytest.raises(ParseError, match=r"line 2: binary data, not MLIR text") as err:
        list(mlir.parse(["module {", "\x7fELF\x02\x01\x01\x00\x00\x00", "}"]))
    assert err.value.line == 2
    with pytest.raises(ParseError, match="binary data"):
        list(mlir.parse(["\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f"]))


# --- real TTGIR / TTIR -------------------------------------------------------------------------

def test_sm90_ttgir_has_wgmma_on_the_dot_line(real_stage):
    records = list(mlir.parse(real_stage("fused_mm_softmax", "cuda:90", "ttgir", **BLOCK)))
    layouts = {r.alias: r for r in records if isinstance(r, Layout)}
    mma = [r for r in layouts.values() if r.kind == "nvidia_mma"]
    assert len(mma) == 1 and "versionMajor = 3" in mma[0].text
    assert layouts["blocked"].kind == "blocked"
    resources = {r.name: r.value for r in records if isinstance(r, Resource)}
    assert resources["num_warps"] == 4 and resources["threads_per_warp"] == 32
    dots = [i for i in instructions(records) if i.op == "ttng.warp_group_dot"]
    assert dots and all(i.info.kind is Kind.MATRIX and i.info.unit == "hgmma" for i in dots)
    assert all(i.loc.file.endswith("fused_mm_softmax.py") for i in dots)
    assert {i.loc.line for i in dots} == {kernel_line("c = tl.dot(a, b)")}
    assert (dots[0].lanes, dots[0].elem_bits) == (64 * 64, 32)
    assert not [i for i in instructions(records) if i.op == "tt.dot"], "lowered to wgmma"


def test_sm80_ttgir_keeps_tt_dot_on_mma_v2(real_stage):
    records = list(mlir.parse(real_stage("fused_mm_softmax", "cuda:80", "ttgir", **BLOCK)))
    mma = [r for r in records if isinstance(r, Layout) and r.kind == "nvidia_mma"]
    assert len(mma) == 1 and "versionMajor = 2" in mma[0].text
    found = instructions(records)
    dots = [i for i in found if i.op == "tt.dot"]
    assert dots and dots[0].info.kind is Kind.MATRIX
    assert dots[0].loc.line == kernel_line("c = tl.dot(a, b)")
    loads = [i for i in found if i.op == "ttg.local_load"]
    assert loads and all(i.info.kind is Kind.LOAD and i.info.space is Space.SHARED for i in loads)


def test_gfx942_ttgir_uses_mfma_and_64_lanes(real_stage):
    records = list(mlir.parse(real_stage("fused_mm_softmax", "hip:gfx942", "ttgir", **BLOCK)))
    assert [r for r in records if isinstance(r, Layout) and r.kind == "amd_mfma"]
    resources = {r.name: r.value for r in records if isinstance(r, Resource)}
    assert resources["threads_per_warp"] == 64
    found = instructions(records)
    assert [i for i in found if i.op == "tt.dot" and i.info.kind is Kind.MATRIX]
    assert {i.info.kind for i in found if i.op.startswith("amdg.buffer_")} <= {Kind.LOAD, Kind.STORE}


def test_ttir_reduce_bodies_resolve_to_the_kernel_lines(real_stage):
    """The tl.max combiner is inlined from triton/language/standard.py; its loc is a callsite
    chain whose outermost caller is the kernel's `c_max = tl.max(c, axis=0)`."""
    found = instructions(mlir.parse(real_stage("fused_mm_softmax", "cuda:90", "ttir", **BLOCK)))
    assert {i.function for i in found} == {"fused_mm_softmax_kernel"}
    maxes = [i for i in found if i.op == "arith.maxnumf"]
    assert maxes and {i.loc.line for i in maxes} == {kernel_line("c_max = tl.max(c, axis=0)")}
    assert all(i.loc.file.endswith("fused_mm_softmax.py") for i in found if i.loc)
    reduces = [i for i in found if i.op == "tt.reduce"]
    assert len(reduces) == 2 and all(i.info.kind is Kind.REDUCE for i in reduces)
    assert [i.op for i in found if i.info.kind is Kind.OTHER] == []


def test_matmul_loop_body_is_in_loop(real_stage):
    found = instructions(mlir.parse(real_stage("matmul", "cuda:90", "ttgir")))
    loops = [i for i in found if i.op == "scf.for"]
    assert len(loops) == 1 and not loops[0].in_loop
    assert loops[0].loc is not None, "a region op's loc comes from its closing line"
    inside = [i for i in found if i.in_loop]
    assert any(i.op == "ttng.warp_group_dot" for i in inside)
    assert any(i.op == "scf.yield" for i in inside)
    assert not [i for i in found if i.op == "tt.store" and i.in_loop]


# --- CPU-backend MLIR (triton-shared) ------------------------------------------------------------

def test_triton_shared_linalg_reduces_over_the_row():
    found = instructions(mlir.parse((SHARED / "ttshared.mlir").read_text()))
    reduces = [i for i in found if i.op == "linalg.reduce"]
    assert len(reduces) == 2
    assert all((i.lanes, i.elem_bits) == (1024, 32) for i in reduces)
    assert [i.loc.line for i in reduces] == [28, 31]          # tl.max and tl.sum in test_softmax.py
    assert {i.op for i in found if i.info.kind is Kind.SPECIAL} == {"math.exp"}
    assert [i.op for i in found if i.op == "func.return"] == ["func.return"], "bare `return`"


def test_llvm_dialect_loops_come_from_back_branches():
    records = list(mlir.parse((SHARED / "ll.mlir").read_text()))
    assert [r.name for r in records if isinstance(r, Function)] == ["softmax_kernel"]
    found = instructions(records)
    fadd = [i for i in found if i.op == "llvm.fadd"]
    assert len(fadd) == 1 and fadd[0].in_loop and fadd[0].loc.line == 31
    exp = [i for i in found if i.op == "llvm.intr.exp"]
    assert exp and exp[0].in_loop and exp[0].info.kind is Kind.SPECIAL
    assert not [i for i in found if i.op == "llvm.return" and i.in_loop]
    assert not [i for i in found if i.op == "llvm.call" and i.in_loop], "malloc calls are outside"


def test_ttir_of_the_cpu_pipeline_matches_the_gpu_one():
    found = instructions(mlir.parse((SHARED / "tt.mlir").read_text()))
    assert [i.op for i in found if i.info.kind in (Kind.LOAD, Kind.STORE)] == ["tt.load", "tt.store"]
    assert all(i.lanes == 1024 for i in found if i.op in ("tt.load", "tt.store", "tt.reduce"))


def test_many_ops_parse_in_reasonable_time():
    """MLIR is buffered (the loc table comes last), so this checks cost, not laziness."""
    import time

    lines = ["tt.func @k() {"]
    lines += [f"  %a{i} = arith.addf %b, %c : tensor<64xf32> loc(#loc{i % 7})" for i in range(20000)]
    lines += ["} loc(#loc)"] + [f'#loc{i} = loc("k.py":{i + 1}:1)' for i in range(7)]
    start = time.perf_counter()
    found = instructions(mlir.parse(iter(lines)))
    assert len(found) == 20000 and found[-1].loc.line == 19999 % 7 + 1
    assert time.perf_counter() - start < 10


def test_table_refuses_a_name_listed_twice():
    from kinspect.ir.records import OpInfo

    from kinspect.isa.ops import merge

    with pytest.raises(ValueError, match="lists 'tt.dot' twice"):
        merge({"tt.dot": OpInfo(Kind.MATRIX)}, {"tt.dot": OpInfo(Kind.OTHER)}, where=table.__name__)
    assert table.OPS["tt.dot"].kind is Kind.MATRIX and table.OPS["math.exp"].kind is Kind.SPECIAL
