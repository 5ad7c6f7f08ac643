"""The project's own host code as the source of a kernel's launch values: its Python wrapper.

Most kernels are launched by a function of the same file (`def rms_norm(x, w, eps): ...
_kernel[(M,)](x, y, w, x.stride(0), N, eps, BLOCK=triton.next_power_of_2(N))`) or by an autograd
Function's `forward` there. Where no launch of the file gives the kernel's values, kinspect calls
such a wrapper the way `dump --from` calls code (kinspect.compile.file_launches: the launch is
recorded, never run), so every value the wrapper derives is the project's own: the constexprs it
computes, the tensors it allocates (`torch.empty(..., dtype=torch.int8)`, `.to(torch.bfloat16)`),
strides from `.stride()`, `x.dtype` passed on.

Where the project's tests call the wrapper, that call comes first (kinspect.compile.test_calls: each
argument read from the test's text, never run), and its dtypes and ranks type the inputs made up
for the plans. Otherwise only the wrapper's own inputs are made up, from what its code does with
them (read from its AST):
a tensor (it reads `.shape`, `.stride()`, `.dtype`, ...), its rank (`M, N = x.shape`, `x.shape[3]`,
`assert x.dim() == 4`, `x.shape[1]` and `x.shape[-1]`: at least 3, strides splatted beside a
4-D tensor's: 4, an integer tensor: a vector of indices), its layout (where it compares
`x.stride(1) == 1`, a call with dimension 1 innermost follows: channel-last), its dtype (`assert
x.dtype in (torch.float16, torch.bfloat16)`; else the
element type the kernel's code gives the parameter it is passed to, where that is the parameter's
own; else the one half type the wrapper names; else the float type the project's tests try first;
else the half type the project names most; else bf16),
what a wrapper it passes the parameter on to reads it as, an int, a float (`eps`,
`sm_scale`), a dtype (`out_dtype: torch.dtype`) or a flag; parameters with defaults keep them. A
few shape plans are tried in turn (model-like sizes first). Where a check of the wrapper stops a
call (`assert w.shape == (N,)`, `if x.size(-1) != w.shape[0]: raise ...`, `a, b, c, d = x.shape`),
the input it checks is changed to what it wants, as the wrapper computed that then, and the call
made again (`repaired`). Every made-up input is an assumption and is said so, with each change a
check made, and the call is printed as a `--from` text the user can edit.

Wrappers are found where the project has them: plain functions, functions under decorators
(functools.wraps or a closure), `torch.library.triton_op`s launching through `wrap_triton(kernel)`,
autograd Functions' `forward` and classes' static and class methods (decorated too: kernl's
`@custom_fwd`), functions that launch the kernel they are passed (`implementation[(M,)](...)`,
passed this one), and the file's functions that call one of those; where none of the kernel's
file reaches it, the same in the other modules of its
package that name it (loader.neighbours), called from the kernel's module.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import re
import sys
from dataclasses import dataclass, replace

from kinspect.compile.args import TENSOR_DTYPES, TORCH_SHORT, spec_of
from kinspect.compile.test_calls import is_test_file

# attributes whose use says a parameter is a tensor
TENSOR_ATTRS = {"shape", "stride", "dtype", "size", "view", "reshape", "contiguous", "is_contiguous", "device",
                "dim", "ndim", "numel", "element_size", "new_empty", "new_zeros", "new_full", "squeeze", "unsqueeze",
                "to", "transpose", "permute", "flatten", "is_cuda", "data_ptr", "expand", "T", "mT", "t", "clone",
                "chunk", "split", "unbind", "storage_offset", "float", "half", "bfloat16", "view_as", "reshape_as",
                "nelement", "is_floating_point", "type", "max", "min", "sum", "mean", "fill_", "zero_", "copy_",
                # methods no Python number has (CoLT5's `mask.int()`, `x.masked_fill(~mask, ...)`)
                "int", "long", "bool", "byte", "masked_fill", "masked_fill_", "masked_select", "cumsum", "argmax",
                "argmin", "topk", "gather", "index_select", "repeat", "repeat_interleave", "expand_as", "nonzero",
                "softmax", "log_softmax", "amax", "amin", "logsumexp", "narrow", "new_ones", "new_tensor", "unflatten"}
# attributes a torch.dtype has as well as a tensor
DTYPE_ATTRS = {"is_floating_point", "itemsize", "is_signed", "is_complex", "to"}
FLOAT_NAMES = ("eps", "epsilon", "scale", "sm_scale", "softmax_scale", "alpha", "beta", "gamma", "momentum",
               "temperature", "theta", "lr", "dropout_p", "p", "slope", "negative_slope", "base", "rope_theta",
               "logit_cap", "softcap", "variance_epsilon")
# shapes a tensor of each rank gets, one plan per try: model-like sizes first (hidden 4096, heads
# of 128), then uniform sizes that satisfy `a.shape[1] == b.shape[0]`-style checks
PLANS = (
    {1: (4096,), 2: (16, 4096), 3: (4, 32, 128), 4: (2, 32, 1024, 128), 5: (2, 8, 16, 64, 16)},
    {1: (128,), 2: (128, 128), 3: (128, 128, 128), 4: (4, 8, 128, 128), 5: (2, 4, 16, 16, 64)},
    {1: (64,), 2: (64, 64), 3: (64, 64, 64), 4: (64, 64, 64, 64), 5: (16, 16, 16, 16, 16)},
    {1: (2,), 2: (2, 4096), 3: (2, 1024, 4096), 4: (2, 1024, 32, 128), 5: (2, 4, 8, 16, 64)},
)
# a float tensor's dtype where nothing says: bf16, as the activations of today's models on the GPUs
# kinspect targets by default (Hopper and later) are. Measured (benchmarks/inference_accuracy.py) on
# the pointers kinspect made a wrapper's input up for, in the launches of 6 projects it had not seen:
# the project passed bf16 to 37, fp32 to 26, fp16 to 9
FLOAT_DEFAULT = "bf16"
# the float types made-up inputs are made in again, in turn, where the first guess fails to compile
FLOATS = ("fp32", "fp16", "bf16")


@dataclass(frozen=True)
class Input:
    """One input kinspect made up for the wrapper's call."""

    name: str
    text: str          # Python text, as in the --from call
    spec: str          # as --arg would spell it: '*fp16:16x4096', 'i32:128', 'fp32:1e-06'
    why: str
    keyword: bool = False    # a keyword-only parameter
    shape: tuple = ()        # a tensor's shape and dtype, and the name its text calls torch by
    dtype: str = ""
    torch: str = ""
    grad: bool = False       # made with requires_grad=True
    inner: int | None = None     # the dimension laid out innermost, where not the last (channel-last)
    tested: bool = False         # read from the call the project's test makes, not made up
    guessed: bool = False        # a tensor whose dtype only a guess gives: no check of the wrapper's, no
    #                              test, no name (dump tries the other FLOATS where it fails to compile)
    dtype_tested: bool = False   # a made-up tensor of the dtype the project's test passes


def _tensor(name: str, shape: tuple, dtype: str, torch: str, why: str, keyword: bool, grad: bool = False,
            inner: int | None = None) -> Input:
    """A made-up tensor of `shape`; with `inner`, that dimension's stride is 1 (laid out innermost,
    then moved into place: `torch.empty(2, 4096, 64).movedim(-1, 1)` is 2x64x4096, channel-last)."""
    make = "zeros" if dtype[:1] in "iu" else "empty"     # index tensors: valid indices
    laid = shape if inner is None else shape[:inner] + shape[inner + 1:] + shape[inner:inner + 1]
    text = (f"{torch}.{make}({', '.join(map(str, laid))}, dtype={torch}.{TENSOR_DTYPES[dtype]}"
            f"{', requires_grad=True' if grad else ''})")
    if inner is not None:
        # a view of a tensor made with requires_grad is not a leaf: the grad is asked for after the move
        text = f"{text.removesuffix(', requires_grad=True)')}{')' if grad else ''}.movedim(-1, {inner})" + \
            (".requires_grad_()" if grad else "")
    return Input(name, text, f"*{dtype}:{'x'.join(map(str, shape))}", why, keyword, tuple(shape), dtype, torch, grad,
                 inner)


@dataclass(frozen=True)
class Call:
    """A wrapper's call with made-up inputs: `func(inputs...)` run in the kernel's module."""

    func: str          # as its module names it: 'rms_norm' or '_attention.apply'
    line: int          # where the wrapper is defined
    inputs: tuple      # Input, for the parameters that have no default
    plan: int = 0
    module: str = ""   # the module it is in, where that is not the kernel's ('attorch.layer_norm_layer')
    file: str = ""     # that module's file
    test: str = ""     # the project's test call it follows: `tests/test_norm.py:14, test_rms`
    backward: bool = False   # the kernel is launched by the Function's backward: train through the call
    entry: str = ""    # where it is defined, for a class or function of the project other than the
    #                    kernel's wrappers that the test calls (test_calls.Tests.entries): `pkg/norm.py:12`
    made: str = ""     # the instance called, for a class: `__import__('pkg.norm', ...).RMSNorm(768)`
    by_name: bool = False    # its inputs are what the test passes another function of its name
    node: str = ""     # the pytest node whose call it follows (test_calls.TestCall.node)

    def text(self) -> str:
        func = self.made or (f"__import__({self.module!r}, fromlist=['_']).{self.func}" if self.module else self.func)
        call = f"{func}({', '.join(f'{i.name}={i.text}' if i.keyword else i.text for i in self.inputs)})"
        if not self.backward:
            return call
        # trained through with a gradient as a model's next layer gives one: dense, of the output's layout
        # (`.sum().backward()` gives an expanded one, of strides 0, that a backward's `assert
        # dO.is_contiguous()` or `dO.stride() == O.stride()` refuses); one for each output that requires
        # grad (a Function may return several: NeMo's RnntLogProbs, its target and blank scores)
        torch = next((i.torch for i in self.inputs if i.torch), "__import__('torch')")
        return (f"(_out := {call}), {torch}.autograd.backward(_outs := [t for t in (_out if isinstance(_out, tuple) "
                f"else [_out]) if getattr(t, 'requires_grad', False)], [{torch}.ones_like(t) for t in _outs])")

    @property
    def at(self) -> str:
        """Where the wrapper is defined: `line 41`, or `line 41 of attorch.layer_norm_layer`."""
        if self.entry:
            return self.entry
        return f"line {self.line}" + (f" of {self.module}" if self.module else "")


@dataclass
class _Param:
    name: str
    tensor: bool = False
    rank: int = 0
    dtypes: list = None
    scalar: str = ""          # "int", "float", "bool", "dtype" (a torch.dtype: `out_dtype`), "str", "shape"
    kernel_param: str = ""    # the kernel parameter it is passed to as it is
    counts: str = ""          # the kernel parameter a tensor the wrapper computes from it by integer-keeping
    #                           arithmetic is passed to (`starts = sizes.cumsum(0) - sizes`)
    keyword: bool = False
    exact: bool = False       # the rank is known (`M, N = x.shape`, `x.dim() == 2`), not only a least one
    optional: bool = False    # it defaults to None
    dtype_from: str = ""      # "wrapper" (its code compares it), "kernel" (the kernel's code types it), "name"
    value: object = 128       # an int's made-up value (or the string tried, for one compared with strings)
    axis: bool = False        # an int that picks a dimension (`x.shape[dim]`, `x.size(dim)`)
    strs: list = None         # the strings the wrapper compares it with (`quant_type == "fp4"`)
    rank_from: str = ""       # why a rank nothing fixes is what it is
    floor: int = 0            # where a guess raised the rank: the least its reads prove
    unit_strides: list = None  # dimensions whose stride the wrapper compares with 1 (`x.stride(1) == 1`)
    tested: bool = False      # its dtype is the one the project's test passes

    def __post_init__(self):
        self.dtypes = self.dtypes or []
        self.strs = self.strs or []
        self.unit_strides = self.unit_strides or []


def wrappers_of(module, jit, key) -> list[tuple[str, object, int, set]]:
    """The module's functions (and autograd Functions' `forward`s) that launch the kernel whose
    kernel_key is `key`, then its functions that call one of those (`_layer_norm_fwd` calling the
    `@triton_op` that launches it, with the defaults the op's schema lacks): (name to call,
    function, line, the names it launches the kernel by: none for a caller), each group in the
    file's order."""
    direct = _launchers(module, jit, key)
    called = {call for call, _, _, _ in direct}
    # a Function trained through after the functions that launch the kernel themselves (the helper
    # its backward calls may be another Function's forward: fbgemm's jagged bmm)
    direct += [e for e in backward_entries(module, jit, key, called) if e[0] not in called]
    callers, first = [], []
    for name, obj in list(vars(module).items()):
        own = _class_callables(name, obj, module) if inspect.isclass(obj) and obj.__module__ == module.__name__ \
            else [(name, _function(obj, module))]
        for call, fn in own:
            reached = called & _calls_in(fn) if fn is not None and call not in called else set()
            if reached:
                # an autograd Function whose forward calls its own static method that launches
                # (`_matmul._call`): the Function is the entry, with the defaults its forward gives
                entry = call.endswith(".apply") and any(c.startswith(f"{name}.") for c in reached)
                (first if entry else callers).append((call, fn, fn.__code__.co_firstlineno, set()))
    return first + direct + sorted(callers, key=lambda t: t[2])


def backward_entries(module, jit, key, called: set) -> list[tuple[str, object, int, set]]:
    """Autograd Functions of the module whose `backward` launches the kernel, or calls a function of
    the module that does (`called`), as (`Name.apply`, its forward, line, {"backward"}): calling
    them trains through them (Call.backward)."""
    out = []
    for name, cls in list(vars(module).items()):
        if not (inspect.isclass(cls) and cls.__module__ == module.__name__ and callable(getattr(cls, "apply", None))):
            continue
        fwd, bwd = _static_function(cls, "forward", module), _static_function(cls, "backward", module)
        if fwd is None or bwd is None:
            continue
        # only where the forward does not reach it: a forward call launches it then
        forward, _ = _launch_names(fwd, jit, key)
        by_name, _ = _launch_names(bwd, jit, key)
        if (by_name or called & _calls_in(bwd)) and not (forward or called & _calls_in(fwd)):
            out.append((f"{name}.apply", fwd, fwd.__code__.co_firstlineno, {BACKWARD}))
    return out


# the launch names of a wrapper that reaches the kernel through its autograd Function's backward
BACKWARD = "backward"


def _calls_in(fn) -> set[str]:
    """What a function calls by a plain name: `f(...)`, `Fn.apply(...)`, `Cls.method(...)`."""
    from kinspect.compile.loader import function_tree

    tree = function_tree(fn)
    if tree is None:
        return set()
    return {name for n in ast.walk(tree) if isinstance(n, ast.Call) for name in [_called(n)] if name}


def _called(call: ast.Call) -> str | None:
    """The plain name a call names: `f` of `f(...)`, `Cls.method` of `Cls.method(...)`; else None."""
    f = call.func
    if _name(f):
        return f.id
    if isinstance(f, ast.Attribute) and _name(f.value):
        return f"{f.value.id}.{f.attr}"
    return None


def _launchers(module, jit, key) -> list[tuple[str, object, int, set]]:
    """The module's functions that launch the kernel: by its name first, then those that launch a
    kernel they are passed (`implementation[(M,)](...)`) in a way the kernel's parameters fit."""
    named, passed = [], []
    for name, obj in list(vars(module).items()):
        if inspect.isclass(obj) and obj.__module__ == module.__name__:
            candidates = _class_callables(name, obj, module)
        else:
            candidates = [(name, _function(obj, module))]
        for call, fn in candidates:
            if fn is None:
                continue
            by_name, by_param = _launch_names(fn, jit, key)
            if by_name or by_param:
                (named if by_name else passed).append((call, fn, fn.__code__.co_firstlineno, by_name | by_param))
    return sorted(named, key=lambda t: t[2]) + sorted(passed, key=lambda t: t[2])


def _launch_names(fn, jit, key) -> tuple[set, set]:
    """The names `fn` launches the kernel by: globals that are the kernel, and its own parameters it
    launches (kernl's `implementation[(M,)](output_ptr=out, ...)`: the wrapper of every kernel it is
    passed) where each keyword the launch passes is one of the kernel's parameters or options."""
    from kinspect.compile.file_launches import kernel_key
    from kinspect.compile.loader import function_tree, launch_of, launched_in

    names = launched_in(fn)
    by_name = {n for n in names if _key(fn.__globals__.get(n), kernel_key) == key}
    code = fn.__code__
    own = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    by_param = {n for n in names if n in own and n not in by_name}
    if by_param:
        tree = function_tree(fn)
        launches = [c for c in ast.walk(tree) if isinstance(c, ast.Call) and launch_of(c) in by_param] \
            if tree is not None else []
        by_param = {launch_of(c) for c in launches if _fits(c, jit)}
    return by_name, by_param


# what a launch passes besides the kernel's parameters
LAUNCH_OPTIONS = {"num_warps", "num_stages", "num_ctas", "maxnreg", "stream", "warmup", "enable_fp_fusion",
                  "launch_cooperative_grid", "waves_per_eu", "matrix_instr_nonkdim", "kpack", "grid"}


def _fits(call: ast.Call, jit) -> bool:
    """Whether a launch's arguments fit the kernel's parameters: its keywords name them (or launch
    options), and it passes no more of them by position than the kernel has."""
    from kinspect.compile.infer import params_of

    names = {p.name for p in params_of(jit)}
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    return len(call.args) <= len(names) and all(k.arg in names or k.arg in LAUNCH_OPTIONS for k in call.keywords)


def _class_callables(name: str, cls, module) -> list[tuple[str, object]]:
    """What of a class can be called with no instance, as (the call, its function): an autograd
    Function's `forward` as `Name.apply` (static or class method alike), and its static and class
    methods as `Name.method` (tritonkernels' `_matmul._call`, which `forward` calls). The function
    is the module's own under any decorators (kernl's `@staticmethod @custom_fwd(...) def forward`)."""
    out = []
    autograd = callable(getattr(cls, "apply", None))
    for attr, raw in vars(cls).items():
        if not isinstance(raw, (staticmethod, classmethod)):
            continue
        fn = _function(raw.__func__, module)
        if fn is None:
            continue
        if attr == "forward" and autograd:
            out.append((f"{name}.apply", fn))
        elif attr not in ("backward", "setup_context", "jvp", "vjp", "apply"):
            out.append((f"{name}.{attr}", fn))
    return out


def _static_function(cls, name: str, module):
    """The plain function of `cls`'s static or class method `name` (an autograd Function's forward or
    backward), as _function finds it; None where it has none."""
    raw = vars(cls).get(name)
    return _function(raw.__func__, module) if isinstance(raw, (staticmethod, classmethod)) else None


def _function(obj, module):
    """The Python function of the module's own that calling `obj` runs: the function itself, or the
    one a decorator wraps (`@input_guard` with functools.wraps, or one its closure holds), or a
    torch.library.triton_op's; None for anything else."""
    if not callable(obj) or inspect.isclass(obj):
        return None
    file = getattr(module, "__file__", None)
    if not file:
        return None
    file = os.path.realpath(file)
    fn = getattr(obj, "_init_fn", None) if type(obj).__name__ == "CustomOpDef" else obj
    found = None
    for _ in range(4):       # decorators inside decorators
        if not inspect.isfunction(fn):
            return found
        if os.path.realpath(fn.__code__.co_filename) == file:
            # the file's own, unless it is a decorator of the file's that says what it wraps
            found = fn
            fn = getattr(fn, "__wrapped__", None)
            continue
        inner = [c.cell_contents for c in fn.__closure__ or () if _filled(c) and inspect.isfunction(c.cell_contents)]
        fn = getattr(fn, "__wrapped__", None) or (inner[0] if len(inner) == 1 else None)
    return found


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _key(obj, kernel_key):
    try:
        return kernel_key(obj)
    except Exception:
        return None


def calls(module, jit, key, home=None, half: tuple[str, str] | None = None, tests=None) -> list[Call]:
    """For each wrapper of the kernel in `module`, its calls to try (one per shape plan), best first,
    to run in `home` (the kernel's module; default `module`). `half` is the project's own float type
    (project_dtype, project_half), for float inputs nothing else types. `tests` (test_calls.Tests):
    the project's tests, whose call of a wrapper is tried before any plan, and types the inputs
    that the plans make up where it passes them."""
    from kinspect.compile.file_launches import kernel_key

    out = []
    home = module if home is None else home
    ns = vars(home)
    where = {} if home is module else {"module": module.__name__, "file": os.path.realpath(module.__file__)}
    torch_name = next((k for k, v in ns.items() if getattr(v, "__name__", None) == "torch" and inspect.ismodule(v)),
                      None)
    found = wrappers_of(module, jit, key)
    launching = {func: names for func, _, _, names in found}
    torch = torch_name or "__import__('torch')"
    tested = {func: _tested(module, func, fn, tests, torch) for func, fn, _, _ in found}
    # the wrappers that launch it, read first: what a caller passes them on as it is, is what they read
    direct = {func: (fn, _params(fn, func, jit, names, half=half, tested=tested[func]))
              for func, fn, _, names in found if names}
    # a wrapper that launches the kernel it is passed is passed this one, by its name in `home`
    kernel = next((k for k, v in ns.items() if _key(v, kernel_key) == key), None)
    for func, (fn, params) in direct.items():
        for p in params or ():
            if p.name in launching[func]:
                p.tensor, p.scalar, p.value = False, "kernel", kernel
    for func, fn, line, _ in found:
        params = direct[func][1] if func in direct else _params(fn, func, jit, launching[func], direct, half,
                                                                  tested[func])
        if params is None:
            continue
        required = [p for p in params if not p.optional]
        # an autograd Function is there to be trained through: its inputs require grad, which its
        # forward may read (`save_stats=input.requires_grad`)
        grad = func.endswith(".apply")
        if tested[func] is not None:
            out.append(_test_call(tested[func], fn, params, func, line, torch, grad, where))
        # a string the wrapper compares (`if quant_type == "fp4": ... else: ...`) picks the kernel: one
        # call per value it compares, and one that matches none (its `else`)
        choice = next((p for p in required if p.strs), None)
        values = [None] if choice is None else choice.strs + [""]
        for i, plan in enumerate(PLANS):
            for value in values:
                if choice is not None:
                    choice.value = value
                out.append(Call(func, line, tuple(_input(p, plan, torch, grad) for p in required), i, **where))
            # where the wrapper compares a stride with 1 (`x.stride(1) == 1`: channel-last), its
            # tensors laid out that way too, after
            if any(_inner(p) is not None for p in required):
                out.append(Call(func, line, tuple(_input(p, plan, torch, grad, _inner(p)) for p in required), i,
                                **where))
            # with the optional tensors too (`residual=None`), after: they may choose the kernel, but
            # the projects' own calls mostly leave them None (measured: passing them first lost 7
            # values on corpus38's mamba, fla and flash-attention and gained 6 on attorch)
            if len(required) < len(params):
                out.append(Call(func, line, tuple(_input(p, plan, torch, grad) for p in params), i, **where))
    # a Function whose backward launches the kernel is trained through: `(_out := Fn.apply(...)).backward(...)`
    out = [replace(c, backward=True) if launching.get(c.func) == {BACKWARD} else c for c in out]
    if tests is not None and home is module:
        kernel_name = getattr(getattr(jit, "fn", jit), "__name__", "")
        file = os.path.realpath(module.__file__)
        entries = _entry_calls(tests, {kernel_name} | {f.split(".")[0] for f in launching}, torch,
                               {(file, f.split(".")[0]) for f in launching})
        # a kernel only a backward launches: the test's call trained through, as the Function's is
        backward = bool(launching) and all(names == {BACKWARD} for names in launching.values())
        out += [replace(c, backward=backward) for c in entries]
    # the tests' calls first (a wrapper's that reads all it must be passed, then the project's other
    # code the tests call, then a wrapper's with inputs made up beside the test's or taken by name
    # from another function's call), then every wrapper's first plan before any wrapper's second
    return sorted(out, key=lambda c: (c.plan, c.plan < 0 and not c.entry and
                                      (c.by_name or not all(i.tested for i in c.inputs))))


# the tests' calls of the project's other code that reaches the kernel, tried per kernel
MAX_ENTRIES = 3


def _entry_calls(tests, names: set, torch: str, wrappers: set) -> list[Call]:
    """The project's classes and functions other than the kernel's wrappers, called as its tests
    call them (`SimpleRMSNorm(768)(x)`), where the test's text gives all they must be passed."""
    try:
        found = tests.entries(names, torch, wrappers)
        out = [c for c in map(functools.partial(_entry_call, tests, torch), found) if c is not None]
    except Exception:        # a test's text kinspect cannot follow: the wrappers' calls decide
        return []
    return out[:MAX_ENTRIES]


def _entry_call(tests, torch: str, tc) -> Call | None:
    """An entry's call as the test makes it; None where an argument it must be passed is not read."""
    d, inputs, skipped = tc.entry, [], False
    for name, p in d.call.parameters.items():
        v = tc.args.get(name)
        if v is not None and v.kind != "items":       # a list of tensors: not rebuilt
            inputs.append(_from_test(name, v, tc, torch, skipped or p.kind == p.KEYWORD_ONLY))
        elif p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return None
        else:
            skipped = True
    file = str(tests.root / d.file) if tests.root is not None else ""
    return Call(d.name, d.line, tuple(inputs), -1, module=d.module, file=file, test=tc.at, entry=d.at, made=tc.made,
                node=tc.node)


# how an input, or its dtype or rank, taken from the project's test says so
TESTED = "as the project's test passes it"


def _tested(module, func: str, fn, tests, torch: str):
    """The call of the wrapper that reads most of its arguments in the project's tests, by any name
    the module has for it (`_attention.apply`, `attention = _attention.apply`); None where none."""
    if tests is None:
        return None
    ns = vars(module)
    head, _, attr = func.partition(".")
    obj = getattr(ns.get(head), attr, None) if attr else ns.get(head)
    names = {func} | {k for k, v in ns.items() if obj is not None and (v is obj or attr and _equal(v, obj))}
    try:
        found = tests.calls(fn, names, torch)
    except Exception:        # a test's text kinspect cannot follow: the plans decide
        return None
    return found[0] if found and found[0].read() else None


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return False


def _test_call(tc, fn, params: list, func: str, line: int, torch: str, grad: bool, where: dict) -> Call:
    """The wrapper called as the project's test calls it: each argument the test's text gives, as it
    gives it; the others made up as plan 0 makes them (typed by the test where it says)."""
    by_name = {p.name: p for p in params}
    inputs, skipped = [], False
    signature = inspect.signature(fn).parameters
    for name in _own(func, list(signature)):
        sp, value, p = signature[name], tc.args.get(name), by_name.get(name)
        keyword = skipped or sp.kind == sp.KEYWORD_ONLY
        if value is not None and value.kind != "items":
            inputs.append(_from_test(name, value, tc, torch, keyword or (p is not None and p.keyword)))
        elif p is not None and not p.optional:
            inputs.append(_input(p, PLANS[0], torch, grad))
        else:
            skipped = True
    return Call(func, line, tuple(inputs), -1, **where, test=tc.at, by_name=bool(tc.via), node=tc.node)


def _from_test(name: str, v, tc, torch: str, keyword: bool) -> Input:
    why = f"{TESTED} ({tc.at})"
    if v.kind == "tensor":
        sizes = "x".join(map(str, v.shape)) or "1"
        return Input(name, v.text, f"*{v.dtype}:{sizes}", f"a tensor {why}", keyword, tuple(v.shape), v.dtype, torch,
                     v.grad, tested=True)
    if v.kind == "dtype":
        return Input(name, v.text, v.dtype, f"a dtype {why}", keyword, tested=True)
    if v.kind == "object":
        return Input(name, v.text, f"object:{v.value.name}", f"an instance of the project's {v.value.name} {why}",
                     keyword, tested=True)
    x = v.value
    spec = spec_of(x) if isinstance(x, (bool, int, float)) else f"str:{x!r}" if isinstance(x, str) else f"value:{x!r}"
    return Input(name, v.text, spec, f"a value {why}", keyword, tested=True)


def _params(fn, func: str, jit, launched: set, callees: dict | None = None,
            half: tuple[str, str] | None = None, tested=None) -> list[_Param] | None:
    from kinspect.compile.loader import function_tree

    tree = function_tree(fn)
    if tree is None:
        return None
    node = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if node is None:
        return None
    args = node.args
    positional = args.posonlyargs + args.args
    defaults = len(args.defaults)
    wanted = positional[:len(positional) - defaults] if defaults else positional
    wanted += [a for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    # parameters that default to None: a tensor the caller may pass (`residual=None`), which can
    # choose the kernel the wrapper launches
    optional = [a for a, d in zip(positional[len(positional) - defaults:], args.defaults) if _is_none(d)]
    optional += [a for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None and _is_none(d)]
    wanted = _own(func, wanted)
    if args.vararg is not None and not wanted:
        return None
    params = {a.arg: _Param(a.arg) for a in wanted}
    params.update({a.arg: _Param(a.arg, optional=True) for a in optional})
    keyword = {a.arg for a in args.kwonlyargs} | {a.arg for a in optional}
    for a in wanted + optional:
        _annotation(params[a.arg], a.annotation)
    _read_uses(node, params)
    _passed_on(node, params, callees or {})
    _kernel_params(node, params, jit, launched)
    if BACKWARD in launched:
        _saved_params(fn, node, params, jit)
    _kernel_dtypes(params, jit)
    if tested is not None:
        _test_types(params, tested)
    for p in params.values():
        p.keyword = p.name in keyword
    named = _half_named(node, fn.__code__.co_firstlineno - 1)
    _share_float_dtype(params, (named[0], f"the one half type the wrapper's code names (line {named[1]})")
                       if named else half)
    return [p for p in params.values() if not p.optional or p.tensor]


def _test_types(params: dict, tc) -> None:
    """Each tensor parameter the project's test passes (test_calls.TestCall) takes the test's dtype,
    and its rank where no check fixes one: a check of the wrapper's that allows that dtype keeps its
    list, the test's first."""
    for name, p in params.items():
        v = tc.args.get(name)
        dtype = v.dtype if v is not None and v.kind == "tensor" else tc.dtypes.get(name, "")
        if not dtype or dtype not in TENSOR_DTYPES:
            continue
        if p.dtype_from == "wrapper" and p.dtypes and dtype not in p.dtypes:
            continue
        p.tensor = True
        p.dtypes = [dtype] + [d for d in p.dtypes if d != dtype] if p.dtype_from == "wrapper" else [dtype]
        p.dtype_from, p.tested = f"{TESTED} ({tc.at})", True
        if v is not None and v.kind == "tensor" and v.shape and not p.exact:
            p.rank, p.floor, p.rank_from = len(v.shape), len(v.shape), f"{TESTED} ({tc.at})"


def _own(func: str, args: list) -> list:
    """The parameters a call of `func` fills: not a class method's cls nor an autograd Function's ctx."""
    while "." in func and args and getattr(args[0], "arg", args[0]) in ("cls", "ctx", "self"):
        args = args[1:]
    return args


# what a wrapper's parameter takes from the one of another wrapper it is passed to as it is
INHERITED = ("tensor", "rank", "exact", "dtype_from", "scalar", "axis", "kernel_param", "value", "rank_from", "floor",
             "tested")


def _passed_on(fn: ast.AST, params: dict, callees: dict) -> None:
    """A parameter the wrapper's code does nothing with but pass on as it is to a wrapper that
    launches the kernel (an autograd Function's forward calling its `_call(a, b, ...)`) is what that
    wrapper reads it as: a tensor of its rank and dtype, an int, a string it compares."""
    for n in ast.walk(fn):
        if not isinstance(n, ast.Call):
            continue
        name = _called(n)
        callee, theirs = callees.get(name, (None, None))
        if not theirs:
            continue
        by_name = {p.name: p for p in theirs}
        order = _own(name, list(inspect.signature(callee).parameters))
        for target, arg in list(zip(order, n.args)) + [(k.arg, k.value) for k in n.keywords if k.arg]:
            mine, source = params.get(_name(arg)), by_name.get(target)
            # a tensor by its annotation alone (`q: torch.Tensor`) is still what the callee reads it as
            if mine is None or source is None or mine.scalar or (mine.tensor and (mine.rank or mine.dtypes)):
                continue
            for field in INHERITED:
                setattr(mine, field, getattr(source, field))
            mine.dtypes, mine.strs = list(source.dtypes), list(source.strs)
            mine.unit_strides = list(source.unit_strides)


# `torch.float16` / `torch.half` and `torch.bfloat16` in a project's text, its kernels' `tl.float16` and
# `tl.bfloat16` (what they cast to before a tl.dot), and its `.half()` and `.bfloat16()` calls
HALF_RE = {"fp16": re.compile(rb"\b(?:torch|tl)\.(?:float16|half)\b|\.half\(\)"),
           "bf16": re.compile(rb"\b(?:torch|tl)\.bfloat16\b|\.bfloat16\(\)")}
# how much more often the project must name one half type than the other for it to be its own
HALF_MAJORITY = 2


def project_half(files) -> tuple[str, str] | None:
    """The half type a project's own code and tests name most, at least twice as often as the
    other (its tests' `dtype=torch.float16`): (the type, why). None where neither leads so.
    `files`: (path, bytes)."""
    counts = {"fp16": 0, "bf16": 0}
    for _, text in files:
        for short, pattern in HALF_RE.items():
            counts[short] += len(pattern.findall(text))
    (top, n), (_, m) = sorted(counts.items(), key=lambda kv: -kv[1])
    if n < 3 or n < HALF_MAJORITY * m:
        return None
    return top, f"the half type the project's code and tests name most ({n} times, the other {m})"


# a list or tuple of torch float dtypes, as tests parametrize them: `[torch.float32, torch.bfloat16]`
DTYPE_LIST_RE = re.compile(rb"[\[(]\s*torch\.(float16|half|bfloat16|float32|float)\b"
                           rb"(?:\s*,\s*torch\.\w+)*\s*,?\s*[\])]")


def project_dtype(files) -> tuple[str, str] | None:
    """The float type a project's tests try first: the first of their lists of dtypes
    (`@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])`), where one leads the others
    at least twice over and 3 times: (the type, why). None where none leads so. `files`: (path, bytes),
    each path relative to the project's folder (loader.project_files)."""
    counts = {"fp16": 0, "bf16": 0, "fp32": 0}
    for path, text in files:
        if not is_test_file(path):
            continue
        for m in DTYPE_LIST_RE.finditer(text):
            counts[TORCH_SHORT[m.group(1).decode()]] += 1
    (top, n), (_, m), _ = sorted(counts.items(), key=lambda kv: -kv[1])
    if n < 3 or n < HALF_MAJORITY * m:
        return None
    return top, f"the float type the project's tests try first ({n} of their dtype lists, the next {m})"


def _half_named(fn: ast.AST, offset: int) -> tuple[str, int] | None:
    """The one half-precision type the wrapper's code names (`torch.empty(..., dtype=torch.float16)`,
    `.to(torch.bfloat16)`) and its first line: the project's activations are of that type. None
    where it names none, or both."""
    found = {}
    for n in ast.walk(fn):
        short = _torch_dtype(n) if isinstance(n, ast.Attribute) else None
        if short in ("fp16", "bf16"):
            found.setdefault(short, n.lineno + offset)
    return next(iter(found.items())) if len(found) == 1 else None


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


# names of tensors kept in fp32 whatever the activations are: scales and statistics
FP32_NAME_RE = re.compile(r"scale|(^|_)s$|lse|rstd|mean|var$|(^|_)m$|norm_factor|amax")


def _share_float_dtype(params: dict, half: tuple[str, str] | None = None) -> None:
    """Float tensors nothing types take the dtype of the one the wrapper checks (`q.dtype ==
    torch.bfloat16`: q, k and v are one dtype, as tl.dot needs), else `half` (the one half type the
    wrapper names, else its project's float type: (type, why)), else bf16; scales and
    statistics by their names fp32."""
    typed = [p for p in params.values() if p.tensor and p.dtypes and (p.dtype_from == "wrapper" or p.tested)
             and p.dtypes[0][:1] not in "iu"]
    typed.sort(key=lambda p: p.dtype_from != "wrapper")
    if half and len(half) > 2 and half[2]:
        # made again in another float type after a compile failed: what the kernel's code guessed too
        for p in params.values():
            if p.tensor and p.dtype_from == "kernel" and p.dtypes and p.dtypes[0][:2] in ("fp", "bf"):
                p.dtypes, p.dtype_from = [], ""
    for p in params.values():
        if p.tensor and not p.dtypes:
            if FP32_NAME_RE.search(p.name.lower()):
                p.dtypes, p.dtype_from = ["fp32"], "name"
            elif typed:
                p.dtypes, p.dtype_from = [typed[0].dtypes[0]], f"shared with {typed[0].name}"
            elif half:
                p.dtypes, p.dtype_from = [half[0]], half[1]


def _annotation(p: _Param, ann) -> None:
    if ann is None:
        return
    text = ast.unparse(ann)
    if "Tensor" in text:
        p.tensor = True
    elif text in ("int", "float", "bool"):
        p.scalar = text
    elif text in ("torch.dtype", "dtype"):
        p.scalar = "dtype"


def _name(node) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _torch_dtype(node) -> str | None:
    if isinstance(node, ast.Attribute) and _name(node.value) in ("torch",):
        return TORCH_SHORT.get(node.attr)
    return None


def _read_uses(fn: ast.AST, params: dict) -> None:
    """Tensor-ness, rank, dtypes and scalar kinds from what the wrapper's code does with each parameter."""
    checks = _checks(fn)
    ends = {}     # per tensor, the farthest size read from its start and from its end
    sized = {}    # per parameter unpacked (`M, K = shape`) or indexed (`shape[1]`): the sizes that proves
    for n in ast.walk(fn):
        if isinstance(n, ast.Attribute) and _name(n.value) in params:
            p = params[n.value.id]
            # a torch.dtype has some of a tensor's attributes too (`w_dtype.is_floating_point`)
            dtype_like = p.scalar == "dtype" or (n.attr in DTYPE_ATTRS and p.name.lower().endswith("dtype"))
            if n.attr in TENSOR_ATTRS and not dtype_like:
                p.tensor = True
        read = _dim_read(n)
        if read is not None:
            base, index = read
            # x.shape[3], x.stride(-3): at least that many dimensions
            if base in params and _int(index) is not None:
                v = _int(index)
                _at_least(params[base], v + 1 if v >= 0 else -v)
                if not (isinstance(n, ast.Call) and n.func.attr == "stride"):
                    first, last = ends.get(base, (-1, 0))
                    ends[base] = (max(first, v), last) if v >= 0 else (first, max(last, -v))
            # an int parameter that indexes a shape picks a dimension: `x.shape[dim]`, `x.size(dim)`
            if _name(index) in params:
                params[index.id].axis = True
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], (ast.Tuple, ast.List)) \
                and not any(isinstance(e, ast.Starred) for e in n.targets[0].elts):
            base = _shape_of(n.value)
            if base in params:
                params[base].tensor = True
                params[base].rank = len(n.targets[0].elts)
                params[base].exact = True
            elif _name(n.value) in params:
                sized[n.value.id] = max(sized.get(n.value.id, 0), len(n.targets[0].elts))
        if isinstance(n, ast.Subscript) and _name(n.value) in params and _int(n.slice) is not None \
                and _int(n.slice) >= 0:
            sized[n.value.id] = max(sized.get(n.value.id, 0), _int(n.slice) + 1)
        if isinstance(n, ast.Compare):
            _compare(n, params, checks.get(id(n)))
        # len(normalized_shape), math.prod(normalized_shape): a shape, a sequence of sizes
        if isinstance(n, ast.Call) and n.args and _name(n.args[0]) in params and \
                (_name(n.func) in ("len", "prod") or (isinstance(n.func, ast.Attribute) and n.func.attr == "prod"
                                                     and _name(n.func.value) in ("math", "np", "numpy"))):
            p = params[n.args[0].id]
            if not p.tensor and p.scalar in ("", "int"):
                p.scalar = "shape"
        # `if causal:`, `3 if causal else 1`, `not causal`: a flag
        test = n.test if isinstance(n, (ast.If, ast.IfExp, ast.While)) else \
            n.operand if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) else None
        if test is not None and _name(test) in params and not params[test.id].tensor:
            params[test.id].scalar = params[test.id].scalar or "bool"
        # ~mask: a tensor of booleans (invert is defined on integer and bool tensors; a float's fails)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Invert) and _name(n.operand) in params:
            p = params[n.operand.id]
            p.tensor = True
            if not p.dtypes:
                p.dtypes, p.dtype_from = ["i1"], "wrapper"
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in (
                "empty_like", "zeros_like", "ones_like", "randn_like") and n.args and _name(n.args[0]) in params:
            params[n.args[0].id].tensor = True
    # a parameter the wrapper unpacks or indexes by a number, and uses as no tensor: a sequence of
    # sizes (stk's `M, K = shape`, `shape[1] == rhs.shape[0]`)
    for name, count in sized.items():
        p = params[name]
        if not p.tensor and p.scalar in ("", "int", "shape"):
            p.scalar, p.rank = "shape", max(p.rank, count)
    # sizes read from the start and from the end are of different dimensions: `q.shape[1]` (heads)
    # and `q.shape[-1]` (head size) make q at least 3-D
    for base, (first, last) in ends.items():
        p = params[base]
        if first >= 1 and last >= 1 and not p.exact and p.rank < first + 1 + last:
            p.floor = p.rank
            p.rank = first + 1 + last
            p.rank_from = f"at least: it reads sizes {first} from its start and {last} from its end"


def _dim_read(node) -> tuple[str | None, ast.expr] | None:
    """(the tensor's name or None, the index) of `x.shape[i]`, `x.size(i)`, `x.stride(i)`."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        return _name(node.value.value), node.slice
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("size", "stride") \
            and node.args:
        return _name(node.func.value), node.args[0]
    return None


def _shape_of(node) -> str | None:
    """`x` of `x.shape` / `x.size()`."""
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return _name(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" and not node.args:
        return _name(node.func.value)
    return None


def _may_take(p: _Param, rank: int) -> bool:
    """Whether `p`, whose rank nothing fixes, may take the fixed `rank` of a tensor whose strides the
    launch splats beside its own: one its reads allow (not below what they prove). It replaces a
    guess from sizes read at both ends (`k.size(3)` and `k.shape[-1]` can be one dimension of a 4-D k)."""
    return not p.exact and (p.floor or p.rank) <= rank


def _at_least(p: _Param, rank: int) -> None:
    p.tensor = True
    if not p.exact:
        p.rank = max(p.rank, rank)


def _checks(fn: ast.AST) -> dict:
    """The comparisons the wrapper requires, by id: True for those an `assert` wants to hold, False
    for those an `if` that raises wants not to. The others choose a branch (`x.unsqueeze(0) if
    x.ndim == 1 else x`) and require nothing."""
    out = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assert):
            test, holds = n.test, True
        elif isinstance(n, ast.If) and any(isinstance(b, ast.Raise) for b in n.body):
            test, holds = n.test, False
        else:
            continue
        for part in test.values if isinstance(test, ast.BoolOp) else [test]:
            if isinstance(part, ast.Compare):
                out[id(part)] = holds
    return out


def _compare(n: ast.Compare, params: dict, holds: bool | None = None) -> None:
    """What a comparison says of the parameters it reads; `holds` is whether the wrapper requires it
    to hold (an assert), not to (an `if` that raises), or neither (None: a branch)."""
    left = n.left
    # x.dtype == torch.float16, x.dtype in (torch.float16, torch.bfloat16)
    if isinstance(left, ast.Attribute) and left.attr == "dtype" and _name(left.value) in params:
        p = params[left.value.id]
        p.tensor = True
        for op, right in zip(n.ops, n.comparators):
            found = [d for d in map(_torch_dtype, _compared(op, right)) if d]
            p.dtypes += found
            p.dtype_from = p.dtype_from or ("wrapper" if p.dtypes else "")
    # out_dtype in (torch.bfloat16, torch.float32), out_dtype == torch.float16: a dtype the wrapper takes;
    # quant_type == "fp4", mode in ("max", "mean"): a string
    if _name(left) in params and not params[left.id].tensor:
        p = params[left.id]
        for op, right in zip(n.ops, n.comparators):
            options = _compared(op, right, negated=True)
            found = [d for d in map(_torch_dtype, options) if d]
            if found:
                p.scalar, p.dtypes = "dtype", p.dtypes + found
            said = [o.value for o in options if isinstance(o, ast.Constant) and isinstance(o.value, str)]
            if said and p.scalar in ("", "str"):
                p.scalar, p.strs = "str", p.strs + [x for x in said if x not in p.strs]
    # x.stride(1) == 1, x.stride(2) != 1: a layout the wrapper tells apart (channel-last)
    for a, b in zip([left] + n.comparators[:-1], n.comparators):
        for side, other in ((a, b), (b, a)):
            read = _dim_read(side)
            if read and isinstance(side, ast.Call) and side.func.attr == "stride" and read[0] in params \
                    and _int(read[1]) is not None and isinstance(other, ast.Constant) and other.value == 1:
                p = params[read[0]]
                if _int(read[1]) not in p.unit_strides:
                    p.unit_strides.append(_int(read[1]))
    # x.dim() == 4, x.ndim == 3, len(x.shape) == 2
    base = None
    if isinstance(left, ast.Call) and isinstance(left.func, ast.Attribute) and left.func.attr == "dim":
        base = _name(left.func.value)
    elif isinstance(left, ast.Attribute) and left.attr == "ndim":
        base = _name(left.value)
    elif isinstance(left, ast.Call) and _name(left.func) == "len" and left.args:
        base = _shape_of(left.args[0])
    if base in params and len(n.ops) == 1 and isinstance(n.comparators[0], ast.Constant):
        params[base].tensor = True
        # the rank a check requires; a branch on the rank (`if x.ndim == 1:`) fixes none
        if (holds is True and isinstance(n.ops[0], ast.Eq)) or (holds is False and isinstance(n.ops[0], ast.NotEq)):
            params[base].rank = int(n.comparators[0].value)
            params[base].exact = True
    # a scalar compared with a number: its kind
    if _name(left) in params:
        for right in n.comparators:
            if isinstance(right, ast.Constant) and isinstance(right.value, (int, float)) and \
                    not isinstance(right.value, bool):
                p = params[left.id]
                p.scalar = p.scalar or ("float" if isinstance(right.value, float) else "int")


def _compared(op, right, negated: bool = False) -> list:
    """The values a comparison names: `== v`, `is v`, `in (v, w)`; with `negated`, `!= v` and
    `not in (v, w)` as well (a string the code tells apart names a value it takes)."""
    eq, member = (ast.Eq, ast.Is), (ast.In,)
    if negated:
        eq, member = eq + (ast.NotEq, ast.IsNot), member + (ast.NotIn,)
    if isinstance(op, member) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        return list(right.elts)
    return [right] if isinstance(op, eq) else []


def _kernel_params(fn: ast.AST, params: dict, jit, launched: set) -> None:
    """Which kernel parameter each wrapper parameter is passed to as it is, at `kernel[grid](...)`
    (`launched`: the names the wrapper calls the kernel by)."""
    from kinspect.compile.infer import params_of
    from kinspect.compile.loader import launch_of

    names = [p.name for p in params_of(jit)]
    aliases = _aliases(fn, params)
    computed = _computed_from(fn, params)
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) and launch_of(n) in launched):
            continue
        passed = [(names[i], a) for i, a in enumerate(n.args)
                  if i < len(names) and not any(isinstance(b, ast.Starred) for b in n.args[:i])]
        passed += [(k.arg, k.value) for k in n.keywords if k.arg]
        for kernel_param, a in passed:
            if _name(a) in params:
                params[a.id].kernel_param = kernel_param
            # a local name that is one of several parameters as they are (stk's `a_offsets = offsets`,
            # `if trans_A: a_offsets = offsets_t`): each of them, where nothing else passes it
            for name in aliases.get(_name(a), ()):
                params[name].kernel_param = params[name].kernel_param or kernel_param
            source = computed.get(_name(a))
            if source and not params[source].kernel_param:
                params[source].counts = params[source].counts or kernel_param
        _splat_ranks([params.get(_splatted(a)) for a in n.args])


def _saved_params(fn, node: ast.AST, params: dict, jit) -> None:
    """For an autograd Function whose backward launches the kernel: which kernel parameter each forward
    parameter it saves is passed to, through `ctx.save_for_backward(a, b)` and `a, b = ctx.saved_tensors`
    (NeMo's RnntLogProbs saves its targets and lengths, which its backward's kernel reads as integers)."""
    from kinspect.compile.file_launches import kernel_key
    from kinspect.compile.loader import function_tree

    owner = sys.modules.get(fn.__module__)
    cls = getattr(owner, fn.__qualname__.split(".")[0], None) if "." in fn.__qualname__ else None
    bwd = _static_function(cls, "backward", owner) if inspect.isclass(cls) else None
    tree = function_tree(bwd) if bwd is not None else None
    if tree is None:
        return
    saved = next(([_name(a) for a in n.args] for n in ast.walk(node) if isinstance(n, ast.Call) and
                  isinstance(n.func, ast.Attribute) and n.func.attr == "save_for_backward"), [])
    unpacked = next(([_name(t) for t in n.targets[0].elts] for n in ast.walk(tree) if isinstance(n, ast.Assign)
                     and isinstance(n.targets[0], (ast.Tuple, ast.List)) and isinstance(n.value, ast.Attribute)
                     and n.value.attr == "saved_tensors"), [])
    mapped = {b: params[a] for a, b in zip(saved, unpacked) if a in params and b}
    if not mapped:
        return
    _read_uses(tree, mapped)         # `B, T, V = x.shape` in backward: its rank too
    names, by_param = _launch_names(bwd, jit, kernel_key(jit))
    before = {id(p): p.kernel_param for p in mapped.values()}
    _kernel_params(tree, mapped, jit, names | by_param)
    for p in mapped.values():        # the forward's own launch, where it has one, comes first
        p.kernel_param = before[id(p)] or p.kernel_param


def _aliases(fn: ast.AST, params: dict) -> dict:
    """Local names the wrapper assigns a parameter to as it is (`a = x`, `a, b = x, y`), and never
    anything else: name -> those parameters."""
    out, other = {}, set()
    for n in ast.walk(fn):
        if not isinstance(n, ast.Assign):
            continue
        for t in n.targets:
            pairs = [(t, n.value)]
            if isinstance(t, (ast.Tuple, ast.List)) and isinstance(n.value, (ast.Tuple, ast.List)) and \
                    len(t.elts) == len(n.value.elts):
                pairs = list(zip(t.elts, n.value.elts))
            for target, value in pairs:
                if not isinstance(target, ast.Name) or target.id in params:
                    continue
                if _name(value) in params:
                    out.setdefault(target.id, set()).add(value.id)
                else:
                    other.add(target.id)
    return {k: v for k, v in out.items() if k not in other}


# what keeps an integer tensor's values integers: `x.cumsum(0)`, `torch.cumsum(x, 0)`, `F.pad(x, (1, 0))`,
# `x.contiguous()`, `x.view(-1)`, and + - * // between them and numbers
KEEPS_INTEGERS = {"cumsum", "pad", "contiguous", "clone", "view", "reshape", "flatten", "long", "int", "cuda", "to",
                  "repeat_interleave", "diff", "cummax", "flip", "unsqueeze", "squeeze"}


def _computed_from(fn: ast.AST, params: dict) -> dict:
    """Local names the wrapper assigns once, from one tensor parameter and numbers only, through what
    KEEPS_INTEGERS (xtuner's grouped GEMM: `group_start = size_per_group.cumsum(0) - size_per_group`):
    name -> that parameter."""
    out, seen = {}, set()

    def source(node) -> str | None:
        found = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                f = n.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if name not in KEEPS_INTEGERS:
                    return None
            elif isinstance(n, ast.BinOp) and not isinstance(n.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
                return None
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                if n.id in params and not params[n.id].scalar:
                    found.add(n.id)
                elif n.id in out:
                    found.add(out[n.id])
        return next(iter(found)) if len(found) == 1 else None

    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            name = n.targets[0].id
            if name in params or name in seen:
                out.pop(name, None)
                continue
            seen.add(name)
            found = source(n.value) if not isinstance(n.value, ast.Name) else None
            if found:
                out[name] = found
    return out


def _splatted(node) -> str | None:
    """`x` of a launch argument `*x.stride()`, `*x.shape`, `*x.size()`."""
    if not isinstance(node, ast.Starred):
        return None
    v = node.value.func if isinstance(node.value, ast.Call) else node.value
    return v.value.id if isinstance(v, ast.Attribute) and v.attr in ("stride", "shape", "size") and _name(v.value) \
        else None


def _splat_ranks(splatted: list) -> None:
    """Tensors whose strides (or sizes) a launch splats (`*q.stride(), *k.stride(), *v.stride()`)
    fill the kernel's parameters one per dimension: one whose rank nothing fixes has the rank of
    those whose rank is fixed (kernl's attention: q is 4-D by `batch, heads, m, d = q.size()`, so are
    v and output)."""
    fixed = [p for p in splatted if p is not None and p.tensor and p.exact]
    if len({p.rank for p in fixed}) != 1:
        return
    for p in splatted:
        if p is not None and not p.exact and _may_take(p, fixed[0].rank):
            p.tensor, p.rank = True, fixed[0].rank
            p.rank_from = f"as {fixed[0].name}'s, whose strides the launch splats beside its own"


def _kernel_dtypes(params: dict, jit) -> None:
    """For a tensor passed to the kernel as it is, the element type the kernel's own code gives that
    parameter, where the code says one (not a habit or nothing)."""
    from kinspect.compile.assume import assume, borrowed

    wanted = [x for p in params.values() for x in (p.kernel_param, p.counts) if x]
    if not wanted:
        return
    try:
        assumed = {a.name: a for a in assume(jit, wanted, {})}
    except Exception:
        return
    for p in params.values():
        counted = assumed.get(p.counts)
        if counted is not None and counted.kind == "pointer" and counted.spec[1:2] in ("i", "u") and not p.dtypes \
                and not p.kernel_param:
            # the kernel reads integers from what the wrapper computes from it: integers too (int64,
            # torch's own, as cumsum makes of any)
            p.tensor = True
            p.dtypes.append("i64")
            p.dtype_from = (f"integers: the wrapper computes {p.counts}'s argument from it, which the kernel's "
                            f"code reads as integers")
        a = assumed.get(p.kernel_param)
        if a is None:
            continue
        if a.kind == "pointer":
            p.tensor = True
            # a type of its own: not a habit, nor another parameter's, which is a made-up input here too
            if not p.dtypes and not borrowed(a):
                p.dtypes.append(a.spec[1:])
                p.dtype_from = "kernel"
        elif not p.tensor and not p.scalar:
            # a scalar passed on as it is: of the kind the kernel's code gives that parameter
            p.scalar = {"int": "int", "pow2": "int", "loop": "int", "float": "float", "bool": "bool"}.get(a.kind, "")
            if p.scalar == "int" and isinstance(a.value, int) and not isinstance(a.value, bool):
                p.value = a.value


def _inner(p: _Param) -> int | None:
    """The dimension other than the last whose stride the wrapper compares with 1, where its rank is
    fixed: the one to lay out innermost."""
    if not (p.tensor and p.exact):
        return None
    return next((d % p.rank for d in p.unit_strides if -p.rank <= d < p.rank and d % p.rank != p.rank - 1), None)


def _input(p: _Param, plan: dict, torch: str, grad: bool = False, inner: int | None = None) -> Input:
    if p.tensor:
        dtype = p.dtypes[0] if p.dtypes else FLOAT_DEFAULT
        if dtype not in TENSOR_DTYPES:
            dtype = FLOAT_DEFAULT
        # where nothing fixes the rank: rows of a hidden size, or a vector of indices or offsets
        # (`cu_seqlens`, `positions`) for integers
        index = dtype[:1] in "iu"
        rank = p.rank if p.exact else max(p.rank, 1 if index else 2)
        shape = plan.get(rank) or (4,) * rank
        source = {"wrapper": "one the wrapper compares it with", "kernel": f"as the kernel's code gives {p.kernel_param}",
                  "name": "fp32 by its name (a scale or statistic)"}.get(p.dtype_from, p.dtype_from)
        why = (f"its dtype {dtype}: " + (source or "nothing says more") + f"; rank {rank}" +
               ("" if p.exact else f" ({p.rank_from or 'nothing fixes it' + ('; integers: indices' * index)})"))
        grad = grad and dtype[:1] in "fb"
        why += "; it requires grad (the input of an autograd Function)" if grad else ""
        if inner is not None:
            why += f"; dimension {inner} innermost (the wrapper compares {p.name}.stride({inner}) with 1)"
        guessed = not p.tested and p.dtype_from not in ("wrapper", "name") and \
            not p.dtype_from.startswith("shared with")
        return replace(_tensor(p.name, shape, dtype, torch, f"a tensor the wrapper takes; {why}", p.keyword, grad,
                               inner), guessed=guessed, dtype_tested=p.tested)
    name = p.name.lower()
    if p.scalar == "dtype" or (not p.scalar and name.endswith("dtype")):
        dtype = p.dtypes[0] if p.dtypes and p.dtypes[0] in TENSOR_DTYPES else FLOAT_DEFAULT
        why = "the first the wrapper compares it with" if p.dtypes else "nothing says more"
        return Input(p.name, f"{torch}.{TENSOR_DTYPES[dtype]}", dtype, f"a dtype the wrapper takes: {dtype}, {why}",
                     p.keyword)
    if p.scalar == "float" or (not p.scalar and name in FLOAT_NAMES) or name.endswith(("_eps", "_scale")):
        return Input(p.name, "1e-06" if "eps" in name else "0.125", "fp32", "a float the wrapper takes",
                     p.keyword)
    if p.scalar == "bool" or name.startswith(("is_", "use_", "has_", "return_", "enable_")):
        return Input(p.name, "False", "i1:0", "a flag the wrapper takes", p.keyword)
    if p.scalar == "kernel":
        return Input(p.name, str(p.value), f"kernel:{p.value}",
                     "the kernel itself: the wrapper launches the kernel it is passed", p.keyword)
    if p.scalar == "shape":
        sizes = list(plan.get(p.rank or 1) or (4,) * p.rank)
        why = f"{p.rank} sizes: it unpacks or indexes them" if p.rank else \
            "it takes len() or prod() of it: of one dimension"
        return Input(p.name, repr(tuple(sizes)) if p.rank else repr(sizes), f"shape:{'x'.join(map(str, sizes))}",
                     f"a shape the wrapper takes ({why})", p.keyword)
    if p.scalar == "str":
        value = p.value if isinstance(p.value, str) else p.strs[0]
        why = "one the wrapper compares it with" if value else "one that none of the wrapper's comparisons match"
        return Input(p.name, repr(value), f"str:{value!r}", f"a string the wrapper takes: {why}", p.keyword)
    if p.axis and not p.tensor:
        return Input(p.name, "-1", "i32:-1", "an int the wrapper takes: it picks a dimension (the last)", p.keyword)
    return Input(p.name, str(p.value), f"i32:{p.value}", "an int the wrapper takes", p.keyword)


# What a check may compute to be evaluated again in the wrapper's frame: reads of shapes, sizes and
# dtypes and arithmetic on them, nothing that could change a thing
_READS = (ast.Expression, ast.Name, ast.Load, ast.Constant, ast.Tuple, ast.List, ast.Attribute, ast.Subscript,
          ast.Slice, ast.BinOp, ast.UnaryOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
          ast.USub, ast.UAdd, ast.Call)
_READ_METHODS = ("size", "stride", "dim", "numel", "element_size")
_BUILTINS = {"len": len, "int": int, "tuple": tuple, "max": max, "min": min}


def repaired(call: Call, failure, file) -> Call | None:
    """The call again with one made-up input changed so that the wrapper's own check that stopped
    it holds: `assert w.shape == (N,)`, `assert x.size(-1) == feat_size`, `assert b.dtype ==
    a.dtype`, `if x.shape[-1] != w.shape[0]: raise ValueError(...)`, with the other side's value as
    the wrapper computed it then (its frame's names). The change is said in that input's `why`.
    None where the failure is no such check on an input of this call (or changes nothing)."""
    # the wrapper's own frame: the check may be in a function it calls (`_layer_norm_fwd` calling the
    # op that asserts), whose names are then the wrapper's inputs where they are the same objects
    own = next((names for first, names in failure.frames if first == call.line), None) if failure else None
    if own is None:
        return None
    ns = {**failure.globals, **failure.names, "__builtins__": _BUILTINS}
    inputs = {x.name for x in call.inputs}
    for left, right in _wanted_equal(_statements(str(file)), failure.line):
        a, b = _read(left, ns), _read(right, ns)
        if a is _UNREAD or b is _UNREAD or _same(a, b):
            continue
        sides = [(left, b), (right, a)]
        # an input an earlier check already set keeps that: the other side changes (`cos == sin`
        # after `cos * 2 == q` set cos)
        sides.sort(key=lambda sv: _set_before(call, sv[0]))
        for subject, value in sides:
            subject, value = _undone(subject, value)
            found = _subject(subject)
            if found is None or found[0] not in failure.names:
                continue
            seen = failure.names[found[0]]
            name = found[0] if failure.first_line == call.line else \
                next((k for k, v in own.items() if v is seen and k in inputs), None)
            changed = _changed(call, (name,) + found[1:], value, seen, failure.line) if name else None
            if changed is not None:
                return changed
    return None


_UNREAD = object()


def _read(node, ns):
    for n in ast.walk(node):
        if not isinstance(n, _READS):
            return _UNREAD
        if isinstance(n, ast.Call) and not (
                (isinstance(n.func, ast.Attribute) and n.func.attr in _READ_METHODS) or _name(n.func) in _BUILTINS):
            return _UNREAD
    try:
        return eval(compile(ast.fix_missing_locations(ast.Expression(node)), "<check>", "eval"), dict(ns))
    except Exception:
        return _UNREAD


def _same(a, b) -> bool:
    try:
        return bool(a == b) or (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and tuple(a) == tuple(b))
    except Exception:
        return False


_PARSED: dict = {}


def _statements(file: str) -> ast.AST | None:
    """The file's AST, parsed once per version of it (a file edited between two dumps is read again)."""
    try:
        st = os.stat(file)
    except OSError:
        return None
    key = (file, st.st_mtime_ns, st.st_size)
    if key not in _PARSED:
        try:
            with open(file, "rb") as f:
                _PARSED[key] = ast.parse(f.read())
        except (OSError, SyntaxError, ValueError):
            _PARSED[key] = None
    return _PARSED[key]


def _wanted_equal(tree, line: int) -> list[tuple]:
    """The equalities the check at `line` wants: an `assert` of `==` (all of an `and`), or the
    `!=` (any of an `or`) of the `if` whose `raise` is at that line."""
    if tree is None:
        return []
    for n in ast.walk(tree):
        if isinstance(n, ast.Assert) and n.lineno <= line <= (n.end_lineno or n.lineno):
            # `w is None or w.shape[0] == N` of a w given: its equalities, any of which would do
            if isinstance(n.test, ast.BoolOp) and isinstance(n.test.op, ast.Or):
                return _pairs(n.test, ast.Or, (ast.Eq,))
            return _pairs(n.test, ast.And, (ast.Eq, ast.Is))
        # `batch, seqlen, nheads, headdim = x.shape` that raised: x wants that many dimensions
        if isinstance(n, ast.Assign) and n.lineno == line and len(n.targets) == 1 and \
                isinstance(n.targets[0], ast.Tuple) and _shape_of(n.value) and \
                not any(isinstance(e, ast.Starred) for e in n.targets[0].elts):
            rank = ast.Call(ast.Name("len", ast.Load()), [ast.Attribute(ast.Name(_shape_of(n.value), ast.Load()),
                                                                        "shape", ast.Load())], [])
            return [(ast.fix_missing_locations(ast.copy_location(rank, n)), ast.Constant(len(n.targets[0].elts)))]
        if isinstance(n, ast.If) and any(isinstance(b, ast.Raise) and b.lineno == line for b in n.body):
            return _pairs(n.test, ast.Or, (ast.NotEq, ast.IsNot))
    return []


def _pairs(test, joined, ops) -> list[tuple]:
    """The (left, right) sides a check compares with one of `ops`; a chain (`a == b == n`) pair by pair."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, joined) else [test]
    out = []
    for p in parts:
        if isinstance(p, ast.Compare) and all(isinstance(op, ops) for op in p.ops):
            sides = [p.left, *p.comparators]
            out += list(zip(sides, sides[1:]))
    return out


def _set_before(call: Call, node) -> bool:
    """Whether the input a side of a check reads is already settled: an earlier check set it, or the
    project's test passes it (or its dtype): the other side is the one to change."""
    found = _subject(_undone(node)[0])
    return bool(found) and any(x.name == found[0] and ("from the wrapper's check" in x.why or x.tested or
                                                       found[1] == "dtype" and x.dtype_tested)
                               for x in call.inputs)


def _undone(node, value=None):
    """`cos.shape[-1] * 2 == q.shape[-1]`: the side with its arithmetic by a constant undone, so the
    size itself can be set (cos's last dimension half of q's); with no value, only which size."""
    while isinstance(node, ast.BinOp):
        left, right = _int(node.left), _int(node.right)
        c, x = (right, node.left) if right is not None else (left, node.right)
        if c is None or c == 0:
            break
        if value is None:
            pass
        elif not _count(value):
            break
        elif isinstance(node.op, ast.Mult) and value % c == 0:
            value = value // c
        elif isinstance(node.op, ast.Add):
            value = value - c
        elif isinstance(node.op, ast.Sub) and right is not None:
            value = value + c
        elif isinstance(node.op, ast.FloorDiv) and right is not None:
            value = value * c
        else:
            break
        node = x
    return node, value


def _subject(node) -> tuple[str, str, int] | None:
    """(input name, what, dim) a side of a check reads: its shape, one size, its dtype, its rank, or
    an int input itself."""
    if isinstance(node, ast.Name):
        return node.id, "value", 0
    if isinstance(node, ast.Attribute) and _name(node.value):
        what = {"shape": "shape", "dtype": "dtype", "ndim": "rank", "itemsize": "itemsize"}.get(node.attr)
        return (node.value.id, what, 0) if what else None
    if isinstance(node, ast.Attribute) and node.attr == "itemsize" and isinstance(node.value, ast.Attribute) \
            and node.value.attr == "dtype" and _name(node.value.value):
        return node.value.value.id, "itemsize", 0
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
            and _name(node.value.value):
        if isinstance(node.slice, ast.Slice) and node.slice.step is None:     # q.shape[:-2]
            lo, hi = (None if b is None else _int(b) for b in (node.slice.lower, node.slice.upper))
            if (lo is None) != (node.slice.lower is None) or (hi is None) != (node.slice.upper is None):
                return None
            return node.value.value.id, "slice", (lo, hi)
        dim = _int(node.slice)
        return (node.value.value.id, "dim", dim) if dim is not None else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _name(node.func.value):
        if node.func.attr == "size":
            if not node.args:
                return node.func.value.id, "shape", 0
            dim = _int(node.args[0])
            return (node.func.value.id, "dim", dim) if dim is not None else None
        if node.func.attr == "dim" and not node.args:
            return node.func.value.id, "rank", 0
        if node.func.attr == "element_size" and not node.args:
            return node.func.value.id, "itemsize", 0
    if isinstance(node, ast.Call) and _name(node.func) == "len" and len(node.args) == 1:
        base = _shape_of(node.args[0])
        return (base, "rank", 0) if base else None
    return None


def _int(node) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, int):
        return -node.operand.value
    return None


def _changed(call: Call, subject: tuple, value, seen, line: int) -> Call | None:
    """The call with input `subject[0]` (`seen` as the check saw it) changed so that its shape,
    size, dtype, rank or value is `value`."""
    name, what, dim = subject
    i = next((k for k, x in enumerate(call.inputs) if x.name == name), None)
    if i is None:
        return None
    old = call.inputs[i]
    said = f"; {{}} from the wrapper's check at line {line}"
    if what == "value":
        if old.shape or not _count(value) or not old.spec.startswith("i32:"):
            return None
        new = Input(old.name, str(value), f"i32:{value}", old.why + said.format(f"{value}"), old.keyword)
    elif not old.shape or not hasattr(seen, "shape"):
        return None
    elif what in ("dtype", "itemsize"):
        # `x.element_size() == 1`: a byte of data (an fp8 or e8m0 tensor is u8 to Triton)
        short = TORCH_SHORT.get(str(value).removeprefix("torch.")) if what == "dtype" else \
            ({1: "u8", 2: "i16", 4: "i32", 8: "i64"} if old.dtype[:1] in "iu" else
             {1: "u8", 2: FLOAT_DEFAULT, 4: "fp32", 8: "fp64"}).get(value)
        if short not in TENSOR_DTYPES:
            return None
        new = _tensor(old.name, old.shape, short, old.torch, old.why + said.format(f"dtype {short}"), old.keyword,
                      old.grad and short[:1] in "fb", old.inner)
    else:
        if what == "shape":
            shape = tuple(value) if isinstance(value, (tuple, list)) else None
        elif what == "slice":
            shape = list(seen.shape)
            if not isinstance(value, (tuple, list)):
                return None
            shape[dim[0]:dim[1]] = list(value)
        elif what == "dim":
            shape = list(seen.shape)
            if not _count(value) or not -len(shape) <= dim < len(shape):
                return None
            shape[dim] = value
        else:
            shape = PLANS[max(call.plan, 0)].get(value) if _count(value) else None
        if not shape or not all(_count(n) for n in shape):
            return None
        shape = tuple(int(n) for n in shape)
        # the rank made up, or the shape an earlier check gave, is no longer what the input has
        why = re.sub(r"; (rank \d+( \(nothing fixes it\))?|shape \S+ from the wrapper's check at line \d+)", "",
                     old.why)
        inner = old.inner if old.inner is not None and old.inner < len(shape) - 1 else None
        # a new shape: its dtype is still what it was, and from where it was
        sized = _tensor(old.name, shape, old.dtype, old.torch, why + said.format(f"shape {'x'.join(map(str, shape))}"),
                        old.keyword, old.grad, inner)
        new = replace(sized, guessed=old.guessed, dtype_tested=old.dtype_tested)
    if new.text == old.text:
        return None
    return replace(call, inputs=call.inputs[:i] + (new,) + call.inputs[i + 1:])


def _count(v) -> bool:
    """A positive int (a size): what a made-up shape may hold."""
    return isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 1 << 20
