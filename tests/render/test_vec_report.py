"""vec-report and show on real compiles and the CPU fixtures; registers against cuobjdump."""

import json
import re
import subprocess

import pytest
from click.testing import CliRunner

from kinspect import api
from kinspect.analysis import analyse
from kinspect.cli import main
from kinspect.files.sources import read_file
from tests.conftest import CPU_FIXTURES
from tests.helpers import kernel_line



def report_json(*args):
    r = CliRunner().invoke(main, ["vec-report", *map(str, args), "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_cuda90_json_hgmma_loads_and_registers(tmp_path, real_variant, nvidia_tool):
    [rep] = report_json("fused_mm_softmax", "-t", "cuda:90", "--store", tmp_path)
    for key in ("variant", "isa", "instructions", "vector_instructions", "matrix_instructions", "mnemonics",
                "registers", "spills", "verdicts"):
        assert key in rep
    assert rep["isa"] == "sass" and rep["mnemonics"]["HGMMA"] > 0 and rep["matrix_instructions"] > 0
    assert rep["load_widths"].get("128", 0) > 0
    # registers against an independent reading of cuobjdump's REG
    [folder] = (tmp_path / "fused_mm_softmax").iterdir()
    cubin = next(folder.glob("*.cubin"))
    raw = subprocess.run([nvidia_tool("cuobjdump"), "--dump-resource-usage", str(cubin)],
                         capture_output=True, text=True, check=True).stdout
    assert rep["registers"] == int(re.search(r"REG:(\d+)", raw).group(1))
    dot = kernel_line("c = tl.dot(a, b)")
    assert any(v["line"] == dot and "HGMMA" in v["text"] and "tensor cores used" in v["text"]
               for v in rep["verdicts"])
    assert any(v["line"] == kernel_line("a = tl.load") and "128-bit" in v["text"] for v in rep["verdicts"])
    assert rep["shared_bytes"] == 128 * 1024
    assert rep["occupancy_limiter"] == "shared memory"


def test_cuda80_reports_hmma(tmp_path):
    [rep] = report_json("fused_mm_softmax", "-t", "cuda:80", "-p", "BLOCK_SIZE=64", "--store", tmp_path)
    assert rep["matrix_by_unit"].get("hmma", 0) > 0 and "HMMA" in rep["mnemonics"]


def test_gfx942_reports_mfma(tmp_path):
    [rep] = report_json("fused_mm_softmax", "-t", "hip:gfx942", "-p", "BLOCK_SIZE=64", "--store", tmp_path)
    assert rep["isa"] == "amdgcn"
    assert sum(n for op, n in rep["mnemonics"].items() if op.startswith("v_mfma")) > 0
    assert rep["registers"] and rep["registers"] > 0 and rep["spills"] == 0


def test_elementwise_kernel_has_no_matrix_and_vector_loads(tmp_path):
    [rep] = report_json("add", "-t", "cuda:90", "--store", tmp_path)
    assert rep["matrix_instructions"] == 0
    assert set(rep["load_widths"]) == {"128"}, "add with aligned pointers loads 128 bits at a time"


def test_arm64_sum_is_a_scalar_reduction():
    rep = analyse(read_file(CPU_FIXTURES / "triton-cpu-arm64-neon" / "sum_64_torch.float32_nomask.asm"))
    assert rep.isa_name == "aarch64"
    texts = [v.text for v in rep.verdicts]
    assert any("reduction is a scalar FP chain" in t and "64 scalar FP adds" in t for t in texts), texts
    assert rep.isa.load_widths == {128: 16}  # NEON loads, scalar adds


def test_x86_dot_reports_avx():
    for name, unit in (("dot_4x8_8x4_torch.float32.asm", "avx"), ("dot_4x16_16x4_torch.float32.asm", "avx512")):
        rep = analyse(read_file(CPU_FIXTURES / "triton-cpu-x86-avx512" / name))
        assert rep.isa_name == "x86" and rep.isa.vector > 0 and rep.isa.vector_units[unit] > 0
        assert any("SIMD (SSE/AVX/AVX-512) used" in v.text and unit in v.text for v in rep.verdicts)


def test_generic_rv64_style_no_vector_verdict(tmp_path):
    """A real scalar RISC-V listing (llvmlite, generic-rv64) gets the 'RVV unused' verdict."""
    llvm = pytest.importorskip("llvmlite.binding")
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    mod = llvm.parse_assembly((CPU_FIXTURES / "triton-shared-riscv-softmax" / "ll.ir").read_text())
    mod.triple = "riscv64-unknown-linux-gnu"
    tm = llvm.Target.from_triple(mod.triple).create_target_machine(cpu="generic-rv64", features="+m,+a,+f,+d,+c")
    asm = tmp_path / "softmax.s"
    asm.write_text(tm.emit_assembly(mod))
    rep = analyse(read_file(asm))
    assert rep.isa_name == "riscv" and rep.isa.vector == 0
    assert any("no vector instructions: RVV unused" in v.text for v in rep.verdicts)


def test_text_report_and_show_lines(tmp_path):
    runner = CliRunner()
    r = runner.invoke(main, ["vec-report", "fused_mm_softmax", "-t", "cuda:90", "-p", "BLOCK_SIZE=32",
                             "--lines", "--store", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert "verdicts:" in r.output and "tensor cores used" in r.output
    dot_row = next(ln for ln in r.output.splitlines() if re.match(rf"\s+{kernel_line('c = tl.dot(a, b)')}\s+c = tl.dot", ln))
    assert int(dot_row.split()[-2]) > 0, dot_row  # the matrix column of the tl.dot line
    r = runner.invoke(main, ["show", "fused_mm_softmax", "--stage", "sass", "--lines", "--store", str(tmp_path)])
    assert r.exit_code == 0, r.output
    dot = kernel_line("c = tl.dot(a, b)")
    assert f";; fused_mm_softmax.py:{dot}  c = tl.dot(a, b)" in r.output
    assert re.search(r"\bHG?MMA\b", r.output)  # at BLOCK_SIZE=32 sm90 uses mma v2 (HMMA): wgmma needs M >= 64


def test_store_and_single_stage_file_inputs(tmp_path):
    runner = CliRunner()
    assert runner.invoke(main, ["dump", "softmax", "-t", "cuda:90", "--store", str(tmp_path)]).exit_code == 0
    reps = report_json(tmp_path)
    assert len(reps) == 1 and reps[0]["isa"] == "sass"
    [folder] = (tmp_path / "softmax").iterdir()
    [ptx] = report_json(next(folder.glob("*.ptx")))
    # a lone PTX file: no cubin beside it, so the PTX is analysed in the machine code's place, said so
    assert ptx["isa"] == "ptx" and ptx["problems"] == []


def one_error(r, needle):
    assert r.exit_code == 2, r.output
    assert r.output.count("\n") == 1 and needle in r.output and "Traceback" not in r.output


def test_binary_junk_in_a_ptx_file(tmp_path):
    bad = tmp_path / "junk.ptx"
    bad.write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    one_error(CliRunner().invoke(main, ["vec-report", str(bad)]), "is binary")


def test_empty_and_truncated_stage(tmp_path):
    empty = tmp_path / "empty.sass"
    empty.write_text("")
    one_error(CliRunner().invoke(main, ["vec-report", str(empty)]), "is empty (0 bytes)")
    trunc = tmp_path / "cut.sass"
    trunc.write_text("        /*0000*/                   LDC R1, c[0x0][0x28] ;\n        /*0010*/   HGM")
    [rep] = report_json(trunc)
    assert rep["instructions"] == 2 and rep["other_mnemonics"] == 1


def test_unknown_file_type(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("hello")
    one_error(CliRunner().invoke(main, ["vec-report", str(f)]), "unknown stage file type")


def test_show_unknown_variant(tmp_path):
    one_error(CliRunner().invoke(main, ["show", "nothing", "--stage", "sass", "--store", str(tmp_path)]),
              "no variant 'nothing'")


def test_large_listing_streams_in_bounded_memory(tmp_path):
    """A 20 MB SASS listing: analysis memory stays far below the file size."""
    import tracemalloc

    line = "        /*0000*/                   LDG.E.128 R40, desc[UR12][R52.64] ;\n"
    big = tmp_path / "big.sass"
    with open(big, "w") as f:
        f.write("\t//## File \"/k.py\", line 3\n")
        for _ in range(20_000_000 // len(line)):
            f.write(line)
    tracemalloc.start()
    rep = analyse(read_file(big))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert rep.isa.instructions == 20_000_000 // len(line)
    assert peak < 5 * 1024 * 1024, peak


def test_a_triton_cache_gets_sass_derived_into_kinspects_cache(tmp_path):
    """A Triton cache holds a cubin, not SASS: vec-report disassembles it into kinspect's own cache."""
    import os

    import triton
    import triton.language as tl
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def twice(x, y, n, B: tl.constexpr):
        o = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(y + o, tl.load(x + o, mask=o < n) * 2, mask=o < n)

    cache = tmp_path / "triton-cache"
    with knobs.cache.scope():
        knobs.cache.dir = str(cache)
        triton.compile(ASTSource(twice, {"x": "*fp32", "y": "*fp32", "n": "i32", "B": "constexpr"},
                                 constexprs={"B": 256}), target=GPUTarget("cuda", 90, 32))
    before = sorted((p, p.stat().st_mtime_ns) for p in cache.rglob("*"))
    (rep,) = api.vec_report([str(cache)])
    sass = rep.variant.stage("sass")
    assert rep.isa_name == "sass" and sass.derived_by == "nvdisasm -c -g -gi -hex"
    assert sass.file.startswith(os.environ["KINSPECT_CACHE_DIR"])
    assert rep.isa.mnemonics["LDG"] > 0
    assert sorted((p, p.stat().st_mtime_ns) for p in cache.rglob("*")) == before
