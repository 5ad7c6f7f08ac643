"""AMD: Triton's hip backend."""

from kinspect.backends import Backend, register
from kinspect.model import StageKind

register(Backend(
    name="hip",
    triton_names=("hip", "amd"),
    isa="amdgcn",
    stages=(
        StageKind("source", "source", "mlir", order=0, title="Triton IR as generated from the AST"),
        StageKind("ttir", "ttir", "mlir", order=10, title="TTIR"),
        StageKind("ttgir", "ttgir", "mlir", order=20, title="TTGIR"),
        StageKind("llir", "llir", "llvm", order=30, title="LLVM IR"),
        StageKind("amdgcn", "amdgcn", "amdgcn", order=40, title="AMDGCN"),
        StageKind("hsaco", "hsaco", "elf", binary=True, order=50, title="hsaco"),
        StageKind("json", "json", "json", order=90, title="metadata"),
    ),
))
