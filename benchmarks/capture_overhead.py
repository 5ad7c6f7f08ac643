"""What capturing costs a program: plain Triton vs kinspect's capture vs tritonparse's structured
logging, side by side, in alternating rounds, each run a fresh process with an empty Triton cache.

    python benchmarks/capture_overhead.py                 # CPU: compile offline for cuda:90
    python benchmarks/capture_overhead.py --gpu           # GPU: compile and run, then the per-launch cost

The compile workload is a program's worth of kernels: a layer norm that loops over its row, an
autotuned matmul (2 configs), a masked 2-D tile copy, a kernel on a 3-D grid and the fused
matmul+softmax at BLOCK_SIZE 32/64/128. On the CPU each is compiled for cuda:90 through Triton's
JIT with kinspect's compile-only driver (warmup); on a GPU each is compiled and launched once and
synchronized. Triton's one-time start-up (hashing its sources for the cache key) is paid before the
clock starts in every mode, so the ratio is that of the kernels' own compile time, the stricter one.

Modes: plain; kinspect (`kinspect.capture`: the listener links the stage files and writes a record;
launches observed per compiled kernel, kinspect.hooks.observe, no launch hook); tritonparse
(`structured_logging.init(..., enable_trace_launch=True)`); on a GPU also kinspect with --time
(profiler: CUPTI kernel records through a CUDA-only kineto session; events). `--gpu` then measures
the cost per launch of a tiny kernel, twice:
- in one process, plain, kinspect counting launches and kinspect timing with CUDA events alternating
  in blocks of `--launches` launches (a capture entered and left around each kinspect block), at
  least 9 rounds: a process's own layout and clocks are the same for every mode, so a few percent
  show through;
- a fresh process per mode and round: plain, counting, timing with kernel records (a kineto session,
  which is not undone in the process once CUPTI is attached), sampled kernel records (1 in 10), CUDA
  events, tritonparse tracing launches.

Prints, per mode, the median time over rounds (wall, and for the compiles the process's CPU time,
which other load on the machine disturbs less), its p20-p80 spread, and the median of the per-round
ratios to plain with their spread (each round runs every mode once, in a rotated order).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


# -- the workload (imported by the child processes) -------------------------------------------------

def _kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def layernorm(x_ptr, y_ptr, w_ptr, b_ptr, n_cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x_ptr += row * n_cols
        y_ptr += row * n_cols
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, n_cols, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / n_cols
        var = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, n_cols, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
            var += tl.where(cols < n_cols, (x - mean) * (x - mean), 0.0)
        rstd = 1 / tl.sqrt(tl.sum(var, axis=0) / n_cols + eps)
        for off in range(0, n_cols, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + cols, mask=mask)
            b = tl.load(b_ptr + cols, mask=mask)
            tl.store(y_ptr + cols, (x - mean) * rstd * w + b, mask=mask)

    @triton.autotune(configs=[triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4),
                              triton.Config({"BM": 128, "BN": 64, "BK": 32}, num_warps=8)], key=["M", "N", "K"])
    @triton.jit
    def matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pm, pn = tl.program_id(0), tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak)
            b = tl.load(b_ptr + (k + rk)[:, None] * sbk + rn[None, :] * sbn)
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc)

    @triton.jit
    def block_copy(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
        # a 2-D tile with masks on both edges (Triton 3.9 removed tl.make_block_ptr)
        rows = tl.program_id(0) * BM + tl.arange(0, BM)
        cols = tl.arange(0, BN)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)

    @triton.jit
    def grid3d(x_ptr, y_ptr, D1, D2, BLOCK: tl.constexpr):
        i, j, k = tl.program_id(0), tl.program_id(1), tl.program_id(2)
        base = (i * D1 + j) * D2 + k * BLOCK
        offs = base + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2.0)

    @triton.jit
    def tiny(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)

    return layernorm, matmul, block_copy, grid3d, tiny


def _workload(device: str, run: bool) -> None:
    """Compile (and with `run`, launch and synchronize) every kernel of the workload once."""
    import torch

    from kinspect import kernels

    layernorm, matmul, block_copy, grid3d, _ = _kernels()
    f32 = dict(dtype=torch.float32, device=device)
    x, y = torch.randn(64, 1000, **f32), torch.empty(64, 1000, **f32)
    w, b = torch.ones(1000, **f32), torch.zeros(1000, **f32)
    a16 = torch.randn(256, 256, dtype=torch.float16, device=device)
    c = torch.empty(256, 256, **f32)
    x3, y3 = torch.randn(4 * 8 * 256, **f32), torch.empty(4 * 8 * 256, **f32)
    fused = kernels.get("fused_mm_softmax")
    calls = [
        (layernorm, (x, y, w, b, 1000, 1e-5), dict(BLOCK=256), (64,)),
        (block_copy, (x, y, 64, 1000), dict(BM=16, BN=1024), (4,)),
        (grid3d, (x3, y3, 8, 256), dict(BLOCK=256), (4, 8, 1)),
    ]
    for block in (32, 64, 128):
        ex = fused.example("", torch.float32, device, BLOCK_SIZE=block)
        calls.append((fused.fn, (), {**ex.args, **ex.constexprs}, ex.grid))
    for fn, args, kw, grid in calls:
        if run:
            fn[grid](*args, **kw)
        else:
            fn.warmup(*args, **kw, grid=grid)
    mm_args = (a16, a16, c, 256, 256, 256, 256, 1, 256, 1, 256, 1)
    if run:
        matmul[lambda m: (256 // m["BM"], 256 // m["BN"])](*mm_args)
    else:
        for cfg in matmul.configs:      # what the autotuner compiles: each config
            matmul.fn.warmup(*mm_args, **cfg.kwargs, num_warps=cfg.num_warps, grid=(1,))
    if run:
        torch.cuda.synchronize()


def _launches(n: int) -> float:
    import torch

    *_, tiny = _kernels()
    x = torch.zeros(1024, device="cuda")
    tiny[(1,)](x, 1024, BLOCK=1024)
    return _tiny_loop(tiny, x, n)


def _tiny_loop(tiny, x, n: int) -> float:
    """Seconds to launch `tiny` n times, the device idle before and synchronized after."""
    import torch

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        tiny[(1,)](x, 1024, BLOCK=1024)
    torch.cuda.synchronize()
    return time.perf_counter() - t0


INPROC = ["plain", "kinspect", "kinspect-events"]


def inproc_child(out: str, launches: int, rounds: int) -> None:
    """One process, the modes of INPROC alternating in blocks of `launches` launches, `rounds` times
    (the order rotated each round): the tiny kernel compiled once, a capture entered and left around
    each kinspect block (its first launch, which wraps the kernel's launcher and records the variant,
    outside the clock). Prints {mode: [µs per launch, one per round]}."""
    import torch
    import triton  # noqa: F401

    import kinspect

    *_, tiny = _kernels()
    x = torch.zeros(1024, device="cuda")
    tiny[(1,)](x, 1024, BLOCK=1024)
    torch.cuda.synchronize()
    runs = {m: [] for m in INPROC}

    def block(n):
        return _tiny_loop(tiny, x, n)

    for r in range(rounds):
        for m in INPROC[r % len(INPROC):] + INPROC[:r % len(INPROC)]:
            if m == "plain":
                block(100)
                runs[m].append(1e6 * block(launches) / launches)
                continue
            with kinspect.capture(f"{out}/{m}-{r}", time={"kinspect": False, "kinspect-events": "events"}[m]):
                block(100)
                runs[m].append(1e6 * block(launches) / launches)
    print(json.dumps(runs))


def inproc_table(rounds: int, launches: int) -> None:
    with tempfile.TemporaryDirectory(prefix="kinspect-overhead-") as tmp:
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, "TRITON_CACHE_DIR": str(Path(tmp) / "cache"), "PYTHONPATH": path}
        proc = subprocess.run([sys.executable, __file__, "--child", "inproc", "--out", str(Path(tmp) / "out"),
                               "--launches", str(launches), "--rounds", str(rounds)],
                              capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        sys.exit(f"in-process launches failed:\n{proc.stderr[-3000:]}")
    runs = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"\nlaunch a tiny kernel {launches:,} times per block, one process, modes alternating in blocks, "
          f"{rounds} rounds (µs per launch; a capture entered around each kinspect block)")
    print(f"  {'mode':<20} {'median':>10} {'p20-p80':>22} {'vs plain: median of per-round ratios':>40}")
    for m in INPROC:
        xs = sorted(runs[m])
        q = statistics.quantiles(xs, n=5)
        ratios = sorted(x / b for x, b in zip(runs[m], runs["plain"]))
        rq = statistics.quantiles(ratios, n=5)
        ratio = statistics.median(ratios)
        print(f"  {m:<20} {statistics.median(xs):>9.3f}us {q[0]:>10.3f}-{q[3]:<10.3f} {ratio:>9.3f}x "
              f"({100 * (ratio - 1):+.1f}%; p20-p80 {rq[0]:.3f}-{rq[3]:.3f})")


def child(mode: str, what: str, out: str, launches: int) -> None:
    import contextlib

    import torch  # noqa: F401  (imported before the clock, in every mode)
    import triton
    from triton.runtime.cache import triton_key

    triton_key()  # Triton's one-time start-up, before the clock in every mode
    import kinspect

    gpu = what != "cpu"
    if not gpu:
        from kinspect.compile.driver import compile_only
        from kinspect.core.model import Target

        driver = compile_only(Target("cuda", "90", 32))
    else:
        driver = contextlib.nullcontext()
    if mode == "tritonparse":
        from tritonparse import structured_logging

        structured_logging.init(out, enable_trace_launch=True)
        scope = contextlib.nullcontext()
    elif mode.startswith("kinspect"):
        timer = {"kinspect": False, "kinspect-profiler": "profiler", "kinspect-sample": "profiler",
                 "kinspect-events": "events"}[mode]
        scope = kinspect.capture(out, time=timer, time_sample=10 if mode == "kinspect-sample" else 0)
    else:
        scope = contextlib.nullcontext()
    with driver:
        t0, c0 = time.perf_counter(), time.process_time()
        with scope:
            if what == "launch":
                seconds = _launches(launches)      # its one compile and first launch outside the loop's clock
                cpu = seconds
            else:
                _workload("cuda" if gpu else "cpu", run=gpu)
                seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "triton": triton.__version__}))


def one(mode: str, what: str, launches: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="kinspect-overhead-") as tmp:
        # kinspect from this checkout, ahead of what PYTHONPATH already holds (tritonparse may live there)
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, "TRITON_CACHE_DIR": str(Path(tmp) / "cache"), "PYTHONPATH": path}
        proc = subprocess.run([sys.executable, __file__, "--child", mode, "--what", what, "--out",
                               str(Path(tmp) / "out"), "--launches", str(launches)],
                              capture_output=True, text=True, env=env, timeout=900)
        if proc.returncode != 0:
            sys.exit(f"{mode}/{what} failed:\n{proc.stderr[-3000:]}")
        d = json.loads(proc.stdout.strip().splitlines()[-1])
        return d["seconds"], d["cpu_seconds"]


def table(title: str, modes: list[str], what: str, rounds: int, launches: int, per: int = 0) -> None:
    runs = {m: [] for m in modes}
    for r in range(rounds):
        order = modes[r % len(modes):] + modes[:r % len(modes)]   # rotated, so no mode always goes first
        for m in order:
            runs[m].append(one(m, what, launches))
        print(f"  round {r + 1}/{rounds}: " + ", ".join(f"{m} {runs[m][-1][0]:.3f}s" for m in modes), flush=True)
    print(f"\n{title}")
    # wall time, and (compiles) the process's CPU time: what the work cost whatever else the machine ran
    clocks = [("wall", 0)] if per else [("wall", 0), ("CPU", 1)]
    unit, scale = ("us/launch", 1e6 / per) if per else ("s", 1.0)
    print(f"  {'mode':<20} {'clock':<5} {'median':>10} {'p20-p80':>22} {'vs plain: median of per-round ratios':>40}")
    for m in modes:
        for clock, k in clocks:
            xs = sorted(x[k] for x in runs[m])
            q = statistics.quantiles(xs, n=5) if len(xs) >= 2 else [xs[0]] * 4
            ratios = sorted(x[k] / b[k] for x, b in zip(runs[m], runs[modes[0]]))
            rq = statistics.quantiles(ratios, n=5) if len(ratios) >= 2 else [ratios[0]] * 4
            ratio = statistics.median(ratios)
            print(f"  {m:<20} {clock:<5} {statistics.median(xs) * scale:>9.3f}{unit:<1} "
                  f"{q[0] * scale:>10.3f}-{q[3] * scale:<10.3f} {ratio:>9.3f}x ({100 * (ratio - 1):+.1f}%; "
                  f"p20-p80 {rq[0]:.3f}-{rq[3]:.3f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", action="store_true", help="compile and run on the GPU, then time launches")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--launches", type=int, default=20000)
    ap.add_argument("--only", choices=["compile", "launch"], default=None, help="with --gpu: one of the two tables")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--what", default="cpu", help=argparse.SUPPRESS)
    ap.add_argument("--out", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child == "inproc":
        return inproc_child(a.out, a.launches, a.rounds)
    if a.child:
        return child(a.child, a.what, a.out, a.launches)
    try:
        import tritonparse  # noqa: F401
        others = ["tritonparse"]
    except ImportError:
        others = []
        print("(tritonparse is not installed: pip install tritonparse to compare with it)")
    if not a.gpu:
        table("compile 8 variants offline for cuda:90 (CPU), fresh process and Triton cache per run",
              ["plain", "kinspect", *others], "cpu", a.rounds, a.launches)
        return
    if a.only != "launch":
        table("compile and run 8 variants on the GPU, fresh process and Triton cache per run",
              ["plain", "kinspect", "kinspect-profiler", *others], "gpu", a.rounds, a.launches)
    if a.only == "compile":
        return
    inproc_table(max(a.rounds, 9), a.launches)
    table(f"launch a tiny kernel {a.launches:,} times, a fresh process per mode and round (wall time of the loop, "
          "synchronized)",
          ["plain", "kinspect", "kinspect-profiler", "kinspect-sample", "kinspect-events", *others], "launch", a.rounds,
          a.launches, per=a.launches)


if __name__ == "__main__":
    main()
