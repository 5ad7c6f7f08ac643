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

Where a value comes from, first that has it: the command line (--arg, -p), the file's
kinspect_examples, a launch the file's own code makes (at module level, in its `__main__` block,
or in a call named with --from; kinspect.compile.file_launches), and last what the kernel's code
implies (kinspect.compile.assume), each assumed value said with why and how to set it.
"""

from __future__ import annotations

import contextlib
import itertools
import re
from pathlib import Path
from dataclasses import dataclass, field, replace
from typing import Any

from kinspect.compile.args import DescriptorSpec, parse_arg_type, spec_of
from kinspect.compile.assume import check_given
from kinspect.compile.autotune import Applied, Chain, apply, chain, is_jit
from kinspect.compile.loader import is_user_kernel, launched_in, split  # noqa: F401  (callers import is_user_kernel)
from kinspect.core.errors import KinspectError, NotFound, UsageError, did_you_mean
from kinspect.core.model import WRAPPER_INPUTS, UserRecord


# "NameError('lo is not defined')", "name 'fast_exp' is not defined"
NAME_ERROR_RE = re.compile(r"(?:name )?'?(?P<name>[A-Za-z_]\w*)'? is not defined")


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
    launch: str = ""           # the file's own launch the values come from, in one line
    assumed: tuple = ()        # values kinspect assumed from the kernel's code (kinspect.compile.assume.Assumed)
    picked: dict = field(default_factory=dict)   # how the launch was picked: {"launch": N, "from": FUNC}
    undefined: dict = field(default_factory=dict)   # names whose definition failed in a definitions-only load
    guessed_float: str = ""    # the float type a wrapper's made-up inputs have that only a guess gave
    env: dict = field(default_factory=dict)     # Triton's compile settings the launch's code set (file_launches.COMPILE_KNOBS)

    def cause(self, error: str) -> str:
        """Where a NameError in the compile began: `'x' is undefined: its definition failed (line 4:
        ImportError: ...)`, when the file was loaded definitions only and x's own line failed; else ""."""
        for m in NAME_ERROR_RE.finditer(error):
            if m["name"] in self.undefined:
                return f"'{m['name']}' is undefined because its definition failed ({self.undefined[m['name']]})"
        return ""

    def record(self, text: str, cli_args: dict, cli_constexprs: dict, config: int | None) -> UserRecord:
        """What a stored variant keeps of this (Variant.user): how to load it again (for timing on a
        GPU), how the file was loaded, its autotune config and heuristics, and what was assumed; made
        from plain values as a record is read back, so a fresh variant and a stored one are alike."""
        from kinspect.compile.loader import absolute

        return UserRecord.from_json({"kernel": absolute(text), "args": [f"{k}={spec_of(v)}" for k, v in cli_args.items()],
                "constexprs": {k: constexpr_text(v) for k, v in cli_constexprs.items()}, "config": config,
                "loaded": self.loaded, "declared": self.declared,
                "autotune": None if self.tuning is None else self.tuning.to_json(),
                "launch": self.launch, "assumed": [a.to_json() for a in self.assumed], "example": self.example(),
                **self.picked})

    def example(self) -> dict:
        """The launch this compile stands for, as data: each argument as a launch record keeps it
        (kinspect.core.model.ArgSpec), the grid as numbers and the bytes and FLOPs the file's formulas
        give for it. What a store replays without importing the file (kinspect.replay.spec.from_example);
        "unkept" says what could not be kept (a grid function that fails here, say)."""
        import dataclasses

        from kinspect.hooks.launch_counts import arg_spec

        out: dict = {"args": [dataclasses.asdict(arg_spec(k, v)) for k, v in self.args.items()]}
        unkept = []
        try:
            grid = self.grid({**self.args, **self.constexprs, **self.options}) if callable(self.grid) else self.grid
            out["grid"] = [int(g) for g in (grid if isinstance(grid, (tuple, list)) else (grid,))]
        except Exception as e:
            unkept.append(f"grid: the file's grid function failed ({type(e).__name__}: {e})"[:400])
        for key in ("bytes", "flops"):
            formula = self.bench.get(key)
            if formula is None:
                continue
            try:
                out[key] = int(formula(self.args) if callable(formula) else formula)
            except Exception as e:
                unkept.append(f"{key}: the file's formula failed ({type(e).__name__}: {e})"[:400])
        if unkept:
            out["unkept"] = unkept
        return out


    def where_values(self, text: str, target: str | None, error: str = "") -> str:
        """For a compile that failed: where its example values came from, and a command to edit and
        run: with other values where the error says what to change (kinspect.compile.assume.improve),
        else the values it used, spelled out (never offered as a fix: they failed)."""
        import shlex

        from kinspect.compile.assume import improve

        words = [f"-t {target}"] if target else []
        words += [f"--{k.replace('_', '-')} {v}" if k != "from" else f"--from {shlex.quote(v)}"
                  for k, v in (("launch", self.picked.get("launch_index")), ("from", self.picked.get("from")))
                  if v is not None and self.launch]
        if not self.assumed:
            where = f"the file's own launch ({self.launch})" if self.launch else "yours (--arg/-p, kinspect_examples)"
            return (f"the example values are {where}; give others with --arg/-p; edit and run: kinspect dump "
                    f"{shlex.quote(text)} {' '.join(words)}".rstrip())
        shown = ", ".join(f"{a.name}={a.spec}" for a in self.assumed[:6]) + (", ..." if len(self.assumed) > 6 else "")
        head = (f"kinspect assumed {len(self.assumed)} value{'s' if len(self.assumed) != 1 else ''} "
                f"({shown})")
        if self.launch and not self.picked:
            # why no launch of the project's gave them (its wrapper's call stopped, its tests did not reach it)
            said = self.launch if len(self.launch) <= 400 else self.launch[:399] + "…"
            head += f"; {said}"
        better, how = improve(self.assumed, error)
        if better:
            words += [a.option() for a in better if a.kind != "function" and a.kind not in WRAPPER_INPUTS]
            return f"{head}; the error suggests {how}; edit and run: kinspect dump {shlex.quote(text)} {' '.join(words)}"
        words += [a.option() for a in self.assumed if a.kind != "function" and a.kind not in WRAPPER_INPUTS]
        return (f"{head}; the values it used, to change: edit and run: kinspect dump {shlex.quote(text)} "
                f"{' '.join(words)}").rstrip()


def constexpr_text(value):
    """A constexpr as a record keeps it: plain values as they are, a tl dtype as `tl.float16` (which
    -p reads back), a function by name."""
    if value is None or isinstance(value, (bool, int, float)) or type(value) is str:
        return value
    if type(value).__name__ == "dtype":
        from kinspect.compile.args import short_dtype
        from kinspect.compile.infer import _tl

        return _tl(short_dtype(str(value)))
    return str(value)


def _under(used, args: dict, given: dict, options: dict, declared: dict) -> tuple:
    """(args, constexprs, grid, options) with a recorded launch's values under the ones given."""
    l_args, l_constexprs = used.values()
    return ({**l_args, **args}, {**l_constexprs, **given}, declared.get("grid", used.grid),
            {**used.options, **options})


def _target_key(resolved) -> str:
    """What a loaded file and its recorded runs are kept under: the target, and whether offline."""
    return f"{resolved.target}{' offline' if resolved.offline else ' device'}"


@contextlib.contextmanager
def _driver(resolved):
    """The target's driver, active while the file's code runs, and torch answering GPU questions
    as the target's device where there is none (nothing to set for the device)."""
    from kinspect.compile.device import as_target
    from kinspect.compile.driver import compile_only

    if not resolved.offline:
        yield
        return
    with compile_only(resolved.target), as_target(resolved.target):
        yield


def load(text: str, cli_args: dict, cli_constexprs: dict, *, config: int | None = None, resolved=None,
         launch: int | None = None, from_: str | None = None, float_dtype: tuple | None = None,
         run_tests: bool = True) -> UserKernel:
    """The kernel `text` names, with its example arguments and constexprs as it will be compiled.
    `resolved` is the target (kinspect.compile.targets.Resolved; default: the device, else
    cuda:90 offline): the file is imported with its driver active, and prune_configs_by and
    the heuristics run with it active. Values nobody gives come from the file's own launch number
    `launch` (default 0; in the code `from_` names, else at module level, else in its __main__
    block), else from the kernel's code. `float_dtype` (the type, why, and True to take the place
    of the kernel code's guesses too): the float type of a wrapper's made-up inputs that nothing
    else types, in place of the project's. `run_tests` False: the project's tests are read for their
    calls, never run."""
    from kinspect.compile import loader, test_calls, wrappers
    from kinspect.compile.targets import resolve

    resolved = resolved or resolve(None)
    source, name = split(text)
    if source.endswith(".py"):   # as the user would type it (a sweep's workers get absolute paths)
        source = loader.shown(Path(source))
        text = f"{source}:{name}"
    loaded = loader.load(source, driver_context=_driver(resolved), offline=resolved.offline,
                         target_key=_target_key(resolved))
    module = loaded.module
    obj = _kernel_object(module, name, source, loaded)
    c = chain(obj, name, f" in '{source}'")
    declared = (getattr(module, "kinspect_examples", None) or {}).get(name, {})
    if declared and not isinstance(declared, dict):
        raise UsageError(f"kinspect_examples['{name}'] in '{source}' is not a dict of 'args', 'constexprs', 'grid', ...; see docs/commands.md, 'Your kernel files'")
    args = {k: (parse_arg_type(k, v) if isinstance(v, str) else v) for k, v in declared.get("args", {}).items()}
    args.update(cli_args)
    given = {**declared.get("constexprs", {}), **_dtype_words(c.jit, cli_constexprs)}
    _check_names(name, c, args, given)
    check_given(c.jit, cli_constexprs)
    grid = declared.get("grid", (1,))
    options = {k: declared[k] for k in ("num_warps", "num_stages") if k in declared}
    missing = _missing(c, args, given)
    used, picked, how = None, {}, ""
    if missing or launch is not None or from_:
        used, how = _file_launch(loaded, c, name, launch, from_, resolved)
        if used is not None:
            args, given, grid, options = _under(used, args, given, options, declared)
            picked = {"launch_index": launch or 0, "from": from_}
            missing = _missing(c, args, given)
    assumed, guessed_float = (), ""
    if missing and launch is None and not from_:
        # no launch of the file gives them: the project's own wrapper, called with made-up inputs
        used, call, why_not = _wrapper_launch(loaded, c, name, resolved, float_dtype, run_tests)
        if why_not and used is None:
            how = f"{how}; {why_not}" if how else why_not
        note = f" ({why_not})" if why_not and used is not None else ""
        if used is not None:
            args, given, grid, options = _under(used, args, given, options, declared)
            missing = _missing(c, args, given)
        if used is not None and isinstance(call, str):      # the launch one of its tests made, run
            picked = {"launch_index": 0, "from": call}
            at = f" ({used.at()})" if used.at() else ""
            how = (f"the project's {test_calls.kind_of(Path(call.partition('::')[0]))} {call} ran, every launch "
                   f"recorded and none run, to its launch{at}: "
                   f"--from {call!r}{note}")
        elif used is not None:
            picked = {"launch_index": 0, "from": call.text()}
            made = f"as its test calls it ({call.test})" if call.test else "with made-up inputs"
            made += " and trained through (its backward launches the kernel)" if call.backward else ""
            what = f"{call.func} ({call.at}), which reaches it," if call.entry else \
                f"wrapper {call.func}() ({call.at})"
            how = f"the project's {what} called {made}: --from {call.text()!r}, recorded, not run{note}"
            assumed = tuple(_input_assumed(call))
            guessed_float = next((i.dtype for i in call.inputs if i.guessed and i.dtype in wrappers.FLOATS), "")
    if missing:
        from kinspect.compile.assume import assume

        tuner = c.autotuner
        warps = getattr(tuner.configs[0], "num_warps", None) if tuner is not None and tuner.configs else None
        kernel_assumed = tuple(assume(c.jit, missing, given, warps=options.get("num_warps", warps)))
        for a in kernel_assumed:
            (given if a.constexpr else args)[a.name] = a.value
        assumed += kernel_assumed
    if used is not None and used.uncomputed:
        how = f"{how}; {_uncomputed(used.uncomputed)}"
    env = dict(used.env) if used is not None else {}
    if env:
        said = ", ".join(f"{k}={v}" for k, v in sorted(env.items()))
        how = f"{how}; compiled with {said}, as the project's code had set it at that launch"
    inputs, read = _heuristic_inputs(c, args, given)
    assumed += read
    with _driver(resolved):
        try:
            tuning = apply(c, args, given, config, inputs=inputs) if c.wrappers else None
        except UsageError as e:
            if not assumed or from_:      # the values are all the project's (or the user's): its pruner's call
                raise
            tuning, assumed = _pruned_on_assumed(e, c, args, given, config, inputs, assumed, set(cli_constexprs))
    if config is not None and (tuning is None or not tuning.configs):
        raise UsageError(f"--config {config}: '{name}' is not autotuned (no @triton.autotune configs)")
    constexprs = dict(tuning.constexprs) if tuning else dict(given)
    args = {k: (v.make(constexprs, k) if isinstance(v, DescriptorSpec) else v)
            for k, v in (tuning.args if tuning else args).items()}
    if tuning is not None:
        options.update(tuning.options)
    bench = {k: declared[k] for k in ("bytes", "flops", "reference", "inputs", "output") if k in declared}
    return UserKernel(name=name, fn=c.jit, args=args, constexprs=constexprs,
                      grid=grid if callable(grid) else tuple(grid), options=options, bench=bench,
                      wrapper=obj if c.wrappers else None, tuning=tuning, loaded=loaded.how, declared=bool(declared),
                      given=given, launch=how, assumed=assumed, picked=picked, undefined=dict(loaded.undefined),
                      guessed_float=guessed_float, env=env)


def _uncomputed(calls) -> str:
    """`2 matrix products (2.7e+11 multiply-adds) and 5 other torch calls on up to 2.1e+09 elements its
    code made before the launch were too large for the CPU and not computed: ...` (device.Uncomputed)."""
    products = [c.size for c in calls if c.what == "product"]
    others = [c.size for c in calls if c.what != "product"]
    parts = []
    if products:
        n = len(products)
        parts.append(f"{n} matrix product{'s' if n != 1 else ''} ({sum(products):.1e} multiply-adds)")
    if others:
        n = len(others)
        parts.append(f"{n} {'other ' if products else ''}torch call{'s' if n != 1 else ''} on up to {max(others):.1e} "
                     f"elements")
    many = len(calls) != 1
    return (f"{' and '.join(parts)} its code made before the launch {'were' if many else 'was'} too large for the "
            f"CPU and not computed: values read from {'their outputs' if many else 'its output'} "
            f"({'zeros' if not others else 'zeros, or left unfilled'}) are not the project's")


def _pruned_on_assumed(error, c, args: dict, given: dict, config, inputs, assumed: tuple, fixed: set):
    """Where prune_configs_by keeps no config for values partly assumed (made up, or read from a call
    with made-up inputs), the first value of a constexpr the configs do not set and nobody gave
    (`fixed`), among the values the configs set, for which it keeps one (fms' MoE kernel keeps the
    configs whose block_m is its padding_size): `given` updated, the value said among the assumed.
    Else `error`."""
    from kinspect.compile.assume import Assumed

    if "prune_configs_by" not in str(error) or config is not None:
        raise error
    configs = c.configs()
    values = sorted({v for cfg in configs for v in cfg.kwargs.values() if isinstance(v, int) and not isinstance(v, bool)})
    set_by_configs = {k for cfg in configs for k in cfg.kwargs}
    first = [a.name for a in assumed if a.constexpr]
    names = [k for k in dict.fromkeys([*first, *given]) if k in given and k not in fixed and k not in set_by_configs
             and (given[k] is None or (isinstance(given[k], int) and not isinstance(given[k], bool)))]
    for name in names:
        for v in values:
            try:
                tuning = apply(c, args, {**given, name: v}, config, inputs=inputs)
            except UsageError:
                continue
            before = given[name]
            given[name] = v
            why = (f"{v}, a value the autotune configs set, for which prune_configs_by keeps a config (at {before} "
                   f"it kept none)")
            kept = [a for a in assumed if a.name != name]
            old = next((a for a in assumed if a.name == name), None)
            said = replace(old, value=v, spec=str(v), why=f"{old.why.split(';')[0]}; {why}") if old else \
                Assumed(name, v, str(v), f"an int: {why}", True, "int")
            return tuning, (*kept, said)
    raise error


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
    top = name.split(".")[0]
    if not hasattr(module, top) and top in loaded.undefined:
        raise KinspectError(f"cannot load '{name}' from '{source}': {loaded.why}; and loading only its definitions, "
                            f"'{top}' itself failed at {loaded.undefined[top]}. Make the file importable here "
                            f"(kinspect imports it with the target's driver active and torch answering as the "
                            f"target's device) or its definitions independent of module-level code")
    if _attribute(module, name) is None:
        how = f" ({loaded.how})" if not loaded.imported else ""
        listed = f"; kernels there: {', '.join(sorted(kernels))}" if kernels else "; it defines no @triton.jit kernel"
        raise NotFound(f"no kernel '{name}' in '{source}'{did_you_mean(name, kernels)}{listed}{how}")
    obj = _attribute(module, name)
    if is_jit(obj) or hasattr(obj, "fn"):
        return obj
    raise KinspectError(f"'{name}' in '{source}' is not a @triton.jit kernel: {_point_to(obj, source, kernels)}")


def _attribute(module, name: str):
    """`name` in the module, `Class.method` included (a kernel defined in a class), or None."""
    obj = module
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def kernels_in(module) -> dict[str, object]:
    """The module's kernels by name: JIT functions and their autotune/heuristics wrappers, and those
    defined in its classes as `Class.method` (trident's `@staticmethod @triton.jit` kernels)."""
    import inspect

    found = {}
    for k, v in list(vars(module).items()):
        if k.startswith("__"):
            continue
        try:
            found[k] = chain(v, k)
        except KinspectError:
            if inspect.isclass(v) and getattr(v, "__module__", None) == module.__name__:
                for m, attr in list(vars(v).items()):
                    attr = getattr(attr, "__func__", attr)      # a staticmethod's function
                    with contextlib.suppress(KinspectError):
                        found[f"{k}.{m}"] = chain(attr, f"{k}.{m}")
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


def _check_names(name: str, c: Chain, args: dict, given: dict) -> None:
    """Every value given names a parameter of the kernel."""
    names = list(c.jit.arg_names)
    unknown = [k for k in {**args, **given} if k not in names]
    if unknown:
        raise UsageError(f"kernel '{name}' has no parameter {', '.join(unknown)}; its parameters: {', '.join(names)}")


def _missing(c: Chain, args: dict, given: dict) -> list[str]:
    """The parameters with no value yet: not given, no default, not set by a config or heuristic."""
    import inspect

    from kinspect.compile.infer import params_of

    provided = set(args) | set(given) | set(c.heuristics) | c.config_names()
    return [p.name for p in params_of(c.jit) if p.name not in provided and p.default is inspect.Parameter.empty]


# names a heuristic may read that nothing gives, assumed one after another
MAX_HEURISTIC_READS = 8


def _heuristic_inputs(c: Chain, args: dict, given: dict) -> tuple[dict, tuple]:
    """Values for the kernel's parameters a @triton.heuristics function reads that nothing gives
    (a KeyError on the example arguments): a name the heuristic itself sets, which launches pass
    and it normalises (`"GEMMA": lambda a: bool(a["GEMMA"])`), is an input the heuristic sees; any
    other parameter is given to the kernel too. Each is assumed from the kernel's code and said so.
    Returns (the heuristics' inputs, the Assumed values)."""
    from dataclasses import replace

    from kinspect.compile.assume import assume

    if not c.heuristics:
        return {}, ()
    names = set(c.jit.arg_names)
    configs = c.configs()
    first = configs[0].kwargs if configs else {}     # what the autotuner sets before the heuristics run
    inputs, read = {}, []
    for _ in range(MAX_HEURISTIC_READS):
        values = {**first, **inputs, **args, **given}
        wanted, reader = None, None
        for name, fn in c.heuristics.items():
            if name in given:          # -p overrides it: it does not run
                continue
            try:
                values[name] = fn(values)
            except KeyError as e:
                wanted, reader = (e.args[0] if e.args else None), name
                break
            except Exception:
                break
        if wanted not in names or wanted in values or wanted in c.config_names():
            break
        (a,) = assume(c.jit, [wanted], given)
        who = "that sets it reads it" if wanted == reader else f"of '{reader}' reads it"
        a = replace(a, why=f"{a.why}; the @triton.heuristics value {who} from the launch")
        read.append(a)
        if wanted in c.heuristics:
            inputs[wanted] = a.value
        else:
            (given if a.constexpr else args)[wanted] = a.value
    return inputs, tuple(read)


def _dtype_words(jit, given: dict) -> dict:
    """-p values that name a dtype without saying so (`-p DTYPE=fp16`): the tl dtype, unless the kernel
    compares that constexpr with strings."""
    words = {k: v for k, v in given.items() if hasattr(v, "dtype") and isinstance(v, str)}
    if not words:
        return given
    from kinspect.compile.infer import walk

    facts = walk(jit).facts
    out = dict(given)
    for k, v in words.items():
        if k not in facts or not facts[k].strs:
            out[k] = v.dtype
    return out


# wrapper calls tried (each a shape plan of a wrapper) before the kernel's code decides alone
MAX_WRAPPER_TRIES = 12
# inputs changed to pass the wrapper's own checks (wrappers.repaired), per call tried
MAX_REPAIRS = 8


def _wrapper_launch(loaded, c: Chain, name: str, resolved, float_dtype: tuple | None = None, run_tests: bool = True):
    """The kernel's launch by a wrapper called with made-up inputs (kinspect.compile.wrappers): one
    of its file, else one of the modules of its package that name it (loader.neighbours). (the
    FileLaunch, the Call, "") of the first call that reaches it, or (None, None, why none did: ""
    where no wrapper was found)."""
    from kinspect.compile import loader, test_calls, wrappers
    from kinspect.compile.file_launches import kernel_key

    if loaded.where is None:
        return None, None, ""
    key = kernel_key(c.jit)
    files = loader.project_files(loaded.where)
    # the float type of inputs nothing else types: the one the project's tests try first, else
    # its half type (measured on 12 projects seen: benchmarks/inference_accuracy.py)
    half = float_dtype or wrappers.project_dtype(files) or wrappers.project_half(files)
    tests = test_calls.Tests(files, root=loader.project_folder(loaded.where))
    tried, first, tested, ran = [], "", False, ""
    for module in (loaded.module, None):
        if module is None:       # none of its file reached it: the wrappers in other files of its package
            fn = getattr(c.jit, "fn", c.jit)
            modules = loader.neighbours(loaded, getattr(fn, "__name__", name), _driver(resolved))
        else:
            modules = [module]
        tries = [t for m in modules for t in _calls_of(m, c, key, loaded.module, half, tests)][:MAX_WRAPPER_TRIES]
        # the calls a test's text gives whole, then the tests themselves, run (kinspect.compile.test_runs),
        # then the calls read in part or made up
        whole = list(itertools.takewhile(_read_whole, tries))
        for part in (whole, tries[len(whole):]):
            if part is not whole and not tested and run_tests:
                tested = True
                used, node, ran = _test_launch(loaded, c, key, name, resolved, tests, tries)
                if used is not None:
                    return used, node, ran
            used, call, why = _first_launch(loaded, part, key, name, resolved)
            if used is not None:
                return used, call, ran
            first = first or why
        tried += tries
    if not tried:
        return None, None, f"{ran}; values from the kernel's code" if ran else ""
    funcs = sorted({t.func + "()" for t in tried})
    return None, None, (f"{ran + '; ' if ran else ''}the project's wrapper{'s' if len(funcs) > 1 else ''} "
                        f"{', '.join(funcs)} called with made-up inputs ({len(tried)} tries) never launched "
                        f"'{name}'; the first stopped at {first}; values from the kernel's code")


def _read_whole(call) -> bool:
    """Whether a wrapper call is the project's test's, read whole from its text."""
    return bool(call.test) and not call.by_name and all(i.tested for i in call.inputs)


def _test_launch(loaded, c: Chain, key: tuple, name: str, resolved, tests, tries: list):
    """The kernel's launch by the project's tests, run (kinspect.compile.test_runs): those whose call
    of a wrapper `tries` follow, then the files that name the kernel's wrappers or the code that reaches
    them. (the FileLaunch, its test's node, what it passed over: "") or (None, None, why none did: ""
    where no test names it)."""
    from kinspect.compile import test_runs

    if not test_runs.available() or tests.root is None:
        return None, None, ""
    fn = getattr(c.jit, "fn", c.jit)
    kernel = getattr(fn, "__name__", name)
    file = Path(loaded.where.file)
    own = [f"{file.relative_to(tests.root)}::{t}" for t in test_runs.own_tests(file)] \
        if file.is_relative_to(tests.root) else []
    named = tests.naming({kernel} | {t.func.split(".")[0] for t in tries if not t.entry}, kernel, file.stem)
    nodes = [t.node for t in tries if t.node] + own + [str(p) for p in named]
    files = test_runs.chosen([n.partition("::")[0] for n in nodes])
    nodes = [n for n in dict.fromkeys(nodes) if n.partition("::")[0] in files]
    if not nodes:
        return None, None, ""
    ran = test_runs.run_tests(loaded, nodes, tests.root, driver_context=_driver(resolved),
                              target_key=_target_key(resolved), wanted=key)
    found = [x for x in ran.launches if x.key == key]
    if found:
        return found[0], found[0].where.removeprefix("the test "), ran.stopped
    return None, None, f"the project's tests ({', '.join(files)}), run, did not launch it: {ran.stopped}"


def _calls_of(module, c: Chain, key, home, half, tests) -> list:
    from kinspect.compile import wrappers

    try:
        return wrappers.calls(module, c.jit, key, home=home, half=half, tests=tests)
    except Exception:      # the wrapper's text could not be read: the kernel's code decides
        return []


def _first_launch(loaded, tries: list, key, name: str, resolved):
    """(the FileLaunch, the Call, "") of the first of `tries` that launches the kernel, each
    repaired to pass the wrapper's own checks; else (None, None, where the first stopped)."""
    from kinspect.compile import loader, wrappers

    target_key = _target_key(resolved)
    first = ""
    for call in tries:
        for _ in range(MAX_REPAIRS + 1):
            ran = loader.run_code(loaded, "from", call=call.text(), driver_context=_driver(resolved),
                                  target_key=target_key, wanted=key, index=0, frames_of=call.file or None)
            found = [x for x in ran.launches if x.key == key]
            if found:
                return found[0], call, ""
            last = call
            call = wrappers.repaired(call, ran.failure, call.file or loaded.file)
            if call is None:
                break
        if not first:
            stopped = ran.stopped or f"it launched no '{name}'"
            first = f"{last.func}() ({last.at}): {stopped.removeprefix(f'--from {last.text()}: ')}"
    return None, None, first


def _input_assumed(call) -> list:
    """The inputs of a wrapper call, as assumed values: made up (kind "input") or read from the
    project's test (kind "tested"), said, never hidden."""
    from kinspect.compile.assume import Assumed

    of = f"{call.func}() at {call.at}" if call.entry else f"the wrapper {call.func}() at {call.at}"
    return [Assumed(f"{call.func}:{i.name}", None, i.spec, f"{i.why}; input of {of}, "
                    f"{'read from the test, not run' if i.tested else 'made up'}", False,
                    "tested" if i.tested else "input") for i in call.inputs
            if not i.spec.startswith("kernel:")]     # the kernel itself, passed to a wrapper that launches it


def _file_launch(loaded, c: Chain, name: str, index: int | None, call: str | None, resolved):
    """The file's own launch of the kernel to take values from: number `index` (default 0) of those
    the code `call` names makes, else of those its module-level code made, else of those its
    __main__ block makes. (None, "") when there is none; a --launch or --from that finds none is a
    UsageError."""
    from kinspect.compile import loader, test_runs
    from kinspect.compile.file_launches import kernel_key

    key = kernel_key(c.jit)
    want = index or 0
    target_key = _target_key(resolved)
    found, stopped, where, early = [x for x in loaded.launches if x.key == key], "", "its module-level code", False
    if call and test_runs.is_node(call):
        if not test_runs.available():
            raise UsageError(f"--from {call}: running a test needs pytest, which is not installed here: "
                             f"pip install pytest")
        launches, stopped, early, _ = test_runs.run_tests(loaded, [call], loader.project_folder(loaded.where),
                                                          driver_context=_driver(resolved), target_key=target_key,
                                                          wanted=key, index=want)
        found, where = [x for x in launches if x.key == key], f"--from {call}"
    elif call:
        launches, stopped, early, _ = loader.run_code(loaded, "from", call=call, driver_context=_driver(resolved),
                                                      target_key=target_key, wanted=key, index=want)
        found, where = [x for x in launches if x.key == key], f"--from {call}"
    elif len(found) <= want and loader.main_block(loaded.file) is not None:
        launches, stopped, early, _ = loader.run_code(loaded, "main", driver_context=_driver(resolved),
                                                      target_key=target_key, wanted=key, index=want - len(found))
        where = "its module-level code and __main__ block" if found else "its __main__ block"
        found += [x for x in launches if x.key == key]
    if len(found) > want:
        used = found[want]
        at = f" ({used.at()})" if used.at() else ""
        if early:
            which = f"launch {want} of '{name}' (kinspect stopped the code there; --launch N picks a later one)"
        elif len(found) > 1:
            which = f"launch {want} of the {len(found)} of '{name}' (--launch N picks another)"
        else:
            which = f"the one launch of '{name}'"
        return used, f"{which}, by {used.where}{at}, recorded, not run"
    made = f"launched '{name}' {len(found)} time{'s' if len(found) != 1 else ''}" if found else \
        f"launched no '{name}'"
    why = f" ({stopped})" if stopped else ""
    if index is not None or call:
        pick = f"; --launch {len(found) - 1} is the last" if found else ""
        raise UsageError(f"{'--launch ' + str(want) + ': ' if index is not None else ''}{where} {made}{why}{pick}")
    ran = call or loader.main_block(loaded.file) is not None
    return None, (f"none to use: {where} {made}{why}" if ran else "")
