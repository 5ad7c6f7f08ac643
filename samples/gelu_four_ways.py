"""GELU (tanh approximation) four ways: the formula written with torch ops, torch's own
`gelu(approximate="tanh")`, torch.compile of the formula, and kinspect's Triton `gelu` kernel.

    python samples/gelu_four_ways.py [--size N] [--stable]

Everywhere: each one's output against GELU computed in float64, and the Triton kernel run under
Triton's interpreter (kinspect's `bench --interpret` machinery, a small odd size) against its
torch reference. On the CPU the three torch versions are timed too (wall time per call; the
figures move from run to run). With a GPU, all four run on it on the same input, timed as
`kinspect bench` times (triton.testing.do_bench: L2 flushed, device events), with GB/s of the
traffic GELU needs (read x, write y: 8 bytes per float32 element).

With --stable, times, GB/s, ratios and measured errors print as placeholders (samples/_expect.py).
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _expect  # noqa: E402

import torch  # noqa: E402

from kinspect import api  # noqa: E402
from kinspect.bench.check import compare  # noqa: E402
from kinspect.bench.timing import time_cpu, time_gpu  # noqa: E402
from kinspect.core.errors import KinspectError  # noqa: E402

SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def gelu_manual(x):
    """The tanh approximation as written on paper (Hendrycks & Gimpel), with torch ops."""
    return 0.5 * x * (1 + torch.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))


def gelu_torch(x):
    return torch.nn.functional.gelu(x, approximate="tanh")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=None,
                    help="elements (default: 1,048,576 on the CPU, 16,777,216 on a GPU)")
    _expect.add_flag(ap)
    a = ap.parse_args(argv)
    _expect.configure(a)
    gpu = torch.cuda.is_available()
    device = "cuda" if gpu else "cpu"
    n = a.size or (1 << 24 if gpu else 1 << 20)
    torch.manual_seed(0)
    x = torch.randn(n, device=device)
    exact = torch.nn.functional.gelu(x.double(), approximate="tanh")
    ways = {"manual (torch ops)": gelu_manual, 'F.gelu(approximate="tanh")': gelu_torch}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ways["torch.compile(manual)"] = torch.compile(gelu_manual)
        outputs = {name: fn(x) for name, fn in ways.items()}  # torch.compile compiles here, on its first call
    try:
        launch = _triton_launch(x) if gpu else None
        interpreted = api.interpret("gelu", size="4097")
    except KinspectError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    print(f"GELU, tanh approximation, float32, {n:,} elements on {device}")
    print(f"correct? each output against GELU in float64 on the same input (max error / max |GELU|; "
          f"tolerance {compare(x, x, precision='float32').tolerance:g})")
    if launch is not None:
        launch()
        torch.cuda.synchronize()
        outputs["Triton gelu"] = launch.args[launch.output]
    for name, out in outputs.items():
        c = compare(out, exact, precision="float32", against="float64 GELU")
        print(f"  {name:<28}{'yes' if c.ok else 'NO':<5}max error {_expect.error(c.error)}")
    c = interpreted.check
    print(f"  {'Triton gelu, interpreted':<28}{'yes' if c.ok else 'NO':<5}max error {_expect.error(c.error)} "
          f"against its torch reference, {int(interpreted.size):,} elements, grid {interpreted.grid} "
          f"(Triton's interpreter, numpy on the CPU)")

    timer, how = (time_gpu, "triton.testing.do_bench: L2 flushed, device events") if gpu else \
        (time_cpu, "time.perf_counter per call")
    print(f"time per call on {device} ({how}; median, p20-p80; the figures move from run to run):")
    timed = {name: (lambda fn=fn: fn(x)) for name, fn in ways.items()}
    if launch is not None:
        timed["Triton gelu"] = launch
    medians = {}
    for name, fn in timed.items():
        t = timer(fn).wall
        medians[name] = t.median
        rate = 2 * n * x.element_size() / (t.median * 1e-3) / 1e9
        print(f"  {name:<28}{_expect.ms(t.median):>8} ms ({_expect.ms(t.p20)}-{_expect.ms(t.p80)})"
              f"{_expect.gbps(rate):>8} GB/s")
    if launch is None:
        print("  Triton gelu                 not timed: no GPU here (the interpreter checks results, not speed)")
    else:
        fastest = min(medians, key=medians.get)
        print(f"  fastest: {_expect.text(fastest, 'name')}; "
              + ", ".join(f"{k} {_expect.ratio(m / medians[fastest])}x" for k, m in medians.items() if k != fastest))
    return 0


def _triton_launch(x):
    """kinspect's gelu kernel ready to launch on x's device, reading x (kinspect.bench.prepared)."""
    import dataclasses

    from kinspect.bench.prepared import prepare

    launch = prepare("gelu", device=x.device.type, constexprs={}, args={}, size=str(x.numel()), num_warps=None,
                     num_stages=None)
    (name,) = launch.inputs
    return dataclasses.replace(launch, args={**launch.args, name: x})


if __name__ == "__main__":
    sys.exit(main())
