"""How close is kinspect's bytes-per-call estimate to what DRAM moved? The top kernels of a captured
program (by GPU time), kinspect's estimate (kinspect.analysis.traffic) beside Nsight Compute's
counters, and beside the sum of the tensor arguments' sizes (the estimate kinspect used before).

    python benchmarks/bytes_vs_ncu.py STORE --ncu-csv ncu.csv[.gz] [--top 10]   # any machine
    python benchmarks/bytes_vs_ncu.py STORE --run-ncu [--top 10]                 # a GPU with ncu

The CSV is ncu's raw page of the program's own launches (`ncu --metrics dram__bytes_read.sum,
dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,... --export R python prog.py`, then
`ncu --import R.ncu-rep --csv --page raw --print-units base`); its rows are matched to the store's
variants by kernel name and grid, the median over a kernel's rows taken. `--run-ncu` replays each
top kernel's captured launch once under ncu instead (kinspect.bench.ncu, as `vec-report --counters`;
counters a variant keeps from that are reused, unless --fresh).

Two ncu figures per kernel: DRAM read + DRAM write, and kinspect's measured bytes (Counters.dram_bytes):
DRAM read + writes including the lines still dirty in L2 when the kernel ends. With caches flushed
before each launch, written lines can still sit in the L2 (60 MiB on an H200) when the kernel ends,
so DRAM's own write count reads low for outputs that fit there; they reach DRAM later all the same
(counted: what the kernel wrote to L2, `lts__t_sectors_srcunit_tex_op_write` x 32, at most the L2's
size more than DRAM's count). Goal: the estimate within 1.5x for each top kernel.
Also printed: what the estimate took per kernel without kinspect's cache (median and max).
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kinspect.analysis.kernel_ast import element_bytes, parse  # noqa: E402
from kinspect.analysis.traffic import _span, estimate  # noqa: E402
from kinspect.files.counters import Counters, by_kernel, parse_csv  # noqa: E402
from kinspect.files.store import read_records  # noqa: E402

GOAL = 1.5


def tensor_sum(v) -> int:
    sig = v.launches.top()
    return sum(_span(a) * (element_bytes(v.signature.get(a.name, "")) or element_bytes(a.dtype) or 4)
               for a in sig.args if a.kind == "tensor")


def from_csv(path: str, variants) -> dict:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        groups = by_kernel(parse_csv(f.read()))
    out = {}
    for v in variants:
        rows = groups.get((v.kernel, tuple(v.launches.top().grid)))
        if rows:
            out[v.path] = Counters.from_rows(rows)
    return out


def from_ncu(variants, fresh: bool) -> dict:
    """Replays under ncu; a variant `vec-report --counters` measured already keeps its counters unless `fresh`."""
    from kinspect.files import counters
    from kinspect.bench.ncu import measure

    kept = {} if fresh else {v.path: counters.read(v.path) for v in variants}
    kept = {f: c for f, c in kept.items() if c is not None}
    todo = [v.path for v in variants if v.path not in kept]
    got = measure(todo) if todo else {}
    for folder, c in got.items():
        if not isinstance(c, Counters):
            print(f"  {Path(folder).parent.name}: {c}")
    return {**kept, **{f: c for f, c in got.items() if isinstance(c, Counters)}}


def within(r: float | None) -> bool:
    return r is not None and 1 / GOAL <= r <= GOAL


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store")
    ap.add_argument("--ncu-csv")
    ap.add_argument("--run-ncu", action="store_true")
    ap.add_argument("--fresh", action="store_true", help="with --run-ncu: measure again what a variant keeps")
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args()
    if bool(a.ncu_csv) == a.run_ncu:
        sys.exit("give --ncu-csv FILE or --run-ncu")
    timed = [v for v in read_records(Path(a.store)) if v.launches and v.launches.gpu and v.launches.signatures]
    timed.sort(key=lambda v: -v.launches.gpu.total_ms)
    top = timed[:a.top]
    measured = from_csv(a.ncu_csv, top) if a.ncu_csv else from_ncu(top, a.fresh)
    print(f"{'#':>2}  {'kernel':52} {'GPU ms':>7} {'estimate MB':>11}  {'method':28} {'ncu R+W':>9} {'ratio':>6} "
          f"{'measured':>9} {'ratio':>6} {'tensors':>9} {'ratio':>6}")
    hits = {"est": 0, "est_l2": 0, "sum": 0}
    compared = 0
    seconds = []
    for i, v in enumerate(top, 1):
        t0 = time.perf_counter()
        t = estimate(v, parse(v), v.launches.top().args)
        seconds.append(time.perf_counter() - t0)
        c = measured.get(v.path)
        ts = tensor_sum(v)
        if c is None or c.dram_read is None:
            print(f"{i:>2}  {v.kernel[:52]:52} {v.launches.gpu.total_ms:7.3f} {t.bytes / 1e6:11.2f}  "
                  f"{t.describe()[:28]:28} {'no ncu row':>9}")
            continue
        compared += 1
        dram = c.dram_read + (c.dram_write or 0.0)
        l2 = c.dram_bytes
        r1, r2, r3 = t.bytes / dram if dram else None, t.bytes / l2 if l2 else None, ts / dram if dram else None
        hits["est"] += within(r1)
        hits["est_l2"] += within(r2)
        hits["sum"] += within(r3)
        print(f"{i:>2}  {v.kernel[:52]:52} {v.launches.gpu.total_ms:7.3f} {t.bytes / 1e6:11.2f}  "
              f"{t.describe()[:28]:28} {dram / 1e6:9.2f} {r1 or 0:6.2f} {l2 / 1e6:9.2f} {r2 or 0:6.2f} "
              f"{ts / 1e6:9.2f} {r3 or 0:6.2f}")
    print(f"\nwithin {GOAL}x of ncu, of {compared} kernels compared: estimate vs DRAM R+W {hits['est']}, "
          f"estimate vs measured (writes held in L2 counted) {hits['est_l2']}, tensor sizes vs DRAM R+W {hits['sum']}")
    if seconds:
        print(f"estimate time per kernel (no cache): median {1e3 * statistics.median(seconds):.0f} ms, "
              f"max {1e3 * max(seconds):.0f} ms")


if __name__ == "__main__":
    main()
