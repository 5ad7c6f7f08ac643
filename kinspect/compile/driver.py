"""A compile-only Triton driver, so the JIT's own specialization runs for any target, no GPU needed."""

from __future__ import annotations

import contextlib
from collections import defaultdict

import torch
from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase
from triton.runtime import driver as triton_driver

from kinspect.model import Target


def gpu_target(t: Target) -> GPUTarget:
    from kinspect import backends

    arch = int(t.arch) if backends.for_target(t.backend).int_arch else t.arch
    return GPUTarget(t.backend, arch, t.warp_size)


class DeviceUtils:
    """`driver.active.utils` of the compile-only driver: the target's device properties, in the
    keys Triton's own drivers use (files read max_shared_mem and multiprocessor_count at import)."""

    def __init__(self, target: GPUTarget):
        self.target = target

    def get_device_properties(self, device=0) -> dict:
        from kinspect.compile.device import facts

        f = facts(Target(str(self.target.backend), str(self.target.arch), int(self.target.warp_size)))
        return {"max_shared_mem": f.shared_memory_per_block_optin, "multiprocessor_count": f.multi_processor_count,
                "max_num_regs": f.regs_per_multiprocessor, "warpSize": f.warp_size, "sm_clock_rate": f.clock_rate,
                "mem_clock_rate": f.memory_clock_rate, "mem_bus_width": f.memory_bus_width}


class CompileOnlyDriver(DriverBase):
    """Reports a fixed target; device 0, stream 0. Nothing is ever launched through it."""

    def __init__(self, target: GPUTarget):
        self.target = target
        self.utils = DeviceUtils(target)

    @classmethod
    def is_active(cls):
        return False

    def map_python_to_cpp_type(self, ty):
        return ty

    def get_current_target(self):
        return self.target

    def get_active_torch_device(self):
        return torch.device("cpu")

    def get_benchmarker(self):
        raise RuntimeError("kinspect's compile-only driver cannot run kernels")

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def set_current_device(self, device):
        pass


@contextlib.contextmanager
def fresh_binders(fn):
    """Give a JITFunction empty per-device caches for the block, then put the user's back.

    A JITFunction caches its binder and kernels per device index; the compile-only driver is always
    device 0, so without this a second target would reuse the first target's binder.
    """
    saved = fn.device_caches
    fn.device_caches = defaultdict(fn.create_binder)
    try:
        yield
    finally:
        fn.device_caches = saved


@contextlib.contextmanager
def compile_only(target: Target):
    """Make Triton's active driver a compile-only driver for `target`; restore the previous one."""
    previous = getattr(triton_driver, "_active", None)
    triton_driver.set_active(CompileOnlyDriver(gpu_target(target)))
    try:
        yield
    finally:
        if hasattr(triton_driver, "_active"):
            triton_driver._active = previous
        else:  # older DriverConfig without the private field
            triton_driver.reset_active()
