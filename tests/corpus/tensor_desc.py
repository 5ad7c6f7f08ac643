"""Tensor descriptors both ways: a host TensorDescriptor argument (TMA on Hopper), its block shape
set per autotune config by a pre_hook, and a descriptor made inside the kernel (which needs a
global scratch allocator at launch)."""

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


def alloc_fn(size: int, alignment: int, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


triton.set_allocator(alloc_fn)


def set_block_shape(nargs):
    block = [nargs["BLOCK_M"], nargs["BLOCK_N"]]
    nargs["in_desc"].block_shape = block
    nargs["out_desc"].block_shape = block


@triton.autotune(configs=[triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, pre_hook=set_block_shape),
                          triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=4, pre_hook=set_block_shape)],
                 key=["M", "N"])
@triton.jit
def scale_desc_kernel(in_desc, out_desc, M, N, scale, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x = in_desc.load([pid_m * BLOCK_M, pid_n * BLOCK_N])
    out_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], (x.to(tl.float32) * scale).to(x.dtype))


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[N, M], strides=[M, 1], block_shape=[BLOCK_N, BLOCK_M])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    tile = x_desc.load([pid_m * BLOCK_M, pid_n * BLOCK_N])
    y_desc.store([pid_n * BLOCK_N, pid_m * BLOCK_M], tl.trans(tile))


kinspect_examples = {
    "scale_desc_kernel": {
        "args": {"in_desc": "tensordesc<fp16[BLOCK_M,BLOCK_N]>:512x512",
                 "out_desc": "tensordesc<fp16[BLOCK_M,BLOCK_N]>:512x512",
                 "M": "i32:512", "N": "i32:512", "scale": "fp32:0.5"},
        "grid": lambda META: (triton.cdiv(512, META["BLOCK_M"]), triton.cdiv(512, META["BLOCK_N"])),
    },
    "transpose_kernel": {
        "args": {"x_ptr": "*fp16:512x256", "y_ptr": "*fp16:256x512", "M": "i32:512", "N": "i32:256"},
        "constexprs": {"BLOCK_M": 64, "BLOCK_N": 64},
        "grid": (8, 4),
    },
}
