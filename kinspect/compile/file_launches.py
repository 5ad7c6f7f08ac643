"""The launches a user's file makes itself: recorded, never run.

Tutorial-style files launch their kernels at module level or under `if __name__ == "__main__":`,
with the arguments the kernel is written for. While kinspect loads such a file (or runs its
`__main__` block, or a function named with `dump --from`), every launch (`kernel[grid](...)`,
`kernel.run(...)`, through @triton.autotune and @triton.heuristics wrappers or not) is recorded
at the outermost wrapper the file called and returns None without running anything: kinspect
compiles offline, and even on a device it never runs the user's kernels while loading a file.

A record keeps what the compile needs and no more: per tensor its dtype, shape, strides and
whether it starts 16-byte aligned (a `StandIn`, made again as an empty tensor when used, so a
file's large test tensors are not kept), scalars and constexprs as they were, the launch options
and the grid. The autotune config and heuristics are applied to it later as for any example
(kinspect.compile.autotune).
"""

from __future__ import annotations

import contextlib
import inspect
import os
import traceback
from dataclasses import dataclass, field

from kinspect.compile.device import UNCOMPUTED
from kinspect.core.patching import Patches

# keyword arguments of a launch that are compile or launch options, not the kernel's parameters
OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid",
                "launch_pdl", "debug", "sanitize_overflow", "instrumentation_mode", "matrix_instr_nonkdim",
                "waves_per_eu", "kpack", "ir_override")
MAX_RECORDED = 256       # a file that launches more than this while loading is stopped there
# Triton's settings from the environment that change what a kernel compiles to (triton.knobs), read at
# compile time: a project's code or test that sets one (apex's `setUp` sets
# TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1, without which its kernel does not compile) has its launch
# compiled under it
COMPILE_KNOBS = ("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", "TRITON_F32_DEFAULT", "TRITON_DEFAULT_FP_FUSION",
                 "TRITON_FORCE_DISABLE_FP_FUSION", "TRITON_DISABLE_LINE_INFO", "TRITON_HIP_USE_BLOCK_PINGPONG",
                 "TRITON_HIP_USE_IN_THREAD_TRANSPOSE", "TRITON_HIP_USE_ASYNC_COPY", "TRITON_HIP_USE_COEXEC_SCHEDULER",
                 "TRITON_HIP_USE_EXPERT_SCHEDULING")


@dataclass(frozen=True)
class StandIn:
    """A tensor argument as the JIT sees it: dtype, shape, strides, 16-byte alignment."""

    dtype: object            # a torch dtype
    shape: tuple
    strides: tuple
    aligned: bool = True

    def make(self):
        import torch

        span = 1 + sum((n - 1) * s for n, s in zip(self.shape, self.strides)) if all(self.shape) else 1
        itemsize = torch.empty((), dtype=self.dtype).element_size()
        offset = 0 if self.aligned or itemsize >= 16 else 1
        base = torch.empty(max(span, 1) + offset, dtype=self.dtype)    # untouched pages: no memory used
        return base.as_strided(self.shape, self.strides, offset)

    def text(self) -> str:
        from kinspect.compile.args import spec_of

        kind = spec_of(self.make()).split(":")[0]
        return f"{kind}:{'x'.join(map(str, self.shape))}" + ("" if self.aligned else " (unaligned)")


@dataclass(frozen=True)
class DescriptorStandIn:
    """A host TensorDescriptor argument: its tensor's stand-in and its block shape."""

    base: StandIn
    shape: tuple
    strides: tuple
    block: tuple

    def make(self):
        from triton.tools.tensor_descriptor import TensorDescriptor

        tensor = self.base.make()
        return TensorDescriptor(tensor, list(self.shape), list(self.strides), list(self.block))

    def text(self) -> str:
        from kinspect.compile.args import spec_of

        return spec_of(self.make())


@dataclass(frozen=True)
class FileLaunch:
    """One launch the file's code made."""

    kernel: str                  # the kernel's function name
    key: tuple                   # identifies the kernel's Python function (kernel_key)
    where: str                   # "module-level code", "its __main__ block", "--from main()"
    lines: tuple = ()            # the file's lines on the stack, outermost first
    args: dict = field(default_factory=dict)        # runtime arguments by name (StandIns for tensors)
    constexprs: dict = field(default_factory=dict)  # constexprs the launch passed
    options: dict = field(default_factory=dict)     # num_warps, num_stages, ... the launch passed
    grid: object = (1,)
    env: dict = field(default_factory=dict)         # COMPILE_KNOBS the code had set differently at the launch
    uncomputed: tuple = ()   # the torch calls the code made before it that the stand-ins did not compute
    #                          (device.Uncomputed: matrix products over MAX_CPU_MACS, results over MAX_CPU_ELEMENTS)

    def values(self) -> tuple[dict, dict]:
        """(runtime arguments, constexprs) with the tensors made again."""
        return ({k: _made(v) for k, v in self.args.items()}, {k: _made(v) for k, v in self.constexprs.items()})

    def at(self) -> str:
        if not self.lines:
            return ""
        return f"line {self.lines[-1]}" + (f" via line {self.lines[0]}" if self.lines[0] != self.lines[-1] else "")


def _made(v):
    return v.make() if isinstance(v, (StandIn, DescriptorStandIn)) else v


def kernel_key(obj) -> tuple:
    """What identifies a kernel's Python function across two loads of its file."""
    fn = getattr(obj, "fn", obj)
    while hasattr(fn, "fn") and not hasattr(fn, "__code__"):
        fn = fn.fn
    code = getattr(fn, "__code__", None)
    if code is None:
        return (getattr(fn, "__name__", ""),)
    return (os.path.realpath(code.co_filename), code.co_firstlineno, fn.__name__)


def compile_knobs() -> dict:
    """The COMPILE_KNOBS the environment sets now."""
    return {k: os.environ[k] for k in COMPILE_KNOBS if k in os.environ}


@contextlib.contextmanager
def knobs_set(env: dict):
    """The block runs with `env` (COMPILE_KNOBS) set in the environment; what was there is put back."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class Enough(BaseException):
    """Raised from a launch once the launch asked for is recorded: the rest of the code need not run."""


def stand_in(value):
    """A launch argument as the record keeps it."""
    import torch

    if isinstance(value, torch.Tensor):
        return StandIn(value.dtype, tuple(value.shape), tuple(value.stride()), value.data_ptr() % 16 == 0)
    base = getattr(value, "base", None)
    if isinstance(base, torch.Tensor) and hasattr(value, "block_shape"):
        return DescriptorStandIn(stand_in(base), tuple(value.shape), tuple(value.strides), tuple(value.block_shape))
    if type(value).__name__ == "constexpr" and hasattr(value, "value"):
        return value.value
    return value


class FileLaunchRecorder:
    """Records every launch while active (see `active`); `wanted(key)` and `index` name the launch
    after which the code is stopped (Enough)."""

    def __init__(self, file: str, root: str, where: str = "module-level code"):
        self.file = os.path.realpath(file)
        self.root = os.path.realpath(root) + os.sep
        self.where = where
        self.launches: list[FileLaunch] = []
        self.wanted = None
        self.index = 0
        self.stopped = False
        self.knobs = compile_knobs()
        self.products = len(UNCOMPUTED)

    def record(self, obj, args: tuple, kwargs: dict) -> None:
        from kinspect.compile.autotune import chain
        from kinspect.core.errors import KinspectError

        try:
            jit = chain(obj, "kernel").jit
        except KinspectError:
            jit = obj
        grid = kwargs.pop("grid", (1,))
        kwargs.pop("warmup", None)
        fn = getattr(jit, "fn", jit)
        try:
            params = inspect.signature(fn).parameters
            bound = inspect.signature(fn).bind_partial(*args, **{k: v for k, v in kwargs.items() if k in params})
        except (TypeError, ValueError):
            return       # a launch Triton itself would refuse: nothing to learn from it
        from kinspect.compile.infer import params_of

        constexprs = {p.name for p in params_of(jit) if p.is_constexpr} if hasattr(jit, "fn") else set()
        values = {k: stand_in(v) for k, v in bound.arguments.items()}
        launch = FileLaunch(
            kernel=getattr(fn, "__name__", "kernel"), key=kernel_key(jit), where=self.where, lines=self._lines(),
            args={k: v for k, v in values.items() if k not in constexprs},
            constexprs={k: v for k, v in values.items() if k in constexprs},
            options={k: v for k, v in kwargs.items() if k not in params and k in OPTION_NAMES},
            grid=grid if callable(grid) else tuple(stand_in(g) for g in (grid if isinstance(grid, (tuple, list))
                                                                          else (grid,))),
            env={k: v for k, v in compile_knobs().items() if self.knobs.get(k) != v},
            uncomputed=tuple(UNCOMPUTED[self.products:]))
        self.launches.append(launch)
        if self.wanted is not None and self.wanted == launch.key and \
                sum(1 for x in self.launches if x.key == launch.key) > self.index:
            self.stopped = True
            raise Enough()
        if len(self.launches) >= MAX_RECORDED:
            self.stopped = True
            raise Enough()

    def _lines(self) -> tuple:
        """The file's lines on the stack, outermost first (or, for a launch from another module of
        its project, that module's)."""
        stack = [(os.path.realpath(f.filename), f.lineno) for f in traceback.extract_stack() if f.filename]
        own = tuple(n for f, n in stack if f == self.file)
        return own or tuple(n for f, n in stack if f.startswith(self.root) and "site-packages" not in f)

    def of(self, key: tuple) -> list[FileLaunch]:
        return [x for x in self.launches if x.key == key]


@contextlib.contextmanager
def active(recorder: FileLaunchRecorder):
    """Every kernel launch in the block is recorded by `recorder` and runs nothing (returns None)."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    classes = [JITFunction, Autotuner, Heuristics]
    with contextlib.suppress(ImportError):
        from triton.runtime.interpreter import InterpretedFunction

        classes.append(InterpretedFunction)

    chosen = []      # autotuners given a best_config, as running them would have

    def run(self, *args, **kwargs):
        recorder.record(self, args, dict(kwargs))
        # code reads `kernel.best_config` after a launch (FlagGems' libentry, grids sized by the
        # chosen BLOCK): the first config, the one kinspect compiles where nothing picks another
        if isinstance(self, Autotuner) and getattr(self, "best_config", None) is None and self.configs:
            self.best_config = self.configs[0]
            chosen.append(self)
        return None

    with Patches() as patches:
        for cls in classes:
            if "run" in cls.__dict__:
                patches.attr(cls, "run", run)
        try:
            yield recorder
        finally:
            for tuner in chosen:
                vars(tuner).pop("best_config", None)
