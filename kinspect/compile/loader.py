"""Load the module a user's kernel lives in, whatever its module-level code does.

`KERNEL` names it three ways: `path/file.py:kernel`, `path/pkg/mod.py:kernel` (a module of a
package: relative imports work, the package root is found from `__init__.py` files, namespace
folders without one included) and `pkg.mod:kernel` (imported by module name from the current
folder and sys.path). `kernel` may be `Class.method` for a kernel defined in a class.

The module is first imported as it is, with the target's driver active (so
`triton.runtime.driver.active` answers with the chosen target and the `torch.device` it gives is
usable on this machine), torch's GPU questions answered as the target's device where there is
none (kinspect.compile.device), `__name__` not "__main__", `sys.argv` just the file, and every
kernel launch recorded, never run (kinspect.compile.file_launches): module-level test code must
never launch anything while kinspect compiles, but its launches are the best example values there
are. When the import fails, the module is loaded again from the file's AST with only its
definitions (imports, constants, functions, classes, decorated kernels), no other top-level
statement running. `LoadedFile.how` says in one line which of the two it did.

`run_code` runs more of the file's own code the same way: its `__main__` block, or a call the
user names (`dump --from`), to record the launches there.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import importlib.util
import io
import os
import re
import sys
import time
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from kinspect.compile import light
from kinspect.compile.file_launches import Enough, FileLaunchRecorder
from kinspect.compile.shown import shown
from kinspect.core.errors import KinspectError, NotFound

# `pkg.mod` in `pkg.mod:kernel`
MODULE_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


@dataclass(frozen=True)
class LoadedFile:
    module: types.ModuleType
    file: Path
    imported: bool              # False: definitions only, from the AST
    how: str                    # one line: which of the two, and why
    failed: tuple[str, ...] = ()   # definitions that raised in a definitions-only load ("line 12: ...")
    skipped: int = 0            # top-level statements a definitions-only load did not run
    why: str = ""               # what stopped the import, for a definitions-only load
    undefined: dict = field(default_factory=dict)   # name -> why its definition raised
    launches: tuple = ()        # the launches its module-level code made (file_launches.FileLaunch)
    where: "Where | None" = None


@dataclass(frozen=True)
class Where:
    """What a KERNEL text names: the file, the module name to import it as, and the folder that
    must be on sys.path for that import (the package root's parent, or the file's folder)."""

    file: Path
    module: str
    root: Path
    package: str = ""           # "" for a lone file
    by_name: bool = False       # named as pkg.mod, not as a path
    paths: tuple = ()           # more folders its imports need on sys.path (a project's top folder)


def split(text: str) -> tuple[str, str]:
    """`a/b.py:kern` -> ("a/b.py", "kern"); `pkg.mod:kern` -> ("pkg.mod", "kern")."""
    source, _, name = text.rpartition(":")
    return source, name


def is_user_kernel(text: str) -> bool:
    """`file.py:name`, `file.py:Class.name` or `pkg.module:name` (a kernel in the user's code, not a
    shipped one)."""
    source, name = split(text)
    if not source or not name or not all(p.isidentifier() for p in name.split(".")):
        return False
    if source.endswith(".py"):
        return True
    # a module name; a bare word (`hip:gfx942` is a target) only when a module of that name is here
    if not set(source) <= MODULE_NAME_CHARS or not all(p.isidentifier() for p in source.split(".")):
        return False
    return "." in source or _find_module(source) is not None


def absolute(text: str) -> str:
    """A user kernel's file as an absolute path (`pkg.mod:name` as its file), so another process
    finds it whatever its folder; anything else as it is."""
    if not is_user_kernel(text):
        return text
    source, name = split(text)
    return f"{locate(source).file}:{name}"


def _search_path() -> list[Path]:
    """Where `pkg.mod` is looked for: the current folder, then sys.path (as `python -c` has it)."""
    return [Path.cwd()] + [Path(p) for p in sys.path if p and Path(p).is_dir()]


def _find_module(name: str) -> tuple[Path, Path] | None:
    """(file, root) of module `name` on the search path, found without importing anything (a
    package's __init__ must run under the guard, not here)."""
    parts = name.split(".")
    for base in _search_path():
        folder = base.joinpath(*parts[:-1])
        if any(not base.joinpath(*parts[:i]).is_dir() for i in range(1, len(parts))):
            continue      # folders without __init__.py are namespace packages, as Python imports them
        for candidate in (folder / f"{parts[-1]}.py", folder / parts[-1] / "__init__.py"):
            if candidate.is_file():
                return candidate.resolve(), base.resolve()
    return None


def _remove_once(items: list, value) -> None:
    with contextlib.suppress(ValueError):
        items.remove(value)


def locate(source: str) -> Where:
    if source.endswith(".py"):
        path = Path(source)
        if not path.is_file():
            raise NotFound(f"file '{source}' not found")
        path = path.resolve()
        tops = _import_tops(path)        # read once, for both uses
        folders = _package_folders(path) or _namespace_folders(path, tops)
        parts = [f.name for f in reversed(folders)] + ([] if path.stem == "__init__" else [path.stem])
        folder = folders[-1].parent if folders else path.parent
        extra = _project_roots(tops, folder)
        if len(parts) > 1 or path.stem == "__init__":
            name = ".".join(parts)
            return Where(path, name, folder, package=name if path.stem == "__init__" else name.rpartition(".")[0],
                         paths=extra)
        # a lone file: a private module name, so it can shadow nothing (a file named triton.py, say)
        return Where(path, f"kinspect_user_{abs(hash(str(path)))}", path.parent, paths=extra)
    found = _find_module(source)
    if found is None:
        raise NotFound(f"no module '{source}' in the current folder or on sys.path; run kinspect from the folder "
                       f"that holds the package, or name the file: path/to/{source.replace('.', '/')}.py:KERNEL")
    path, root = found
    package = source if path.stem == "__init__" else source.rpartition(".")[0]
    return Where(path, source, root, package=package, by_name=True)


# How far a namespace folder (no __init__.py) may sit below the package it belongs to: Liger's
# `liger_kernel/ops/experimental/`, gemlite's `triton_kernels/experimental/`.
NAMESPACE_DEPTH = 2


def _package_folders(path: Path) -> list[Path]:
    """The folders of the package `path` is a module of, innermost first: folders with an
    __init__.py, namespace folders below one of them, and as many namespace folders as the file's
    relative imports climb (`from ..utils import x` in a folder of kernels with no __init__.py)."""
    chain, folder, pending = [], path.parent, []
    while folder.name.isidentifier() and folder != folder.parent:
        if (folder / "__init__.py").is_file():
            chain += pending + [folder]
            pending = []
        elif chain or len(pending) >= NAMESPACE_DEPTH:
            break
        else:
            pending.append(folder)
        folder = folder.parent
    if not chain:
        climb = _relative_level(path)
        folder = path.parent
        for _ in range(climb):
            if not folder.name.isidentifier():
                break
            chain.append(folder)
            folder = folder.parent
    while chain and _namespace_above(chain[-1]):
        chain.append(chain[-1].parent)
    return chain


# files of a package read to see how the project names it (`import proj.core.x`)
NAMESPACE_FILES = 200


def _namespace_above(top: Path) -> bool:
    """Whether the folder above the package `top` is a namespace package the project imports it
    through: no __init__.py there, and the package's own files import `parent.top...` (proj/ with
    no __init__.py holding core/, whose files say `from proj.core.x import y`)."""
    parent = top.parent
    if not parent.name.isidentifier() or (parent / "__init__.py").is_file() or parent == parent.parent:
        return False
    prefix = f"{parent.name}.{top.name}"
    for i, f in enumerate(top.rglob("*.py")):
        if i >= NAMESPACE_FILES:
            break
        try:
            tree = ast.parse(f.read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        for n in ast.walk(tree):
            names = [a.name for a in n.names] if isinstance(n, ast.Import) else \
                [n.module] if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module else []
            if any(m == prefix or m.startswith(prefix + ".") for m in names):
                return True
    return False


def _namespace_folders(path: Path, tops: set) -> list[Path]:
    """The folders of the namespace package a file with no __init__.py around it is a module of,
    innermost first: where a folder above it is the top-level package its own imports name
    (flash-bidirectional-linear-attention's `flash_bla/ops/linear_attn/varlen.py` says `from
    flash_bla.utils import contiguous`: it is `flash_bla.ops.linear_attn.varlen`, as the project imports
    it from its top folder). `tops`: the file's _import_tops. [] where none is."""
    chain, folder = [], path.parent
    for _ in range(PROJECT_DEPTH):
        if not folder.name.isidentifier() or folder == folder.parent:
            return []
        chain.append(folder)
        if folder.name in tops:
            return chain if _is_top(folder) else []
        folder = folder.parent
    return []


def _is_top(folder: Path) -> bool:
    """Whether importing `folder.name` would give nothing else: no installed package of that name (a
    user's own `triton/` folder is not Triton)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(folder.name)
    except (ImportError, ValueError):
        return True
    if spec is None:
        return True
    return any(Path(p).resolve() == folder for p in spec.submodule_search_locations or ())


def _import_tops(path: Path) -> set:
    """The top-level names of the file's absolute imports (`flash_bla` of `from flash_bla.utils import x`)."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return set()
    tops = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    return tops | {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0
                   and n.module}


def _relative_level(path: Path) -> int:
    """The deepest relative import of the file (2 for `from ..x import y`), 0 when it has none."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return 0
    return max((n.level for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)), default=0)


# How many folders above a file kinspect looks for the top folder of its project's own imports.
PROJECT_DEPTH = 6


def _project_roots(tops: set, root: Path) -> tuple:
    """Folders above the file that its absolute imports (`tops`, _import_tops) need (`from kernels.utils
    import x` in a repository whose top folder holds `kernels/`), when those modules are not importable
    as they are: as running the file from the repository's top folder would find them."""
    import importlib.util

    found = []
    for top in sorted(tops):
        if (root / top).is_dir() or (root / f"{top}.py").is_file():
            continue
        try:
            if importlib.util.find_spec(top) is not None:
                continue
        except (ImportError, ValueError):
            pass
        folder = root.parent
        for _ in range(PROJECT_DEPTH):
            if (folder / top).is_dir() or (folder / f"{top}.py").is_file():
                if folder not in found:
                    found.append(folder)
                break
            if folder == folder.parent:
                break
            folder = folder.parent
    return tuple(found)


# -- the import, guarded ------------------------------------------------------------------------

@contextlib.contextmanager
def guarded(where: Where, driver_context, recorder):
    """What the user's code runs inside: the target's driver (and device answers), every launch
    recorded by `recorder` and none run, a private Triton cache, `sys.argv` = [the file], its prints
    kept out of kinspect's output, the folders it is imported from on sys.path, no C++/CUDA extension
    built and torch.compile leaving code as it is (kinspect.compile.restrained)."""
    from kinspect.compile import private_cache
    from kinspect.compile.file_launches import active
    from kinspect.compile.restrained import restrained

    argv, bytecode, prefix = sys.argv, sys.dont_write_bytecode, sys.pycache_prefix
    roots = [str(where.root), *map(str, where.paths)]
    for r in reversed(roots):
        sys.path.insert(0, r)
    sys.argv = [str(where.file)]
    # no __pycache__ left in the user's folders: their bytecode is kept in kinspect's own cache, so
    # the next run on the same project does not compile its modules again
    sys.pycache_prefix = _bytecode_dir()
    sys.dont_write_bytecode = sys.pycache_prefix is None
    try:
        # what the file prints (its test output, argparse's usage line) is not kinspect's to show:
        # the one line on how the file was loaded says what stopped it
        with private_cache(), driver_context, active(recorder), restrained(), \
                contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            yield recorder
    finally:
        sys.argv = argv
        sys.dont_write_bytecode = bytecode
        sys.pycache_prefix = prefix
        for r in roots:
            _remove_once(sys.path, r)


def _bytecode_dir() -> str | None:
    """Where the user's modules' bytecode goes (kinspect's cache), or None when it cannot be written."""
    from kinspect.core.cache import cache_dir

    folder = cache_dir() / "bytecode"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return str(folder) if os.access(folder, os.W_OK) else None


def _why(e: BaseException, file: Path) -> str:
    """What stopped an import, where in the user's file: `importing it failed at line 12:
    RuntimeError: ...`, `its module-level code calls sys.exit(2) (line 8)`."""
    from kinspect.compile.file_launches import MAX_RECORDED

    if isinstance(e, Enough):
        return f"its module-level code launched kernels {MAX_RECORDED} times; kinspect stopped it there"
    if isinstance(e, TimeUp):
        return f"its code ran past {e.seconds:g} s; kinspect stopped it there"
    lines = _lines_in(e, file)
    at = ""
    if lines:
        at = f"line {lines[0]}" + (f", via line {lines[-1]}" if lines[-1] != lines[0] else "")
    else:   # it failed in another file of the package (its __init__, a module it imports)
        other = [f for f in traceback.extract_tb(e.__traceback__)
                 if f.filename and os.path.realpath(f.filename).startswith(str(file.parent.parent) + os.sep)]
        if other:
            at = f"{shown(Path(other[-1].filename))}:{other[-1].lineno}"
    if isinstance(e, SystemExit):
        return f"its module-level code calls sys.exit({e.code!r})" + (f" ({at})" if at else "")
    text = str(e).strip().splitlines()
    what = f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
    return "importing it failed" + (f" at {at}" if at else "") + f": {what}{_in_triton(e)}"


def _in_triton(e: BaseException) -> str:
    """` (inside Triton: triton/runtime/autotuner.py:141)` when Triton's own code raised it, called
    by the file's: the file asks this Triton for something it does not do (an API that changed)."""
    frames = traceback.extract_tb(e.__traceback__)
    if not frames or isinstance(e, (ImportError, AssertionError)):
        return ""
    import triton

    # Triton's own package, not a project's `ops/triton/` folder (mamba's, flash-attention's)
    package = os.path.dirname(os.path.realpath(triton.__file__))
    last = os.path.realpath(frames[-1].filename)
    if not last.startswith(package + os.sep):
        return ""
    inside = os.path.relpath(last, os.path.dirname(package)).replace(os.sep, "/")
    return f" (inside Triton: {inside}:{frames[-1].lineno})"


def _lines_in(e: BaseException, file: Path) -> list[int]:
    """The lines of `file` on the exception's traceback, outermost first (the top-level statement,
    then where inside it the file's code was when it stopped)."""
    found = [f.lineno for f in traceback.extract_tb(e.__traceback__)
             if f.filename and os.path.realpath(f.filename) == str(file)]
    if not found and isinstance(e, SyntaxError) and e.filename and os.path.realpath(e.filename) == str(file):
        found = [e.lineno]
    return found


# Module names this loader put in sys.modules (the user's files): only these are ever dropped
# again, never a package someone else imported (kinspect's own, say, when its file is named).
_OURS: set[str] = set()


def _forget(where: Where) -> None:
    """Drop the user's modules from sys.modules (a failed import's leftovers, or a load for another
    target), so the next import runs the files again."""
    top = where.module.split(".")[0]
    for name in [n for n in _OURS if n == top or n.startswith(top + ".")]:
        sys.modules.pop(name, None)
        _OURS.discard(name)


@contextlib.contextmanager
def _tracked(where: Where):
    """Note the modules of the user's package (or lone file) that the block puts in sys.modules."""
    top = where.module.split(".")[0]
    before = set(sys.modules)
    try:
        yield
    finally:
        _OURS.update(n for n in set(sys.modules) - before if n == top or n.startswith(top + "."))


def _import(where: Where, recorder: FileLaunchRecorder) -> types.ModuleType:
    _forget(where)
    skipped = light.skippable(where.file, where.module, where.package, where.root)
    if skipped:
        # its packages' __init__.py not run, where the files show it reads nothing of them
        # (kinspect.compile.light); anything else, and it is imported again the ordinary way
        try:
            with _tracked(where):
                light.install(skipped, where.root)
                return importlib.import_module(where.module)
        except (Exception, SystemExit, Enough, light.InitNeeded):
            _forget(where)
            del recorder.launches[:]
    with _tracked(where):
        if where.package or where.by_name:
            return importlib.import_module(where.module)
        spec = importlib.util.spec_from_file_location(where.module, where.file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[where.module] = module  # triton resolves a kernel's globals through its module
        spec.loader.exec_module(module)
        return module


# -- definitions only, from the AST -------------------------------------------------------------

# Calls an assignment may make and still be a definition (a constant, a list of triton.Configs):
# into these modules, safe builtins, and functions the file itself defines. Anything else (torch
# tensors, the device, prints, kernel launches) makes it module-level code, which is skipped.
SAFE_MODULES = ("triton", "math", "itertools", "functools", "operator", "collections", "enum", "typing",
                "dataclasses", "numbers", "fractions")
# parts of a dotted call that reach the device or time things: never called from a definition
UNSAFE_PARTS = {"driver", "testing", "cuda", "benchmark", "do_bench", "run", "launch"}
SAFE_BUILTINS = {"range", "len", "list", "dict", "tuple", "set", "frozenset", "int", "float", "bool", "str",
                 "min", "max", "sum", "abs", "zip", "enumerate", "sorted", "reversed", "map", "filter", "any",
                 "all", "round", "pow", "divmod", "isinstance", "issubclass", "repr", "hash", "slice", "bytes",
                 "complex", "object", "property", "staticmethod", "classmethod", "type"}
EXAMPLES_NAME = "kinspect_examples"   # kinspect's own declaration: always a definition


@dataclass
class _Definitions:
    where: Where
    ns: dict
    ran: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)
    undefined: dict = field(default_factory=dict)

    def run(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.one(stmt)

    def one(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.execute(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = stmt.value
            if value is None or EXAMPLES_NAME in _targets(stmt) or self.pure(value):
                self.execute(stmt)
            else:
                self.skipped += 1
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            self.execute(stmt)          # a docstring
        elif isinstance(stmt, ast.If) and not _is_main_guard(stmt.test) and self.pure(stmt.test):
            try:
                chosen = stmt.body if self.evaluate(stmt.test) else stmt.orelse
            except Exception:
                self.skipped += 1
                return
            self.run(chosen)
        elif isinstance(stmt, ast.Try):
            before = len(self.failed)
            self.run(stmt.body)
            if len(self.failed) > before and stmt.handlers:   # `try: import x / except ImportError: x = None`
                for text in self.failed[before:]:
                    for k in [k for k, v in self.undefined.items() if v == text]:
                        del self.undefined[k]
                del self.failed[before:]
                self.run(stmt.handlers[0].body)
            elif stmt.orelse:
                self.run(stmt.orelse)
            self.run(stmt.finalbody)
        else:
            self.skipped += 1

    def execute(self, stmt: ast.stmt) -> None:
        code = compile(ast.Module(body=[stmt], type_ignores=[]), str(self.where.file), "exec")
        try:
            exec(code, self.ns)
            self.ran += 1
        except (Exception, SystemExit, Enough) as e:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and not \
                    EXAMPLES_NAME in _targets(stmt):
                self.skipped += 1    # a value built from skipped code (`z = x + y` after `x = torch.rand(...)`)
                return
            what = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}".rstrip(": ")
            self.failed.append(f"line {stmt.lineno}: {what}")
            for name in _defined_names(stmt):
                self.undefined[name] = self.failed[-1]

    def evaluate(self, expr: ast.expr):
        return eval(compile(ast.Expression(body=expr), str(self.where.file), "eval"), self.ns)

    def pure(self, expr: ast.expr) -> bool:
        """Whether every call `expr` makes when evaluated is one a definition may make."""
        return all(self.allowed(node.func) for node in _calls(expr))

    def allowed(self, func: ast.expr) -> bool:
        from kinspect.compile.device import questions

        parts = _dotted(func)
        if parts is None:
            return False
        if parts[0] not in self.ns:
            return len(parts) == 1 and parts[0] in SAFE_BUILTINS
        obj = root = self.ns[parts[0]]
        try:
            for p in parts[1:]:  # attribute reads only
                obj = getattr(obj, p)
        except Exception:
            return False
        if any(obj is q for q in questions()):    # torch.cuda.get_device_capability(), answered as the target's device
            return True
        if UNSAFE_PARTS & set(parts[1:]):
            return False
        module = root.__name__ if isinstance(root, types.ModuleType) else getattr(obj, "__module__", None) or ""
        if module == self.ns["__name__"]:   # the file's own: a config generator, not a launcher
            return not launched_in(obj)
        return module.split(".")[0] in SAFE_MODULES


def function_tree(fn) -> ast.Module | None:
    """A Python function's source as an AST (a module holding its definition); None where its source
    cannot be read."""
    import inspect
    import textwrap

    try:
        return ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None


def launched_in(fn) -> list[str]:
    """Names a function launches in its body: `kern[grid](...)`, `kern.run(...)`, `kern.warmup(...)`."""
    tree = function_tree(fn)
    if tree is None:
        return []
    names = [launched for node in ast.walk(tree) if isinstance(node, ast.Call) for launched in [launch_of(node)]
             if launched]
    return list(dict.fromkeys(names))


# torch's wrappers that make a kernel traceable: `torch.library.wrap_triton(kern)[grid](...)`
TRACEABLE = ("wrap_triton", "capture_triton")


def launch_of(call: ast.Call) -> str | None:
    """The kernel name a call launches: `kern[grid](...)`, `kern.run(...)`, `kern.warmup(...)`,
    `wrap_triton(kern)[grid](...)`; None for any other call."""
    f = call.func
    if isinstance(f, ast.Subscript):
        base = f.value
        if isinstance(base, ast.Call) and len(base.args) == 1 and (
                (isinstance(base.func, ast.Name) and base.func.id in TRACEABLE) or
                (isinstance(base.func, ast.Attribute) and base.func.attr in TRACEABLE)):
            base = base.args[0]
        return base.id if isinstance(base, ast.Name) else None
    if isinstance(f, ast.Attribute) and f.attr in ("run", "warmup") and isinstance(f.value, ast.Name):
        return f.value.id
    return None


def _defined_names(stmt) -> list[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names]
    return []


def _targets(stmt) -> set[str]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _is_main_guard(test: ast.expr) -> bool:
    return "__name__" in {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}


def _calls(expr: ast.expr):
    """Calls evaluated when `expr` is: not those inside lambdas (they run later, if ever)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Call):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _dotted(func: ast.expr) -> list[str] | None:
    parts = []
    while isinstance(func, ast.Attribute):
        parts.insert(0, func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None       # kernel[grid](...), f()(...): not a plain name
    return [func.id] + parts


def _definitions(where: Where) -> tuple[types.ModuleType, _Definitions]:
    try:
        tree = ast.parse(where.file.read_bytes(), str(where.file))
    except SyntaxError as e:
        raise KinspectError(f"'{where.file}' has a syntax error at line {e.lineno}: {e.msg}; fix the file") from None
    _forget(where)
    if where.package:
        with _tracked(where):
            _parent_packages(where)
    module = types.ModuleType(where.module)
    module.__file__ = str(where.file)
    module.__spec__ = importlib.util.spec_from_file_location(where.module, where.file)
    module.__package__ = where.package
    module.__builtins__ = builtins
    if where.file.stem == "__init__":
        module.__path__ = [str(where.file.parent)]
    sys.modules[where.module] = module
    _OURS.add(where.module)
    defs = _Definitions(where, module.__dict__)
    with _tracked(where):
        defs.run(tree.body)
    return module, defs


def _parent_packages(where: Where) -> None:
    """Make the module's packages importable for its relative imports: imported as they are when
    that works, else bare packages (their __init__ not run) that still find their modules."""
    names = where.package.split(".")
    for i in range(1, len(names) + 1):
        name = ".".join(names[:i])
        try:
            importlib.import_module(name)
        except BaseException:
            bare = types.ModuleType(name)
            bare.__path__ = [str(where.root.joinpath(*names[:i]))]
            bare.__package__ = name
            sys.modules[name] = bare
            if i > 1:
                setattr(sys.modules[".".join(names[:i - 1])], names[i - 1], bare)


# -- the one entry point ------------------------------------------------------------------------

_LOADED: dict[tuple, LoadedFile] = {}


def load(source: str, *, driver_context, target_key: str, offline: bool) -> LoadedFile:
    """The module `source` names (a path or a module name), imported or, failing that, its
    definitions only, with the launches its module-level code made. Loads are cached per file
    version and target: module-level code may ask the driver which target it compiles for."""
    where = locate(source)
    stat = where.file.stat()
    key = (str(where.file), where.module, stat.st_mtime_ns, stat.st_size, target_key)
    if key in _LOADED:
        return _LOADED[key]
    display = shown(where.file)
    with guarded(where, driver_context, FileLaunchRecorder(str(where.file), str(where.root))) as recorder:
        try:
            with budget(IMPORT_BUDGET_S):
                module = _import(where, recorder)
            loaded = LoadedFile(module, where.file, True, f"imported {display} (its module-level code ran; "
                                                          f"{_launched(recorder.launches)}{_tools()})",
                                launches=tuple(recorder.launches), where=where)
        except (Exception, SystemExit, Enough, TimeUp) as e:
            _forget(where)
            why = _why(e, where.file)
            launches = tuple(recorder.launches)
            module, defs = _definitions(where)
            failed = f"; {_count(len(defs.failed), 'definition')} failed ({defs.failed[0]})" if defs.failed else ""
            ran = _count(defs.ran, "import and definition", "imports and definitions")
            launched = f"; before that, it {_launched(launches)}" if launches else ""
            loaded = LoadedFile(module, where.file, False,
                                f"definitions only from {display}: {why}{launched}; ran {ran}, "
                                f"skipped {_count(defs.skipped, 'other top-level statement')}{failed}{_tools()}",
                                failed=tuple(defs.failed), skipped=defs.skipped, why=why,
                                undefined=dict(defs.undefined), launches=launches, where=where)
    _LOADED[key] = loaded
    return loaded


def _tools() -> str:
    """`; it ran nvidia-smi, answered as the target's device; rocm-smi, missing as on a machine with
    only that device` when its code ran vendors' device-query tools (kinspect.compile.device_query)."""
    from kinspect.compile.device import answered

    asked = answered()
    yes = [t for t, ok in asked if ok]
    no = [t for t, ok in asked if not ok]
    parts = ([f"{', '.join(yes)}, answered as the target's device"] if yes else []) + \
        ([f"{', '.join(no)}, missing as on a machine with only that device"] if no else [])
    return f"; it ran {'; '.join(parts)}" if parts else ""


def _launched(launches) -> str:
    """`launched 'add_kernel' (line 38 via line 47), recorded, not run` or `it launched nothing`."""
    if not launches:
        return "it launched nothing"
    names = list(dict.fromkeys(x.kernel for x in launches))
    first = launches[0]
    at = f" ({first.at()})" if first.at() else ""
    more = f" and {_count(len(names) - 1, 'other kernel')}" if len(names) > 1 else ""
    times = f" {_count(len(launches), 'launch', 'launches')}:" if len(launches) > 1 else ""
    return f"launched{times} '{names[0]}'{at}{more}, recorded, not run"


_RUNS: dict[tuple, Ran] = {}
# Seconds the file's own code may run: its import, and its __main__ block or a --from call (a test
# block computing a reference on the CPU can take minutes; kinspect then uses what it has).
IMPORT_BUDGET_S = 120
RUN_BUDGET_S = 20


class TimeUp(BaseException):
    """The file's code ran past its budget (a BaseException: `except Exception` cannot swallow it)."""

    def __init__(self, seconds: float):
        super().__init__(seconds)
        self.seconds = seconds


@contextlib.contextmanager
def budget(seconds: float):
    """Raise TimeUp in the block after `seconds` (main thread only; elsewhere no limit)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum, frame):
        raise TimeUp(seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def main_block(file: Path) -> ast.If | None:
    """The file's `if __name__ == "__main__":` block, if it has one at top level."""
    try:
        tree = ast.parse(file.read_bytes(), str(file))
    except (SyntaxError, ValueError, OSError):
        return None
    return next((s for s in tree.body if isinstance(s, ast.If) and _is_main_guard(s.test)), None)


@dataclass(frozen=True)
class Failure:
    """Where the file's own code raised, for a caller that can act on it: the line of the
    innermost of its functions on the traceback, that function's first line and its names then
    (the last of `frames`)."""

    line: int
    globals: dict
    frames: tuple             # (first line, names) of each of the file's functions on it, outermost first

    @property
    def first_line(self) -> int:
        return self.frames[-1][0]

    @property
    def names(self) -> dict:
        return self.frames[-1][1]


class Ran(NamedTuple):
    """What running more of a file's code gave (run_code)."""

    launches: tuple
    stopped: str              # "" or what stopped the code before the launch, in one line
    early: bool               # kinspect stopped it once it had the launch
    failure: Failure | None = None


def _failure(e: BaseException, file: Path) -> Failure | None:
    tb, last, frames = e.__traceback__, None, []
    while tb is not None:
        if os.path.realpath(tb.tb_frame.f_code.co_filename) == str(file):
            last = tb
            frames.append((tb.tb_frame.f_code.co_firstlineno, dict(tb.tb_frame.f_locals)))
        tb = tb.tb_next
    if last is None:
        return None
    return Failure(last.tb_lineno, last.tb_frame.f_globals, tuple(frames))


def run_code(loaded: LoadedFile, what: str, *, driver_context, target_key: str, wanted: tuple, index: int,
             call: str = "", frames_of: Path | None = None) -> Ran:
    """Run more of the file's own code with every launch recorded: its `__main__` block
    (what="main") or `call` evaluated in its namespace (what="from": `main`, `test_op(1024)`).
    Stops once the kernel `wanted` (file_launches.kernel_key) has launched `index`+1 times. The
    failure kept is in the frames of `frames_of` (default: the file), where the code called is."""
    where = loaded.where
    key = (str(where.file), target_key, what, call, wanted, index, id(loaded), str(frames_of))
    if key in _RUNS:
        return _RUNS[key]
    ns = loaded.module.__dict__
    label = "its __main__ block" if what == "main" else f"--from {call}"
    recorder = FileLaunchRecorder(str(where.file), str(where.root), where=label)
    recorder.wanted, recorder.index = wanted, index
    stopped, failure = "", None
    with guarded(where, driver_context, recorder):
        try:
            with budget(RUN_BUDGET_S):
                if what == "main":
                    block = main_block(where.file)
                    code = compile(ast.Module(body=block.body, type_ignores=[]), str(where.file), "exec")
                else:
                    code = compile(call if "(" in call else f"{call}()", f"<--from {call}>", "exec")
                try:
                    exec(code, ns)
                except light.InitNeeded:
                    # it read a name of a package whose __init__.py the import skipped
                    # (kinspect.compile.light): run those now, then the code again from the start
                    del recorder.launches[:]
                    light.run_skipped(where.module.split(".")[0])
                    exec(code, ns)
        except Enough:
            pass
        except (Exception, SystemExit, TimeUp) as e:
            stopped = _why(e, where.file).replace("importing it failed", "it failed", 1)
            failure = _failure(e, Path(frames_of) if frames_of else where.file)
            if what != "main" and isinstance(e, (NameError, TypeError)) and not recorder.launches:
                stopped = f"--from {call}: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
    _RUNS[key] = Ran(tuple(recorder.launches), stopped, recorder.stopped, failure)
    return _RUNS[key]


# -- the kernel's neighbours: modules of its package that may launch it -------------------------

# files of the package read (for the kernel's name) and modules imported, at most, per kernel
MAX_SCANNED = 400
MAX_NEIGHBOURS = 6
# seconds all of a kernel's neighbours may take to import, a third of it each (one whose module-level
# code runs on is stopped, and the next imported)
NEIGHBOURS_BUDGET_S = 60
MAX_SCANNED_BYTES = 1 << 20
_SKIPPED_FOLDERS = {"tests", "test", "__pycache__", "benchmarks", "benchmark", "docs", "examples"}
_NEIGHBOURS: dict[tuple, list] = {}


def neighbours(loaded: LoadedFile, name: str, driver_context) -> list[types.ModuleType]:
    """The other modules of the kernel's package (of a lone file's folder) whose text names the
    kernel `name`, imported as `load` imports (launches recorded, none run): where its wrapper is
    when its own file has none (attorch's autograd Functions in `*_layer.py` beside `*_kernels.py`,
    an `ops.py` beside `kernels.py`). Its own folder first; tests, benchmarks and examples are not
    read. A module whose import fails is left out."""
    where = loaded.where
    if where is None or not loaded.imported:
        return []
    key = (id(loaded), name)
    if key not in _NEIGHBOURS:
        found = []
        end = time.monotonic() + NEIGHBOURS_BUDGET_S
        with guarded(where, driver_context, FileLaunchRecorder(str(where.file), str(where.root))):
            for module_name in _naming(where, name)[:MAX_NEIGHBOURS]:
                left = end - time.monotonic()
                if left <= 0:
                    break
                try:
                    with budget(min(left, NEIGHBOURS_BUDGET_S / 3)), _tracked(where):
                        found.append(importlib.import_module(module_name))
                except (Exception, SystemExit, Enough, TimeUp, light.InitNeeded):
                    continue
        _NEIGHBOURS[key] = found
    return _NEIGHBOURS[key]


def _naming(where: Where, name: str) -> list[str]:
    """Module names of the files near `where.file` that name `name` as a word, nearest first."""
    word = re.compile(rf"\b{re.escape(name)}\b".encode())
    out = []
    mine = lambda path: not path.name.startswith("test_") and path != where.file  # noqa: E731
    for path, text in _python_texts([_package_top(where)], where.file.parent, deep=bool(where.package), skip=True,
                                    wanted=mine):
        if not word.search(text):
            continue
        parts = path.relative_to(where.root).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if parts and all(p.isidentifier() for p in parts):
            out.append(".".join(parts))
    return out


def project_files(where: Where) -> list[tuple[Path, bytes]]:
    """(path, bytes) of the project's own Python files: its package (a lone file's folder) and the
    tests, benchmarks and examples folders beside it (beside a `src` folder too), where its authors
    write the calls they make.
    Each path is relative to the project's folder, so a folder above it (a user's ~/test) names none."""
    from kinspect.compile.test_calls import EXAMPLE_DIRS, is_example_file, is_test_file

    folder = project_folder(where)
    tops = [_package_top(where)]
    above = list(dict.fromkeys([where.root, folder]))
    texts = []
    if where.package and not where.by_name:
        tops += [a / t for a in above for t in ("tests", "test", *EXAMPLE_DIRS) if (a / t).is_dir()]
        # test files beside the package too (`test_triton_nsa.py` in the project's folder), and
        # benchmark scripts in its other top folders (SLA's `evaluate/bench_kernel.py`)
        texts = _python_texts([folder], None, deep=False, skip=False, wanted=lambda path: is_test_file(Path(path.name)))
        others = [d for d in sorted(folder.iterdir()) if d.is_dir() and not d.name.startswith((".", "_")) and
                  d not in tops and d.name not in _SKIPPED_FOLDERS]
        texts = [*texts, *_python_texts(others[:MAX_TOP_FOLDERS], None, deep=False, skip=False,
                                        wanted=lambda path: is_example_file(Path(path.name)))]
    return [(path.relative_to(folder), text)
            for path, text in [*_python_texts(tops, where.file.parent, deep=bool(where.package), skip=False), *texts]]


PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")
# top folders of a project whose benchmark scripts (`bench_*.py`) project_files reads, at most
MAX_TOP_FOLDERS = 32


def project_folder(where: Where) -> Path:
    """The project's folder, that project_files' paths are relative to: the folder its package is
    in, or the one above where that is a `src` folder, or where only the one above is a project's
    (`python/` beside `tests/`, with `pyproject.toml` above: Triton's and FastVideo's layout), or the
    package's top folder where that is the project's (a namespace package its files import by the
    repository's own name: COAT/ with pyproject.toml holds coat/, whose files say `from COAT.coat...`)."""
    root = where.root
    if root.name == "src":
        return root.parent
    if where.package and not any((root / m).is_file() for m in PROJECT_MARKERS):
        if any((root.parent / m).is_file() for m in PROJECT_MARKERS):
            return root.parent
        top = _package_top(where)
        if any((top / m).is_file() for m in PROJECT_MARKERS):
            return top
    return root


def _package_top(where: Where) -> Path:
    """The folder of the kernel's top package, or a lone file's folder."""
    return where.root / where.package.split(".")[0] if where.package else where.file.parent


def _python_texts(tops: list, home, deep: bool, skip: bool, wanted=lambda path: True):
    """(path, bytes) of the `wanted` .py files of `tops` (their trees where `deep`; tests, benchmarks,
    examples left out where `skip`), folder by folder, `home` first: at most MAX_SCANNED files
    counted of each top (a large package leaves the tests beside it theirs), those over
    MAX_SCANNED_BYTES not read."""
    for top in tops:
        scanned = 0
        for folder, files in _nearest_first(top, home, deep, skip):
            if scanned > MAX_SCANNED:
                break
            for f in sorted(files):
                path = folder / f
                if not f.endswith(".py") or not wanted(path):
                    continue
                scanned += 1
                if scanned > MAX_SCANNED:
                    break
                try:
                    if path.stat().st_size <= MAX_SCANNED_BYTES:
                        yield path, path.read_bytes()
                except OSError:
                    continue


def _nearest_first(top: Path, home, deep: bool, skip: bool):
    """(folder, files) of `top` (all of its tree where `deep`, less the skipped folders where `skip`),
    `home` first, then those nearest it (the most folders above it in common: in a large package, the
    modules beside the kernel's and those that import them), then the shallowest."""
    if not deep:
        return [(top, [p.name for p in top.iterdir() if p.is_file()])]
    walked = [(Path(d), files) for d, _, files in os.walk(top) if not (skip and _skipped(Path(d), top))]
    home_parts = Path(home).parts if home else ()

    def shared(folder: Path) -> int:
        n = 0
        for a, b in zip(folder.parts, home_parts):
            if a != b:
                break
            n += 1
        return n

    return sorted(walked, key=lambda t: (t[0] != home, -shared(t[0]), len(t[0].parts), str(t[0])))


def _skipped(folder: Path, top: Path) -> bool:
    return any(p in _SKIPPED_FOLDERS or p.startswith(".") for p in folder.relative_to(top).parts)


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


