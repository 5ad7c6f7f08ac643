"""What the device can do, as a store keeps it: the copy bandwidth and matmul peaks `kinspect capture
--time` measured on the program's GPU when the program ended (`<store>/device.json`).

    c, why = for_store(root)     # the store's ceilings; else the ones measured on this machine, saying so

Every percentage of bandwidth or peak, every ideal time, says which ceilings it used: a store made
before kinspect recorded them (or by a capture without --time) falls back to the measurements in
kinspect's cache on this machine (kinspect bench and capture make them), named with their device and
date, and to none at all when there are none.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from kinspect.files import jsonfile

FILE = "device.json"
CEILINGS_VERSION = 1


@dataclass(frozen=True)
class Ceilings:
    device: str
    copy_gbps: float                                 # device-to-device copy, bytes read + written per second
    matmul_tflops: dict = field(default_factory=dict)    # torch dtype name -> torch.matmul's TFLOP/s
    measured: str = ""                               # ISO date of the measurement
    method: str = ""                                 # how they were measured, in words
    source: str = ""                                 # where these figures come from, for this store
    launch_floor_us: float | None = None             # the least GPU time one launch takes (bench.device)
    l2_gbps: float | None = None                     # a copy within the L2 cache, bytes read + written per second
    l2_bytes: int | None = None                      # the L2 cache's size

    def bandwidth_for(self, bytes_per_call: float, gbps: float) -> tuple[float | None, str]:
        """The bandwidth ceiling a kernel that moves `bytes_per_call` at `gbps` is measured against, and its
        name. DRAM's copy bandwidth, unless the kernel beat it: then its inputs came from the L2 (the kernel
        before it had just written them), and the ceiling is the L2's for the bytes that fit in it and
        DRAM's for the rest ("L2"). None where it beat DRAM and no L2 ceiling is known (no ceiling then
        says anything true of it)."""
        if gbps <= self.copy_gbps:
            return self.copy_gbps, "DRAM"
        if not (self.l2_gbps and self.l2_bytes) or bytes_per_call <= 0:
            return None, ""
        fit = min(bytes_per_call, self.l2_bytes)
        seconds = fit / self.l2_gbps + (bytes_per_call - fit) / self.copy_gbps
        return bytes_per_call / seconds, "L2" if fit == bytes_per_call else "L2 and DRAM"

    def peak(self, dtype: str) -> float | None:
        """TFLOP/s for a dot's input dtype (`bfloat16`, `float16`, `float32`; fp8 has no measurement)."""
        return self.matmul_tflops.get(dtype)

    def describe(self) -> str:
        peaks = ", ".join(f"{k} {v:,.0f}" for k, v in self.matmul_tflops.items())
        floor = f", {self.launch_floor_us:.2f} µs per launch at least" if self.launch_floor_us else ""
        l2 = (f", L2 copy {self.l2_gbps:,.0f} GB/s ({self.l2_bytes / 2**20:.0f} MiB)"
              if self.l2_gbps and self.l2_bytes else "")
        return (f"{self.device}: copy {self.copy_gbps:,.0f} GB/s{l2}" + (f", matmul TFLOP/s {peaks}" if peaks else "") +
                f"{floor} (measured {self.measured}; {self.source})")

    def to_json(self) -> dict:
        return {"version": CEILINGS_VERSION, "device": self.device, "copy_gbps": self.copy_gbps,
                "matmul_tflops": dict(self.matmul_tflops), "measured": self.measured, "method": self.method,
                "launch_floor_us": self.launch_floor_us, "l2_gbps": self.l2_gbps, "l2_bytes": self.l2_bytes}

    @classmethod
    def from_json(cls, d: dict, source: str = "") -> "Ceilings":
        if not isinstance(d, dict) or d.get("version") != CEILINGS_VERSION:
            raise ValueError(f"device ceilings version {d.get('version') if isinstance(d, dict) else None!r}")
        copy = float(d["copy_gbps"])
        if not copy > 0:
            raise ValueError("copy_gbps must be positive")
        peaks = {str(k): float(v) for k, v in (d.get("matmul_tflops") or {}).items() if float(v) > 0}
        floor = d.get("launch_floor_us")
        l2_gbps, l2_bytes = _positive(d.get("l2_gbps")), _positive(d.get("l2_bytes"))
        return cls(device=str(d["device"]), copy_gbps=copy, matmul_tflops=peaks, measured=str(d.get("measured", "")),
                   method=str(d.get("method", "")), source=source,
                   launch_floor_us=float(floor) if floor is not None and float(floor) > 0 else None,
                   l2_gbps=l2_gbps, l2_bytes=int(l2_bytes) if l2_bytes and l2_gbps else None)


def _positive(x) -> float | None:
    """A finite positive number from a file, else None (a store made before kinspect measured it)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    x = float(x)
    return x if 0 < x < float("inf") else None


def write(root: str | os.PathLike, c: Ceilings) -> Path:
    return jsonfile.write(Path(root) / FILE, c.to_json())


def read(root: str | os.PathLike) -> Ceilings | None:
    """The store's own ceilings; None when it has none or its file is not one this kinspect reads."""
    return jsonfile.read(Path(root) / FILE, lambda d: Ceilings.from_json(d, source="measured by the capture on its GPU"),
                         limit=1 << 16)


# The vendors' datasheet memory bandwidth of GPUs, by the names torch gives them ("NVIDIA H100 80GB HBM3",
# "NVIDIA A100-SXM4-80GB", "AMD Instinct MI300X") or a user types ("H100 SXM", "h200"): (pattern, name, GB/s).
# First match wins. A peak, not a measurement: a device-to-device copy reaches about 90% of it (H100 SXM:
# 3,003 GB/s measured of 3,350, DESIGN.md).
DATASHEET = (
    (re.compile(r"H100.*(PCIe)", re.I), "H100 PCIe", 2000.0),
    (re.compile(r"H100.*NVL", re.I), "H100 NVL", 3900.0),
    (re.compile(r"H100|H800", re.I), "H100 SXM", 3350.0),
    (re.compile(r"GH200.*(480|96)", re.I), "GH200 (96 GB HBM3)", 4000.0),
    (re.compile(r"GH200.*(624|144)", re.I), "GH200 (144 GB HBM3e)", 4900.0),
    (re.compile(r"(?<!G)H200", re.I), "H200", 4800.0),
    (re.compile(r"A100.*(40\s*GB).*(PCIe)|A100.*PCIE.*40", re.I), "A100 40GB PCIe", 1555.0),
    (re.compile(r"A100.*(40\s*GB)", re.I), "A100 40GB", 1555.0),
    (re.compile(r"A100.*(80\s*GB).*PCIe", re.I), "A100 80GB PCIe", 1935.0),
    (re.compile(r"A100", re.I), "A100 80GB", 2039.0),
    (re.compile(r"B200", re.I), "B200", 8000.0),
    (re.compile(r"L40S", re.I), "L40S", 864.0),
    (re.compile(r"\bL4\b", re.I), "L4", 300.0),
    (re.compile(r"\bA10G?\b", re.I), "A10", 600.0),
    (re.compile(r"RTX 4090", re.I), "RTX 4090", 1008.0),
    (re.compile(r"MI300X", re.I), "MI300X", 5300.0),
    (re.compile(r"MI325X", re.I), "MI325X", 6000.0),
    (re.compile(r"MI250X?", re.I), "MI250X", 3277.0),
)
DATASHEET_SOURCE = "the vendor's datasheet peak, not a measurement: a copy reaches about 90% of it"


def datasheet(device: str) -> Ceilings | None:
    """The datasheet memory bandwidth of a GPU named `device` (no matmul peaks: those depend on clocks,
    sparsity and dtype more than one figure says); None for a name not in DATASHEET."""
    for pattern, name, gbps in DATASHEET:
        if pattern.search(device or ""):
            return Ceilings(device=name, copy_gbps=gbps, measured="", method="datasheet",
                            source=DATASHEET_SOURCE)
    return None


def datasheet_names() -> str:
    return ", ".join(name for _, name, _ in DATASHEET)


def for_store(root: str | os.PathLike | None, device: str | None = None) -> tuple[Ceilings | None, str]:
    """The ceilings a store's percentages use, and a line saying where they come from (or why there are
    none): the store's own, else those measured on this machine (on the device the user names, where
    they name one), else the datasheet figure of the device the user names."""
    if root is not None:
        own = read(root)
        if own is not None:
            return own, f"ceilings of {own.describe()}"
    old = "the store has no device ceilings (captured without --time, or by an older kinspect)"
    sheet = datasheet(device) if device else None
    cached = cached_on_this_machine()
    if cached is not None and (sheet is None or datasheet(cached.device) == sheet):
        return cached, f"{old}: using {cached.describe()}"
    if sheet is not None:
        return sheet, (f"{old}: % of bandwidth (%spec) and ideal times against {sheet.device}'s datasheet "
                       f"{sheet.copy_gbps:,.0f} GB/s ({DATASHEET_SOURCE}); no matmul peak, so no compute ideal")
    if device:
        from kinspect.core.errors import UsageError

        raise UsageError(f"--device '{device}': kinspect has no datasheet figure for it; it knows {datasheet_names()}")
    return None, ("no device ceilings: the store has none (kinspect capture --time records them on the GPU) and "
                  "none were measured on this machine (kinspect bench measures them): GB/s without a % of "
                  "bandwidth and no ideal time; --device NAME uses a GPU's datasheet figure")


def cached_on_this_machine() -> Ceilings | None:
    """The newest copy-bandwidth measurement in kinspect's cache (kinspect.bench.device), with the matmul
    peaks of the same device; None when this machine measured none (read without torch or a GPU)."""
    from kinspect.core.cache import cache_dir

    folder = cache_dir() / "device"
    copies, peaks, floors, l2 = [], {}, {}, {}
    for p in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            d = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(d, dict) or not isinstance(d.get("device"), str):
            continue
        if p.name.startswith("copy-") and isinstance(d.get("gbps"), (int, float)) and d["gbps"] > 0:
            copies.append(d)
        elif p.name.startswith("matmul-") and isinstance(d.get("tflops"), (int, float)) and d.get("dtype"):
            peaks.setdefault(d["device"], {})[str(d["dtype"])] = float(d["tflops"])
        elif p.name.startswith("floor-") and isinstance(d.get("us"), (int, float)) and d["us"] > 0:
            floors[d["device"]] = float(d["us"])
        elif p.name.startswith("l2-") and _positive(d.get("gbps")) and _positive(d.get("bytes")):
            l2[d["device"]] = (float(d["gbps"]), int(d["bytes"]))
    gpu = [d for d in copies if " on cpu" not in str(d.get("method", ""))]
    if not gpu:
        return None
    d = max(gpu, key=lambda x: str(x.get("measured", "")))
    return Ceilings(device=d["device"], copy_gbps=float(d["gbps"]), matmul_tflops=peaks.get(d["device"], {}),
                    measured=str(d.get("measured", "")), method=str(d.get("method", "")),
                    source="kinspect's cache on this machine", launch_floor_us=floors.get(d["device"]),
                    l2_gbps=l2.get(d["device"], (None, None))[0], l2_bytes=l2.get(d["device"], (None, None))[1])
