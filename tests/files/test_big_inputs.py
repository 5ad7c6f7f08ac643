"""Big inputs in bounded memory (issue 42, item 3), at CI size: a report of more variants than it
embeds says what it left out; a trace is read as a stream (its reader's peak memory stays far below
the trace's size). Inputs are made as benchmarks/big_inputs.py makes them, from real offline compiles."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kinspect.cli import main
from tests.helpers import ROOT



def _big_inputs():
    name = "big_inputs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


@pytest.fixture(scope="module")
def store(tmp_path_factory, real_variant):
    """5 variants of 5 kernels (a program), each the real `add` compile under its own record."""
    seed = Path(real_variant("add", "cuda:90").path)
    return _big_inputs().make_store(seed, 5, tmp_path_factory.mktemp("big") / "store")


def _report(store, out):
    r = CliRunner().invoke(main, ["report", str(store), "-o", str(out), "--no-bench"])
    assert r.exit_code == 0, r.output
    return r.output, out.read_text()


def _data(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="kinspect-data">(.*?)</script>', page,
                                re.S).group(1))


def test_a_report_past_the_cap_embeds_the_cap_and_says_what_it_left_out(store, tmp_path, monkeypatch):
    from kinspect.render import html

    full_out, full = _report(store, tmp_path / "full.html")
    assert "left out" not in full and "note:" not in full_out
    assert sum(bool(v["codes"]) for v in _data(full)["variants"]) == 5

    import kinspect.analysis

    analysed = []
    full_analysis = kinspect.analysis.analyse_all
    monkeypatch.setattr(kinspect.analysis, "analyse_all", lambda vs, *a, **k: (analysed.extend(vs),
                                                                               full_analysis(vs, *a, **k))[1])
    monkeypatch.setattr(html, "EMBEDDED", 2)
    out, page = _report(store, tmp_path / "capped.html")
    assert len(analysed) == 2, "only the variants the page carries are analysed in full (and held)"
    assert "note: 3 variants are in the table only (the page carries 2)" in out
    assert "3 of 5 variants left out of the page" in page
    data = _data(page)
    assert len(data["variants"]) == 5                        # every row stays in the table
    embedded = [i for i, v in enumerate(data["variants"]) if v["codes"]]
    assert len(embedded) == 2 and data["chosen"] in embedded
    assert page.count('<ul class="verdicts">') == 2
    for i in set(range(5)) - set(embedded):                  # a row past the cap says how to see it
        section = re.search(rf'<section class="variant" id="variant-{i}" hidden>(.*?)</section>', page, re.S).group(1)
        assert "kinspect show" in section and 'class="count"' in section
    assert len(page) < len(full)


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """A 50 MB tritonparse trace as a long run leaves one: a real compile's compilation event with
    distinct hashes, each followed by 400 launch events of it (as tritonparse writes them)."""
    work = tmp_path_factory.mktemp("big-trace")
    b = _big_inputs()
    return b.make_trace(b.seed_trace(work), 50, work / "big.ndjson", launches=400)


READ = """
import resource, sys
from pathlib import Path
from kinspect.files import traces
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
entries, warnings = traces.read(Path(sys.argv[1]))
print(len(entries), len(warnings), base, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def test_a_trace_is_read_as_a_stream(trace, tmp_path):
    """Lines are read one at a time: what the read keeps is the variants' entries, not the trace's
    bytes (here about 7 MB more for 50 MB of events)."""
    size = trace.stat().st_size
    r = subprocess.run([sys.executable, "-c", READ, str(trace)], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, KINSPECT_CACHE_DIR=str(tmp_path / "cache")), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    n, warnings, base_kb, peak_kb = map(int, r.stdout.split())
    made = int((trace.parent / (trace.name + ".done")).read_text())
    assert n == made and warnings == 0                       # every compilation read, nothing skipped
    grew = (peak_kb - base_kb) * 1024
    assert grew < size / 4, f"reading a {size / 1e6:.0f} MB trace grew the process by {grew / 1e6:.0f} MB"
