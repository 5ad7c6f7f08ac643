"""The project's tests as the source of a wrapper's inputs: the calls its authors make.

A project's tests call its wrappers with the shapes and dtypes the project uses:

    @pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
    def test_rms_norm(dtype):
        x = torch.randn(4, 1024, dtype=dtype, device="cuda")
        y = rms_norm(x, torch.ones(1024, dtype=dtype), 1e-6)

Where such a call's arguments can be read from the test's text without running it, kinspect.compile.
wrappers calls the wrapper that way first, and says which test call the inputs come from. A name is
read where the test binds it: a parametrize (its first case, also of a list a function of the
module returns; pytest's and look-alikes such as `parameterize`), hypothesis's `@given`
(`sampled_from`'s first value, an integer strategy's least), pytest fixtures (of the file and of
conftest.py), the test's defaults, its assignments and loops before the call (the first item), the
module's constants and those it imports from other test modules, and, for a helper the test calls
(`_test_norm(M, N, dtype)`), the first call of it in the file. An argument is rebuilt, never run from the test's text: as a few torch constructors and
tensor methods (`randn`, `randint`, `arange`, `tensor`, `cumsum`, `pad`, casts, views) with the
literal values they were read as (`Value.text`), its shape and dtype kept. One the reading cannot
follow (a model's output, a slice) is left to the wrapper's made-up inputs, and its dtype, where read,
still types that input.
"""

from __future__ import annotations

import ast
import inspect
import math
import re
from dataclasses import dataclass, replace

from kinspect.compile.args import TENSOR_DTYPES, TORCH_SHORT
from kinspect.compile.project_defs import Def, ProjectDefs, op_name, same_file, signature

# the most elements a rebuilt tensor may hold: the wrapper runs (on the CPU) though the launch does not
MAX_ELEMENTS = 1 << 27
# the most items of a `torch.tensor([...])` literal rebuilt
MAX_LITERAL = 4096
# the most matching calls read per wrapper, and the most test files parsed for them
MAX_CALLS = 64
MAX_FILES = 200

# tensor methods that cast: `x.half()`
CASTS = {"half": "fp16", "bfloat16": "bf16", "float": "fp32", "double": "fp64", "long": "i64", "int": "i32",
         "bool": "i1", "short": "i16", "char": "i8", "byte": "u8"}
# tensor methods that keep shape and dtype, kept in the text (values or grad may matter to the wrapper)
SAME = {"contiguous", "detach", "clone", "requires_grad_", "normal_", "uniform_", "zero_", "fill_", "abs", "abs_",
        "exp", "sigmoid", "relu", "tanh", "neg", "sqrt", "mul", "mul_", "add", "add_", "div", "div_", "sub", "sub_",
        "clamp", "clamp_", "softmax", "log_softmax", "exponential_", "random_", "sign", "log", "square", "sin", "cos"}
# tensor methods that move it, dropped: the wrapper is called on the CPU
MOVES = {"cuda", "cpu", "pin_memory"}
FLOAT_MAKERS = {"randn", "rand", "empty", "zeros", "ones"}
LIKE = {"randn_like", "rand_like", "empty_like", "zeros_like", "ones_like", "full_like"}
PARAMETRIZE = {"parametrize", "parameterize"}
# the parameterized package's and absl's decorators of a test (or of its unittest class)
CASES = {"expand", "parameters", "named_parameters"}
# modules no test module is named after
NOT_TESTS = {"torch", "triton", "numpy", "np", "math", "pytest", "hypothesis", "itertools", "functools", "random",
             "os", "sys", "typing", "unittest", "absl", "parameterized"}
# how deep helpers of the tests are followed into what they return (`make_inputs` calling `make_qkv`)
MAX_HELPER_DEPTH = 3
# calls away from the kernel's wrappers the project's code that a test file names may be, for the
# file to be run (Tests.naming)
MAX_REACH = 6


@dataclass(frozen=True)
class Value:
    """An argument as read: a tensor (text rebuilding it, shape, dtype), a dtype, or a Python value."""

    kind: str            # "tensor", "dtype", "value", "object" (an instance of a project's class)
    text: str = ""       # Python text rebuilding it, `torch` named as the wrapper's module names it
    shape: tuple = ()
    dtype: str = ""      # kinspect's short name: fp16, i64
    value: object = None
    grad: bool = False


@dataclass(frozen=True)
class TestCall:
    """One call of a wrapper in the project's tests: each parameter's Value where it was read, else
    None, and the dtype read where only that was (`dtypes`)."""

    file: str            # relative to the project's folder
    line: int
    test: str            # the test function
    args: dict           # parameter name -> Value | None
    dtypes: dict         # parameter name -> short dtype, where the Value could not be read whole
    entry: Def | None = None   # the project's class or function it calls, where not the wrapper
    made: str = ""             # the instance of it the test calls: `__import__(...).RMSNorm(768).half()`
    via: str = ""              # another function of the project of the wrapper's name the test calls,
    #                            its arguments taken by name (megablocks' ops.padded_gather)
    node: str = ""             # the pytest node that makes the call (`tests/test_x.py::TestA::test_b`),
    #                            or its file, where a helper of the file makes it (test_runs)

    @property
    def at(self) -> str:
        return f"{self.file}:{self.line}, {self.test}" + (f", by name through {self.via}()" if self.via else "")

    def read(self) -> int:
        return sum(v is not None for v in self.args.values())


class Tests:
    """The test files of a project, read when a wrapper is asked for: (path, bytes) pairs
    (loader.project_files)."""

    def __init__(self, files, root=None):
        files = list(files)
        self.files = [(p, t) for p, t in files if is_test_file(p)][:MAX_FILES * 4]
        self.defs = ProjectDefs([(p, t) for p, t in files if not is_test_file(p)])
        self.root = root         # the project's folder, that the paths are relative to
        # by path; by (path, torch); by (module, torch); by torch
        self._trees, self._envs, self._modules, self._fixtures = {}, {}, {}, {}

    def tree(self, path, text):
        if path not in self._trees:
            try:
                self._trees[path] = ast.parse(text)
            except (SyntaxError, ValueError):
                self._trees[path] = None
        return self._trees[path]

    def env(self, path, text, torch: str):
        """The constants of a test file, read once per name torch goes by; None where it does not parse."""
        if (path, torch) not in self._envs:
            tree = self.tree(path, text)
            self._envs[path, torch] = None if tree is None else _ModuleEnv(tree, _aliases(tree), torch, self)
        return self._envs[path, torch]

    def calls(self, fn, names: set, torch: str) -> list[TestCall]:
        """The calls of `fn` (called by any of `names`: `rms_norm`, `_attention.apply`, its aliases)
        in the tests, those that read the most of its required arguments first."""
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return []
        last = {n.split(".")[-1] for n in names} | {n.split(".")[0] for n in names if n.endswith(".apply")}
        own = _file_of(fn)
        # the torch ops it is registered as (`torch.ops.fbgemm.sll_jagged_dense_bmm`)
        ops = self.defs.ops_of(last, own)
        last |= ops
        out, parsed = [], 0
        for path, text in self.files:
            if not any(n.encode() in text for n in last):
                continue
            parsed += 1
            if parsed > MAX_FILES or len(out) >= MAX_CALLS:
                break
            env = self.env(path, text, torch)
            if env is not None:
                out += _calls_in_file(env, str(path), names | {f"torch.ops.*.{op}" for op in ops}, sig,
                                      self.fixtures(torch), own)
        # most of the parameters it must be passed read first; of those, the first in the files
        # (a test's first call is its plain one: `rms_norm(x, w)` before `rms_norm(x, w, residual=r)`)
        required = {n for n, p in sig.parameters.items() if p.default is p.empty and
                    p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and n not in ("ctx", "self", "cls")}
        return sorted(out, key=lambda c: -sum(c.args.get(n) is not None for n in required))

    def entries(self, names: set, torch: str, wrappers: set) -> list[TestCall]:
        """The tests' calls of the project's other classes and functions whose code names one of
        `names` (the kernel, its wrappers; ProjectDefs.reaching_names): `SimpleRMSNorm(768)(x)`,
        `ops.padded_gather(...)`;
        those that read all they must be passed first. Calls of the `wrappers` themselves ((their
        file, name) pairs) are `calls`'."""
        out, parsed = [], 0
        # what a test may call to reach it: the names the files that name the kernel define
        reaching = self.defs.reaching_names(names)
        if not reaching:
            return []
        wanted = re.compile(rb"\b(?:%s)\b" % b"|".join(re.escape(n.encode()) for n in sorted(reaching)))
        for path, text in self.files:
            if len(out) >= MAX_CALLS or parsed > MAX_FILES:
                break
            if not wanted.search(text):
                continue
            env = self.env(path, text, torch)
            if env is None:
                continue
            parsed += 1
            out += _entries_in_file(env, str(path), names, wrappers, self.fixtures(torch), reaching)
        return sorted(out, key=lambda c: -_read_all(c))

    def naming(self, names: set, kernel: str = "", module: str = "") -> list:
        """The test files whose text names one of `names` (the kernel, its wrappers) or the project's
        code that reaches them, up to MAX_REACH calls away (ProjectDefs.reaching_names): those named
        for the kernel's module first (`test_rms_norm_gated.py` for `rms_norm_gated.py`), then those
        naming the nearest, then those whose name is most like the kernel's (`rmsnorm_test.py` before
        `fused_residual_add_rmsnorm_test.py` for `rmsnorm_forward_kernel`); the benchmarks and
        examples (is_example_file) after all the tests, in the same order."""
        levels, seen = [set(names)], set(names)
        for _ in range(MAX_REACH):
            more = self.defs.reaching_names(seen) - seen
            if not more:
                break
            levels.append(more)
            seen |= more
        words = set(kernel.lower().strip("_").split("_"))

        def likeness(path) -> float:
            own = set(path.stem.lower().split("_")) - {"test", "tests"}
            return len(own & words) / len(own | words) if own | words else 0.0

        out = []
        for level in levels:
            wanted = re.compile(rb"\b(?:%s)\b" % b"|".join(re.escape(n.encode()) for n in sorted(level)))
            found = [p for p, text in self.files if p not in out and p.name != "conftest.py" and wanted.search(text)
                     and _code_names(self.tree(p, text)) & level]      # in its code, not in a string
            out += sorted(found, key=likeness, reverse=True)
        named = [p for p in out if module and p.stem.removeprefix("test_").removesuffix("_test") == module]
        # the tests, then the benchmarks and examples
        return sorted(named + [p for p in out if p not in named], key=is_example_file)

    def module(self, dotted: str, torch: str):
        """The constants of the test module `dotted` imports name (`tests.kernels.utils`), where it is
        one of the test files; else None."""
        key = (dotted, torch)
        if key not in self._modules:
            self._modules[key] = None
            tail = dotted.replace(".", "/")
            for path, text in self.files:
                stem = str(path.with_suffix("")).replace("\\", "/")
                if (stem == tail or stem.endswith("/" + tail)) and (env := self.env(path, text, torch)) is not None:
                    self._modules[key] = env
                    break
        return self._modules[key]

    def fixtures(self, torch: str) -> dict:
        """pytest fixtures of the conftest.py files: name -> (its function, its file's constants)."""
        if torch not in self._fixtures:
            found = self._fixtures[torch] = {}
            for path, text in self.files:
                if path.name == "conftest.py" and (env := self.env(path, text, torch)) is not None:
                    for name, fn in _fixtures_of(env.tree).items():
                        found.setdefault(name, (fn, env))
        return self._fixtures[torch]


# folders of the code a project runs its functions with (loader.project_files reads them beside the
# tests): a project with no tests calls its wrappers there, with its own shapes and dtypes
EXAMPLE_DIRS = ("benchmarks", "benchmark", "bench", "examples", "example", "demo", "demos")


def is_test_file(path) -> bool:
    """A file of the project's tests: `test_*.py`, `*_test.py`, `test.py`, `tests.py`, or in a `tests`
    or `test` folder; or of its benchmarks and examples (is_example_file)."""
    return path.name.startswith("test_") or path.name.endswith("_test.py") or \
        path.name in ("test.py", "tests.py") or any(part in ("tests", "test") for part in path.parts[:-1]) or \
        is_example_file(path)


def kind_of(path) -> str:
    """What a file of the project's tests is, in a word: "benchmark", "example" or "test"."""
    if not is_example_file(path):
        return "test"
    bench = path.name.startswith("bench") or path.name.endswith(BENCH_ENDINGS) or \
        any(p.startswith("bench") for p in path.parts[:-1])
    return "benchmark" if bench else "example"


# how a benchmark script's name ends, where it does not start with `bench_` or `benchmark_`
BENCH_ENDINGS = ("_bench.py", "_benchmark.py")


def is_example_file(path) -> bool:
    """A file of the project's benchmarks or examples: `bench_*.py`, `benchmark_*.py`, `*_bench.py`,
    `*_benchmark.py`, or in one of EXAMPLE_DIRS."""
    return path.name.startswith(("bench_", "benchmark_")) or path.name.endswith(BENCH_ENDINGS) or \
        any(part in EXAMPLE_DIRS for part in path.parts[:-1])


def _code_names(tree: ast.Module | None) -> set:
    """The names a module's code uses: its names, attributes and imported names."""
    if tree is None:
        return set()
    return {n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else n.name
            for n in ast.walk(tree) if isinstance(n, (ast.Name, ast.Attribute, ast.alias))}


def _fixtures_of(tree: ast.Module) -> dict:
    """The module's functions decorated `@pytest.fixture` (called or not): name -> function."""
    def named(d) -> str:
        d = d.func if isinstance(d, ast.Call) else d
        return getattr(d, "attr", None) or getattr(d, "id", None) or ""

    return {n.name: n for n in tree.body
            if isinstance(n, ast.FunctionDef) and any(named(d) == "fixture" for d in n.decorator_list)}


def _file_of(fn) -> str:
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return code.co_filename if code is not None else ""


def _with_fixtures(module_env: _ModuleEnv, fixtures: dict) -> None:
    """The fixtures a test file's tests take: its own before the conftest files' (`fixtures`)."""
    module_env.fixtures = {**fixtures, **{k: (fn, module_env) for k, fn in _fixtures_of(module_env.tree).items()}}


def _calls_in_file(module_env: _ModuleEnv, path: str, names: set, sig, fixtures: dict,
                   own: str = "") -> list[TestCall]:
    tree, aliases = module_env.tree, module_env.aliases
    # names the file imports from the project, not from its tests (a reference `rms_norm` of
    # tests/ref.py is not the wrapper)
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and (n.module or "").split(".")[0] not in ("tests", "test") for a in n.names}
    _with_fixtures(module_env, fixtures)
    found = []
    ops = {n.rpartition(".")[2] for n in names if n.startswith("torch.ops.*.")}
    for fn, chain in _functions(tree):
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            if not (_names_wrapper(call.func, names, imported, aliases) or _names_op(call.func, ops, aliases)):
                continue
            # another function of the project's of the same name (megablocks' ops.padded_gather, an
            # autograd Function over kernels.padded_gather) is not the wrapper: what it is passed
            # under the wrapper's parameters' names is what the wrapper most likely is
            dotted = _dotted(call.func, aliases) or ""
            d = module_env.tests.defs.find(dotted) if module_env.tests and not dotted.startswith("torch.") else None
            via = ""
            if d is not None and own and not same_file(d.file, own):
                bound = _bind(d.call, call)
                if bound is None:
                    continue
                found.append(_read_call(module_env, fn, chain, call, path, _by_name(bound, d.call, sig), via=dotted))
                if len(found) >= MAX_CALLS:
                    return found
                continue
            bound = _bind(sig, call)
            env = None
            if bound is None and any(isinstance(a, ast.Starred) for a in call.args):
                # `op(*args)` of a list the test built: `args = [x, w, eps]`
                env = _Env(module_env, fn, chain, call, tree)
                bound = _bind(sig, _expanded(call, env))
            if bound is None:
                continue
            found.append(_read_call(module_env, fn, chain, call, path, bound, env))
            if len(found) >= MAX_CALLS:
                return found
    return found


def _by_name(bound: dict, other, sig) -> dict:
    """What a call of another function binds (`bound`, by its signature `other`), as the wrapper's
    parameters (`sig`): each by its name where both have it (megablocks' ops.padded_gather lacks the
    kernel wrapper's `weights`: by position, `bins` would be `weights`); by position where neither
    names the other's (thunder's `cross_entropy(a, /, target, ...)` of a wrapper's `(input, target, ...)`)."""
    own = [n for n in sig.parameters if n not in ("ctx", "self", "cls")]
    out = {k: v for k, v in bound.items() if k in sig.parameters}
    theirs = [n for n, p in other.parameters.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for i, name in enumerate(theirs):
        if name in bound and name not in sig.parameters and i < len(own) and own[i] not in other.parameters:
            out[own[i]] = bound[name]
    return out


def _read_call(module_env, fn, chain, call, path: str, bound: dict, env=None, via: str = "") -> TestCall:
    """The arguments `bound` (parameter -> node) of a test's call, read."""
    env = env or _Env(module_env, fn, chain, call, module_env.tree)
    args, dtypes = {}, {}
    for param, node in bound.items():
        v = env.eval(node)
        args[param] = v
        if v is None:
            d = env.dtype_of(node)
            if d:
                dtypes[param] = d
    return TestCall(path, call.lineno, fn.name, args, dtypes, via=via, node=_node(path, fn, chain))


def _node(path: str, fn, chain: list) -> str:
    """The pytest node of a test file's function `fn` (inside `chain`): its test function, under the
    classes it is in; the file, where the function is a helper."""
    classes = []
    for n in chain + [fn]:
        if isinstance(n, ast.ClassDef):
            classes.append(n.name)
            continue
        return "::".join([path, *classes, n.name]) if n.name.startswith("test") else path
    return path


def _expanded(call: ast.Call, env) -> ast.Call:
    """The call with each `*name` of a list or tuple the test assigned to that name spelled out."""
    args = []
    for a in call.args:
        built = env.exprs.get(a.value.id) if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name) else None
        args += built.elts if isinstance(built, (ast.List, ast.Tuple)) else [a]
    return ast.Call(call.func, args, call.keywords)


def _entries_in_file(module_env: _ModuleEnv, path: str, names: set, wrappers: set, fixtures: dict,
                     reaching: set) -> list[TestCall]:
    tree, aliases, defs = module_env.tree, module_env.aliases, module_env.tests.defs
    _with_fixtures(module_env, fixtures)
    found = []
    for fn, chain in _functions(tree):
        # the names the test binds to an instance of a project's class: `norm = RMSNorm(d).cuda()`
        instances = {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign)
                     and _makes_instance(n.value, aliases, defs, reaching)
                     for t in n.targets if isinstance(t, ast.Name)}
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            f, made_node, instance = call.func, None, None
            if isinstance(f, ast.Call):                       # `RMSNorm(d)(x)`
                made_node, dotted = f, _dotted(f.func, aliases)
            elif isinstance(f, ast.Name) and f.id in instances and f.id not in aliases:
                instance, dotted = f.id, None                 # `norm(x)`
            elif isinstance(f, ast.Attribute) and f.attr == "forward" and _name(f.value) in instances:
                instance, dotted = f.value.id, None           # `norm.forward(x)`
            else:
                dotted = _dotted(f, aliases)
            d = None
            if dotted and dotted.split(".")[-1] not in reaching and op_name(dotted) not in reaching:
                continue                 # no name the kernel's files define (nor an op they register)
            if dotted:
                d = defs.op(dotted)      # `torch.ops.fbgemm.sll_bmm(...)`: the function registered for it
                if d is None and dotted.split(".")[0] in NOT_TESTS | {"tests", "test"}:
                    continue
                d = d or defs.find(dotted)
                if d is None or (d.kind == "class") != (made_node is not None) or d.name not in reaching or \
                        any(d.name == n and same_file(d.file, f) for f, n in wrappers):
                    continue
            elif instance is None:
                continue
            env = _Env(module_env, fn, chain, call, tree)
            made = env.eval(made_node if made_node is not None else ast.Name(instance, ast.Load()))
            if d is None or made_node is not None:
                if made is None or made.kind != "object":
                    continue
                d = d or made.value
                if d.name not in reaching:
                    continue
            bound = _bind(d.call, call)
            if bound is None:
                continue
            found.append(replace(_read_call(module_env, fn, chain, call, path, bound, env), entry=d,
                                 made=made.text if d.kind == "class" else ""))
            if len(found) >= MAX_CALLS:
                return found
    return found


def _makes_instance(node, aliases: dict, defs, reaching: set) -> bool:
    """Whether an expression makes an instance of a project's class of the `reaching` names, cast or
    moved or not (`RMSNorm(d).to(dtype).cuda()`)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call):
        node = node.func.value
    dotted = _dotted(node.func, aliases) if isinstance(node, ast.Call) else None
    d = defs.find(dotted) if dotted and dotted.split(".")[0] not in NOT_TESTS and \
        dotted.split(".")[-1] in reaching else None
    return d is not None and d.kind == "class"


def _read_all(call: TestCall) -> bool:
    """Whether a call reads every argument its callee must be passed."""
    sig = call.entry.call if call.entry is not None else None
    required = [n for n, p in sig.parameters.items() if p.default is p.empty and
                p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)] if sig is not None else list(call.args)
    return all(call.args.get(n) is not None for n in required)


def _aliases(tree: ast.Module) -> dict:
    """Local name -> the dotted name it imports: `F` -> torch.nn.functional, `st` -> hypothesis.strategies."""
    out = {"torch": "torch", "triton": "triton", "math": "math"}
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(n, ast.ImportFrom) and n.module:
            for a in n.names:
                out[a.asname or a.name] = f"{n.module}.{a.name}"
    return out


def _dotted(node, aliases: dict) -> str | None:
    """`F.pad` -> torch.nn.functional.pad, through the file's imports; None for anything but names."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    head = aliases.get(node.id)
    return ".".join([head] + parts[::-1]) if head else None


def _names_wrapper(func, names: set, imported: set, aliases: dict) -> bool:
    """Whether a call's function is the wrapper: a name the file imports (`rms_norm`, `Fn.apply`
    with Fn imported), or an attribute of a module of the project's (`ops.rms_norm`), never torch's."""
    if isinstance(func, ast.Name):
        return func.id in names and func.id in imported
    if not isinstance(func, ast.Attribute):
        return False
    if isinstance(func.value, ast.Name):
        short = f"{func.value.id}.{func.attr}"
        if short in names and func.value.id in imported:
            return True
    if func.attr not in names:
        return False
    dotted = _dotted(func.value, aliases) or ""
    return bool(dotted) and dotted.split(".")[0] not in ("torch", "numpy", "triton", "math", "np", "tests", "test")


def _names_op(func, ops: set, aliases: dict) -> bool:
    """`torch.ops.fbgemm.sll_bmm(...)` (or `.default`) of one of the ops the wrapper is registered as."""
    return op_name(_dotted(func, aliases) or "") in ops


def _bind(sig, call: ast.Call, partial: bool = False) -> dict | None:
    """Parameter name -> the argument's node, as Python would bind the call (`partial`: leaving
    parameters with defaults unbound); None where it cannot."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    params = [p for p in sig.parameters.values() if p.name not in ("ctx", "self", "cls")]
    try:
        bind = inspect.Signature(params).bind_partial if partial else inspect.Signature(params).bind
        bound = bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError:
        return None
    out = {}
    for name, node in bound.arguments.items():
        if isinstance(node, (tuple, dict)):      # *args, **kwargs of the wrapper: not read
            continue
        out[name] = node
    return out


def _functions(tree: ast.Module):
    """Each function of the file (methods too), with the functions and classes it is inside."""
    def walk(body, chain):
        for n in body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield n, chain
                yield from walk(n.body, chain + [n])
            elif isinstance(n, ast.ClassDef):
                yield from walk(n.body, chain + [n])
    yield from walk(tree.body, [])


class _ModuleEnv:
    """The module's constants (`DTYPES = [torch.float16, torch.bfloat16]`), read on first use; those
    it imports from another test module (`from tests.utils import DTYPES`) read there."""

    def __init__(self, tree: ast.Module, aliases: dict, torch: str, tests: Tests | None = None):
        self.aliases, self.torch, self.tree, self.tests = aliases, torch, tree, tests
        self.nodes, self.fixtures = {}, {}
        for n in tree.body:
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                self.nodes[n.targets[0].id] = n.value
            elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.value is not None:
                self.nodes[n.target.id] = n.value
        self.values, self.busy = {}, set()

    def function(self, name: str):
        """The module's own function `name`, else None."""
        return next((n for n in self.tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)

    def class_def(self, name: str):
        """The module's own class `name`, else one it imports from another test module: (the class,
        its module) or None."""
        own = next((n for n in self.tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
        if own is not None:
            return own, self
        where, _, attr = self.aliases.get(name, "").rpartition(".")
        other = self.tests.module(where, self.torch) if self.tests is not None and where and \
            where.split(".")[0] not in NOT_TESTS else None
        return other.class_def(attr) if other is not None and other is not self else None

    def get(self, name: str):
        if name in self.values:
            return self.values[name]
        if name not in self.nodes and self.tests is not None and "." in self.aliases.get(name, "") and \
                name not in self.busy:
            module, _, attr = self.aliases[name].rpartition(".")
            other = self.tests.module(module, self.torch)
            self.busy.add(name)
            self.values[name] = other.get(attr) if other is not None and other is not self else None
            self.busy.discard(name)
            return self.values[name]
        if name not in self.nodes or name in self.busy:
            return None
        self.busy.add(name)
        self.values[name] = _Env(self, None, [], None, self.tree).eval(self.nodes[name])
        self.busy.discard(name)
        return self.values[name]


class _Env:
    """The names a test function binds before the call, read in order."""

    def __init__(self, module: _ModuleEnv, fn, chain: list, call, tree, depth: int = 0):
        self.module, self.aliases, self.torch = module, module.aliases, module.torch
        self.names, self.exprs = {}, {}     # name -> Value; name -> the expression last assigned to it
        self.depth = depth
        self.cls = None      # a unittest class's test: (its class, that class's module), for `self.helper()`
        if fn is None:
            return
        for outer in chain:
            self._decorators(outer, fn)
        self._decorators(fn, fn)
        if chain and isinstance(chain[-1], ast.ClassDef):
            self.cls = (chain[-1], module)
            self._test_case(chain[-1], fn)
        self._defaults(fn)
        self._helper(fn, tree)
        self._fixtures(fn)
        self._body(fn.body, call)

    # --- binding names

    def _decorators(self, owner, fn) -> None:
        """The names the decorators of `owner` (the test, a function or class it is in) bind for the
        test `fn`."""
        for d in owner.decorator_list:
            if not isinstance(d, ast.Call):
                continue
            name = (_dotted(d.func, self.aliases) or getattr(d.func, "attr", "") or getattr(d.func, "id", ""))
            last = name.split(".")[-1]
            if last in PARAMETRIZE and len(d.args) >= 2:
                self._parametrized(d.args[0], d.args[1])
            elif last in CASES and name.split(".")[0] in ("parameterized", "absl") and (d.args or d.keywords):
                self._case(d, fn, named=last == "named_parameters")
            elif last == "given":
                for k in d.keywords:
                    if k.arg:
                        self._set(k.arg, self._strategy(k.value))

    def _parametrized(self, names_node, cases_node) -> None:
        names = self.eval(names_node)
        if names is None or names.kind != "value":
            return
        names = names.value
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        first = _first(cases_node, self)
        if first is None:
            return
        if len(names) == 1:
            self._set(names[0], first)
        elif first.kind == "value" and isinstance(first.value, (tuple, list)) and len(first.value) == len(names):
            for n, v in zip(names, first.value):
                self._set(n, _of(v, self.torch))
        elif isinstance(first, _Items) and len(first.items) == len(names):
            for n, v in zip(names, first.items):
                self._set(n, v)

    def _case(self, d: ast.Call, fn, named: bool) -> None:
        """`@parameterized.expand([(4, torch.float16), ...])` (the parameterized package), absl's
        `@parameterized.parameters(*CASES)` and `named_parameters(("small", 4), ...)` (of the test or
        of its class): the first case, bound to the test's parameters in order, or by name where it
        is a dict."""
        if len(d.args) == 1 and isinstance(d.args[0], ast.Starred):
            first = _case_node(d.args[0].value, self)
        elif len(d.args) == 1 and isinstance(d.args[0], (ast.List, ast.Tuple, ast.Name, ast.Call)) and \
                not _is_dict(d.args[0]):
            first = _case_node(d.args[0], self)
        else:                       # `parameters((4, 8), (8, 16))`: each argument a case
            first = d.args[0] if d.args else None
        if first is None:
            return
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args if a.arg not in ("self", "cls")]
        if _is_dict(first):
            keys = first.keys if isinstance(first, ast.Dict) else [ast.Constant(k.arg) for k in first.keywords]
            values = first.values if isinstance(first, ast.Dict) else [k.value for k in first.keywords]
            for k, v in zip(keys, values):
                if isinstance(k, ast.Constant) and k.value in params:
                    self._set(k.value, self.eval(v))
            return
        items = first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first]
        if named:                   # its first item names the case
            items = items[1:]
        if len(items) == 1 and len(params) > 1:       # a name of a tuple of several: read whole
            v = self._eval(items[0])
            items_read = v.items if isinstance(v, _Items) else [_of(x, self.torch) for x in v.value] \
                if v is not None and v.kind == "value" and isinstance(v.value, (tuple, list)) else None
            for p, x in zip(params, items_read or ()):
                self._set(p, x)
            return
        for p, node in zip(params, items):
            self._set(p, self.eval(node))

    def _entered(self, fn, module: _ModuleEnv, owner, call: ast.Call):
        """The names of a helper of the tests as this call of it binds them, its body read (None
        past MAX_HELPER_DEPTH or where the call cannot be bound)."""
        if self.depth >= MAX_HELPER_DEPTH:
            return None
        args = []
        for a in call.args:         # `make_qkv(*shape)` of a shape read: its items
            items = self._value(a.value) if isinstance(a, ast.Starred) else _NO
            if isinstance(a, ast.Starred) and not isinstance(items, (tuple, list)):
                return None
            args += [ast.Constant(v) for v in items] if isinstance(a, ast.Starred) else [a]
        # its named parameters only: a call that passes more than they take is not read
        named = [p for p in signature(fn).parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        bound = _bind(inspect.Signature(named), ast.Call(call.func, args, call.keywords), partial=True)
        if bound is None:
            return None
        inner = _Env(module, None, [], None, module.tree, self.depth + 1)
        inner.cls = owner
        if owner is not None and owner == self.cls:      # `self.x` as the test's setUp set it
            inner.names.update({k: v for k, v in self.names.items() if k.startswith("self.")})
        for name, node in bound.items():
            inner._set(name, self.eval(node))
        inner._defaults(fn)
        inner._body(fn.body, None)
        return inner

    def _test_case(self, cls: ast.ClassDef, fn) -> None:
        """A unittest class's attributes the test reads as `self.x`: of the class body
        (`dtype = torch.float16`), then as its `setUp` sets them."""
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                self._set(f"self.{stmt.targets[0].id}", self.eval(stmt.value))
        setup = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "setUp"), None)
        if setup is not None and setup is not fn:
            self._body(setup.body, None)

    def _strategy(self, node):
        """hypothesis: `st.sampled_from([...])` -> its first; `st.integers(1, 8)` -> 1; `st.just(v)` -> v."""
        if not isinstance(node, ast.Call):
            return None
        last = (_dotted(node.func, self.aliases) or "").split(".")[-1]
        if last == "sampled_from" and node.args:
            return _first(node.args[0], self)
        if last in ("integers", "floats"):
            low = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "min_value"), None)
            return self.eval(low) if low is not None else None
        if last == "just" and node.args:
            return self.eval(node.args[0])
        if last == "booleans":
            return _of(False, self.torch)
        return None

    def _defaults(self, fn) -> None:
        args = fn.args
        positional = args.posonlyargs + args.args
        for a, d in list(zip(positional[len(positional) - len(args.defaults):], args.defaults)) + \
                [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]:
            if a.arg not in self.names:
                self._set(a.arg, self.eval(d))

    def _fixtures(self, fn) -> None:
        """A test's parameters that pytest fixtures give (`def dtype(request): return request.param`
        with `params=[torch.float16, ...]`: its first; else what the fixture returns)."""
        if self.depth > 1:
            return
        for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
            if a.arg in self.names or a.arg not in self.module.fixtures:
                continue
            fixture, module = self.module.fixtures[a.arg]
            self._set(a.arg, _fixture_value(fixture, module, self.depth))

    def _helper(self, fn, tree) -> None:
        """A function the test calls with its cases (`_run(M, N, dtype)`): its parameters as the first
        call of it in the file passes them."""
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        if not params or all(p in self.names for p in params if p not in ("self", "cls")) or self.depth > 1:
            return
        for other, chain in _functions(tree):
            if other is fn:
                continue
            for call in (n for n in ast.walk(other) if isinstance(n, ast.Call)):
                f = call.func
                called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                if called != fn.name:
                    continue
                outer = _Env(self.module, other, chain, call, tree, self.depth + 1)
                own = [p for p in params if p not in ("self", "cls")]
                # what the caller passes, over the helper's defaults
                for p, a in zip(own, call.args):
                    self._set(p, outer.eval(a))
                for k in call.keywords:
                    if k.arg:
                        self._set(k.arg, outer.eval(k.value))
                return

    def _body(self, body: list, call) -> None:
        """The statements before the call, in order; into the block that holds it."""
        for stmt in body:
            holds = call is not None and any(n is call for n in ast.walk(stmt))
            if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and not holds:
                self._assign(stmt)
            elif isinstance(stmt, (ast.For, ast.AsyncFor)):
                first = _first(stmt.iter, self)
                self._unpack(stmt.target, first)
                self._body(stmt.body, call)
            elif isinstance(stmt, ast.If) and not holds:
                # a branch the names read so far decide (`if causal: ...` of a parametrized flag)
                taken = self._value(stmt.test)
                if taken is not _NO:
                    self._body(stmt.body if taken else stmt.orelse, call)
            elif isinstance(stmt, (ast.With, ast.AsyncWith, ast.Try)) or (isinstance(stmt, ast.If) and holds):
                inner = stmt.body
                if isinstance(stmt, ast.If) and not any(n is call for s in stmt.body for n in ast.walk(s)):
                    inner = stmt.orelse
                self._body(inner, call)
            elif isinstance(stmt, ast.Expr) and not holds:
                self._append(stmt.value)
            if holds:
                return

    def _append(self, node) -> None:
        """`cases.append((b, n, d))` in a loop that builds the cases: the list with the item."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
                and _name(node.func.value) and len(node.args) == 1 and not node.keywords):
            return
        name, current = node.func.value.id, self.get(node.func.value.id)
        items = current.items if isinstance(current, _Items) and not current.is_tuple else \
            [_of(v, self.torch) for v in current.value] if current is not None and current.kind == "value" and \
            isinstance(current.value, list) else None
        item = self._eval(node.args[0])
        if items is not None and item is not None:
            self._set(name, _Items(items + [item], False).as_value(self.torch))

    def _assign(self, stmt) -> None:
        if isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.target, ast.Name):
                self._set(stmt.target.id, self.eval(ast.BinOp(stmt.target, stmt.op, stmt.value)))
            return
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if stmt.value is None:
            return
        value = self.eval(stmt.value)
        for t in targets:
            self._unpack(t, value)
            if isinstance(t, ast.Name):
                self.exprs[t.id] = stmt.value

    def _unpack(self, target, value) -> None:
        if isinstance(target, ast.Name):
            self._set(target.id, value)
        elif isinstance(target, ast.Attribute) and _name(target.value) == "self":
            self._set(f"self.{target.attr}", value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.items if isinstance(value, _Items) else \
                [_of(v, self.torch) for v in value.value] if value is not None and value.kind == "value" and \
                isinstance(value.value, (tuple, list)) else None
            for i, t in enumerate(target.elts):
                self._unpack(t, items[i] if items is not None and i < len(items) else None)

    def _set(self, name: str, value) -> None:
        self.names[name] = value

    # --- reading expressions

    def get(self, name: str):
        if name in self.names:
            return self.names[name]
        return self.module.get(name)

    def dtype_of(self, node, depth: int = 0) -> str:
        """The dtype an argument has, where its value cannot be read whole, from what makes it and
        never from what sizes it: a cast (`model(x).to(torch.float16)`, `.half()`), a `dtype=`, a
        constructor's default (`torch.rand(n)`: fp32), the tensor a method, slice or arithmetic
        starts from (`x[:, :4]`), through the assignments of the names it is (`x = ...; f(x)`);
        "" where none says."""
        if depth > 6:
            return ""
        if isinstance(node, ast.Name):
            v = self.get(node.id)
            if v is not None and v.kind == "tensor":
                return v.dtype
            return self.dtype_of(self.exprs[node.id], depth + 1) if node.id in self.exprs else ""
        if isinstance(node, (ast.Subscript, ast.Attribute)) and not _dotted(node, self.aliases):
            return self.dtype_of(node.value, depth + 1)
        if isinstance(node, ast.BinOp):
            left, right = self.dtype_of(node.left, depth + 1), self.dtype_of(node.right, depth + 1)
            dtype = left or right
            floats = any(isinstance(n, ast.Constant) and isinstance(n.value, float) for n in (node.left, node.right))
            return "fp32" if dtype[:1] in "iu" and dtype and (floats or isinstance(node.op, ast.Div)) else dtype
        if not isinstance(node, ast.Call):
            return ""
        if "dtype" in {k.arg for k in node.keywords}:
            v = self.eval(next(k.value for k in node.keywords if k.arg == "dtype"))
            return v.dtype if v is not None and v.kind == "dtype" else ""
        dotted = _dotted(node.func, self.aliases) or ""
        if dotted.startswith("torch."):
            name = dotted[len("torch."):]
            return "fp32" if name in FLOAT_MAKERS or name in ("rand", "randn") else "i64" if name == "randint" else \
                self.dtype_of(node.args[0], depth + 1) if name in LIKE and node.args else ""
        if isinstance(node.func, ast.Attribute):
            if node.func.attr in CASTS and not node.args:
                return CASTS[node.func.attr]
            if node.func.attr in ("to", "type"):
                for a in node.args:
                    v = self.eval(a)
                    if v is not None and v.kind == "dtype":
                        return v.dtype
            return self.dtype_of(node.func.value, depth + 1)
        return ""

    def eval(self, node):
        try:
            v = self._eval(node)
        except (ArithmeticError, ValueError, TypeError, IndexError, KeyError, RecursionError, OverflowError):
            return None
        return v if not isinstance(v, _Items) else v.as_value(self.torch)

    def _eval(self, node):
        if isinstance(node, ast.Constant):
            return _of(node.value, self.torch)
        if isinstance(node, ast.Name):
            return self.get(node.id)
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self._eval(e) for e in node.elts]
            # of plain values only (nested too: `[[0, 3], [3, 7]]`), a plain value itself
            return None if any(i is None for i in items) else \
                _Items(items, isinstance(node, ast.Tuple)).as_value(self.torch)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
            v = self._value(node.operand)
            if v is _NO:
                return None
            return _of(-v if isinstance(node.op, ast.USub) else (not v) if isinstance(node.op, ast.Not) else v,
                       self.torch)
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self._compare(node)
        if isinstance(node, ast.BoolOp):        # `dtype or torch.float32`
            for v in map(self._eval, node.values):
                if v is None:
                    return None
                truthy = bool(v.value) if v.kind == "value" else True
                if truthy == isinstance(node.op, ast.Or):
                    return v
            return v
        if isinstance(node, ast.IfExp):
            taken = self._value(node.test)
            return None if taken is _NO else self._eval(node.body if taken else node.orelse)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Subscript):
            base, index = self._value(node.value), self._value(node.slice)
            if base is _NO or index is _NO or not isinstance(base, (tuple, list)):
                return None
            return _of(base[index], self.torch)
        if isinstance(node, ast.Call):
            return self._call(node)
        return None

    def _value(self, node):
        v = self.eval(node)
        return v.value if v is not None and v.kind == "value" else _NO

    def _binop(self, node):
        left, right = self.eval(node.left), self.eval(node.right)
        if left is None or right is None:
            return None
        if left.kind == "value" and right.kind == "value":
            a, b = left.value, right.value
            if isinstance(node.op, ast.Add) and isinstance(a, tuple) and isinstance(b, tuple):
                return _of(a + b, self.torch)          # a shape put together: `(2, 2) + normalized_shape`
            if isinstance(node.op, ast.Pow) and (abs(b) > 64 if isinstance(b, (int, float)) else True):
                return None
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b, ast.Div: lambda: a / b,
                   ast.FloorDiv: lambda: a // b, ast.Mod: lambda: a % b, ast.Pow: lambda: a ** b,
                   ast.LShift: lambda: a << b if b < 64 else None}
            if type(node.op) not in ops or not all(isinstance(x, (int, float)) for x in (a, b)):
                return None
            return _of(ops[type(node.op)](), self.torch)
        # a tensor with a number: of the tensor's shape (an int tensor times a float is a float one)
        tensor, other = (left, right) if left.kind == "tensor" else (right, left)
        if tensor.kind != "tensor" or other.kind not in ("value", "tensor"):
            return None
        if other.kind == "tensor" and other.shape != tensor.shape:
            return None
        op = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}.get(type(node.op))
        if op is None:
            return None
        dtype = tensor.dtype
        if other.kind == "value" and isinstance(other.value, float) and dtype[:1] in "iu" or op == "/" and \
                dtype[:1] in "iu":
            dtype = "fp32"
        text = f"({left.text} {op} {right.text})"
        return Value("tensor", text, tensor.shape, dtype, grad=tensor.grad)

    def _compare(self, node):
        """`dtype == torch.float16`, `n > 128`, `mode in ("a", "b")` of values read: True or False."""
        left, right = self.eval(node.left), self.eval(node.comparators[0])
        if left is None or right is None or {left.kind, right.kind} - {"value", "dtype"}:
            return None
        a, b = (left.dtype if left.kind == "dtype" else left.value), (right.dtype if right.kind == "dtype" else
                                                                      right.value)
        op = node.ops[0]
        if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            same = a == b and left.kind == right.kind
            return _of(same if isinstance(op, (ast.Eq, ast.Is)) else not same, self.torch)
        if isinstance(op, (ast.In, ast.NotIn)) and right.kind == "value" and isinstance(b, (tuple, list, str)):
            return _of((a in b) == isinstance(op, ast.In), self.torch)
        ops = {ast.Lt: lambda: a < b, ast.LtE: lambda: a <= b, ast.Gt: lambda: a > b, ast.GtE: lambda: a >= b}
        if type(op) in ops and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)):
            return _of(ops[type(op)](), self.torch)
        return None

    def _attribute(self, node):
        if _name(node.value) == "self" and f"self.{node.attr}" in self.names:
            return self.names[f"self.{node.attr}"]
        dotted = _dotted(node, self.aliases)
        if dotted and dotted.startswith("torch."):
            short = TORCH_SHORT.get(dotted[len("torch."):])
            if short:
                return Value("dtype", f"{self.torch}.{TENSOR_DTYPES[short]}", dtype=short)
            return None
        base = self.eval(node.value)
        if base is None or base.kind != "tensor":
            return None
        if node.attr == "shape":
            return _of(tuple(base.shape), self.torch)
        if node.attr == "dtype":
            return Value("dtype", f"{self.torch}.{TENSOR_DTYPES[base.dtype]}", dtype=base.dtype)
        if node.attr in ("T", "mT") and len(base.shape) >= 2:
            shape = base.shape[:-2] + (base.shape[-1], base.shape[-2])
            return Value("tensor", f"{base.text}.{node.attr}", shape, base.dtype, grad=base.grad)
        return None

    def _call(self, node: ast.Call):
        func = node.func
        dotted = _dotted(func, self.aliases)
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        if dotted in ("triton.next_power_of_2", "triton.cdiv", "math.ceil", "math.prod") or \
                isinstance(func, ast.Name) and func.id in ("int", "float", "len", "max", "min", "tuple", "list") \
                and func.id not in self.names:
            values = [self._value(a) for a in node.args]
            if any(v is _NO for v in values) or kw:
                return None
            fn = {"triton.next_power_of_2": lambda n: 1 << (int(n) - 1).bit_length(),
                  "triton.cdiv": lambda a, b: -(-a // b), "math.ceil": math.ceil, "math.prod": math.prod,
                  "int": int, "float": float, "len": len, "max": max, "min": min, "tuple": tuple,
                  "list": list}[dotted or func.id]
            return _of(fn(*values), self.torch)
        if dotted and dotted.startswith("torch."):
            return self._torch(dotted[len("torch."):], node, kw)
        if isinstance(func, ast.Attribute):
            base = self.eval(func.value)
            if base is not None and base.kind == "tensor":
                return self._method(base, func.attr, node, kw)
            if base is not None and base.kind == "object":
                return self._object_method(base, func.attr, node)
        found = self._test_function(func)
        if found:
            return self._returned(*found, node)
        return self._instance(dotted, node) if dotted else None

    def _instance(self, dotted: str, node: ast.Call):
        """`RMSNorm(768, eps=1e-6)` of a project's class: an object, its arguments' text kept."""
        tests = self.module.tests
        d = tests.defs.find(dotted) if tests is not None and dotted.split(".")[0] not in NOT_TESTS else None
        if d is None or d.kind != "class" or _bind(d.make, node) is None:
            return None
        parts = []
        for a in node.args:
            v = self.eval(a)
            if v is None or v.kind == "object":
                return None
            parts.append(v.text)
        for k in node.keywords:
            v = self.eval(k.value)
            if v is None or v.kind == "object":
                return None
            parts.append(f"{k.arg}={v.text}")
        return Value("object", f"__import__({d.module!r}, fromlist=['_']).{d.name}({', '.join(parts)})", value=d)

    def _object_method(self, base: Value, name: str, node: ast.Call):
        """An instance cast, moved or set to eval: `.half()`, `.to(torch.bfloat16)`, `.cuda()`, `.eval()`."""
        if name in MOVES:
            return base
        if name in CASTS and not node.args and CASTS[name][:2] in ("fp", "bf"):
            return replace(base, text=f"{base.text}.{name}()")
        if name == "to":
            dtypes = [v for v in (self.eval(a) for a in list(node.args) + [k.value for k in node.keywords])
                      if v is not None and v.kind == "dtype"]
            return replace(base, text=f"{base.text}.to({dtypes[0].text})") if dtypes else base
        if name in ("eval", "train", "requires_grad_") and not node.keywords:
            args = [self.eval(a) for a in node.args]
            if any(a is None or a.kind != "value" for a in args):
                return None
            return replace(base, text=f"{base.text}.{name}({', '.join(a.text for a in args)})")
        return None

    def _test_function(self, func):
        """The function of the tests a call names (`make_qkv(...)`, `utils.make_qkv(...)`): one of
        this file's, one it imports from another test module, a method of the test's class or of a
        class it derives from (`self.make_inputs(...)`), a static method of a test class
        (`TestCommons.make_args(...)`); (its node, its module, the class it is looked up in) or None."""
        if isinstance(func, ast.Name) and func.id not in self.names:
            own = self.module.function(func.id)
            if own is not None:
                return own, self.module, None
        if isinstance(func, ast.Attribute) and _name(func.value) in ("self", "cls") and self.cls is not None:
            found = _method_of(*self.cls, func.attr)       # looked up from the test's own class
            return (*found[:2], self.cls) if found is not None else None
        if isinstance(func, ast.Attribute) and _name(func.value) and func.value.id not in self.names:
            owner = self.module.class_def(func.value.id)
            if owner is not None:
                return _method_of(*owner, func.attr)
        dotted = _dotted(func, self.aliases) or ""
        # imported from another test module (`from tests.utils import ...`, `from .utils import ...`)
        if self.module.tests is None or "." not in dotted or dotted.split(".")[0] in NOT_TESTS:
            return None
        where, _, name = dotted.rpartition(".")
        other = self.module.tests.module(where, self.torch)
        fn = other.function(name) if other is not None else None
        return (fn, other, None) if fn is not None else None

    def _returned(self, fn, module: _ModuleEnv, owner, call: ast.Call):
        """What a helper of the tests returns (`q, k, v = make_qkv(B, H, N, D, dtype)`), read in its
        body with its parameters as this call passes them, over its defaults."""
        inner = self._entered(fn, module, owner, call)
        returned = _returned_node(fn)
        if inner is None or returned is None:
            return None
        if isinstance(returned, ast.Tuple):      # `return q, k, v`: each item read alone
            return _Items([inner._eval(e) for e in returned.elts], True)
        return inner._eval(returned)

    def _dtype_kw(self, kw: dict, default: str) -> str | None:
        if "dtype" not in kw:
            return default
        v = self.eval(kw["dtype"])
        return v.dtype if v is not None and v.kind == "dtype" else None

    def _shape_args(self, args: list) -> tuple | None:
        values = [self._value(a) for a in args]
        if len(values) == 1 and isinstance(values[0], (tuple, list)):
            values = list(values[0])
        if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
            return None
        return tuple(values)

    def _grad(self, kw: dict) -> bool:
        return "requires_grad" in kw and self._value(kw["requires_grad"]) is True

    def _torch(self, name: str, node: ast.Call, kw: dict):
        t, args = self.torch, node.args
        if name in FLOAT_MAKERS:
            shape, dtype = self._shape_args(args), self._dtype_kw(kw, "fp32")
            if shape is None or dtype is None:
                return None
            maker = name if dtype[:2] in ("fp", "bf") and not dtype.startswith("fp8") else \
                "zeros" if name in ("randn", "rand", "empty") else name
            return self._made(maker, list(shape), dtype, shape, self._grad(kw))
        if name in ("randperm", "eye", "linspace") and args:
            values = [self._value(a) for a in args[:3]]
            if any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in values):
                return None
            if name == "randperm" and isinstance(values[0], int) and values[0] > 0:
                dtype, shape = self._dtype_kw(kw, "i64"), (values[0],)
                extra = f", generator={t}.Generator().manual_seed(0)"
            elif name == "eye" and all(isinstance(v, int) and v > 0 for v in values[:2]):
                dtype, shape, extra = self._dtype_kw(kw, "fp32"), (values[0], values[-1]), ""
            elif name == "linspace" and len(values) == 3 and isinstance(values[2], int) and values[2] > 0:
                dtype, shape, extra = self._dtype_kw(kw, "fp32"), (values[2],), ""
            else:
                return None
            if dtype is None:
                return None
            text = f"{t}.{name}({', '.join(map(repr, values))}, dtype={t}.{TENSOR_DTYPES[dtype]}{extra})"
            return _tensor_value(text, shape, dtype)
        if name == "testing.make_tensor":
            # torch's own test helper: `make_tensor((M, N), dtype=torch.float16, device="cuda")`
            shape, dtype = self._shape_args(args), self._dtype_kw(kw, "")
            if shape is None or not dtype:
                return None
            if dtype[:2] in ("fp", "bf") and not dtype.startswith("fp8"):
                return self._made("randn", list(shape), dtype, shape, self._grad(kw))
            text = (f"{t}.randint(0, 2, {shape!r}, dtype={t}.{TENSOR_DTYPES[dtype]}, "
                    f"generator={t}.Generator().manual_seed(0))") if dtype[:1] in "iu" else \
                f"{t}.zeros({shape!r}, dtype={t}.{TENSOR_DTYPES[dtype]})"
            return _tensor_value(text, shape, dtype)
        if name == "randint":
            values = [self._value(a) for a in args[:3]]
            if "size" in kw:
                values.append(self._value(kw["size"]))
            if any(v is _NO for v in values) or len(values) not in (2, 3):
                return None
            low, high, size = (0, *values) if len(values) == 2 else values
            dtype = self._dtype_kw(kw, "i64")
            shape = tuple(size) if isinstance(size, (tuple, list)) else None
            if dtype is None or not shape or not all(isinstance(s, int) for s in shape) or \
                    not all(isinstance(x, int) for x in (low, high)) or high <= low:
                return None
            text = (f"{t}.randint({low}, {high}, {shape!r}, dtype={t}.{TENSOR_DTYPES[dtype]}, "
                    f"generator={t}.Generator().manual_seed(0))")
            return _tensor_value(text, shape, dtype)
        if name == "arange":
            values = [self._value(a) for a in args]
            if not values or len(values) > 3 or any(not isinstance(v, (int, float)) for v in values):
                return None
            start, end, step = (0, values[0], 1) if len(values) == 1 else (*values, 1)[:3]
            dtype = self._dtype_kw(kw, "i64" if all(isinstance(v, int) for v in values) else "fp32")
            if dtype is None or step == 0:
                return None
            n = max(0, math.ceil((end - start) / step))
            text = f"{t}.arange({', '.join(map(repr, values))}, dtype={t}.{TENSOR_DTYPES[dtype]})"
            return _tensor_value(text, (n,), dtype)
        if name == "tensor" and args:
            data = self._value(args[0])
            shape = _literal_shape(data)
            if shape is None:
                return None
            flat = _flat(data)
            default = "i1" if all(isinstance(x, bool) for x in flat) and flat else \
                "i64" if all(isinstance(x, int) for x in flat) else "fp32"
            dtype = self._dtype_kw(kw, default)
            if dtype is None:
                return None
            return _tensor_value(f"{t}.tensor({data!r}, dtype={t}.{TENSOR_DTYPES[dtype]})", shape, dtype,
                                 self._grad(kw))
        if name == "full" and len(args) >= 2:
            shape, fill = self._shape_args(args[:1]), self._value(args[1])
            if shape is None or not isinstance(fill, (int, float, bool)):
                return None
            default = "i1" if isinstance(fill, bool) else "i64" if isinstance(fill, int) else "fp32"
            dtype = self._dtype_kw(kw, default)
            if dtype is None:
                return None
            return _tensor_value(f"{t}.full({shape!r}, {fill!r}, dtype={t}.{TENSOR_DTYPES[dtype]})", shape, dtype)
        if name in LIKE and args:
            base = self.eval(args[0])
            if base is None or base.kind != "tensor":
                return None
            dtype = self._dtype_kw(kw, base.dtype)
            if dtype is None:
                return None
            if name == "full_like":
                fill = self._value(args[1]) if len(args) > 1 else _NO
                if not isinstance(fill, (int, float, bool)):
                    return None
                return _tensor_value(f"{t}.full({base.shape!r}, {fill!r}, dtype={t}.{TENSOR_DTYPES[dtype]})",
                                     base.shape, dtype)
            maker = name.removesuffix("_like")
            if dtype[:1] in "iu" or dtype.startswith("fp8") or dtype == "i1":
                maker = "zeros" if maker in ("randn", "rand", "empty") else maker
            return self._made(maker, list(base.shape), dtype, base.shape, self._grad(kw))
        if name == "cumsum" and args:
            base = self.eval(args[0])
            dim = self._value(args[1]) if len(args) > 1 else self._value(kw["dim"]) if "dim" in kw else _NO
            return _cumsum(base, dim, self._dtype_kw(kw, ""), t)
        if name == "nn.functional.pad" and len(args) >= 2:
            base, pad = self.eval(args[0]), self._value(args[1])
            return _pad(base, pad, t)
        if name == "cat" and args:
            items = self._eval(args[0])
            dim = self._value(args[1]) if len(args) > 1 else self._value(kw["dim"]) if "dim" in kw else 0
            return _cat(items, dim, t)
        return None

    def _made(self, maker: str, sizes: list, dtype: str, shape: tuple, grad: bool):
        t = self.torch
        text = f"{t}.{maker}({', '.join(map(str, sizes))}, dtype={t}.{TENSOR_DTYPES[dtype]}" + \
            (", requires_grad=True" if grad else "") + ")"
        return _tensor_value(text, shape, dtype, grad)

    def _method(self, base: Value, name: str, node: ast.Call, kw: dict):
        t, args = self.torch, node.args
        if name in MOVES:
            return base
        if name in CASTS and not args:
            dtype = CASTS[name]
            return Value("tensor", f"{base.text}.to({t}.{TENSOR_DTYPES[dtype]})", base.shape, dtype, grad=False)
        if name in ("to", "type"):
            dtypes = [v for v in (self.eval(a) for a in list(args) + list(kw.values())) if v is not None
                      and v.kind == "dtype"]
            if not dtypes:
                # `x.to(device)`, `x.to("cuda")`, `x.to(torch.device("cuda"))`: a move
                return base
            dtype = dtypes[0].dtype
            return Value("tensor", f"{base.text}.to({t}.{TENSOR_DTYPES[dtype]})", base.shape, dtype,
                         grad=base.grad and dtype[:1] in "fb")
        if name in SAME:
            rendered = []
            for a in args:
                v = self.eval(a)
                if v is None or v.kind not in ("value", "dtype") and not (v.kind == "tensor" and v.shape == base.shape):
                    return None
                rendered.append(v.text)
            for k, node_ in kw.items():
                v = self.eval(node_)
                if v is None or v.kind not in ("value", "dtype"):
                    return None
                rendered.append(f"{k}={v.text}")
            return Value("tensor", f"{base.text}.{name}({', '.join(rendered)})", base.shape, base.dtype,
                         grad=base.grad or name == "requires_grad_")
        if name in ("view", "reshape"):
            shape = self._shape_args(args) if not any(self._value(a) == -1 for a in args) else \
                _infer(base.shape, [self._value(a) for a in args])
            if shape is None or math.prod(shape) != math.prod(base.shape):
                return None
            return Value("tensor", f"{base.text}.{name}{shape!r}", shape, base.dtype, grad=base.grad)
        if name in ("transpose", "swapaxes") and len(args) == 2:
            a, b = self._value(args[0]), self._value(args[1])
            if not all(isinstance(x, int) and -len(base.shape) <= x < len(base.shape) for x in (a, b)):
                return None
            shape = list(base.shape)
            shape[a], shape[b] = shape[b], shape[a]
            return Value("tensor", f"{base.text}.transpose({a}, {b})", tuple(shape), base.dtype, grad=base.grad)
        if name == "t" and len(base.shape) == 2:
            return Value("tensor", f"{base.text}.t()", base.shape[::-1], base.dtype, grad=base.grad)
        if name == "permute":
            dims = self._shape_args(args) if not any(self._value(a) is _NO for a in args) else None
            if dims is None or sorted(dims) != list(range(len(base.shape))):
                return None
            return Value("tensor", f"{base.text}.permute{tuple(dims)!r}", tuple(base.shape[d] for d in dims),
                         base.dtype, grad=base.grad)
        if name in ("unsqueeze", "squeeze") and len(args) == 1:
            d = self._value(args[0])
            if not isinstance(d, int):
                return None
            shape = list(base.shape)
            if name == "unsqueeze":
                shape.insert(d if d >= 0 else len(shape) + d + 1, 1)
            elif -len(shape) <= d < len(shape) and shape[d] == 1:
                shape.pop(d)
            return Value("tensor", f"{base.text}.{name}({d})", tuple(shape), base.dtype, grad=base.grad)
        if name == "cumsum":
            dim = self._value(args[0]) if args else self._value(kw["dim"]) if "dim" in kw else _NO
            return _cumsum(base, dim, self._dtype_kw(kw, ""), t)
        return None


class _Items:
    """A tuple or list whose items are not all plain values (dtypes, tensors)."""

    def __init__(self, items: list, is_tuple: bool):
        self.items, self.is_tuple = items, is_tuple
        self.kind = "items"

    def as_value(self, torch: str):
        if all(i is not None and i.kind == "value" for i in self.items):
            v = [i.value for i in self.items]
            return _of(tuple(v) if self.is_tuple else v, torch)
        return self


_NO = object()


def _of(v, torch: str):
    """A Python value read (an int, a float, a string, None, a tuple of them) as a Value."""
    if isinstance(v, Value) or isinstance(v, _Items):
        return v
    if isinstance(v, (bool, int, float, str, type(None))) or isinstance(v, (tuple, list)) and \
            all(isinstance(x, (bool, int, float, str, type(None), tuple, list)) for x in v):
        return Value("value", repr(v), value=v)
    return None


def _method_of(cls: ast.ClassDef, module: _ModuleEnv, name: str, depth: int = 0):
    """Method `name` of a test class, or of a class it derives from (in its module or imported from
    another test module): (its node, its module, the class) or None."""
    own = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if own is not None:
        return own, module, (cls, module)
    for base in cls.bases if depth < 3 else ():
        found = module.class_def(base.id) if isinstance(base, ast.Name) else None
        method = _method_of(*found, name, depth + 1) if found is not None else None
        if method is not None:
            return method
    return None


def _returned_node(fn):
    """What a function's last `return` at its top level returns, as a node; None where it has none."""
    returned = [n.value for n in fn.body if isinstance(n, ast.Return) and n.value is not None]
    return returned[-1] if returned else None


def _name(node) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _is_dict(node) -> bool:
    """`{"m": 4}` or `dict(m=4)`: a case that names its parameters."""
    return isinstance(node, ast.Dict) or isinstance(node, ast.Call) and _name(node.func) == "dict" and \
        not node.args


def _case_node(node, env: _Env, depth: int = 0):
    """The first case of a list of cases, as its node: of a literal, of the module constant a name
    is, or of the list a function of the module returns."""
    if depth > 3:
        return None
    if isinstance(node, (ast.List, ast.Tuple)):
        if not node.elts:
            return None
        head = node.elts[0]
        return _case_node(head.value, env, depth + 1) if isinstance(head, ast.Starred) else head
    if isinstance(node, ast.Name) and node.id not in env.names:
        target = env.module.nodes.get(node.id)
        return _case_node(target, env, depth + 1) if target is not None else None
    if isinstance(node, ast.Call) and _name(node.func) in ("list", "tuple") and node.args:
        return _case_node(node.args[0], env, depth + 1)
    if isinstance(node, ast.Call) and not node.args:
        # `get_cases()`, `Commons.make_cases()`: the literal list it returns
        found = env._test_function(node.func)
        returned = _returned_node(found[0]) if found else None
        return _case_node(returned, env, depth + 1) if returned is not None else None
    return None


def _fixture_value(fixture, module: _ModuleEnv, depth: int):
    """What a fixture gives a test: the first of its `params` where it returns `request.param`, else
    the value of its last `return` (or `yield`), read in its own file."""
    env = _Env(module, None, [], None, module.tree, depth + 1)
    for d in fixture.decorator_list:
        params = next((k.value for k in d.keywords if k.arg == "params"), None) if isinstance(d, ast.Call) else None
        if params is not None and any(isinstance(n, ast.Attribute) and n.attr == "param" for n in ast.walk(fixture)):
            return _first(params, env)
    env._body(fixture.body, None)
    returned = [n.value for n in ast.walk(fixture) if isinstance(n, (ast.Return, ast.Yield)) and n.value is not None]
    return env.eval(returned[-1]) if returned else None


def _first(node, env: _Env):
    """The first case of a parametrize list, a loop's iterable or `sampled_from`: `[torch.float16,
    ...]` -> fp16; `pytest.param(1, 2, id=...)` -> (1, 2); `itertools.product(A, B)` -> (A[0], B[0])."""
    if isinstance(node, ast.Call):
        last = (getattr(node.func, "attr", None) or getattr(node.func, "id", None) or "")
        if last == "product":
            firsts = [_first(a, env) for a in node.args]
            return None if any(f is None for f in firsts) else _Items(firsts, True).as_value(env.torch)
        if last == "param":
            items = [env._eval(a) for a in node.args]
            if any(i is None for i in items):
                return None
            return items[0] if len(items) == 1 else _Items(items, True).as_value(env.torch)
        if last == "range":
            v = env._value(node.args[0]) if node.args else _NO
            if len(node.args) == 1 and isinstance(v, int):
                return _of(0, env.torch)
            if len(node.args) >= 2:
                start = env._value(node.args[0])
                return _of(start, env.torch) if isinstance(start, int) else None
            return None
        if last in ("list", "tuple", "sorted") and node.args:
            return _first(node.args[0], env)
        # a function of the module that makes the cases (`@parametrize("b, h, n", get_params())`): the
        # first of what it returns
        found = env._test_function(node.func)
        inner = env._entered(*found, node) if found else None
        returned = _returned_node(found[0]) if inner is not None else None
        return _first(returned, inner) if returned is not None else None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        if not node.elts:
            return None
        head = node.elts[0]
        if isinstance(head, ast.Starred):
            return _first(head.value, env)
        if isinstance(head, ast.Call) and (getattr(head.func, "attr", None) or getattr(head.func, "id", None)) == "param":
            return _first(head, env)
        return env._eval(head)
    if isinstance(node, ast.Name):
        bound = env.get(node.id)
        if isinstance(bound, _Items):
            return bound.items[0] if bound.items else None
        if bound is not None and bound.kind == "value" and isinstance(bound.value, (tuple, list)) and bound.value:
            return _of(bound.value[0], env.torch)
        # a module constant read as an expression: its first item
        target = env.module.nodes.get(node.id)
        return _first(target, env) if target is not None and node.id not in env.names else None
    return None


def _tensor_value(text: str, shape: tuple, dtype: str, grad: bool = False):
    if math.prod(shape) > MAX_ELEMENTS:
        return None
    return Value("tensor", text, tuple(shape), dtype, grad=grad)


def _cumsum(base, dim, dtype: str | None, torch: str):
    if base is None or base.kind != "tensor" or not isinstance(dim, int) or dtype is None:
        return None
    # torch.cumsum of an integer (or bool) tensor is int64 unless told otherwise
    out = dtype or ("i64" if base.dtype[:1] in "iu" else base.dtype)
    cast = f", dtype={torch}.{TENSOR_DTYPES[dtype]}" if dtype else ""
    return Value("tensor", f"{torch}.cumsum({base.text}, {dim}{cast})", base.shape, out)


def _pad(base, pad, torch: str):
    if base is None or base.kind != "tensor" or not isinstance(pad, (tuple, list)) or len(pad) % 2 or \
            len(pad) // 2 > len(base.shape) or not all(isinstance(p, int) for p in pad):
        return None
    shape = list(base.shape)
    for i in range(len(pad) // 2):
        shape[-1 - i] += pad[2 * i] + pad[2 * i + 1]
    return Value("tensor", f"{torch}.nn.functional.pad({base.text}, {tuple(pad)!r})", tuple(shape), base.dtype)


def _cat(items, dim, torch: str):
    if not isinstance(items, _Items) or not isinstance(dim, int) or not items.items:
        return None
    tensors = items.items
    if not all(v is not None and v.kind == "tensor" for v in tensors):
        return None
    rank = len(tensors[0].shape)
    if any(len(v.shape) != rank for v in tensors) or not -rank <= dim < rank:
        return None
    dtype = _promoted([v.dtype for v in tensors])
    if dtype is None:
        return None
    shape = list(tensors[0].shape)
    shape[dim] = sum(v.shape[dim] for v in tensors)
    return Value("tensor", f"{torch}.cat([{', '.join(v.text for v in tensors)}], {dim})", tuple(shape), dtype)


# torch's promotion of the integer types, narrowest first
_INTS = ("i1", "u8", "i8", "i16", "i32", "i64")


def _promoted(dtypes: list) -> str | None:
    """The dtype torch.cat gives tensors of these dtypes: the same one, or the widest of signed
    integers (`[tensor([0], int32), lengths.cumsum(0)]`: int64); None for mixes it is not sure of."""
    if len(set(dtypes)) == 1:
        return dtypes[0]
    if all(d in _INTS and d != "u8" for d in dtypes):
        return max(dtypes, key=_INTS.index)
    return None


def _infer(shape: tuple, sizes: list) -> tuple | None:
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = list(sizes[0])
    if not all(isinstance(s, int) for s in sizes) or sizes.count(-1) > 1:
        return None
    known = math.prod(s for s in sizes if s != -1)
    if known == 0 or math.prod(shape) % known:
        return None
    return tuple(math.prod(shape) // known if s == -1 else s for s in sizes)


def _literal_shape(data) -> tuple | None:
    if isinstance(data, (int, float, bool)):
        return ()
    if not isinstance(data, (list, tuple)) or not data or len(_flat(data)) > MAX_LITERAL:
        return None
    inner = [_literal_shape(x) for x in data]
    if any(s is None or s != inner[0] for s in inner):
        return None
    return (len(data),) + inner[0]


def _flat(data) -> list:
    if isinstance(data, (list, tuple)):
        return [x for d in data for x in _flat(d)]
    return [data]
