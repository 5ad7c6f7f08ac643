"""What observing a launch costs, on a machine without a GPU: the CPU side of a launch with a no-op
launcher in place of the driver's, plain vs kinspect's observers, in alternating rounds.

    python benchmarks/launch_observe_cpu.py --rounds 9 --launches 50000

Two launch paths, each as the program runs it after Triton's binder / Inductor's generated code:
- Triton's launcher: a real CompiledKernel of capture_overhead.py's `tiny` (compiled for cuda:90
  offline), launched as JITFunction.run does it (`launch_metadata`, then `kernel.run(...)` with the
  knobs' hooks), its launcher a no-op. Modes: plain; kinspect (the per-kernel wrapper of
  kinspect.hooks.observe, inside kinspect.capture); a no-op Python launch hook set in
  knobs.runtime (a lower bound of what any global-hook observer costs: it is what made Inductor
  bypass its static launcher).
- Inductor's static launcher: a stand-in CachingAutotuner whose `run(*args, stream)` calls a no-op
  static launcher, with the arguments of a pointwise kernel (3 tensors, 1 numel). Modes: plain;
  kinspect (the class-level wrapper, which installs the per-instance counter at the first call).

Prints per mode the median µs per launch over rounds, its p20-p80 spread, and the median of the
per-round differences to plain (each round runs every mode once, in a rotated order). The figures are
this machine's CPU; a GPU host's CPU gives others (benchmarks/capture_overhead.py --gpu measures there).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _noop(*a, **k):
    return None


def triton_kernel():
    import torch

    from capture_overhead import _kernels
    from kinspect.compile.driver import compile_only
    from kinspect.core.model import Target

    *_, tiny = _kernels()
    with compile_only(Target("cuda", "90", 32)):
        k = tiny.warmup(torch.empty(1024), 1024, BLOCK=1024, grid=(1,))
    k.module, k.function, k._run = object(), 1, _noop    # loaded, as on a GPU; its launcher a no-op
    return k


def jit_launches(k, n: int, args) -> float:
    from triton import knobs

    rt = knobs.runtime
    t0 = time.perf_counter()
    for _ in range(n):
        md = k.launch_metadata((1, 1, 1), 0, *args)
        k.run(1, 1, 1, 0, k.function, k.packed_metadata, md, rt.launch_enter_hook, rt.launch_exit_hook, *args)
    return time.perf_counter() - t0


class StaticLauncher:
    _is_static = True
    config = None

    def __call__(self, *args, stream):
        return None


class FakeAutotuner:
    """Stands in for Inductor's CachingAutotuner: what its run does on the fast path, around a static
    launcher."""

    def __init__(self):
        self.launchers = [StaticLauncher()]
        self.triton_meta = {"signature": {"in_ptr0": "*fp32", "in_ptr1": "*fp32", "out_ptr0": "*fp32",
                                          "xnumel": "i32", "XBLOCK": "constexpr"}}
        self.fn = _noop

    def run(self, *args, stream, **kwargs):
        (launcher,) = self.launchers
        return launcher(*args, **kwargs, stream=stream)

    def _interpret_args_grid(self, args, config):
        return args, (args[-1] // 1024, 1, 1)


def static_launches(at, n: int, args) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        at.run(*args, stream=0)
    return time.perf_counter() - t0


def measure(mode: str, n: int, k, out: str) -> float:
    import torch
    from triton import knobs

    import kinspect

    x = torch.empty(1024)
    if mode.startswith("triton"):
        args = (x, 1024, 1024)
        if mode == "triton plain":
            return jit_launches(k, n, args)
        if mode == "triton hook":
            calls = []
            knobs.runtime.launch_enter_hook.add(calls.append)
            try:
                return jit_launches(k, n, args)
            finally:
                knobs.runtime.launch_enter_hook.remove(calls.append)
        k.__dict__.pop("_kinspect_run", None)
        k._run = _noop
        with kinspect.capture(out):
            jit_launches(k, 1, args)     # the first launch records the variant: not what a launch costs
            took = jit_launches(k, n, args)
        k._run = _noop
        return took
    args = (x, x, x, 1 << 20)
    cls = type("Autotuner", (FakeAutotuner,), {})
    if mode == "static kinspect":
        from kinspect.hooks.launch_counts import LaunchRecorder
        from kinspect.hooks.observe import LaunchObserver

        observer = LaunchObserver(LaunchRecorder())
        cls.run = observer._autotuner_run(FakeAutotuner.run)
        at = cls()
        at.run(*args, stream=0)          # installs the per-instance counter, as a program's first call does
        try:
            return static_launches(at, n, args)
        finally:
            observer.live[0] = False
    return static_launches(cls(), n, args)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--launches", type=int, default=50000)
    ap.add_argument("--modes", default="triton plain,triton kinspect,triton hook,static plain,static kinspect",
                    help="comma-separated: triton plain, triton kinspect, triton hook, static plain, static kinspect")
    a = ap.parse_args()
    k = triton_kernel()
    modes = a.modes.split(",")
    runs = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            order = modes[r % len(modes):] + modes[:r % len(modes)]
            for m in order:
                runs[m].append(1e6 * measure(m, a.launches, k, f"{tmp}/out{r}") / a.launches)
    print(f"CPU side of a launch, no-op launcher, {a.launches:,} launches per mode per round, {a.rounds} rounds")
    print(f"  {'mode':<16} {'median µs':>10} {'p20-p80':>16} {'added vs plain (median of per-round differences)':>50}")
    for m in modes:
        xs = sorted(runs[m])
        q = statistics.quantiles(xs, n=5)
        base = runs.get("triton plain" if m.startswith("triton") else "static plain", [0.0] * len(runs[m]))
        d = sorted(x - b for x, b in zip(runs[m], base))
        dq = statistics.quantiles(d, n=5)
        print(f"  {m:<16} {statistics.median(xs):>10.3f} {q[0]:>7.3f}-{q[3]:<8.3f} {statistics.median(d):>+26.3f} µs "
              f"(p20-p80 {dq[0]:+.3f}..{dq[3]:+.3f})")


if __name__ == "__main__":
    main()
