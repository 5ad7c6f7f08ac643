"""Pygments lexers: no Error tokens on real stages, and the pieces that matter are highlighted."""

from pathlib import Path

import pytest
from pygments.lexers import GasLexer, LlvmLexer, TextLexer
from pygments.token import Comment, Error, Keyword, Name

from kinspect.render import lexers
from kinspect.render.lexers import lexer_for
from tests.helpers import TESTS, sections

CPU = TESTS / "fixtures" / "cpu"
BLOCK = dict(BLOCK_SIZE=64)     # the size the other real-output tests compile (one compile each)


def tokens(dialect: str, text: str) -> list:
    return list(lexer_for(dialect).get_tokens(text))


def errors(dialect: str, text: str) -> list:
    """(offending text, what surrounds it) for every Error token."""
    found = []
    for index, kind, value in lexer_for(dialect).get_tokens_unprocessed(text):
        if kind in Error:
            found.append((value, text[max(0, index - 30):index + 10]))
    return found


def kinds_of(dialect: str, text: str, value: str) -> set:
    return {kind for kind, v in tokens(dialect, text) if v.strip() == value}


def triton_cpu_sections(path: Path) -> tuple[str, str]:
    """(LLVM IR, assembly) of a triton-cpu fixture."""
    found = sections(path)
    return found["LLVM IR"], found["ASM"]


# --- real stages: every character is lexed --------------------------------------------------------

@pytest.mark.parametrize("target, stage, dialect", [
    ("cuda:90", "ttir", "ttir"), ("cuda:90", "ttgir", "ttgir"), ("cuda:80", "ttgir", "ttgir"),
    ("hip:gfx942", "ttgir", "ttgir"), ("cuda:90", "llir", "llvm"), ("hip:gfx942", "llir", "llvm"),
    ("cuda:90", "ptx", "ptx"), ("cuda:80", "ptx", "ptx"), ("cuda:90", "sass", "sass"),
    ("cuda:80", "sass", "sass"), ("hip:gfx942", "amdgcn", "amdgcn"),
])
def test_no_error_tokens_on_real_stages(real_stage, target, stage, dialect):
    text = real_stage("fused_mm_softmax", target, stage, **BLOCK)
    assert errors(dialect, text) == []


def test_no_error_tokens_on_matmul(real_stage):
    for target, stage in (("cuda:90", "ttgir"), ("cuda:90", "ptx"), ("cuda:90", "sass"),
                          ("hip:gfx942", "amdgcn"), ("hip:gfx942", "ttgir")):
        dialect = {"ttgir": "ttgir", "ptx": "ptx", "sass": "sass", "amdgcn": "amdgcn"}[stage]
        assert errors(dialect, real_stage("matmul", target, stage)) == [], (target, stage)


def test_pygments_own_llvm_lexer_fails_where_ours_does_not(real_stage):
    """Why lexer_for wraps LlvmLexer: its keyword list lags LLVM (captures(none), ...)."""
    text = real_stage("fused_mm_softmax", "cuda:90", "llir", **BLOCK)
    assert [t for t, _ in LlvmLexer().get_tokens(text) if t in Error]
    assert errors("llvm", text) == []


@pytest.mark.parametrize("name", ["tt.mlir", "ttshared.mlir", "ll.mlir"])
def test_no_error_tokens_on_cpu_mlir(name):
    assert errors("mlir", (CPU / "triton-shared-riscv-softmax" / name).read_text()) == []


def test_no_error_tokens_on_cpu_llvm_and_asm():
    for path in sorted(CPU.glob("triton-cpu-*/*.asm")):
        ir, asm = triton_cpu_sections(path)
        isa = "x86" if "x86" in path.parent.name else "aarch64"
        assert errors("llvm", ir) == [], path.name
        assert errors(isa, asm) == [], path.name
    for name in ("ll.ir", "ll.opt.O2.ir"):
        assert errors("llvm", (CPU / "triton-shared-riscv-softmax" / name).read_text()) == []


# --- the pieces that matter ---------------------------------------------------------------------

def test_sass_highlights_opcodes_registers_and_markers(real_stage):
    text = real_stage("fused_mm_softmax", "cuda:90", "sass", **BLOCK)
    hgmma = {kind for kind, value in tokens("sass", text) if value.startswith("HGMMA")}
    assert hgmma == {Keyword}
    line = ('        /*0000*/                   @!P0 LDC R1, c[0x0][0x28] ;\n'
            '\t//## File "/work/main/kernels/fused_mm_softmax.py", line 16\n')
    assert kinds_of("sass", line, "/*0000*/") == {Comment.Special}
    assert kinds_of("sass", line, "@!P0") == {Name.Decorator}
    assert kinds_of("sass", line, "LDC") == {Keyword}
    assert kinds_of("sass", line, "R1") == {Name.Variable}
    assert kinds_of("sass", line, "c[0x0][0x28]") == {Name.Constant}
    assert kinds_of("sass", line, '//## File "/work/main/kernels/fused_mm_softmax.py", line 16') == {Comment.Special}
    regs = "        /*0070*/                   SHF.R.U32.HI R249, RZ, 0x5, UR4 ;\n"
    assert kinds_of("sass", regs, "RZ") == kinds_of("sass", regs, "UR4") == {Name.Variable}


def test_amdgcn_highlights_mnemonics_and_register_ranges(real_stage):
    text = real_stage("fused_mm_softmax", "hip:gfx942", "amdgcn", **BLOCK)
    mfma = {kind for kind, value in tokens("amdgcn", text) if value.startswith("v_mfma_")}
    assert mfma == {Keyword}
    line = "\tbuffer_load_dwordx4 v[2:5], v1, s[16:19], 0 offen ; load\n\t.loc\t1 11 0\n.LBB0_0:\n"
    assert kinds_of("amdgcn", line, "buffer_load_dwordx4") == {Keyword}
    assert kinds_of("amdgcn", line, "v[2:5]") == kinds_of("amdgcn", line, "s[16:19]") == {Name.Variable}
    assert kinds_of("amdgcn", line, "; load") == {Comment.Single}
    assert kinds_of("amdgcn", line, ".loc") == {Keyword.Pseudo}
    assert kinds_of("amdgcn", line, ".LBB0_0:") == {Name.Label}


def test_mlir_highlights_ops_values_and_types(real_stage):
    text = real_stage("fused_mm_softmax", "cuda:90", "ttgir", **BLOCK)
    assert kinds_of("ttgir", text, "ttng.warp_group_dot") == {Keyword}
    assert kinds_of("ttgir", text, '"tt.reduce"') == {Keyword}, "generic form, quoted"
    line = "    %c = tt.dot %a, %b, %cst : tensor<64x64xf32, #mma> loc(#loc37)\n"
    assert kinds_of("mlir", line, "%c") == {Name.Variable}
    assert kinds_of("mlir", line, "tensor") == kinds_of("mlir", line, "f32") == {Keyword.Type}
    assert kinds_of("mlir", line, "#mma") == {Name.Decorator}
    assert kinds_of("mlir", line, "#loc37") == {Comment.Preproc}


def test_ptx_guards_are_not_errors():
    text = "\t@%p1 st.global.v4.b32 [ %rd1 + 0 ], { %r1, %r2, %r3, %r4 };\n\tfence.proxy.async.shared::cta;\n"
    assert errors("ptx", text) == []
    assert kinds_of("ptx", text, "@%p1") == {Name.Decorator}


# --- lexer_for ----------------------------------------------------------------------------------

def test_lexer_for_picks_ours_pygments_or_text():
    assert isinstance(lexer_for("mlir"), lexers.MlirLexer)
    assert isinstance(lexer_for("ttgir"), lexers.MlirLexer)
    assert isinstance(lexer_for("sass"), lexers.SassLexer)
    assert isinstance(lexer_for("amdgcn"), lexers.AmdgcnLexer)
    assert isinstance(lexer_for("llvm"), LlvmLexer)
    for isa in ("riscv", "x86", "aarch64"):
        assert isinstance(lexer_for(isa), GasLexer)
    assert isinstance(lexer_for("no-such-dialect"), TextLexer)
    ptx = lexer_for("ptx")
    assert lexers.PtxLexer is None or isinstance(ptx, lexers.PtxLexer)


def test_every_parser_dialect_has_a_lexer():
    from kinspect.ir import dialects

    for dialect in dialects():
        assert not isinstance(lexer_for(dialect), TextLexer), dialect
