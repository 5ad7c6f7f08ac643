"""A Triton driver for tests on a machine without a GPU: it compiles for a GPU target (as kinspect's
compile-only driver does) and "launches" without running anything. Its launcher calls Triton's
launch hooks around each launch as Triton's C launchers do (enter hook with the launch metadata,
the launch, exit hook), so the whole JIT path of a launch runs for real: binding, specialization,
the grid, `launch_metadata` and the hooks."""

import contextlib
from dataclasses import dataclass

from triton.runtime import driver as triton_driver

from kinspect.compile.driver import CompileOnlyDriver, gpu_target
from kinspect.core.model import Target


@dataclass
class Launched:
    name: str
    grid: tuple
    args: tuple


class _Utils:
    def get_device_properties(self, device):
        return {"max_shared_mem": 228 * 1024, "multiprocessor_count": 132, "max_num_regs": 65536,
                "warpSize": 32, "sm_clock_rate": 1, "mem_clock_rate": 1, "mem_bus_width": 1}

    def load_binary(self, name, kernel, shared, device):
        # module None: nothing for CompiledKernel.__del__ to unload once the real driver is back
        return None, hash(name) & 0xFFFF, 32, 0, 1024    # module, function, n_regs, n_spills, max threads

    def unload_module(self, module):
        pass


class DryRunDriver(CompileOnlyDriver):
    def __init__(self, target: Target):
        super().__init__(gpu_target(target))
        self.utils = _Utils()
        self.launched: list[Launched] = []
        driver = self

        class Launcher:
            def __init__(self, src, metadata):
                self.name = metadata.name

            def __call__(self, gx, gy, gz, stream, function, packed, launch_metadata, enter, exit_, *args):
                if enter is not None:
                    enter(launch_metadata)
                driver.launched.append(Launched(self.name, (gx, gy, gz), args))
                if exit_ is not None:
                    exit_(launch_metadata)

        self.launcher_cls = Launcher


@contextlib.contextmanager
def dry_run(target: str = "cuda:90"):
    """Make a DryRunDriver Triton's active driver for the block; restore the previous one."""
    backend, arch = target.split(":")
    d = DryRunDriver(Target(backend, arch, 32 if backend == "cuda" else 64))
    previous = getattr(triton_driver, "_active", None)
    triton_driver.set_active(d)
    try:
        yield d
    finally:
        triton_driver._active = previous
