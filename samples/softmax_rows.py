"""Softmax one-row vs many-rows: what each program moves on a 1048576x2 input, against the ideal.

    python samples/softmax_rows.py [--size 1048576x2]

The seed workflow: the lecture softmax (`softmax_one_row`, one program per row) ran at 26 GB/s on
a 1048576x2 float32 input on an H200, where torch reached 1,426. Why is visible without a GPU:
both kernels are compiled offline for sm90 through kinspect.api, and from the code itself

- the TTGIR's layout of the loaded tensor (sizePerThread x threadsPerWarp x warpsPerCTA) says
  how many lanes each program has and how many of them only hold a copy of another lane's element,
- the PTX's global loads (kinspect.ir.ptx) say how many bytes each thread asks for,
- the block shape against the input says how many lanes the masks switch off,

so the bytes the programs request can be set against the useful bytes and the ideal (read the
input once, write the output once: 2 x 4 x 2^20 x 2 bytes). On a GPU the script then times
both kernels and torch and gives GB/s against the device's measured copy bandwidth.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
import textwrap
from dataclasses import dataclass

from kinspect import api
from kinspect.core.errors import KinspectError
from kinspect.ir import ptx
from kinspect.ir.records import Instruction, Space

KERNELS = ("softmax_one_row", "softmax")
ITEMSIZE = 4  # float32

# %x_row_4 = tt.load %x_ptrs_2, %x_row_3, %cst : tensor<2x!tt.ptr<f32>, #blocked> loc(#loc30)
LOAD_RE = re.compile(r"=\s*tt\.load\s.*:\s*tensor<(?P<shape>[\dx]+)x!tt\.ptr<\w+>,\s*#(?P<layout>\w+)>")

# #blocked = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>
BLOCKED_RE = re.compile(r"^#(?P<name>\w+)\s*=\s*#ttg\.blocked<\{sizePerThread = \[(?P<spt>[\d, ]+)\], "
                        r"threadsPerWarp = \[(?P<tpw>[\d, ]+)\], warpsPerCTA = \[(?P<wpc>[\d, ]+)\]")


@dataclass(frozen=True)
class Moves:
    kernel: str
    block: tuple[int, ...]          # the loaded tensor's shape in one program
    layout: str
    programs: int
    threads: int                    # per program
    lanes: int                      # element slots the layout gives one program's load (threads x elements each)
    loads: list[str]                # global load mnemonics per thread, in order
    load_bytes_per_thread: int
    useful_per_program: int         # in-bounds elements x itemsize, of a full program
    masked_lanes: int               # over all programs: lanes outside the input (padding rows/columns)
    rows: int
    cols: int

    @property
    def replicated_lanes(self) -> int:
        return self.lanes - math.prod(self.block)

    @property
    def bytes_per_program(self) -> int:
        return self.load_bytes_per_thread * self.threads

    @property
    def bytes_all(self) -> int:
        return self.bytes_per_program * self.programs

    @property
    def warp_loads(self) -> int:
        return len(self.loads) * (self.threads // 32) * self.programs


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",")]


def analyse(kernel: str, size: str, out_dir: str) -> Moves:
    result = api.dump(kernel, target="cuda:90", size=size, out_dir=out_dir)
    v = result.variant
    ttgir = api.stage_text(v, "ttgir")
    load = next((m for m in map(LOAD_RE.search, ttgir.splitlines()) if m), None)
    if load is None:
        raise KinspectError(f"{kernel}: no tt.load in its TTGIR")
    layouts = {m["name"]: m for m in map(BLOCKED_RE.match, ttgir.splitlines()) if m}
    lay = layouts[load["layout"]]
    shape = tuple(int(d) for d in load["shape"].split("x"))
    spt, tpw, wpc = _ints(lay["spt"]), _ints(lay["tpw"]), _ints(lay["wpc"])
    # per dim, the layout covers spt*tpw*wpc elements; a smaller tensor is held in copies, a larger one repeats
    lanes = math.prod(max(s, p * t * w) for s, p, t, w in zip(shape, spt, tpw, wpc))
    loads = [r for r in ptx.parse(api.stage_text(v, "ptx"))
             if isinstance(r, Instruction) and r.op == "ld" and r.info.space == Space.GLOBAL]
    threads = v.options["num_warps"] * 32
    rows, cols = (int(d) for d in size.split("x"))
    block_rows, block_cols = (1, shape[0]) if len(shape) == 1 else shape
    programs = math.ceil(rows / block_rows)
    masked = programs * block_rows * block_cols - rows * cols
    return Moves(kernel=kernel, block=shape, layout=f"spt {spt} tpw {tpw} wpc {wpc}", programs=programs,
                 threads=threads, lanes=lanes, loads=[r.mnemonic for r in loads],
                 load_bytes_per_thread=sum(r.width for r in loads) // 8,
                 useful_per_program=min(rows, block_rows) * cols * ITEMSIZE, masked_lanes=masked, rows=rows, cols=cols)


def _mnemonics(loads: list[str]) -> str:
    counts: dict[str, int] = {}
    for m in loads:
        counts[m] = counts.get(m, 0) + 1
    return ", ".join(f"{n} x {m}" for m, n in counts.items())


def report(moves: list[Moves], size: str) -> list[str]:
    rows, cols = moves[0].rows, moves[0].cols
    ideal_read = rows * cols * ITEMSIZE
    ideal = 2 * ideal_read
    out = [f"softmax of a {size} float32 input, compiled offline for cuda:90 (sm90) by kinspect",
           f"ideal: read the input once and write the output once = 2 x {ITEMSIZE} x {rows:,} x {cols} "
           f"= {ideal:,} bytes", ""]
    w = 34
    out.append(f"{'':<{w}}" + "".join(f"{m.kernel:>24}" for m in moves))

    def row(label, values):
        out.append(f"{label:<{w}}" + "".join(f"{v:>24}" for v in values))

    row("block per program", ["[" + ", ".join(map(str, m.block)) + "]" for m in moves])
    row("programs launched", [f"{m.programs:,}" for m in moves])
    row("threads per program", [f"{m.threads}" for m in moves])
    row("lanes in the load's layout", [f"{m.lanes:,}" for m in moves])
    row("  holding a copy of another's", [f"{m.replicated_lanes:,}" for m in moves])
    row("  masked off (outside the input)", [f"{m.masked_lanes:,}" for m in moves])
    row("global loads per thread (PTX)", [_mnemonics(m.loads) for m in moves])
    row("bytes requested per program", [f"{m.bytes_per_program:,}" for m in moves])
    row("  of which useful", [f"{m.useful_per_program:,}" for m in moves])
    row("bytes requested, all programs", [f"{m.bytes_all:,}" for m in moves])
    row("  / the ideal read", [f"{m.bytes_all / ideal_read:.2f}x" for m in moves])
    row("warp-wide load instructions", [f"{m.warp_loads:,}" for m in moves])
    out.append("")
    for m in moves:
        out.append(f"{m.kernel}: layout {m.layout}")
    out.append("")
    one, many = moves
    out += textwrap.wrap(f"{one.kernel} launches {one.programs:,} programs of {one.threads} threads for "
               f"{one.useful_per_program} useful bytes each: {one.replicated_lanes} of its {one.lanes} lanes hold "
               f"copies, so its loads ask for {one.bytes_all / ideal_read:.0f}x the input. {many.kernel} gives each "
               f"program {many.useful_per_program:,} bytes in {many.programs:,} programs and asks for the input "
               f"once ({many.bytes_all / ideal_read:.2f}x).", width=100)
    return out


def measure(size: str) -> list[str]:
    """GB/s of both kernels and torch on the GPU, against the device's measured copy bandwidth."""
    import torch

    from kinspect.bench.device import copy_bandwidth
    from kinspect.bench.timing import time_gpu
    from kinspect.compile import private_cache
    from kinspect.kernels.softmax import softmax, softmax_one_row

    rows, cols = (int(d) for d in size.split("x"))
    x = torch.randn(rows, cols, device="cuda")
    y = torch.empty_like(x)
    nbytes = 2 * x.numel() * ITEMSIZE
    copy = copy_bandwidth("cuda")
    out = [f"on {torch.cuda.get_device_name()}: copy bandwidth {copy['gbps']:,.0f} GB/s (measured {copy['measured']})"]
    with private_cache():
        for label, fn in (("softmax_one_row", lambda: softmax_one_row(x)), ("softmax", lambda: softmax(x, out=y)),
                          ("torch.softmax", lambda: torch.softmax(x, -1)), ("copy_ of the same bytes",
                                                                          lambda: y.copy_(x))):
            fn()
            torch.cuda.synchronize()
            ms = time_gpu(fn).wall.median
            gbps = nbytes / (ms * 1e-3) / 1e9
            out.append(f"  {label:<24} {ms:8.4f} ms {gbps:8,.0f} GB/s {100 * gbps / copy['gbps']:6.1f}% of copy")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="1048576x2", help="ROWSxCOLS (default 1048576x2)")
    args = ap.parse_args(argv)
    import warnings

    warnings.filterwarnings("ignore")
    try:
        if not re.fullmatch(r"[1-9]\d*x[1-9]\d*", args.size):
            raise KinspectError(f"--size {args.size}: use ROWSxCOLS, e.g. 1048576x2")
        with tempfile.TemporaryDirectory(prefix="kinspect-sample-") as tmp:
            moves = [analyse(k, args.size, tmp) for k in KERNELS]
        print("\n".join(report(moves, args.size)))
    except KinspectError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    import torch

    print()
    if torch.cuda.is_available():
        print("\n".join(measure(args.size)))
    else:
        print("no GPU here: run this on one to time both kernels and torch against the copy bandwidth")
    return 0


if __name__ == "__main__":
    sys.exit(main())
