"""kinspect bench on a real GPU: first call split, steady-state timing, throughput, the trace (its
measure against ncu, benchmarks/bench_vs_ncu.py, runs among test_kernels_live.py's cases, beside them)."""

import json
from pathlib import Path

from click.testing import CliRunner

from kinspect.cli import main
from kinspect.render.json import bench as bench_json, dumps


def _bench(tmp_path, *argv):
    r = CliRunner().invoke(main, ["bench", *argv, "--store", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    return r


def test_bench_json_holds_jit_stages_quantiles_throughput_and_method(tmp_path):
    d = json.loads(_bench(tmp_path, "softmax", "--size", "4096x1024", "--json").output)
    from kinspect.core.records import problems

    assert not problems(d, json.loads(CliRunner().invoke(main, ["schema", "bench"]).output)), "kinspect schema bench"
    assert d["kinspect_json"] == 1 and d["asm"]["vector_instructions"] > 0
    cold, warm = d["first_call"]["cold"], d["first_call"]["warm"]
    assert cold["cache_hit"] is False and warm["cache_hit"] is True
    assert {"source", "ttir", "ttgir", "llir"} <= set(cold["jit_ms_by_stage"])
    assert cold["wall_ms"] >= cold["jit_ms"] > warm["jit_ms"]
    ms = d["steady"]["ms"]
    assert 0 < ms["p20"] <= ms["median"] <= ms["p80"] and ms["n"] >= 10
    t = d["throughput"]
    assert t["gb_per_s"] > 0 and 1 < t["pct_of_bandwidth"] < 120
    assert t["copy_bandwidth"]["measured"] and "copy_" in t["copy_bandwidth"]["method"]
    m = d["method"]
    assert m["flush_bytes"] > 0 and m["runs"] == ms["n"] and m["versions"]["triton"]
    assert d["check"]["ok"], d["check"]
    assert d["asm"]["registers"] > 0 and d["asm"]["loaded"]["registers"] > 0
    names = [r["name"] for r in d["references"]]
    assert names[0] == "torch" and d["references"][0]["speedup_of_kernel"] > 0
    print(json.dumps({k: d[k] for k in ("first_call", "steady", "references")}, indent=1))


def test_matrix_kernel_is_compared_with_the_measured_matmul_peak(tmp_path):
    d = json.loads(_bench(tmp_path, "fused_mm_softmax", "-p", "BLOCK_SIZE=64", "--json", "--no-compile").output)
    t = d["throughput"]
    assert d["asm"]["matrix_instructions"] > 0 and d["asm"]["matrix_by_unit"]
    assert t["peak_flops"]["dtype"] == "float32" and "TF32" in t["peak_flops"]["method"]
    assert 0 < t["pct_of_peak"] < 100
    assert d["check"]["precision"] == "tf32" and d["check"]["ok"]


def test_profile_trace_names_the_op_and_the_kernel(tmp_path):
    """`kinspect bench add --profile trace.json`, in this process: what it prints and its --json, from one run."""
    from kinspect import api
    from kinspect.render.bench import render

    trace = tmp_path / "trace.json"
    result = api.bench("add", profile=trace, references=False, out_dir=tmp_path / "out")
    text = render(result)
    assert "kinspect::add" in text and "profile" in text
    events = json.loads(trace.read_text())["traceEvents"]
    assert any(e.get("name") == "kinspect::add" for e in events)
    assert any(e.get("cat") == "kernel" and "add_kernel" in e.get("name", "") for e in events)
    d = json.loads(dumps(bench_json(result)))
    assert d["profile"]["kernel_events"] == d["profile"]["runs"] and d["profile"]["kernel_ms"] > 0


def test_bench_passes_adds_mlir_pass_timing(tmp_path):
    d = json.loads(_bench(tmp_path, "add", "--passes", "--no-reference", "--json").output)
    assert len(d["passes"]["pipelines_ms"]) >= 3 and d["passes"]["changed"]
    assert Path(d["passes"]["folder"]).parent == Path(d["path"])

