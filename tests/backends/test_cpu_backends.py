"""CPU backends: triton-cpu caches, spine-triton and triton-shared dump folders, live capture with a
CPU metadata group, and assembly derived when a backend left none. All from real compiler output
(../shared/fixtures/cpu); object files are compiled here from that IR by LLVM (llvmlite)."""

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kinspect import api, backends

from kinspect.files import sources
from kinspect.cli import main
from tests.conftest import CPU_FIXTURES
from tests.helpers import riscv_object, ROOT, sections

X86_SUM = CPU_FIXTURES / "triton-cpu-x86-avx512" / "sum_64_torch.float32_nomask.asm"
SHARED = CPU_FIXTURES / "triton-shared-riscv-softmax"


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


@pytest.fixture
def triton_cpu_cache(tmp_path) -> Path:
    """A triton-cpu cache folder as copied off another machine: child_paths point nowhere here."""
    parts = sections(X86_SUM)
    folder = tmp_path / "cache" / "3f1c0b9e"
    folder.mkdir(parents=True)
    (folder / "sum_kernel.llir").write_text(parts["LLVM IR"])
    (folder / "sum_kernel.asm").write_text(parts["ASM"])
    meta = {"name": "sum_kernel", "hash": "3f1c0b9e", "target": {"backend": "cpu", "arch": "x86_64", "warp_size": 0},
            "num_warps": 1, "triton_version": "3.0.0"}
    (folder / "sum_kernel.json").write_text(json.dumps(meta))
    elsewhere = "/home/someone/.triton/cache/3f1c0b9e"
    (folder / "__grp__sum_kernel.json").write_text(json.dumps({"child_paths": {
        f"sum_kernel.{e}": f"{elsewhere}/sum_kernel.{e}" for e in ("llir", "asm", "json")}}))
    return folder.parent


@pytest.fixture
def spine_dump(tmp_path) -> Path:
    """A SPINE_TRITON_DUMP_PATH folder: <k>_tt.mlir, <k>_linalg.mlir, <k>_ll.mlir, <k>_.ll, <k>_.o."""
    d = tmp_path / "ir_dumps"
    d.mkdir()
    k = "softmax_kernel"
    for src, name in (("tt.mlir", "_tt.mlir"), ("ttshared.mlir", "_linalg.mlir"), ("ll.mlir", "_ll.mlir"),
                      ("ll.ir", "_.ll")):
        shutil.copyfile(SHARED / src, d / f"{k}{name}")
    riscv_object(SHARED / "ll.ir", d / f"{k}_.o")
    return d


# -- layouts ---------------------------------------------------------------------------------------

def test_triton_cpu_cache_copied_from_another_machine(triton_cpu_cache):
    before = snapshot(triton_cpu_cache)
    listing = sources.discover(triton_cpu_cache)
    assert listing.kind == "Triton cache"
    (v,) = listing.variants
    assert str(v.target) == "cpu:x86_64" and backends.of(v).name == "triton-cpu"
    assert {s.name: s.dialect for s in v.stages if not s.binary} == {"llir": "llvm", "asm": "x86", "json": "json"}
    (report,) = api.vec_report([str(triton_cpu_cache)])
    assert report.isa_name == "x86" and report.isa.vector > 0
    assert any("reduction is a scalar FP chain" in x.text for x in report.verdicts)
    assert snapshot(triton_cpu_cache) == before


def test_spine_triton_dump_folder(spine_dump):
    before = snapshot(spine_dump)
    listing = sources.discover(spine_dump)
    assert listing.kind == "spine-triton dump"
    (v,) = listing.variants
    assert v.kernel == "softmax_kernel" and backends.of(v).name == "spine-triton"
    assert [s.name for s in v.stages] == ["ttir", "linalgdir", "llmlir", "llir", "o"]
    (report,) = api.vec_report([str(spine_dump)])
    asm = report.variant.stage("asm")
    assert asm is not None and asm.dialect == "riscv"
    # Said in the output: disassembled from the object (a disassembler is on PATH) or regenerated.
    expected = "disassembled from o with" if shutil.which("llvm-objdump") else "regenerated from llir"
    assert expected in asm.derived_by
    assert report.isa.vector > 0 and report.isa.mnemonics["vle32.v"] > 0
    assert snapshot(spine_dump) == before, "kinspect wrote into the dump folder"


def test_without_a_disassembler_the_llir_is_compiled_with_the_backends_flags(spine_dump, monkeypatch):
    monkeypatch.setenv("PATH", str(spine_dump))  # no llvm-objdump, no objdump
    (report,) = api.vec_report([str(spine_dump)])
    how = report.variant.stage("asm").derived_by
    assert how.startswith("regenerated from llir with LLVM")
    # spine-triton 3.6.0+spacemit.a5's own llc line for the X60 and opt's forced vector width
    assert "riscv64 -mcpu=spacemit-x60 -mattr=+64bit,+a,+b,+c,+d,+f,+i,+m,+v" in how
    assert "+zicboz -force-vector-width=32 -force-vector-interleave=2" in how
    assert report.isa.vector > 0


@pytest.mark.skipif(shutil.which("llvm-objdump") is None, reason="needs llvm-objdump on PATH")
def test_objdump_output_reads_like_the_assembly_llvm_prints(tmp_path):
    """The disassembled object and LLVM's own assembly of it agree on the vector instructions, and
    on the calls: an object's calls are `auipc ra, 0` + `jalr ra` until linked, named only by their
    R_RISCV_CALL_PLT relocations (objdump -r), which kinspect turns back into `call expf`."""
    from kinspect.analysis import analyse
    from kinspect.backends.tools import disassemble

    obj = riscv_object(SHARED / "ll.ir", tmp_path / "k.o")
    asm, how = disassemble(obj)
    (tmp_path / "k.s").write_text(asm)
    ours = analyse(sources.read_file(tmp_path / "k.s")).isa
    llvm = analyse(api.retargeted(sources.read_file(SHARED / "ll.ir"), "spine-triton")).isa
    assert "--mattr=" in how and " -r " in how
    for op in ("vle32.v", "vse32.v", "vsetvli", "vfredosum.vs", "vl4r.v"):
        assert ours.mnemonics[op] == llvm.mnemonics[op] > 0, op
    assert ours.calls == llvm.calls and ours.calls["expf"] == 64, (ours.calls, llvm.calls)
    assert abs(ours.vector - llvm.vector) <= 1       # llvm-objdump 14 leaves one instruction undecoded


# objdump -d -r of an object (calls named by relocations) and objdump -d of a linked .so (calls
# through the PLT, named in the target annotation), as llvm-objdump and GNU objdump print them.
OBJDUMP_CALLS = {
    "riscv": """
0000000000000000 <k>:
       0:      \tauipc\tra, 0
\t\t0000000000000000:  R_RISCV_CALL_PLT\texpf
\t\t0000000000000000:  R_RISCV_RELAX\t*ABS*
       4:      \tjalr\tra
       8:      \tauipc\tra,0x0
       c:      \tjalr\t-80(ra) # 5d0 <expf@plt>
      10:      \tauipc\tt1, 0
\t\t\t10: R_RISCV_CALL_PLT\tmalloc
      14:      \tjr\tt1
""",
    "x86": """
0000000000000000 <k>:
       9: \tcallq\t0xe <k+0xe>
\t\t000000000000000a:  R_X86_64_PLT32\texpf-0x4
      1e: \tcallq\t0x1030 <expf@plt>
""",
    "aarch64": """
0000000000000000 <k>:
       8: \tbl\t0x8 <k+0x8>
\t\t0000000000000008:  R_AARCH64_CALL26\texpf
      7a0: \tbl\t0x5e0 <expf@plt>
""",
}


@pytest.mark.parametrize("isa", OBJDUMP_CALLS)
def test_objdump_calls_are_named_by_relocation_or_plt(isa):
    from kinspect.backends.tools import objdump_to_asm
    from kinspect.ir import parse
    from kinspect.ir.records import Resource

    asm, unknown = objdump_to_asm(OBJDUMP_CALLS[isa])
    calls = [r.name for r in parse(isa, asm.splitlines(True)) if isinstance(r, Resource) and r.name.startswith("call:")]
    assert unknown == 0 and "R_" not in asm
    assert calls == {"riscv": ["call:expf", "call:expf", "call:malloc"]}.get(isa, ["call:expf", "call:expf"]), asm


def test_triton_shared_dump_folder():
    listing = sources.discover(SHARED)
    assert listing.kind == "triton-shared dump"
    (v,) = listing.variants
    assert v.kernel == "softmax_kernel" and backends.of(v).name == "triton-shared"
    assert {"ttir", "ttsharedir", "llmlir", "llir"} <= {s.name for s in v.stages}


# -- live capture with a CPU backend ------------------------------------------------------------

def _group(folder: Path, name: str, files: dict[str, str | bytes]) -> dict[str, str]:
    group = {}
    for fname, content in files.items():
        p = folder / fname
        (p.write_bytes if isinstance(content, bytes) else p.write_text)(content)
        group[fname] = str(p)
    return group


def test_capture_listener_takes_stage_names_from_a_cpu_metadata_group(tmp_path):
    """Triton's listener as triton-cpu calls it: kinspect stores exactly the stages the group names."""
    from triton.backends.compiler import GPUTarget

    from kinspect.hooks.listener import Recorder
    from kinspect.files.store import Store

    parts = sections(X86_SUM)
    src = tmp_path / "triton-cache"
    src.mkdir()
    meta = {"name": "sum_kernel", "hash": "abc", "target": GPUTarget("cpu", "x86_64", 0), "num_warps": 1}
    group = _group(src, "sum_kernel", {"sum_kernel.llir": parts["LLVM IR"], "sum_kernel.asm": parts["ASM"],
                                       "sum_kernel.json": json.dumps({"name": "sum_kernel"})})
    rec = Recorder(Store(tmp_path / "out"), strict=True)
    rec(src=None, metadata=meta, metadata_group=group, times=None, cache_hit=False)
    (v,) = rec.variants
    assert str(v.target) == "cpu:x86_64" and v.backend == "triton-cpu"
    assert [s.name for s in v.stages] == ["llir", "asm", "json"]
    assert v.stage("asm").dialect == "x86"
    (report,) = api.vec_report([str(tmp_path / "out")])
    assert report.isa.vector > 0


def test_capture_of_a_spine_triton_group_derives_its_assembly(tmp_path):
    from triton.backends.compiler import GPUTarget

    from kinspect.hooks.listener import Recorder
    from kinspect.files.store import Store

    src = tmp_path / "triton-cache"
    src.mkdir()
    k = "softmax_kernel"
    group = _group(src, k, {f"{k}.ttir": (SHARED / "tt.mlir").read_text(),
                            f"{k}.linalgdir": (SHARED / "ttshared.mlir").read_text(),
                            f"{k}.llir": (SHARED / "ll.ir").read_text(),
                            f"{k}.so": riscv_object(SHARED / "ll.ir", tmp_path / "k.o").read_bytes()})
    rec = Recorder(Store(tmp_path / "out"), strict=True)
    rec(src=None, metadata={"name": k, "hash": "h", "target": GPUTarget("cpu", "riscv64", 0)},
        metadata_group=group, times=None, cache_hit=False)
    (v,) = rec.variants
    assert v.backend == "spine-triton"
    assert [s.name for s in v.stages] == ["ttir", "linalgdir", "llir", "so"], "nothing derived inside the compile"
    from kinspect.hooks.record import finish

    v = finish(v)    # what `kinspect capture` does once the program has ended
    assert [s.name for s in v.stages] == ["ttir", "linalgdir", "llir", "asm", "so"]
    assert v.stage("asm").dialect == "riscv" and v.stage("asm").derived_by
    assert Path(v.path, v.stage("asm").file).is_file()


# -- dialects of a generic "asm" stage --------------------------------------------------------------

@pytest.mark.parametrize("arch, isa", [("x86_64", "x86"), ("aarch64", "aarch64"), ("riscv64", "riscv")])
def test_asm_stage_dialect_follows_the_target(arch, isa):
    b = backends.get("triton-cpu")
    assert backends.dialect_of(b.stage_kind("asm"), b, arch) == isa


def test_asm_stage_dialect_from_the_text_when_the_arch_is_unknown(tmp_path):
    p = tmp_path / "k.asm"
    p.write_text(sections(CPU_FIXTURES / "triton-cpu-arm64-neon" / "sum_64_torch.float32_nomask.asm")["ASM"])
    b = backends.get("triton-shared")
    assert backends.dialect_of(b.stage_kind("cpuasm"), b, "?", p) == "aarch64"


def test_cli_vec_report_on_a_spine_dump(spine_dump):
    r = CliRunner().invoke(main, ["vec-report", str(spine_dump)])
    assert r.exit_code == 0, r.output
    assert "asm: disassembled from o with" in r.output or "asm: regenerated from llir" in r.output
    assert "RVV used" in r.output


def test_cache_dir_is_never_the_source(spine_dump):
    from kinspect.core.cache import cache_dir

    assert Path(os.environ["KINSPECT_CACHE_DIR"]) == cache_dir()
    assert spine_dump not in cache_dir().parents


def test_k1_sample_answers_the_question_on_a_copied_folder(spine_dump, capsys):
    import importlib.util

    path = ROOT / "samples" / "k1_rvv_question.py"
    spec = importlib.util.spec_from_file_location("k1_rvv_question", path)
    sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sample)
    before = snapshot(spine_dump)
    assert sample.main([str(spine_dump), "--kernel", "softmax_kernel", "--no-jit"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith("  ") and
            line.split() and line.split()[0] in ("generic-rv64", "spacemit-x60", "spacemit-x60-spine")}
    assert int(rows["generic-rv64"][1]) == 0                      # no V: no vector instructions
    assert int(rows["spacemit-x60"][2]) > 0                       # vle32
    assert int(rows["spacemit-x60-spine"][2]) > int(rows["spacemit-x60"][2])  # forced width: more of them
    assert snapshot(spine_dump) == before
    assert sample.main([str(spine_dump), "--kernel", "fused_mm_softmax"]) == 2


def test_retargeted_assembly_is_stored_beside_a_captured_cpu_variant(tmp_path):
    """What `dump --retarget` does once a CPU backend compiled the variant: asm@<cpu> stages in the store."""
    from triton.backends.compiler import GPUTarget

    from kinspect.analysis import analyse
    from kinspect.hooks.listener import Recorder
    from kinspect.files.store import Store, read_records

    parts = sections(CPU_FIXTURES / "triton-cpu-arm64-neon" / "sum_64_torch.float32_nomask.asm")
    src = tmp_path / "triton-cache"
    src.mkdir()
    group = _group(src, "sum_kernel", {"sum_kernel.llir": parts["LLVM IR"], "sum_kernel.asm": parts["ASM"]})
    rec = Recorder(Store(tmp_path / "out"), strict=True)
    rec(src=None, metadata={"name": "sum_kernel", "hash": "h", "target": GPUTarget("cpu", "aarch64", 0)},
        metadata_group=group, times=None, cache_hit=False)
    v = api.add_retargets(rec.variants[0], ["spacemit-x60"])
    (stored,) = read_records(tmp_path / "out")
    asm = stored.stage("asm@spacemit-x60")
    assert asm is not None and asm.dialect == "riscv" and "-mcpu=spacemit-x60" in asm.derived_by
    assert Path(stored.path, asm.file).read_text().count("vfredosum.vs") == 1
    assert analyse(stored).isa_name == "aarch64"  # the report is still about the variant's own code
    assert v.stage("asm@spacemit-x60").file == asm.file
