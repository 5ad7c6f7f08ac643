"""Load the module a user's kernel lives in, whatever its module-level code does.

`KERNEL` names it three ways: `path/file.py:kernel`, `path/pkg/mod.py:kernel` (a module of a
package: relative imports work, the package root is found from `__init__.py` files) and
`pkg.mod:kernel` (imported by module name from the current folder and sys.path).

The module is first imported as it is, with the target's driver active (so
`triton.runtime.driver.active` answers with the chosen target and the `torch.device` it gives is
usable on this machine), `__name__` not "__main__", `sys.argv` just the file, and every kernel
launch intercepted: module-level test code must never launch anything while kinspect compiles
offline. When the import fails or tries to launch, the module is loaded again from the file's
AST with only its definitions (imports, constants, functions, classes, decorated kernels), no
other top-level statement running. `Loaded.how` says in one line which of the two it did.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import importlib.util
import io
import os
import sys
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path

from kinspect.errors import KinspectError, NotFound

# `pkg.mod` in `pkg.mod:kernel`
MODULE_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


@dataclass(frozen=True)
class Loaded:
    module: types.ModuleType
    file: Path
    imported: bool              # False: definitions only, from the AST
    how: str                    # one line: which of the two, and why
    failed: tuple[str, ...] = ()   # definitions that raised in a definitions-only load ("line 12: ...")
    skipped: int = 0            # top-level statements a definitions-only load did not run
    why: str = ""               # what stopped the import, for a definitions-only load
    undefined: dict = field(default_factory=dict)   # name -> why its definition raised


class LaunchAttempt(BaseException):
    """Raised in place of any kernel launch during an import. A BaseException, so module-level
    code that catches Exception around its test launch cannot swallow it."""

    def __init__(self, kernel: str, lines: tuple[int, ...] = ()):
        super().__init__(kernel)
        self.kernel = kernel
        self.lines = lines     # where in the user's file, outermost first, when known


@dataclass(frozen=True)
class Where:
    """What a KERNEL text names: the file, the module name to import it as, and the folder that
    must be on sys.path for that import (the package root's parent, or the file's folder)."""

    file: Path
    module: str
    root: Path
    package: str = ""           # "" for a lone file
    by_name: bool = False       # named as pkg.mod, not as a path


def split(text: str) -> tuple[str, str]:
    """`a/b.py:kern` -> ("a/b.py", "kern"); `pkg.mod:kern` -> ("pkg.mod", "kern")."""
    source, _, name = text.rpartition(":")
    return source, name


def is_user_kernel(text: str) -> bool:
    """`file.py:name` or `pkg.module:name` (a kernel in the user's code, not a shipped one)."""
    source, name = split(text)
    if not source or not name.isidentifier():
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
        if any(not (base.joinpath(*parts[:i]) / "__init__.py").is_file() for i in range(1, len(parts))):
            continue
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
        parts, folder = [] if path.stem == "__init__" else [path.stem], path.parent
        while (folder / "__init__.py").is_file() and folder.name.isidentifier():
            parts.insert(0, folder.name)
            folder = folder.parent
        if len(parts) > 1 or path.stem == "__init__":
            name = ".".join(parts)
            return Where(path, name, folder, package=name if path.stem == "__init__" else name.rpartition(".")[0])
        # a lone file: a private module name, so it can shadow nothing (a file named triton.py, say)
        return Where(path, f"kinspect_user_{abs(hash(str(path)))}", path.parent)
    found = _find_module(source)
    if found is None:
        raise NotFound(f"no module '{source}' in the current folder or on sys.path; run kinspect from the folder "
                       f"that holds the package, or name the file: path/to/{source.replace('.', '/')}.py:KERNEL")
    path, root = found
    package = source if path.stem == "__init__" else source.rpartition(".")[0]
    return Where(path, source, root, package=package, by_name=True)


# -- the import, guarded ------------------------------------------------------------------------

@contextlib.contextmanager
def guarded(where: Where, driver_context):
    """What an import of the user's file runs inside: the target's driver, no launches, a private
    Triton cache, `sys.argv` = [the file], its prints kept out of kinspect's output, and the
    folder it is imported from on sys.path."""
    from triton.runtime.jit import JITFunction

    from kinspect.compile import private_cache

    attempts: list[LaunchAttempt] = []

    def refuse(self, *args, **kwargs):
        name = getattr(self, "__name__", None) or getattr(getattr(self, "fn", None), "__name__", "kernel")
        lines = tuple(f.lineno for f in traceback.extract_stack()
                      if f.filename and os.path.realpath(f.filename) == str(where.file))
        attempts.append(LaunchAttempt(name, lines))  # noted, in case the file's code catches even a BaseException
        raise LaunchAttempt(name, lines)

    patched = [(JITFunction, JITFunction.run)]
    interpreted = _interpreted_function()
    if interpreted is not None:
        patched.append((interpreted, interpreted.run))
    argv, root, bytecode = sys.argv, str(where.root), sys.dont_write_bytecode
    sys.path.insert(0, root)
    sys.argv = [str(where.file)]
    sys.dont_write_bytecode = True   # no __pycache__ left in the user's folders
    for cls, _ in patched:
        cls.run = refuse
    try:
        # what the file prints (its test output, argparse's usage line) is not kinspect's to show:
        # the one line on how the file was loaded says what stopped it
        with private_cache(), driver_context, contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            yield attempts
    finally:
        for cls, original in patched:
            cls.run = original
        sys.argv = argv
        sys.dont_write_bytecode = bytecode
        _remove_once(sys.path, root)


def _interpreted_function():
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:
        return None
    return InterpretedFunction


def _why(e: BaseException, file: Path) -> str:
    """What stopped an import, where in the user's file: `its module-level code launches
    'add_kernel' (line 52, via line 38)`, `importing it failed at line 12: RuntimeError: ...`."""
    lines = list(getattr(e, "lines", ())) or _lines_in(e, file)
    at = ""
    if lines:
        at = f"line {lines[0]}" + (f", via line {lines[-1]}" if lines[-1] != lines[0] else "")
    else:   # it failed in another file of the package (its __init__, a module it imports)
        other = [f for f in traceback.extract_tb(e.__traceback__)
                 if f.filename and os.path.realpath(f.filename).startswith(str(file.parent.parent) + os.sep)]
        if other:
            at = f"{shown(Path(other[-1].filename))}:{other[-1].lineno}"
    if isinstance(e, LaunchAttempt):
        return f"its module-level code launches '{e.kernel}'" + (f" ({at})" if at else "")
    if isinstance(e, SystemExit):
        return f"its module-level code calls sys.exit({e.code!r})" + (f" ({at})" if at else "")
    text = str(e).strip().splitlines()
    what = f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
    return "importing it failed" + (f" at {at}" if at else "") + f": {what}"


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


def _import(where: Where) -> types.ModuleType:
    _forget(where)
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
        except (Exception, LaunchAttempt) as e:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and not \
                    EXAMPLES_NAME in _targets(stmt):
                self.skipped += 1    # a value built from skipped code (`z = x + y` after `x = torch.rand(...)`)
                return
            what = f"launches '{e.kernel}'" if isinstance(e, LaunchAttempt) else \
                f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}".rstrip(": ")
            self.failed.append(f"line {stmt.lineno}: {what}")
            for name in _defined_names(stmt):
                self.undefined[name] = self.failed[-1]

    def evaluate(self, expr: ast.expr):
        return eval(compile(ast.Expression(body=expr), str(self.where.file), "eval"), self.ns)

    def pure(self, expr: ast.expr) -> bool:
        """Whether every call `expr` makes when evaluated is one a definition may make."""
        return all(self.allowed(node.func) for node in _calls(expr))

    def allowed(self, func: ast.expr) -> bool:
        parts = _dotted(func)
        if parts is None or UNSAFE_PARTS & set(parts[1:]):
            return False
        if parts[0] not in self.ns:
            return len(parts) == 1 and parts[0] in SAFE_BUILTINS
        obj = root = self.ns[parts[0]]
        try:
            for p in parts[1:]:  # attribute reads only: the dotted name passed the check above
                obj = getattr(obj, p)
        except Exception:
            return False
        module = root.__name__ if isinstance(root, types.ModuleType) else getattr(obj, "__module__", None) or ""
        if module == self.ns["__name__"]:   # the file's own: a config generator, not a launcher
            return not launched_in(obj)
        return module.split(".")[0] in SAFE_MODULES


def launched_in(fn) -> list[str]:
    """Names a function launches in its body: `kern[grid](...)`, `kern.run(...)`, `kern.warmup(...)`."""
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name):
                names.append(f.value.id)
            elif isinstance(f, ast.Attribute) and f.attr in ("run", "warmup") and isinstance(f.value, ast.Name):
                names.append(f.value.id)
    return list(dict.fromkeys(names))


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

_LOADED: dict[tuple, Loaded] = {}


def load(source: str, *, driver_context, target_key: str, offline: bool) -> Loaded:
    """The module `source` names (a path or a module name), imported or, failing that, its
    definitions only. Loads are cached per file version and target: module-level code may ask the
    driver which target it compiles for."""
    where = locate(source)
    stat = where.file.stat()
    key = (str(where.file), where.module, stat.st_mtime_ns, stat.st_size, target_key)
    if key in _LOADED:
        return _LOADED[key]
    display = shown(where.file)
    with guarded(where, driver_context) as attempts:
        try:
            module = _import(where)
            if attempts:   # the file caught the interception and went on: still a launch
                raise attempts[0]
            loaded = Loaded(module, where.file, True, f"imported {display} (its module-level code ran; it launched "
                                                      f"nothing)")
        except (Exception, SystemExit, LaunchAttempt) as e:
            _forget(where)
            why = _why(e, where.file)
            module, defs = _definitions(where)
            if isinstance(e, LaunchAttempt):
                why += ", which kinspect never does while compiling offline" if offline else \
                    ", which kinspect never does while loading a file"
            failed = f"; {_count(len(defs.failed), 'definition')} failed ({defs.failed[0]})" if defs.failed else ""
            ran = _count(defs.ran, "import and definition", "imports and definitions")
            loaded = Loaded(module, where.file, False,
                            f"definitions only from {display}: {why}; ran {ran}, "
                            f"skipped {_count(defs.skipped, 'other top-level statement')}{failed}",
                            failed=tuple(defs.failed), skipped=defs.skipped, why=why, undefined=dict(defs.undefined))
    _LOADED[key] = loaded
    return loaded


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def shown(path: Path) -> str:
    """A path as the user would type it: relative to the current folder when below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel
