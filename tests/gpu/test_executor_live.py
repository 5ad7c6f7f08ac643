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
