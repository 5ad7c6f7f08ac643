"""A program captured on several ranks keeps each process's rank with its launches and GPU time: the program
view shows the spread (the slowest rank per kernel and in all), `--rank N` shows one rank, and a kernel
launched on some ranks only, or configured differently per rank, is named."""

import dataclasses
import json
import sys
import textwrap
from pathlib import Path

from click.testing import CliRunner

from kinspect.analysis.ranks import for_rank, rank_spread, ranks_of
from kinspect.cli import main
from kinspect.core.model import AutotuneDecision, GpuTime, Launches, ProcessLaunches, TunedConfig
from kinspect.files.store import read_records

# Two "ranks" as torchrun starts them (RANK set in each), one process each: both run `scale`, only rank 1
# runs `shift` (a branch on the rank, as a pipeline stage or a rank-0-only logger would).
PROGRAM = textwrap.dedent('''
    import os, subprocess, sys

    if "RANK" not in os.environ:
        for r in ("0", "1"):
            subprocess.run([sys.executable, __file__], env={**os.environ, "RANK": r}, check=True)
        sys.exit(0)

    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


    @triton.jit
    def shift(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1, mask=m)


    x = torch.randn(1000)
    y = torch.empty_like(x)
    for _ in range(3):
        scale[(4,)](x, y, 1000, BLOCK=256)
    if os.environ["RANK"] == "1":
        shift[(4,)](x, y, 1000, BLOCK=256)
''')


def _capture(tmp_path):
    prog = tmp_path / "ddp_like.py"
    prog.write_text(PROGRAM)
    store = tmp_path / "store"
    r = CliRunner().invoke(main, ["capture", "--interpret", "-t", "cuda:90", "--store", str(store), "--",
                                  sys.executable, str(prog)])
    assert r.exit_code == 0, r.output
    return store


def _timed(store, ms: dict):
    """Give each rank's process of each variant a GPU time, as `capture --time` on a GPU records it (the
    interpreter times nothing): ms[(kernel, rank)]."""
    for v in read_records(store):
        procs = tuple(dataclasses.replace(p, gpu_ms=ms[(v.kernel, p.rank)], timed=p.calls) for p in v.launches.processes)
        total = sum(p.gpu_ms for p in procs)
        la = dataclasses.replace(v.launches, processes=procs, gpu=GpuTime(sum(p.calls for p in procs), total))
        record = Path(v.path) / "record.json"
        d = json.loads(record.read_text())
        d["launches"] = dataclasses.asdict(la)
        record.write_text(json.dumps(d))


def test_two_ranks_are_kept_apart(tmp_path):
    store = _capture(tmp_path)
    variants = list(read_records(store))
    assert ranks_of(variants) == (0, 1)
    scale = next(v for v in variants if v.kernel == "scale")
    assert {p.rank: p.calls for p in scale.launches.processes} == {0: 3, 1: 3}
    spread = rank_spread(variants)
    assert spread.only_on == {"shift": (1,)}
    assert "shift: launched on rank 1 only (of 2)" in spread.notes()
    one = for_rank(variants, 0)
    assert [v.kernel for v in one] == ["scale"] and one[0].launches.calls == 3

    _timed(store, {("scale", 0): 1.0, ("scale", 1): 1.5, ("shift", 1): 0.25})
    r = CliRunner().invoke(main, ["vec-report", str(store), "--top", "0"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "ranks: 2; Triton GPU ms per rank: r0 1.000, r1 1.750; slowest rank 1" in r.output
    assert "! shift: launched on rank 1 only (of 2)" in r.output
    row = next(x for x in r.output.splitlines() if " scale " in x)
    assert "r1 1.500 +50%" in row
    d = json.loads(CliRunner().invoke(main, ["vec-report", str(store), "--json"]).stdout)
    assert d["speed_of_light"]["ranks"]["gpu_ms_by_rank"] == {"0": 1.0, "1": 1.75}
    k = {x["kernel"]: x for x in d["kernels"]}
    assert k["scale"]["ranks"]["slowest_rank"] == 1 and k["scale"]["ranks"]["rank_spread"] == 0.5

    r = CliRunner().invoke(main, ["vec-report", str(store), "--rank", "0"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("scale  cuda:90") and "shift" not in r.output, "rank 0 ran one kernel: its details"
    r = CliRunner().invoke(main, ["vec-report", str(store), "--rank", "1", "--json"])
    d = json.loads(r.stdout)
    assert "(rank 1)" in d["where"] and {k["kernel"]: k["gpu_ms"] for k in d["kernels"]} == {"scale": 1.5, "shift": 0.25}
    r = CliRunner().invoke(main, ["vec-report", str(store), "--rank", "5"])
    assert r.exit_code == 2 and "the capture has ranks 0, 1" in r.output


def test_an_autotuner_that_chose_differently_on_one_rank_is_named():
    procs = (ProcessLaunches(1, 0, "h", 2, 1.0, 2), ProcessLaunches(2, 1, "h", 2, 1.2, 2))
    v = dataclasses.make_dataclass("V", [("kernel", str), ("launches", object)])("mm", Launches(calls=4, processes=procs))

    def chose(rank, block):
        return AutotuneDecision(kernel="mm", key=(1024,), key_names=("N",), best=TunedConfig({"BLOCK": block},
                                {"num_warps": 4}), rank=rank)

    spread = rank_spread([v], (chose(0, 64), chose(1, 128)))
    assert spread.configured == {"mm": {0: "BLOCK=64 num_warps=4", 1: "BLOCK=128 num_warps=4"}}
    assert "mm: its autotuner chose differently per rank: rank 0 BLOCK=64 num_warps=4; rank 1 BLOCK=128 " \
           "num_warps=4" in spread.notes()
    assert rank_spread([v], (chose(0, 64), chose(1, 64))).configured == {}
