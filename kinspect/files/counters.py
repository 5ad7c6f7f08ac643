"""Hardware counters of a kernel's launches, as Nsight Compute measures them: the records, the parser
of ncu's CSV, and the file a measured variant keeps them in (`<variant>/counters.json`).

    rows = parse_csv(text)        # `ncu --import R.ncu-rep --csv --page raw --print-units base`
    c = Counters.from_rows(rows)  # one kernel's launches: medians of each metric

Pure: running ncu is kinspect.bench.ncu's. The CSV's first row names the columns (ID, Process ID,
Kernel Name, Grid Size, ..., then one column per metric), the second gives units (its ID is empty),
then one row per profiled launch; numbers carry thousands separators and "n/a" means no value.
"""

from __future__ import annotations

import csv
import io
import os
import re
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kinspect.files import jsonfile

from kinspect.core import records
from kinspect.core.errors import KinspectError

FILE = "counters.json"
COUNTERS_VERSION = 1
# What kinspect asks ncu for (each checked on an H200 with ncu 2025, November 2026), by the name kinspect
# gives it. Bytes are per launch; occupancy in % of the SM's warps; stalls in warps stalled per issued
# instruction, by reason.
METRICS = {
    "duration_ns": "gpu__time_duration.sum",
    "dram_read": "dram__bytes_read.sum",
    "dram_write": "dram__bytes_write.sum",
    "l1_load": "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum",
    "l1_store": "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum",
    "l2_write_sectors": "lts__t_sectors_srcunit_tex_op_write.sum",
    "occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "registers": "launch__registers_per_thread",
    "grid_size": "launch__grid_size",
}
L2_SIZE = "device__attribute_l2_cache_size"     # ncu's raw page carries the device's attributes unasked
STALLS = r"regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
# smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
STALL_RE = re.compile(r"^smsp__average_warps_issue_stalled_(?P<reason>\w+?)_per_issue_active\.ratio$")
# What each stall reason means, in a few words (ncu's documentation of the warp states).
STALL_WORDS = {
    "long_scoreboard": "waiting on global/local memory", "short_scoreboard": "waiting on shared memory or MUFU",
    "lg_throttle": "too many global memory instructions queued", "mio_throttle": "memory I/O queue full",
    "barrier": "waiting at a barrier", "math_pipe_throttle": "math pipe busy", "wait": "fixed-latency waits",
    "not_selected": "ready but not picked", "selected": "issuing", "no_instruction": "instruction cache misses",
    "branch_resolving": "resolving branches", "dispatch_stall": "dispatch stalls", "drain": "draining memory at exit",
    "imc_miss": "constant cache misses", "membar": "memory barriers", "misc": "miscellaneous",
    "sleeping": "sleeping", "tex_throttle": "texture queue full", "gmma": "waiting on wgmma",
}
SECTOR = 32


@dataclass(frozen=True)
class NcuRow:
    """One profiled launch: its kernel, grid and block, and every metric column by name (None: n/a)."""

    kernel: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    values: dict


@dataclass(frozen=True)
class Counters:
    """What ncu measured for one variant (medians over its profiled launches)."""

    kernel: str
    launches: int
    duration_ns: float | None = None
    dram_read: float | None = None
    dram_write: float | None = None
    l1_load: float | None = None
    l1_store: float | None = None
    l2_write_sectors: float | None = None
    occupancy_pct: float | None = None
    registers: float | None = None
    grid_size: float | None = None
    l2_size: float | None = None                      # the device's L2 cache, bytes
    stalls: tuple[tuple[str, float], ...] = ()       # (reason, warps stalled per issued instruction), largest first
    how: str = ""                                     # the ncu command line (or where the rows came from)
    ncu_version: str = ""
    measured: str = ""                                # ISO date
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def dram_bytes(self) -> float | None:
        """Bytes the launch moves to and from DRAM: its reads, and its writes including the lines still dirty
        in L2 when it ends (DRAM takes them later, so its own write count reads low for outputs that fit in
        L2): at most what the kernel wrote to L2, and at most the L2's size more than DRAM counted."""
        if self.dram_read is None:
            return None
        written = self.dram_write or 0.0
        if self.l2_write_sectors is not None:
            held = SECTOR * self.l2_write_sectors
            written = max(written, min(held, written + self.l2_size) if self.l2_size else held)
        return self.dram_read + written

    @property
    def l1_over_dram(self) -> float | None:
        """Global bytes requested through L1 per byte DRAM read: above 1, the loads fetch more than they use
        (partial sectors, narrow or uncoalesced loads) or re-read from cache."""
        if not self.l1_load or not self.dram_read:
            return None
        return self.l1_load / self.dram_read

    def top_stalls(self, n: int = 3) -> list[tuple[str, float]]:
        return [s for s in self.stalls if s[0] != "selected"][:n]

    def to_json(self) -> dict:
        d = asdict(self)
        d["version"] = COUNTERS_VERSION
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Counters":
        """As to_json wrote it: its version, then its fields (records.from_json; one a file leaves out
        takes its default)."""
        if not isinstance(d, dict) or d.get("version") != COUNTERS_VERSION:
            raise ValueError(f"counters version {d.get('version') if isinstance(d, dict) else None!r}")
        return records.from_json(cls, {k: v for k, v in d.items() if k != "version"})

    @classmethod
    def from_rows(cls, rows: list[NcuRow], **extra) -> "Counters":
        """One kernel's profiled launches as one record: the median of each metric."""
        if not rows:
            raise ValueError("no rows")

        def median(metric: str) -> float | None:
            xs = [r.values.get(metric) for r in rows]
            xs = [x for x in xs if x is not None]
            return statistics.median(xs) if xs else None

        stalls = {}
        for name in rows[0].values:
            m = STALL_RE.match(name)
            if m:
                x = median(name)
                if x is not None:
                    stalls[m["reason"]] = x
        return cls(kernel=rows[0].kernel, launches=len(rows), **{k: median(v) for k, v in METRICS.items()},
                   l2_size=median(L2_SIZE),
                   stalls=tuple(sorted(stalls.items(), key=lambda kv: -kv[1])), **extra)


def parse_csv(text: str) -> list[NcuRow]:
    """The launches in ncu's raw-page CSV (`--csv --page raw`, with or without `--print-units base`).
    Lines before the header (ncu's `==PROF==` log, the program's output) are skipped. A text with no
    header is a KinspectError saying so."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID","Process ID"')), None)
    if start is None:
        raise KinspectError("no ncu CSV header (a line starting \"ID\",\"Process ID\") in the text; make it with "
                            "`ncu --import REPORT --csv --page raw --print-units base`")
    reader = csv.reader(io.StringIO("\n".join(lines[start:])))
    header = next(reader)
    col = {name: i for i, name in enumerate(header)}
    for needed in ("Kernel Name", "Grid Size", "Block Size"):
        if needed not in col:
            raise KinspectError(f"ncu CSV has no '{needed}' column; is it `--page raw`?")
    metrics = [n for n in header[col["Block Size"] + 1:] if "__" in n]
    rows = []
    for cells in reader:
        if len(cells) != len(header) or not cells[0].strip():
            continue                      # the units row, a torn last line
        rows.append(NcuRow(kernel=cells[col["Kernel Name"]], grid=_dims(cells[col["Grid Size"]]),
                           block=_dims(cells[col["Block Size"]]),
                           values={m: _value(cells[col[m]]) for m in metrics}))
    return rows


def _dims(text: str) -> tuple[int, ...]:
    """ncu's `(4096, 1, 1)`."""
    return tuple(int(x) for x in re.findall(r"\d+", text))


def _value(text: str) -> float | None:
    text = text.strip().replace(",", "")
    if not text or text == "n/a":
        return None
    try:
        return float(text)
    except ValueError:
        return None


def by_kernel(rows: list[NcuRow]) -> dict[tuple[str, tuple[int, ...]], list[NcuRow]]:
    """Rows grouped by kernel name and grid (how a variant's launches are told apart)."""
    out: dict = {}
    for r in rows:
        out.setdefault((r.kernel, r.grid), []).append(r)
    return out


# -- the file in a variant's folder -------------------------------------------------------------------

def write(folder: str | os.PathLike, c: Counters) -> Path:
    return jsonfile.write(Path(folder) / FILE, c.to_json())


def read(folder: str | os.PathLike) -> Counters | None:
    """A variant's measured counters; None when it has none, or its file is not one this kinspect wrote."""
    return jsonfile.read(Path(folder) / FILE, Counters.from_json)
