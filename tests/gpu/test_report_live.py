"""kinspect report on a real GPU: the sweep is timed, so the runtime plot and the roofline appear."""

import re

from click.testing import CliRunner

from kinspect.cli import main


def test_report_of_a_timed_sweep_has_the_roofline(tmp_path):
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["report", "fused_mm_softmax", "-p", "BLOCK_SIZE=32,64,128", "-o", str(out),
                                  "--store", str(tmp_path / "store")])
    assert r.exit_code == 0, r.output
    assert "plots: sweep, roofline" in r.output
    text = out.read_text()
    assert 'data-plot="roofline"' in text and "median time (ms) against BLOCK_SIZE" in text
    assert re.search(r"roofs: measured copy bandwidth [\d,]+ GB/s and torch.matmul peak [\d,.]+ TFLOP/s", text)
    assert "time ms (p20-p80)" in text
    print(r.output, out.stat().st_size)
