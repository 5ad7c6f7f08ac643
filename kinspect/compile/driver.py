"""A compile-only Triton driver, so the JIT's own specialization runs for any target, no GPU needed."""

from __future__ import annotations

import contextlib
from collections import defaultdict

import torch
from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase
from triton.runtime import driver as triton_driver

from kinspect.core.model import Target
from kinspect.core.patching import patched


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

    def get_device_interface(self):
        # triton.testing.do_bench asks for it before its first call, a launch kinspect records
        # (and under kinspect.compile.loader.guarded, torch.cuda answers as the target's device)
        return torch.cuda

    def get_empty_cache_for_benchmark(self):
        # ... and for this after it: the timing is what kinspect does not do
        raise RuntimeError("kinspect records launches and runs none: triton.testing.do_bench stops after its "
                           "first call")

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def set_current_device(self, device):
        pass


# What Triton's `driver.active.utils.get_device_properties(i)` reports, for a program run under the
# interpreter with no device (`capture --interpret`): the figures of the device each preset most
# likely is (vendors' data sheets: H100 SXM, A100, B200, MI300X, MI355X). A program sizes its grid or
# its pipelining by them (Triton's softmax tutorial: multiprocessor_count, max_shared_mem).
DEVICE_PROPERTIES = {
    "cuda:80": dict(multiprocessor_count=108, max_shared_mem=166912, max_num_regs=65536, sm_clock_rate=1410000,
                    mem_clock_rate=1593000, mem_bus_width=5120),
    "cuda:90": dict(multiprocessor_count=132, max_shared_mem=232448, max_num_regs=65536, sm_clock_rate=1980000,
                    mem_clock_rate=2619000, mem_bus_width=5120),
    "cuda:100": dict(multiprocessor_count=148, max_shared_mem=232448, max_num_regs=65536, sm_clock_rate=1965000,
                     mem_clock_rate=3996000, mem_bus_width=8192),
    "hip:gfx942": dict(multiprocessor_count=304, max_shared_mem=65536, max_num_regs=131072, sm_clock_rate=2100000,
                       mem_clock_rate=1300000, mem_bus_width=8192),
    "hip:gfx950": dict(multiprocessor_count=256, max_shared_mem=163840, max_num_regs=131072, sm_clock_rate=2400000,
                       mem_clock_rate=2000000, mem_bus_width=8192),
}


class InterpretedDriver(CompileOnlyDriver):
    """The active driver of a program run under TRITON_INTERPRET where no device driver is active
    (`capture --interpret` on a machine without a GPU): tutorials ask it for their tensors' device
    (`get_active_torch_device()`: the CPU, where the interpreter runs), the target
    (`get_current_target()`: the one the capture compiles for), the device index and its properties
    (`utils.get_device_properties`: DEVICE_PROPERTIES, a typical device of that target)."""

    def __init__(self, target: GPUTarget):
        super().__init__(target)
        key = f"{target.backend}:{target.arch}"
        facts = {**DEVICE_PROPERTIES.get(key, DEVICE_PROPERTIES["cuda:90"]), "warpSize": target.warp_size}
        self.utils = _Utils(facts)

    def get_benchmarker(self):
        from triton.testing import do_bench   # the interpreter runs what it times: CPU time, said as such

        return do_bench

    def get_empty_cache_for_benchmark(self):
        return torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int)

    def clear_cache(self, cache):
        cache.zero_()


class _Utils:
    def __init__(self, properties: dict):
        self.properties = properties

    def get_device_properties(self, device=None) -> dict:
        return dict(self.properties)


@contextlib.contextmanager
def fresh_binders(fn):
    """Give a JITFunction empty per-device caches for the block, then put the user's back.

    A JITFunction caches its binder and kernels per device index; the compile-only driver is always
    device 0, so without this a second target would reuse the first target's binder.
    """
    with patched(fn, "device_caches", defaultdict(fn.create_binder)):
        yield


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
