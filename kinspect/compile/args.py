"""Example arguments from the command line: `--arg NAME=TYPE[:VALUE]` and `-p NAME=VALUE`."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from kinspect.core.errors import UsageError

# "-p BLOCK_SIZE=64", "--arg x_ptr=*fp32", "--arg n=i32:4096", "-p ACTIVATION=" (an empty string)
ASSIGN_RE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$")

DTYPES = {
    "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
    "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2", "fp8e4b8": "float8_e4m3fnuz", "fp8e5b16": "float8_e5m2fnuz",
}
# Scalars without a value: an int that is a multiple of 16 gets the JIT's usual `tt.divisibility`
# specialization, as real sizes usually do.
DEFAULT_INT = 1024
# an i64 without a value: Triton types ints by value, so a 64-bit one needs 2**31 or more; this one is
# a multiple of 16 (the divisibility a device address has), as data_ptr() values are
WIDE_INT = 2**32
POINTER_ELEMENTS = 4096


def split_assign(text: str, option: str) -> tuple[str, str]:
    m = ASSIGN_RE.match(text.strip())
    if not m:
        raise UsageError(f"{option} '{text}' is not NAME=VALUE; e.g. {option} BLOCK_SIZE=64")
    return m["name"], m["value"]


# torch's names for the dtypes beside Triton's short ones: "-p DTYPE=float16" or "-p DTYPE=bfloat16"
TORCH_NAMES = {v: k for k, v in DTYPES.items()}
# the dtypes kinspect makes a wrapper's input of or rebuilds a test's tensor in (not AMD's fnuz fp8s):
# short -> torch's name
TENSOR_DTYPES = {k: v for k, v in DTYPES.items() if k not in ("fp8e4b8", "fp8e5b16")}
# torch's names of those, and its aliases (`torch.half`, `torch.long`) -> the short names
TORCH_SHORT = {**{v: k for k, v in TENSOR_DTYPES.items()}, "half": "fp16", "float": "fp32", "double": "fp64",
               "short": "i16", "int": "i32", "long": "i64"}


# triton.language's names for its integer dtypes (`str(tl.int32)`) -> the short ones kinspect and
# Triton's signatures use ('i32'); its float dtypes are named the short way already ('fp16')
TL_INT_NAMES = {"int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
                "uint16": "u16", "uint32": "u32", "uint64": "u64"}


def short_dtype(tl_name: str) -> str:
    """'int32' -> 'i32', 'fp16' -> 'fp16': a tl dtype's name as kinspect spells element types."""
    return TL_INT_NAMES.get(tl_name, tl_name)


def tl_dtype(short: str):
    """The triton.language dtype for a short name ('fp16', 'i32', 'fp8e4nv'), or None."""
    return _tl_dtypes().get(short)


@functools.lru_cache(maxsize=1)
def _tl_dtypes() -> dict:
    import triton.language as tl

    return {short_dtype(str(v)): v for v in (getattr(tl, a) for a in dir(tl)) if type(v).__name__ == "dtype"}


class DtypeName(str):
    """A -p value that names a dtype without saying so ('fp16', 'bfloat16'): a string to a kernel
    that compares the constexpr with strings, the tl dtype (`.dtype`) to one that uses it as a dtype."""

    @property
    def dtype(self):
        return tl_dtype(TORCH_NAMES.get(str(self), str(self)))


# `tl.float16`, `triton.language.bfloat16`, `torch.float8_e4m3fn`: a dtype, said so
DTYPE_PREFIX_RE = re.compile(r"^(?:tl|triton\.language|torch)\.(?P<name>[a-z0-9_]+)$")


def parse_value(text: str, name: str = "NAME"):
    """A -p value, every constexpr kind: '64' -> 64, '0x10' -> 16, '0.5' -> 0.5, 'True' -> True,
    'None' -> None, '' or "''" -> '', "'relu'" -> 'relu', 'tl.float16' / 'torch.bfloat16' -> that tl
    dtype, 'fp16' -> DtypeName('fp16'), anything else the string. A malformed one (an unclosed quote,
    a dtype that does not exist) is a UsageError."""
    text = text.strip()
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text and (text[0] in "'\"" or text[-1] in "'\""):
        raise UsageError(f"-p {name}={text}: the quote is not closed; write -p {name}='VALUE' or -p {name}=''")
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        pass
    m = DTYPE_PREFIX_RE.match(text)
    if m:
        short = TORCH_NAMES.get(m["name"], m["name"])
        dtype = tl_dtype({"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
                          "float8e4nv": "fp8e4nv", "float8e5": "fp8e5", "float8e4b8": "fp8e4b8",
                          "float8e5b16": "fp8e5b16", "float8e4b15": "fp8e4b15", **TL_INT_NAMES}.get(m["name"], short))
        if dtype is None:
            raise UsageError(f"-p {name}={text}: no such dtype; use tl.float16, tl.bfloat16, tl.float32, "
                             f"tl.float8e4nv, tl.int8, ... (or fp16, bf16, fp32, i8, ...)")
        return dtype
    if text in DTYPES or text in TORCH_NAMES:
        return DtypeName(text)
    return text


def parse_constexprs(items) -> dict:
    out = {}
    for item in items or ():
        name, value = split_assign(item, "-p")
        out[name] = parse_value(value, name)
    return out


# "--arg x_ptr=*fp16:1024x1024": a pointer with the shape of the tensor kinspect makes for it
SHAPE_RE = re.compile(r"^[1-9][0-9]*(x[1-9][0-9]*)*$")
# "--arg a_desc=tensordesc<fp16[64,64]>", "tensordesc<fp16[BLOCK_M, BLOCK_K]>:4096x4096": a host
# TensorDescriptor (Triton's signature spelling); block sizes may name constexprs, set when the
# config and heuristics are known, and the optional shape is the tensor it describes.
DESC_RE = re.compile(r"^tensordesc<(?P<dtype>[a-z0-9]+)\[(?P<block>[^\]]*)\]>$")


@dataclass(frozen=True)
class DescriptorSpec:
    """A host TensorDescriptor to make once the constexprs its block shape names are known."""

    dtype: str
    block: tuple            # ints or constexpr names
    shape: tuple = ()       # of the tensor described; () for a default from the block

    def text(self) -> str:
        shape = f":{'x'.join(map(str, self.shape))}" if self.shape else ""
        return f"tensordesc<{self.dtype}[{','.join(map(str, self.block))}]>{shape}"

    def make(self, constexprs: dict, name: str):
        from triton.tools.tensor_descriptor import TensorDescriptor

        block = []
        for b in self.block:
            value = constexprs.get(b, b) if isinstance(b, str) else b
            if not isinstance(value, int):
                raise UsageError(f"--arg {name}={self.text()}: '{b}' is not a constexpr of the kernel; the block "
                                 f"shape takes numbers or constexpr names")
            block.append(value)
        shape = self.shape or tuple(max(4 * b, 16) for b in block)
        if len(shape) != len(block):
            raise UsageError(f"--arg {name}={self.text()}: the shape has {len(shape)} dimensions, the block "
                             f"{len(block)}")
        tensor = example_tensor(name, self.text(), shape, DTYPES[self.dtype], zeros=True)
        return TensorDescriptor.from_tensor(tensor, block)


def parse_shape(name: str, spec: str, value: str) -> tuple[int, ...]:
    if not SHAPE_RE.match(value):
        raise UsageError(f"--arg {name}={spec}: '{value}' is not a shape; write e.g. 4096 or 1024x1024")
    shape = tuple(int(v) for v in value.split("x"))
    numel = 1
    for n in shape:
        numel *= n
    if numel >= 2**48:
        raise UsageError(f"--arg {name}={spec}: {numel:,} elements is more than any tensor kinspect can make; "
                         f"give a smaller shape")
    return shape


def example_tensor(name: str, spec: str, shape: tuple, dtype: str, *, zeros: bool = False):
    """The CPU tensor kinspect makes for an --arg; one too large for this machine is one line."""
    import torch

    try:
        return (torch.zeros if zeros else torch.empty)(shape, dtype=getattr(torch, dtype))
    except (RuntimeError, MemoryError, OverflowError) as e:
        why = (str(e).strip().splitlines() or [""])[0][:160]
        raise UsageError(f"--arg {name}={spec}: cannot make a tensor of shape {'x'.join(map(str, shape))} here "
                         f"({why}); give a smaller shape") from None


def parse_arg_type(name: str, spec: str):
    """'*fp32[:SHAPE]' -> a CPU tensor; 'i32[:VALUE]' -> an int; 'fp32[:VALUE]' -> a float;
    'tensordesc<fp16[64,64]>[:SHAPE]' -> a host TensorDescriptor (or its DescriptorSpec)."""
    ty, _, value = spec.partition(":")
    desc = DESC_RE.match(ty.replace(" ", ""))
    if desc:
        if desc["dtype"] not in DTYPES:
            raise UsageError(f"--arg {name}={spec}: unknown element type '{desc['dtype']}'; use one of "
                             f"{', '.join(DTYPES)}")
        block = tuple(int(b) if b.isdigit() else b for b in desc["block"].split(",") if b)
        if not block or not all(isinstance(b, int) or b.isidentifier() for b in block):
            raise UsageError(f"--arg {name}={spec}: the block shape is numbers or constexpr names, "
                             f"e.g. tensordesc<fp16[64,64]> or tensordesc<fp16[BLOCK_M,BLOCK_K]>")
        d = DescriptorSpec(desc["dtype"], block, parse_shape(name, spec, value) if value else ())
        return d.make({}, name) if all(isinstance(b, int) for b in block) else d
    pointer = ty.startswith("*")
    base = ty.lstrip("*")
    if base not in DTYPES:
        raise UsageError(f"--arg {name}={spec}: unknown type '{base}'; use one of "
                         f"{', '.join('*' + t for t in ('fp32', 'fp16', 'bf16'))}, {', '.join(DTYPES)}, "
                         f"tensordesc<fp16[64,64]>")
    if pointer:
        shape = parse_shape(name, spec, value) if value else (POINTER_ELEMENTS,)
        return example_tensor(name, spec, shape, DTYPES[base])
    if base.startswith(("fp", "bf")):
        try:
            return float(value) if value else 1.0
        except ValueError:
            raise UsageError(f"--arg {name}={spec}: '{value}' is not a number") from None
    try:
        number = int(value, 0) if value else (WIDE_INT if base in ("i64", "u64") else DEFAULT_INT)
    except ValueError:
        raise UsageError(f"--arg {name}={spec}: '{value}' is not an integer") from None
    if base in ("i64", "u64") and -2**31 <= number < 2**31:
        # Triton types an int by its value: one that fits 32 bits is compiled as i32, whatever was asked
        raise UsageError(f"--arg {name}={spec}: Triton passes an int below 2**31 as i32; for a 64-bit "
                         f"argument give a value of 2**31 or more (--arg {name}={base}:{WIDE_INT}), or {base} "
                         f"alone")
    return number


def spec_of(value) -> str:
    """The --arg spelling of an example value: `*fp16`, `*fp32:64x64`, `i32:4096`, `fp32:0.5`."""
    if isinstance(value, DescriptorSpec):
        return value.text()
    if type(value).__name__ == "TensorDescriptor":
        dtype = TORCH_NAMES.get(str(value.base.dtype).removeprefix("torch."), "fp32")
        return (f"tensordesc<{dtype}[{','.join(map(str, value.block_shape))}]>:"
                f"{'x'.join(map(str, value.shape))}")
    dtype = getattr(value, "dtype", None)
    if dtype is not None and hasattr(value, "shape"):
        shape = tuple(value.shape)
        return f"*{TORCH_NAMES.get(str(dtype).removeprefix('torch.'), 'fp32')}" + \
            ("" if shape == (POINTER_ELEMENTS,) else f":{'x'.join(map(str, shape))}")
    if isinstance(value, bool):
        return f"i1:{int(value)}"
    if isinstance(value, int):
        return f"{'i32' if -2**31 <= value < 2**31 else 'i64'}:{value}"
    if isinstance(value, float):
        return f"fp32:{value}"
    return str(value)


def parse_args(items) -> dict:
    out = {}
    for item in items or ():
        name, spec = split_assign(item, "--arg")
        out[name] = parse_arg_type(name, spec)
    return out


def parse_sweep(items) -> dict[str, list]:
    """`-p BLOCK_SIZE=32,64 -p num=2` -> {"BLOCK_SIZE": [32, 64], "num": [2]}."""
    out: dict[str, list] = {}
    for item in items or ():
        name, value = split_assign(item, "-p")
        values = [v.strip() for v in value.split(",")]
        if not all(values):
            raise UsageError(f"-p '{item}' has an empty value; write -p {name}=32,64")
        known = out.setdefault(name, [])
        for v in (parse_value(x, name) for x in values):
            if v not in known:
                known.append(v)
    return out


def parse_int_list(text: str | None, option: str, least: int = 1) -> list:
    """`--num-warps 4,8` -> [4, 8]; None -> [None] (Triton's default)."""
    if text is None:
        return [None]
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise UsageError(f"{option} '{text}' is not a list of whole numbers; e.g. {option} 4,8") from None
    if any(v < least for v in values):
        raise UsageError(f"{option} '{text}': values must be {'positive' if least == 1 else f'at least {least}'}")
    return list(dict.fromkeys(values))
