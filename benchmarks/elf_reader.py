"""What reading code size through pyelftools costs (kinspect.isa.elf) beside the hand-written ELF64 reader it
replaced (kept here, as it was, only to measure against), on the same binaries, in alternating rounds.

    python benchmarks/elf_reader.py [--rounds 5] [FILES...]     # default: fresh offline compiles

Prints per-file milliseconds (median and spread over rounds) for both, and checks they agree wherever the
old reader answered (it knew ELF64 only). Code size is read once per variant and kept in kinspect's cache
(analysis.summary), so this is a cost per variant summarised, not per view.
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def hand_written(path: Path) -> int | None:
    """The reader kinspect.analysis.code_size had until pyelftools (ELF64 only), unchanged."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2:
                return None
            order = "<" if head[5] == 1 else ">"
            shoff, = struct.unpack_from(order + "Q", head, 0x28)
            shentsize, shnum = struct.unpack_from(order + "HH", head, 0x3A)
            if shentsize < 64 or shnum == 0 or shnum > 65535:
                return None
            if shoff + shentsize * shnum > os.fstat(f.fileno()).st_size:
                return None
            f.seek(shoff)
            table = f.read(shentsize * shnum)
    except OSError:
        return None
    if len(table) < shentsize * shnum:
        return None
    total = 0
    for i in range(shnum):
        flags, = struct.unpack_from(order + "Q", table, i * shentsize + 0x08)
        size, = struct.unpack_from(order + "Q", table, i * shentsize + 0x20)
        sh_type, = struct.unpack_from(order + "I", table, i * shentsize + 0x04)
        if flags & 0x4 and sh_type != 8:
            total += size
    return total


def fresh_binaries() -> list[Path]:
    from kinspect import api

    out = tempfile.mkdtemp(prefix="kinspect-elf-bench-")
    found = []
    for kernel, target, constexprs in (("fused_mm_softmax", "cuda:90", {"BLOCK_SIZE": 64}),
                                       ("softmax", "cuda:80", {}), ("matmul", "cuda:90", {}),
                                       ("fused_mm_softmax", "hip:gfx942", {"BLOCK_SIZE": 32})):
        v = api.dump(kernel, target=target, constexprs=constexprs, out_dir=out).variant
        found += [Path(v.path, s.file) for s in v.stages if s.binary]
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    from kinspect.isa.elf import text_bytes

    files = a.files or fresh_binaries()
    for p in files:
        old, new = hand_written(p), text_bytes(p)
        if old is not None and old != new:
            print(f"DISAGREE {p}: hand-written {old}, pyelftools {new}")
            return 1
    times = {"hand-written": [], "pyelftools": []}
    for r in range(a.rounds):
        order = [("hand-written", hand_written), ("pyelftools", text_bytes)]
        for name, fn in order if r % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            for p in files:
                fn(p)
            times[name].append(1e3 * (time.perf_counter() - t0) / len(files))
    print(f"{len(files)} binaries, {a.rounds} rounds (ms per file: median [min, max])")
    for name, ms in times.items():
        print(f"  {name:13} {statistics.median(ms):8.3f}  [{min(ms):.3f}, {max(ms):.3f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
