"""A plain Triton script (no kinspect in it): compile a kernel ahead of time for two GPU targets
and, when a GPU is present, launch it for real.

    kinspect capture --store out -- python samples/aot_compile.py
records every variant this script compiles: the two ahead-of-time targets, plus the launched one
on a GPU machine.
"""

import torch
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask), mask=mask)


def main():
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "alpha": "fp32", "BLOCK": "constexpr"}
    for target in (GPUTarget("cuda", 90, 32), GPUTarget("hip", "gfx942", 64)):
        src = ASTSource(scale_kernel, signature, constexprs={"BLOCK": 256})
        compiled = triton.compile(src, target=target)
        print(f"compiled for {target.backend}:{target.arch}: {', '.join(sorted(compiled.asm))}")
    if torch.cuda.is_available():
        x = torch.randn(10_000, device="cuda")
        y = torch.empty_like(x)
        scale_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), 2.0, BLOCK=256)
        assert torch.allclose(y, 2 * x)
        print("launched on", torch.cuda.get_device_name())
    else:
        print("no GPU: compiled only, nothing launched")


if __name__ == "__main__":
    main()
