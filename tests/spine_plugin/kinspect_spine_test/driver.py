"""The driver half: active with KINSPECT_TEST_SPINE=1; its launcher calls Triton's launch hooks and
does the fixture kernel's work (a softmax over each row) with torch on the CPU."""

import os

import torch
from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase


class _Utils:
    def load_binary(self, name, kernel, shared, device):
        return None, 0, 0, 0, 1 << 30      # module, function, registers, spills, max threads

    def get_device_properties(self, device):
        return {"max_shared_mem": 1 << 30, "multiprocessor_count": os.cpu_count() or 1}

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
        _softmax_rows([a for a in args])
        if exit_hook is not None:
            exit_hook(launch_metadata)


class SpineTestDriver(DriverBase):
    def __init__(self):
        self.utils = _Utils()
        self.launcher_cls = SpineTestLauncher
        super().__init__()

    @classmethod
    def is_active(cls):
        return os.environ.get("KINSPECT_TEST_SPINE") == "1"

    def map_python_to_cpp_type(self, ty):
        return ty

    def get_current_target(self):
        return GPUTarget("cpu", "riscv64", 0)

    def get_active_torch_device(self):
        return torch.device("cpu")

    def get_benchmarker(self):
        from triton.testing import do_bench

        return do_bench

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        pass

    def get_current_stream(self, device=None):
        return 0

    def get_device_interface(self):
        return torch.cpu
