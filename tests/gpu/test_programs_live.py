"""Programs as people run them, on a GPU (issue 40; opt-in: `python -m pytest -m gpu tests/gpu/test_programs_live.py -s`):
the L2 ceiling beside the copy bandwidth, a library kernel's call sites and two ranks' GPU time, and an
autotuner's L2 flushes kept apart from the program's other GPU work."""

import json
import os
import subprocess
import sys
import textwrap

from click.testing import CliRunner

from kinspect.cli import main

# A "library" (a package of its own) with an autotuned kernel and its wrapper, and a program that calls the
# wrapper from two lines, once per rank: RANK as torchrun sets it, both processes on GPU 0 where only one
# GPU is lent.
LIBRARY = textwrap.dedent('''
    import torch, triton, triton.language as tl

    @triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"])
    @triton.jit
    def _axpy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2 + tl.load(y_ptr + offs, mask=m), mask=m)

    def axpy(x, y):
        n = x.numel()
        _axpy[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
        return y
''')
PROGRAM = textwrap.dedent('''\
    import os, subprocess, sys
    if "RANK" not in os.environ:
        for r in ("0", "1"):
            subprocess.run([sys.executable, __file__], env={**os.environ, "RANK": r}, check=True)
        sys.exit(0)
    import torch
    import gpulib.ops as ops
    x = torch.randn(1 << 22, device="cuda")
    y = torch.randn(1 << 22, device="cuda")
    for _ in range(20):
        ops.axpy(x, y)                              # line 11
    if os.environ["RANK"] == "1":
        for _ in range(20):
            ops.axpy(x[: 1 << 21], y[: 1 << 21])   # line 14: rank 1 does more (another n: its own key)
    torch.cuda.synchronize()
''')


def test_the_l2_ceiling_is_measured_beside_the_copy_bandwidth(tmp_path, monkeypatch):
    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(tmp_path / "cache"))
    from kinspect.bench.device import ceilings

    c = ceilings("cuda")
    print(c.describe())
    assert c.l2_bytes and c.l2_bytes >= 1 << 20
    assert c.l2_gbps and c.l2_gbps > c.copy_gbps, "a copy within the L2 beats DRAM's"


def test_call_sites_ranks_and_tuning_apart(tmp_path):
    (tmp_path / "gpulib").mkdir()
    (tmp_path / "gpulib" / "__init__.py").write_text("")
    (tmp_path / "gpulib" / "ops.py").write_text(LIBRARY)
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    store = tmp_path / "store"
    env = {**os.environ, "KINSPECT_CACHE_DIR": str(tmp_path / "cache"), "TRITON_CACHE_DIR": str(tmp_path / "triton")}
    p = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--time", "--store", str(store), "--",
                        sys.executable, str(prog)], env=env, capture_output=True, text=True, timeout=240,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    r = CliRunner().invoke(main, ["vec-report", str(store), "--json"], env={"KINSPECT_CACHE_DIR": env["KINSPECT_CACHE_DIR"]})
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout) if r.stdout.lstrip().startswith("{") else {"kernels": json.loads(r.stdout)}
    print(json.dumps(out.get("speed_of_light"), indent=1)[:3000])
    # one kernel: the variant view lists the variant; the program facts are read from the store
    from kinspect.analysis.sol import for_program
    from kinspect.files.store import read_records

    variants = [v for v in read_records(store) if v.ran]
    sol = for_program(variants)
    sites = {(s.site.file, s.site.line) for k in sol.call_sites.values() for s in k if s.site is not None}
    assert (str(prog), 11) in sites and (str(prog), 14) in sites, sites
    spread = sol.ranks
    assert spread is not None and spread.ranks == (0, 1)
    assert spread.slowest[0] == 1, "rank 1 launched twice as often"
    others = sol.others
    assert others is not None
    print("others:", list(others.kernels)[:5], "tuning:", list(others.tuning)[:5])
    assert others.tuning, "the autotuner's benchmark ran GPU work (its L2 flush) kept apart"
    # a fill kernel may run in both (the program's own torch.empty/zeros outside the benchmark): each record
    # counts once, in one of the two
    assert sum(k["calls"] for k in others.tuning.values()) > 0
