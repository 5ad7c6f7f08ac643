"""kinspect tune on a GPU: the busiest Inductor kernel of a torch.compile'd TransformerEncoderLayer
(samples/torch_compile_capture.py), captured with its GPU time, tuned on its captured launch through
`vec-report --tune 1 --trials 2`: every candidate checked against the original's output and timed, Inductor's own
and max_autotune's configs timed beside, the result stored and shown by `report`."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kinspect.cli import main
from kinspect.files.store import read_records
from tests.gpu.conftest import beside_first, beside_result
from tests.gpu.conftest import _kinspect


def test_tune_the_kernel_with_the_most_headroom(captured, tmp_path):
    proc = _kinspect("vec-report", captured, "--top", "0", "--tune", "1", "--trials", "2", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [t] = json.loads(proc.stdout)["tune"]
    assert t["error"] is None, t
    trials = t["trials"]
    original = [x for x in trials if x["candidate"]["origin"] == "original"]
    assert len(original) == 1 and original[0]["status"] == "timed" and original[0]["median_ms"] > 0
    timed = [x for x in trials if x["status"] == "timed"]
    assert all(x["median_ms"] > 0 and x["runs"] >= 5 for x in timed)
    # a config equal to the original's (Inductor's own config, often) is a copy of the original's trial, whose
    # check line is "the reference"; every other timed trial was checked against it
    def key(x):
        return x["candidate"]["constexprs"], x["candidate"]["num_warps"], x["candidate"]["num_stages"]

    assert all("correct" in x["why"] for x in timed if key(x) != key(original[0])), \
        [(x["candidate"], x["why"]) for x in timed if key(x) != key(original[0]) and "correct" not in x["why"]]
    assert 1 <= sum(1 for x in trials if x["candidate"]["origin"] == "kinspect" and x["status"] != "pruned") <= 2 + 2
    assert any(x["candidate"]["origin"] == "max_autotune" for x in trials)
    # Inductor's own configs compute what the program ran: one refused as wrong means the replay is wrong
    # (on the H200 every config of GPT-2's nll_loss backward was, when each run read a clone() of padded rows)
    theirs = [x for x in trials if x["candidate"]["origin"] in ("inductor", "max_autotune")]
    assert not [x for x in theirs if x["status"] == "wrong"], [x["why"] for x in theirs if x["status"] == "wrong"]
    s = t["summary"]
    assert s["original_us"] > 0 and s["winner_us"] > 0 and s["winner_us"] <= s["original_us"] * 1.05
    assert s["kinspect_trials_to_match"] is None or 0 <= s["kinspect_trials_to_match"] <= s["kinspect_trials"]
    assert all(x["candidate"]["why"].startswith("widening from ") for x in trials
               if x["candidate"]["why"].startswith("widening"))      # each names the candidate it widened from
    assert "tuning " in proc.stderr, "progress as it goes"
    # stored beside the variant, shown by report
    [v] = [v for v in read_records(captured) if v.kernel == t["kernel"] and (Path(v.path) / "tune.json").is_file()]
    html = tmp_path / "r.html"
    rep = CliRunner().invoke(main, ["report", str(v.path), "--no-bench", "-o", str(html)])
    assert rep.exit_code == 0, rep.output
    assert "<h3>Tune</h3>" in html.read_text()


@beside_first
def tune_shipped(tmp_path_factory):
    """`kinspect tune add`, finished: checked for what it says, not for which config wins, so it may run
    beside the first file's cases, with a kinspect cache of its own."""
    tmp = tmp_path_factory.mktemp("tune-shipped")
    return subprocess.run([sys.executable, "-m", "kinspect", "tune", "add", "--size", "16777216", "--trials", "2",
                           "-o", str(tmp / "out")], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "KINSPECT_CACHE_DIR": str(tmp / "kinspect-cache")})


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    return beside_result(tune_shipped, tmp_path_factory)


def test_tune_a_shipped_kernel_launched_here(shipped):
    proc = shipped
    print(proc.stdout[-4000:], proc.stderr[-4000:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "winner:" in proc.stdout and "original" in proc.stdout
