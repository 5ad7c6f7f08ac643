"""What a variant uses of its device (registers, spills, shared memory) and the occupancy that allows:
the records, and the two occupancy models a GPU backend fills in per architecture (kinspect.backends).

NVIDIA figures: CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"
(8.0, 9.0, 10.0): 64K 32-bit registers, 64 resident warps, 32 resident blocks per SM; usable shared
memory per SM 164 KiB (8.0) and 228 KiB (9.0, 10.0), 1 KiB of it reserved per block; registers are
allocated per warp in units of 256. AMD figures: the CDNA3 ISA guide and the MI300 / MI355 tuning
guides: 4 SIMDs per CU, up to 8 waves per SIMD, 512 VGPRs (arch + accumulation, unified) per lane per
SIMD allocated in granules of 8, LDS 64 KiB per CU (gfx942) and 160 KiB (gfx950).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Occupancy:
    active_warps: int        # per SM (NVIDIA) or per CU (AMD; waves)
    max_warps: int
    limiter: str             # "registers", "shared memory", "warps", "blocks", "LDS", "VGPRs"
    blocks: int

    @property
    def fraction(self) -> float:
        return self.active_warps / self.max_warps if self.max_warps else 0.0

    def describe(self) -> str:
        unit = "waves/CU" if self.limiter in ("VGPRs", "LDS", "waves") else "warps/SM"
        return (f"{self.fraction:.0%} ({self.active_warps}/{self.max_warps} {unit}, {self.blocks} block(s); "
                f"limited by {self.limiter})")


@dataclass(frozen=True)
class Resources:
    registers: int | None = None
    spills: int | None = None          # bytes of local memory / scratch, or spill count where that's what's known
    shared_bytes: int | None = None
    source: str = ""                   # where the register figure came from
    occupancy: Occupancy | None = None
    extra: tuple[tuple[str, int], ...] = ()
    note: str = ""                     # why a figure is missing (no occupancy without shared memory)


@dataclass(frozen=True)
class NvidiaLimits:
    """An NVIDIA SM: what bounds the blocks resident on it."""

    regs_per_sm: int = 65536
    warps_per_sm: int = 64
    blocks_per_sm: int = 32
    shared_per_sm: int = 164 * 1024
    shared_reserved_per_block: int = 1024
    reg_unit_per_warp: int = 256

    def occupancy(self, warps: int, *, registers: int | None, shared: int, vgprs: int | None = None
                  ) -> Occupancy | None:
        if not registers:
            return None
        regs_per_warp = math.ceil(registers * 32 / self.reg_unit_per_warp) * self.reg_unit_per_warp
        candidates = {
            "registers": self.regs_per_sm // (regs_per_warp * warps),
            "warps": self.warps_per_sm // warps,
            "blocks": self.blocks_per_sm,
        }
        if shared:
            candidates["shared memory"] = self.shared_per_sm // (shared + self.shared_reserved_per_block)
        limiter = min(candidates, key=lambda k: (candidates[k], k != "warps"))
        blocks = candidates[limiter]
        return Occupancy(blocks * warps, self.warps_per_sm, limiter, blocks)


@dataclass(frozen=True)
class AmdLimits:
    """An AMD CU: what bounds the waves resident on it."""

    simds_per_cu: int = 4
    waves_per_simd: int = 8
    vgprs_per_simd_lane: int = 512
    vgpr_granule: int = 8
    lds_per_cu: int = 64 * 1024

    def occupancy(self, warps: int, *, registers: int | None, shared: int, vgprs: int | None = None
                  ) -> Occupancy | None:
        if not vgprs:
            return None
        granted = math.ceil(vgprs / self.vgpr_granule) * self.vgpr_granule
        waves_per_simd = min(self.waves_per_simd, self.vgprs_per_simd_lane // granted)
        max_waves = self.waves_per_simd * self.simds_per_cu
        candidates = {"VGPRs": (waves_per_simd * self.simds_per_cu) // warps, "waves": max_waves // warps}
        if shared:
            candidates["LDS"] = self.lds_per_cu // shared
        limiter = min(candidates, key=lambda k: (candidates[k], k != "waves"))
        blocks = candidates[limiter]
        return Occupancy(blocks * warps, max_waves, limiter, blocks)


def estimate(v, limits, **figures) -> tuple[Occupancy | None, str]:
    """The occupancy of variant `v` under `limits` (its backend's, for its arch; None: no model of
    it), or None and why: it needs the kernel's warps and its shared memory, which Triton's metadata
    states (a cache entry, a kinspect store) and a TRITON_KERNEL_DUMP folder does not (Triton sizes
    shared memory after the TTGIR it dumps); an estimate from a guess would be a guess."""
    missing = [what for what, ok in (("num_warps", "num_warps" in v.options), ("shared memory", "shared" in v.options))
               if not ok]
    if missing:
        return None, (f"occupancy not estimated: {' and '.join(missing)} unknown (this {v.origin} variant has no "
                      f"Triton metadata stating it)")
    if limits is None:
        return None, ""
    figures.setdefault("registers", None)
    return limits.occupancy(int(v.options["num_warps"]), shared=int(v.options.get("shared") or 0), **figures), ""
