"""Example arguments from the command line: `--arg NAME=TYPE[:VALUE]` and `-p NAME=VALUE`."""

from __future__ import annotations

import re

from kinspect.errors import UsageError

# "-p BLOCK_SIZE=64", "--arg x_ptr=*fp32", "--arg n=i32:4096"
ASSIGN_RE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.+)$")

DTYPES = {
    "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
    "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2",
}
# Scalars without a value: an int that is a multiple of 16 gets the JIT's usual `tt.divisibility`
# specialization, as real sizes usually do.
DEFAULT_INT = 1024
POINTER_ELEMENTS = 4096


def split_assign(text: str, option: str) -> tuple[str, str]:
    m = ASSIGN_RE.match(text.strip())
    if not m:
        raise UsageError(f"{option} '{text}' is not NAME=VALUE; e.g. {option} BLOCK_SIZE=64")
    return m["name"], m["value"]


def parse_value(text: str):
    """'64' -> 64, '0.5' -> 0.5, 'True' -> True, 'None' -> None, else the string."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_constexprs(items) -> dict:
    out = {}
    for item in items or ():
        name, value = split_assign(item, "-p")
        out[name] = parse_value(value)
    return out


def parse_arg_type(name: str, spec: str):
    """'*fp32' -> a CPU tensor; 'i32[:VALUE]' -> an int; 'fp32[:VALUE]' -> a float."""
    import torch

    ty, _, value = spec.partition(":")
    pointer = ty.startswith("*")
    base = ty.lstrip("*")
    if base not in DTYPES:
        raise UsageError(f"--arg {name}={spec}: unknown type '{base}'; use one of "
                         f"{', '.join('*' + t for t in ('fp32', 'fp16', 'bf16'))}, {', '.join(DTYPES)}")
    if pointer:
        if value:
            raise UsageError(f"--arg {name}={spec}: a pointer takes no value")
        return torch.empty(POINTER_ELEMENTS, dtype=getattr(torch, DTYPES[base]))
    if base.startswith(("fp", "bf")):
        try:
            return float(value) if value else 1.0
        except ValueError:
            raise UsageError(f"--arg {name}={spec}: '{value}' is not a number") from None
    try:
        return int(value) if value else DEFAULT_INT
    except ValueError:
        raise UsageError(f"--arg {name}={spec}: '{value}' is not an integer") from None


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
        for v in map(parse_value, values):
            if v not in known:
                known.append(v)
    return out


def parse_int_list(text: str | None, option: str) -> list:
    """`--num-warps 4,8` -> [4, 8]; None -> [None] (Triton's default)."""
    if text is None:
        return [None]
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise UsageError(f"{option} '{text}' is not a list of whole numbers; e.g. {option} 4,8") from None
    if any(v <= 0 for v in values):
        raise UsageError(f"{option} '{text}': values must be positive")
    return list(dict.fromkeys(values))
