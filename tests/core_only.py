"""kinspect's core, installed without its extras (no llvmlite, matplotlib or numpy), as on a RISC-V board
with spine-triton: the core commands on the RISC-V fixtures, and capture and bench on a CPU backend.

Run by .ci/core-only in a virtual environment made for it (`pip install -e .`, no extras); not
collected by pytest (it needs that environment). Usage: python tests/core_only.py STAGES_DIR
where STAGES_DIR holds the spine stand-in's stages (made by .ci/core-only with the full install).
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures" / "cpu"
checks = []


def kinspect(*args, env=None, expect=0, cwd=ROOT):
    proc = subprocess.run([sys.executable, "-m", "kinspect", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})}, cwd=cwd, timeout=600)
    if proc.returncode != expect:
        sys.exit(f"FAILED kinspect {' '.join(map(str, args))}: exit {proc.returncode} (expected {expect})\n"
                 f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    checks.append(" ".join(map(str, args))[:90])
    return proc.stdout + proc.stderr


def main(stages: Path) -> None:
    missing = [m for m in ("llvmlite", "matplotlib", "numpy") if importlib.util.find_spec(m) is None]
    assert missing == ["llvmlite", "matplotlib", "numpy"], f"this environment has extras: {missing}"
    from importlib.metadata import version

    triton = version("triton")      # 3.6 as on the board, unless the caller chose another
    tmp = Path(tempfile.mkdtemp(prefix="kinspect-core-"))
    arm = FIX / "triton-cpu-arm64-neon" / "sum_64_torch.float32_nomask.asm"
    x86 = FIX / "triton-cpu-x86-avx512"
    out = kinspect("vec-report", arm)
    assert "NEON" in out and "reduction is a scalar FP chain" in out, out
    out = kinspect("diff", x86 / "dot_4x8_8x4_torch.float32.asm", x86 / "dot_4x16_16x4_torch.float32.asm", "--table")
    assert "x86 instrs" in out, out
    out = kinspect("report", x86 / "dot_4x8_8x4_torch.float32.asm", x86 / "dot_2x4_4x2_torch.float32.asm",
                   "-o", tmp / "r.html")
    assert "plots: none" in out and "kinspect[report]" in (tmp / "r.html").read_text(), out
    out = kinspect("vec-report", FIX / "triton-shared-riscv-softmax" / "ll.ir", "--retarget", "spacemit-x60", expect=2)
    assert out.strip() == "error: --retarget needs llvmlite: pip install 'kinspect[retarget]'", out
    out = kinspect("report", x86 / "dot_4x8_8x4_torch.float32.asm", "-o", tmp / "m.html", "--metric", "registers",
                   expect=2)
    assert "needs matplotlib: pip install 'kinspect[report]'" in out, out
    out = kinspect("bench", "add", "--interpret", expect=2)
    assert "needs numpy: pip install 'kinspect[interpret]'" in out, out
    out = kinspect("capture", "--interpret", "--store", tmp / "interp", "--", sys.executable, "-c", "pass", expect=2)
    assert out.strip() == ("error: capture --interpret (Triton's interpreter runs kernels with numpy) needs numpy: "
                           "pip install 'kinspect[interpret]'"), out
    out = kinspect("targets")
    assert "llvmlite is not installed: pip install 'kinspect[retarget]'" in out, out
    out = kinspect("dump", "add", "-t", "cuda:90", "--store", tmp / "store")     # offline GPU compile: core too
    assert "sass" in out, out
    kinspect("ls", tmp / "store")
    kinspect("show", "add", "--stage", "ptx", "--store", tmp / "store")

    # a CPU backend, live: the spine-triton stand-in of tests/spine_plugin
    plugin = tmp / "plugin"
    shutil.copytree(ROOT / "tests" / "spine_plugin" / "kinspect_spine_test", plugin / "kinspect_spine_test")
    info = plugin / "kinspect_spine_test-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kinspect-spine-test\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[triton.backends]\nspine_triton = kinspect_spine_test\n")
    script = tmp / "softmax_k1.py"
    shutil.copyfile(ROOT / "tests" / "spine_plugin" / "softmax_k1.py", script)
    env = {"PYTHONPATH": os.pathsep.join([str(plugin), str(ROOT)]),
           "KINSPECT_TEST_SPINE_STAGES": str(stages), "TRITON_CACHE_DIR": str(tmp / "cache")}
    out = kinspect("capture", "--store", tmp / "cap", "--", sys.executable, script, env=env)
    assert "1 variant(s) recorded" in out and "3 launch(es)" in out, out
    out = kinspect("vec-report", tmp / "cap", env=env)
    assert "softmax_kernel  cpu:spacemit-x60" in out and "scalar libm calls: expf 64" in out, out

    # the board's own question: vec-report with no argument reads SPINE_TRITON_DUMP_PATH's dump
    dump, here = tmp / "dump", tmp / "here"
    dump.mkdir()
    here.mkdir()
    shared = FIX / "triton-shared-riscv-softmax"
    for src, name in ((shared / "tt.mlir", "softmax_kernel_tt.mlir"), (stages / "linalgdir.mlir",
                      "softmax_kernel_linalg.mlir"), (stages / "ll.ir", "softmax_kernel_.ll"),
                      (stages / "kernel.o", "softmax_kernel_.o")):
        shutil.copyfile(src, dump / name)
    out = kinspect("vec-report", env={"SPINE_TRITON_DUMP_PATH": str(dump)}, cwd=here)
    assert str(dump) in out and "RVV used" in out and "1 ordered reductions" in out, out
    (dump / "softmax_kernel_.o").unlink()   # no object to disassemble, no llvmlite to compile the IR: say so
    out = kinspect("vec-report", env={"SPINE_TRITON_DUMP_PATH": str(dump)}, cwd=here)
    assert "the asm could not be derived here (llvmlite: the assembly from the LLVM IR needs llvmlite" in out, out
    out = kinspect("bench", f"{script}:softmax_kernel", "--store", tmp / "b", "--rep", "20", "--warmup", "2",
                   "--no-compile", env=env)
    assert "threads busy on average" in out and "correct:" in out, out
    foreign(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"core install (no llvmlite, matplotlib or numpy; triton {triton}): {len(checks)} commands as expected")
    for c in checks:
        print(f"  kinspect {c}")


def foreign(tmp: Path) -> None:
    """This Triton's own TRITON_KERNEL_DUMP folder and cache entry of one kernel read as kinspect dump
    reads its compile: the same instructions, matrix use and registers, the HGMMA on both tl.dot lines."""
    import json

    kernel = f"{ROOT / 'tests' / 'corpus' / 'flash_attention.py'}:attn_fwd"
    made = tmp / "foreign"
    subprocess.run([sys.executable, str(ROOT / "tests" / "trace_maker.py"), str(made), kernel, "cuda:90", "-"],
                   check=True, capture_output=True, timeout=600, cwd=ROOT)
    kinspect("dump", kernel, "-t", "cuda:90", "--store", tmp / "fa")
    reports = {}
    for name, folder in (("kinspect", tmp / "fa"), ("dump", made / "dump"), ("cache", made / "cache")):
        [one] = [p for p in folder.rglob("*") if p.is_dir() and not any(q.is_dir() for q in p.iterdir())]
        [reports[name]] = json.loads(kinspect("vec-report", one, "--json"))
    figures = {name: (r["instructions"], r["mnemonics"], r["matrix_by_unit"], r["registers"]) for name, r in reports.items()}
    assert len({json.dumps(f) for f in figures.values()}) == 1, figures
    for name, r in reports.items():
        assert {v["line"] for v in r["verdicts"] if "HGMMA" in v["text"]} == {28, 36}, (name, r["verdicts"])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
