"""spine-triton's IR and the board's question: where a tl.dot went on a CPU backend, spine-triton's
dialects in the MLIR table, the folder `vec-report` reads with no argument, the retarget presets."""

import shutil
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl
from click.testing import CliRunner

from kinspect import api
from kinspect.analysis import analyse
from kinspect.cli import main
from kinspect.ir import parse
from kinspect.ir.records import Instruction, Kind
from kinspect.core.model import SourceRef, StageFile, Target, Variant
from tests.conftest import CPU_FIXTURES

SHARED = CPU_FIXTURES / "triton-shared-riscv-softmax"
X86_DOT = CPU_FIXTURES / "triton-cpu-x86-avx512" / "dot_4x8_8x4_torch.float32.asm"


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], c)


# The Linalg spine-triton makes of a tl.dot: a plain one becomes linalg.matmul, an smt.dot the packed
# linalg.mmt4d (spine-triton's wiki and forum; written for this test: no spine-triton runs here).
LINALG = {
    "matmul": '#loc5 = loc("{file}":{line}:8)\n'
              '%c = linalg.matmul ins(%a, %b : tensor<16x16xf32>, tensor<16x16xf32>) '
              'outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32> loc(#loc5)\n',
    "mmt4d": '#loc5 = loc("{file}":{line}:8)\n'
             '%c = linalg.mmt4d ins(%pa, %pb : tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) '
             'outs(%pz : tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32> loc(#loc5)\n',
    "loops": '#loc5 = loc("{file}":{line}:8)\n'
             '%s = arith.mulf %x, %y : f32 loc(#loc5)\n%t = arith.addf %s, %acc : f32 loc(#loc5)\n',
}


@pytest.fixture(scope="module")
def ttir(tmp_path_factory, real_variant):
    """The real TTIR of a tl.dot kernel (Triton's front end; the same on every backend), its file and line."""
    from kinspect.compile.variant import compile_variant
    from kinspect.compile.targets import resolve

    out = tmp_path_factory.mktemp("dot")
    t = lambda: torch.empty(256)
    v = compile_variant(dot_kernel, args=dict(a_ptr=t(), b_ptr=t(), c_ptr=t()), constexprs=dict(BLOCK=16),
                        grid=(1,), resolved=resolve("cuda:90"), out_dir=out, group="dot")
    line = dot_kernel.starting_line_number + [i for i, ln in enumerate(dot_kernel.raw_src) if "tl.dot" in ln][0]
    return Path(v.path, v.stage("ttir").file), __file__, line


def _cpu_variant(tmp_path, ttir_path, linalg: str, asm_variant, arch: str = "riscv64") -> Variant:
    folder = tmp_path / "v"
    folder.mkdir()
    shutil.copyfile(ttir_path, folder / "k.ttir")
    (folder / "k.linalgdir").write_text(linalg)
    asm = asm_variant.stage("asm")
    shutil.copyfile(Path(asm_variant.path or "", asm.file), folder / "k.asm")
    stages = (StageFile("ttir", "k.ttir", 0, None, "mlir"), StageFile("linalgdir", "k.linalgdir", 0, None, "mlir"),
              StageFile("asm", "k.asm", 0, None, "riscv"))
    source = SourceRef(file=__file__, line=dot_kernel.starting_line_number, text="".join(dot_kernel.raw_src))
    return Variant(kernel="dot_kernel", hash="h", target=Target("cpu", arch), offline=True, signature={},
                   constexprs={}, attributes={}, options={}, stages=stages, times=None, cache_hit=False,
                   triton_version="", origin="spine-dump", path=str(folder), backend="spine-triton",
                   source=source)


@pytest.fixture(scope="module")
def x60_dot():
    """A real dot's machine code for the X60: triton-cpu's dot IR compiled by LLVM for spacemit-x60."""
    from kinspect.files.sources import read_file

    return api.retargeted(read_file(X86_DOT), "spacemit-x60")


@pytest.mark.parametrize("form, words", [
    ("matmul", "linalg.matmul, unpacked in linalgdir"),
    ("mmt4d", "linalg.mmt4d: packed tiles for the matrix engine in linalgdir"),
    ("loops", "no matrix op: a loop nest of multiplies and adds in linalgdir"),
])
def test_where_a_dot_went(tmp_path, ttir, x60_dot, form, words):
    path, file, line = ttir
    v = _cpu_variant(tmp_path, path, LINALG[form].format(file=file, line=line), x60_dot)
    [dot] = [x for x in analyse(v).verdicts if x.text.endswith("in the riscv code")]
    assert dot.text.startswith(f"line {line} c = tl.dot(a, b) → ") and words in dot.text, dot.text
    assert dot.text.endswith("no matrix unit in the riscv code") and "vector multiplies" in dot.text


@pytest.mark.parametrize("arch, why", [("spacemit-x60", "the X60's IME is integer-only"),
                                       ("spacemit-a100", "the dot runs on RVV on this spacemit-a100 code")])
def test_an_fp_dot_without_ime_says_why_for_its_core(tmp_path, ttir, x60_dot, arch, why):
    path, file, line = ttir
    v = _cpu_variant(tmp_path, path, LINALG["matmul"].format(file=file, line=line), x60_dot, arch)
    [ime] = [x for x in analyse(v).verdicts if "IME" in x.text]
    assert ime.text.startswith(f"line {line} c = tl.dot(a, b): no IME (smt.vmadot): {why}"), ime.text
    assert ime.line == line


# An int8 micro-kernel as LLVM prints XSMTVDot (the K1's IME): smt.vmadot accumulates a 4x8 by 8x4
# int8 tile product into int32 (riscv-ime-extension-spec). LLVM does not emit these from IR by
# itself; spine-opt does for an int8 smt.dot, so this is written for the test in LLVM's syntax.
IME_ASM = """\t.text
\t.file\t1 "{dir}" "{name}"
\t.globl\tmm_i8
\t.type\tmm_i8,@function
mm_i8:
\tvsetvli\tt0, zero, e8, m1, ta, ma
.LBB0_1:
\tvle8.v\tv0, (a0)
\tvle8.v\tv1, (a1)
\tvle8.v\tv2, (a2)
\t.loc\t1 {line} 0
\tsmt.vmadot\tv28, v0, v1
\tsmt.vmadot\tv30, v0, v2
\tsmt.vmadot1\tv24, v0, v1
\tsmt.vmadotsu\tv26, v0, v2
\taddi\ta3, a3, -1
\tbnez\ta3, .LBB0_1
\tvsetvli\tt0, zero, e32, m2, ta, ma
\tvse32.v\tv28, (a4)
\tret
"""


def test_ime_instructions_answer_where_an_int8_dot_went(tmp_path, ttir):
    from kinspect.files.sources import read_file

    path, file, line = ttir
    (tmp_path / "mm_i8.s").write_text(IME_ASM.format(dir=Path(file).parent, name=Path(file).name, line=line))
    v = _cpu_variant(tmp_path, path, LINALG["mmt4d"].format(file=file, line=line), read_file(tmp_path / "mm_i8.s"))
    r = analyse(v)
    assert r.isa.matrix == {"ime": 4} and r.isa.matrix_total == 4
    texts = [x.text for x in r.verdicts]
    assert "IME used: smt.vmadot 2, smt.vmadot1 1, smt.vmadotsu 1" in texts, texts
    [dot] = [t for t in texts if t.endswith("in the riscv code")]
    assert "linalg.mmt4d: packed tiles for the matrix engine in linalgdir → 4 IME (smt.vmadot)" in dot, dot
    assert not [t for t in texts if "no IME" in t or "no Python lines" in t], texts
    [ime_line] = [x for x in r.verdicts if x.line == line and "IME (smt.vmadot)" in x.text and "→" in x.text
                  and "linalg" not in x.text]
    assert ime_line.text.startswith(f"line {line} c = tl.dot(a, b) → 4 IME (smt.vmadot)"), ime_line.text


def test_spine_dialects_are_in_the_mlir_table():
    """Ops as spine-triton 3.6's XSMT/XSMTAsync/TLE .td files name them, in the generic form MLIR
    prints an op its reader does not know (written for this test: no spine-triton runs here)."""
    text = ('%p = "xsmt.pack"(%a) <{packed_size = array<i64: 8, 8>}> : (tensor<16x16xf32>) -> tensor<2x2x8x8xf32>\n'
            '%c = "xsmt.mmt4d"(%p, %q, %z) : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<16x16xf32>)'
            ' -> tensor<16x16xf32>\n'
            '%t = "tle.extract_tile"(%x, %i) : (tensor<16x16xf32>, i32) -> tensor<8x8xf32>\n'
            '"xsmt_async.mbarrier_wait"(%b, %f) : (!tt.ptr<i64>, i32) -> ()\n'
            '%m = linalg.mmt4d ins(%pa, %pb : tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) '
            'outs(%pz : tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>\n'
            '%y = linalg.pack %x inner_dims_pos = [0, 1] inner_tiles = [8, 8] into %d : tensor<16x16xf32> '
            '-> tensor<2x2x8x8xf32>\n')
    found = {r.op: r.info for r in parse("mlir", text.splitlines(True)) if isinstance(r, Instruction)}
    assert {op: i.kind for op, i in found.items()} == {
        "xsmt.pack": Kind.MOVE, "xsmt.mmt4d": Kind.MATRIX, "tle.extract_tile": Kind.MOVE,
        "xsmt_async.mbarrier_wait": Kind.SYNC, "linalg.mmt4d": Kind.MATRIX, "linalg.pack": Kind.MOVE}
    assert found["xsmt.mmt4d"].unit == found["linalg.mmt4d"].unit == "mmt4d"


def test_vec_report_with_no_argument_reads_the_spine_dump(tmp_path, monkeypatch):
    """On the board: SPINE_TRITON_DUMP_PATH set (the run dumped its stages there) and no kinspect-out."""
    dump = tmp_path / "dump"
    dump.mkdir()
    for src, name in (("tt.mlir", "softmax_kernel_tt.mlir"), ("ttshared.mlir", "softmax_kernel_linalg.mlir"),
                      ("ll.ir", "softmax_kernel_.ll")):
        shutil.copyfile(SHARED / src, dump / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPINE_TRITON_DUMP_PATH", str(dump))
    r = CliRunner().invoke(main, ["vec-report", "--json"])
    assert r.exit_code == 0, r.output
    import json

    [rep] = json.loads(r.stdout)
    assert rep["kernel"] == "softmax_kernel" and rep["backend"] == "spine-triton" and rep["path"] == str(dump)


def test_vec_report_with_no_argument_reads_the_later_per_kernel_dump(tmp_path, monkeypatch):
    """spine-triton releases after 3.6.0+spacemit.a5 dump into SPINE_TRITON_DUMP_PATH/<kernel>/ as
    <kernel>.ttir, .linalgdir, .ll and .s (its tutorial's "IR dump" section)."""
    import json

    dump = tmp_path / "ir_dumps"
    (dump / "softmax_kernel").mkdir(parents=True)
    for src, ext in (("tt.mlir", "ttir"), ("ttshared.mlir", "linalgdir"), ("ll.ir", "ll")):
        shutil.copyfile(SHARED / src, dump / "softmax_kernel" / f"softmax_kernel.{ext}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPINE_TRITON_DUMP_PATH", str(dump))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "elsewhere"))
    r = CliRunner().invoke(main, ["vec-report", "--json"])
    assert r.exit_code == 0, r.output
    [rep] = json.loads(r.stdout)
    assert rep["kernel"] == "softmax_kernel" and rep["backend"] == "spine-triton"
    assert rep["path"] == str(dump / "softmax_kernel") and rep["isa"] == "riscv"


def test_a_spine_triton_preset_with_its_llc_flags():
    """spine-triton 3.6.0+spacemit.a5 passes -mcpu=spacemit-x60 and an -mattr list that LLVM 22's X60
    model already holds: the preset's code is the X60 model's with the forced vector width."""
    from kinspect.backends import retarget

    t = retarget.parse("spine-triton")
    assert t.cpu == "spacemit-x60" and "+v" in t.features and "+zvfh" in t.features
    assert dict(t.options) == {"force-vector-width": 32, "force-vector-interleave": 2}
    ir = (SHARED / "ll.ir").read_text()
    out = retarget.compile_ir(ir, t)
    assert "vsetvli" in out.asm and not [r for r in out.remarks if "not a recognized" in r]
    assert out.asm == retarget.compile_ir(ir, retarget.parse("spacemit-x60-spine")).asm


def test_llvm_22_has_no_x100_model_and_the_nearest_preset_compiles():
    """If llvmlite's LLVM gains SpacemiT's X100 or A100, this fails: give them presets then."""
    from kinspect.backends import retarget
    from kinspect.core.errors import UsageError

    ir = (SHARED / "ll.ir").read_text()
    for cpu in ("spacemit-x100", "spacemit-a100"):
        with pytest.raises(UsageError, match="not a recognized processor"):
            retarget.compile_ir(ir, retarget.CpuTarget(cpu, retarget.RISCV, cpu))
    out = retarget.compile_ir(ir, retarget.parse("rva23-vlen256"))
    assert "vsetvli" in out.asm and not [r for r in out.remarks if "not a recognized" in r]


def test_every_ime_mnemonic_of_spacemits_spec_is_a_matrix_instruction():
    """riscv-ime-extension-spec's instruction description: integer vmadot with its sign forms and
    sliding windows 1-3 and n, and the fp vfmadot forms (not on the X60), as `smt.` mnemonics."""
    from kinspect.isa import riscv

    names = [f"smt.vmadot{w}{s}" for w in ("", "1", "2", "3", "n") for s in ("", "u", "su", "us")]
    fp = [f"smt.vfmadot{w}" for w in ("", "1", "2", "3", "n")]
    for op in names + fp:
        info = riscv.lookup(op)
        assert (info.kind, info.unit, info.fp) == (Kind.MATRIX, "ime", op in fp), op
