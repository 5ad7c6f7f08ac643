"""AMD: Triton's hip backend. Registers, spills and occupancy come from the figures its AMDGCN text
states (`.vgpr_count`, `.amdhsa_next_free_vgpr`, ...)."""

import re

from kinspect.backends import Backend, Preset, register
from kinspect.core.model import StageKind, Variant
from kinspect.backends.resources import AmdLimits, Resources, estimate

# AMDGCN header: '.amdgcn_target "amdgcn-amd-amdhsa--gfx942"'
AMDGCN_TARGET_RE = re.compile(r'\.amdgcn_target\s+"[^"]*--(gfx[0-9a-z]+)')


def stated_resources(v: Variant, stated: dict[str, int], limits) -> Resources:
    """What the AMDGCN text states: VGPRs (with AGPRs: one register file on CDNA), spilled VGPRs/SGPRs."""
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
    occ, note = estimate(v, limits, registers=None, vgprs=total)
    return Resources(total, spills, shared, "AMDGCN metadata", occ, tuple(sorted(stated.items())), note)


BACKEND = register(Backend(
    name="hip",
    triton_names=("hip", "amd"),
    isa="amdgcn",
    gpu=True,
    torch_device="cuda",     # torch's ROCm build calls its GPU "cuda"
    plugin="amd",
    presets=(Preset("hip:gfx942", "gfx942", 64), Preset("hip:gfx950", "gfx950", 64)),
    warp_size=64,
    arch_re=re.compile(r"[A-Za-z0-9_]+"),
    launch_options=("num_warps", "num_stages", "waves_per_eu", "matrix_instr_nonkdim", "kpack", "enable_fp_fusion",
                    "debug"),
    stages=(
        StageKind("source", "source", "mlir", order=0, title="Triton IR as generated from the AST"),
        StageKind("ttir", "ttir", "mlir", order=10, title="TTIR"),
        StageKind("ttgir", "ttgir", "mlir", order=20, title="TTGIR"),
        StageKind("llir", "llir", "llvm", order=30, title="LLVM IR"),
        StageKind("amdgcn", "amdgcn", "amdgcn", order=40, title="AMDGCN"),
        StageKind("hsaco", "hsaco", "elf", binary=True, order=50, title="hsaco"),
        StageKind("json", "json", "json", order=90, title="metadata"),
    ),
    resources=stated_resources,
    limits={"gfx942": AmdLimits(lds_per_cu=64 * 1024), "gfx950": AmdLimits(lds_per_cu=160 * 1024)},
    matrix_words="matrix cores used",
    dump_stages=("source", "ttir", "ttgir", "llir", "amdgcn", "hsaco"),
    dump_marks=("amdgcn", "hsaco"),
    arch_in=(("amdgcn", AMDGCN_TARGET_RE),),
    ir_triples=("amdgcn",),
))
