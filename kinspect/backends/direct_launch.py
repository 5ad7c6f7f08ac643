"""Launching a compiled kernel without the JIT's per-call work.

`kernel[grid](*args)` runs Triton's JIT on every call: it binds the arguments, specializes each
one (dtype, 16-byte alignment, divisibility of ints), builds a cache key, finds the compiled
kernel, evaluates the grid, builds the launch metadata for the launch hooks and only then calls the
compiled launcher. For a small kernel that Python work costs more than the kernel runs on the GPU.

A launcher that knows its problem (shapes, strides, dtypes: what decides the specialization) can
do that work once: `Direct` asks the JIT for the compiled kernel once (`warmup` with the real
arguments, so the specialization is the JIT's own) and then calls its compiled launcher
(`CompiledKernel.run`, the same call `JITFunction.run` ends with, in Triton 3.6 and 3.9) with the
current stream. What stays per call: the current device and stream (as the JIT reads them) and
the launcher itself.

The direct path is only taken where it launches exactly what the JIT would:
- a JITFunction on a GPU driver (under TRITON_INTERPRET the kernel is the interpreter's stand-in,
  and other backends' launchers may take other arguments);
- no launch hook installed: the hooks (kinspect capture, proton, tritonparse) read the launch
  metadata the JIT builds, so with one installed the wrappers go through the JIT and every tool
  sees every launch as usual;
- the caller keys its prepared launches by everything the specialization depends on, and passes
  pointers as ints only when they are 16-byte aligned (the alignment the compiled kernel assumed).

`KINSPECT_DIRECT_LAUNCH=0` in the environment (or `launcher.DIRECT = False`) sends every launch
through the JIT: for comparisons (benchmarks/launch_overhead.py), or to rule the direct path out.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any

from triton import knobs
from triton.runtime import driver

ALIGNMENT = 16     # bytes: the JIT specializes a pointer on being a multiple of this
_runtime = knobs.runtime
DIRECT = os.environ.get("KINSPECT_DIRECT_LAUNCH", "1") != "0"


def usable(fn) -> bool:
    """Whether `fn` (a @triton.jit function) can be launched directly under the active driver."""
    if not hasattr(fn, "device_caches"):   # the interpreter's InterpretedFunction has none
        return False
    from kinspect import backends

    try:
        name = driver.active.get_current_target().backend
    except Exception:  # no driver at all (a CPU-only machine): the JIT will say what is wrong
        return False
    return backends.for_target(name).gpu   # CPU backends' launchers take other arguments


def _listening(chain) -> bool:
    # a HookChain (Triton 3.5+) listens when it holds calls; a bare callable always does
    return chain is not None and bool(getattr(chain, "calls", True))


def hooks_idle() -> bool:
    """No launch hook is installed (Triton's HookChains are empty)."""
    return not (_listening(_runtime.launch_enter_hook) or _listening(_runtime.launch_exit_hook))


def device_and_stream() -> tuple[int, int]:
    """The current device and its current stream, read as JITFunction.run reads them."""
    d = driver.active
    device = d.get_current_device()
    return device, d.get_current_stream(device)


def active_torch_device():
    return driver.active.get_active_torch_device()


def aligned(*pointers: int) -> bool:
    """All these addresses are multiples of ALIGNMENT (what the JIT specialized on)."""
    acc = 0
    for p in pointers:
        acc |= p
    return not acc % ALIGNMENT


class Direct:
    """One compiled kernel for one specialization and grid, launched through its compiled launcher.

    `args` are every parameter of the kernel in order, constexprs included, as the JIT binds them:
    they decide the specialization, so launch it later only with arguments that specialize alike.
    """

    __slots__ = ("kernel", "device", "grid", "_run", "_function", "_packed", "_g")

    def __init__(self, fn, args: tuple, grid: tuple, options: dict[str, Any] | None = None):
        device, _ = device_and_stream()
        kernel = fn.warmup(*args, grid=grid, **(options or {}))   # the JIT's own binding and specialization
        if hasattr(kernel, "result"):                             # an async compile's future
            kernel = kernel.result()
        self.kernel = kernel
        self.device = device
        self.grid = tuple(grid)
        self._g = (self.grid + (1, 1))[:3]
        self._run = kernel.run                  # loads the binary on this device, once
        self._function = kernel.function
        self._packed = kernel.packed_metadata

    def stream(self) -> int | None:
        """The stream to launch on now, or None where the direct path would not launch what the JIT
        would (a launch hook is listening, or the current device is not the one it was loaded on)
        or is switched off (DIRECT)."""
        if not DIRECT:
            return None
        rt = _runtime
        enter, exit_ = rt.launch_enter_hook, rt.launch_exit_hook
        if (enter is not None and getattr(enter, "calls", True)) or \
                (exit_ is not None and getattr(exit_, "calls", True)):
            return None
        d = driver.active
        device = d.get_current_device()
        if device != self.device:
            return None
        return d.get_current_stream(device)

    def __call__(self, stream: int, *args) -> None:
        """Launch on `stream` (0 is the default stream); `args` as in the constructor, pointers as
        ints or tensors."""
        g = self._g
        self._run(g[0], g[1], g[2], stream, self._function, self._packed, None, None, None, *args)


class KernelLauncher:
    """Launches one kernel whose first arguments are its tensors: the first call for a problem key
    prepares a Direct launch; later calls with that key launch it, or go through the JIT where the
    direct path cannot be taken (see the module's docstring).

    The caller's key must hold everything the specialization depends on besides 16-byte alignment,
    which is checked on every call: the tensors' dtypes and devices, every scalar's value, the
    grid and the options. Shipped kernels use it as

        _add = KernelLauncher(add_kernel)
        _add((n, x.dtype, y.dtype, x.device, BLOCK), grid, (x, y, out), (n, BLOCK))
    """

    def __init__(self, fn, size: int = 256):
        self.fn = fn
        self.plans = Plans(size)

    def __call__(self, key, grid: tuple, tensors: tuple, rest: tuple, options: dict | None = None) -> None:
        direct = self.plans.get(key)
        if direct is None:
            direct = self._prepare(grid, tensors, rest, options)
            if direct is not None:
                self.plans.put(key, direct)
        if direct:
            pointers = [t.data_ptr() for t in tensors]
            if aligned(*pointers):
                stream = direct.stream()
                if stream is not None:
                    direct(stream, *pointers, *rest)
                    return
        self.fn[grid](*tensors, *rest, **(options or {}))

    def _prepare(self, grid, tensors, rest, options) -> Direct | bool | None:
        """A Direct launch; False where this problem always goes through the JIT; None where this
        call does (unaligned tensors: an aligned call with the same key prepares it)."""
        if not usable(self.fn):
            return False
        device = active_torch_device()
        if any(t.device != device for t in tensors):
            return False
        if not aligned(*(t.data_ptr() for t in tensors)):
            return None
        return Direct(self.fn, (*tensors, *rest), grid, options)


class Plans:
    """A bounded map from a problem's key to what a launcher prepared for it (least recently
    made first out): a program that sees many shapes keeps the recent ones, not all of them."""

    def __init__(self, size: int = 256):
        self.size = size
        self._d: OrderedDict = OrderedDict()

    def get(self, key):
        return self._d.get(key)

    def put(self, key, value):
        self._d[key] = value
        if len(self._d) > self.size:
            self._d.popitem(last=False)
        return value

    def clear(self) -> None:
        self._d.clear()

    def __len__(self) -> int:
        return len(self._d)
