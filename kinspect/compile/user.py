"""User kernels: `path/to/file.py:kernel_name`, with example arguments from the command line or
from the file itself.

A file can declare example arguments for its kernels in the same words as the command line:

    kinspect_examples = {
        "my_kernel": {
            "args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32:4096"},
            "constexprs": {"BLOCK": 128},
            "grid": (32,),                # optional, default (1,)
            "num_warps": 4,               # optional
            # optional, for `kinspect bench`: throughput formulas over the args, and a reference
            "bytes": lambda a: 2 * a["x_ptr"].numel() * 4,
            "flops": lambda a: a["n"],
            "reference": lambda x_ptr: x_ptr * 2,   # takes the "inputs", returns the "output" arg
            "inputs": ["x_ptr"], "output": "y_ptr",
        },
    }

Values in "args" may also be real values (torch tensors, ints, floats).
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kinspect.compile.args import parse_arg_type
from kinspect.errors import KinspectError, NotFound, UsageError, did_you_mean


@dataclass(frozen=True)
class UserKernel:
    name: str
    fn: object
    args: dict
    constexprs: dict
    grid: tuple = (1,)
    options: dict = field(default_factory=dict)
    bench: dict = field(default_factory=dict)   # "bytes", "flops", "reference", "inputs", "output" as declared


def is_user_kernel(text: str) -> bool:
    path, sep, name = text.rpartition(":")
    return bool(sep) and path.endswith(".py") and bool(name)


def load_module(path: Path):
    if not path.is_file():
        raise NotFound(f"file '{path}' not found")
    mod_name = f"kinspect_user_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module  # triton resolves globals through the module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        sys.modules.pop(mod_name, None)
        raise KinspectError(f"importing '{path}' failed: {type(e).__name__}: {e}") from None
    finally:
        sys.path.remove(str(path.parent))
    return module


def load(text: str, cli_args: dict, cli_constexprs: dict) -> UserKernel:
    from kinspect.compile import jit_function

    path_text, _, name = text.rpartition(":")
    module = load_module(Path(path_text))
    kernels = {k for k, v in vars(module).items() if hasattr(v, "device_caches") or hasattr(getattr(v, "fn", None), "device_caches")}
    if not hasattr(module, name):
        raise NotFound(f"no kernel '{name}' in '{path_text}'{did_you_mean(name, kernels)}"
                       f"{'; kernels there: ' + ', '.join(sorted(kernels)) if kernels else ''}")
    fn = jit_function(getattr(module, name))
    declared = (getattr(module, "kinspect_examples", None) or {}).get(name, {})
    args = {k: (parse_arg_type(k, v) if isinstance(v, str) else v) for k, v in declared.get("args", {}).items()}
    args.update(cli_args)
    constexprs = {**declared.get("constexprs", {}), **cli_constexprs}
    params = [p for p in inspect.signature(fn.fn).parameters.values()]
    const_names = {p.name for p in params if "constexpr" in str(p.annotation)}
    missing = [p.name for p in params
               if p.name not in args and p.name not in constexprs and p.default is inspect.Parameter.empty]
    if missing:
        needs_type = [m for m in missing if m not in const_names]
        hint = " ".join(f"--arg {m}=TYPE" for m in needs_type) + " ".join(f" -p {m}=VALUE" for m in missing
                                                                           if m in const_names)
        raise UsageError(f"kernel '{name}' needs example values for {', '.join(missing)}: pass {hint.strip()} "
                         f"(TYPE like *fp32, i32, fp32) or declare kinspect_examples in the file")
    unknown = [k for k in {**args, **constexprs} if k not in {p.name for p in params}]
    if unknown:
        raise UsageError(f"kernel '{name}' has no parameter {', '.join(unknown)}; its parameters: "
                         f"{', '.join(p.name for p in params)}")
    options = {k: declared[k] for k in ("num_warps", "num_stages") if k in declared}
    bench = {k: declared[k] for k in ("bytes", "flops", "reference", "inputs", "output") if k in declared}
    return UserKernel(name=name, fn=fn, args=args, constexprs=constexprs, grid=tuple(declared.get("grid", (1,))),
                      options=options, bench=bench)
