"""The shipped kernels against torch on a GPU (H100, H200, ...), every figure measured in this one run.

    python benchmarks/kernels_gpu.py [--quick] [--json OUT] [--no-sweep]

(benchmarks/kernels_h200.py is the old name of this script and still runs it.)

Prints one row per case as it is measured, each kernel and its torch counterpart timed two ways:

- **as called**: the Python call (`softmax(x)`, `torch.softmax(x, -1)`) in loops of calls with one
  synchronize after each loop, median ms a call (kinspect.bench.launch_path.time_calls): what a
  program that calls it pays, the launch's Python included;
- **GPU only**: the same calls captured in a CUDA graph and replayed (launch_path.time_graph): the
  GPU's time alone, back to back.

The ratios are torch / ours (above 1: ours is faster), as called and GPU only; for float32 matmuls
also against torch with TF32 allowed (tl.dot uses TF32 for float32 by default, torch does not). GB/s,
TFLOP/s and their percentages of the device's measured copy bandwidth (a 1 GiB copy_) and matmul
FLOP/s come from triton.testing.do_bench (device events, L2 flushed before each run: DRAM, not L2,
rates). The note says where a call is launch-bound (kinspect.bench.launch_path.judge: as called at
1.5x its GPU time or more). Each row says whether our output matches torch (kinspect.bench.check
tolerances) and PASS/MISS against the targets the issues set:

- softmax >= 90% of the copy bandwidth at 8192x8192, 32768x1024 and 1048576x2 (float32);
- softmax 1048576x2 (float32) as called within 1.5x of its GPU time;
- fused_mm_softmax_tiled as fast as torch.softmax(a @ b, -1) as called, at N = 64 ... 4096, square,
  float32 and bfloat16 (the float32 verdict is against torch's default; the TF32 one is beside it).

For each softmax target the sweep (left out by --quick or --no-sweep) also times other block
shapes and warp counts, so a MISS comes with what would have passed. Triton compiles into a
private temporary cache, so the user's Triton cache is untouched. Every case is guarded: one that
fails prints ERROR with its reason and the run goes on.

`--smoke` runs every case at tiny sizes under Triton's interpreter on the CPU (no GPU, no
figures worth reading): the CPU test suite uses it to keep this script runnable.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

SOFTMAX_TARGET_PCT = 90.0
LAUNCH_TARGET = 1.5     # softmax 1048576x2: as called within this many times its GPU time


@dataclass(frozen=True)
class Sizes:
    softmax: tuple[str, ...]       # the issue's softmax targets
    wide: str                      # a looped-row softmax
    fused: tuple[int, ...]         # square N for fused_mm_softmax_tiled
    fused_quick: tuple[int, ...]
    elementwise: int               # elements for gelu and add
    square: str
    matmul: int


GPU = Sizes(softmax=("8192x8192", "32768x1024", "1048576x2"), wide="64x262144",
            fused=(64, 128, 256, 512, 1024, 2048, 4096), fused_quick=(64, 256, 1024, 4096),
            elementwise=1 << 26, square="8192x8192", matmul=4096)
SMOKE = Sizes(softmax=("8x300", "300x16", "64x2"), wide="2x20000", fused=(16, 160), fused_quick=(16, 160),
              elementwise=1000, square="37x100", matmul=100)


@dataclass
class Row:
    group: str
    case: str
    dtype: str
    ours_ms: float | None = None         # as called
    ours_gpu_ms: float | None = None     # GPU only (CUDA graph replay)
    torch_ms: float | None = None
    torch_gpu_ms: float | None = None
    torch_tf32_ms: float | None = None   # as called, TF32 allowed (float32 matmuls)
    flushed_ms: float | None = None      # ours, do_bench with the L2 flushed: the rates' time
    gbps: float | None = None
    pct_copy: float | None = None
    tflops: float | None = None
    pct_peak: float | None = None
    check: str = ""
    targets: list = field(default_factory=list)    # [what, PASS / MISS] per target
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        return self.torch_ms / self.ours_ms if self.torch_ms and self.ours_ms else None

    @property
    def ratio_gpu(self) -> float | None:
        return self.torch_gpu_ms / self.ours_gpu_ms if self.torch_gpu_ms and self.ours_gpu_ms else None

    @property
    def ratio_tf32(self) -> float | None:
        return self.torch_tf32_ms / self.ours_ms if self.torch_tf32_ms and self.ours_ms else None

    @property
    def target(self) -> str:
        return "; ".join(t for t, _ in self.targets)

    @property
    def verdict(self) -> str:
        if self.check == "ERROR":
            return "ERROR"
        return "/".join(v for _, v in self.targets)

    def judge(self, what: str, passed: bool) -> None:
        self.targets.append([what, "PASS" if passed and self.check == "ok" else "MISS"])

    def to_json(self) -> dict:
        return {**asdict(self), "ratio": self.ratio, "ratio_gpu": self.ratio_gpu, "ratio_tf32": self.ratio_tf32,
                "target": self.target, "verdict": self.verdict}


HEADER = (f"{'case':<34} {'dtype':<8} {'ours ms':>9} {'ours GPU':>9} {'torch ms':>9} {'torch GPU':>9} "
          f"{'ratio':>6} {'GPU':>6} {'tf32 ms':>9} {'ratio':>6} {'GB/s':>7} {'%copy':>6} {'TFLOP/s':>8} "
          f"{'%peak':>6}  {'check':<7} {'verdict':<10} note")
HEADER_NOTE = ("ms as called (loops of calls, one synchronize after each) and GPU only (CUDA-graph replay); "
               "ratios torch / ours; GB/s and TFLOP/s from do_bench with the L2 flushed")


def _f(v, spec):
    return format(v, spec) if v is not None else "-".rjust(int(spec.split(".")[0]))


def line(r: Row) -> str:
    return (f"{r.group + ' ' + r.case:<34} {r.dtype:<8} {_f(r.ours_ms, '9.4f')} {_f(r.ours_gpu_ms, '9.4f')} "
            f"{_f(r.torch_ms, '9.4f')} {_f(r.torch_gpu_ms, '9.4f')} {_f(r.ratio, '6.2f')} {_f(r.ratio_gpu, '6.2f')} "
            f"{_f(r.torch_tf32_ms, '9.4f')} {_f(r.ratio_tf32, '6.2f')} {_f(r.gbps, '7.0f')} "
            f"{_f(r.pct_copy, '6.1f')} {_f(r.tflops, '8.1f')} {_f(r.pct_peak, '6.1f')}  {r.check:<7} "
            f"{r.verdict:<10} {r.note}")


class Bench:
    def __init__(self, quick: bool, smoke: bool):
        import torch

        from kinspect.bench.device import copy_bandwidth, matmul_peak

        self.quick, self.smoke = quick, smoke
        self.device = "cpu" if smoke else "cuda"
        self.sizes = SMOKE if smoke else GPU
        self.rows: list[Row] = []
        self.copy = copy_bandwidth(self.device)
        # (a smoke run has no use for the CPU's matmul FLOP/s, which take a while to measure in bf16/fp16)
        self.peaks = {} if smoke else {d: matmul_peak(d, "cuda") for d in ("float32", "bfloat16", "float16")}
        self.torch = torch
        self.rep_ms = 50 if quick else 100

    def ms(self, fn) -> float:
        """do_bench's median (device events, L2 flushed before each run): the time the rates use."""
        from kinspect.bench.timing import timer_for

        if self.smoke:  # one call: the interpreter's times mean nothing, the call must only work
            return self._once(fn)
        fn()
        self.sync()
        return timer_for("cuda")(fn, warmup_ms=25, rep_ms=self.rep_ms).wall.median

    def called(self, fn) -> tuple[float, int]:
        """(ms a call as called from Python, calls a loop): loops of calls, one synchronize after each."""
        from kinspect.bench.launch_path import time_calls

        if self.smoke:
            return self._once(fn), 1
        t = time_calls(fn, self.sync, "", rep_ms=self.rep_ms)
        return t.as_called.median, t.calls

    def graph_ms(self, fn, calls: int) -> float | None:
        """The GPU's time alone: `calls` calls captured in a CUDA graph and replayed, so no Python
        launch cost is in it (a small product finishes on the GPU before Python launches the next)."""
        from kinspect.bench.launch_path import time_graph

        if self.smoke:
            return None
        return time_graph(fn, calls).median

    def both(self, fn) -> tuple[float, float | None]:
        """(as called, GPU only) ms a call."""
        ms, calls = self.called(fn)
        return ms, self.graph_ms(fn, calls)

    def _once(self, fn) -> float:
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3

    def sync(self) -> None:
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def check(self, out, ref, precision: str) -> str:
        from kinspect.bench.check import compare

        c = compare(out.float(), ref.float(), precision=precision)
        return "ok" if c.ok else f"WRONG({c.error:.1e})"

    def rates(self, r: Row, nbytes: int | None, flops: int | None, dtype: str | None = None) -> None:
        ms = r.flushed_ms
        if nbytes and ms:
            r.gbps = nbytes / (ms * 1e-3) / 1e9
            r.pct_copy = 100 * r.gbps / self.copy["gbps"]
        if flops and ms:
            r.tflops = flops / (ms * 1e-3) / 1e12
            if dtype in self.peaks:
                r.pct_peak = 100 * r.tflops / self.peaks[dtype]["tflops"]

    def ours_and_torch(self, r: Row, ours, reference) -> None:
        """Time ours (as called, GPU only, flushed) and torch (as called, GPU only); note a launch-bound call."""
        from kinspect.bench.launch_path import judge

        r.ours_ms, r.ours_gpu_ms = self.both(ours)
        r.flushed_ms = self.ms(ours)
        r.torch_ms, r.torch_gpu_ms = self.both(reference)
        v = judge(r.ours_gpu_ms, r.ours_ms)
        if v is not None and (v.launch_bound or v.near):
            r.note = f"{v.line().split(':')[0]} ({v.slowdown:.2f}x its GPU time); " + r.note

    def add(self, r: Row) -> None:
        self.rows.append(r)
        print(line(r), flush=True)

    def guarded(self, group: str, case: str, dtype: str, body) -> None:
        try:
            self.add(body())
        except Exception as e:  # one case failing must not cost the rest of an unattended run
            msg = (str(e).strip().splitlines() or [""])[-1][:160]
            self.add(Row(group, case, dtype, check="ERROR", note=f"{type(e).__name__}: {msg}"))
        finally:
            if self.device == "cuda":
                self.torch.cuda.empty_cache()


# --- softmax ---------------------------------------------------------------------------------------------------

def softmax_case(bench: Bench, size: str, dtype: str, *, one_row: bool = False, target: bool = False) -> Row:
    torch = bench.torch
    from kinspect.kernels import softmax as sm

    rows, cols = (int(v) for v in size.split("x"))
    x = torch.randn(rows, cols, device=bench.device, dtype=getattr(torch, dtype))
    if one_row:
        run = lambda: sm.softmax_one_row(x)  # noqa: E731
        note = "lecture kernel: one program per row"
    else:
        run = lambda: sm.softmax(x)  # noqa: E731
        note = sm.strategy(rows, cols, x.dtype).describe()
    r = Row("softmax_one_row" if one_row else "softmax", size, dtype, note=note)
    r.check = bench.check(run(), torch.softmax(x.float(), -1), dtype)
    bench.ours_and_torch(r, run, lambda: torch.softmax(x, -1))
    nbytes = 2 * x.numel() * x.element_size()
    bench.rates(r, nbytes, None)
    # the ideal at this size: a copy_ of the same bytes (small inputs cannot reach the 1 GiB copy's rate)
    y = torch.empty_like(x)
    copy_ms = bench.ms(lambda: y.copy_(x))
    r.extra["same_size_copy_gbps"] = nbytes / (copy_ms * 1e-3) / 1e9
    r.extra["torch_gbps"] = nbytes / (bench.ms(lambda: torch.softmax(x, -1)) * 1e-3) / 1e9
    r.note += f"; torch {r.extra['torch_gbps']:,.0f} GB/s; same-size copy {r.extra['same_size_copy_gbps']:,.0f} GB/s"
    if target:
        r.judge(f">= {SOFTMAX_TARGET_PCT:.0f}% copy", r.pct_copy is not None and r.pct_copy >= SOFTMAX_TARGET_PCT)
        if size == bench.sizes.softmax[-1]:   # the narrow one: launch-bound until the wrapper launched directly
            r.judge(f"as called <= {LAUNCH_TARGET}x GPU",
                    r.ours_gpu_ms is not None and r.ours_ms <= LAUNCH_TARGET * r.ours_gpu_ms)
    return r


def softmax_sweep(bench: Bench, size: str) -> Row:
    """Other rows-per-program and warp counts around the strategy's choice: the best of them."""
    torch = bench.torch
    from kinspect.kernels import softmax as sm

    rows, cols = (int(v) for v in size.split("x"))
    x = torch.randn(rows, cols, device=bench.device)
    y = torch.empty_like(x)
    chosen = sm.strategy(rows, cols, x.dtype)
    nbytes = 2 * x.numel() * 4
    tried = []
    for f in (0.25, 0.5, 1, 2, 4):
        rp = int(chosen.rows_per_program * f)
        if rp < 1 or rp * chosen.block_n * 4 > sm.MAX_ROW_BYTES or (f != 1 and rp == chosen.rows_per_program):
            continue
        for warps in (2, 4, 8, 16):
            ms = bench.ms(lambda: sm.softmax(x, out=y, ROWS=rp, BLOCK_N=chosen.block_n, num_warps=warps))
            tried.append((nbytes / (ms * 1e-3) / 1e9, rp, warps, ms))
    gbps, rp, warps, ms = max(tried)
    r = Row("softmax sweep", size, "float32", flushed_ms=ms, note=f"best of {len(tried)}: ROWS={rp} num_warps={warps} "
            f"(strategy: ROWS={chosen.rows_per_program} num_warps={chosen.num_warps})")
    bench.rates(r, nbytes, None)
    r.extra["tried"] = [dict(gbps=g, rows=a, num_warps=w, ms=m) for g, a, w, m in tried]
    return r


# --- fused matmul + softmax ---------------------------------------------------------------------------------

def fused_case(bench: Bench, n: int, dtype: str, dim: int = -1) -> Row:
    torch = bench.torch
    from kinspect.kernels import fused_mm_softmax_tiled as fm

    dt = getattr(torch, dtype)
    a = (torch.randn(n, n, device=bench.device) * n ** -0.25).to(dt)
    b = (torch.randn(n, n, device=bench.device) * n ** -0.25).to(dt)
    r = Row("fused_mm_softmax_tiled", f"{n}x{n}x{n}" + (" dim=0" if dim == 0 else ""), dtype)
    run = lambda: fm.fused_mm_softmax_tiled(a, b, dim)  # noqa: E731
    out = run()  # picks the path and tile here (autotuned on a GPU), outside the timing
    r.note = fm.describe_call(a, b, dim)
    r.check = bench.check(out, torch.softmax(a.float() @ b.float(), dim), "tf32" if dtype == "float32" else dtype)
    saved = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = False   # torch's default: full float32
        bench.ours_and_torch(r, run, lambda: torch.softmax(a @ b, dim))
        if dtype == "float32":
            torch.backends.cuda.matmul.allow_tf32 = True
            r.torch_tf32_ms, _ = bench.called(lambda: torch.softmax(a @ b, dim))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    bench.rates(r, 3 * n * n * a.element_size(), 2 * n ** 3, dtype)
    if dim == -1:
        r.judge("as called <= torch", r.ratio is not None and r.ratio >= 1)
    if r.ratio_tf32 is not None:
        r.note += f"; torch with TF32 {r.torch_tf32_ms:.4f} ms as called = {r.ratio_tf32:.2f}x"
    return r


def forum_case(bench: Bench) -> Row:
    """The forum kernel as it was called: one 128x128 tile, one program, softmax along axis 0."""
    torch = bench.torch
    from kinspect.compile import jit_function
    from kinspect.kernels import get

    spec = get("fused_mm_softmax")
    ex = spec.example("128", torch.float32, bench.device)
    fn = jit_function(spec.fn)
    r = Row("fused_mm_softmax (forum)", "128x128x128 grid (1,)", "float32", note="correct only as one block")
    run = lambda: fn[ex.grid](**ex.args, **ex.constexprs)  # noqa: E731
    run()
    a, b = ex.args["a_ptr"], ex.args["b_ptr"]
    r.check = bench.check(ex.args["c_ptr"], spec.reference(a, b), "tf32")
    bench.ours_and_torch(r, run, lambda: torch.softmax(torch.matmul(a, b), axis=0))
    bench.rates(r, 3 * a.numel() * 4, 2 * 128 ** 3, "float32")
    return r


# --- elementwise and matmul ------------------------------------------------------------------------------

def elementwise_case(bench: Bench, name: str) -> Row:
    torch = bench.torch
    from kinspect.kernels import elementwise as ew

    z, dev = bench.sizes, bench.device
    n = z.elementwise
    if name == "square":
        x = torch.randn(*(int(v) for v in z.square.split("x")), device=dev)
        run, ref, size = (lambda: ew.square(x)), (lambda: x * x), z.square
        nbytes = 2 * x.numel() * 4
    elif name == "gelu":
        x = torch.randn(n, device=dev)
        run, ref, size = (lambda: ew.gelu(x)), (lambda: torch.nn.functional.gelu(x, approximate="tanh")), str(n)
        nbytes = 2 * x.numel() * 4
    else:
        x, y = torch.randn(n, device=dev), torch.randn(n, device=dev)
        run, ref, size = (lambda: ew.add(x, y)), (lambda: x + y), str(n)
        nbytes = 3 * x.numel() * 4
    r = Row(name, size, "float32")
    r.check = bench.check(run(), ref(), "float32")
    bench.ours_and_torch(r, run, ref)
    bench.rates(r, nbytes, None)
    return r


def matmul_case(bench: Bench, n: int, dtype: str) -> Row:
    torch = bench.torch
    from kinspect.kernels import matmul as mm

    dt = getattr(torch, dtype)
    a, b = torch.randn(n, n, device=bench.device, dtype=dt), torch.randn(n, n, device=bench.device, dtype=dt)
    r = Row("matmul", f"{n}x{n}x{n}", dtype)
    run = lambda: mm.matmul(a, b)  # noqa: E731
    out = run()   # autotunes here, once for the problem
    r.note = tuned(mm._tuned)
    r.check = bench.check(out, a.float() @ b.float(), "tf32" if dtype == "float32" else dtype)
    saved = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = False
        bench.ours_and_torch(r, run, lambda: a @ b)
        if dtype == "float32":
            torch.backends.cuda.matmul.allow_tf32 = True
            r.torch_tf32_ms, _ = bench.called(lambda: a @ b)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    bench.rates(r, 3 * n * n * a.element_size(), 2 * n ** 3, dtype)
    return r


def tuned(tuner) -> str:
    """The configuration autotuning picked (none without a GPU: the launchers use their default tile)."""
    best = getattr(tuner, "best_config", None)
    if best is None:
        return "(not autotuned)"
    return f"{best.kwargs} w{best.num_warps} s{best.num_stages}"


# --- the run -------------------------------------------------------------------------------------------------

def run(quick: bool, sweep: bool, smoke: bool) -> Bench:
    bench = Bench(quick, smoke)
    z = bench.sizes
    name = "CPU (Triton's interpreter, smoke run)" if smoke else bench.torch.cuda.get_device_name()
    print(f"device: {name}; copy bandwidth {bench.copy['gbps']:,.0f} GB/s "
          f"({bench.copy['method']}, measured {bench.copy['measured']})")
    for d, p in bench.peaks.items():
        print(f"matmul peak {d}: {p['tflops']:,.1f} TFLOP/s ({p['method']})")
    print(HEADER_NOTE)
    print(HEADER, flush=True)
    narrow = z.softmax[-1]
    for size in z.softmax:
        bench.guarded("softmax", size, "float32", lambda: softmax_case(bench, size, "float32", target=True))
    bench.guarded("softmax_one_row", narrow, "float32", lambda: softmax_case(bench, narrow, "float32", one_row=True))
    if not quick:
        bench.guarded("softmax_one_row", z.softmax[0], "float32",
                      lambda: softmax_case(bench, z.softmax[0], "float32", one_row=True))
        for size in z.softmax:
            bench.guarded("softmax", size, "bfloat16", lambda: softmax_case(bench, size, "bfloat16"))
        bench.guarded("softmax", z.wide, "float32", lambda: softmax_case(bench, z.wide, "float32"))
    if sweep and not quick:
        for size in z.softmax:
            bench.guarded("softmax sweep", size, "float32", lambda: softmax_sweep(bench, size))
    for dtype in ("float32", "bfloat16"):
        for n in z.fused_quick if quick else z.fused:
            if smoke and dtype == "bfloat16":
                continue  # the interpreter computes bf16 tl.dot on raw bits (see tests/compile/test_kernels.py)
            bench.guarded("fused_mm_softmax_tiled", str(n), dtype, lambda: fused_case(bench, n, dtype))
    if not quick:
        n = z.fused[-1] if smoke else 1024
        bench.guarded("fused_mm_softmax_tiled", f"{n} dim=0", "float32", lambda: fused_case(bench, n, "float32", 0))
        bench.guarded("fused_mm_softmax (forum)", "128", "float32", lambda: forum_case(bench))
        for name in ("gelu", "square", "add"):
            bench.guarded(name, "", "float32", lambda: elementwise_case(bench, name))
    for dtype in ("float16",) if quick else ("float16", "bfloat16", "float32"):
        if smoke and dtype == "bfloat16":
            continue
        bench.guarded("matmul", str(z.matmul), dtype, lambda: matmul_case(bench, z.matmul, dtype))
    return bench


def summary(rows: list[Row]) -> list[str]:
    judged = [(r, what, v) for r in rows for what, v in r.targets]
    misses = [(r, what) for r, what, v in judged if v != "PASS"]
    errors = [r for r in rows if r.check.startswith(("WRONG", "ERROR"))]
    out = [f"targets: {len(judged) - len(misses)} of {len(judged)} met"
           + (f"; missed: {', '.join(f'{r.group} {r.case} {r.dtype} ({what})' for r, what in misses)}"
              if misses else "")]
    if errors:
        out.append(f"wrong or failed: {', '.join(f'{r.group} {r.case} {r.dtype} ({r.check})' for r in errors)}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the targets only, shorter timing")
    ap.add_argument("--no-sweep", action="store_true", help="skip the softmax block/warp sweep")
    ap.add_argument("--json", metavar="OUT", help="write every row and the device's records as JSON")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes under Triton's interpreter on the CPU")
    args = ap.parse_args(argv)
    if args.smoke:
        os.environ["TRITON_INTERPRET"] = "1"  # read when @triton.jit decorates: before triton is imported

    import torch

    if not args.smoke and not torch.cuda.is_available():
        print("error: no GPU here; this benchmark times kernels on a CUDA device (--smoke runs it on the CPU "
              "under Triton's interpreter, for checking the script only)", file=sys.stderr)
        return 2
    import warnings

    from kinspect.bench.method import describe_clocks, nvidia_clocks, versions
    from kinspect.compile import private_cache

    warnings.filterwarnings("ignore")
    if args.smoke:
        import numpy as np

        np.seterr(all="ignore")  # masked-off lanes compute -inf - -inf under the interpreter; never stored
    torch.manual_seed(0)
    t0 = time.perf_counter()
    with private_cache():
        bench = run(args.quick, not args.no_sweep, args.smoke)
    elapsed = time.perf_counter() - t0
    lines = summary(bench.rows)
    clocks = None if args.smoke else nvidia_clocks()
    print("\n".join(lines))
    print(f"{elapsed:.0f} s; {versions()}; {describe_clocks(clocks)}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "device": "cpu (smoke)" if args.smoke else torch.cuda.get_device_name(), "versions": versions(),
            "clocks": clocks, "copy_bandwidth": bench.copy, "matmul_peaks": bench.peaks,
            "elapsed_s": round(elapsed, 1), "summary": lines, "rows": [r.to_json() for r in bench.rows]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
