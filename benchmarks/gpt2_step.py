"""What capturing costs a torch.compile'd training step: the GPT-2 step of samples/gpt2_train.py
(transformers, 4 layers, bf16, batch 8 x 512, forward + backward + AdamW) run plain, under
`kinspect capture`, under `kinspect capture --time` (and `--time-sample 10`), and under tritonparse's
structured logging with launch tracing, side by side in alternating rounds (the order rotated each
round), every run a fresh process with the same warm Inductor and Triton caches (one plain run warms
them first, not counted).

    python benchmarks/gpt2_step.py --rounds 3 --iters 30       # + one process alternating (--inproc 9)
    python benchmarks/gpt2_step.py --caches /tmp/c --warm-only; python benchmarks/gpt2_step.py --caches /tmp/c

Prints per mode the median step time (CUDA events around each step after the first, median over the
run's steps, then median over rounds), its p20-p80 spread over rounds, the median of the per-round
ratios to plain, and Inductor's static launcher as each run found it: how many of the program's
CachingAutotuners launch statically (the capture must leave that number as plain has it).
First, a table from ONE process (`--inproc ROUNDS`, default 9): the model compiled once, then blocks of
`--iters` steps plain, under kinspect.capture and under kinspect.capture(time=True) alternating, so
the process's own variation (allocator layout, clocks) is the same for every mode; the launches each
capture block counted are printed beside it. Needs a GPU and `transformers`; says so in one line
otherwise.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(a) -> None:
    import time

    import torch

    sys.path.insert(0, str(ROOT / "samples"))
    from gpt2_train import build, step, step_ms

    if a.tritonparse:
        from tritonparse import structured_logging

        structured_logging.init(a.tritonparse, enable_trace_launch=True)
    torch.manual_seed(0)
    _, compiled, opt = build(a.layers, a.seq)
    ids = torch.randint(0, 50257, (a.batch, a.seq), device="cuda")
    t0 = time.perf_counter()
    step(compiled, opt, ids)
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t0
    ms = step_ms(compiled, opt, ids, a.iters)
    static = total = 0
    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner

        for o in gc.get_objects():
            try:       # a dead weak proxy raises ReferenceError at isinstance
                if isinstance(o, CachingAutotuner) and len(getattr(o, "launchers", ())) == 1:
                    total += 1
                    static += bool(getattr(o.launchers[0], "_is_static", False))
            except ReferenceError:
                continue
    except Exception as e:
        print(f"static launcher count failed: {type(e).__name__}: {e}", file=sys.stderr)
    with open(a.out, "w") as f:
        json.dump({"step_ms": ms, "first_step_s": first_s, "static": static, "autotuners": total}, f)


INPROC = ["plain", "capture", "capture-time"]


def inproc_child(a) -> None:
    """One process: the model compiled once (caches warm), then blocks of `iters` steps in the modes of
    INPROC alternating for `rounds` rounds, a kinspect.capture entered and left around each capture
    block (its first step outside the clock). Writes {mode: [median step ms of each round's block]}."""
    import torch

    import kinspect

    sys.path.insert(0, str(ROOT / "samples"))
    from gpt2_train import build, step, step_ms

    torch.manual_seed(0)
    _, compiled, opt = build(a.layers, a.seq)
    ids = torch.randint(0, 50257, (a.batch, a.seq), device="cuda")
    for _ in range(3):
        step(compiled, opt, ids)
    torch.cuda.synchronize()

    def block():
        step(compiled, opt, ids)
        torch.cuda.synchronize()
        return statistics.median(step_ms(compiled, opt, ids, a.iters))

    runs = {m: [] for m in INPROC}
    launches = {m: [] for m in INPROC}
    with tempfile.TemporaryDirectory(prefix="kinspect-gpt2-inproc-") as tmp:
        for r in range(a.rounds):
            for m in INPROC[r % len(INPROC):] + INPROC[:r % len(INPROC)]:
                if m == "plain":
                    runs[m].append(block())
                    continue
                with kinspect.capture(f"{tmp}/{m}-{r}", time=m == "capture-time") as rec:
                    runs[m].append(block())
                    # counted before the capture ends (it hands its counts to the store and forgets them)
                    launches[m].append(sum(t.calls for t in rec.launches.tallies.values()))
    with open(a.out, "w") as f:
        json.dump({"runs": runs, "launches": launches}, f)


def inproc(a, env: dict) -> None:
    with tempfile.TemporaryDirectory(prefix="kinspect-gpt2-") as tmp:
        out = str(Path(tmp) / "r.json")
        cmd = [sys.executable, __file__, "--child", "--inproc-child", "--out", out, "--iters", str(a.iters),
               "--layers", str(a.layers), "--batch", str(a.batch), "--seq", str(a.seq), "--rounds", str(a.inproc)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        if proc.returncode != 0 or not Path(out).is_file():
            sys.exit(f"in-process run failed:\n{proc.stderr[-3000:]}")
        d = json.loads(Path(out).read_text())
    runs = d["runs"]
    print(f"\nGPT-2 training step, one process, {a.iters} steps per block, modes alternating in blocks, "
          f"{a.inproc} rounds (a capture entered and left around each capture block)")
    print(f"  {'mode':<16} {'median ms':>9} {'p20-p80':>15} {'vs plain (median of per-round ratios)':>40}")
    for m in INPROC:
        lo, hi = spread(runs[m])
        ratios = [x / p for x, p in zip(runs[m], runs["plain"])]
        rlo, rhi = spread(ratios)
        ratio = statistics.median(ratios)
        print(f"  {m:<16} {statistics.median(runs[m]):>9.3f} {lo:>7.3f}-{hi:<7.3f} {ratio:>10.3f}x "
              f"({100 * (ratio - 1):+.1f}%; p20-p80 {rlo:.3f}-{rhi:.3f})")
    counted = {m: sorted(set(v)) for m, v in d["launches"].items() if v}
    print(f"  launches counted per capture block ({a.iters + 1} steps): {counted}")


def one(mode: str, a, env: dict) -> dict:
    with tempfile.TemporaryDirectory(prefix="kinspect-gpt2-") as tmp:
        out = str(Path(tmp) / "r.json")
        me = [sys.executable, __file__, "--child", "--out", out, "--iters", str(a.iters), "--layers", str(a.layers),
              "--batch", str(a.batch), "--seq", str(a.seq)]
        cap = [sys.executable, "-m", "kinspect", "capture", "--store", str(Path(tmp) / "store")]
        cmd = {"plain": me, "capture": cap + ["--"] + me, "capture-time": cap + ["--time", "--"] + me,
               "capture-sample": cap + ["--time-sample", "10", "--"] + me,
               "tritonparse": me + ["--tritonparse", str(Path(tmp) / "tp")]}[mode]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        if proc.returncode != 0 or not Path(out).is_file():
            sys.exit(f"{mode} failed:\n{proc.stderr[-3000:]}")
        d = json.loads(Path(out).read_text())
        d["median_ms"] = statistics.median(d["step_ms"])
        return d


def spread(xs: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(sorted(xs), n=5) if len(xs) >= 2 else [xs[0]] * 4
    return q[0], q[3]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--modes", default="plain,capture,capture-time,capture-sample,tritonparse")
    ap.add_argument("--caches", default=None, metavar="DIR",
                    help="Inductor and Triton caches here (kept; default: a new temporary folder)")
    ap.add_argument("--warm-only", action="store_true", help="only fill the caches (one plain run) and stop")
    ap.add_argument("--inproc", type=int, default=9, metavar="ROUNDS",
                    help="rounds of the one-process table (0: leave it out)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--inproc-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", default="", help=argparse.SUPPRESS)
    ap.add_argument("--tritonparse", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return inproc_child(a) if a.inproc_child else child(a)
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as e:
        print(f"needs torch and transformers: {e}")
        return
    if not torch.cuda.is_available():
        print("no GPU: torch.compile makes C++ here, not Triton kernels")
        return
    modes = a.modes.split(",")
    try:
        import tritonparse  # noqa: F401
    except ImportError:
        modes = [m for m in modes if m != "tritonparse"]
        print("(tritonparse is not installed: left out)")
    caches = a.caches or tempfile.mkdtemp(prefix="kinspect-gpt2-caches-")
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": f"{caches}/inductor", "TRITON_CACHE_DIR": f"{caches}/triton",
           "PYTHONPATH": path}
    warm = one("plain", a, env)
    print(f"warm-up (cold caches, not counted): first step {warm['first_step_s']:.1f} s, "
          f"median step {warm['median_ms']:.2f} ms", flush=True)
    if a.warm_only:
        return
    if a.inproc:
        inproc(a, env)
    runs = {m: [] for m in modes}
    for r in range(a.rounds):
        order = modes[r % len(modes):] + modes[:r % len(modes)]
        for m in order:
            runs[m].append(one(m, a, env))
        print(f"  round {r + 1}/{a.rounds}: " + ", ".join(f"{m} {runs[m][-1]['median_ms']:.2f} ms" for m in modes),
              flush=True)
    print(f"\nGPT-2 training step ({a.layers} layers, bf16, batch {a.batch}x{a.seq}, fwd+bwd+AdamW, torch.compile), "
          f"warm caches, median of {a.iters} steps per run, {a.rounds} rounds")
    print(f"  {'mode':<16} {'median ms':>9} {'p20-p80':>15} {'vs plain (median of per-round ratios)':>40} "
          f"{'first step s':>12} {'static/autotuners':>18}")
    for m in modes:
        xs = [d["median_ms"] for d in runs[m]]
        lo, hi = spread(xs)
        ratios = [d["median_ms"] / p["median_ms"] for d, p in zip(runs[m], runs[modes[0]])]
        rlo, rhi = spread(ratios)
        ratio = statistics.median(ratios)
        static = {f"{d['static']}/{d['autotuners']}" for d in runs[m]}
        print(f"  {m:<16} {statistics.median(xs):>9.2f} {lo:>7.2f}-{hi:<7.2f} {ratio:>10.3f}x ({100 * (ratio - 1):+.1f}%; "
              f"p20-p80 {rlo:.3f}-{rhi:.3f}) {statistics.median(d['first_step_s'] for d in runs[m]):>10.1f} "
              f"{', '.join(sorted(static)):>18}")


if __name__ == "__main__":
    main()
