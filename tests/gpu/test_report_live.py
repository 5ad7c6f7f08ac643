"""kinspect report on a real GPU: the sweep is timed, so the runtime plot and the roofline appear. The test
checks that they are there, not their values, so the command runs beside the first file's cases (conftest),
in a process of its own with a kinspect cache of its own."""

import os
import re
import subprocess
import sys

import pytest

from tests.gpu.conftest import beside_first, beside_result


@beside_first
def run_report(tmp_path_factory):
    """(the finished command, the page it wrote)."""
    tmp = tmp_path_factory.mktemp("report-live")
    out = tmp / "r.html"
    proc = subprocess.run([sys.executable, "-m", "kinspect", "report", "fused_mm_softmax", "-p", "BLOCK_SIZE=32,64,128",
                           "-o", str(out), "--store", str(tmp / "store")], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "KINSPECT_CACHE_DIR": str(tmp / "kinspect-cache")})
    return proc, out


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    return beside_result(run_report, tmp_path_factory)


def test_report_of_a_timed_sweep_has_the_roofline(ran):
    r, out = ran
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    output = r.stdout + r.stderr
    assert "plots: sweep, roofline" in output
    text = out.read_text()
    assert 'data-plot="roofline"' in text and "median time (ms) against BLOCK_SIZE" in text
    assert re.search(r"roofs: measured copy bandwidth [\d,]+ GB/s and torch.matmul peak [\d,.]+ TFLOP/s", text)
    assert "time ms (p20-p80)" in text
    print(output, out.stat().st_size)
