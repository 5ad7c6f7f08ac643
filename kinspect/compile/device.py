"""The target's device, as a file's own code sees it while kinspect loads it on a machine without one.

Kernel files ask about the GPU while they are imported: `torch.cuda.get_device_capability()` to
pick autotune configs, `get_device_properties("cuda").multi_processor_count` for a persistent
grid, `torch.cuda.is_available()` before defining their kernels at all (torch's `has_triton()`),
`torch.version.hip` to choose a code path, `triton.runtime.driver.active.get_active_torch_device()`
for the tensors of a test. On a machine with no GPU every one of those fails, or answers "no GPU",
and the file defines other kernels than it would on the target, or none.

`as_target(target)` answers them as the target's device would, for the block only: an H100-class
device for cuda:90, an A100 for cuda:80, a B200 for cuda:100, an MI300X for hip:gfx942, an MI355X
for hip:gfx950 (figures from the vendors' data sheets; an arch not in the table gets its
capability and plausible figures). Tensors a file makes "on the GPU" are made on the CPU instead
(the JIT only reads their dtype, shape, strides and alignment), and say they are on the GPU
(`x.is_cuda`, `x.device`), as they would on the target: a wrapper's device checks pass, and its CPU
fallback is not taken. A tensor the code itself makes or moves on the CPU says so. Everything is put back when the
block ends, exceptions included. On a machine with a real device nothing is changed: its own
answers are the true ones. The vendors' query tools (`nvidia-smi`, `rocm-smi`, pynvml) are
answered from the same facts (kinspect.compile.device_query).

Triton's side (the active driver's target and torch device) is kinspect.compile.driver's
compile-only driver; `as_target` is what torch answers, so it can be used with that driver
(loading a file for an offline compile) or with the interpreter (`capture --interpret`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import math
import os
import sys
from dataclasses import dataclass, field
from typing import NamedTuple

from kinspect.core.model import Target
from kinspect.core.patching import Patches

GiB = 1 << 30
MiB = 1 << 20
KiB = 1 << 10


@dataclass(frozen=True)
class DeviceFacts:
    """What torch.cuda.get_device_properties reports for a device (the fields files read)."""

    name: str
    major: int
    minor: int
    multi_processor_count: int
    total_memory: int
    L2_cache_size: int
    max_threads_per_multi_processor: int
    shared_memory_per_block_optin: int
    shared_memory_per_multiprocessor: int
    warp_size: int
    gcnArchName: str = ""
    regs_per_multiprocessor: int = 65536
    shared_memory_per_block: int = 48 * KiB
    clock_rate: int = 0                 # kHz
    memory_clock_rate: int = 0          # kHz
    memory_bus_width: int = 0           # bits
    is_integrated: int = 0
    is_multi_gpu_board: int = 0
    uuid: str = "00000000-0000-0000-0000-000000000000"
    pci_bus_id: int = 0
    pci_device_id: int = 0
    pci_domain_id: int = 0
    extra: dict = field(default_factory=dict)

    def __repr__(self) -> str:   # as torch prints its _CudaDeviceProperties
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // MiB}MB, multi_processor_count={self.multi_processor_count})")


# Per target: the data-sheet figures of the device a file most likely runs on there.
DEVICES: dict[str, DeviceFacts] = {
    "cuda:80": DeviceFacts("NVIDIA A100-SXM4-80GB", 8, 0, 108, 80 * GiB, 40 * MiB, 2048, 163 * KiB, 164 * KiB, 32,
                           clock_rate=1410000, memory_clock_rate=1593000, memory_bus_width=5120),
    "cuda:86": DeviceFacts("NVIDIA A10", 8, 6, 72, 24 * GiB, 6 * MiB, 1536, 99 * KiB, 100 * KiB, 32,
                           clock_rate=1695000, memory_clock_rate=6251000, memory_bus_width=384),
    "cuda:89": DeviceFacts("NVIDIA L40S", 8, 9, 142, 48 * GiB, 96 * MiB, 1536, 99 * KiB, 100 * KiB, 32,
                           clock_rate=2520000, memory_clock_rate=9001000, memory_bus_width=384),
    "cuda:90": DeviceFacts("NVIDIA H100 80GB HBM3", 9, 0, 132, 80 * GiB, 50 * MiB, 2048, 227 * KiB, 228 * KiB, 32,
                           clock_rate=1980000, memory_clock_rate=2619000, memory_bus_width=5120),
    "cuda:100": DeviceFacts("NVIDIA B200", 10, 0, 148, 180 * GiB, 126 * MiB, 2048, 227 * KiB, 228 * KiB, 32,
                            clock_rate=1965000, memory_clock_rate=3996000, memory_bus_width=8192),
    "hip:gfx942": DeviceFacts("AMD Instinct MI300X", 9, 4, 304, 192 * GiB, 4 * MiB, 2048, 64 * KiB, 64 * KiB, 64,
                              gcnArchName="gfx942:sramecc+:xnack-", regs_per_multiprocessor=131072,
                              shared_memory_per_block=64 * KiB, clock_rate=2100000, memory_clock_rate=1300000,
                              memory_bus_width=8192),
    "hip:gfx950": DeviceFacts("AMD Instinct MI355X", 9, 5, 256, 288 * GiB, 4 * MiB, 2048, 160 * KiB, 160 * KiB, 64,
                              gcnArchName="gfx950:sramecc+:xnack-", regs_per_multiprocessor=131072,
                              shared_memory_per_block=160 * KiB, clock_rate=2400000, memory_clock_rate=1900000,
                              memory_bus_width=8192),
}
# What torch.version says on builds for each vendor (torch 2.13's CUDA and ROCm wheels).
CUDA_VERSION = "12.8"
HIP_VERSION = "6.4.43482"


def facts(target: Target) -> DeviceFacts:
    """The device kinspect answers as for `target`; an arch not in DEVICES gets its own capability."""
    key = f"{target.backend}:{target.arch}"
    if key in DEVICES:
        return DEVICES[key]
    like = DEVICES["hip:gfx942" if target.backend == "hip" else "cuda:90"]
    if target.backend == "hip":
        digits = target.arch.removeprefix("gfx")
        major, minor = (int(digits[:-2] or 9), int(digits[-2:-1] or 0, 16)) if digits[:-2].isdigit() else (9, 0)
        name = f"AMD {target.arch} (kinspect's stand-in)"
        return DeviceFacts(**{**like.__dict__, "name": name, "major": major, "minor": minor,
                              "gcnArchName": target.arch})
    arch = int(target.arch) if target.arch.isdigit() else 90
    return DeviceFacts(**{**like.__dict__, "name": f"NVIDIA sm_{arch} (kinspect's stand-in)", "major": arch // 10,
                          "minor": arch % 10})


def real_device_present() -> bool:
    """Whether torch sees a GPU of its own here (then its answers are the true ones)."""
    import torch

    try:
        return bool(torch.cuda.is_available()) and not _ANSWERING
    except Exception:
        return False


_ANSWERING: list = []     # the targets answered for, innermost last (nested blocks keep the outer answers)


class _Stream:
    """torch.cuda.current_stream() of the stand-in device."""

    cuda_stream = 0
    device_index = 0

    def synchronize(self):
        pass

    def wait_stream(self, other):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        return event

    def query(self):
        return True

    def is_capturing(self):      # no CUDA graph is being captured (torch.optim's Adam asks before a step)
        return False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Nvtx:
    """NVTX's ranges and marks, as the profiler's annotations do on a device no profiler watches."""

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: 0


class _DeviceGuard:
    """torch.cuda.device(i) / torch.cuda.stream(s): nothing to switch on one stand-in device."""

    def __init__(self, *args, **kwargs):
        self.idx = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _answers(f: DeviceFacts, target: Target) -> dict:
    """torch.cuda's functions as the stand-in device answers them."""

    def is_available():
        return True

    def device_count():
        return 1

    def current_device():
        return 0

    def get_device_name(device=None):
        return f.name

    def get_device_capability(device=None):
        return (f.major, f.minor)

    def get_device_properties(device=None):
        return f

    def get_arch_list():
        return [f.gcnArchName.split(":")[0]] if target.backend == "hip" else [f"sm_{f.major}{f.minor}"]

    def is_bf16_supported(including_emulation=True):
        return f.major >= 8

    def mem_get_info(device=None):
        return (f.total_memory - GiB, f.total_memory)

    def zero():       # a function object per name: torch._dynamo's tables refuse one object under two names
        def answer(*args, **kwargs):
            return 0
        return answer

    def nothing():
        def answer(*args, **kwargs):
            return None
        return answer

    def is_current_stream_capturing():     # no CUDA graph is being captured (vLLM's, flashinfer's checks)
        return False

    def stream():
        def answer(*args, **kwargs):
            return _Stream()
        return answer

    return {"is_available": is_available, "device_count": device_count, "current_device": current_device,
            "get_device_name": get_device_name, "get_device_capability": get_device_capability,
            "get_device_properties": get_device_properties, "get_arch_list": get_arch_list,
            "is_bf16_supported": is_bf16_supported, "mem_get_info": mem_get_info, "is_initialized": is_available,
            "memory_allocated": zero(), "max_memory_allocated": zero(), "memory_reserved": zero(),
            "max_memory_reserved": zero(), "reset_peak_memory_stats": nothing(), "empty_cache": nothing(),
            "synchronize": nothing(), "set_device": nothing(), "init": nothing(), "_lazy_init": nothing(),
            "current_stream": stream(), "default_stream": stream(), "Stream": _Stream, "device": _DeviceGuard,
            "stream": _DeviceGuard, "manual_seed": nothing(), "manual_seed_all": nothing(), "seed": nothing(),
            "seed_all": nothing(), "is_current_stream_capturing": is_current_stream_capturing}


def _on_host_init(init):
    @functools.wraps(init)
    def on_host(self, device):
        init(self, "cpu" if _is_gpu(device) else device)
    return on_host


def _accelerator_answers() -> dict:
    """torch.accelerator's functions as the stand-in device answers them (torch sees ROCm as cuda too)."""
    import torch

    def is_available():
        return True

    def device_count():
        return 1

    def current_accelerator(check_available=False):
        return torch.device("cuda")

    def current_device_index():
        return 0

    def set_device_index(device):
        return None

    def synchronize(device=None):
        return None

    def current_stream(device=None):
        return _Stream()

    def set_stream(stream):
        return None

    return {"is_available": is_available, "device_count": device_count, "current_accelerator": current_accelerator,
            "current_device_index": current_device_index, "set_device_index": set_device_index,
            "synchronize": synchronize, "current_stream": current_stream, "set_stream": set_stream}


def questions() -> set:
    """The functions answering for the device right now (the loader lets definitions call them)."""
    return set(_ANSWERING[-1]) if _ANSWERING else set()


@contextlib.contextmanager
def as_target(target: Target):
    """Answer torch's GPU questions as `target`'s device while the block runs, and make tensors a
    file puts on the GPU on the CPU; restore everything afterwards. No change where torch sees a
    real GPU."""
    import torch

    if real_device_present():
        yield False
        return
    f = facts(target)
    answers = _answers(f, target)
    patches = Patches()

    def put(owner, name, value):      # an attribute, or an entry of a dict (sys.modules)
        if isinstance(owner, dict):
            patches.item(owner, name, value)
        else:
            patches.attr(owner, name, value)

    mode = _OnHost(gpu=target.backend in ("cuda", "hip"))
    caches = _torch_caches()
    try:
        for name, fn in answers.items():
            put(torch.cuda, name, fn)
        # the device's random generator, as the host's: `torch.cuda.get_rng_state()` and
        # `torch.Generator` state saved and restored around a test's case (cute-kernels' tests)
        put(torch.cuda, "default_generators", (torch.default_generator,))
        # what libraries take from torch._C at import (bitsandbytes, unsloth: the raw stream getter);
        # torch's own modules that bound device_count at import then see one device, so the device's
        # random generators are answered above (torch.manual_seed seeds every device's)
        for name, fn in (("_cuda_getCurrentRawStream", lambda device=0: 0), ("_cuda_getDevice", lambda: 0),
                         ("_cuda_getDeviceCount", lambda: 1)):
            put(torch._C, name, fn)
        nvtx = sys.modules.get("torch.cuda.nvtx") or importlib.import_module("torch.cuda.nvtx")
        if type(nvtx._nvtx).__name__ == "_NVTXStub":
            # a CPU build's: `with torch.cuda.nvtx.range("fwd"):` around a wrapper's launch (verl's)
            put(nvtx, "_nvtx", _Nvtx())
        accelerator = getattr(torch, "accelerator", None)
        if accelerator is not None:
            # torch's device-generic questions (xtuner picks its kernels by torch.accelerator.is_available())
            for name, fn in _accelerator_answers().items():
                if hasattr(accelerator, name):
                    put(accelerator, name, fn)
        # a default device of the GPU's (`torch.set_default_device("cuda")`, `with torch.device("cuda"):`)
        # is the CPU, as `device="cuda"` is (gn-kernels' tests set it)
        from torch.utils._device import DeviceContext

        put(DeviceContext, "__init__", _on_host_init(DeviceContext.__init__))
        put(torch.version, "cuda", CUDA_VERSION if target.backend == "cuda" else None)
        put(torch.version, "hip", HIP_VERSION if target.backend == "hip" else None)
        import torch.utils._triton as torch_triton

        def has_triton():
            return torch_triton.has_triton_package()

        put(torch_triton, "has_triton", has_triton)
        _answer_tools(put, target, f)
        for c in caches:
            c.cache_clear()
        _ANSWERING.append([*answers.values(), has_triton])
        mode.__enter__()
        yield True
    finally:
        if _ANSWERING:
            _ANSWERING.pop()
        with contextlib.suppress(Exception):
            mode.__exit__(None, None, None)
        patches.close()
        for c in caches:
            c.cache_clear()


# the device-query tools the current block's code ran (kinspect.compile.device_query), in order:
# (tool, True when answered as the target's device, False when made missing as another vendor's)
ANSWERED: list = []


def answered() -> list[tuple[str, bool]]:
    """The vendors' query tools the file's code ran: (tool, answered as the target's device)."""
    return list(dict.fromkeys(ANSWERED))


def _answer_tools(put, target: Target, f: DeviceFacts) -> None:
    """nvidia-smi / rocm-smi / pynvml as the target's device would answer (device_query)."""
    import shutil
    import subprocess

    from kinspect.compile.device_query import TOOLS, answer_command, nvml_module

    real_popen, real_which = subprocess.Popen, shutil.which

    class Popen(real_popen):
        def __init__(self, args, *rest, **kwargs):
            replaced = answer_command(args, target, f, ANSWERED)
            if replaced is not None:
                kwargs.pop("shell", None)
                kwargs.pop("executable", None)
                args = replaced
            super().__init__(args, *rest, **kwargs)

    def which(cmd, *args, **kwargs):
        found = real_which(cmd, *args, **kwargs)
        name = os.path.basename(os.fsdecode(cmd))
        if name in TOOLS:
            return f"/usr/bin/{name}" if TOOLS[name] == target.backend else None
        return found

    ANSWERED.clear()
    put(subprocess, "Popen", Popen)
    put(shutil, "which", which)
    put(sys.modules, "pynvml", nvml_module(target, f, ANSWERED))


def _torch_caches() -> list:
    """torch's cached answers to "is there a GPU for Triton?", cleared on the way in and out."""
    found = []
    with contextlib.suppress(Exception):
        import torch.utils._triton as torch_triton

        for name in ("has_triton", "has_triton_tma", "has_triton_tma_device", "has_triton_stable_tma_api"):
            fn = getattr(torch_triton, name, None)
            if hasattr(fn, "cache_clear"):
                found.append(fn)
    return found


def _is_gpu(device) -> bool:
    text = str(device) if device is not None else ""
    return text == "cuda" or text.startswith("cuda:") or getattr(device, "type", None) == "cuda"


def _is_host(device) -> bool:
    """A device argument that names the CPU itself (`"cpu"`, `torch.device("cpu")`), not a tensor's."""
    return isinstance(device, str) and device == "cpu" or type(device).__name__ == "device" and \
        getattr(device, "type", None) == "cpu"


@functools.lru_cache(maxsize=1)
def _mode_base():
    from torch.overrides import TorchFunctionMode

    return TorchFunctionMode


# Matrix products larger than this (multiply-adds) are not computed on the CPU stand-ins: their
# output is zeros of its shape and type. A test's reference attention over 32 heads of 4096 tokens
# takes minutes there, in one call no signal stops; xtuner's reference grouped GEMM is 128 products of
# 1.3e10 each, before the call that launches the kernel. What the code reads from those outputs (their
# values) is not the project's, and the launch line says so (FileLaunch.uncomputed).
MAX_CPU_MACS = 1e9
# Other calls whose result has more elements than this are not computed either, nor are writes into
# such a tensor: a test's reference attention of 8x16 heads of 4096 tokens makes 2**31 scores, which
# its mask, float(), softmax and half() copy on (gigabytes each: the process was killed for memory).
# Their results are made (torch.empty: fresh pages, read as zeros) and not filled.
MAX_CPU_ELEMENTS = 2 ** 28


class Uncomputed(NamedTuple):
    """A torch call the CPU stand-ins did not compute."""

    what: str       # "product": a matrix product; "result": another call's result; "write": an in-place write
    size: float     # its multiply-adds (a product), else the elements of its result or of what it writes


# the calls not computed, in order (file_launches counts those before a launch)
UNCOMPUTED: list[Uncomputed] = []


def _zeros_like_result(func, args, kwargs):
    """What `func` would return, as zeros (left unfilled where it has more than MAX_CPU_ELEMENTS): its
    shape and type from the same call on meta tensors, made as _made makes them."""
    out, _ = _on_meta(func, args, kwargs)
    return _made(out, args, kwargs, zeros=not any(_huge(t) for t in _tensors(out)))


def _on_meta(func, args, kwargs):
    """`func` called on meta tensors in place of the arguments' (detached: only their shapes and types
    count): (its result, the ids of the meta tensors it was given)."""
    import torch
    from torch.utils._pytree import tree_map

    def meta(a):
        return a.detach().to("meta") if isinstance(a, torch.Tensor) else a

    metas = (tree_map(meta, args), tree_map(meta, kwargs))
    return func(*metas[0], **metas[1]), {id(t) for t in _tensors(metas)}


def _tensors(tree) -> list:
    import torch
    from torch.utils._pytree import tree_leaves

    return [t for t in tree_leaves(tree) if isinstance(t, torch.Tensor)]


def _huge(t) -> bool:
    return t.numel() > MAX_CPU_ELEMENTS


# in-place calls that are not named `name_`
IN_PLACE = {"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
            "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"}
# calls named `name_` that change what a tensor is, not its values: cheap, always made
METADATA_IN_PLACE = {"requires_grad_", "share_memory_", "detach_", "resize_", "resize_as_", "set_", "as_strided_",
                     "t_", "transpose_", "squeeze_", "unsqueeze_", "swapdims_", "swapaxes_", "retain_grad"}


def _any_huge(args, kwargs) -> bool:
    """Whether a tensor among the call's arguments (or in a list or tuple of them) has more than
    MAX_CPU_ELEMENTS elements: read on every call, so without a pytree walk."""
    import torch

    for a in (*args, *kwargs.values()):
        items = a if isinstance(a, (list, tuple)) else (a,)
        for t in items:
            if isinstance(t, torch.Tensor) and t.numel() > MAX_CPU_ELEMENTS:
                return True
    return False


COMPUTED = object()      # _too_large's answer for a call to compute


def _too_large(func, args, kwargs):
    """What a call on a tensor of more than MAX_CPU_ELEMENTS elements gives instead of its result, where
    it is not computed: its result made and not filled (an in-place write, not made: its target, or
    None for `x[i] = v`); COMPUTED where it is computed (a view of it, a result of fewer elements)."""
    import torch

    if not _any_huge(args, kwargs):
        return COMPUTED
    name = getattr(func, "__name__", "")
    if name in METADATA_IN_PLACE:
        return COMPUTED
    if name in IN_PLACE or (name.endswith("_") and not name.startswith("_")):
        target = args[0] if args else None
        if isinstance(target, torch.Tensor) and _huge(target):
            UNCOMPUTED.append(Uncomputed("write", float(target.numel())))
            return None if name == "__setitem__" else target
        return COMPUTED

    try:
        out, given = _on_meta(func, args, kwargs)
    except Exception:           # no meta kernel, a size that depends on the values: computed
        return COMPUTED
    made = _tensors(out)
    # a view, or the input itself (`x.contiguous()` of a contiguous x), costs nothing: made as it is
    if not any(_huge(t) for t in made) or any(t._is_view() or id(t) in given for t in made):
        return COMPUTED
    return _unfilled(out, args, kwargs)


def _made(out, args, kwargs, zeros: bool):
    """The tensors of `out` (meta tensors) made on the CPU, as zeros or (`zeros` False) not filled; where
    an input requires grad, by a Function whose backward gives those inputs zero gradients, so the code's
    in-place ops on them and a test's `.backward()` of a reference over them run, to no effect, and the
    inputs' `.grad` is there to read."""
    import torch
    from torch.utils._pytree import tree_map

    tied = [a for a in _tensors((args, kwargs)) if a.requires_grad] if torch.is_grad_enabled() else []

    def made(t):
        if not isinstance(t, torch.Tensor):
            return t
        if tied and (t.dtype.is_floating_point or t.dtype.is_complex):
            return _made_function().apply(t, zeros, *tied)
        return (torch.zeros if zeros else torch.empty)(t.shape, dtype=t.dtype)

    return tree_map(made, out)


def _unfilled(out, args, kwargs):
    """`out`'s tensors made and not filled, a result too large for the CPU noted (UNCOMPUTED)."""
    UNCOMPUTED.append(Uncomputed("result", float(max((t.numel() for t in _tensors(out)), default=0))))
    return _made(out, args, kwargs, zeros=False)


@functools.lru_cache(maxsize=None)
def _made_function():
    import torch

    class Made(torch.autograd.Function):
        """A result made, as zeros or not filled, tied to the inputs that require grad: zero gradients
        for them (of stride 0 where they are too large themselves: no gigabytes of zeros)."""

        @staticmethod
        def forward(ctx, like, zeros, *inputs):
            ctx.inputs = [(i.shape, i.dtype) for i in inputs]
            return (torch.zeros if zeros else torch.empty)(like.shape, dtype=like.dtype)

        @staticmethod
        def backward(ctx, grad):
            def zero(shape, dtype):
                return torch.zeros((), dtype=dtype).expand(shape) if math.prod(shape) > MAX_CPU_ELEMENTS else \
                    torch.zeros(shape, dtype=dtype)
            return (None, None, *(zero(shape, dtype) for shape, dtype in ctx.inputs))

    return Made


def _macs(func, args) -> float:
    """Multiply-adds of a matrix product call (torch.matmul, @, bmm, mm, baddbmm, linear), else 0."""
    name = getattr(func, "__name__", "")
    if name not in ("matmul", "__matmul__", "__rmatmul__", "bmm", "mm", "linear", "baddbmm", "addmm"):
        return 0
    shapes = [tuple(a.shape) for a in args if hasattr(a, "shape") and hasattr(a, "dtype")]
    if len(shapes) < 2 or not shapes[0] or not shapes[-1]:
        return 0
    a, b = shapes[-2], shapes[-1]
    if name == "linear":
        a, b = shapes[0], shapes[1][::-1]
    inner = a[-1]
    return float(math.prod(a[:-1])) * inner * (b[-1] if len(b) > 1 else 1)


class _OnHost:
    """A TorchFunctionMode, made on first use, that puts tensors meant for the GPU on the CPU:
    `device="cuda"` in factories, `.cuda()`, `.to("cuda")`; that answers a tensor's device as the
    GPU's (`x.is_cuda`, `x.device.type == "cuda"`, `x.get_device()`), as the program would see it
    on its device: a wrapper's `assert x.is_cuda` holds and its `if x.device.type == "cpu": return
    reference(x)` does not take the CPU's path; a tensor the code itself moves or makes on the CPU
    (`.cpu()`, `device="cpu"`) stays a CPU tensor; and gives a matrix product too large for the CPU
    as zeros of its shape and type, not computed (MAX_CPU_MACS)."""

    def __init__(self, gpu: bool = True):
        self._mode = None
        self.gpu = gpu

    def __enter__(self):
        import weakref

        import torch

        base = _mode_base()
        base_class = torch._C.TensorBase
        getters = {id(vars(base_class)[n]): n for n in ("device", "is_cuda", "is_cpu")}
        gpu = torch.device("cuda", 0)
        # tensors the code put on the CPU itself, by id (a tensor's == is elementwise): answered as
        # what they are
        host = weakref.WeakValueDictionary()
        answer_gpu = self.gpu

        def as_host(out):
            if isinstance(out, torch.Tensor):
                host[id(out)] = out
            return out

        def on_gpu(t) -> bool:
            return isinstance(t, torch.Tensor) and t.device.type == "cpu" and host.get(id(t)) is not t

        class Mode(base):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = dict(kwargs or {})
                if answer_gpu:
                    getter = getters.get(id(getattr(func, "__self__", None)))
                    if getter is not None and args and on_gpu(args[0]):
                        return {"device": gpu, "is_cuda": True, "is_cpu": False}[getter]
                    if func is torch.Tensor.get_device and args and on_gpu(args[0]):
                        return 0
                if func is torch.Tensor.cuda:
                    return args[0]
                if func is torch.Tensor.cpu:
                    return as_host(func(*args, **kwargs))
                if "device" in kwargs and _is_host(kwargs["device"]):
                    return as_host(func(*args, **kwargs))
                if "device" in kwargs and _is_gpu(kwargs["device"]):
                    kwargs["device"] = "cpu"
                macs = _macs(func, args)
                if macs > MAX_CPU_MACS and "out" not in kwargs:
                    UNCOMPUTED.append(Uncomputed("product", macs))
                    return _zeros_like_result(func, args, kwargs)
                if "out" not in kwargs and (answer := _too_large(func, args, kwargs)) is not COMPUTED:
                    return answer
                if (bodies := _bodies_under(func, Mode)) is not None:
                    with bodies:
                        return func(*args, **kwargs)
                if func is torch.Tensor.to or func is torch.Tensor.pin_memory:
                    if func is torch.Tensor.pin_memory:
                        return args[0]
                    if any(_is_host(a) for a in args[1:]):
                        return as_host(func(*args, **kwargs))
                    args = tuple("cpu" if _is_gpu(a) else a for a in args)
                return func(*args, **kwargs)

        self._mode = Mode()
        self._mode.__enter__()
        self._backward = _backward_under(Mode)
        return self

    def __exit__(self, *exc):
        if self._mode is not None:
            self._backward.close()
            self._mode.__exit__(*exc)
            self._mode = None
        return False


def _bodies_under(func, mode_class) -> Patches | None:
    """Where `func` is a torch.library.custom_op (a project's `torch.ops.proj.op`), its Python bodies
    run under a `mode_class` mode until the Patches are closed; else None. The call of the op is this
    mode's to answer, so its body would run with the mode off (xtuner's and axolotl's custom ops make
    their outputs with `device="cuda"`)."""
    name = getattr(func, "_qualified_op_name", None) or (func.name() if hasattr(func, "_schema") else None)
    if not isinstance(name, str) or "::" not in name:
        return None
    from torch._library.custom_ops import OPDEFS

    opdef = OPDEFS.get(name)
    if opdef is None or name.partition("::")[0] in ("aten", "prims"):
        return None
    patches = Patches()
    for device_type, fn in list(opdef._backend_fns.items()):
        patches.item(opdef._backend_fns, device_type, _under_mode(fn, mode_class))
    return patches


def _under_mode(fn, mode_class):
    @functools.wraps(fn)
    def body(*args, **kwargs):
        with mode_class():
            return fn(*args, **kwargs)
    return body


def _backward_under(mode_class) -> Patches:
    """An autograd Function's backward runs under a `mode_class` mode too: the autograd engine runs it
    with no torch function mode (a wrapper's `assert grad.is_cuda` in backward failed where the same
    check passed in forward)."""
    import torch
    from torch.autograd.function import BackwardCFunction

    original = BackwardCFunction.apply

    def apply(node, *args):
        if any(isinstance(m, mode_class) for m in torch.overrides._get_current_function_mode_stack()):
            return original(node, *args)
        with mode_class():
            return original(node, *args)

    patches = Patches()
    patches.attr(BackwardCFunction, "apply", apply)
    return patches
