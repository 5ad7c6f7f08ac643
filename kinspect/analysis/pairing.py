"""Measured counters beside the static findings they confirm or contradict.

    pairs = pair(findings, counters, copy_gbps)     # one Pairing per finding, and the kernel-wide figures

A finding read from the compiled code says what may cost time; the counters of a replayed launch
(kinspect.bench.ncu) say what did. Narrow loads are confirmed when the loads requested through L1
well over the bytes DRAM delivered (partial sectors: `16-bit loads → 6.1× the bytes requested that DRAM
moved`) or when warps stall on the load queue (lg_throttle); they are contradicted when L1 requested
about what DRAM moved. Low occupancy is confirmed or contradicted by the achieved occupancy. A kernel
that moves its bytes at 80% of the copy bandwidth or more has nothing to gain inside it: every finding
is contradicted. A contradicted finding is demoted: views list it after the others, marked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kinspect.files.counters import STALL_WORDS, Counters

AT_THE_LIMIT = 80.0          # % of copy bandwidth from which a kernel has nothing to gain inside it
OVERFETCH = 2.0              # L1-requested / DRAM-read bytes from which loads clearly waste sectors
COALESCED = 1.3              # ... and below which they do not
LOW_OCCUPANCY = 40.0         # achieved occupancy %, below which low occupancy is confirmed
FINE_OCCUPANCY = 60.0
BITS = re.compile(r"(\d+)-bit")


@dataclass(frozen=True)
class Pairing:
    kind: str
    finding: str
    verdict: str             # confirms | contradicts | not measured
    text: str                # the measured figure, in words

    @property
    def demoted(self) -> bool:
        return self.verdict == "contradicts"

    def to_json(self) -> dict:
        return {"kind": self.kind, "finding": self.finding, "verdict": self.verdict, "measured": self.text,
                "demoted": self.demoted}


def achieved_gbps(c: Counters) -> float | None:
    if c.dram_bytes is None or not c.duration_ns:
        return None
    return c.dram_bytes / (c.duration_ns * 1e-9) / 1e9


def figures(c: Counters, copy_gbps: float | None) -> list[str]:
    """The kernel-wide measured figures, each a few words."""
    out = []
    gbps = achieved_gbps(c)
    if gbps is not None:
        pct = f" = {100 * gbps / copy_gbps:.0f}% of copy bandwidth" if copy_gbps else ""
        out.append(f"DRAM {c.dram_bytes / 1e6:,.1f} MB in {c.duration_ns / 1e3:,.1f} µs: {gbps:,.0f} GB/s{pct}")
    if c.l1_over_dram is not None:
        out.append(f"loads requested {c.l1_over_dram:.1f}x the bytes DRAM read")
    if c.occupancy_pct is not None:
        out.append(f"achieved occupancy {c.occupancy_pct:.0f}%")
    stalls = c.top_stalls()
    if stalls:
        out.append("warps stall most on " + ", ".join(f"{r} ({STALL_WORDS.get(r, r)}) {x:.1f}" for r, x in stalls))
    return out


def pair(findings, c: Counters, copy_gbps: float | None) -> list[Pairing]:
    """Each finding (anything with `kind` and `text`) with the counter that speaks to it."""
    gbps = achieved_gbps(c)
    limit = copy_gbps and gbps is not None and 100 * gbps / copy_gbps >= AT_THE_LIMIT
    out = []
    for f in findings:
        if limit:
            out.append(Pairing(f.kind, f.text, "contradicts",
                               f"the kernel moves its bytes at {100 * gbps / copy_gbps:.0f}% of the copy bandwidth: "
                               f"nothing to gain inside it"))
            continue
        rule = RULES.get(f.kind)
        out.append(rule(f, c) if rule else Pairing(f.kind, f.text, "not measured",
                                                  "no counter kinspect reads speaks to it"))
    return out


def _narrow_loads(f, c: Counters) -> Pairing:
    m = BITS.search(f.text)
    bits = f"{m.group(1)}-bit loads" if m else "narrow loads"
    ratio = c.l1_over_dram
    throttled = any(r == "lg_throttle" for r, _ in c.top_stalls())
    if ratio is not None and ratio >= OVERFETCH or throttled:
        why = f"{bits} → {ratio:.1f}x the bytes requested that DRAM moved" if ratio is not None else bits
        if throttled:
            why += "; warps stall on the global load queue (lg_throttle)"
        return Pairing(f.kind, f.text, "confirms", why)
    if ratio is not None and ratio < COALESCED:
        return Pairing(f.kind, f.text, "contradicts",
                       f"{bits}, but they request {ratio:.1f}x what DRAM moved and do not stall the load queue: "
                       f"they cost little")
    return Pairing(f.kind, f.text, "not measured", "loads' bytes requested per DRAM byte not measured" if ratio is None
                   else f"loads request {ratio:.1f}x what DRAM moved: neither clearly wasteful nor clean")


def _occupancy(f, c: Counters) -> Pairing:
    occ = c.occupancy_pct
    if occ is None:
        return Pairing(f.kind, f.text, "not measured", "achieved occupancy not measured")
    if occ < LOW_OCCUPANCY:
        return Pairing(f.kind, f.text, "confirms", f"achieved occupancy {occ:.0f}%")
    if occ >= FINE_OCCUPANCY:
        return Pairing(f.kind, f.text, "contradicts", f"achieved occupancy {occ:.0f}%: enough warps in flight")
    return Pairing(f.kind, f.text, "not measured", f"achieved occupancy {occ:.0f}%")


RULES = {"narrow_loads": _narrow_loads, "low_occupancy": _occupancy}
