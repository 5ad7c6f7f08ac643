"""Reports and stores are meant to be shared (attached to an issue, a store sent to a colleague): every
file and folder kinspect writes has the mode the user's umask gives, not tempfile's owner-only 0600/0700
(issue 43)."""

import os
import shutil
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from kinspect.cli import main
from kinspect.core import modes
from tests.helpers import ROOT

VECTOR_ADD = f"{ROOT}/samples/tutorials/vector_add.py:add_kernel"


@pytest.fixture
def umask_027():
    """The process's umask set to 027 for the test (group may read, others nothing), then restored."""
    old = os.umask(0o027)
    modes._UMASK = None
    try:
        yield
    finally:
        os.umask(old)
        modes._UMASK = None


def _modes(*roots: Path) -> dict[str, int]:
    found = {}
    for root in roots:
        for p in [root, *root.rglob("*")]:
            if not p.is_symlink():
                found[str(p)] = stat.S_IMODE(p.stat().st_mode)
    return found


def test_every_written_file_and_folder_follows_the_umask(umask_027, interpreted_capture, tmp_path):
    captured, _, _ = interpreted_capture
    store, out = tmp_path / "store", tmp_path / "out"
    out.mkdir()
    copied = tmp_path / "cap"
    with _umask(0o022):             # the copy keeps the fixture's modes; only what the commands write counts
        shutil.copytree(captured, copied)
    before = _modes(copied)
    runner = CliRunner()
    for args in (["dump", VECTOR_ADD, "-p", "BLOCK_SIZE=256", "--store", store],
                 ["report", VECTOR_ADD, "-p", "BLOCK_SIZE=256,1024", "--store", store, "-o", out / "add.html",
                  "--no-bench"],
                 ["repro", "add_kernel", "-p", "BLOCK=64", "--store", copied, "-o", out / "repro.py"],
                 ["vec-report", "3", "--store", copied]):
        r = runner.invoke(main, [str(a) for a in args])
        assert r.exit_code == 0, (args, r.output)
    written = {p: m for p, m in _modes(store, out, copied).items() if before.get(p) != m or p not in before}
    written.pop(str(out))
    assert str(out / "add.html") in written and str(out / "repro.py") in written and str(store) in written
    wrong = {p: oct(m) for p, m in written.items()
             if m not in ((0o750,) if Path(p).is_dir() else (0o640, 0o750))}
    assert not wrong, wrong
    assert written[str(out / "add.html")] == 0o640 and written[str(out / "repro.py")] == 0o750


class _umask:
    def __init__(self, mask):
        self.mask = mask

    def __enter__(self):
        self.old = os.umask(self.mask)

    def __exit__(self, *exc):
        os.umask(self.old)
