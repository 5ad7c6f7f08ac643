"""A toy GPU backend from outside kinspect: what a third party's backend module looks like.

It is registered the way another distribution registers one, through an entry point in the
`kinspect.backends` group (tests/core/test_plugins.py installs one naming BACKEND), never by kinspect itself.
It compiles through Triton's nvidia plugin (its kernels are Triton's GPUTarget "cuda"), but it is its
own registry entry: its own name and presets (`-t toy:90`), stage titles and derived-stage tool, an
occupancy model of a smaller, made-up SM, and its own words for matrix units.
"""

import dataclasses
import re

from kinspect.backends import Backend, Deriver, Preset
from kinspect.backends.cuda import SASS, STAGES, cubin_resources, cubin_to_sass
from kinspect.backends.resources import NvidiaLimits

# a made-up SM: a quarter of an H100's registers and warps, 96 KiB of shared memory
TOY_SM = NvidiaLimits(regs_per_sm=16384, warps_per_sm=16, blocks_per_sm=4, shared_per_sm=96 * 1024)

BACKEND = Backend(
    name="toy",
    triton_names=("cuda",),          # Triton compiles it as cuda; the record names the toy backend
    isa="sass",
    gpu=True,
    torch_device="cuda",
    plugin="nvidia",
    presets=(Preset("toy:90", "90", 32),),
    warp_size=32,
    arch_re=re.compile(r"\d+"),
    arch_words="a number like 90",
    int_arch=True,
    stages=tuple(dataclasses.replace(s, title=f"toy {s.title}") for s in STAGES),
    derivers=(Deriver(dataclasses.replace(SASS, title="toy SASS"), cubin_to_sass, "nvdisasm for the toy backend"),),
    resources=cubin_resources,
    limits={"90": TOY_SM},
    matrix_words="toy matrix units used",
)

# a second backend named like one of kinspect's own: registering it must fail
CUDA_AGAIN = dataclasses.replace(BACKEND, name="cuda")
