"""kinspect diff on a real GPU: the sweep is timed, and runtime is related to the metrics."""

import json

from click.testing import CliRunner

from kinspect.cli import main


def test_sweep_is_timed_on_the_device(tmp_path):
    r = CliRunner().invoke(main, ["diff", "fused_mm_softmax", "-p", "BLOCK_SIZE=32,64,128", "--store", str(tmp_path),
                                  "--json", "--table"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    for v in d["variants"]:
        t = v["runtime"]
        assert t is not None, v["label"]
        assert 0 < t["p20_ms"] <= t["median_ms"] <= t["p80_ms"]
        assert t["gbps"] > 0 and t["tflops"] > 0 and t["roofline_pct"] > 0
        assert "do_bench" in t["method"] and "copy bandwidth" in t["method"]
    assert [v["shared_bytes"] for v in d["variants"]] == [8192, 32768, 131072]
    print(json.dumps([{k: v[k] for k in ("label", "registers", "occupancy", "runtime")} for v in d["variants"]],
                     indent=1))
    print(d["runtime_moves_with"])


def test_sweep_text_shows_runtime_columns(tmp_path):
    r = CliRunner().invoke(main, ["diff", "softmax", "--size", "4096x1024", "--num-warps", "1,2,4,8,16",
                                  "--store", str(tmp_path), "--table"])
    assert r.exit_code == 0, r.output
    assert "time ms (p20-p80)" in r.output and "GB/s" in r.output and "% roofline" in r.output
    print(r.output)
