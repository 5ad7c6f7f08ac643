"""A sweep timed on every GPU of the host (issue 42; opt-in: `python -m pytest -m gpu tests/gpu/test_executor_live.py -s`):
each row names the GPU that timed it and its ratio to the baseline timed on that same GPU. Skips on a host
with one GPU."""

import json

import pytest
import torch
from click.testing import CliRunner

from kinspect.cli import main


def test_a_sweep_is_timed_on_every_gpu_with_the_baseline_on_each(tmp_path):
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU: the sweep stays on it")
    r = CliRunner().invoke(main, ["diff", "softmax", "-p", "BLOCK_N=1024,2048,4096,8192", "--num-warps", "4,8",
                                  "--size", "4096x4096", "--table", "--json", "--store", str(tmp_path / "s")])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    print(json.dumps(d["notes"], indent=1))
    assert any("timed on 2 GPU(s)" in n or f"timed on {torch.cuda.device_count()} GPU(s)" in n for n in d["notes"])
    rows = d["variants"]
    timed = [x for x in rows if (x.get("runtime") or {}).get("median_ms")]
    assert len(timed) == 8
    assert {x["runtime"]["gpu"].split(" ")[1] for x in timed} >= {"0", "1"}, "both GPUs timed rows"
    assert timed[0]["runtime"]["vs_baseline"] == pytest.approx(1.0, abs=1e-9)


def test_a_tune_runs_on_every_gpu_with_the_original_timed_on_each(tmp_path):
    """`kinspect tune add` on a host with several GPUs: the trials are spread over them, each that another GPU
    than the original's timed carries the original's time on its GPU, and the table says so."""
    n = torch.cuda.device_count()
    if n < 2:
        pytest.skip("one GPU: the tune stays on it")
    store = tmp_path / "s"
    r = CliRunner().invoke(main, ["tune", "add", "--size", "16777216", "--trials", "6", "--json",
                                  "--store", str(store)])
    assert r.exit_code == 0, r.output
    t = json.loads(r.stdout)
    timed = [x for x in t["trials"] if x["status"] == "timed"]
    gpus = {x["gpu"].split(" (")[0] for x in timed}
    assert len(gpus) >= 2, gpus
    [original] = [x for x in t["trials"] if x["candidate"]["origin"] == "original"]
    home = original["gpu"].split(" (")[0]
    assert original["baseline"] is None
    others = [x for x in timed if x["gpu"].split(" (")[0] != home]
    assert others and all(x["baseline"]["median_ms"] > 0 for x in others)
    # the same tune read back as text: a GPU column, the note, and per-GPU ratios
    v = next(p for p in store.glob("*/*") if (p / "tune.json").is_file())
    text = CliRunner().invoke(main, ["vec-report", str(v), "--store", str(store)]).output
    assert "tuned (" in text, text[-2000:]


def test_a_sweep_on_a_local_ray_head_uses_every_gpu(tmp_path):
    """`--cluster ray` on a host with several GPUs (a Ray head started for the run, this one node): the
    compiles run as Ray tasks, the timings in one actor per GPU, every GPU times rows, and each row's
    ratio is to the baseline on its own GPU."""
    pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'kinspect[ray]')")
    n = torch.cuda.device_count()
    if n < 2:
        pytest.skip("one GPU: the sweep stays on it")
    r = CliRunner().invoke(main, ["diff", "softmax", "-p", "BLOCK_N=1024,2048,4096,8192", "--num-warps", "4,8",
                                  "--size", "4096x4096", "--table", "--json", "--store", str(tmp_path / "s"),
                                  "--cluster", "ray"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    print(json.dumps(d["notes"], indent=1))
    assert any(f"timed on {n} GPU(s)" in x and "ray executor" in x for x in d["notes"])
    timed = [x for x in d["variants"] if (x.get("runtime") or {}).get("median_ms")]
    assert len(timed) == 8
    assert len({x["runtime"]["gpu"].split(" (")[0] for x in timed}) == n
    assert all(x["runtime"]["vs_baseline"] > 0 for x in timed)
    assert timed[0]["runtime"]["vs_baseline"] == pytest.approx(1.0, abs=1e-9)
