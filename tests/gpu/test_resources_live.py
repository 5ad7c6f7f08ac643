"""On a GPU: registers the driver reports at load match cuobjdump's REG for the same cubin, and
vec-report on a device-compiled variant uses them."""

import json
import re
import subprocess
from pathlib import Path

from click.testing import CliRunner

from kinspect.backends.tools import nvidia_tool
from kinspect.cli import main


def test_registers_at_load_equal_cuobjdump(tmp_path):
    r = CliRunner().invoke(main, ["vec-report", "fused_mm_softmax", "-p", "BLOCK_SIZE=64", "--json",
                                  "--store", str(tmp_path)])
    assert r.exit_code == 0, r.output
    [rep] = json.loads(r.stdout)
    assert rep["registers_from"] == "the loaded kernel (driver)"
    cubin = next(Path(rep["path"]).glob("*.cubin"))
    raw = subprocess.run([nvidia_tool("cuobjdump"), "--dump-resource-usage", str(cubin)],
                         capture_output=True, text=True, check=True).stdout
    assert rep["registers"] == int(re.search(r"REG:(\d+)", raw).group(1))
    assert rep["matrix_instructions"] > 0
    print(json.dumps({k: rep[k] for k in ("target", "registers", "spills", "shared_bytes", "occupancy",
                                          "matrix_by_unit")}))
