"""What the shipped wrappers' direct launches save: each wrapper called with its compiled kernels
launched directly (kinspect.backends.direct_launch) vs the same wrapper sending every launch through the
JIT (direct_launch.DIRECT = False, what KINSPECT_DIRECT_LAUNCH=0 does), side by side in alternating rounds.

    python benchmarks/launch_overhead.py [--rounds 7] [--rep-ms 200] [--json OUT]

On a GPU the calls run for real and each figure is ms a call as called (loops of calls, one
synchronize after each: kinspect.bench.launch_path.time_calls), beside the GPU's own time (the
calls in a CUDA graph, replayed). Without one, Triton compiles for sm90 and tests/dryrun.py's driver
launches nothing: the figures are then the Python side alone, the part the direct path cuts.
Each round times both modes (their order alternating); the ratio JIT / direct is taken per round
and its median and p20-p80 printed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cases(torch, device):
    from kinspect.kernels import elementwise, fused_mm_softmax_tiled, matmul, softmax

    def fused(n, dtype):
        a = (torch.randn(n, n, device=device) * n ** -0.25).to(dtype)
        b = (torch.randn(n, n, device=device) * n ** -0.25).to(dtype)
        return lambda: fused_mm_softmax_tiled.fused_mm_softmax_tiled(a, b)

    x = torch.randn(1048576, 2, device=device)
    m = torch.randn(256, 256, device=device, dtype=torch.float16)
    v = torch.randn(1 << 20, device=device)
    return [
        ("softmax(x) 1048576x2 float32", lambda: softmax.softmax(x)),
        ("fused_mm_softmax_tiled 64 float32 (one launch)", fused(64, torch.float32)),
        ("fused_mm_softmax_tiled 512 float32", fused(512, torch.float32)),
        ("fused_mm_softmax_tiled 512 bfloat16", fused(512, torch.bfloat16)),
        ("matmul 256 float16", lambda: matmul.matmul(m, m)),
        ("add 1Mi float32", lambda: elementwise.add(v, v)),
    ]


def quantiles(values):
    from kinspect.bench.stats import summarize

    s = summarize(values)
    return s.median, s.p20, s.p80


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--rep-ms", type=float, default=200, help="about how long each timing lasts")
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args(argv)

    import warnings

    import torch

    warnings.filterwarnings("ignore")
    from kinspect.bench.launch_path import time_calls, time_graph
    from kinspect.backends import direct_launch
    from kinspect.compile import private_cache

    gpu = torch.cuda.is_available()
    device = "cuda" if gpu else "cpu"
    sync = torch.cuda.synchronize if gpu else (lambda: None)
    if gpu:
        driver = contextlib.nullcontext()
        what = f"{torch.cuda.get_device_name()}: ms a call as called (GPU only beside it)"
    else:
        sys.path.insert(0, str(ROOT))
        from tests.dryrun import dry_run

        driver = dry_run()
        what = "no GPU: sm90 compiles, tests/dryrun.py launches nothing; ms a call of Python alone"
    import triton

    print(f"{what}; triton {triton.__version__}, torch {torch.__version__}; {args.rounds} rounds, "
          f"modes alternating")
    print(f"{'case':<48} {'direct ms':>10} {'p20-p80':>17} {'JIT ms':>10} {'p20-p80':>17} "
          f"{'JIT/direct':>10} {'p20-p80':>13} {'GPU ms':>9}")
    rows = []
    with private_cache(), driver:
        for name, call in cases(torch, device):
            call()   # prepares the problem (compiles; autotunes on a GPU) outside the timing
            sync()
            times = {"direct": [], "jit": []}
            ratios = []
            for r in range(args.rounds):
                order = ("direct", "jit") if r % 2 == 0 else ("jit", "direct")
                got = {}
                for mode in order:
                    direct_launch.DIRECT = mode == "direct"
                    got[mode] = time_calls(call, sync, name, rep_ms=args.rep_ms).as_called.median
                    times[mode].append(got[mode])
                ratios.append(got["jit"] / got["direct"])
            direct_launch.DIRECT = True
            gpu_ms = time_graph(call, 100).median if gpu else None
            d, j, q = quantiles(times["direct"]), quantiles(times["jit"]), quantiles(ratios)
            rows.append({"case": name, "direct_ms": d, "jit_ms": j, "jit_over_direct": q, "gpu_ms": gpu_ms,
                         "rounds": args.rounds})
            print(f"{name:<48} {d[0]:>10.4f} {d[1]:>8.4f}-{d[2]:<8.4f} {j[0]:>10.4f} {j[1]:>8.4f}-{j[2]:<8.4f} "
                  f"{q[0]:>9.2f}x {q[1]:>6.2f}-{q[2]:<6.2f} {'-' if gpu_ms is None else f'{gpu_ms:.4f}':>9}", flush=True)
    print(f"geometric mean JIT/direct: {statistics.geometric_mean([r['jit_over_direct'][0] for r in rows]):.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": what, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
