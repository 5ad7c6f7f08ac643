"""kinspect diff: normalization, folding, the metric table, sweeps and their bad input, on real
compiler output (Triton compiles offline here) and the triton-cpu fixtures."""

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kinspect.diff import correlation as explain_mod
from kinspect.diff.compare import choose_pair
from kinspect.diff.normalize import normalize
from kinspect.bench.stats import Runtime
from kinspect.diff.table import Row, labels
from kinspect.diff.textdiff import LineRun, diff_stage, fold, unified
from tests.conftest import CPU_FIXTURES
from tests.helpers import run

X86 = CPU_FIXTURES / "triton-cpu-x86-avx512"


def _normalized(text: str, dialect: str, kernel: str = "fused_mm_softmax_kernel") -> list[str]:
    return normalize(text.splitlines(), dialect, names=[kernel]).lines


# -- normalization on real stages ---------------------------------------------------------------

def _renumber(text: str, pattern: str, seed: int = 0) -> str:
    """The text with every number after `pattern` mapped through a random permutation."""
    found = sorted({int(m) for m in re.findall(pattern + r"(\d+)\b", text)})
    shuffled = found[:]
    random.Random(seed).shuffle(shuffled)
    mapping = dict(zip(found, shuffled))
    return re.sub(pattern + r"(\d+)\b", lambda m: m[0][: -len(m[1])] + str(mapping[int(m[1])] + 1000), text)


def test_ptx_register_renaming_is_not_a_change(real_stage):
    ptx = real_stage("fused_mm_softmax", "cuda:90", "ptx", BLOCK_SIZE=64)
    renamed = _renumber(_renumber(ptx, r"%r"), r"%rd", seed=1)
    assert renamed != ptx
    assert _normalized(renamed, "ptx") == _normalized(ptx, "ptx")
    norm = "\n".join(_normalized(ptx, "ptx"))
    assert ".loc" not in norm and ".debug_" not in norm and "$L__tmp" not in norm
    assert "fused_mm_softmax_kernel" not in norm and "<kernel>_param_0" in norm
    assert "%r<" in norm  # register declarations keep their counts: a real change between variants


def test_sass_addresses_registers_and_file_markers_are_not_changes(real_stage):
    sass = real_stage("fused_mm_softmax", "cuda:90", "sass", BLOCK_SIZE=64)
    shifted = re.sub(r"/\*([0-9a-f]{4})\*/", lambda m: f"/*{int(m[1], 16) + 0x100:04x}*/", sass)
    shifted = _renumber(shifted, r"\bR", seed=2)
    assert shifted != sass
    assert _normalized(shifted, "sass") == _normalized(sass, "sass")
    norm = "\n".join(_normalized(sass, "sass"))
    assert "/*" not in norm and "//##" not in norm and "HGMMA" in norm


def test_mlir_and_llvm_lose_locations_and_value_numbers(real_stage):
    ttgir = _normalized(real_stage("fused_mm_softmax", "cuda:90", "ttgir", BLOCK_SIZE=64), "mlir")
    assert not any("loc(" in line or "#loc" in line for line in ttgir)
    assert not any(re.search(r"%\d", line) for line in ttgir)
    assert any("tt.dot" in line or "warp_group_dot" in line for line in ttgir)
    llir = _normalized(real_stage("fused_mm_softmax", "cuda:90", "llir", BLOCK_SIZE=64), "llvm")
    assert not any("!dbg" in line or "!DI" in line for line in llir)
    assert not any(re.search(r"%\d", line) for line in llir)


def test_amdgcn_registers_and_debug_sections(real_stage):
    text = real_stage("fused_mm_softmax", "hip:gfx942", "amdgcn", BLOCK_SIZE=32)
    norm = _normalized(text, "amdgcn")
    joined = "\n".join(norm)
    assert not re.search(r"\bv\d+\b", joined) and not re.search(r"\bs\[\d+:\d+\]", joined)
    assert ".debug_" not in joined and ".loc\t" not in joined
    assert any(line.startswith("v_mfma") for line in norm)
    assert "s[?:?+1]" in joined  # a register pair keeps its width


def test_fixture_x86_labels_and_cfi():
    from kinspect.files import sources

    v = sources.read_file(X86 / "sum_64_torch.float32_mask.asm")
    with open(X86 / "sum_64_torch.float32_mask.asm") as f:
        text = f.read()
    assert ".cfi_" in text or ".LBB" in text or ".LCPI" in text
    asm = v.stage("asm")
    from kinspect.analysis.stages import open_lines

    with open_lines(v, asm) as lines:
        norm = normalize(list(lines), "x86").lines
    assert not any(re.search(r"\.L[A-Za-z_]+\d", line) or line.startswith(".cfi") for line in norm)


# -- folding and the text diff ------------------------------------------------------------------

def test_fold_repeats():
    lines = ["a", "b", "c", "b", "c", "b", "c", "d", "e", "e", "e"]
    assert fold(lines, "+") == [LineRun("+", ("a",)), LineRun("+", ("b", "c"), 3), LineRun("+", ("d",)),
                                LineRun("+", ("e",), 3)]
    assert fold([], "-") == []
    assert fold(["x", "y"], "-") == [LineRun("-", ("x", "y"))]


def test_diff_stage_counts_and_hunk_lines():
    a = ["mov %r1, 0;", "add %r2, %r1, 1;", "st [%r2], %r1;"]
    b = ["mov %r7, 0;", "add %r9, %r7, 1;", "add %r9, %r7, 1;", "add %r9, %r7, 1;", "st [%r9], %r7;"]
    d = diff_stage("ptx", a, b, normalize(a, "ptx"), normalize(b, "ptx"))
    assert d.raw_changed == 8 and d.changed == 2 and d.shown == 1
    text = unified(d, "A", "B")
    assert "+ add %r?, %r?, 1;    ×2" in text
    assert text[2].startswith("@@ -1,3 +1,5 @@")
    same = diff_stage("ptx", a, a, normalize(a, "ptx"), normalize(a, "ptx"))
    assert same.identical and same.raw_changed == 0


# -- labels, pairs and what explains runtime ----------------------------------------------------

def _rows(real_variant):
    from kinspect.diff.table import rows

    return rows([real_variant("fused_mm_softmax", "cuda:90", BLOCK_SIZE=b) for b in (32, 64)])


def test_labels_name_what_differs(real_variant):
    a = real_variant("fused_mm_softmax", "cuda:90", BLOCK_SIZE=32)
    b = real_variant("fused_mm_softmax", "cuda:80", BLOCK_SIZE=64)
    assert labels([a, b]) == ["cuda:90 BLOCK_SIZE=32", "cuda:80 BLOCK_SIZE=64"]
    assert labels([a, a]) == [f"{x} [{a.name}]" for x in (a.name, a.name)]


def test_choose_pair(real_variant):
    rows = _rows(real_variant)
    assert choose_pair(None, rows) == (0, 1)
    assert choose_pair("64,32", rows) == (1, 0)
    assert choose_pair("BLOCK_SIZE=64,1", rows) == (1, 0)
    for bad in ("1", "1,1", "7,1", "48,1"):
        with pytest.raises(Exception) as e:
            choose_pair(bad, rows)
        assert "pair" in str(e.value)


def test_spearman_and_explain(real_variant):
    import dataclasses

    assert explain_mod.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert explain_mod.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert explain_mod.spearman([1, 1, 1], [1, 2, 3]) is None
    assert explain_mod.ranks([5, 1, 5, 3]) == [3.5, 1.0, 3.5, 2.0]
    base = _rows(real_variant)[0]

    def given(row, runtime=None, **figures):      # a row whose record holds these figures
        return dataclasses.replace(row, metrics=dataclasses.replace(row.metrics, **figures),
                                   runtime=runtime or row.runtime)

    # three variants whose runtime rises with their (given) registers and falls with occupancy
    rows = [given(base, registers=r, occupancy=o, instructions=100, runtime=Runtime(t, t, t))
            for r, o, t in ((32, 1.0, 1.0), (64, 0.5, 2.0), (255, 0.0625, 9.0))]
    links = explain_mod.explain(rows)
    # registers and occupancy order the three variants alike: one statement, both named
    assert len(links) == 1 and dict(links[0].metrics) == {"registers": 1.0, "occupancy": -1.0}
    text = links[0].describe()
    assert "rises with registers" in text and "falls with occupancy" in text
    assert "cannot tell them apart" in text and "not a measured cause" in text
    # a metric that orders them differently gets its own statement
    rows = [given(r, instructions=n) for r, n in zip(rows, (10, 30, 20))]
    rows.append(given(rows[2], registers=300, occupancy=0.03, instructions=40, runtime=Runtime(12.0, 12.0, 12.0)))
    links = explain_mod.explain(rows)
    assert [dict(x.metrics) for x in links][0] == {"registers": 1.0, "occupancy": -1.0}
    assert {"instructions"} == {m for x in links[1:] for m, _ in x.metrics}
    assert explain_mod.explain(rows[:2]) == []  # too few variants to say anything
    assert isinstance(rows[0], Row)


# -- the CLI on real sweeps ----------------------------------------------------------------------

def test_block_size_sweep_on_sm90(tmp_path):
    """The done-when: three rows with the compiler's shared memory, a PTX diff much shorter than raw."""
    r = run("diff", "fused_mm_softmax", "-p", "BLOCK_SIZE=32,64,128", "-t", "cuda:90", "--store", tmp_path, "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    rows = d["variants"]
    assert [v["constexprs"]["BLOCK_SIZE"] for v in rows] == [32, 64, 128]
    assert [v["shared_bytes"] for v in rows] == [8 * 1024, 32 * 1024, 128 * 1024]
    assert [v["label"] for v in rows] == ["BLOCK_SIZE=32", "BLOCK_SIZE=64", "BLOCK_SIZE=128"]
    assert rows[0]["matrix_by_unit"] == {"hmma": 8} and "hgmma" in rows[2]["matrix_by_unit"]
    assert all(v["registers"] and v["code_bytes"] and v["jit_ms"] for v in rows)
    diff = d["diff"]
    assert diff["stage"] == "ptx" and (diff["a"], diff["b"]) == ("BLOCK_SIZE=32", "BLOCK_SIZE=64")
    assert diff["hunks"] and 0 < diff["normalized_changed_lines"] < diff["raw_changed_lines"]
    assert diff["shown_changed_lines"] * 3 < diff["raw_changed_lines"]
    assert d["failed"] == [] and d["sweep"]["jobs"] == 3

    # the same variants again, read back from the store: the table, and another pair and stage
    r = run("diff", tmp_path, "--pair", "32,128", "--stage", "sass")
    assert r.exit_code == 0, r.output
    table = r.output.split("\n\n")[0]
    assert re.search(r"BLOCK_SIZE=32 .* 8\.0 KiB", table) and re.search(r"BLOCK_SIZE=128 .*128\.0 KiB", table)
    assert "sass: BLOCK_SIZE=32" in r.output and "vs BLOCK_SIZE=128" in r.output
    assert "JIT ms per stage" in r.output


def test_code_size_agrees_with_readelf_and_sass(real_variant):
    from kinspect.analysis.code_size import code_bytes

    readelf = shutil.which("readelf")
    v = real_variant("fused_mm_softmax", "cuda:90", BLOCK_SIZE=64)
    size = code_bytes(v)
    sass = Path(v.path, v.stage("sass").file).read_text()
    assert size == 16 * len(re.findall(r"^\s*/\*[0-9a-f]{4,}\*/", sass, re.M))  # 16-byte instructions
    if readelf is None:
        pytest.skip("readelf not installed")
    out = subprocess.run([readelf, "-SW", str(Path(v.path, v.stage("cubin").file))], capture_output=True,
                         text=True, check=True).stdout
    text = next(line for line in out.splitlines() if re.search(rf"\]\s+\.text\.{v.kernel}\s", line))
    # "  [ 9] .text.k  PROGBITS  0000000000000000 000a00 004a80 00  AX  3 ..." : size is the 6th field
    fields = text.split("]", 1)[1].split()
    assert int(fields[4], 16) == size


def test_two_targets(tmp_path):
    r = run("diff", "fused_mm_softmax", "-p", "BLOCK_SIZE=32", "-t", "cuda:80,cuda:90", "--store", tmp_path, "-j", "1")
    assert r.exit_code == 0, r.output
    assert re.search(r"^\s+1\s+cuda:80\s", r.output, re.M) and re.search(r"^\s+2\s+cuda:90\s", r.output, re.M)
    assert "- .target sm_80" in r.output and "+ .target sm_90a" in r.output


KERNEL_A = '''
import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.static_assert(BLOCK <= 256, "BLOCK too big for this kernel")
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * FACTOR, mask=mask)

kinspect_examples = {"scale": {"args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32:4096"},
                               "constexprs": {"BLOCK": 128}}}
'''


def _kernel_file(folder: Path, name: str, factor: str) -> Path:
    path = folder / name
    path.write_text(KERNEL_A.replace("FACTOR", factor))
    return path


def test_two_source_files(tmp_path):
    a = _kernel_file(tmp_path, "a.py", "2.0")
    b = _kernel_file(tmp_path, "b.py", "x")  # x * x: a multiply by itself instead of a constant
    r = run("diff", f"{a}:scale", f"{b}:scale", "--store", tmp_path / "out", "--stage", "ttir", "-j", "1", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert [v["label"] for v in d["variants"]] == ["a.py:scale", "b.py:scale"]
    changed = [line for h in d["diff"]["hunks"] for run_ in h["runs"] if run_["tag"] != " "
               for line in run_["lines"]]
    assert any("arith.constant dense<2.000000e+00>" in line for line in changed)
    assert any("arith.mulf" in line for line in changed)


def test_a_failing_variant_is_reported_and_the_rest_compared(tmp_path):
    a = _kernel_file(tmp_path, "a.py", "2.0")
    r = run("diff", f"{a}:scale", "-p", "BLOCK=64,128,512", "--store", tmp_path / "out", "--table")
    assert r.exit_code == 0, r.output
    assert "BLOCK=64" in r.output and "BLOCK=128" in r.output
    assert re.search(r"failed: .*BLOCK=512.*BLOCK too big", r.output)


def test_parallel_and_sequential_make_the_same_variants(tmp_path):
    hashes = {}
    for jobs in ("1", "2"):
        r = run("diff", "add", "-p", "BLOCK_SIZE=256,1024", "-t", "cuda:80", "--store", tmp_path / jobs, "-j", jobs,
                "--json")
        assert r.exit_code == 0, r.output
        d = json.loads(r.stdout)
        hashes[jobs] = [Path(v["path"]).name for v in d["variants"]]
        assert d["sweep"]["workers"] == int(jobs)
    assert hashes["1"] == hashes["2"]


def test_saved_stage_files_are_diffed_in_place_read_only():
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in X86.iterdir()}
    r = run("diff", X86 / "sum_64_torch.float32_mask.asm", X86 / "sum_64_torch.float32_nomask.asm")
    assert r.exit_code == 0, r.output
    assert "asm: sum_64_torch.float32_mask" in r.output
    assert re.search(r"^\s+1\s+sum_64_torch.float32_mask\s+140\s+70", r.output, re.M)
    assert {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in X86.iterdir()} == before


@pytest.mark.parametrize("args, message", [
    (["fused_mm_softmax", "-p", "BLOCK_SIZE=32", "-t", "cuda:90"], "at least two variants"),
    (["fused_mm_sofmax", "-p", "BLOCK_SIZE=32,64", "-t", "cuda:90"], "did you mean 'fused_mm_softmax'"),
    (["fused_mm_softmax", "-p", "BLOCK_SIZE=", "-t", "cuda:90"], "has an empty value; write -p BLOCK_SIZE=32,64"),
    (["fused_mm_softmax", "-p", "BLOCK_SIZE=32,,64"], "empty value"),
    (["fused_mm_softmax", "-p", "BLOK=32,64", "-t", "cuda:90"], "no constexpr 'BLOK'"),
    (["fused_mm_softmax", "-p", "BLOCK_SIZE=32,64", "-t", "tpu:1"], "unknown target"),
    (["fused_mm_softmax", "-p", "BLOCK_SIZE=32,64", "--num-warps", "4,x"], "whole numbers"),
    ([], "name a kernel"),
    ([str(X86 / "sum_64_torch.float32_mask.asm"), str(X86 / "sum_64_torch.float32_nomask.asm"), "-p", "B=1"],
     "apply to kernels compiled here"),
    ([str(X86 / "sum_64_torch.float32_mask.asm"), str(X86 / "sum_64_torch.float32_nomask.asm"),
      "--stage", "ptx"], "stage 'ptx' is not in both variants"),
    ([str(X86 / "sum_64_torch.float32_mask.asm"), str(X86 / "sum_64_torch.float32_nomask.asm"),
      "--pair", "1,5"], "--pair: '5' matches no variant"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    r = run("diff", *args, "--store", tmp_path / "out", "-j", "1")
    assert r.exit_code == 2, r.output
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], r.output
    assert "Traceback" not in r.output
    assert not any((tmp_path / "out").glob("*/*/record.json"))  # nothing half-written or stored


def test_summary_statistics():
    from kinspect.bench.stats import quantile, summarize

    s = summarize([5.0, 1.0, 2.0, 4.0, 3.0])
    assert (s.n, s.median, s.p20, s.p80, s.mean) == (5, 3.0, 1.8, 4.2, 3.0)
    assert s.cv == pytest.approx(1.5811388 / 3, rel=1e-6)
    assert quantile([7.0], 0.8) == 7.0
    assert summarize([2.0, 2.0]).cv == 0.0


def test_no_timer_without_a_device():
    from kinspect.bench.runtime import device_timer
    from kinspect.compile.targets import active_device_target

    if active_device_target() is not None:
        pytest.skip("a device is here")
    assert device_timer(None) is None


def test_retarget_two_cpus_from_one_ll_file():
    """The K1 question as a diff: the same LLVM IR for a scalar RISC-V and for the X60 with RVV."""
    ll = CPU_FIXTURES / "triton-shared-riscv-softmax" / "ll.ir"
    r = run("diff", ll, "--retarget", "generic-rv64,spacemit-x60", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    rows = {v["label"]: v for v in d["variants"]}
    assert set(rows) == {"cpu:riscv64@generic-rv64", "cpu:riscv64@spacemit-x60"}
    assert rows["cpu:riscv64@generic-rv64"]["vector_instructions"] == 0
    assert rows["cpu:riscv64@spacemit-x60"]["vector_instructions"] > 0
    added = [line for h in d["diff"]["hunks"] for run_ in h["runs"] if run_["tag"] == "+" for line in run_["lines"]]
    assert any(line.startswith(("vle32.v", "vsetvli", "vsetivli")) for line in added)
    bad = run("diff", ll, "--retarget", "spacemit-x61")
    assert bad.exit_code == 2 and "did you mean 'spacemit-x60'" in bad.output


def test_a_launch_that_fails_is_a_note_not_a_crash(real_variant):
    from kinspect.diff.compare import compare

    a = real_variant("fused_mm_softmax", "cuda:90", BLOCK_SIZE=32)
    b = real_variant("fused_mm_softmax", "cuda:90", BLOCK_SIZE=64)

    def timer(v):
        if v.path == b.path:
            raise RuntimeError("out of resource: shared memory, Required: 300000, Hardware limit: 232448")
        return Runtime(1.0, 0.9, 1.1)

    result = compare([a.path, b.path], timer=timer, text=False)
    assert [r.runtime is not None for r in result.rows] == [True, False]
    assert any("not timed: RuntimeError: out of resource" in n for n in result.notes)


class TwoTimingGpus:
    """An executor of two GPUs (kinspect.core.executor's interface) whose GPU 1 runs everything 1.5x slower:
    a stored variant's time is 1 ms per 1024 of BLOCK_N (an invented figure); pinned items go to their GPU,
    the others alternate."""

    name = "local"
    gpus = [0, 1]

    def map(self, fn, items, *, gpu=False, pin=None, progress=None):
        from kinspect.core.executor import Gpu, Result
        from kinspect.files.store import read_record

        assert fn == "kinspect.diff.remote:time_stored" and gpu
        out = []
        for i, (path, _size) in enumerate(items):
            g = (pin or {}).get(i, i % 2)
            ms = read_record(Path(path)).constexprs["BLOCK_N"] / 1024 * (1.5 if g else 1.0)
            out.append(Result(Runtime(median_ms=ms, p20_ms=ms * 0.99, p80_ms=ms * 1.01), None,
                              Gpu(g, "NVIDIA H200", f"GPU-{g}")))
        return out


def test_a_sweep_timed_on_two_gpus_gives_each_row_its_gpu_and_its_ratio_on_that_gpu_in_json(tmp_path):
    """The sweep's --json names the GPU that timed each row and the row's ratio to the baseline timed on the
    same GPU (the JSON records dropped both once); the notes say which GPUs timed, and that the baseline ran
    slower on GPU 1 beyond its spread."""
    from kinspect.core.records import to_json
    from kinspect.diff.compare import compare
    from kinspect.render.json import diff as diff_json

    result = compare(["softmax"], constexprs={"BLOCK_N": [1024, 2048, 4096, 8192]}, targets=("cuda:90",),
                     out_dir=tmp_path / "s", timer=lambda v: None, text=False, ex=TwoTimingGpus())
    d = to_json(diff_json(result))
    rows = [r["runtime"] for r in d["variants"]]
    assert [r["gpu"] for r in rows] == ["GPU 0 (NVIDIA H200)", "GPU 1 (NVIDIA H200)"] * 2
    assert [r["vs_baseline"] for r in rows] == pytest.approx([1.0, 2.0, 4.0, 8.0])
    assert [r["median_ms"] for r in rows] == pytest.approx([1.0, 3.0, 4.0, 12.0])
    assert any(n.startswith("timed on 2 GPU(s) (0, 1) through the local executor") for n in d["notes"])
    assert any("the baseline ran 1.50x slower on GPU 1 than on GPU 0, beyond its spread" in n for n in d["notes"])
