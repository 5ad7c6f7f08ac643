"""samples/softmax_rows.py beyond its expected output (tests/test_samples.py compares that): its
figures follow the size, and a bad size is one line."""

import subprocess
import sys
from tests.helpers import ROOT


SAMPLE = ROOT / "samples" / "softmax_rows.py"


def _run(*argv):
    return subprocess.run([sys.executable, str(SAMPLE), *argv], capture_output=True, text=True, timeout=600)


def test_sample_figures_follow_the_size():
    """Not a replay of the file: another size gives other programs, padding and ratios."""
    proc = _run("--size", "1000x3")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "ideal: read the input once and write the output once = 2 x 4 x 1,000 x 3 = 24,000 bytes" in out
    programs = next(ln for ln in out.splitlines() if ln.startswith("programs launched")).split()
    assert programs[-2:] == ["1,000", "1"]   # one per row vs 1024 rows (of 4 columns) in one program
    masked = next(ln for ln in out.splitlines() if "masked off" in ln).split()
    assert masked[-2:] == ["1,000", "1,096"]  # 4-wide blocks over 3 columns; 24 padding rows of 4 too


def test_bad_size_is_one_line():
    proc = _run("--size", "12")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "ROWSxCOLS" in proc.stderr
