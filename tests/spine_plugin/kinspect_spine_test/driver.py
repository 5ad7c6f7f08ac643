"""The driver half, shaped as spine-triton 3.6.0+spacemit.a5's CPUDriver (backend/driver.py there):

- it is never active on its own (`is_active()` is False): a program activates it by hand, as
  spine-triton's examples do with `triton.runtime.driver.set_active(CPUDriver())`;
- its target is spine-triton's own GPUTarget subclass, naming the core (`spacemit-x60`) as the arch,
  with the core's arch id and thread counts; Triton's cache metadata then holds those fields too;
- its launcher calls Triton's launch hooks around the kernel, as spine-triton's C launcher does.

What the launcher runs is the fixture kernel's work (a softmax over each row) done with torch on the
CPU, on torch's threads: a test double cannot run RISC-V code here.
"""

import os
from dataclasses import dataclass

import torch
from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase

# spine-triton's arch ids (backend/env.py there): the X60 of the K1 is 0x503C. Its RPC mode takes the
# core from SPACEMIT_EP_QEMU_SET_CORE_ARCH (0xA064 for a K3's A100); the stand-in does the same.
X60_ARCH_ID = "0x503C"
CORES = {"0x503C": "spacemit-x60", "0x5064": "spacemit-x100", "0xA03C": "spacemit-a60", "0xA064": "spacemit-a100"}


@dataclass(frozen=True)
class SpineTarget(GPUTarget):
    """The fields spine-triton's AICPUTarget adds to Triton's GPUTarget."""
    core: int = 0
    ai_core: int = 0
    arch_id: str = X60_ARCH_ID
    num_threads: int = 1
    force_vector_interleave: int = 2


def _threads() -> int:
    return max(1, min(4, os.cpu_count() or 1))    # a K1 runs kernels on its 4 cores with IME


class _Utils:
    def load_binary(self, name, kernel, shared, device):
        return None, 0, 0, 0, 1 << 30      # module, function, registers, spills, max threads

    def get_device_properties(self, device):
        return {"max_shared_mem": 1 << 30, "multiprocessor_count": _threads()}

    def unload_module(self, module):
        pass


def _softmax_rows(args):
    """The fixture kernel's work: output[row] = softmax(input[row, :n_cols]) for each program."""
    out, inp, in_stride, out_stride, n_cols = args[:5]
    rows = inp.numel() // in_stride if in_stride else 1
    x = inp.as_strided((rows, n_cols), (in_stride, 1))
    out.as_strided((rows, n_cols), (out_stride, 1)).copy_(torch.softmax(x.float(), dim=-1).to(out.dtype))


class SpineTestLauncher:
    def __init__(self, src, metadata):
        self.name = metadata.name

    def __call__(self, gx, gy, gz, stream, function, packed_metadata, launch_metadata, enter_hook, exit_hook,
                 *args):
        if enter_hook is not None:
            enter_hook(launch_metadata)
        _softmax_rows(list(args))
        if exit_hook is not None:
            exit_hook(launch_metadata)


class SpineTestDriver(DriverBase):
    def __init__(self):
        self.utils = _Utils()
        self.launcher_cls = SpineTestLauncher
        self.binary_ext = "so"
        super().__init__()

    @staticmethod
    def is_active():
        return False        # as spine-triton's: chosen only through triton.runtime.driver.set_active

    def map_python_to_cpp_type(self, ty):
        return ty

    def get_current_target(self):
        n = _threads()
        arch_id = os.environ.get("SPACEMIT_EP_QEMU_SET_CORE_ARCH", X60_ARCH_ID)
        return SpineTarget("cpu", CORES[arch_id], 0, core=n, ai_core=n, arch_id=arch_id, num_threads=n)

    def get_active_torch_device(self):
        return torch.device("cpu")

    def get_benchmarker(self):
        from triton.testing import do_bench

        return do_bench

    def get_device_capability(self):
        return ("cpu", 0)

    def get_current_device(self):
        return "cpu"        # spine-triton's answer: a CPU has no device index

    def set_current_device(self, device):
        pass

    def get_current_stream(self, device=None):
        return 0

    def get_device_interface(self):
        return torch.cpu

    def get_empty_cache_for_benchmark(self):
        return torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int)

    def clear_cache(self, cache):
        cache.zero_()
