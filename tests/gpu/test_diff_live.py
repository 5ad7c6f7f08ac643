"""kinspect diff on a real GPU: the sweep is timed, and runtime is related to the metrics. The tests check
the timings' shape (quantiles in order, throughput and roofline there), never their values, so the two
sweeps run beside the first file's cases (conftest), each command in a process of its own."""

import json
import os

import pytest

from tests.gpu.conftest import beside_first, beside_result, kinspect_side_by_side

COMMANDS = {"json": ["diff", "fused_mm_softmax", "-p", "BLOCK_SIZE=32,64,128", "--json", "--table"],
            "text": ["diff", "softmax", "--size", "4096x1024", "--num-warps", "1,2,4,8,16", "--table"]}


@beside_first
def run_sweeps(tmp_path_factory) -> dict:
    """{name: the finished command}, side by side, with a kinspect cache of their own."""
    tmp = tmp_path_factory.mktemp("diff-live")
    env = {**os.environ, "KINSPECT_CACHE_DIR": str(tmp / "kinspect-cache")}
    return kinspect_side_by_side({name: ([*argv, "--store", tmp / name], env) for name, argv in COMMANDS.items()},
                                 timeout=600)


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict:
    return beside_result(run_sweeps, tmp_path_factory)


def test_sweep_is_timed_on_the_device(ran):
    r = ran["json"]
    assert r.returncode == 0, r.stderr[-4000:]
    d = json.loads(r.stdout)
    for v in d["variants"]:
        t = v["runtime"]
        assert t is not None, v["label"]
        assert 0 < t["p20_ms"] <= t["median_ms"] <= t["p80_ms"]
        assert t["gb_per_s"] > 0 and t["tflop_per_s"] > 0 and t["pct_of_bandwidth"] > 0
        assert "do_bench" in t["method"] and "copy bandwidth" in t["method"]
    assert [v["shared_bytes"] for v in d["variants"]] == [8192, 32768, 131072]
    print(json.dumps([{k: v[k] for k in ("label", "registers", "occupancy", "runtime")} for v in d["variants"]],
                     indent=1))
    print(d["runtime_moves_with"])


def test_sweep_text_shows_runtime_columns(ran):
    r = ran["text"]
    assert r.returncode == 0, r.stderr[-4000:]
    assert "time ms (p20-p80)" in r.stdout and "GB/s" in r.stdout and "% roofline" in r.stdout
    print(r.stdout)
