"""Every finding kind (kinspect.analysis.findings.KINDS), each found in real compiler output: kernels
compiled here for cuda:90, the triton-cpu and RISC-V fixtures, and their LLVM IR compiled by LLVM
(llvmlite) for RISC-V. The spilled bytes are checked against cuobjdump's own figures."""

import re
import subprocess
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

from kinspect import api
from kinspect.analysis import analyse
from kinspect.analysis.findings import KINDS, MAJOR, kind
from kinspect.files.sources import read_file
from tests.conftest import CPU_FIXTURES


@triton.jit
def dot_ieee(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    c = tl.dot(a, b, input_precision="ieee")      # full fp32: no tensor core takes it
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], c)


@triton.jit
def strided_copy(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    tl.store(y_ptr + r, tl.load(x_ptr + r * stride))


@pytest.fixture(scope="module")
def gpu(tmp_path_factory):
    """Two real cuda:90 compiles, analysed: {name: VariantReport}."""
    from kinspect.compile.variant import compile_variant
    from kinspect.compile.targets import resolve

    out = tmp_path_factory.mktemp("findings")
    t = lambda: torch.empty(4096)
    found = {}
    for name, fn, args, consts in (("dot_ieee", dot_ieee, dict(a_ptr=t(), b_ptr=t(), c_ptr=t()), dict(BLOCK=64)),
                                   ("strided", strided_copy, dict(x_ptr=t(), y_ptr=t(), stride=3), dict(BLOCK=256))):
        v = compile_variant(fn, args=args, constexprs=consts, grid=(1,), resolved=resolve("cuda:90"), out_dir=out,
                            group=name)
        found[name] = analyse(v)
    return found


def _kinds(report) -> dict:
    return {v.kind: v for v in report.verdicts if v.kind}


def test_a_dot_in_full_fp32_spills_and_runs_without_tensor_cores(gpu, nvidia_tool):
    found = _kinds(gpu["dot_ieee"])
    dot = found["dot_without_matrix_units"]
    assert "tl.dot(a, b" in dot.text and dot.severity == 3 and "tf32" in dot.what_to_try
    spills = found["spills"]
    cubin = next(Path(gpu["dot_ieee"].variant.path).glob("*.cubin"))
    usage = subprocess.run([nvidia_tool("cuobjdump"), "--dump-resource-usage", str(cubin)], capture_output=True,
                           text=True, check=True).stdout
    stack = int(re.search(r"STACK:(\d+)", usage)[1]) + int(re.search(r"LOCAL:(\d+)", usage)[1])
    assert stack > 0 and f"({stack} bytes of local memory" in spills.text, (usage, spills.text)
    occ = found["low_occupancy"]
    assert "limited by registers (255 per thread)" in occ.text
    # the advice in this variant's numbers: 255 registers x 128 threads leave room for 2 blocks of the
    # SM's 64K registers; a third block of 4 warps fits at 65536 / (3 * 128) = 170, allocated by 8: 168
    assert occ.advice.startswith("3 blocks would fit with at most 168 registers per thread (now 255): num_warps=2")


def test_strided_loads_are_narrow(gpu):
    narrow = _kinds(gpu["strided"])["narrow_loads"]
    assert "loads are 32-bit: not vectorized" in narrow.text and narrow.line is not None
    assert "tl.max_contiguous" in narrow.what_to_try


def test_shared_memory_limits_the_fused_kernel(real_variant):
    occ = _kinds(analyse(real_variant("fused_mm_softmax", "cuda:90", BLOCK_SIZE=128)))["low_occupancy"]
    assert "limited by shared memory (128 KiB per block)" in occ.text
    assert "fewer num_stages" in occ.advice and "now 128 KiB" in occ.advice


def _fixture(folder: str, name: str):
    return read_file(CPU_FIXTURES / folder / name)


CPU_CASES = {
    # kind: (fixture folder, file, retarget CPU or None, words the finding's text holds)
    "no_vector_code": ("triton-shared-riscv-softmax", "ll.ir", "generic-rv64", "RVV unused"),
    "scalar_libm": ("triton-shared-riscv-softmax", "ll.ir", "spacemit-x60", "expf"),
    "ordered_reduction": ("triton-cpu-x86-avx512", "dot_4x8_8x4_torch.float32.asm", "spacemit-x60", "vfredosum"),
    "cpu_spills": ("triton-cpu-x86-avx512", "sum2d_4X32_torch.float32_mask.asm", "spacemit-x60", "register"),
    "scalar_reduction": ("triton-cpu-arm64-neon", "sum_64_torch.float32_nomask.asm", None, "scalar FP chain"),
    "no_fma": ("triton-cpu-x86-avx512", "dot_2x4_4x2_torch.float32.asm", None, "no fused multiply-add"),
}


@pytest.mark.parametrize("kind", sorted(CPU_CASES))
def test_cpu_findings_on_real_output(kind):
    folder, name, cpu, words = CPU_CASES[kind]
    v = _fixture(folder, name)
    report = analyse(api.retargeted(v, cpu) if cpu else v)
    found = _kinds(report)
    assert kind in found, [x.text for x in report.verdicts]
    assert words in found[kind].text and found[kind].what_to_try


# A column sum over a row-major matrix of 64 columns: every load steps a whole row. What LLVM makes of
# it for the X60 (vlse32.v) is real compiler output (llvmlite's LLVM 22), of an IR written for the test.
COLUMN_SUM = """
define void @colsum(ptr noalias %x, ptr noalias %y, i64 %rows) {
entry:
  br label %loop
loop:
  %j = phi i64 [ 0, %entry ], [ %j1, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  %i = mul i64 %j, 64
  %p = getelementptr float, ptr %x, i64 %i
  %v = load float, ptr %p, align 4
  %acc1 = fadd fast float %acc, %v
  %j1 = add i64 %j, 1
  %done = icmp eq i64 %j1, %rows
  br i1 %done, label %exit, label %loop
exit:
  store float %acc1, ptr %y, align 4
  ret void
}
"""


def test_strided_vector_loads_on_riscv(tmp_path):
    ll = tmp_path / "colsum.ll"
    ll.write_text(COLUMN_SUM)
    report = analyse(api.retargeted(read_file(ll), "spacemit-x60"))
    found = _kinds(report)
    assert "gather_loads" in found, [x.text for x in report.verdicts]
    assert "strided" in found["gather_loads"].text and report.isa.load_access["strided"] > 0


def test_a_stage_that_cannot_be_read_is_a_finding(tmp_path, real_variant):
    import shutil

    src = real_variant("add", "cuda:90")
    folder = tmp_path / "v"
    shutil.copytree(src.path, folder)
    ptx = src.stage("ptx").file
    (folder / ptx).write_bytes(b"\x00\x01binary junk\x00" * 100)
    import dataclasses

    report = analyse(dataclasses.replace(src, path=str(folder)))
    found = _kinds(report)
    assert "unreadable_stage" in found and "ptx" in found["unreadable_stage"].text


def test_a_launch_bound_bench_gives_the_kinds_advice():
    """bench's launch path (kinspect.bench.launch_path) names the kind: its advice under the verdict."""
    from kinspect.bench.launch_path import CallTiming, LaunchPath
    from kinspect.bench.stats import summarize
    from kinspect.render.bench import launch_path

    jit = CallTiming("k[grid](...)", 100, summarize([0.0461]), summarize([0.0452]))
    lines = launch_path(LaunchPath(jit=jit, gpu=summarize([0.0103]), gpu_method="CUDA graph"))
    assert lines[-1] == f"  try: {kind('launch_bound').advice}" and kind("launch_bound").severity == MAJOR


def test_every_kind_is_tested_here():
    tested = set(CPU_CASES) | {"dot_without_matrix_units", "spills", "low_occupancy", "narrow_loads",
                               "gather_loads", "unreadable_stage", "launch_bound"}
    assert tested == set(KINDS)
