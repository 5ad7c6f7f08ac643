"""Occupancy estimates from documented per-architecture limits, with the limiting factor named.

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
class NvidiaLimits:
    regs_per_sm: int = 65536
    warps_per_sm: int = 64
    blocks_per_sm: int = 32
    shared_per_sm: int = 164 * 1024
    shared_reserved_per_block: int = 1024
    reg_unit_per_warp: int = 256


@dataclass(frozen=True)
class AmdLimits:
    simds_per_cu: int = 4
    waves_per_simd: int = 8
    vgprs_per_simd_lane: int = 512
    vgpr_granule: int = 8
    lds_per_cu: int = 64 * 1024


LIMITS = {
    "cuda:80": NvidiaLimits(shared_per_sm=164 * 1024),
    "cuda:86": NvidiaLimits(warps_per_sm=48, blocks_per_sm=16, shared_per_sm=100 * 1024),
    "cuda:89": NvidiaLimits(warps_per_sm=48, blocks_per_sm=24, shared_per_sm=100 * 1024),
    "cuda:90": NvidiaLimits(shared_per_sm=228 * 1024),
    "cuda:100": NvidiaLimits(shared_per_sm=228 * 1024),
    "hip:gfx942": AmdLimits(lds_per_cu=64 * 1024),
    "hip:gfx950": AmdLimits(lds_per_cu=160 * 1024),
}


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


def estimate(target: str, *, num_warps: int, registers: int | None, shared_bytes: int = 0,
             vgprs: int | None = None) -> Occupancy | None:
    limits = LIMITS.get(target)
    if isinstance(limits, NvidiaLimits) and registers:
        return _nvidia(limits, num_warps, registers, shared_bytes)
    if isinstance(limits, AmdLimits) and vgprs:
        return _amd(limits, num_warps, vgprs, shared_bytes)
    return None


def _nvidia(lim: NvidiaLimits, warps: int, regs: int, shared: int) -> Occupancy:
    regs_per_warp = math.ceil(regs * 32 / lim.reg_unit_per_warp) * lim.reg_unit_per_warp
    candidates = {
        "registers": lim.regs_per_sm // (regs_per_warp * warps),
        "warps": lim.warps_per_sm // warps,
        "blocks": lim.blocks_per_sm,
    }
    if shared:
        candidates["shared memory"] = lim.shared_per_sm // (shared + lim.shared_reserved_per_block)
    limiter = min(candidates, key=lambda k: (candidates[k], k != "warps"))
    blocks = candidates[limiter]
    return Occupancy(blocks * warps, lim.warps_per_sm, limiter, blocks)


def _amd(lim: AmdLimits, warps: int, vgprs: int, lds: int) -> Occupancy:
    granted = math.ceil(vgprs / lim.vgpr_granule) * lim.vgpr_granule
    waves_per_simd = min(lim.waves_per_simd, lim.vgprs_per_simd_lane // granted)
    max_waves = lim.waves_per_simd * lim.simds_per_cu
    candidates = {"VGPRs": (waves_per_simd * lim.simds_per_cu) // warps, "waves": max_waves // warps}
    if lds:
        candidates["LDS"] = lim.lds_per_cu // lds
    limiter = min(candidates, key=lambda k: (candidates[k], k != "waves"))
    blocks = candidates[limiter]
    return Occupancy(blocks * warps, max_waves, limiter, blocks)
