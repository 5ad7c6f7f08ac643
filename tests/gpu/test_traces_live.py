"""Foreign inputs made on a GPU (the lent host's Triton, 3.6 there): a program run under tritonparse
with launch tracing, with TRITON_KERNEL_DUMP and its own Triton cache, launching the flash-attention
corpus kernel 5 times. kinspect reads the trace's launches (as tritonparse recorded them on the
device), and the trace, the dump folder and the cache entry give the same instruction counts, and
HGMMA/HMMA on the two tl.dot lines only."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kinspect.cli import main
from tests.gpu.conftest import beside_first, beside_result

ROOT = Path(__file__).parents[2]
PROGRAM = '''
import sys, torch
sys.path.insert(0, {root!r})
import tritonparse.structured_logging as tp
tp.init({trace!r}, enable_trace_launch=True, enable_sass_dump=True)
from tests.corpus.flash_attention import attn_fwd
q, k, v, o = (torch.randn(1, 2, 256, 64, device="cuda", dtype=torch.float16) for _ in range(4))
s = q.stride()
for _ in range(5):
    attn_fwd[(2, 2)](q, k, v, o, 0.125, s[0], s[1], s[2], s[0], s[1], s[2], s[0], s[1], s[2], s[0], s[1], s[2],
                     2, 256, BLOCK_M=128, BLOCK_N=64, HEAD_DIM=64, num_warps=8)
torch.cuda.synchronize()
'''


def kinspect(*args):
    """A kinspect command's stdout, run in this process (reading foreign files needs no fresh one)."""
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exit_code == 0, r.output[-4000:]
    return r.stdout


@beside_first
def run_program(tmp_path_factory):
    pytest.importorskip("tritonparse")
    tmp = tmp_path_factory.mktemp("foreign-live")
    script = tmp / "program.py"
    script.write_text(PROGRAM.format(root=str(ROOT), trace=str(tmp / "trace")))
    env = {**os.environ, "TRITON_KERNEL_DUMP": "1", "TRITON_DUMP_DIR": str(tmp / "dump"),
           "TRITON_CACHE_DIR": str(tmp / "cache")}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    return beside_result(run_program, tmp_path_factory)


def test_a_trace_of_a_real_run_carries_its_launches(ran):
    [rep] = json.loads(kinspect("vec-report", ran / "trace", "--json"))
    assert rep["kernel"] == "attn_fwd" and rep["matrix_instructions"] > 0
    assert {v["line"] for v in rep["verdicts"] if "MMA" in v["text"]} == {28, 36}
    from kinspect.files import sources

    [v] = sources.discover(ran / "trace").variants
    assert v.launches.calls == 5 and v.launches.grids == (((2, 2, 1), 5),)
    q = v.launches.signatures[0].args[0]
    assert (q.name, q.dtype, q.shape, q.device.startswith("cuda")) == ("Q", "float16", (1, 2, 256, 64), True)


def test_the_trace_the_dump_and_the_cache_agree(ran):
    [dump] = (ran / "dump").iterdir()
    cache = next(p for p in (ran / "cache").iterdir() if any(p.glob("__grp__attn_fwd.json")))
    reports = [json.loads(kinspect("vec-report", p, "--json"))[0] for p in (ran / "trace", dump, cache)]
    assert len({json.dumps((r["instructions"], r["mnemonics"], r["matrix_by_unit"])) for r in reports}) == 1
    assert reports[1]["registers"] == reports[2]["registers"] is not None
