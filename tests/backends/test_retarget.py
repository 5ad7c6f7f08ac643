"""--retarget: a variant's LLVM IR compiled with llvmlite for other CPUs, reported beside it."""

import json

import pytest
from click.testing import CliRunner

from kinspect import api

from kinspect.backends import retarget

from kinspect.files import sources
from kinspect.analysis import analyse
from kinspect.cli import main
from kinspect.core.errors import UsageError
from tests.conftest import CPU_FIXTURES

SOFTMAX = CPU_FIXTURES / "triton-shared-riscv-softmax" / "ll.ir"
X86_DOT = CPU_FIXTURES / "triton-cpu-x86-avx512" / "dot_4x8_8x4_torch.float32.asm"
ARM_SUM = CPU_FIXTURES / "triton-cpu-arm64-neon" / "sum_64_torch.float32_nomask.asm"


def vec_json(*argv):
    r = CliRunner().invoke(main, ["vec-report", *map(str, argv), "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def texts(report: dict) -> list[str]:
    return [v["text"] for v in report["verdicts"]]


def test_generic_rv64_has_no_rvv():
    (rep,) = vec_json(SOFTMAX, "--retarget", "generic-rv64")
    assert rep["retarget"] == "generic-rv64" and rep["isa"] == "riscv" and rep["instructions"] > 50
    assert rep["vector_instructions"] == 0
    assert any("RVV unused" in t for t in texts(rep))
    assert "-mcpu=generic-rv64" in rep["isa_stage"]["derived_by"]


def test_spacemit_x60_uses_unit_stride_rvv():
    (rep,) = vec_json(SOFTMAX, "--retarget", "spacemit-x60")
    assert rep["vector_instructions"] > 0
    assert rep["mnemonics"]["vle32.v"] > 0 and rep["mnemonics"]["vse32.v"] > 0
    assert any("RVV used" in t and "vle32.v" in t for t in texts(rep))
    assert any(t.startswith(f"{rep['mnemonics']['vsetvli'] + rep['mnemonics'].get('vsetivli', 0)} vsetvli")
               for t in texts(rep))
    # the softmax's exp is a libm call per element, even with RVV
    assert any(t.startswith("scalar libm calls: expf") for t in texts(rep))


def test_retargets_are_listed_after_the_as_compiled_report():
    reps = vec_json(X86_DOT, "--retarget", "spacemit-x60", "--retarget", "x86-64-v4")
    assert [r["retarget"] for r in reps] == [None, "spacemit-x60", "x86-64-v4"]
    assert [r["isa"] for r in reps] == ["x86", "riscv", "x86"]
    assert reps[1]["retargeted_from"] == reps[0]["variant"]


def test_x86_dot_on_the_x60_is_ordered_reductions_not_vfmacc():
    (_, rep) = vec_json(X86_DOT, "--retarget", "spacemit-x60")
    ordered = [t for t in texts(rep) if "ordered reductions (vfredosum.vs)" in t]
    assert ordered and ordered[0].startswith("dot-test.py:23 → 16 ordered")  # tied to the source line
    assert rep["reductions"]["ordered"] == rep["mnemonics"]["vfredosum.vs"] == 16
    assert rep["mnemonics"].get("vfmacc.vv", 0) == 0
    assert any(t.startswith("no fused multiply-add") for t in texts(rep))
    assert any("no IME" in t for t in texts(rep))


def test_arm64_sum_as_compiled_is_a_scalar_reduction():
    (rep,) = vec_json(ARM_SUM)
    assert rep["isa"] == "aarch64" and rep["retarget"] is None
    assert any("reduction is a scalar FP chain: 64 scalar FP adds" in t for t in texts(rep))


def test_spine_flags_change_the_code_and_do_not_leak_into_the_next_compile():
    v = sources.read_file(SOFTMAX)
    plain = analyse(api.retargeted(v, "spacemit-x60")).isa
    forced = analyse(api.retargeted(v, "spacemit-x60-spine")).isa
    assert forced.mnemonics["vle32.v"] > plain.mnemonics["vle32.v"]
    # compiled afresh (not from kinspect's cache) after the forced one: the options were reset
    text = SOFTMAX.read_text()
    again = retarget.compile_ir(text, retarget.parse("spacemit-x60"))
    assert again.asm == retarget.compile_ir(text, retarget.parse("spacemit-x60")).asm
    assert again.asm.count("vle32.v") == plain.mnemonics["vle32.v"]


@pytest.mark.parametrize("spec", ["spacemit-x60", "generic-rv64", "rv64gcv", "sifive-x280", "x86-64-v3",
                                  "x86-64-v4", "sapphirerapids", "neoverse-v1", "apple-m1", "riscv64:+v,+zvl256b",
                                  "x86_64:+avx2", "aarch64", "host"])
def test_every_preset_compiles_real_ir(spec):
    t = retarget.parse(spec)
    rep = analyse(api.retargeted(sources.read_file(X86_DOT), spec))
    assert rep.isa_name == t.isa and rep.isa.instructions > 0


def test_features_are_added_to_a_preset():
    t = retarget.parse("generic-rv64:+v")
    assert t.features == "+m,+a,+f,+d,+c,+v" and t.cpu == "generic-rv64"
    rep = analyse(api.retargeted(sources.read_file(SOFTMAX), "generic-rv64:+v"))
    assert rep.isa.vector > 0


@pytest.mark.parametrize("argv, says", [
    (["--retarget", "pentium-9000"], "unknown CPU target 'pentium-9000'"),
    (["--retarget", "riscv64:+nosuchext"], "'+nosuchext' is not a recognized feature"),
    (["--retarget", "riscv64:v"], "bad feature 'v'"),
])
def test_bad_retarget_is_one_line_and_exit_2(argv, says):
    r = CliRunner().invoke(main, ["vec-report", str(SOFTMAX), *argv])
    assert r.exit_code == 2 and says in r.output and len(r.output.strip().splitlines()) == 1, r.output


def test_a_gpu_variants_ir_is_refused(real_variant):
    v = real_variant("add", "cuda:90")
    r = CliRunner().invoke(main, ["vec-report", v.path, "--retarget", "spacemit-x60"])
    assert r.exit_code == 2 and "this LLVM IR is for a GPU (ptx_kernel)" in r.output, r.output


def test_a_variant_without_llvm_ir_is_refused(tmp_path):
    asm = tmp_path / "k.s"
    asm.write_text("\tvsetvli\ta0, a1, e32, m1, ta, ma\n\tret\n")
    r = CliRunner().invoke(main, ["vec-report", str(asm), "--retarget", "spacemit-x60"])
    assert r.exit_code == 2 and "has no LLVM IR stage to retarget" in r.output


def test_dump_retarget_of_a_gpu_target_fails_before_compiling(tmp_path):
    out = tmp_path / "store"
    r = CliRunner().invoke(main, ["dump", "add", "-t", "cuda:90", "--retarget", "spacemit-x60", "--store", str(out)])
    assert r.exit_code == 2 and "--retarget compiles a CPU backend's LLVM IR" in r.output
    assert not out.exists()


def test_unparseable_ir_is_a_compile_error():
    with pytest.raises(Exception) as e:
        retarget.compile_ir("define void @f( {", retarget.parse("riscv64"))
    assert "could not compile this LLVM IR for riscv64" in str(e.value)


def test_parse_rejects_unknown_heads():
    with pytest.raises(UsageError, match="did you mean 'spacemit-x60'"):
        retarget.parse("spacemit-x6")


def test_targets_lists_the_presets():
    r = CliRunner().invoke(main, ["targets"])
    assert r.exit_code == 0
    for name in retarget.PRESETS:
        assert name in r.output
    assert "cuda:90" in r.output and "riscv64 -mcpu=spacemit-x60 -force-vector-width=32" in r.output
