"""NVIDIA: Triton's cuda backend. SASS is derived from the cubin with nvdisasm (Python line markers kept,
and each instruction's encoding, which holds its scheduling control codes). Registers and spills come
from the loaded kernel when kinspect compiled on the device, else from `cuobjdump --dump-resource-usage`
of the stored cubin (the tool the triton wheel ships); shared memory is Triton's own figure (metadata
`shared`: the dynamic shared memory the kernel launches with), which cuobjdump does not see."""

import re
from pathlib import Path

from kinspect.backends import Backend, Deriver, Preset, register
from kinspect.backends.tools import nvidia_tool, run_tool
from kinspect.core.errors import KinspectError
from kinspect.core.model import StageKind, Variant
from kinspect.backends.resources import NvidiaLimits, Resources, estimate

SASS = StageKind("sass", "sass", "sass", order=60, derived_from="cubin", title="SASS")
STAGES = (
    StageKind("source", "source", "mlir", order=0, title="Triton IR as generated from the AST"),
    StageKind("ttir", "ttir", "mlir", order=10, title="TTIR"),
    StageKind("ttgir", "ttgir", "mlir", order=20, title="TTGIR"),
    StageKind("llir", "llir", "llvm", order=30, title="LLVM IR"),
    StageKind("ptx", "ptx", "ptx", order=40, title="PTX"),
    StageKind("cubin", "cubin", "elf", binary=True, order=50, title="cubin"),
    StageKind("json", "json", "json", order=90, title="metadata"),
)
# PTX header: ".target sm_90a"
PTX_TARGET_RE = re.compile(r"^\s*\.target\s+sm_(\d+)")


def cubin_to_sass(cubin: Path) -> str:
    tool = nvidia_tool("nvdisasm")
    if tool is None:
        raise KinspectError("nvdisasm not found (the triton wheel ships it; or set TRITON_NVDISASM_PATH)")
    # -c: code sections only; -g/-gi: `//## File "...", line N` markers, inlined-at chains included;
    # -hex: each instruction's encoding, whose high word holds its control codes (stall cycles,
    # yield, scoreboard barriers: kinspect.ir.sass reads them, `show --stage sass` prints them).
    return run_tool([tool, "-c", "-g", "-gi", "-hex", str(cubin)])


def cubin_resources(v: Variant, stated: dict[str, int], limits) -> Resources:
    """Registers and spills of the loaded kernel, else of the cubin (cuobjdump); occupancy under `limits`."""
    from kinspect.ir import sass

    shared = v.options.get("shared")
    loaded = v.loaded
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
        regs, spills, source = loaded.registers, loaded.spills, "the loaded kernel (driver)"
    occ, note = estimate(v, limits, registers=regs)
    if regs is None and cubin is None:
        note = ("registers unknown: this variant has no cubin to read them from"
                + (" (a trace holds its stages' text only)" if v.origin == "trace" else ""))
    return Resources(regs, spills, shared, source, occ, extra, note)


BACKEND = register(Backend(
    name="cuda",
    triton_names=("cuda", "nvidia"),
    isa="sass",
    gpu=True,
    torch_device="cuda",
    plugin="nvidia",
    presets=(Preset("cuda:80", "80", 32), Preset("cuda:90", "90", 32), Preset("cuda:100", "100", 32)),
    warp_size=32,
    # the compute capabilities Triton compiles for: LLVM aborts the process on any other (`-t cuda:91`:
    # "Cannot select: intrinsic"), so an unknown one is refused before the compile
    arch_re=re.compile(r"75|80|86|87|89|90|100|101|103|110|120|121"),
    arch_words="a compute capability Triton compiles for: 75, 80, 86, 87, 89, 90, 100, 101, 103, 110, 120 or 121",
    int_arch=True,           # Triton's GPUTarget takes an int arch for cuda
    launch_options=("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "debug"),
    stages=STAGES,
    derivers=(Deriver(SASS, cubin_to_sass, "nvdisasm -c -g -gi -hex"),),
    resources=cubin_resources,
    limits={
        "80": NvidiaLimits(shared_per_sm=164 * 1024),
        "86": NvidiaLimits(warps_per_sm=48, blocks_per_sm=16, shared_per_sm=100 * 1024),
        "89": NvidiaLimits(warps_per_sm=48, blocks_per_sm=24, shared_per_sm=100 * 1024),
        "90": NvidiaLimits(shared_per_sm=228 * 1024),
        "100": NvidiaLimits(shared_per_sm=228 * 1024),
    },
    matrix_words="tensor cores used",
    dump_stages=("source", "ttir", "ttgir", "llir", "ptx", "cubin", "sass"),
    dump_marks=("ptx", "cubin", "sass"),
    arch_in=(("ptx", PTX_TARGET_RE),),
    ir_triples=("nvptx",),
))
