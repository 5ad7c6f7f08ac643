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


# ptxas --version, last lines: "Cuda compilation tools, release 12.9, V12.9.86"
PTXAS_VERSION_RE = re.compile(r"release (\d+)\.(\d+), V([\d.]+)")
# Triton names the architecture with the "a" suffix from sm_90 on (nvidia compiler.py sm_arch_from_capability)
CUBIN = StageKind("cubin", "cubin", "elf", binary=True, order=50, derived_from="ptx", title="cubin")


def ptxas_for(arch: int) -> tuple[str, str]:
    """(path, version) of the ptxas Triton uses for `arch`: its wheel's ptxas-blackwell from sm_90 on
    where it ships one (Triton 3.9: "keep it until legacy ptxas is removed"), else its ptxas."""
    tool = (nvidia_tool("ptxas-blackwell") if arch >= 90 else None) or nvidia_tool("ptxas")
    if tool is None:
        raise KinspectError("ptxas not found (the triton wheel ships it; or set TRITON_PTXAS_PATH)")
    m = PTXAS_VERSION_RE.search(run_tool([tool, "--version"], timeout=30))
    return tool, (m.group(3) if m else "of unknown version")


def ptx_to_cubin(ptx: Path) -> tuple[bytes, str]:
    """The cubin of a PTX stage that came without one (a trace holds text only): ptxas run as Triton
    runs it (nvidia compiler.py make_cubin: -lineinfo -v, --fmad=false where the kernel was compiled
    without FP fusion, --regAllocOptLevel=2 with ptxas 13, --gpu-name of the architecture) for the
    architecture the PTX targets. Options a trace's metadata carries as text (ptx_options) are not
    passed: a trace is data, not a command line."""
    import json
    import tempfile

    with open(ptx, encoding="utf-8", errors="replace") as f:
        target = next((m for m in map(PTX_TARGET_RE.match, f) if m), None)
    if target is None:
        raise KinspectError("the PTX names no .target sm_NN")
    arch = int(target.group(1))
    gpu_name = f"sm_{arch}{'a' if arch >= 90 else ''}"
    tool, version = ptxas_for(arch)
    options = ["-lineinfo", "-v"]
    try:
        meta = json.loads(ptx.with_suffix(".json").read_text())
    except (OSError, ValueError):
        meta = {}
    if isinstance(meta, dict) and meta.get("enable_fp_fusion") is False:
        options.append("--fmad=false")
    if int(version.split(".")[0]) >= 13 if version[0].isdigit() else False:
        options.append("--regAllocOptLevel=2")      # Triton's workaround for a ptxas 13 bug
    with tempfile.TemporaryDirectory(prefix="kinspect-ptxas-") as tmp:
        out = Path(tmp, "derived.cubin")
        run_tool([tool, *options, f"--gpu-name={gpu_name}", str(ptx), "-o", str(out)])
        data = out.read_bytes()
    how = (f"derived: ptxas {version} ({Path(tool).name} {' '.join(options)} --gpu-name={gpu_name}, Triton's options) "
           f"from the PTX; not the cubin the program ran")
    if isinstance(meta, dict) and meta.get("ptx_options"):
        how += "; the extra ptxas options its metadata names (ptx_options) were not passed"
    return data, how


def cubin_resources(v: Variant, stated: dict[str, int], limits) -> Resources:
    """Registers and spills of the loaded kernel, else of the cubin (cuobjdump); occupancy under `limits`."""
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
            source = "cuobjdump --dump-resource-usage" + (
                f" of a cubin {cubin.derived_by.split(' from the ')[0]}" if cubin.derived_by else "")
            extra = tuple(sorted(figures.items()))
        except Exception as e:  # a truncated cubin: say so, keep going
            source = f"cuobjdump failed: {e}"
    if loaded:
        regs, spills, source = loaded["registers"], loaded["spills"], "the loaded kernel (driver)"
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
    # a PTX without its cubin (a trace) gets one from ptxas first, then the SASS from it
    derivers=(Deriver(CUBIN, ptx_to_cubin, "ptxas -lineinfo -v"), Deriver(SASS, cubin_to_sass, "nvdisasm -c -g -gi -hex")),
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
