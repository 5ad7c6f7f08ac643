"""What a timing session costs a training step, by kind of session: none, CUPTI's kernel records alone
(kinspect.hooks.cupti, what `capture --time` uses) and a kineto session with CUDA activities only (its
fallback, torch.profiler's CUDA set: kernel, memcpy, memset, runtime and driver API records).

    python benchmarks/timing_sessions_gpu.py --rounds 6 --iters 20

One process, the GPT-2 training step of samples/gpt2_train.py compiled once, then blocks of `--iters`
steps alternating: first plain against CUPTI records (kineto untouched so far), then plain against
kineto sessions (a kineto session is not undone in the process: plain steps after one are measured
as "plain after kineto"). Prints per mode the median step time, the median of per-round ratios to
its plain with the p20-p80, and the kernels each session recorded. Needs a GPU and `transformers`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no GPU: nothing to time")
        return
    sys.path.insert(0, str(ROOT / "samples"))
    sys.path.insert(0, str(ROOT))
    from gpt2_train import build, step, step_ms

    from kinspect.hooks.cupti import KernelRecords
    from kinspect.hooks.timers import _kineto

    torch.manual_seed(0)
    _, compiled, opt = build(4, 512)
    ids = torch.randint(0, 50257, (8, 512), device="cuda")
    for _ in range(3):
        step(compiled, opt, ids)
    torch.cuda.synchronize()

    def block() -> float:
        return statistics.median(step_ms(compiled, opt, ids, a.iters))

    sessions = {"cupti records": KernelRecords(), "kineto CUDA": None}
    runs: dict[str, list] = {"plain": [], "cupti records": [], "plain after kineto": [], "kineto CUDA": []}
    kernels: dict[str, list] = {"cupti records": [], "kineto CUDA": []}
    for plain, timed in (("plain", "cupti records"), ("plain after kineto", "kineto CUDA")):
        for r in range(a.rounds):
            for m in ((plain, timed) if r % 2 == 0 else (timed, plain)):
                if m == plain:
                    runs[m].append(block())
                    continue
                if m == "cupti records":
                    start, stop = sessions[m].start, sessions[m].stop
                else:
                    start, stop = _kineto()
                start()
                runs[m].append(block())
                kernels[m].append(len(stop()))
    print(f"GPT-2 training step (4 layers, bf16, batch 8x512), one process, blocks of {a.iters} steps, {a.rounds} rounds")
    for plain, timed in (("plain", "cupti records"), ("plain after kineto", "kineto CUDA")):
        for m in (plain, timed):
            ratios = sorted(x / p for x, p in zip(runs[m], runs[plain]))
            q = statistics.quantiles(ratios, n=5) if len(ratios) > 1 else ratios * 4
            extra = f"; kernels a session: {sorted(set(kernels[m]))}" if m in kernels else ""
            print(f"  {m:<20} {statistics.median(runs[m]):8.3f} ms  {statistics.median(ratios):.3f}x "
                  f"(p20-p80 {q[0]:.3f}-{q[3]:.3f}){extra}")
    print(f"  plain after kineto against plain: {statistics.median(runs['plain after kineto']) / statistics.median(runs['plain']):.3f}x")


if __name__ == "__main__":
    main()
