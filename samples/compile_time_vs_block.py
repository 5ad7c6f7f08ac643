"""Compile time and code size against BLOCK_SIZE: what a bigger tile costs the JIT, stage by
stage, and how much machine code it makes.

    python samples/compile_time_vs_block.py [--kernel fused_mm_softmax] [--param BLOCK_SIZE]
                                            [--values 16,32,64,128,256] [--target cuda:90] [--stable]

Each value is compiled offline for the target (cuda:90 by default: no GPU needed, and what the JIT
does on an H100/H200 is this same compile), one after the other in this process, after one
compile that is not shown (so the first row does not carry Python's one-time imports). Per value:
Triton's JIT time per stage (its compilation listener; these move from run to run), and the
deterministic figures: instructions, code bytes (the cubin's executable sections), registers,
spills and shared memory, and whether the block fits the target's shared memory per block.

With --stable, times print as placeholders (samples/_expect.py).
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", default="fused_mm_softmax", help="a shipped kernel (default: fused_mm_softmax)")
    ap.add_argument("--param", default="BLOCK_SIZE", help="the constexpr to sweep (default: BLOCK_SIZE)")
    ap.add_argument("--values", default="16,32,64,128,256", help="its values (default: 16,32,64,128,256)")
    ap.add_argument("--target", default="cuda:90", help="an offline target (default: cuda:90)")
    _expect.add_flag(ap)
    a = ap.parse_args(argv)
    _expect.configure(a)
    try:
        values = [int(x) for x in a.values.split(",")]
    except ValueError:
        ap.error(f"--values '{a.values}' is not a list of numbers, e.g. 16,32,64")
    try:
        sweep(a.kernel, a.param, values, a.target)
    except KinspectError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def sweep(kernel: str, param: str, values: list[int], target: str) -> None:
    from kinspect.analysis.summary import summarize

    rows = []
    with tempfile.TemporaryDirectory(prefix="kinspect-jit-") as out:
        api.dump(kernel, target=target, constexprs={param: values[0]}, out_dir=Path(out, "warm-up"))
        for value in values:
            v = api.dump(kernel, target=target, constexprs={param: value}, out_dir=out).variant
            rows.append((value, v, summarize(v).to_json()))
    stages = list(dict.fromkeys(s for _, _, m in rows for s in m["jit_stages"]))
    print(f"{kernel} compiled offline for {target}, {param} = {', '.join(map(str, values))}")
    print("JIT time in ms per stage (Triton's listener; source = parsing the Python and building TTIR):")
    print(f"  {param:>10}{'total':>9}" + "".join(f"{s:>9}" for s in stages))
    for value, v, m in rows:
        print(f"  {value:>10}{_expect.ms(m['jit_us'] / 1e3):>9}"
              + "".join(f"{_expect.ms(m['jit_stages'].get(s, 0) / 1e3):>9}" for s in stages))
    print("code it made:")
    print(f"  {param:>10}{'instr':>8}{'code bytes':>12}{'registers':>11}{'spills':>8}{'shared':>10}  occupancy estimate")
    for value, v, m in rows:
        occ = m["occupancy"]
        if occ is None:
            occ_text = "-"
        elif occ == 0:
            occ_text = f"none: not one block fits an SM (limited by {m['occupancy_limiter']})"
        else:
            occ_text = f"{occ:.0%} (limited by {m['occupancy_limiter']})"
        print(f"  {value:>10}{m['instructions']:>8,}{_fmt(m['code_bytes']):>12}{_fmt(m['registers']):>11}"
              f"{_fmt(m['spills']):>8}{_kib(m['shared_bytes']):>10}  {occ_text}")
    print(f"instr: {rows[0][2]['isa']} instructions; code bytes: the binary's executable sections; registers "
          f"per thread\n(cuobjdump on the cubin for cuda); shared: Triton's dynamic shared memory per block")


def _fmt(x) -> str:
    return "-" if x is None else f"{x:,}"


def _kib(x) -> str:
    return "-" if x is None else f"{x / 1024:g} KiB"


if __name__ == "__main__":
    sys.exit(main())
