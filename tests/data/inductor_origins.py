"""Real Inductor output code on a CPU-only machine, read the way a capture reads it.

    python tests/data/inductor_origins.py OUT.json

torch.compile's Triton CPU backend generates Triton kernels for the CPU (cpu_backend="triton"); with
kinspect's compile-only CUDA driver as Triton's driver the codegen runs as on a GPU. Only compiling the
kernels is left out (AsyncCompile.triton gives a stand-in: no CPU Triton backend is installed here), so
the wrapper module loads and PyCodeCache keeps its line map, as in a program on a GPU. Running the
compiled graph then fails at its first kernel; kinspect.hooks.inductor_origins then reads what Inductor kept.
"""

import json
import sys
from pathlib import Path

import torch
import torch.nn as nn
import torch._inductor.config as inductor
from torch._inductor.async_compile import AsyncCompile
from triton.backends.compiler import GPUTarget
from triton.runtime import driver

from kinspect.compile.driver import CompileOnlyDriver
from kinspect.hooks.inductor_origins import InductorOrigins


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(64)
        self.fc = nn.Linear(64, 64)

    def forward(self, x):
        h = self.ln(x)
        h = torch.nn.functional.gelu(self.fc(h))
        return x + h * 0.5


class NotCompiled:
    def __init__(self, name):
        self.name = name

    def run(self, *args, **kwargs):
        raise RuntimeError("compile-only: no CPU Triton backend here")


def main(out: str) -> None:
    inductor.cpu_backend = "triton"
    inductor.compile_threads = 1
    driver.set_active(CompileOnlyDriver(GPUTarget("cuda", 90, 32)))
    AsyncCompile.triton = lambda self, name, source, device_str="cuda", **kw: NotCompiled(name)
    # the Block as projects write models; then a torch.nn module compiled directly (Dynamo keeps no frame
    # from inside torch/nn/modules: its kernels get their ATen ops and no line)
    for compiled in (torch.compile(Block()), torch.compile(nn.Softmax(dim=-1))):
        try:
            compiled(torch.randn(8, 32, 64))
        except RuntimeError as e:
            if "compile-only" not in str(e):
                raise
    origins = InductorOrigins()
    origins.collect()
    Path(out).write_text(json.dumps({path: o.to_json() for path, o in origins.by_path.items()}))


if __name__ == "__main__":
    main(sys.argv[1])
