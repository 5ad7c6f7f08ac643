"""How fast and in how much memory kinspect analyses a huge listing (the 100 MB asm case).

    python benchmarks/big_listing.py [--mb 100] [--dialect sass|x86]

Builds a listing of about --mb megabytes by repeating real output (a fresh offline SASS compile of
fused_mm_softmax, or the triton-cpu x86 dot fixture's assembly), analyses it as vec-report does,
and prints throughput and the growth of peak RSS as a ratio of the file size.
"""

import argparse
import tempfile
import time
import resource
from pathlib import Path

from kinspect.analysis import analyse
from kinspect.files.sources import read_file

ROOT = Path(__file__).parents[1]


def real_text(dialect: str) -> str:
    if dialect == "x86":
        from kinspect.files.sources import sections

        text = (ROOT / "tests/fixtures/cpu/triton-cpu-x86-avx512/dot_4x16_16x4_torch.float32.asm").read_text()
        return sections(text)["ASM"]
    from kinspect import api

    v = api.dump("fused_mm_softmax", target="cuda:90", out_dir=tempfile.mkdtemp()).variant
    return Path(v.path, v.stage("sass").file).read_text()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--dialect", choices=("sass", "x86"), default="sass")
    a = ap.parse_args()
    chunk = real_text(a.dialect)
    path = Path(tempfile.mkdtemp()) / ("big.sass" if a.dialect == "sass" else "big.s")
    with open(path, "w") as f:
        for _ in range(max(1, int(a.mb * 1e6 / len(chunk)))):
            f.write(chunk)
    size = path.stat().st_size
    # Peak RSS growth, not tracemalloc: tracing slows allocation-heavy parsing several times over.
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t = time.perf_counter()
    rep = analyse(read_file(path))
    seconds = time.perf_counter() - t
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before
    print(f"{a.dialect}: {size / 1e6:.0f} MB, {rep.isa.instructions:,} instructions in {seconds:.1f} s "
          f"({size / 1e6 / seconds:.1f} MB/s); peak RSS grew {grown / 1e6:.1f} MB = {grown / size:.3f} x file size")
    path.unlink()


if __name__ == "__main__":
    main()
