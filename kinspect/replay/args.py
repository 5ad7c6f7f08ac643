"""Fresh arguments for a captured launch: tensors of the captured shapes, dtypes and strides, the
captured scalars and constexprs.

Values: floating-point tensors hold standard-normal numbers (seed 0), integer and bool tensors
hold zeros: a captured integer tensor is often indices or offsets into another tensor, and zero is
the one value that is in range whatever the other tensor's size. A pointer the captured variant
was not specialized as 16-byte aligned (no `tt.divisibility` attribute) gets a tensor that starts
one element past an aligned address, so the JIT specializes the replay as it did the capture.

`new_tensor` is copied verbatim into the scripts `kinspect repro` writes: it imports nothing but
torch and uses nothing else from this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from kinspect.core.errors import KinspectError, UsageError
from kinspect.core.model import ArgSpec

FILL_NOTE = ("arguments are fresh tensors of the captured shapes, dtypes and strides: floating point "
             "standard-normal (seed 0), integer and bool tensors zeros")


def new_tensor(shape, strides, dtype, device, aligned=True):
    """A tensor of this shape, strides and dtype (a torch dtype's name) on `device`: floating point
    filled with standard-normal values, integers and bools with zeros. aligned=False starts it one
    element past a 16-byte boundary (as a pointer the JIT did not specialize as aligned)."""
    import torch

    dt = getattr(torch, dtype)
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(n > 0 for n in shape) else 0
    itemsize = torch.empty((), dtype=dt).element_size()
    offset = 0 if aligned or itemsize >= 16 else 1
    base = torch.empty(max(span, 1) + offset, dtype=dt, device=device)
    if dt.is_floating_point or dt.is_complex:
        if itemsize >= 2:
            base.normal_()
        else:       # 8-bit floats: torch draws no normal values in them directly
            base.copy_(torch.randn(base.shape, device=device).to(dt))
    else:
        base.zero_()
    return base.as_strided(tuple(shape), tuple(strides), offset)


def copy_as_laid_out(t):
    """A copy of tensor `t` with its storage: the same strides, storage offset and bytes, the gaps between
    rows included. Tensor.clone() makes a tensor that is not dense contiguous (GPT-2's logits, rows of
    50257 at a stride of 50264, become rows at 50257) and drops the offset of an unaligned one; a kernel
    that indexes with the captured strides (Inductor writes them into its code) would read such a copy
    shifted and past its end."""
    import torch

    storage = t.untyped_storage().clone()
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(storage, t.storage_offset(), t.size(), t.stride())


@dataclass(frozen=True)
class Values:
    """A launch's arguments by parameter name: runtime arguments and constexprs apart."""

    args: dict
    constexprs: dict
    tensor_bytes: int            # bytes the tensor arguments span (each element once)
    integer_tensors: tuple[str, ...]


def values(args: tuple[ArgSpec, ...], signature: dict, attributes: dict, device, *,
           overrides: dict | None = None) -> Values:
    """Build the arguments of a captured launch on `device`. `signature` (name -> Triton type,
    "constexpr" for constexprs) tells constexprs from runtime arguments; `attributes` (name ->
    {"tt.divisibility": 16, ...}) which pointers were aligned. `overrides` replace scalar or
    constexpr values by name."""
    overrides = dict(overrides or {})
    unknown = [k for k in overrides if k not in {a.name for a in args}]
    if unknown:
        names = [a.name for a in args if a.kind != "tensor"]
        raise UsageError(f"the kernel has no parameter {', '.join(unknown)}; its scalars and constexprs: "
                         f"{', '.join(names) or 'none'}")
    out, consts, total, ints = {}, {}, 0, []
    for a in args:
        if a.name in overrides:
            if a.kind in ("tensor", "tensordesc"):
                raise UsageError(f"-p {a.name}: '{a.name}' is a tensor argument; -p sets scalars and constexprs")
            value = overrides[a.name]
        else:
            value, size = _value(a, attributes.get(a.name) or {}, device)
            total += size
            if a.kind == "tensor" and not _is_float(a.dtype):
                ints.append(a.name)
        (consts if signature.get(a.name) == "constexpr" else out)[a.name] = value
    return Values(out, consts, total, tuple(ints))


def _value(a: ArgSpec, attrs: dict, device):
    if a.kind == "tensor":
        t = new_tensor(a.shape, a.strides, a.dtype, device, aligned=_aligned(attrs))
        return t, _span(a) * t.element_size()
    if a.kind == "tensordesc":
        from triton.tools.tensor_descriptor import TensorDescriptor

        base = new_tensor(a.shape, a.strides, a.dtype, device)
        return TensorDescriptor(base, list(a.shape), list(a.strides), list(a.value or ())), _span(a) * \
            base.element_size()
    if a.kind == "dtype":
        import triton.language as tl

        return tl.core.dtype(str(a.value)), 0
    if a.kind in ("int", "float", "bool", "str", "none"):
        return a.value, 0
    raise KinspectError(f"argument '{a.name}' was recorded as {a.kind} ({a.value}): kinspect cannot make one "
                        f"to replay the launch")


def _aligned(attrs: dict) -> bool:
    # Triton marks a pointer it specialized as 16-byte aligned with tt.divisibility 16
    divisibility = attrs.get("tt.divisibility")
    return bool(divisibility) and int(divisibility) % 16 == 0


def _span(a: ArgSpec) -> int:
    """Elements a tensor argument spans: its element count, or less where strides overlap (a
    broadcast dimension has stride 0 and reads the same elements again)."""
    if not all(n > 0 for n in a.shape):
        return 0
    numel = 1
    for n in a.shape:
        numel *= n
    return min(numel, 1 + sum((n - 1) * s for n, s in zip(a.shape, a.strides)))


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat", "complex"))
