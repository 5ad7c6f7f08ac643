"""Real captured programs as pytest fixtures (tests/fixtures/capture, PROVENANCE.md there):

    from tests.captured import gpt2, transformer   # noqa: F401  (pytest finds fixtures by name)
"""

import tarfile
from pathlib import Path

import pytest

from tests.conftest import FIXTURES


def _extract(name: str, out: Path) -> Path:
    with tarfile.open(FIXTURES / "capture" / name) as tar:
        tar.extractall(out, filter="data")
    return out


@pytest.fixture(scope="session")
def gpt2(tmp_path_factory) -> Path:
    """The GPT-2 training step captured on an H200: gpt2/ (the store), output_code/ (Inductor's wrapper
    modules, at their /tmp/ind paths below it) and ncu.csv.gz (Nsight Compute's counters of its launches)."""
    return _extract("gpt2_h200.tgz", tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="session")
def transformer(tmp_path_factory) -> Path:
    """The TransformerEncoderLayer captured on an H100: the store."""
    return _extract("transformer_h100.tgz", tmp_path_factory.mktemp("transformer")) / "tf"
