"""kinspect bench on a CPU-only machine: statistics, timing records, correctness checks, the
no-device error, --interpret, the first-call split, the torch op for --profile, dump --passes."""

import base64
import json
import os
import statistics
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from kinspect.bench.check import compare
from kinspect.bench.first_call import FirstCall, in_user_cache
from kinspect.bench.stats import quantile, summarize
from kinspect.bench.timing import Timing, time_cpu
from kinspect.cli import main
from kinspect.core.errors import KinspectError
from kinspect.core.model import CompileTimes
from kinspect.core.records import to_json
from kinspect.render.json import first_call_json, throughput, timing_json

BUGGY = '''
import torch
import triton
import triton.language as tl


@triton.jit
def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * 2 + FUDGE, mask=mask)


FUDGE = tl.constexpr({fudge})
x = torch.randn(300)
kinspect_examples = {{"double": {{
    "args": {{"x_ptr": x, "y_ptr": torch.empty(300), "n": 300}}, "constexprs": {{"BLOCK": 128}}, "grid": (3,),
    "reference": lambda x_ptr: x_ptr * 2, "inputs": ["x_ptr"], "output": "y_ptr",
    "bytes": lambda a: 2 * a["n"] * 4}}}}
'''


# statistics ---------------------------------------------------------------------------------------

def test_quantiles_match_the_linear_method():
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0]
    s = summarize(values)
    assert s.median == statistics.median(values) == 3.5
    # numpy.percentile(values, 20) and (values, 80) with the default 'linear' method
    assert s.p20 == pytest.approx(2.0) and s.p80 == pytest.approx(5.0)
    assert s.cv == pytest.approx(statistics.stdev(values) / statistics.fmean(values))
    assert quantile([7.0], 0.8) == 7.0
    with pytest.raises(ValueError):
        quantile([], 0.5)


def test_cpu_timer_records_wall_and_cpu_time_per_run():
    """A fake clock: each run takes 2 ms of wall time and 6 ms of CPU time (3 threads busy)."""
    wall, cpu = [0.0], [0.0]

    def run():
        wall[0] += 0.002
        cpu[0] += 0.006

    t = time_cpu(run, warmup_ms=10, rep_ms=20, clock=lambda: wall[0], cpu_clock=lambda: cpu[0])
    assert t.wall.median == pytest.approx(2.0) and t.cpu.median == pytest.approx(6.0)
    assert t.busy_threads == pytest.approx(3.0)
    assert t.wall.n == 10  # runs until ~20 ms of wall time have passed
    j = to_json(timing_json(t))
    assert j["busy_threads"] == 3.0 and j["threads"] and j["flush_bytes"] is None
    assert "process_time" in t.describe() and "threads:" in t.describe()


def test_cpu_timer_takes_a_minimum_of_runs_for_slow_kernels():
    clock = [0.0]

    def run():
        clock[0] += 1.0  # one second per run, far over the repetition budget

    t = time_cpu(run, warmup_ms=0, rep_ms=1, clock=lambda: clock[0], cpu_clock=lambda: clock[0])
    assert t.wall.n == 5


def test_gpu_timing_describes_its_flush():
    t = Timing(wall=summarize([0.1, 0.2, 0.3]), flush_bytes=256 << 20, tool="triton.testing.do_bench")
    assert "L2 flushed before each run (256 MiB buffer zeroed)" in t.describe()
    assert "3 runs" in t.describe()


# correctness ---------------------------------------------------------------------------------------

def test_compare_measures_error_on_the_references_scale():
    ref = torch.softmax(torch.randn(8, 16), -1)
    assert compare(ref.clone(), ref, precision="float32").ok
    off = compare(ref + 1e-3, ref, precision="float32")
    assert not off.ok and off.error == pytest.approx(1e-3 / float(ref.abs().max()), rel=1e-3)
    assert "WRONG" in off.describe() and "tolerance 0.0001 for float32" in off.describe()
    assert compare(ref + 1e-3, ref, precision="tf32").ok


def test_compare_treats_shared_nan_as_agreement_and_new_nan_as_wrong():
    ref = torch.tensor([1.0, float("nan"), 2.0])
    assert compare(ref.clone(), ref, precision="float32").ok
    assert not compare(torch.tensor([float("nan"), float("nan"), 2.0]), ref, precision="float32").ok
    assert not compare(torch.zeros(2), ref, precision="float32").ok


# the first call ------------------------------------------------------------------------------------

def test_first_call_splits_wall_time_into_jit_stages_and_the_rest():
    times = CompileTimes(400_000, (("ttir", 3_000), ("ttgir", 10_000), ("cubin", 100_000)), 500)
    f = FirstCall(wall_ms=900.0, cache_hit=False, times=times)
    assert f.jit_ms == pytest.approx(513.5) and f.rest_ms == pytest.approx(386.5)
    assert list(f.stages_ms()) == ["source", "ttir", "ttgir", "cubin", "store"]
    warm = FirstCall(wall_ms=2.0, cache_hit=True, times=CompileTimes(900, (), 0))
    assert warm.stages_ms() == {"cache lookup": 0.9}
    assert to_json(first_call_json(warm))["rest_ms"] == 1.1


def test_in_user_cache_looks_for_the_hash_folder_without_writing(tmp_path):
    from triton import knobs

    h = "ab" * 32
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path)
        assert in_user_cache(h) is False
        (tmp_path / base64.b32encode(bytes.fromhex(h)).decode().rstrip("=")).mkdir()
        assert in_user_cache(h) is True
        assert in_user_cache("") is None and in_user_cache("not hex") is None


# the command on a machine with no device -------------------------------------------------------------

@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here")
def test_no_device_is_one_line_naming_interpret_and_dump(tmp_path):
    r = CliRunner().invoke(main, ["bench", "softmax", "--store", str(tmp_path / "out")])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.output
    assert "--interpret" in lines[0] and "kinspect dump softmax" in lines[0] and "no device" in lines[0]
    assert not (tmp_path / "out").exists(), "nothing half-written"


@pytest.mark.parametrize("argv, words", [
    (["softmax", "-t", "cuda:90"], "only compiles offline"),
    (["sofmax", "--interpret"], "did you mean 'softmax'"),
    (["softmax", "--interpret", "--profile", "t.json"], "--profile needs a device"),
    (["softmax", "--interpret", "-p", "nope=1"], "has no constexpr 'nope'"),
    (["softmax", "--profile", "/no/such/folder/t.json"], "does not exist"),
    (["softmax", "--rep", "0"], "is not in the range"),
])
def test_bad_bench_input_is_one_line_exit_2(tmp_path, argv, words):
    r = CliRunner().invoke(main, ["bench", *argv, "--store", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    assert words in r.output and "Traceback" not in r.output
    assert not (tmp_path / "out").exists()


# --interpret ------------------------------------------------------------------------------------------

def _shipped():
    from kinspect import kernels

    return kernels.names()


@pytest.mark.parametrize("kernel", _shipped())
def test_interpret_checks_every_shipped_kernel_against_torch(kernel):
    r = CliRunner().invoke(main, ["bench", kernel, "--interpret", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["check"]["ok"], d["check"]
    assert d["check"]["error"] <= d["check"]["tolerance"]


def test_interpret_runs_the_size_asked_for():
    r = CliRunner().invoke(main, ["bench", "softmax", "--interpret", "--size", "3000x5"])
    assert r.exit_code == 0, r.output
    # 8-column rows: 512 rows per program (kernels.softmax.strategy), 6 programs
    assert "size 3000x5, grid (6,)" in r.output and "correct: max error" in r.output


def test_interpret_catches_a_wrong_kernel(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(BUGGY.format(fudge=0.0))
    ok = CliRunner().invoke(main, ["bench", f"{src}:double", "--interpret"])
    assert ok.exit_code == 0 and "correct" in ok.output, ok.output
    src.write_text(BUGGY.format(fudge=0.01))
    bad = CliRunner().invoke(main, ["bench", f"{src}:double", "--interpret"])
    assert bad.exit_code == 1 and "WRONG" in bad.output, bad.output


def test_interpret_many_runs_several_checks_in_one_child():
    """The lecture's square kernel with a block shorter than the row leaves columns unwritten."""
    from kinspect import api

    runs = api.interpret_many([dict(kernel="square", constexprs={"BLOCK_SIZE": b}, size=f"3x{n}")
                               for n, b in ((100, 128), (200, 128))])
    assert [(r.size, r.grid) for r in runs] == [("3x100", (3,)), ("3x200", (3,))]
    assert runs[0].check.ok and not runs[1].check.ok
    with pytest.raises(KinspectError, match="did you mean 'square'"):
        api.interpret_many([dict(kernel="square", size="3x100"), dict(kernel="sqare")])


def test_interpret_reports_a_kernel_that_fails_in_one_line(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(BUGGY.format(fudge=0.0).replace("x * 2 + FUDGE", "x * 2 + undefined_name"))
    r = CliRunner().invoke(main, ["bench", f"{src}:double", "--interpret"])
    assert r.exit_code == 2 and "undefined_name" in r.output and "Traceback" not in r.output


# --profile: the kernel as a torch op ---------------------------------------------------------------------

def test_the_launch_becomes_a_named_torch_op_with_its_output_mutated():
    from kinspect.bench.prepared import prepare
    from kinspect.bench.profile import op_name, register

    launch = prepare("softmax", device="cpu", constexprs={}, args={}, size="4x8", num_warps=None, num_stages=None)
    name, op, tensors = register(launch)
    assert name == "kinspect::softmax" == op_name("softmax") and tensors == ["x_ptr", "y_ptr"]
    assert str(torch.ops.kinspect.softmax.default._schema) == \
        "kinspect::softmax(Tensor x_ptr, Tensor(a1!) y_ptr) -> ()"
    assert op_name("my-kernel.v2") == "kinspect::my_kernel_v2"


def test_a_user_kernels_declared_formulas_and_reference_reach_the_launch(tmp_path):
    from kinspect.bench.prepared import prepare

    src = tmp_path / "k.py"
    src.write_text(BUGGY.format(fudge=0.0))
    launch = prepare(f"{src}:double", device="cpu", constexprs={}, args={}, size=None, num_warps=None,
                     num_stages=None, flops=7)
    assert launch.bytes_moved == 2400 and launch.flops == 7 and launch.output == "y_ptr"
    assert launch.input_values()[0] is launch.args["x_ptr"]


# throughput percentages -------------------------------------------------------------------------------

def test_throughput_percentages_are_of_the_measured_records():
    from kinspect.bench.measure import Throughput

    t = Throughput(gbps=3978.0, copy={"gbps": 4248.0}, tflops=100.0, peak={"tflops": 400.0})
    assert t.pct_copy == pytest.approx(93.64, abs=0.01) and t.pct_peak == pytest.approx(25.0)
    assert Throughput(gbps=None).pct_copy is None
    j = to_json(throughput(t))
    assert j["pct_of_bandwidth"] == t.pct_copy and j["copy_bandwidth"] == {"gbps": 4248.0}


def test_cpu_copy_bandwidth_is_measured_once_and_cached_with_its_method():
    from kinspect.bench.device import copy_bandwidth

    first = copy_bandwidth("cpu")
    assert first["gbps"] > 0 and "copy_" in first["method"] and first["measured"]
    assert copy_bandwidth("cpu") == first  # read back from kinspect's cache, not measured again


def test_method_names_versions_and_says_when_clocks_are_unreadable():
    from kinspect.bench.method import describe_clocks, versions

    v = versions()
    assert v["triton"] and v["torch"] and v["kinspect"]
    assert describe_clocks(None) == "clocks not readable"


# dump --passes: per-pass timing and IR snapshots from an offline compile ---------------------------------

REPORT = """===-------------------------------------------------------------------------===
                         ... Execution time report ...
===-------------------------------------------------------------------------===
  Total Execution Time: 0.0042 seconds

  ----Wall Time----  ----Name----
    0.0015 ( 36.4%)  InlinerPass
    0.0000 (  1.0%)    (A) CallGraph
    0.0007 ( 17.2%)  'tt.func' Pipeline
    0.0007 ( 16.8%)    CanonicalizerPass
    0.0002 (  4.1%)  CanonicalizerPass
    0.0003 (  7.9%)  Rest
    0.0042 (100.0%)  Total
"""


def test_timing_report_is_read_as_passes_not_pipelines_or_analyses():
    from kinspect.compile.passes import parse_timing

    pipelines, passes = parse_timing((REPORT + REPORT).splitlines())
    assert pipelines == [4.2, 4.2]
    assert set(passes) == {"InlinerPass", "CanonicalizerPass"}
    assert passes["CanonicalizerPass"].runs == 4 and passes["CanonicalizerPass"].ms == pytest.approx(1.8)


def test_snapshots_split_on_pass_headers_and_skip_a_pass_internal_dump():
    from kinspect.compile.passes import split_snapshots

    text = ["// -----// IR Dump Before A (a) ('builtin.module' operation) //----- //\n", "module a\n",
            "// -----// SoftwarePipeliner internal IR Dump After: LowerLoops\n", "noise\n",
            "// -----// IR Dump Before B: b{x=1} ('builtin.module' operation) //----- //\n", "module b\n"]
    assert list(split_snapshots(text)) == [("A", "module a\n"), ("B", "module b\n")]


def test_dump_passes_times_each_pass_and_keeps_the_ir_that_changed(tmp_path):
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["dump", "softmax", "-t", "cuda:90", "--passes", "--store", str(out)])
    assert r.exit_code == 0, r.output
    assert "JIT ms" in r.output and "MLIR passes: 3 pipelines" in r.output, r.output
    [folder] = list(out.glob("softmax/*/passes"))
    record = json.loads((folder / "passes.json").read_text())
    files = sorted(p.name for p in folder.glob("*.mlir"))
    assert files == sorted(record["changed"]) and 0 < len(files) < record["snapshots"]
    assert files[0].startswith("001-before-") and "tt.func" in (folder / files[0]).read_text()
    names = {p["name"] for p in record["passes"]}
    assert {"ConvertTritonToTritonGPU", "ConvertTritonGPUToLLVM"} <= names
    assert not os.environ.get("MLIR_ENABLE_TIMING"), "the child's environment stays in the child"


def test_hooks_defer_records_after_the_block(tmp_path):
    """capture(defer=True) keeps the listener call cheap: nothing is stored until the block ends."""
    import kinspect
    from kinspect.compile import private_cache
    from kinspect.compile.driver import compile_only, fresh_binders
    from kinspect.compile.targets import resolve
    from kinspect import kernels

    spec = kernels.get("add")
    ex = spec.example("1024", torch.float32, "cpu")
    with private_cache(), compile_only(resolve("cuda:90").target), fresh_binders(spec.fn), \
            kinspect.capture(tmp_path / "out", defer=True) as rec:
        spec.fn.warmup(**ex.args, **ex.constexprs, grid=ex.grid)
        assert len(rec.pending) == 1 and rec.variants == []
        assert not list(Path(tmp_path / "out").rglob("record.json"))   # (the store's lock file is there)
    assert len(rec.variants) == 1 and rec.pending == []
    from kinspect.analysis.derived import complete

    assert rec.variants[0].stage("sass") is None and complete(rec.variants[0]).stage("sass") is not None


def test_a_first_call_that_fails_to_compile_is_one_located_line(tmp_path):
    """The real CompilationError Triton raises, turned into the line bench prints."""
    from kinspect.bench.first_call import first_call_error
    from kinspect.compile import private_cache
    from kinspect.compile.driver import compile_only, fresh_binders
    from kinspect.compile.targets import resolve
    from kinspect.compile.user import load
    from kinspect.core.errors import CompileError

    src = tmp_path / "k.py"
    src.write_text(BUGGY.format(fudge=0.0).replace("x * 2 + FUDGE", "x * 2 + undefined_name"))
    uk = load(f"{src}:double", {}, {})
    with private_cache(), compile_only(resolve("cuda:90").target), fresh_binders(uk.fn):
        with pytest.raises(Exception) as raised:
            uk.fn.warmup(**uk.args, **uk.constexprs, grid=uk.grid)
    err = first_call_error(uk.fn, raised.value)
    assert isinstance(err, CompileError)
    assert f"{src}:12" in str(err) and "undefined_name" in str(err)
    launch = first_call_error(uk.fn, RuntimeError("CUDA error: an illegal memory access was encountered"))
    assert str(launch) == ("kernel 'double' failed on its first call: RuntimeError: CUDA error: an illegal memory "
                           "access was encountered")
