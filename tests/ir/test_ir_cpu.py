"""CPU assembly parsers (RISC-V, x86-64, AArch64) and their ISA tables.

Inputs are real compiler output: the triton-cpu x86/arm64 `.asm` fixtures (tests/fixtures/cpu,
see PROVENANCE.md), and RISC-V/x86/AArch64 assembly that LLVM (through llvmlite) compiles here
from the fixtures' LLVM IR. Hand-written lines are only used for single-instruction decoding.
"""

import collections
import functools
import itertools
import re
import tracemalloc
from fractions import Fraction
from pathlib import Path

import pytest

from kinspect.ir import records

from kinspect.core.errors import ParseError
from kinspect.ir import aarch64, cpu_asm, riscv, x86
from kinspect.ir.records import Access, Function, Instruction, Kind, Resource, SourceLoc, Space
from kinspect.isa import aarch64 as isa_aarch64
from kinspect.isa import riscv as isa_riscv
from kinspect.isa import x86 as isa_x86
from tests.helpers import instructions, sections, TESTS

CPU = TESTS / "fixtures" / "cpu"
X86 = CPU / "triton-cpu-x86-avx512"
ARM = CPU / "triton-cpu-arm64-neon"
SOFTMAX_IR = CPU / "triton-shared-riscv-softmax" / "ll.ir"
RV64 = "riscv64-unknown-linux-gnu"


# --- helpers ----------------------------------------------------------------------------------

def asm_section(path: Path) -> str:
    """The `//===--ASM---` section of a triton-cpu fixture (its lines keep their numbers within it)."""
    return sections(path)["ASM"]


def llvm_section(path: Path) -> str:
    """The `//===--LLVM IR---` section without its target triple and data layout."""
    ir = sections(path)["LLVM IR"]
    return re.sub(r"^target (triple|datalayout) = .*$", "", ir, flags=re.M)


@functools.lru_cache(maxsize=None)
def compile_llvm(ir: str, triple: str, cpu: str, features: str = "", opt: int = 3,
                 ir_pipeline: bool = False) -> str:
    """Assembly from LLVM IR via llvmlite (LLVM 22). ir_pipeline runs the -O3 IR passes first
    (loop vectorizer included), as `opt -O3 | llc` would; otherwise only codegen optimises."""
    llvm = pytest.importorskip("llvmlite.binding")
    llvm.initialize_all_targets()          # llvmlite 0.50: initialize() is deprecated and raises
    llvm.initialize_all_asmprinters()
    tm = llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features, opt=opt)
    module = llvm.parse_assembly(ir)
    module.triple = triple
    module.data_layout = str(tm.target_data)
    if ir_pipeline:
        pto = llvm.PipelineTuningOptions(speed_level=3)
        pto.loop_vectorization = True
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(module, pb)
    return tm.emit_assembly(module)


def softmax(triple: str, cpu: str, features: str = "", **kw) -> str:
    return compile_llvm(SOFTMAX_IR.read_text(), triple, cpu, features, **kw)


def resources(records) -> collections.Counter:
    return collections.Counter(r.name for r in records if isinstance(r, Resource))


def ops(insns) -> collections.Counter:
    return collections.Counter(i.op for i in insns)


def one(module, line: str) -> Instruction:
    [i] = instructions(module.parse(line))
    return i


def text_count(text: str, mnemonic: str) -> int:
    """Independent count: lines whose first word is `mnemonic`."""
    return sum(1 for line in text.splitlines() if line.split()[:1] == [mnemonic])


# --- regexes and shared GNU-assembler handling --------------------------------------------------

def test_directive_examples():
    assert cpu_asm.TYPE_RE.match(".type\tsum_kernel,@function")[1] == "sum_kernel"
    assert cpu_asm.GLOBAL_RE.match(".globl\t_sum_kernel")[1] == "_sum_kernel"
    m = cpu_asm.FILE_RE.match('.file\t1 "/home/ruiqigao/ruiqi/triton-cpu/python/test/cpu" "sum-test.py"')
    assert m.groups() == ("1", "/home/ruiqigao/ruiqi/triton-cpu/python/test/cpu", "sum-test.py")
    assert cpu_asm.LOC_RE.match(".loc\t1 13 42 prologue_end").groups() == ("1", "13", "42")
    m = cpu_asm.SECTION_RE.match(".section\t__TEXT,__text,regular,pure_instructions")
    assert m[1] == "__TEXT,__text"
    m = cpu_asm.SECTION_RE.match('.section\t.text.softmax_kernel,"ax",@progbits')
    assert (m[1], m[2]) == (".text.softmax_kernel", "ax")
    assert cpu_asm.LABEL_RE.match(".LBB0_2:")[1] == ".LBB0_2"
    assert cpu_asm.STATEMENT_RE.match("\tvaddss\t4(%rsi,%rax,4), %xmm0, %xmm0").groups() == (
        "vaddss", "4(%rsi,%rax,4), %xmm0, %xmm0")
    assert cpu_asm.is_local_label("Ltmp12") and cpu_asm.is_local_label(".LBB0_2")
    assert not cpu_asm.is_local_label("_sum_kernel") and not cpu_asm.is_local_label("sum_kernel")
    assert cpu_asm.split_operands("4(%rsi,%rax,4), %xmm0, %xmm0") == ("4(%rsi,%rax,4)", "%xmm0", "%xmm0")
    assert cpu_asm.split_operands("{ v0.16b-v3.16b }, [x0, #16]") == ("{ v0.16b-v3.16b }", "[x0, #16]")


def test_empty_input_gives_nothing():
    for module in (riscv, x86, aarch64):
        assert list(module.parse("")) == [] and list(module.parse([])) == []


def test_real_object_file_is_rejected_as_binary(tmp_path):
    llvm = pytest.importorskip("llvmlite.binding")
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    tm = llvm.Target.from_triple(RV64).create_target_machine(cpu="spacemit-x60", opt=2)
    module = llvm.parse_assembly(SOFTMAX_IR.read_text())
    module.triple = RV64
    obj = tmp_path / "softmax.o"
    obj.write_bytes(tm.emit_object(module))
    with obj.open("rb") as f, pytest.raises(ParseError) as err:
        list(riscv.parse(f))
    assert err.value.line == 1 and "binary data, not riscv assembly" in str(err.value)


def test_binary_line_inside_text_names_its_line():
    text = asm_section(X86 / "sum_64_torch.float32_nomask.asm").splitlines()[:20]
    junk = "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x03\x00>\x00"
    with pytest.raises(ParseError) as err:
        list(x86.parse(text + [junk] + text))
    assert err.value.line == 21 and "binary data, not x86 assembly" in str(err.value)
    # non-ASCII text is not binary
    assert not records.looks_binary("\tvaddss\t%xmm1, %xmm0, %xmm0  # 求和")


def test_unknown_mnemonics_are_other_never_guessed():
    # vfexp.v is not an RVV instruction; fexp is no A64 instruction (SVE's is fexpa)
    for module, line in ((riscv, "vfexp.v\tv8, v8"), (x86, "vexpps\t%zmm0, %zmm1"),
                         (aarch64, "fexp\tv0.4s, v1.4s")):
        i = one(module, line)
        assert i.info.kind == Kind.OTHER and not i.info.vector and i.info.unit == ""
    assert isa_riscv.lookup("vfexp.v").kind == isa_x86.lookup("frobnicate").kind == Kind.OTHER
    assert isa_riscv.lookup("VLE32.V").access == Access.UNIT        # lookup ignores case


def test_truncated_input_gives_what_was_read():
    text = asm_section(X86 / "sum_64_torch.float32_nomask.asm")
    lines = text.splitlines()
    cut = next(n for n, line in enumerate(lines) if "252(%rsi" in line)
    records = list(x86.parse(lines[:cut] + [lines[cut][:5]]))     # ends mid-mnemonic: "\tvadd"
    insns = instructions(records)
    assert [r.name for r in records if isinstance(r, Function)] == ["sum_kernel"]
    assert ops(insns)["vaddss"] == 63
    assert (insns[-1].op, insns[-1].info.kind, insns[-1].line) == ("vadd", Kind.OTHER, cut + 1)


def _many_functions(copies: int, consumed: list):
    """A lazily generated listing: the real x86 sum kernel repeated under new names."""
    body = asm_section(X86 / "sum_64_torch.float32_nomask.asm").split(".section\t.debug_abbrev")[0]
    lines = body.splitlines()
    for k in range(copies):
        for line in lines:
            consumed[0] += 1
            yield line.replace("sum_kernel", f"sum_kernel_{k}")


def test_streams_100k_lines_lazily():
    consumed = [0]
    records = x86.parse(_many_functions(1400, consumed))
    first = list(itertools.islice(records, 72))
    assert first[0] == Function(name="sum_kernel_0", line=6)
    assert consumed[0] < 3 * 80                      # about one function read ahead, not all
    counts = collections.Counter(type(r).__name__ for r in itertools.chain(first, records))
    assert consumed[0] > 100_000
    assert counts == {"Function": 1400, "Instruction": 1400 * 70}


def _peak_memory(copies: int) -> int:
    tracemalloc.start()
    for _ in x86.parse(_many_functions(copies, [0])):
        pass
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_memory_does_not_grow_with_input_length():
    small, large = _peak_memory(15), _peak_memory(150)    # 1,200 and 12,000 lines
    assert large < small * 1.5 + 100_000, (small, large)


def test_numeric_local_labels_make_loops():
    text = "f:\n\tli\ta0, 8\n1:\n\taddi\ta0, a0, -1\n\tsd\ta1, 8(sp)\n\tbnez\ta0, 1b\n\tj\t1f\n1:\n\tret\n"
    insns = instructions(riscv.parse(text))
    assert [i.in_loop for i in insns] == [False, True, True, True, False, False]
    assert insns[2].info.space == Space.STACK


# --- x86-64 (triton-cpu, AVX-512 machine) --------------------------------------------------------

def test_x86_sum_reduces_with_a_scalar_vaddss_chain():
    text = asm_section(X86 / "sum_64_torch.float32_nomask.asm")
    records = list(x86.parse(text))
    insns = instructions(records)
    assert records[0] == Function(name="sum_kernel", line=text.splitlines().index("sum_kernel:") + 1)
    adds = [i for i in insns if i.op == "vaddss"]
    assert len(adds) == text_count(text, "vaddss") == 64
    first = adds[0]
    assert (first.info.kind, first.info.vector, first.info.fp, first.info.unit) == (
        Kind.ARITH, False, True, "avx")
    assert (first.width, first.elem_bits, first.info.space) == (32, 32, Space.GLOBAL)   # folded load
    assert first.loc == SourceLoc(
        "/home/ruiqigao/ruiqi/triton-cpu/python/triton/language/standard.py", 267, 36)
    assert not any(i.info.vector and i.info.kind != Kind.ARITH for i in insns)   # only vxorps zeroing
    store = next(i for i in insns if i.op == "vmovss")
    assert store.info.kind == Kind.STORE and store.loc.line == 24


@pytest.mark.parametrize("name, muls, scalar_adds, widest", [
    ("dot_4x8_8x4_torch.float32.asm", 16, 128, 256),
    ("dot_4x16_16x4_torch.float32.asm", 16, 256, 512),
])
def test_x86_dot_multiplies_packed_but_adds_scalar(name, muls, scalar_adds, widest):
    text = asm_section(X86 / name)
    insns = instructions(x86.parse(text))
    mul = [i for i in insns if i.op == "vmulps"]
    assert len(mul) == muls and all(i.info.vector and i.info.fp and i.elem_bits == 32 for i in mul)
    assert len([i for i in insns if i.op == "vaddss" and not i.info.vector]) == scalar_adds
    assert max(i.width or 0 for i in insns if i.info.vector) == widest
    units = collections.Counter(i.info.unit for i in insns)
    assert (units["avx512"] > 0) == (widest == 512) and units["avx"] > 0
    assert not any(i.info.kind == Kind.FMA for i in insns)         # no vfmadd: mul, then adds
    assert all(i.loc is not None for i in insns if i.info.kind != Kind.CONTROL)


def test_x86_sum2d_spills_to_the_stack_and_folds_reloads():
    text = asm_section(X86 / "sum2d_4X32_torch.float32_mask.asm")
    insns = instructions(x86.parse(text))
    stack = [i for i in insns if i.info.space == Space.STACK]
    spills = [i for i in stack if i.info.vector and i.info.kind == Kind.STORE]
    folded = [i for i in stack if i.info.kind == Kind.ARITH]        # reloads folded into adds
    assert ops(spills) == {"vmovaps": 12, "vmovdqa": 1}
    assert all(i.width == 128 and i.info.access == Access.UNIT for i in spills)
    assert ops(folded) == {"vaddps": 11, "vpcmpgtd": 1}
    assert ops(i for i in stack if i.op in ("pushq", "popq")) == {"pushq": 4, "popq": 4}
    assert len(stack) - 8 == sum("(%rsp)" in line for line in text.splitlines())
    assert not any(i.in_loop for i in insns)                     # straight-line code
    assert {i.info.unit for i in insns if i.op.startswith("k")} == {"avx512"}
    consts = [i for i in insns if i.info.space == Space.CONSTANT]
    assert consts and all(".LCPI" in text.splitlines()[i.line - 1] for i in consts)


def test_x86_decoding_examples():
    i = one(x86, "vmovups\t(%rdi), %zmm0")
    assert (i.info.kind, i.info.unit, i.width, i.elem_bits, i.lanes) == (Kind.LOAD, "avx512", 512, 32, 16)
    i = one(x86, "vaddps\t%zmm1, %zmm0, %zmm0 {%k1} {z}")
    assert (i.info.kind, i.info.unit, i.width) == (Kind.ARITH, "avx512", 512)
    assert one(x86, "vpaddd\t%xmm16, %xmm1, %xmm1").info.unit == "avx512"     # EVEX-only register
    assert one(x86, "addps\t%xmm1, %xmm0").info.unit == "sse"
    i = one(x86, "vfmadd231ps\t%ymm1, %ymm2, %ymm0")
    assert (i.info.kind, i.info.fp, i.width, i.lanes) == (Kind.FMA, True, 256, 8)
    assert one(x86, "vfmadd231ss\t%xmm1, %xmm2, %xmm0").info.vector is False
    assert one(x86, "vhaddps\t%ymm0, %ymm0, %ymm0").info.kind == Kind.REDUCE
    i = one(x86, "vgatherdps\t(%rdi,%zmm1,4), %zmm0 {%k1}")
    assert (i.info.kind, i.info.access) == (Kind.LOAD, Access.INDEXED)
    i = one(x86, "tdpbf16ps\t%tmm2, %tmm1, %tmm0")
    assert (i.info.kind, i.info.unit) == (Kind.MATRIX, "amx")
    i = one(x86, "tileloadd\t(%rdi,%rsi), %tmm0")
    assert (i.info.kind, i.info.space) == (Kind.LOAD, Space.TENSOR)
    assert one(x86, "ldtilecfg\t(%rdi)").info.kind == Kind.CONFIG
    i = one(x86, "movq\t-64(%rbp), %rax")
    assert (i.info.kind, i.info.space, i.width) == (Kind.LOAD, Space.GLOBAL, 64)   # no frame set up
    assert one(x86, "movl\t8(%rbx), %eax  # 4-byte Reload").info.space == Space.STACK
    assert one(x86, "movq\t%fs:40, %rax").info.kind == Kind.LOAD
    assert one(x86, "leaq\t8(%rsp), %rax").info.space == Space.NONE
    i = one(x86, "lock\tcmpxchgl\t%ecx, (%rdi)")
    assert (i.mnemonic, i.op, i.info.kind) == ("lock cmpxchgl", "cmpxchgl", Kind.ATOMIC)
    assert one(x86, "vextractf32x4\t$1, %zmm0, %xmm1").info.unit == "avx512"
    assert one(x86, "movslq\t%edx, %rax").info.kind == Kind.CONVERT


@pytest.mark.parametrize("line, callee", [
    ("callq\t*expf@GOTPCREL(%rip)", "expf"), ("callq\texpf@PLT", "expf"),
    ("jmp\tSleef_expf16_u10@PLT", "Sleef_expf16_u10"), ("callq\t*%rax", "*"),
])
def test_x86_calls_keep_the_callee(line, callee):
    assert resources(x86.parse(line)) == {f"call:{callee}": 1}


def test_x86_intel_syntax_is_rejected():
    with pytest.raises(ParseError, match="Intel-syntax"):
        list(x86.parse("\t.intel_syntax noprefix\n\tmov\teax, 1\n"))
    with pytest.raises(ParseError) as err:
        list(x86.parse("f:\n\tmov\teax, DWORD PTR [rbp - 4]\n"))
    assert err.value.line == 2


# --- AArch64 (triton-cpu on Apple arm64: Mach-O, `add.16b` syntax) ------------------------------

def test_arm64_sum_loads_neon_but_adds_scalar():
    text = asm_section(ARM / "sum_64_torch.float32_nomask.asm")
    records = list(aarch64.parse(text))
    insns = instructions(records)
    assert [r.name for r in records if isinstance(r, Function)] == ["_sum_kernel"]
    loads = [i for i in insns if i.op == "ldr"]
    assert len(loads) == 16 and all(
        (i.info.kind, i.info.vector, i.info.unit, i.width, i.info.access) ==
        (Kind.LOAD, True, "neon", 128, Access.UNIT) for i in loads)
    adds = [i for i in insns if i.op == "fadd"]
    assert len(adds) == text_count(text, "fadd") == 64
    assert all(not i.info.vector and i.info.fp and i.width == 32 for i in adds)
    lanes = [i for i in insns if i.op == "mov" and i.info.vector]        # mov s1, v0[1]
    assert len(lanes) == 48 and {(i.width, i.lanes) for i in lanes} == {(32, 1)}
    assert not any(i.info.kind == Kind.REDUCE for i in insns)
    assert adds[0].loc.file.endswith("triton/language/standard.py") and adds[0].loc.line == 267


def test_arm64_int8_sum_uses_a_neon_reduction():
    insns = instructions(aarch64.parse(asm_section(ARM / "sum_128_torch.int8_nomask.asm")))
    [addv] = [i for i in insns if i.info.kind == Kind.REDUCE]
    assert (addv.mnemonic, addv.op, addv.width, addv.elem_bits, addv.lanes, addv.info.ordered) == (
        "addv.16b", "addv", 128, 8, 16, False)
    assert {i.width for i in insns if i.op == "ldp"} == {256}
    [store] = [i for i in insns if i.info.kind == Kind.STORE]
    assert (store.mnemonic, store.width) == ("st1.b", 8)                 # one lane


def test_arm64_masked_sum_backward_branches_are_not_loops():
    text = asm_section(ARM / "sum_64_torch.float32_mask.asm")
    insns = instructions(aarch64.parse(text))
    lines = text.splitlines()
    label_at = {line[:-1]: n for n, line in enumerate(lines, 1) if re.match(r"^LBB\d+_\d+:$", line)}
    backward = [i for i in insns if i.info.kind == Kind.CONTROL and i.op != "ret"
                and label_at.get(lines[i.line - 1].split()[-1], 10**9) < i.line]
    assert len(backward) > 20                       # out-of-line blocks jump back ...
    assert not any(i.in_loop for i in insns)        # ... but the CFG has no cycle
    lane_loads = [i for i in insns if i.mnemonic == "ld1.s"]
    assert len(lane_loads) == 63 and {(i.width, i.elem_bits, i.lanes) for i in lane_loads} == {(32, 32, 1)}
    consts = [i for i in insns if i.info.space == Space.CONSTANT]
    assert len(consts) == 17 and {i.op for i in consts} == {"ldr"}


def test_aarch64_decoding_examples():
    apple, generic = one(aarch64, "fadd.4s\tv0, v1, v2"), one(aarch64, "fadd\tv0.4s, v1.4s, v2.4s")
    assert (apple.op, apple.info, apple.width, apple.lanes) == (generic.op, generic.info, 128, 4)
    assert one(aarch64, "add.16b\tv0, v1, v2").elem_bits == 8
    i = one(aarch64, "ld1\t{ v0.16b-v3.16b }, [x0]")
    assert (i.info.kind, i.width) == (Kind.LOAD, 512)
    i = one(aarch64, "ldp\tq0, q1, [x0, #32]")
    assert (i.width, i.info.unit) == (256, "neon")
    assert one(aarch64, "str\tq0, [sp, #16]").info.space == Space.STACK
    i = one(aarch64, "ldr\ts0, [x8]")
    assert (i.info.vector, i.info.fp, i.width) == (False, True, 32)
    i = one(aarch64, "ld1w\t{ z0.s }, p0/z, [x0, x1, lsl #2]")
    assert (i.info.unit, i.info.access, i.elem_bits, i.width) == ("sve", Access.UNIT, 32, None)
    assert one(aarch64, "ld1w\t{ z0.s }, p0/z, [x0, z1.s, sxtw #2]").info.access == Access.INDEXED
    assert one(aarch64, "fadda\ts0, p0, s0, z1.s").info.ordered is True      # strictly ordered
    assert one(aarch64, "faddv\ts0, p0, z1.s").info.ordered is False         # tree
    i = one(aarch64, "fmopa\tza0.s, p0/m, p1/m, z0.s, z1.s")
    assert (i.info.kind, i.info.unit) == (Kind.MATRIX, "sme")
    i = one(aarch64, "whilelo\tp0.s, x8, x9")
    assert (i.info.kind, i.info.unit) == (Kind.CONFIG, "sve")
    assert one(aarch64, "fmla\tv0.4s, v1.4s, v2.s[1]").info.kind == Kind.FMA
    assert one(aarch64, "b.eq\tLBB0_2").info.kind == Kind.CONTROL


# --- RISC-V (LLVM 22 via llvmlite, from the triton-shared softmax and a triton-cpu dot) --------

def test_softmax_generic_rv64_is_scalar():
    text = softmax(RV64, "generic-rv64", "+m,+a,+f,+d,+c")
    records = list(riscv.parse(text))
    insns = instructions(records)
    assert [r.name for r in records if isinstance(r, Function)] == ["softmax_kernel"]
    assert not any(i.info.vector for i in insns)
    fp = ops(i for i in insns if i.info.fp and i.info.kind == Kind.ARITH)
    assert fp == {"fmax.s": 1, "fsub.s": 1, "fadd.s": 1, "fdiv.s": 1}
    assert all(i.in_loop for i in insns if i.op in fp)
    assert resources(records) == {"call:*": text_count(text, "jalr")}   # malloc, expf via pointers


def test_softmax_x60_codegen_only_vectorises_a_descriptor_copy():
    records = list(riscv.parse(softmax(RV64, "spacemit-x60")))
    vector = [i for i in instructions(records) if i.info.vector]
    assert [(i.op, i.elem_bits) for i in vector] == [("vsetivli", 64), ("vle64.v", 64), ("vse64.v", 64)]
    assert resources(records)["vtype:e64,m1"] == 1


def test_softmax_x60_loop_vectorised():
    records = list(riscv.parse(softmax(RV64, "spacemit-x60", ir_pipeline=True)))
    insns = instructions(records)
    unit_loads = [i for i in insns if i.op == "vle32.v"]
    assert len(unit_loads) == 5 and all(i.in_loop and i.info.access == Access.UNIT for i in unit_loads)
    assert all(i.in_loop for i in insns if i.op == "vse32.v")
    [red] = [i for i in insns if i.info.kind == Kind.REDUCE]
    assert (red.op, red.info.ordered, red.in_loop) == ("vfredmax.vs", False, False)
    [add] = [i for i in insns if i.op == "fadd.s"]      # the sum stays a sequential scalar loop
    assert add.in_loop and not add.info.vector
    assert resources(records)["vtype:e32,m2"] > 0


def test_triton_cpu_dot_on_x60_reduces_in_order():
    text = compile_llvm(llvm_section(X86 / "dot_4x8_8x4_torch.float32.asm"), RV64, "spacemit-x60")
    records = list(riscv.parse(text))
    insns = instructions(records)
    red = [i for i in insns if i.info.kind == Kind.REDUCE]
    assert len(red) == text_count(text, "vfredosum.vs") == 16
    assert all(i.op == "vfredosum.vs" and i.info.ordered and i.info.fp for i in red)
    assert not any(i.info.kind == Kind.FMA for i in insns)          # no vfmacc
    assert ops(insns)["vfmul.vv"] == 16
    vset = [i for i in insns if i.op.startswith("vset")]
    vtypes = {k: v for k, v in resources(records).items() if k.startswith("vtype:")}
    assert sum(vtypes.values()) == len(vset) and set(vtypes) == {"vtype:e32,m1", "vtype:e32,mf2"}
    assert all(i.elem_bits == 32 for i in vset)
    assert red[0].loc.file.endswith("dot-test.py")                # .loc survives the retarget


@pytest.mark.parametrize("module, triple, cpu", [
    (riscv, RV64, "spacemit-x60"),
    (x86, "x86_64-unknown-linux-gnu", "x86-64"),
    (aarch64, "aarch64-unknown-linux-gnu", "neoverse-v1"),
])
def test_unoptimised_code_spills_inside_loops(module, triple, cpu):
    """-O0 keeps every value in a frame slot: stack loads/stores inside the softmax loops."""
    insns = instructions(module.parse(softmax(triple, cpu, opt=0)))
    stack = [i for i in insns if i.info.space == Space.STACK and i.info.kind in (Kind.LOAD, Kind.STORE)]
    assert sum(i.in_loop for i in stack) > 20
    assert sum(not i.in_loop for i in stack) > 20


def test_riscv_calls_and_aarch64_direct_calls():
    records = list(aarch64.parse(softmax("aarch64-unknown-linux-gnu", "neoverse-v1")))
    assert resources(records) == {"call:malloc": 4, "call:memrefCopy": 2, "call:expf": 1}
    assert resources(riscv.parse("\tcall\texpf\n\ttail\tSleef_expf8_u10@plt\n\tjalr\ts7\n")) == {
        "call:expf": 1, "call:Sleef_expf8_u10": 1, "call:*": 1}


def test_riscv_decoding_examples():
    i = one(riscv, "vle32.v\tv8, (a0), v0.t")                       # the mask is not in the op
    assert (i.op, i.info.access, i.elem_bits, i.info.unit) == ("vle32.v", Access.UNIT, 32, "rvv")
    assert one(riscv, "vlse32.v\tv8, (a0), a1").info.access == Access.STRIDED
    i = one(riscv, "vluxei32.v\tv8, (a0), v12")
    assert (i.info.access, i.elem_bits) == (Access.INDEXED, None)    # 32 is the index width
    assert one(riscv, "vfmacc.vf\tv8, fa0, v12").info.kind == Kind.FMA
    assert one(riscv, "vfredusum.vs\tv8, v8, v9").info.ordered is False
    i = one(riscv, "smt.vmadot\tv16, v0, v8")
    assert (i.info.kind, i.info.unit) == (Kind.MATRIX, "ime")
    i = one(riscv, "fsd\tfs0, 0(sp)")
    assert (i.info.kind, i.info.space, i.info.fp, i.width) == (Kind.STORE, Space.STACK, True, 64)
    i = one(riscv, "vs1r.v\tv8, (a0)  # Unknown-size Folded Spill")  # LLVM's spill comment
    assert (i.info.kind, i.info.space) == (Kind.STORE, Space.STACK)
    assert one(riscv, "ld\ts7, %pcrel_lo(.Lpcrel_hi0)(a0)").info.space == Space.GLOBAL
    i = one(riscv, "fmadd.s\tfa0, fa1, fa2, fa3")
    assert (i.info.kind, i.info.fp, i.elem_bits) == (Kind.FMA, True, 32)
    records = list(riscv.parse("vsetvli\ta0, a1, e32, m1, ta, ma\nvsetvl\ta0, a1, a2\n"))
    assert resources(records) == {"vtype:e32,m1": 1, "vtype:dynamic": 1}


def test_vtype():
    assert riscv.vtype("a0, a1, e32, m1, ta, ma") == (32, Fraction(1), True, True)
    assert riscv.vtype(["zero", "4", "e32", "mf2", "tu", "ma"]) == (32, Fraction(1, 2), False, True)
    assert riscv.vtype("zero, 8, e16, m4") == (16, Fraction(4), False, False)   # v0.9 style
    assert riscv.vtype("a0, a1, a2") is None                                    # vsetvl


# --- ISA tables: every rule is reachable and says what the manual says --------------------------

RULE_EXAMPLES = {
    isa_riscv: {
        "vle16ff.v": Kind.LOAD, "vse64.v": Kind.STORE, "vlse8.v": Kind.LOAD, "vsse32.v": Kind.STORE,
        "vloxei16.v": Kind.LOAD, "vsuxei64.v": Kind.STORE, "vlseg3e32.v": Kind.LOAD,
        "vsseg2e16.v": Kind.STORE, "vlsseg4e8.v": Kind.LOAD, "vssseg2e64.v": Kind.STORE,
        "vluxseg2ei32.v": Kind.LOAD, "vsoxseg3ei8.v": Kind.STORE, "vl2re32.v": Kind.LOAD,
        "vl1r.v": Kind.LOAD, "vs4r.v": Kind.STORE, "fmax.d": Kind.ARITH, "fnmsub.h": Kind.FMA,
        "fcvt.s.w": Kind.CONVERT, "fmv.x.w": Kind.MOVE, "fli.s": Kind.MOVE,
        "amoadd.w.aqrl": Kind.ATOMIC,
    },
    isa_x86: {
        "vfmadd213pd": Kind.FMA, "vfnmadd231ss": Kind.FMA, "haddps": Kind.REDUCE,
        "vrsqrt14ps": Kind.SPECIAL, "rcpss": Kind.SPECIAL, "vcmpltps": Kind.ARITH,
        "ucomiss": Kind.ARITH, "vmovsd": Kind.MOVE, "vpermilps": Kind.MOVE, "vinsertps": Kind.MOVE,
        "vinsertf128": Kind.MOVE, "cvttss2si": Kind.CONVERT, "vcvtps2ph": Kind.CONVERT,
        "phaddd": Kind.REDUCE, "vpmulld": Kind.ARITH, "vpxor": Kind.ARITH, "punpcklqdq": Kind.MOVE,
        "vpshufb": Kind.MOVE, "vpblendd": Kind.MOVE, "vpermt2d": Kind.MOVE,
        "vpbroadcastd": Kind.MOVE, "vpmovd2m": Kind.MOVE, "vpextrb": Kind.MOVE,
        "pmovmskb": Kind.MOVE, "vmovdqu64": Kind.MOVE, "vpmaskmovd": Kind.MOVE,
        "vpmovzxbd": Kind.CONVERT, "packuswb": Kind.CONVERT, "vpgatherdd": Kind.LOAD,
        "vscatterdps": Kind.STORE, "kortestw": Kind.ARITH, "kmovw": Kind.MOVE, "jne": Kind.CONTROL,
        "setae": Kind.ARITH, "cmovlq": Kind.MOVE, "fldl": Kind.LOAD, "fstps": Kind.STORE,
        "faddp": Kind.ARITH, "fxch": Kind.MOVE,
    },
    isa_aarch64: {
        "b.ne": Kind.CONTROL, "ldff1w": Kind.LOAD, "ld3d": Kind.LOAD, "stnt1b": Kind.STORE,
        "st4w": Kind.STORE, "ldaddal": Kind.ATOMIC, "casb": Kind.ATOMIC, "ldaxr": Kind.ATOMIC,
    },
}


@pytest.mark.parametrize("isa", list(RULE_EXAMPLES), ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_every_table_rule_is_reachable(isa):
    examples = RULE_EXAMPLES[isa]
    for op, kind in examples.items():
        assert isa.classify(op).info.kind == kind, op
    first = {next((k for k, (pattern, _) in enumerate(isa.RULES) if pattern.match(op)), None)
             for op in examples if op not in getattr(isa, "EXACT", {})}
    assert first >= set(range(len(isa.RULES))), f"rules with no example: {set(range(len(isa.RULES))) - first}"


def test_tables_state_element_bits():
    assert isa_riscv.classify("vle16.v").bits == 16 and isa_riscv.classify("fld").bits == 64
    assert isa_riscv.classify("c.lwsp") == isa_riscv.classify("lw")        # compressed forms
    assert isa_x86.classify("vaddpd").bits == 64 and isa_x86.classify("imull").bits == 32
    assert isa_x86.classify("vpaddw").bits == 16 and isa_x86.classify("vaddph").bits == 16
    assert isa_aarch64.classify("ld1sh").bits == 16 and isa_aarch64.classify("ldrsw").bits == 32


def test_reductions_say_whether_they_are_ordered():
    for op in ("vfredosum.vs", "vfwredosum.vs"):
        assert isa_riscv.lookup(op).ordered is True
    for op in ("vfredusum.vs", "vfredmax.vs", "vfredmin.vs", "vredsum.vs"):
        assert isa_riscv.lookup(op).ordered is False
    assert isa_aarch64.lookup("fadda").ordered is True and isa_aarch64.lookup("faddp").ordered is False
    assert isa_x86.lookup("vhaddps").ordered is False


def test_nops_are_known_and_do_no_work():
    for module, line in ((x86, "nopw\t%cs:(%rax,%rax)"), (riscv, "nop"), (aarch64, "nop")):
        i = one(module, line)
        assert (i.info.kind, i.info.space) == (Kind.NOP, Space.NONE)       # no memory access
