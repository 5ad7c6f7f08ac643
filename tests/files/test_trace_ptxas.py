"""A default tritonparse trace (no SASS: tritonparse dumps it only when asked) analysed as a cache entry
is (issue 39, item 3): the cubin made from the trace's PTX by Triton's bundled ptxas with Triton's own
options, marked as derived with the ptxas version, then SASS, registers and spills from it. Where ptxas
cannot, the PTX itself is analysed (wgmma counted as matrix instructions) and the report says so.

One real compile of the flash-attention corpus kernel for cuda:90 (tests/trace_maker.py, its own
process) writes the default trace and the Triton cache entry of the same compile.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus.manifest import HERE as CORPUS
from tests.helpers import ROOT, run_raising as run

pytest.importorskip("tritonparse")

KERNEL = f"{CORPUS / 'flash_attention.py'}:attn_fwd"
DOT_LINES = {28, 36}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    out = tmp_path_factory.mktemp("default-trace")
    subprocess.run([sys.executable, str(ROOT / "tests" / "trace_maker.py"), str(out), KERNEL, "cuda:90", "default"],
                   check=True, capture_output=True, timeout=600, env=dict(os.environ))
    return out


def report(path: Path) -> dict:
    r = run("vec-report", path, "--json")
    assert r.exit_code == 0, r.output
    [one] = json.loads(r.stdout)
    return one


def test_a_default_trace_holds_no_sass(made):
    [trace] = (made / "trace-default").iterdir()
    event = json.loads(trace.read_text().splitlines()[0])
    names = {Path(n).suffix for n in event["payload"]["file_content"]}
    assert {".ttir", ".ttgir", ".llir", ".ptx", ".json"} <= names and not names & {".sass", ".cubin"}


def test_its_cubin_is_made_by_ptxas_as_triton_makes_it(made):
    from kinspect.analysis.derived import complete
    from kinspect.files import sources

    [v] = sources.discover(made / "trace-default").variants
    v = complete(v)
    cubin, sass = v.stage("cubin"), v.stage("sass")
    assert cubin.derived_by.startswith("derived: ptxas ") and "--gpu-name=sm_90a" in cubin.derived_by
    assert "not the cubin the program ran" in cubin.derived_by
    assert "from a cubin derived: ptxas" in sass.derived_by
    [entry] = (made / "cache").iterdir()
    # the same bytes as the cubin Triton itself made in that compile
    assert Path(v.path, cubin.file).read_bytes() == (entry / "attn_fwd.cubin").read_bytes()


def test_vec_report_of_a_default_trace_gives_the_cache_entrys_figures_and_verdicts(made):
    [entry] = (made / "cache").iterdir()
    ours, cached = report(made / "trace-default"), report(entry)
    assert ours["isa"] == cached["isa"] == "sass" and ours["matrix_by_unit"] == {"hgmma": 8}
    for key in ("instructions", "mnemonics", "matrix_by_unit", "load_widths", "store_widths", "registers", "spills"):
        assert ours[key] == cached[key], key
    assert "of a cubin derived: ptxas" in ours["registers_from"]
    assert {v["line"] for v in ours["verdicts"] if "HGMMA" in v["text"]} == DOT_LINES
    text = run("vec-report", made / "trace-default").output
    assert "no machine-code stage" not in text and "from a cubin derived: ptxas" in text


def test_where_ptxas_cannot_the_ptx_is_analysed_and_said(made, tmp_path, monkeypatch):
    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(tmp_path / "cache"))
    failing = tmp_path / "ptxas"
    failing.write_text("#!/bin/sh\necho 'ptxas fatal: this one cannot' >&2\nexit 1\n")
    failing.chmod(0o755)
    monkeypatch.setenv("TRITON_PTXAS_PATH", str(failing))
    monkeypatch.setenv("TRITON_PTXAS_BLACKWELL_PATH", str(failing))
    r = report(made / "trace-default")
    assert r["isa"] == "ptx" and r["matrix_by_unit"] == {"hgmma": 8}       # wgmma.mma_async in the PTX
    assert "the ptx is analysed in its place" in r["isa_stage"]["instead_of_machine_code"]
    assert "this one cannot" in r["isa_stage"]["instead_of_machine_code"]
    assert r["registers"] is None and not any("spill" in v["text"] for v in r["verdicts"])
    assert {v["line"] for v in r["verdicts"] if "counted in the ptx" in v["text"]} == DOT_LINES
    text = run("vec-report", made / "trace-default").output
    assert "no machine code (cubin not derived" in text
    monkeypatch.delenv("TRITON_PTXAS_PATH")      # a failure is not kept: with ptxas back, SASS again
    monkeypatch.delenv("TRITON_PTXAS_BLACKWELL_PATH")
    assert report(made / "trace-default")["isa"] == "sass"
