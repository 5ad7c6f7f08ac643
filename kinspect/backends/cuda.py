"""NVIDIA: Triton's cuda backend. SASS is derived from the cubin with nvdisasm (Python line markers kept,
and each instruction's encoding, which holds its scheduling control codes)."""

from pathlib import Path

from kinspect.backends import Backend, Deriver, register
from kinspect.backends.tools import nvidia_tool, run_tool
from kinspect.errors import KinspectError
from kinspect.model import StageKind

SASS = StageKind("sass", "sass", "sass", order=60, derived_from="cubin", title="SASS")


def cubin_to_sass(cubin: Path) -> str:
    tool = nvidia_tool("nvdisasm")
    if tool is None:
        raise KinspectError("nvdisasm not found (the triton wheel ships it; or set TRITON_NVDISASM_PATH)")
    # -c: code sections only; -g/-gi: `//## File "...", line N` markers, inlined-at chains included;
    # -hex: each instruction's encoding, whose high word holds its control codes (stall cycles,
    # yield, scoreboard barriers: kinspect.ir.sass reads them, `show --stage sass` prints them).
    return run_tool([tool, "-c", "-g", "-gi", "-hex", str(cubin)])


register(Backend(
    name="cuda",
    triton_names=("cuda", "nvidia"),
    isa="sass",
    stages=(
        StageKind("source", "source", "mlir", order=0, title="Triton IR as generated from the AST"),
        StageKind("ttir", "ttir", "mlir", order=10, title="TTIR"),
        StageKind("ttgir", "ttgir", "mlir", order=20, title="TTGIR"),
        StageKind("llir", "llir", "llvm", order=30, title="LLVM IR"),
        StageKind("ptx", "ptx", "ptx", order=40, title="PTX"),
        StageKind("cubin", "cubin", "elf", binary=True, order=50, title="cubin"),
        StageKind("json", "json", "json", order=90, title="metadata"),
    ),
    derivers=(Deriver(SASS, cubin_to_sass, "nvdisasm -c -g -gi -hex"),),
))
