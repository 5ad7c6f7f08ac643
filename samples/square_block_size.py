"""The CUDA-MODE lecture's square kernel (one row per program): what BLOCK_SIZE =
next_power_of_2(n_cols) costs in registers against a fixed BLOCK_SIZE = 1024, and what each
does for a few row lengths.

    python samples/square_block_size.py [--cols 100,781,2000,5000] [--rows 16384] [--stable]

Everywhere: every BLOCK_SIZE the comparison needs is compiled offline for cuda:90 (kinspect dump),
and its registers, spills and occupancy estimate come from the real cubin (cuobjdump), beside its
SASS instruction count, vector instructions and code size. Each (n_cols, BLOCK_SIZE) pair runs
under Triton's interpreter on 37 rows and is checked against x*x: a block shorter than the row
leaves columns unwritten. With a GPU, each pair is also timed on --rows rows (do_bench, L2
flushed) with GB/s.

With --stable, times and GB/s print as placeholders (samples/_expect.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _expect  # noqa: E402

from kinspect import api  # noqa: E402
from kinspect.core.errors import KinspectError  # noqa: E402

FIXED = 1024
CHECK_ROWS = 37


def next_power_of_2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cols", default="100,781,2000,5000", help="row lengths to compare (default: 100,781,2000,5000)")
    ap.add_argument("--rows", type=int, default=16384, help="rows for the GPU timing (default: 16384)")
    _expect.add_flag(ap)
    a = ap.parse_args(argv)
    _expect.configure(a)
    try:
        cols = [int(c) for c in a.cols.split(",")]
    except ValueError:
        ap.error(f"--cols '{a.cols}' is not a list of numbers, e.g. 100,781,2000")
    pairs = [(n, b) for n in cols for b in dict.fromkeys((next_power_of_2(n), FIXED))]
    try:
        with tempfile.TemporaryDirectory(prefix="kinspect-square-") as out:
            compiled(sorted({b for _, b in pairs}), out)
            right = checked(pairs)
            timed(pairs, right, a.rows)
    except KinspectError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def compiled(blocks: list[int], out: str) -> None:
    from kinspect.analysis.summary import summarize

    print("square_kernel compiled offline for cuda:90 (registers from cuobjdump on the cubin; occupancy: kinspect's "
          "estimate)")
    print(f"  {'BLOCK_SIZE':>10}{'warps':>7}{'registers':>11}{'spills':>8}  {'occupancy':<34}{'SASS':>6}"
          f"{'vector':>8}{'code bytes':>12}")
    for b in blocks:
        v = api.dump("square", target="cuda:90", constexprs={"BLOCK_SIZE": b}, size=f"{CHECK_ROWS}x{b}",
                     out_dir=out).variant
        m = summarize(v).to_json()
        occ = "-" if m["occupancy"] is None else f"{m['occupancy']:.0%} (limited by {m['occupancy_limiter']})"
        print(f"  {b:>10}{v.options.get('num_warps', '-'):>7}{m['registers']:>11}{m['spills']:>8}  {occ:<34}"
              f"{m['instructions']:>6}{m['vector']:>8}{m['code_bytes']:>12,}")
    print("  (one program holds a whole row: BLOCK_SIZE elements over num_warps*32 threads, so a longer block is "
          "more\n  registers per thread, and fewer resident warps once registers limit them)")


def checked(pairs: list[tuple[int, int]]) -> dict[tuple[int, int], bool]:
    """Each pair under the interpreter against x*x; whether it was right, by pair."""
    runs = api.interpret_many([dict(kernel="square", constexprs={"BLOCK_SIZE": b}, size=f"{CHECK_ROWS}x{n}")
                               for n, b in pairs])
    print(f"each row length with BLOCK_SIZE = next_power_of_2(n_cols) and = {FIXED}: {CHECK_ROWS} rows under "
          f"Triton's interpreter, against x*x")
    print(f"  {'n_cols':>7}  {'BLOCK_SIZE':<24}{'lanes busy':>11}  correct?")
    for (n, b), r in zip(pairs, runs):
        how = "next_power_of_2" if b == next_power_of_2(n) else "fixed"
        if b == next_power_of_2(n) == FIXED:
            how = "both"
        verdict = "yes" if r.check.ok else f"NO: max error {_expect.error(r.check.error)} of the scale"
        if not r.check.ok and b < n:
            verdict += f"; one block of {b} covers {b} of {n} columns"
        print(f"  {n:>7}  {f'{b} ({how})':<24}{min(n, b) / b:>11.0%}  {verdict}")
    return {pair: r.check.ok for pair, r in zip(pairs, runs)}


def timed(pairs: list[tuple[int, int]], right: dict[tuple[int, int], bool], rows: int) -> None:
    import torch

    if not torch.cuda.is_available():
        print("runtime: no GPU here; on one this prints each pair's time and GB/s")
        return
    from kinspect.bench.prepared import prepare
    from kinspect.bench.timing import time_gpu

    print(f"runtime on {_expect.text(torch.cuda.get_device_name(), 'device')}, {rows:,} rows "
          f"(triton.testing.do_bench: L2 flushed, device events; median)")
    print(f"  {'n_cols':>7}  {'BLOCK_SIZE':<12}{'ms':>10}{'GB/s':>9}")
    for n, b in pairs:
        launch = prepare("square", device="cuda", constexprs={"BLOCK_SIZE": b}, args={}, size=f"{rows}x{n}",
                         num_warps=None, num_stages=None)
        launch()
        torch.cuda.synchronize()
        t = time_gpu(launch).wall
        gbps, _ = launch.rates(t.median)
        note = "" if right[(n, b)] else "  (wrong result: the GB/s counts columns it never wrote)"
        print(f"  {n:>7}  {b:<12}{_expect.ms(t.median):>10}{_expect.gbps(gbps):>9}{note}")


if __name__ == "__main__":
    sys.exit(main())
