"""The project's own classes and functions, found by the dotted names its tests import them by, and
read from their files' text, never imported: where each is defined, what calling it takes, and
which of them reach the kernel by their own code (they name it, its wrapper, or a name a package
re-exports the wrapper by): a test's call of one of those may reach the kernel.

A test often reaches a kernel through the project's other code rather than through its wrapper:

    from lightning_attn.modules import SimpleRMSNorm      # a module whose forward calls the wrapper
    y = SimpleRMSNorm(768)(x)

    from megablocks import ops                            # ops.padded_gather = PaddedGatherOp.apply
    out = ops.padded_gather(x, indices, bin_ids, bins, padded_bins, top_k)

kinspect.compile.test_calls reads such calls with `Def.call` (and `Def.make`, a class's
constructor); calling them is what tells whether the kernel is reached.
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass
from pathlib import Path

# re-exports followed (`pkg/__init__.py: from .norm import SimpleRMSNorm`)
MAX_HOPS = 3


@dataclass(frozen=True)
class Def:
    """A class or function of the project, as a test calls it."""

    module: str          # the module to import it from, as the test does: 'lightning_attn.modules'
    name: str            # 'SimpleRMSNorm'
    file: Path           # where it is defined, relative to the project's folder
    line: int
    kind: str            # "class", "function", or "apply" (an autograd Function's apply under a name)
    call: inspect.Signature          # what calling it (an instance of it, for a class) takes
    make: inspect.Signature | None   # a class's constructor

    @property
    def at(self) -> str:
        return f"{self.file}:{self.line}"


class ProjectDefs:
    """The project's files other than its tests: (path relative to the project's folder, bytes)."""

    def __init__(self, files):
        self.files = {str(p.with_suffix("")).replace("\\", "/"): (p, t) for p, t in files}
        self._trees, self._found, self._ops, self._reaching = {}, {}, {}, {}

    def find(self, dotted: str) -> Def | None:
        """The class or function `dotted` names (`pkg.ops.padded_gather`), through re-exports; None
        where it is not the project's own."""
        if dotted not in self._found:
            module, _, name = dotted.rpartition(".")
            self._found[dotted] = self._find(module, name, module, 0) if module else None
        return self._found[dotted]

    def op(self, dotted: str) -> Def | None:
        """The function of the project a `torch.ops.ns.name` (or `.default`) call runs on the GPU, as
        the project registers it: `@torch.library.custom_op("ns::name")` (or triton_op, impl,
        register_kernel) on it, `lib.impl("name", fn, "CUDA")`, or a table of them
        (`{"name": {"CUDA": fn}}`); None where none is found."""
        name = op_name(dotted)
        if name is None:
            return None
        if name not in self._ops:
            found = self._registrations(name.encode(), lambda op, fn: op == name)
            self._ops[name] = found[0][1] if found else None
        return self._ops[name]

    def ops_of(self, names: set, file: str) -> set:
        """The op names the functions `names` of the file at `file` (absolute) are registered as."""
        found = self._registrations(names, lambda op, fn: fn in names)
        return {op for op, d in found if d.name in names and same_file(d.file, file)}

    def reaching_names(self, names: set) -> set:
        """The classes and functions of the project whose code names one of `names` (the kernel, its
        wrappers), an autograd Function's `x = Fn.apply` of one, and the ops they are registered as:
        what a test may call to reach the kernel."""
        key = frozenset(names)
        if key not in self._reaching:
            # the names a package re-exports them by too (`triton_quantize_mx4 as quantize_mx4`)
            words = set(names)
            for _ in range(MAX_HOPS):
                more = {a.asname for path, text in self.files.values() if _names_any(text, words)
                        for n in ast.walk(self._tree(path) or ast.Module([], [])) if isinstance(n, ast.ImportFrom)
                        for a in n.names if a.name in words and a.asname} - words
                if not more:
                    break
                words |= more
            out = set()
            for path, text in self.files.values():
                if not _names_any(text, words):
                    continue
                tree = self._tree(path)
                if tree is None:
                    continue
                local = words | self._aliases_of(tree, path, words)
                own = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                       and _uses(n, local)}
                for n in tree.body if tree is not None else ():
                    # `x = Fn.apply`, and the names the module binds to one of them or to what one
                    # returns (xtuner's `group_gemm = get_group_gemm()`, which picks its GPU implementation)
                    if isinstance(n, ast.Assign) and _bound_to(n.value) in own | local:
                        own |= {t.id for t in n.targets if isinstance(t, ast.Name)}
                # `_`: the throwaway name of a custom op's `@op.register_fake def _(...)`, which every
                # other file's `for _ in ...` names too
                out |= (own - {"_"}) | {op for op, fn in _registered(tree) if fn in own}
            self._reaching[key] = out
        return self._reaching[key]

    def _aliases_of(self, tree: ast.Module, path: Path, names: set) -> set:
        """The names a file imports one of `names` by (`from pkg.triton import quantize_mx4`, a
        package re-exporting `triton_quantize_mx4 as quantize_mx4`; `import x as y`)."""
        module = _module_of(path)
        package = module if path.stem == "__init__" else module.rpartition(".")[0]
        out = set()
        for n in ast.walk(tree):
            if not isinstance(n, ast.ImportFrom):
                continue
            source = _imported_from(n, package)
            for a in n.names:
                if a.name in names:
                    out.add(a.asname or a.name)
                elif source and a.name != "*":
                    d = self.find(f"{source}.{a.name}")
                    if d is not None and d.name in names:
                        out.add(a.asname or a.name)
        return out

    def _registrations(self, needles, wanted) -> list:
        """(op, Def) of the registrations `wanted(op, function name)` keeps, in the files that hold
        one of `needles` (bytes, or names) and a registration."""
        needles = [needles] if isinstance(needles, bytes) else [n.encode() for n in needles]
        out = []
        for path, text in self.files.values():
            if not any(n in text for n in needles) or \
                    not any(k in text for k in (b"torch.library", b"custom_op", b"triton_op", b".impl(", b'"CUDA"')):
                continue
            tree = self._tree(path)
            for op, fname in _registered(tree) if tree is not None else ():
                if wanted(op, fname):
                    d = self._find(_module_of(path), fname, _module_of(path), 0)
                    if d is not None and d.kind in ("function", "apply"):
                        out.append((op, d))
        return out

    def _text(self, path: Path) -> bytes:
        found = self.files.get(str(path.with_suffix("")).replace("\\", "/"))
        return found[1] if found else b""

    def _module_file(self, module: str):
        stem = module.replace(".", "/")
        for key in (stem, f"{stem}/__init__"):
            if key in self.files:
                return self.files[key][0]
        # a src/ layout, or a project folder above the package
        return next((p for k, (p, _) in self.files.items()
                     if k.endswith("/" + stem) or k.endswith(f"/{stem}/__init__")), None)

    def _tree(self, path: Path):
        if path not in self._trees:
            try:
                self._trees[path] = ast.parse(self._text(path))
            except (SyntaxError, ValueError):
                self._trees[path] = None
        return self._trees[path]

    def _find(self, module: str, name: str, imported_as: str, hops: int) -> Def | None:
        path = self._module_file(module)
        tree = self._tree(path) if path is not None else None
        if tree is None:
            return None
        classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        for n in tree.body:
            if isinstance(n, ast.ClassDef) and n.name == name:
                method = _method(n, "forward") or _method(n, "__call__")
                if method is None:
                    return None
                init = _method(n, "__init__")
                make = signature(init, skip=1) if init is not None else inspect.Signature()
                return Def(imported_as, name, path, n.lineno, "class", signature(method, skip=1), make)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name:
                return Def(imported_as, name, path, n.lineno, "function", signature(n), None)
            # `padded_gather = PaddedGatherOp.apply`
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets) and \
                    isinstance(n.value, ast.Attribute) and n.value.attr == "apply" and \
                    isinstance(n.value.value, ast.Name) and n.value.value.id in classes:
                forward = _method(classes[n.value.value.id], "forward")
                return Def(imported_as, name, path, n.lineno, "apply", signature(forward, skip=1), None) \
                    if forward is not None else None
        if hops >= MAX_HOPS:
            return None
        package = module if path.stem == "__init__" else module.rpartition(".")[0]
        for n in tree.body:
            if not isinstance(n, ast.ImportFrom):
                continue
            source = _imported_from(n, package)
            for a in n.names:
                if source and (a.asname or a.name) == name:      # `from .padded_gather import padded_gather`
                    return self._find(source, a.name, imported_as, hops + 1)
                # `from .srmsnorm import *`: a public name of it, or one its __all__ names
                if source and a.name == "*" and not name.startswith("_"):
                    found = self._find(source, name, imported_as, hops + 1)
                    if found is not None and name in self._exported(found.file, name):
                        return found
        return None

    def _exported(self, path: Path, name: str) -> set:
        """The names `from module import *` takes of the module at `path` (its __all__ where it has one)."""
        tree = self._tree(path)
        for n in tree.body if tree is not None else ():
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets) \
                    and isinstance(n.value, (ast.List, ast.Tuple)):
                return {e.value for e in n.value.elts if isinstance(e, ast.Constant)}
        return {name}


def op_name(dotted: str) -> str | None:
    """The op a `torch.ops.ns.name` (or `.default`) call names: `name`; None for any other call."""
    parts = dotted.split(".")
    return parts[3] if parts[:2] == ["torch", "ops"] and len(parts) >= 4 else None


def _imported_from(node: ast.ImportFrom, package: str) -> str:
    """The module a `from ... import` of a module of `package` imports from, relative ones made
    absolute (`from .norm import x` in pkg.ops: pkg.ops.norm); "" where it cannot tell."""
    if not node.level:
        return node.module or ""
    base = package
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    return f"{base}.{node.module}" if node.module else base


def same_file(relative, absolute) -> bool:
    """Whether a project file (its path relative to the project's folder) is the file at `absolute`."""
    rel, absolute = str(relative).replace("\\", "/"), str(absolute or "").replace("\\", "/")
    return bool(absolute) and absolute.endswith("/" + rel)


def _uses(node, names) -> bool:
    """Whether a def's or class's code names one of `names` (`rms_norm_fwd(...)`, `kernels.gather`)."""
    return any(isinstance(n, ast.Name) and n.id in names or isinstance(n, ast.Attribute) and n.attr in names
               for n in ast.walk(node))


def _bound_to(value: ast.expr) -> str | None:
    """The name a module-level assignment binds its targets to: `Fn` of `Fn.apply`, `f` of `f` and of
    `f(...)`; None for anything else."""
    if isinstance(value, ast.Call):
        value = value.func
    if isinstance(value, ast.Attribute) and value.attr == "apply":
        value = value.value
    return value.id if isinstance(value, ast.Name) else None


def _names_any(text: bytes, names) -> bool:
    """Whether a file's text names one of `names` as a word."""
    return any(re.search(rb"\b%s\b" % re.escape(n.encode()), text) for n in names if n)


def _module_of(path: Path) -> str:
    """The dotted module a project file is imported as from the project's folder."""
    parts = list(path.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    if parts and parts[0] == "src":
        parts.pop(0)
    return ".".join(parts)


def _op_name(node) -> str | None:
    """`"fbgemm::sll_bmm"` or `"sll_bmm"` (a str constant): the op's name, less its namespace."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value and \
            all(c.isalnum() or c in "_:." for c in node.value):
        return node.value.rpartition("::")[2].split(".")[0]
    return None


REGISTERS = {"custom_op", "triton_op", "impl", "register_kernel"}
# dispatch keys of other devices than the GPU: their registrations are not what a GPU runs
NOT_GPU = {"CPU", "Meta", "MPS", "XPU", "AutogradCPU", "AutogradMeta", "cpu", "meta"}


def _registered(tree: ast.Module) -> list[tuple[str, str]]:
    """(op name, the name of the function registered for it) of a module: decorated functions,
    `.impl("name", fn, ...)` calls, and tables `{"name": {"CUDA": fn}}`."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in n.decorator_list:
                keys = {getattr(a, "value", None) for a in [*d.args, *(k.value for k in d.keywords)]} \
                    if isinstance(d, ast.Call) else set()
                if isinstance(d, ast.Call) and getattr(d.func, "attr", getattr(d.func, "id", "")) in REGISTERS and \
                        d.args and (op := _op_name(d.args[0])) and not keys & NOT_GPU:
                    out.append((op, n.name))
        elif isinstance(n, ast.Call) and getattr(n.func, "attr", "") in ("impl", "register_kernel"):
            op = next((o for o in map(_op_name, n.args) if o), None)
            fn = next((a.id for a in n.args if isinstance(a, ast.Name)), None)
            keys = {getattr(a, "value", None) for a in [*n.args, *(k.value for k in n.keywords)]}
            if op and fn and not keys & NOT_GPU:
                out.append((op, fn))
        elif isinstance(n, ast.Dict):
            for k, v in zip(n.keys, n.values):
                op = _op_name(k) if k is not None else None
                if op and isinstance(v, ast.Dict):
                    # the GPU's entry of a dispatch table: "CUDA"; none of a CPU's or Meta's table
                    keys = [getattr(kk, "value", None) for kk in v.keys]
                    v = v.values[keys.index("CUDA")] if "CUDA" in keys else None if set(keys) & NOT_GPU else next(
                        (x for x in v.values if isinstance(x, ast.Name)), None)
                if op and isinstance(v, ast.Name):
                    out.append((op, v.id))
    return out


def _method(cls: ast.ClassDef, name: str):
    return next((n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name),
                None)


def signature(fn, skip: int = 0) -> inspect.Signature:
    """A def's parameters as an inspect.Signature (a default stands for one it has), less the first
    `skip` (self, ctx)."""
    a = fn.args
    positional = a.posonlyargs + a.args
    first_default = len(positional) - len(a.defaults)
    P = inspect.Parameter
    params = [P(p.arg, P.POSITIONAL_OR_KEYWORD, default=None if i >= first_default else P.empty)
              for i, p in enumerate(positional)][skip:]
    if a.vararg:
        params.append(P(a.vararg.arg, P.VAR_POSITIONAL))
    params += [P(p.arg, P.KEYWORD_ONLY, default=P.empty if d is None else None)
               for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        params.append(P(a.kwarg.arg, P.VAR_KEYWORD))
    return inspect.Signature(params)
