"""Helpers the parser and report tests share."""

import ast
import re
from pathlib import Path

from kinspect.ir.records import Instruction

KERNELS = Path(__file__).parent.parent / "kernels"
BLOCK = dict(BLOCK_SIZE=64)     # the size the real-output tests compile (one compile each)


def regex_examples(module) -> dict[str, list[str]]:
    """{NAME: [example lines]} from the comment lines right above each `NAME = re.compile(`.
    An example written as a quoted Python literal ("\\x00...") is unescaped."""
    source = Path(module.__file__).read_text().splitlines()
    found = {}
    for i, line in enumerate(source):
        if (m := re.match(r"^(_?[A-Z][A-Z0-9_]*) = re\.compile\(", line)):
            examples, j = [], i - 1
            while j >= 0 and source[j].startswith("# "):
                text = source[j][2:]
                examples.insert(0, ast.literal_eval(text) if text.startswith('"') else text)
                j -= 1
            found[m[1]] = examples
    return found


def instructions(records):
    return [r for r in records if isinstance(r, Instruction)]


def kernel_line(text: str) -> int:
    """The line of `text` in the shipped fused kernel, read from the file."""
    lines = (KERNELS / "fused_mm_softmax.py").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


def dot_line() -> int:
    return kernel_line("c = tl.dot(a, b)")


def one_error_line(r, *needles) -> str:
    """A CliRunner result that is one `error:` line holding each needle, exit code 2."""
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.output
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


# -- a second Triton (.ci/run installs it: python -m venv .venv-t36 && .venv-t36/bin/pip install torch triton==3.6.0
#    "numpy<2.3"; Triton 3.6's interpreter fails on numpy 2.3+) ------------------------------------------------

OTHER_TRITON_VENV = Path(__file__).parent.parent / ".venv-t36"


def other_triton() -> tuple[str, str]:
    """(python, its Triton version) of the second venv; the test skips, saying why, where there is none."""
    import subprocess

    import pytest

    python = OTHER_TRITON_VENV / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no second Triton: {OTHER_TRITON_VENV} is missing (.ci/run installs Triton 3.6 there)")
    proc = subprocess.run([str(python), "-c", "import triton, torch, numpy; print(triton.__version__)"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.skip(f"the second Triton in {OTHER_TRITON_VENV} does not import: {proc.stderr.strip()[-300:]}")
    return str(python), proc.stdout.strip()


def kinspect_path(tmp: Path) -> str:
    """A folder holding only this checkout's kinspect package: another interpreter's PYTHONPATH (this venv's
    site-packages would bring this Triton with it)."""
    folder = tmp / "kinspect-src"
    folder.mkdir(exist_ok=True)
    link = folder / "kinspect"
    if not link.exists():
        link.symlink_to(Path(__file__).parent.parent / "kinspect")
    return str(folder)
