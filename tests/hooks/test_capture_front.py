"""`kinspect capture` as a newcomer meets it (issue 43): --json leaves stdout to the JSON alone, and a
capture on a machine with no GPU, without --interpret, ends with one line that says what to run."""

import json
import subprocess
import sys

import pytest
from tests.helpers import ROOT

VECTOR_ADD = ROOT / "samples" / "tutorials" / "vector_add.py"


def _no_gpu_here():
    from kinspect.cli.capture import _no_gpu

    if not _no_gpu():
        pytest.skip("a GPU or CPU backend is here: the program's kernels run")


def test_capture_json_is_all_of_stdout(tmp_path):
    """The tutorial prints tensors; with --json they go to stderr and stdout parses as one JSON object."""
    p = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--interpret", "--store", str(tmp_path / "cap"),
                        "--json", "--", sys.executable, str(VECTOR_ADD)], capture_output=True, text=True, cwd=tmp_path,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    found = json.loads(p.stdout)
    assert [v["kernel"] for v in found["variants"]] == ["add_kernel"]
    assert "The maximum difference between torch and triton is" in p.stderr


def test_capture_without_a_gpu_points_to_interpret(tmp_path):
    _no_gpu_here()
    p = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(tmp_path / "cap"), "--",
                        sys.executable, str(VECTOR_ADD)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert p.returncode == 1, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("kinspect: nothing recorded: the program stopped (exit 1) and this machine has no GPU; "
                           f"`kinspect capture --interpret --store {tmp_path / 'cap'} -- "), last
    assert "0 variant(s) recorded" not in p.stderr and not (tmp_path / "cap").exists()
