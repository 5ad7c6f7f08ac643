"""Module-level code of every kind a script has: a print, a launch inside `except BaseException`,
and argument parsing. None of it may run a kernel while kinspect loads the file."""

import sys

import torch
import triton
import triton.language as tl

print("module-level print")   # must not reach kinspect's stdout


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)


def _plain_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


copy_kernel = triton.jit(_plain_copy)
TILES = [triton.Config({"BLOCK": b}) for b in (64, 128)]
EXAMPLE = torch.ones(16)     # skipped in a definitions-only load: torch at module level

try:
    scale_kernel[(1,)](EXAMPLE, EXAMPLE, 16, SCALE=2.0, BLOCK=16)
except BaseException:        # swallows even kinspect's interception
    pass
if len(sys.argv) > 1 and sys.argv[1] == "--bench":
    raise SystemExit(0)

kinspect_examples = {"scale_kernel": {"args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32:4096"},
                                      "constexprs": {"SCALE": 2.0, "BLOCK": 256}}}
