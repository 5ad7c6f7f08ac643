"""Launch records: what a captured program launched, per variant (count, grids, argument signatures,
process and rank), with the hooks of other tools chained and restored.

On this CPU-only machine the launches go through tests/dryrun.py's driver: the JIT path is Triton's
own (binding, specialization, grid, launch_metadata, the launch hooks) and only the kernel does not
run. The GPU side (device time) is in tests/gpu/test_capture_live.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import torch
from triton import knobs

import kinspect
from kinspect.hooks.timers import attribute
from kinspect.files.launches import SIGNATURES, merge
from kinspect.core.model import ArgSpec, GpuTime, Launches, LaunchSignature, ProcessLaunches
from kinspect.files.store import LAUNCHES_GLOB, read_records
from tests.dryrun import dry_run
from tests.jit_kernels import _double
from tests.helpers import ROOT



def _launch(x, y, n, grid=None, block=512):
    _double[grid or ((n + block - 1) // block,)](x, y, n, BLOCK=block)


def test_launches_are_recorded_per_signature_and_grid(tmp_path, fresh_triton_cache):
    x, y = torch.empty(4096), torch.empty(4096)
    with dry_run() as d, kinspect.capture(tmp_path / "out") as rec:
        for _ in range(3):
            _launch(x, y, 4096)
        _launch(x[:2000], y, 2000)                       # another shape and scalar, same variant
        _launch(x, y, 4096, grid=lambda meta: (5, 2))   # a grid function: the grid it returned
    assert len(d.launched) == 5
    [v] = read_records(tmp_path / "out")
    assert [r.hash for r in rec.variants] == [v.hash]
    la = v.launches
    assert la.calls == 5 and la.other_calls == 0
    assert dict(la.grids) == {(8, 1, 1): 3, (4, 1, 1): 1, (5, 2, 1): 1}
    top = la.top()
    assert top.calls == 3 and top.grid == (8, 1, 1) and top.pid == os.getpid()
    assert [a.name for a in top.args] == ["x_ptr", "y_ptr", "n", "BLOCK"]
    assert top.args[0] == ArgSpec("x_ptr", "tensor", shape=(4096,), strides=(1,), dtype="float32", device="cpu")
    assert top.args[2] == ArgSpec("n", "int", value=4096) and top.args[3].value == 512
    assert sum(s.calls for s in la.signatures) == 5 and len(la.signatures) == 3
    # merged into record.json when the block ended; no per-process file left
    data = json.loads(Path(v.path, "record.json").read_text())
    assert data["record_version"] == 2 and data["launches"]["calls"] == 5
    assert not list(Path(v.path).glob(LAUNCHES_GLOB))
    from triton.compiler.compiler import CompiledKernel

    assert not hasattr(CompiledKernel.launch_metadata, "kinspect_original"), "Triton's method is given back"


def test_a_kernel_compiled_before_the_capture_is_recorded_at_its_first_launch(tmp_path, fresh_triton_cache):
    """No listener sees a kernel the JIT already holds (or one a compile worker made): kinspect
    records it from the launched kernel itself, with its launches."""
    x, y = torch.empty(4096), torch.empty(4096)
    with dry_run():
        _launch(x, y, 4096)                     # compiled and launched before the capture
        with kinspect.capture(tmp_path / "out") as rec:
            _launch(x, y, 4096)
            _launch(x, y, 4096)
    [v] = read_records(tmp_path / "out")
    assert [r.hash for r in rec.variants] == [v.hash] and v.cache_hit
    assert v.launches.calls == 2 and v.stage("ptx") is not None and v.constexprs == {"BLOCK": 512}


def test_signatures_past_the_cap_are_counted(tmp_path, fresh_triton_cache):
    x, y = torch.empty(4096), torch.empty(4096)
    with dry_run(), kinspect.capture(tmp_path / "out"):
        for n in range(16, 16 * (SIGNATURES + 5) + 1, 16):   # SIGNATURES + 5 distinct sizes, one variant
            _launch(x, y, n, grid=(1,))
    [v] = read_records(tmp_path / "out")
    assert v.launches.calls == SIGNATURES + 5
    assert len(v.launches.signatures) == SIGNATURES and v.launches.other_calls == 5


def test_other_tools_hooks_are_chained_and_restored(tmp_path, fresh_triton_cache):
    """A hook added to Triton's HookChain, a kernel's own launch_metadata (proton's flops, say) and a
    hook that replaces the chain (tritonparse's init) all keep working beside kinspect's."""
    x, y = torch.empty(4096), torch.empty(4096)
    seen, replaced = [], []
    chain_before = knobs.runtime.launch_enter_hook

    def theirs(md):
        seen.append(md.get().get("flops"))     # get() runs the kernel's own launch_metadata

    def own_metadata(grid, metadata, args):
        return {"flops": 2 * args["n"]}

    knobs.runtime.launch_enter_hook.add(theirs)
    _double.launch_metadata = own_metadata
    try:
        with dry_run(), kinspect.capture(tmp_path / "out"):
            _launch(x, y, 4096)
            knobs.runtime.launch_enter_hook.add(lambda md: replaced.append("added inside"))
            _launch(x, y, 1024)
        assert knobs.runtime.launch_enter_hook is chain_before
    finally:
        knobs.runtime.launch_enter_hook.remove(theirs)
        knobs.runtime.launch_enter_hook.calls = [c for c in knobs.runtime.launch_enter_hook.calls
                                                 if getattr(c, "__name__", "") != "<lambda>"]
        _double.launch_metadata = None
    assert seen == [8192, 2048] and replaced == ["added inside"]
    [v] = read_records(tmp_path / "out")
    assert v.launches.calls == 2 and {s.args[2].value for s in v.launches.signatures} == {4096, 1024}


RANK_SCRIPT = """
import sys, torch
sys.path.insert(0, {root!r})
import kinspect
from triton import knobs
from tests.dryrun import dry_run
from tests.jit_kernels import _double
knobs.cache.dir = sys.argv[2]
x, y = torch.empty(4096), torch.empty(4096)
with dry_run(), kinspect.capture(sys.argv[1]):
    for _ in range(int(sys.argv[3])):
        _double[(8,)](x, y, 4096, BLOCK=512)
"""


def test_ranks_capture_into_one_store(tmp_path):
    """Two ranks capturing into one store at once: one record, their launches added, each process
    named with its rank."""
    script = tmp_path / "rank.py"
    script.write_text(RANK_SCRIPT.format(root=str(ROOT)))
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp_path / "out"), str(tmp_path / f"cache{r}"),
                               str(3 + r)], env={**os.environ, "RANK": str(r)}, stderr=subprocess.PIPE, text=True)
             for r in (0, 1)]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    [v] = read_records(tmp_path / "out")
    assert v.launches.calls == 7
    assert sorted((p.rank, p.calls) for p in v.launches.processes) == [(0, 3), (1, 4)]
    assert sorted(s.rank for s in v.launches.signatures) == [0, 1]
    assert not list(Path(v.path).glob(LAUNCHES_GLOB))


EXIT_SCRIPT = """
import os, sys, torch
sys.path.insert(0, {root!r})
from tests.dryrun import dry_run
from tests.jit_kernels import _double
x, y = torch.empty(4096), torch.empty(4096)
with dry_run():
    _double[(8,)](x, y, 4096, BLOCK=512)
    _double[(8,)](x, y, 4096, BLOCK=512)
    _double.warmup(x, y, 4096, BLOCK=256, grid=(1,))   # compiled, never launched
os._exit(0)
"""


def capture_cli(tmp_path, script):
    """`kinspect capture -o tmp_path/out -- python script`, which must succeed."""
    proc = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(tmp_path / "out"), "--",
                           sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    return proc


def test_a_program_that_calls_os_exit_loses_nothing_compiled(tmp_path):
    """os._exit runs no exit handler: the variants were stored as they compiled, the first launch of
    each was written at once, and `kinspect capture` derives their SASS after the program ends."""
    script = tmp_path / "exit.py"
    script.write_text(EXIT_SCRIPT.format(root=str(ROOT)))
    proc = capture_cli(tmp_path, script)
    variants = {v.constexprs["BLOCK"]: v for v in read_records(tmp_path / "out")}
    assert set(variants) == {256, 512}
    assert all(v.stage("sass") is not None for v in variants.values()), "derived after the program ended"
    assert variants[512].launches.calls >= 1 and variants[256].launches is None
    assert "kinspect: 2 variant(s) recorded" in proc.stderr
    # Triton's one-time start-up went to the process's first compile, not into its IR-from-AST time
    assert max(v.times.startup_us for v in variants.values()) > 0
    assert min(v.times.startup_us for v in variants.values()) == 0


def test_capture_cli_prints_launches_per_variant(tmp_path):
    script = tmp_path / "launch.py"
    script.write_text(EXIT_SCRIPT.format(root=str(ROOT)).replace("os._exit(0)", ""))
    proc = capture_cli(tmp_path, script)
    assert "2 launch(es) in 1 process(es)" in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip().startswith("_double")]
    assert lines[0].split()[-4] == "2", proc.stderr      # the launched variant first, with its 2 calls
    assert "µs per launch" in proc.stderr
    [v] = [v for v in read_records(tmp_path / "out") if v.launches]
    assert v.launches.calls == 2 and not list(Path(v.path).glob(LAUNCHES_GLOB))
    assert not (tmp_path / "out" / ".kinspect-capture").exists()


def _sig(n, calls, pid=1, rank=None):
    return LaunchSignature(grid=(n, 1, 1), args=(ArgSpec("n", "int", value=n),), calls=calls, pid=pid, rank=rank)


def test_merge_adds_counts_and_keeps_the_most_frequent():
    a = Launches(calls=10, grids=(((1, 1, 1), 10),), signatures=(_sig(1, 6), _sig(2, 4)),
                 processes=(ProcessLaunches(1, 0, "h", 10),), gpu=GpuTime(10, 5.0, (0.5,) * 10))
    b = Launches(calls=5, grids=(((1, 1, 1), 5),), signatures=(_sig(2, 5),),
                 processes=(ProcessLaunches(1, 0, "h", 5),), gpu=GpuTime(5, 10.0, (2.0,) * 5))
    m = merge([a, None, b])
    assert m.calls == 15 and dict(m.grids) == {(1, 1, 1): 15}
    assert [(s.grid[0], s.calls) for s in m.signatures] == [(2, 9), (1, 6)]
    assert m.processes == (ProcessLaunches(1, 0, "h", 15),)
    assert m.gpu.calls == 15 and m.gpu.total_ms == 15.0 and len(m.gpu.samples_ms) == 15
    many = Launches(calls=40, signatures=tuple(_sig(i, 1) for i in range(40)))
    capped = merge([many, Launches(calls=0)])
    assert len(capped.signatures) == SIGNATURES and capped.other_calls == 40 - SIGNATURES
    assert merge([None]) is None


def test_profiler_records_are_matched_by_name_and_launch_order():
    order = {"k": ["v1", "v1", "v2"], "solo": ["s"] * 2, "unseen": ["u"]}
    kernels = {"k": [(30, 3_000_000), (10, 1_000_000), (20, 2_000_000)],   # out of order on purpose
               "solo": [(1, 500_000), (2, 500_000), (3, 500_000)],            # one more than launched
               "other": [(1, 1)]}
    got = attribute(order, kernels)
    assert [x for x in got if x[0] != "s"] == [("v1", 1.0), ("v1", 2.0), ("v2", 3.0)]
    assert [x for x in got if x[0] == "s"] == [("s", 0.5)] * 3


SPAWN_SCRIPT = """
import sys, torch, torch.multiprocessing as mp
sys.path.insert(0, {root!r})

def work(rank):
    from tests.dryrun import dry_run
    from tests.jit_kernels import _double
    x, y = torch.empty(4096), torch.empty(4096)
    with dry_run():
        for _ in range(rank + 1):
            _double[(8,)](x, y, 4096, BLOCK=512)

if __name__ == "__main__":
    work(0)                       # the parent launches too
    mp.spawn(work, nprocs=2)      # fresh interpreters: capture reaches them through the environment
"""


def test_torch_multiprocessing_children_are_captured(tmp_path):
    script = tmp_path / "spawn.py"
    script.write_text(SPAWN_SCRIPT.format(root=str(ROOT)))
    proc = capture_cli(tmp_path, script)
    [v] = read_records(tmp_path / "out")
    assert v.launches.calls == 1 + 1 + 2
    assert len({p.pid for p in v.launches.processes}) == 3
