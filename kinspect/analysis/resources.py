"""Registers, spills and shared memory of a variant, and where each figure came from.

CUDA: from the loaded kernel when kinspect compiled on the device, else from
`cuobjdump --dump-resource-usage` of the stored cubin (the tool the triton wheel ships). Shared
memory is Triton's own figure (metadata `shared`: the dynamic shared memory the kernel launches
with), which cuobjdump does not see. AMD: from the figures the AMDGCN text states.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kinspect.analysis.occupancy import Occupancy, estimate
from kinspect.model import Variant


@dataclass(frozen=True)
class Resources:
    registers: int | None = None
    spills: int | None = None          # bytes of local memory / scratch, or spill count where that's what's known
    shared_bytes: int | None = None
    source: str = ""                   # where the register figure came from
    occupancy: Occupancy | None = None
    extra: tuple[tuple[str, int], ...] = ()
    note: str = ""                     # why a figure is missing (no occupancy without shared memory)


def _estimate(v: Variant, **figures) -> tuple[Occupancy | None, str]:
    """The occupancy estimate, or None and why: it needs the kernel's warps and its shared memory, which
    Triton's metadata states (a cache entry, a kinspect store) and a TRITON_KERNEL_DUMP folder does not
    (Triton sizes shared memory after the TTGIR it dumps); an estimate from a guess would be a guess."""
    missing = [what for what, ok in (("num_warps", "num_warps" in v.options), ("shared memory", "shared" in v.options))
               if not ok]
    if missing:
        return None, (f"occupancy not estimated: {' and '.join(missing)} unknown (this {v.origin} variant has no "
                      f"Triton metadata stating it)")
    return estimate(str(v.target), num_warps=int(v.options["num_warps"]),
                    shared_bytes=int(v.options.get("shared") or 0), **figures), ""


def cuda_resources(v: Variant) -> Resources:
    from kinspect.backends.tools import nvidia_tool, run_tool
    from kinspect.ir import sass

    shared = v.options.get("shared")
    loaded = v.extra.get("loaded")
    regs = spills = None
    source, extra = "", ()
    cubin = v.stage("cubin")
    tool = nvidia_tool("cuobjdump")
    if cubin is not None and tool is not None:
        try:
            text = run_tool([tool, "--dump-resource-usage", str(Path(v.path, cubin.file))])
            figures = {r.name: r.value for r in sass.parse_resource_usage(text)
                       if not r.function or r.function == v.kernel}
            regs = figures.get("registers")
            # ptxas puts spilled registers on the stack frame (STACK); LOCAL is other local memory
            spills = None if "local_bytes" not in figures and "stack_bytes" not in figures else \
                figures.get("local_bytes", 0) + figures.get("stack_bytes", 0)
            source = "cuobjdump --dump-resource-usage"
            extra = tuple(sorted(figures.items()))
        except Exception as e:  # a truncated cubin: say so, keep going
            source = f"cuobjdump failed: {e}"
    if loaded:
        regs, spills, source = loaded["registers"], loaded["spills"], "the loaded kernel (driver)"
    occ, note = _estimate(v, registers=regs)
    if regs is None and cubin is None:
        note = ("registers and spills unknown: this variant has no cubin to read them from"
                + (" (a trace holds its stages' text only)" if v.origin == "trace" else ""))
    return Resources(regs, spills, shared, source, occ, extra, note)


def amd_resources(v: Variant, stated: dict[str, int]) -> Resources:
    vgprs = stated.get("vgprs")
    total = vgprs if vgprs is not None else None
    if "agprs" in stated and vgprs is not None:
        total = vgprs + stated["agprs"]
    spills = None
    if "spill_vgprs" in stated or "spill_sgprs" in stated:
        spills = stated.get("spill_vgprs", 0) + stated.get("spill_sgprs", 0)
    # Triton allocates LDS dynamically at launch: its metadata's `shared` is the figure, the static
    # .amdhsa_group_segment_fixed_size in the text is 0.
    shared = v.options.get("shared")
    occ, note = _estimate(v, registers=None, vgprs=total)
    return Resources(total, spills, shared, "AMDGCN metadata", occ, tuple(sorted(stated.items())), note)


def resources(v: Variant, stated: dict[str, int]) -> Resources:
    if v.target.backend == "cuda":
        return cuda_resources(v)
    if v.target.backend == "hip":
        return amd_resources(v, stated)
    return Resources(shared_bytes=v.options.get("shared"), extra=tuple(sorted(stated.items())))
