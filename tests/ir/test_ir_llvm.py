"""LLVM IR parser and table: Triton 3.9 llir for NVPTX/AMDGPU and the CPU backends' fixtures,
checked against llvmlite where llvmlite can read the module."""

import collections
import tracemalloc

import pytest

from kinspect.core.errors import ParseError
from kinspect.ir import llvm
from kinspect.ir.records import Access, Function, Instruction, Kind, Space
from kinspect.isa import llvm as table
from tests.helpers import BLOCK, instructions, kernel_line, sections, TESTS

CPU = TESTS / "fixtures" / "cpu"
SHARED = CPU / "triton-shared-riscv-softmax"


def triton_cpu_ir(name: str) -> str:
    """The `//===--LLVM IR---` section of a triton-cpu fixture (the `//===--ASM---` one follows)."""
    return sections(CPU / name)["LLVM IR"]


def llvmlite_opcodes(text: str) -> list[str]:
    """Opcodes of every instruction of every defined function, as llvmlite (LLVM itself) sees them."""
    binding = pytest.importorskip("llvmlite.binding")
    module = binding.parse_assembly(text)
    return [i.opcode for f in module.functions if not f.is_declaration
            for b in f.blocks for i in b.instructions]


def our_opcodes(text: str) -> list[str]:
    """Our instructions as LLVM opcodes: intrinsic and inline-asm mnemonics are calls."""
    return ["call" if r.mnemonic == "call" or "." in r.mnemonic or r.mnemonic == "asm"
            else r.mnemonic for r in instructions(llvm.parse(text))]


# --- regexes: every one has an example line above it, and the example means what it says ------

def test_module_level_examples():
    assert llvm.TRIPLE.match('target triple = "x86_64-unknown-linux-gnu"')["triple"] == "x86_64-unknown-linux-gnu"
    m = llvm.DEFINE.match("define ptx_kernel void @fused_mm_softmax_kernel(ptr addrspace(1) %0, i32 %3) "
                          "local_unnamed_addr #0 !dbg !4 {")
    assert m["name"] == "fused_mm_softmax_kernel" and "ptx_kernel" in m["head"]
    assert llvm.LABEL.match(".preheader50:                                     ; preds = %13, "
                            "%.preheader50")["label"] == ".preheader50"


def test_instruction_examples():
    m = llvm.INSTRUCTION.match("  %12 = tail call float @llvm.vector.reduce.fadd.v64f32(float "
                               "0.000000e+00, <64 x float> %11), !dbg !9")
    assert (m["result"], m["opcode"]) == ("%12", "call")
    attached = [(a["kind"], a["id"]) for a in llvm.ATTACHMENT.finditer(
        "  store <2 x float> %45, ptr %2, align 4, !dbg !12")]
    assert attached == [("dbg", "12")]
    targets = llvm.BRANCH_TARGET.findall("  br i1 %27, label %.preheader50, label %.loopexit")
    assert targets == [".preheader50", ".loopexit"]
    assert llvm.CALLEE.search("  %43 = call float @llvm.maxnum.f32(float %42, float %40)")["name"] == "llvm.maxnum.f32"
    assert llvm.FAST_MATH.search("  %r = call reassoc float @llvm.vector.reduce.fadd.v8f32(float "
                                 "-0.000000e+00, <8 x float> %v)")


def test_inline_asm_examples():
    line = ('  %67 = tail call { i32, i32 } asm sideeffect "mov.u32 $0, 0x0;\\0A\\09@$3 ld.global.v2.b32 '
            '{ $0, $1 }, [ $2 + 0 ];", "=r,=r,l,b"(ptr addrspace(1) %1, i1 true)')
    asm = llvm.INLINE_ASM.search(line)["asm"]
    assert llvm._asm_mnemonic(asm) == "ld.global.v2.b32", "the load, not the default-value movs"
    statements = llvm.ASM_STATEMENT.split("mov.u32 $0, 0x0;\\n\\t@$3 ld.global.v2.b32 { $0, $1 }, [ $2 + 0 ];")
    assert statements[0] == "mov.u32 $0, 0x0"
    m = llvm.ASM_INSTRUCTION.match("@$3 ld.global.v2.b32 { $0, $1 }, [ $2 + 0 ]")
    assert m["mnemonic"] == "ld.global.v2.b32"
    m = llvm.PTX_SHAPE.search("ld.global.v4.b32")
    assert (m["lanes"], m["bits"]) == ("4", "32")


def test_type_and_metadata_examples():
    kinds = [next(k for k, v in m.groupdict().items() if v and k in ("vector", "aggregate", "ptr", "scalar"))
             for m in llvm.TYPE.finditer("<8 x float>  <vscale x 4 x float>  { ptr, i64 }  ptr addrspace(3)  i32")]
    assert kinds == ["vector", "vector", "aggregate", "ptr", "scalar", "ptr", "scalar"]
    spaces = [m["space"] for m in llvm.ADDRSPACE.finditer("  %59 = load <2 x float>, ptr addrspace(3) %58, align 8")]
    assert spaces == ["3"]
    m = llvm.METADATA.match("!9 = !DILocation(line: 267, column: 36, scope: !10, inlinedAt: !12)")
    fields = {f["key"]: f["ref"] or f["int"] for f in llvm.FIELD.finditer(m["body"])}
    assert fields == {"line": "267", "column": "36", "scope": "10", "inlinedAt": "12"}
    m = llvm.FIELD.search('!2 = !DIFile(filename: "sum-test.py", directory: "/home/ruiqigao/ruiqi/triton-cpu/python/test/cpu")')
    assert (m["key"], m["str"]) == ("filename", "sum-test.py")
    assert llvm._unescape('C:\\5CUsers\\5Ck') == "C:\\Users\\k"
    assert llvm.ESCAPE.search('directory: "C:\\5CUsers\\5Ck"')["hex"] == "5C"


# --- single instructions --------------------------------------------------------------------------

def one(body: str, head: str = "define void @f(ptr %p) {") -> Instruction:
    found = instructions(llvm.parse(f"{head}\n{body}\n  ret void\n}}\n"))
    return found[0]


def test_vector_type_gives_lanes_width_and_unit_access():
    i = one("  %v = load <8 x float>, ptr %p, align 4")
    assert (i.lanes, i.elem_bits, i.width) == (8, 32, 256)
    assert i.info.kind is Kind.LOAD and i.info.vector and i.info.fp and i.info.access is Access.UNIT
    s = one("  store <16 x half> %v, ptr %p, align 2")
    assert (s.lanes, s.elem_bits, s.width) == (16, 16, 256) and s.info.kind is Kind.STORE
    scalar = one("  %x = fadd float %a, %b")
    assert (scalar.lanes, scalar.elem_bits, scalar.width, scalar.info.vector) == (None, 32, 32, False)


def test_reassoc_decides_whether_a_reduction_is_ordered():
    plain = one("  %r = call float @llvm.vector.reduce.fadd.v16f32(float 0.0, <16 x float> %v)")
    assert plain.mnemonic == "llvm.vector.reduce.fadd.v16f32" and plain.op == "llvm.vector.reduce.fadd"
    assert plain.info.kind is Kind.REDUCE and plain.info.ordered is True and plain.lanes == 16
    fast = one("  %r = call reassoc nsz float @llvm.vector.reduce.fadd.v16f32(float 0.0, <16 x float> %v)")
    assert fast.info.ordered is False
    assert one("  %r = call fast float @llvm.vector.reduce.fmul.v4f32(float 1.0, <4 x float> %v)").info.ordered is False
    assert one("  %r = call float @llvm.vector.reduce.fmax.v4f32(<4 x float> %v)").info.ordered is False


def test_fma_and_matrix_intrinsics():
    fma = one("  %r = call <8 x float> @llvm.fma.v8f32(<8 x float> %a, <8 x float> %b, <8 x float> %c)")
    assert fma.info.kind is Kind.FMA and fma.width == 256
    assert one("  %r = call float @llvm.fmuladd.f32(float %a, float %b, float %c)").info.kind is Kind.FMA
    assert table.lookup_intrinsic("llvm.x86.tdpbf16ps.internal")[1].unit == "amx"
    assert table.lookup_intrinsic("llvm.nvvm.wgmma.fence.sync.aligned")[1].kind is Kind.SYNC
    assert table.lookup_intrinsic("llvm.nvvm.wgmma.mma_async.sync.aligned.m64n128k16.f32.f16")[1].kind is Kind.MATRIX


def test_address_spaces_count_on_gpus_only():
    gpu = "define ptx_kernel void @k(ptr addrspace(3) %p) {"
    assert one("  %v = load float, ptr addrspace(3) %p, align 4", gpu).info.space is Space.SHARED
    assert one("  store i32 %x, ptr addrspace(5) %p, align 4", gpu).info.space is Space.LOCAL
    assert one("  %v = load float, ptr addrspace(1) %p, align 4", gpu).info.space is Space.GLOBAL
    cpu = "define void @k(ptr addrspace(3) %p) {"
    assert one("  %v = load float, ptr addrspace(3) %p, align 4", cpu).info.space is Space.NONE


def test_unknown_opcode_and_intrinsic_are_other():
    assert one("  %v = frobnicate float %a").info.kind is Kind.OTHER
    i = one("  %v = call float @llvm.made.up.intrinsic.f32(float %a)")
    assert i.info.kind is Kind.OTHER and i.mnemonic == "llvm.made.up.intrinsic.f32"
    assert one("  %v = call float @helper(float %a)").info.kind is Kind.CONTROL


def test_loops_from_back_branches():
    text = """define void @f(i1 %c) {
entry:
  %a = add i32 1, 2
  br label %loop
loop:
  %x = fadd float 1.0, 2.0
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
"""
    found = {i.mnemonic: i.in_loop for i in instructions(llvm.parse(text))}
    assert found == {"add": False, "br": True, "fadd": True, "ret": False}


def test_switch_targets_span_lines():
    text = """define void @f(i32 %x) {
  br label %head
head:
  %y = add i32 %x, 1
  switch i32 %y, label %out [
    i32 0, label %head
  ]
out:
  ret void
}
"""
    found = [(i.mnemonic, i.in_loop) for i in instructions(llvm.parse(text))]
    assert found == [("br", False), ("add", True), ("switch", True), ("ret", False)]


# --- bad input ----------------------------------------------------------------------------------

def test_empty_input_gives_nothing():
    assert list(llvm.parse("")) == []
    assert llvm.target_triple("") is None


def test_binary_data_is_a_parse_error_with_its_line():
    with pytest.raises(ParseError, match=r"line 3: binary data, not LLVM IR text") as err:
        list(llvm.parse(["; ModuleID = 'x'", "", "BC\xc0\xde\x35\x14\x00\x00\x05\x00\x00\x00"]))
    assert err.value.line == 3


def test_truncated_input_gives_what_could_be_read():
    text = triton_cpu_ir("triton-cpu-x86-avx512/dot_2x4_4x2_torch.float32.asm")
    cut = text[:text.index("  %20 = shufflevector")]
    found = list(llvm.parse(cut))
    assert [r.name for r in found if isinstance(r, Function)] == ["dot_kernel"]
    assert len(instructions(found)) == 13 and all(i.loc is None for i in instructions(found))


# --- streaming ----------------------------------------------------------------------------------

def test_functions_without_debug_info_stream():
    """100k lines: records for the first function come out long before the input is read."""
    consumed = 0

    def lines():
        nonlocal consumed
        for f in range(1000):
            yield f"define void @f{f}(ptr %p) {{"
            for i in range(97):
                consumed += 1
                yield f"  %v{i} = fadd <8 x float> %a, %b"
            yield "  ret void"
            yield "}"
            yield ""

    records = llvm.parse(lines())
    first = [next(records) for _ in range(99)]
    assert isinstance(first[0], Function) and first[0].name == "f0"
    assert consumed < 2 * 97, "parse read ahead of the first function"
    tracemalloc.start()
    rest = sum(1 for _ in records)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert rest == 1000 * 99 - 99
    assert peak < 5_000_000, f"memory grew with the input: {peak} bytes"


# --- real Triton llir -----------------------------------------------------------------------------

def test_sm90_llir_has_wgmma_on_the_dot_line(real_stage):
    text = real_stage("fused_mm_softmax", "cuda:90", "llir", **BLOCK)
    records = list(llvm.parse(text))
    assert [r.name for r in records if isinstance(r, Function)] == ["fused_mm_softmax_kernel"]
    found = instructions(records)
    wgmma = [i for i in found if i.info.kind is Kind.MATRIX]
    assert wgmma and all(i.mnemonic.startswith("wgmma.mma_async") and i.info.unit == "hgmma"
                         for i in wgmma), "Triton emits wgmma as inline asm"
    assert {i.loc.line for i in wgmma} == {kernel_line("c = tl.dot(a, b)")}
    assert all(i.loc.file.endswith("fused_mm_softmax.py") for i in wgmma)
    fences = [i for i in found if i.op == "llvm.nvvm.wgmma.fence"]
    assert fences and fences[0].info.kind is Kind.SYNC
    loads = [i for i in found if i.op == "ld.global"]
    assert loads and all(i.info.space is Space.GLOBAL and i.width == 128 for i in loads)
    shared = [i for i in found if i.op in ("load", "store") and i.info.space is Space.SHARED]
    assert shared, "addrspace(3) is shared memory on NVPTX (the llir has no triple)"
    assert llvm.target_triple(text) is None


def test_sm80_llir_uses_mma_sync(real_stage):
    found = instructions(llvm.parse(real_stage("fused_mm_softmax", "cuda:80", "llir", **BLOCK)))
    mma = [i for i in found if i.info.kind is Kind.MATRIX]
    assert mma and {i.op for i in mma} == {"mma.sync"} and {i.info.unit for i in mma} == {"hmma"}
    assert not [i for i in found if i.op.startswith("wgmma")]


def test_gfx942_llir_uses_mfma_and_buffer_loads(real_stage):
    text = real_stage("fused_mm_softmax", "hip:gfx942", "llir", **BLOCK)
    assert llvm.target_triple(text).startswith(("amdgpu", "amdgcn"))  # 3.9: amdgpu..., 3.6: amdgcn-amd-amdhsa
    found = instructions(llvm.parse(text))
    mfma = [i for i in found if i.op == "llvm.amdgcn.mfma"]
    assert mfma and all(i.info.kind is Kind.MATRIX and i.info.unit == "mfma" for i in mfma)
    assert all(i.loc.line == kernel_line("c = tl.dot(a, b)") for i in mfma)
    loads = [i for i in found if i.op == "llvm.amdgcn.raw.ptr.buffer.load"]
    assert loads and all(i.info.space is Space.GLOBAL and i.info.vector for i in loads)
    lds = [i for i in found if i.mnemonic == "load" and i.info.space is Space.SHARED]
    assert lds, "addrspace(3) is LDS on AMDGPU"


def test_matmul_llir_has_a_loop_and_matches_llvmlite(real_stage):
    text = real_stage("matmul", "cuda:90", "llir")
    found = instructions(llvm.parse(text))
    wgmma = [i for i in found if i.op == "wgmma.mma_async"]
    assert wgmma and all(i.in_loop for i in wgmma), "the K loop holds the tensor-core work"
    assert [i for i in found if not i.in_loop]
    try:
        theirs = llvmlite_opcodes(text)
    except RuntimeError as e:        # llvmlite's LLVM may be older than Triton's printer
        pytest.skip(f"llvmlite cannot read this llir: {str(e).splitlines()[1:2]}")
    assert our_opcodes(text) == theirs


# --- CPU backends --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["ll.ir", "ll.opt.O2.ir"])
def test_triton_shared_softmax_is_scalar(name):
    """Target-neutral IR with no vector width: neither -O0 nor opt -O2 made vector code."""
    text = (SHARED / name).read_text()
    found = instructions(llvm.parse(text))
    assert not [i for i in found if i.info.vector or i.lanes]
    assert our_opcodes(text) == llvmlite_opcodes(text)
    assert llvm.target_triple(text) is None
    exp = [i for i in found if i.op == "llvm.exp"]
    assert len(exp) == 1 and exp[0].in_loop and exp[0].info.kind is Kind.SPECIAL


def test_triton_shared_o2_keeps_its_loops():
    o0 = instructions(llvm.parse((SHARED / "ll.ir").read_text()))
    o2 = instructions(llvm.parse((SHARED / "ll.opt.O2.ir").read_text()))
    assert len(o2) < len(o0)
    fadd = [i for i in o2 if i.mnemonic == "fadd"]
    assert len(fadd) == 1 and fadd[0].in_loop, "the sum is a scalar loop-carried chain"


@pytest.mark.parametrize("name", sorted(p.relative_to(CPU).as_posix() for p in CPU.glob("triton-cpu-*/*.asm")))
def test_triton_cpu_ir_matches_llvmlite(name):
    text = triton_cpu_ir(name)
    assert our_opcodes(text) == llvmlite_opcodes(text)


def test_x86_dot_kernels_use_vector_ops():
    for name in ("dot_2x4_4x2_torch.float32.asm", "dot_4x8_8x4_torch.float32.asm",
                 "dot_4x16_16x4_torch.float32.asm"):
        text = triton_cpu_ir(f"triton-cpu-x86-avx512/{name}")
        assert llvm.target_triple(text) == "x86_64-unknown-linux-gnu"
        found = instructions(llvm.parse(text))
        fmul = [i for i in found if i.mnemonic == "fmul" and i.info.vector]
        assert fmul and all(i.info.fp and i.lanes in (4, 8, 16) for i in fmul)
        loads = [i for i in found if i.mnemonic == "load" and i.info.vector]
        assert loads and all(i.info.access is Access.UNIT for i in loads)


def test_triton_cpu_reductions_are_ordered():
    """triton-cpu (mid-2024) called llvm.vector.reduce.fadd without `reassoc`: an ordered
    reduction, which is why the backends turn it into a scalar add chain (vfredosum on RVV)."""
    counts = collections.Counter()
    for path in sorted(CPU.glob("triton-cpu-*/*.asm")):
        for i in instructions(llvm.parse(triton_cpu_ir(path.relative_to(CPU).as_posix()))):
            if i.op == "llvm.vector.reduce.fadd":
                counts[i.info.ordered] += 1
                assert i.info.kind is Kind.REDUCE and i.lanes in (4, 8, 16, 64)
    assert counts[True] >= 30 and counts[False] == 0
    neon = instructions(llvm.parse(triton_cpu_ir("triton-cpu-arm64-neon/sum_64_torch.float32_nomask.asm")))
    reduce = [i for i in neon if i.info.kind is Kind.REDUCE]
    assert [(i.lanes, i.elem_bits, i.width) for i in reduce] == [(64, 32, 2048)]


def test_inlined_locations_resolve_to_the_kernel():
    """The reduction is inlined from triton/language/standard.py (!9, inlinedAt !12): its
    location is the kernel's `tl.sum` line in sum-test.py."""
    text = triton_cpu_ir("triton-cpu-arm64-neon/sum_64_torch.float32_nomask.asm")
    found = instructions(llvm.parse(text))
    reduce = next(i for i in found if i.info.kind is Kind.REDUCE)
    assert (reduce.loc.file, reduce.loc.line, reduce.loc.column) == (
        "/Users/ruiqigao/workspace/ruiqi/triton-cpu/python/test/cpu/sum-test.py", 21, 17)
    assert {i.function for i in found} == {"sum_kernel"}
    assert all(i.loc is not None for i in found)


def test_tables_refuse_a_name_listed_twice():
    from kinspect.ir.records import OpInfo

    from kinspect.isa.ops import merge

    with pytest.raises(ValueError, match="lists 'fadd' twice"):
        merge({"fadd": OpInfo(Kind.ARITH)}, {"fadd": OpInfo(Kind.FMA)}, where=table.__name__)
    assert table.lookup_opcode("shufflevector").kind is Kind.MOVE
    assert table.lookup_inline_asm("st.global.v4.b32") == ("st.global", table.INLINE_ASM["st.global"])
