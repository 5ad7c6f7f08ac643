"""User kernels: `path/to/file.py:kernel`, `path/pkg/mod.py:kernel` or `pkg.mod:kernel`, with
example arguments from the command line or from the file itself.

A file can declare example arguments for its kernels in the same words as the command line:

    kinspect_examples = {
        "my_kernel": {
            "args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32:4096"},
            "constexprs": {"BLOCK": 128},
            "grid": (32,),                # optional, default (1,); or lambda meta: (cdiv(n, meta["BLOCK"]),)
            "num_warps": 4,               # optional
            # optional, for `kinspect bench`: throughput formulas over the args, and a reference
            "bytes": lambda a: 2 * a["x_ptr"].numel() * 4,
            "flops": lambda a: a["n"],
            "reference": lambda x_ptr: x_ptr * 2,   # takes the "inputs", returns the "output" arg
            "inputs": ["x_ptr"], "output": "y_ptr",
        },
    }

Values in "args" may also be real values (torch tensors, ints, floats, TensorDescriptors).
An autotuned kernel is compiled with one of its configs (`config`, default the first that
prune_configs_by keeps) and the values its heuristics compute from the example arguments.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any

from kinspect.compile.args import DescriptorSpec, parse_arg_type, spec_of
from kinspect.compile.autotune import Applied, Chain, apply, chain, is_jit
from kinspect.compile.loader import is_user_kernel, launched_in, split  # noqa: F401  (callers import is_user_kernel)
from kinspect.errors import KinspectError, NotFound, UsageError, did_you_mean


@dataclass(frozen=True)
class UserKernel:
    name: str
    fn: object                 # the JITFunction
    args: dict
    constexprs: dict           # as compiled: -p values, the config's values, the heuristics' values
    grid: Any = (1,)           # a tuple, or a function of the launch's arguments (Triton's grid)
    options: dict = field(default_factory=dict)
    bench: dict = field(default_factory=dict)   # "bytes", "flops", "reference", "inputs", "output" as declared
    wrapper: object = None     # what the file names when it wraps the JITFunction (Autotuner, Heuristics)
    tuning: Applied | None = None
    loaded: str = ""           # how the file was loaded, in one line (kinspect.compile.loader)
    declared: bool = False     # the file declares kinspect_examples for this kernel
    given: dict = field(default_factory=dict)   # the constexprs a launch passes (declared and -p), before the wrappers

    def record(self, text: str, cli_args: dict, cli_constexprs: dict, config: int | None) -> dict:
        """What a stored variant keeps of this, as plain values: how to load it again (for timing
        on a GPU), how the file was loaded, and its autotune config and heuristics."""
        from kinspect.compile.loader import absolute

        return {"kernel": absolute(text), "args": [f"{k}={spec_of(v)}" for k, v in cli_args.items()],
                "constexprs": {k: v for k, v in cli_constexprs.items()}, "config": config,
                "loaded": self.loaded, "declared": self.declared,
                "autotune": None if self.tuning is None else self.tuning.to_json()}


def _driver(resolved):
    """The target's driver, active while the file is imported (none to set for the device)."""
    from kinspect.compile.driver import compile_only

    return compile_only(resolved.target) if resolved.offline else contextlib.nullcontext()


def load(text: str, cli_args: dict, cli_constexprs: dict, *, config: int | None = None, resolved=None) -> UserKernel:
    """The kernel `text` names, with its example arguments and constexprs as it will be compiled.
    `resolved` is the target (kinspect.compile.targets.Resolved; default: the device, else
    cuda:90 offline): the file is imported with its driver active, and prune_configs_by and
    the heuristics run with it active."""
    from kinspect.compile import loader
    from kinspect.compile.targets import resolve

    resolved = resolved or resolve(None)
    source, name = split(text)
    if source.endswith(".py"):   # as the user would type it (a sweep's workers get absolute paths)
        source = loader.shown(Path(source))
        text = f"{source}:{name}"
    loaded = loader.load(source, driver_context=_driver(resolved), offline=resolved.offline,
                         target_key=f"{resolved.target}{' offline' if resolved.offline else ' device'}")
    module = loaded.module
    obj = _kernel_object(module, name, source, loaded)
    c = chain(obj, name, f" in '{source}'")
    declared = (getattr(module, "kinspect_examples", None) or {}).get(name, {})
    if declared and not isinstance(declared, dict):
        raise UsageError(f"kinspect_examples['{name}'] in '{source}' is not a dict of 'args', 'constexprs', 'grid', ...; see docs/commands.md, 'Your kernel files'")
    args = {k: (parse_arg_type(k, v) if isinstance(v, str) else v) for k, v in declared.get("args", {}).items()}
    args.update(cli_args)
    given = {**declared.get("constexprs", {}), **cli_constexprs}
    _check_names(text, name, c, args, given)
    with _driver(resolved):
        tuning = apply(c, args, given, config) if c.wrappers else None
    if config is not None and (tuning is None or not tuning.configs):
        raise UsageError(f"--config {config}: '{name}' is not autotuned (no @triton.autotune configs)")
    constexprs = dict(tuning.constexprs) if tuning else dict(given)
    args = {k: (v.make(constexprs, k) if isinstance(v, DescriptorSpec) else v)
            for k, v in (tuning.args if tuning else args).items()}
    options = {k: declared[k] for k in ("num_warps", "num_stages") if k in declared}
    if tuning is not None:
        options.update(tuning.options)
    bench = {k: declared[k] for k in ("bytes", "flops", "reference", "inputs", "output") if k in declared}
    grid = declared.get("grid", (1,))
    return UserKernel(name=name, fn=c.jit, args=args, constexprs=constexprs,
                      grid=grid if callable(grid) else tuple(grid), options=options, bench=bench,
                      wrapper=obj if c.wrappers else None, tuning=tuning, loaded=loaded.how, declared=bool(declared),
                      given=given)


def configs_to_sweep(text: str, target: str | None, constexprs: dict, args: dict, only: list[int] | None) -> list:
    """The config numbers a sweep compiles for one target and -p combination: those
    prune_configs_by keeps for the example arguments, or `only` (checked against the count);
    [None] for a kernel that is not autotuned."""
    from kinspect.compile.targets import resolve

    uk = load(text, args, constexprs, resolved=resolve(target))
    tuning = uk.tuning
    if tuning is None or not tuning.configs:
        if only:
            raise UsageError(f"--config: '{uk.name}' is not autotuned (no @triton.autotune configs)")
        return [None]
    if only:
        bad = [i for i in only if not 0 <= i < tuning.configs]
        if bad:
            raise UsageError(f"--config {bad[0]} is out of range: '{uk.name}' has {tuning.configs} autotune "
                             f"config{'s' if tuning.configs != 1 else ''} (0..{tuning.configs - 1})")
        return list(only)
    return list(tuning.kept)


def _kernel_object(module, name: str, source: str, loaded):
    kernels = kernels_in(module)
    if not hasattr(module, name) and name in loaded.undefined:
        raise KinspectError(f"cannot load '{name}' from '{source}': {loaded.why}; and loading only its definitions, "
                            f"'{name}' itself failed at {loaded.undefined[name]}. Make the file importable without "
                            f"a GPU (kinspect imports it with the target's driver active) or its definitions "
                            f"independent of module-level code")
    if not hasattr(module, name):
        how = f" ({loaded.how})" if not loaded.imported else ""
        listed = f"; kernels there: {', '.join(sorted(kernels))}" if kernels else "; it defines no @triton.jit kernel"
        raise NotFound(f"no kernel '{name}' in '{source}'{did_you_mean(name, kernels)}{listed}{how}")
    obj = getattr(module, name)
    if is_jit(obj) or hasattr(obj, "fn"):
        return obj
    raise KinspectError(f"'{name}' in '{source}' is not a @triton.jit kernel: {_point_to(obj, source, kernels)}")


def kernels_in(module) -> dict[str, object]:
    """The module's kernels by name: JIT functions and their autotune/heuristics wrappers."""
    found = {}
    for k, v in list(vars(module).items()):
        if k.startswith("__"):
            continue
        try:
            found[k] = chain(v, k)
        except KinspectError:
            pass
    return found


def _point_to(obj, source: str, kernels: dict) -> str:
    """Which kernel the user most likely meant, for a name that is not one."""
    import inspect

    under = [k for k, c in kernels.items() if getattr(c.jit, "fn", None) is obj]
    if under:
        return f"it is the Python function under the kernel '{under[0]}'; name that: {source}:{under[0]}"
    here = f"; kernels here: {', '.join(sorted(kernels))}" if kernels else "; the file defines no @triton.jit kernel"
    if inspect.isfunction(obj):
        launched = [k for k in launched_in(obj) if k in kernels]
        if launched:
            return (f"it is a Python function that launches {', '.join(repr(k) for k in launched)}; name the "
                    f"kernel: {source}:{launched[0]}")
        return "it is a plain Python function" + here
    return f"it is a value of type {type(obj).__name__}" + here


def _check_names(text: str, name: str, c: Chain, args: dict, given: dict) -> None:
    """Every parameter has a value (else one line: the whole command to edit), and every value
    names a parameter."""
    import inspect

    params = list(inspect.signature(c.jit.fn).parameters.values())
    names = [p.name for p in params]
    unknown = [k for k in {**args, **given} if k not in names]
    if unknown:
        raise UsageError(f"kernel '{name}' has no parameter {', '.join(unknown)}; its parameters: {', '.join(names)}")
    const = {p.name for p in params if "constexpr" in str(p.annotation)}
    provided = set(args) | set(given) | set(c.heuristics) | c.config_names()
    missing = [p.name for p in params if p.name not in provided and p.default is inspect.Parameter.empty]
    if not missing:
        return
    runtime = [p.name for p in params if p.name not in const]
    last = last_dim_strides(runtime)
    words = [f"--arg {n}={spec_of(args[n]) if n in args else guess(n, n in last)}" for n in runtime
             if n in args or n in missing]
    words += [f"-p {n}={guess_constexpr(n)}" for n in missing if n in const]
    needs = [n for n in missing if n not in const]
    what = ""
    if needs:
        what = f"example values for {', '.join(needs)}" if len(needs) <= 4 else \
            f"example values for {len(needs)} runtime arguments"
    consts = [n for n in missing if n in const]
    if consts:
        what += (" and " if what else "") + f"constexpr{'s' if len(consts) != 1 else ''} {', '.join(consts)}"
    raise UsageError(f"kernel '{name}' needs {what}; edit and run: kinspect dump {text} {' '.join(words)} "
                     f"(types are guesses; or declare kinspect_examples in the file)")


# Guesses for a missing argument's type, by name, first match wins; anything else is `i32`.
# "a_ptr", "in_ptr0", "X_p", "out", "Out", "weight", "x", "Q": a pointer
POINTER_NAME_RE = re.compile(r"ptr|_p$|^(x|y|z|a|b|c|o|q|k|v|w|X|Y|Z|A|B|C|O|Q|V|W|out|output|outs|inp|input|inputs"
                             r"|src|dst|weight|weights|bias|mean|rstd|var|grad|logits|scores|lse|acc)\d*$"
                             r"|^(d|grad)_|^(in|out)_", re.IGNORECASE)
# "a_desc", "desc_q": a host tensor descriptor
DESC_NAME_RE = re.compile(r"(^|_)desc(_|$)")
# "eps", "sm_scale", "alpha", "momentum": a float
FLOAT_NAME_RE = re.compile(r"(^|_)(eps|epsilon|scale|alpha|beta|gamma|momentum|temperature|theta|lr|dropout_p)$",
                           re.IGNORECASE)
# "stride_am", "x_stride_1", "stride_n", "input_row_stride": a stride
STRIDE_NAME_RE = re.compile(r"stride", re.IGNORECASE)
# the sizes matmul and attention kernels name with one capital letter: "M", "N", "K", "H", "Z"
SIZE_LETTER_RE = re.compile(r"^[MNKLHZDST]$")


def guess(name: str, last_stride: bool = False) -> str:
    """The --arg type the missing-arguments error suggests for a parameter name."""
    if STRIDE_NAME_RE.search(name):
        return "i32:1" if last_stride else "i32"
    if DESC_NAME_RE.search(name):
        return "'tensordesc<fp32[64,64]>'"
    if FLOAT_NAME_RE.search(name):
        return "fp32"
    if SIZE_LETTER_RE.match(name):
        return "i32"
    if POINTER_NAME_RE.search(name):
        return "*fp32"
    return "i32"


def last_dim_strides(names: list[str]) -> set[str]:
    """The strides that look like a tensor's last dimension: the last of two or more strides of
    one tensor (`stride_ak` after `stride_am`, `x_stride_1` after `x_stride_0`). One lone stride
    per tensor is a row stride (a contiguous last dimension goes without one)."""
    groups: dict[str, list[str]] = {}
    for n in names:
        if STRIDE_NAME_RE.search(n):
            groups.setdefault(_tensor_of_stride(n), []).append(n)
    return {g[-1] for g in groups.values() if len(g) >= 2}


def _tensor_of_stride(name: str) -> str:
    """`stride_am` -> `stride_a`, `x_stride_1` -> `x_stride`, `stride_m` -> `stride`."""
    parts = name.split("_")
    if len(parts) >= 3 or (len(parts) == 2 and parts[0].lower() != "stride"):
        return "_".join(parts[:-1])
    if len(parts) == 2 and len(parts[1]) == 2:
        return f"{parts[0]}_{parts[1][0]}"
    return parts[0]


def guess_constexpr(name: str) -> str:
    upper = name.upper()
    if "GROUP" in upper:
        return "8"
    if any(w in upper for w in ("BLOCK", "TILE", "SIZE")):
        return "64"
    return "VALUE"
