"""Every command has help; `python -m kinspect` works; importing kinspect does not import triton."""

import subprocess
import sys

from click.testing import CliRunner

from kinspect.cli import main
from tests.helpers import ROOT


def test_every_command_has_help():
    for name, cmd in main.commands.items():
        assert cmd.help and cmd.help.strip(), f"command {name} has no help"
        r = CliRunner().invoke(main, [name, "--help"])
        assert r.exit_code == 0 and "Usage:" in r.output


def test_python_m_kinspect():
    proc = subprocess.run([sys.executable, "-m", "kinspect", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "dump" in proc.stdout


def test_import_is_cheap():
    code = "import sys, kinspect, kinspect.files.store, kinspect.files.sources; print('triton' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_every_package_is_installed():
    """pyproject lists packages by hand: a new subpackage missing there works in an editable
    install and breaks in a wheel."""
    import tomllib

    root = ROOT
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(root).parts) for p in (root / "kinspect").rglob("__init__.py")}
    on_disk |= {"kinspect.kernels"}
    assert on_disk <= listed, f"not in pyproject's packages: {sorted(on_disk - listed)}"
