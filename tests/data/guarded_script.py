import argparse

import triton
import triton.language as tl

parser = argparse.ArgumentParser()
parser.add_argument("--size", type=int, required=True)
ARGS = parser.parse_args()     # exits: kinspect's own argv is not this script's


@triton.jit
def fill_kernel(out_ptr, value, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.full((BLOCK, ), value, tl.float32), mask=offs < n)
