"""A kernel ready to launch on the device: its JITFunction, arguments on the device, and what the
benchmark needs to judge it (reference, inputs, output, bytes and flops)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from kinspect.core.errors import UsageError


@dataclass(frozen=True)
class Launch:
    label: str                         # the kernel as the user named it
    fn: Any                            # the JITFunction
    args: dict[str, Any]
    constexprs: dict[str, Any]
    grid: tuple
    options: dict[str, Any] = field(default_factory=dict)
    dtype: str = "float32"
    size: str = ""
    reference: Callable | None = None
    inputs: tuple[str, ...] = ()
    output: str = ""
    bytes_moved: int | None = None
    flops: int | None = None
    notes: tuple[str, ...] = ()
    then: tuple[Callable[[], Any], ...] = ()   # further passes of a multi-pass kernel, run after `fn`
    call: Callable[[], Any] | None = None      # the kernel's shipped function on the same inputs, if any
    call_text: str = ""                        # how that call reads: "softmax(x)"
    estimate: str = ""                 # how bytes/flops were estimated when no formula declares them

    def __call__(self, fn=None):
        kernel = (fn or self.fn)[self.grid](**self.args, **self.constexprs, **self.options)
        for step in self.then:
            step()
        return kernel

    def grid_size(self) -> tuple:
        """The launch's grid as numbers: a kernel file's example may give Triton's grid function of
        the launch's arguments (an autotuned kernel's grid follows its config's block sizes)."""
        grid = self.grid
        return tuple(grid({**self.args, **self.constexprs, **self.options}) if callable(grid) else grid)

    def rates(self, ms: float) -> tuple[float | None, float | None]:
        """(GB/s, TFLOP/s) at `ms` per run, from the declared bytes and flops (None where undeclared)."""
        seconds = ms * 1e-3
        gbps = self.bytes_moved / seconds / 1e9 if self.bytes_moved and seconds else None
        tflops = self.flops / seconds / 1e12 if self.flops and seconds else None
        return gbps, tflops

    def input_values(self) -> list:
        return [self.args[n] for n in self.inputs]


def prepare(kernel: str, *, device, constexprs: dict, args: dict, size: str | None, num_warps: int | None,
            num_stages: int | None, bytes_moved: int | None = None, flops: int | None = None) -> Launch:
    """A shipped kernel's example (at `size`) or a user kernel's declared/--arg arguments, on `device`
    (a captured variant's launch: kinspect.bench.captured.prepare)."""
    import torch

    from kinspect import kernels
    from kinspect.compile import jit_function
    from kinspect.compile.user import is_user_kernel, load

    options = {k: v for k, v in (("num_warps", num_warps), ("num_stages", num_stages)) if v is not None}
    if is_user_kernel(kernel):
        uk = load(kernel, args, constexprs)
        on_device = {k: v.to(device) if torch.is_tensor(v) else v for k, v in uk.args.items()}
        b = uk.bench
        inputs = tuple(b.get("inputs", ()))
        missing = [n for n in (*inputs, b.get("output", "")) if n and n not in on_device]
        if missing:
            raise UsageError(f"kinspect_examples['{uk.name}'] names {', '.join(missing)} in inputs/output; "
                             f"its args: {', '.join(on_device)}")
        return Launch(label=uk.name, fn=jit_function(uk.fn), args=on_device, constexprs=uk.constexprs, grid=uk.grid,
                      options={**uk.options, **options}, size=size or "", reference=b.get("reference"),
                      inputs=inputs, output=b.get("output", ""),
                      bytes_moved=bytes_moved if bytes_moved is not None else _formula(b.get("bytes"), on_device),
                      flops=flops if flops is not None else _formula(b.get("flops"), on_device),
                      dtype=_dtype_of(on_device))
    spec = kernels.checked(kernel, constexprs, args)
    size = size or spec.default_size
    ex = kernels.example(spec, size, getattr(torch, spec.dtype), device, constexprs)
    return Launch(label=kernel, fn=jit_function(spec.fn), args=ex.args, constexprs=ex.constexprs, grid=ex.grid,
                  options={**ex.options, **options}, dtype=spec.dtype, size=ex.size or size,
                  reference=ex.reference or spec.reference, inputs=ex.inputs, output=ex.output, then=ex.then,
                  call=ex.call, call_text=ex.call_text,
                  bytes_moved=bytes_moved if bytes_moved is not None else (spec.bytes_moved(ex) if spec.bytes_moved
                                                                           else None),
                  flops=flops if flops is not None else (spec.flops(ex) if spec.flops else None),
                  notes=spec.notes)


def _formula(value, args: dict) -> int | None:
    if value is None:
        return None
    return int(value(args) if callable(value) else value)


def _dtype_of(args: dict) -> str:
    import torch

    tensors = [v for v in args.values() if torch.is_tensor(v)]
    return str(tensors[0].dtype).removeprefix("torch.") if tensors else "float32"
