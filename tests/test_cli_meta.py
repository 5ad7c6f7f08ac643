"""Every command has help; `python -m kinspect` works; importing kinspect does not import triton."""

import subprocess
import sys

from click.testing import CliRunner

from kinspect.cli import main


def test_every_command_has_help():
    for name, cmd in main.commands.items():
        assert cmd.help and cmd.help.strip(), f"command {name} has no help"
        r = CliRunner().invoke(main, [name, "--help"])
        assert r.exit_code == 0 and "Usage:" in r.output


def test_python_m_kinspect():
    proc = subprocess.run([sys.executable, "-m", "kinspect", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "dump" in proc.stdout


def test_import_is_cheap():
    code = "import sys, kinspect, kinspect.store, kinspect.sources; print('triton' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
