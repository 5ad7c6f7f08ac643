"""What a command line names, checked before any work: a typo costs a fraction of a second, not
the seconds of importing torch and compiling a sweep before the mistake shows.

Every check here reads text only (kernel files through `ast`, the backends' stage tables, the
target syntax); nothing imports torch or triton. A check answers only where it is sure: a kernel
file whose function it cannot find statically (made by a factory, imported from elsewhere) is left
to the full load, which says what is wrong there.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from kinspect.core.errors import NotFound, UsageError, did_you_mean
from kinspect.files.sources import ARCHIVE_SUFFIXES

# "64", "128", "fp16": what is left over when `-p BLOCK_SIZE=32 64` was meant as `-p BLOCK_SIZE=32,64`
LOOSE_VALUE_RE = re.compile(r"^-?[0-9]+$")


def kernel(text: str, constexprs=(), *, args=()) -> None:
    """A kernel named on the command line (shipped name or file.py:name / pkg.mod:name) and the
    -p / --arg names given to it. Raises NotFound / UsageError; returns when all is plausible."""
    from kinspect.compile.loader import is_user_kernel, split

    if is_user_kernel(text):
        source, name = split(text)
        return _user_kernel(text, source, name, set(constexprs) | set(args))
    if Path(text).is_file() and text.endswith(".py"):
        raise UsageError(f"name the kernel in '{text}': {text}:KERNEL; its Triton kernels: "
                         f"{', '.join(_kernels_in(Path(text))) or 'none'}")
    if Path(text).exists():
        raise UsageError(f"'{text}' is saved output, not a kernel to compile: read it with kinspect vec-report, "
                         f"show or ls")
    if _looks_like_path(text):
        raise NotFound(f"no such file or folder: '{text}'")
    if LOOSE_VALUE_RE.match(text):
        raise UsageError(f"'{text}' is a value, not a kernel; several values of one constexpr are written "
                         f"with commas: -p NAME=32,{text} (a row of kinspect ls names a variant only where "
                         f"the store, --store, holds that many)")
    from kinspect import kernels

    declared = kernels.declared()
    if text not in declared:
        raise NotFound(f"kernel '{text}' not found{did_you_mean(text, declared)} (kinspect ls --kernels lists them; "
                       f"a kernel of yours is path/to/file.py:kernel_name)")
    if args:
        raise UsageError(f"--arg is for user kernels (file.py:name); '{text}' ships with its own arguments")
    for key in constexprs:
        if key not in declared[text]:
            raise UsageError(f"kernel '{text}' has no constexpr '{key}'{did_you_mean(key, declared[text])}; "
                             f"its constexprs: {', '.join(declared[text]) or 'none'}")


def item(text: str, constexprs=(), *, args=(), store=None) -> None:
    """An item of vec-report / diff / report: an existing path (a store, cache, dump, stage file),
    a variant's name in `store` (diff and report take those), else a kernel as `kernel` checks it."""
    from kinspect.compile.loader import is_user_kernel

    path = Path(text)
    if path.exists() and not is_user_kernel(text):
        if path.is_file() and text.endswith(".py"):
            return kernel(text)          # a kernel file without :KERNEL
        return folder(path)
    if store is not None and LOOSE_VALUE_RE.match(text) and _row(text, Path(store)):
        return                           # a row of `kinspect ls STORE`
    try:
        kernel(text, constexprs, args=args)
    except NotFound:
        if store is None or not _in_store(text, Path(store)):
            raise


def _row(text: str, store: Path) -> bool:
    from kinspect.analysis.lookup import row

    return row(text, store) is not None


def _in_store(name: str, store: Path) -> bool:
    from kinspect.files import sources
    from kinspect.analysis.lookup import matching

    return store.is_dir() and bool(matching(name, sources.discover(store).variants))


def folder(path: Path) -> None:
    """A path that exists, as an input: an archive or an empty folder is its own one-line error."""
    from kinspect.files.sources import not_readable

    why = not_readable(path)
    if why:
        raise UsageError(why)


def target(text: str | None) -> None:
    """An explicit -t value: its syntax, backend and arch (`device` and the default are resolved
    where they are used: asking for the active device imports Triton)."""
    if text in (None, "", "auto", "device"):
        return
    from kinspect.compile.targets import resolve

    resolve(text)


def stage(name: str | None, target_text: str | None) -> None:
    """dump --stage S when the target is known without a device: S must be a stage that target's
    backend makes. On a device (or a CPU backend) the backend is only known after the compile."""
    if not name:
        return
    from kinspect.compile.targets import DEFAULT_OFFLINE, TARGET_RE, no_device_possible

    if target_text in (None, "", "auto") and no_device_possible():
        target_text = DEFAULT_OFFLINE
    m = TARGET_RE.match(target_text or "")
    if not m:
        return
    from kinspect import backends

    b = backends.for_target(m["backend"])
    names = [s.name for s in b.stages] + [d.stage.name for d in b.derivers]
    if names and name not in names:
        raise UsageError(f"--stage '{name}': a {m['backend']} variant has no such stage{did_you_mean(name, names)}; "
                         f"its stages: {', '.join(dict.fromkeys(names))}")


def _looks_like_path(text: str) -> bool:
    return "/" in text or "\\" in text or text.startswith(".") or text.lower().endswith(
        ARCHIVE_SUFFIXES + (".py", ".json", ".ttir", ".ttgir", ".ll", ".llir", ".ptx", ".sass", ".amdgcn", ".s", ".asm"))


def _user_kernel(text: str, source: str, name: str, given: set) -> None:
    if not source.endswith(".py"):
        return          # pkg.mod:name: found on sys.path by the loader, which says what is missing
    path = Path(source)
    if not path.is_file():
        raise NotFound(f"file '{source}' not found")
    try:
        tree = ast.parse(path.read_bytes(), filename=source)
    except (SyntaxError, ValueError):
        return          # the loader reports the syntax error with its line
    bound, functions = _top_level(tree)
    if "." in name:     # a kernel in a class (Sum.backward): its class must be there; the loader finds the rest
        name = name.split(".")[0]
        given = set()
    if name not in bound:
        if "*" in bound:
            return
        kernels = [f.name for f in functions.values() if _is_kernel(f)]
        raise NotFound(f"'{source}' defines no '{name}'{did_you_mean(name, kernels)}; its Triton kernels: "
                       f"{', '.join(kernels) or 'none'}")
    fn = functions.get(name)
    if fn is None:
        return          # bound by an assignment or import: the loader knows what it is
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    if fn.args.vararg or fn.args.kwarg:
        return
    unknown = sorted(k for k in given if k not in params)
    if unknown:
        raise UsageError(f"kernel '{name}' has no parameter {', '.join(unknown)}"
                         f"{did_you_mean(unknown[0], params)}; its parameters: {', '.join(params)}")


def _kernels_in(path: Path) -> list[str]:
    try:
        _, functions = _top_level(ast.parse(path.read_bytes()))
    except (SyntaxError, ValueError, OSError):
        return []
    return [f.name for f in functions.values() if _is_kernel(f)]


def _top_level(tree: ast.Module) -> tuple[set[str], dict[str, ast.FunctionDef]]:
    """Names a module binds at its top level ('*' for a star import), and its function definitions."""
    bound: set[str] = set()
    functions: dict[str, ast.FunctionDef] = {}
    for node in _module_statements(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            if not isinstance(node, ast.ClassDef):
                functions[node.name] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.NamedExpr):
            bound.add(node.target.id)
    return bound, functions


def _module_statements(tree: ast.Module):
    """Top-level statements, and those inside top-level if/try/with blocks (a kernel defined under
    `if HAS_TRITON:` is still the module's)."""
    todo = list(tree.body)
    while todo:
        node = todo.pop(0)
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With, ast.ExceptHandler)):
            for attr in ("body", "orelse", "finalbody", "handlers"):
                todo += getattr(node, attr, [])


def _is_kernel(fn) -> bool:
    return any("jit" in ast.unparse(d) or "autotune" in ast.unparse(d) or "heuristics" in ast.unparse(d)
               for d in fn.decorator_list)
