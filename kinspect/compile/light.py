"""Import a kernel's module without running its packages' `__init__.py`, where that cannot change it.

`path/pkg/sub/kernels.py:k` is imported as `pkg.sub.kernels`, which first runs `pkg/__init__.py`
and `pkg/sub/__init__.py`. Projects' package `__init__`s import the whole project (mamba's its
models, lmdeploy's its serving engine, which needs modules a kernel never does): seconds of CPU a
`kinspect dump` spends on code the kernel never reads. kinspect skips them when the files show
that nothing the kernel's module runs can tell the difference:

- each skipped `__init__.py` only gathers names: imports, definitions and assignments to plain
  names, under `if`/`try` at most; no other call at its top level than reads and questions
  (`logging.getLogger`, `torch.cuda.is_available()`; any other call may set the environment,
  Triton's knobs or torch's defaults), no decorator, no assignment to `__path__`, no module
  `__getattr__`;
- the kernel's module, and every module of the project it imports (found through its import
  statements, anywhere in the files, its `__main__` block included), takes from those packages only
  their modules (`from pkg import submodule`), never a name their `__init__` defines, never the
  package object itself (`import pkg`), and imports nothing by a computed name (`importlib`).

A skipped package is a module object with the package's `__path__`, `__file__` and spec whose
missing attributes raise InitNeeded instead of AttributeError (its submodules still import): a
read the files did not show stops the light import, and kinspect.compile.loader imports the
module the ordinary way; in the code kinspect runs after the import (a `__main__` block, `--from`)
it runs the skipped `__init__`s then (run_skipped) and that code again.

What the files cannot show: a module that a skipped `__init__` imports and the kernel's module does
not is not run, so what it does to other modules (registering torch ops, patching a library) is not
done. Where that matters, `KINSPECT_PACKAGE_INIT=1` in the environment runs every `__init__`;
benchmarks/package_init.py compares the two on a corpus of real projects.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
import sys
import types
from pathlib import Path

# How many of the project's files the check reads before it gives up (and the import runs the
# `__init__`s as usual): the light imports seen in fetched projects read at most 14; a module that
# reaches 200 (LightLLM's fused MoE) cost about half a CPU-second of parsing for nothing.
MAX_FILES = 50
# Calls an assignment in a skipped `__init__.py` may make: they read, they set nothing.
READ_ONLY_CALLS = {"getLogger", "version", "get", "getenv", "getattr", "frozenset", "set", "list", "dict", "tuple",
                   "str", "int", "float", "bool", "namedtuple", "TypeVar"}
# Calls named as questions, which an `if` of a skipped `__init__.py` may ask.
QUESTIONS = ("is_", "has", "get", "find_spec", "isinstance", "issubclass", "callable", "len")
# Dunder names an `__init__.py` commonly defines and a module may read: never answered by a bare package.
SHARED_DUNDERS = {"__version__", "__all__", "__author__", "__credits__", "__getattr__"}


class InitNeeded(BaseException):
    """A module read a name of a package whose `__init__.py` kinspect skipped (a BaseException: a
    file's `except Exception` cannot swallow it and carry on without the name)."""


class BarePackage(types.ModuleType):
    """A package whose `__init__.py` has not run: its submodules import, any other name it is asked
    for raises InitNeeded; while run_skipped runs the skipped `__init__`s, its own runs then, as
    the import the skipped one stood for would have run it (`pkg/__init__.py` reading a name of
    `pkg.kernels`, another skipped package)."""

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__") and name not in SHARED_DUNDERS:
            raise AttributeError(name)
        if _is_submodule(Path(self.__path__[0]), name):
            raise AttributeError(name)      # the import system then imports it
        if _RUNNING:
            _run_init(self)
            return getattr(self, name)
        raise InitNeeded(f"{self.__name__}.{name}")


# run_skipped is running the skipped `__init__`s
_RUNNING: list = []


def _run_init(module) -> None:
    module.__class__ = types.ModuleType      # its names are its own from now on
    init = Path(module.__file__)
    exec(compile(init.read_bytes(), str(init), "exec"), module.__dict__)


def _is_submodule(folder: Path, name: str) -> bool:
    if (folder / f"{name}.py").is_file() or (folder / name).is_dir():
        return True
    return any(p.name.startswith(name + ".") and p.suffix in (".so", ".pyd") for p in folder.glob(f"{name}.*"))


def enabled() -> bool:
    return os.environ.get("KINSPECT_PACKAGE_INIT", "") != "1"


def skippable(file: Path, module: str, package: str, root: Path) -> tuple[str, ...]:
    """The packages of `module` (the file `file`, its package root's parent `root`) whose
    `__init__.py` need not run for it, outermost first; () when one of them must run, or when none
    has an `__init__.py`."""
    if not package or file.stem == "__init__" or not enabled():
        return ()
    parts = package.split(".")
    if parts[0] in sys.modules:
        return ()
    packages = {}
    for i in range(1, len(parts) + 1):
        folder = root.joinpath(*parts[:i])
        if (folder / "__init__.py").is_file():
            packages[".".join(parts[:i])] = folder
    if not packages or not all(_gathers_names(folder / "__init__.py") for folder in packages.values()):
        return ()
    if not _reads_only_modules(file, module, parts[0], root, packages):
        return ()
    return tuple(packages)


def install(names: tuple[str, ...], root: Path) -> None:
    """Put bare packages `names` in sys.modules, each an attribute of its parent as an import makes it."""
    for name in names:
        folder = root.joinpath(*name.split("."))
        spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])
        bare = BarePackage(name)
        bare.__spec__, bare.__loader__ = spec, spec.loader
        bare.__file__, bare.__path__, bare.__package__ = str(folder / "__init__.py"), [str(folder)], name
        sys.modules[name] = bare
        parent, _, last = name.rpartition(".")
        if parent in sys.modules:
            setattr(sys.modules[parent], last, bare)


def run_skipped(top: str) -> None:
    """Run the `__init__.py` of every bare package of `top`, outermost first, into the package
    object itself (as a lazy import would: the modules imported since are in sys.modules already)."""
    bare = sorted((n for n, m in list(sys.modules.items()) if isinstance(m, BarePackage)
                   and (n == top or n.startswith(top + "."))), key=lambda n: n.count("."))
    _RUNNING.append(top)
    try:
        for name in bare:
            if isinstance(sys.modules.get(name), BarePackage):     # not run already by an outer one
                _run_init(sys.modules[name])
    finally:
        _RUNNING.pop()


# -- what the files show --------------------------------------------------------------------------

def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_bytes(), str(path))
    except (SyntaxError, ValueError, OSError):
        return None


def _gathers_names(init: Path) -> bool:
    """Whether an `__init__.py` only imports and defines names (see the module's docstring)."""
    tree = _parse(init)
    return tree is not None and all(_gathers(s) for s in tree.body)


def _gathers(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass, ast.Delete)):
        return True
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name not in ("__getattr__", "__dir__") and not stmt.decorator_list
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Constant)          # a docstring
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = [n for t in targets for n in ast.walk(t)]
        if not all(isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Store)) for n in names) or \
                any(isinstance(n, ast.Name) and n.id == "__path__" for n in names):
            return False
        return stmt.value is None or _reads_only(stmt.value)
    if isinstance(stmt, ast.If):
        return _reads_only(stmt.test) and all(map(_gathers, stmt.body + stmt.orelse))
    if isinstance(stmt, ast.Try):
        return all(map(_gathers, stmt.body + stmt.orelse + stmt.finalbody + [s for h in stmt.handlers for s in h.body]))
    return False


def _reads_only(expr: ast.expr) -> bool:
    """Whether every call in `expr` is a question (`torch.cuda.is_available()`, `hasattr(...)`) or
    one of READ_ONLY_CALLS."""
    return all(_call_name(c) in READ_ONLY_CALLS or _call_name(c).startswith(QUESTIONS)
               for c in ast.walk(expr) if isinstance(c, ast.Call))


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _reads_only_modules(file: Path, module: str, top: str, root: Path, packages: dict) -> bool:
    """Whether the module and the project's modules it imports take only submodules from `packages`."""
    seen, todo = set(), [(file, module)]
    while todo:
        path, name = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if len(seen) > MAX_FILES:
            return False
        tree = _parse(path)
        if tree is None:
            return False
        package = name if path.stem == "__init__" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _call_name(node) in ("import_module", "__import__", "find_spec"):
                return False
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] != top:
                        continue
                    if a.asname is None or a.name in packages:
                        return False     # binds the package itself (`import pkg`, `import pkg.sub`)
                    todo += _imported(a.name, root, packages)
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, package)
                if base is None:
                    return False
                if base.split(".")[0] != top:
                    continue
                for a in node.names:
                    if base in packages:
                        if a.name == "*" or f"{base}.{a.name}" in packages or \
                                not _is_submodule(root.joinpath(*base.split(".")), a.name) or \
                                {a.name, "*"} & _rebound(packages[base] / "__init__.py"):
                            return False     # a name the skipped __init__ defines, or the package itself
                        todo += _project_file(f"{base}.{a.name}", root)
                    elif a.name != "*":
                        todo += _project_file(f"{base}.{a.name}", root)
                todo += _imported(base, root, packages)
    return True


@functools.lru_cache(maxsize=None)
def _rebound(init: Path) -> frozenset:
    """Names an `__init__.py` binds to something else than its submodule of that name (`from .ops
    import ops` makes `pkg.ops` a function); "*" when a star import may bind any."""
    tree = _parse(init)
    names = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Import):
            names |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            own = node.level == 1 and node.module is None      # `from . import ops` binds the submodule
            names |= {a.asname or a.name for a in node.names if not (own and a.asname in (None, a.name))}
    return frozenset(names)


def _absolute(node: ast.ImportFrom, package: str) -> str | None:
    if not node.level:
        return node.module
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts) or (node.level > 1 and node.level - 1 == len(parts)):
        return None
    base = parts[:len(parts) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imported(name: str, root: Path, packages: dict) -> list[tuple[Path, str]]:
    """The files importing the project's module `name` runs: its packages' `__init__.py` (those
    not skipped) and its own."""
    parts = name.split(".")
    return [f for i in range(1, len(parts) + 1) if ".".join(parts[:i]) not in packages
            for f in _project_file(".".join(parts[:i]), root)]


def _project_file(name: str, root: Path) -> list[tuple[Path, str]]:
    """The file of the project's module `name` (a module, or a package's __init__.py), if there is one."""
    path = root.joinpath(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return [(candidate, name)]
    return []
