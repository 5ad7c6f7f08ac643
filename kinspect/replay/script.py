"""`kinspect repro VARIANT -o repro.py`: one captured launch as a standalone script.

The script needs torch and triton only. It imports the kernel from its file when that file is a
module of definitions still holding the captured kernel (kinspect.replay.spec.importable), as a
project's kernels are kept; otherwise (a script, an edited or lost file), or with `embed`, it
carries the kernel's source: the source captured with it (its @triton.jit
helpers, constexpr globals and imports included) or, for a kernel Inductor generated, the
record's source text under Inductor's imports. It builds the captured arguments with
kinspect.replay.args.new_tensor (copied in verbatim), launches the kernel once on the captured
grid with the captured options, synchronizes, and prints one line. With `interpret` it sets
TRITON_INTERPRET=1 before importing triton and runs on the CPU.
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.replay.source import (INDUCTOR_IMPORTS, TRITON_IMPORTS, KernelSource, import_ref, kernel_def,
                                    python_name as name, runnable_text)
from kinspect.replay.spec import ReplaySpec, generated, importable, plan

# A store is data: its values enter the script as literals (`literal`), its names as checked Python
# names (`name`), its module paths as checked dotted names (`import_ref`). The kernel's source (and
# its helpers') is the only code from the store: checked to be a definition alone
# (kinspect.replay.source.kernel_def) and marked with where it came from. The script is parsed
# before it is written.
INCONSISTENT = "the store is not what kinspect writes; nothing written"

MAIN = '''def main():
    interpret = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
    if interpret:
        device = torch.device("cpu")
    else:
        try:
            device = triton.runtime.driver.active.get_active_torch_device()
        except RuntimeError as e:
            sys.exit(f"no GPU here ({e}); run it under Triton's interpreter: "
                     f"TRITON_INTERPRET=1 python {os.path.basename(sys.argv[0])}")
    KERNEL[GRID](**arguments(device), **OPTIONS)
    if device.type != "cpu":
        getattr(torch, device.type).synchronize()
    print(f"ok: {KERNEL_NAME} ran once on {device}, grid {GRID}")


if __name__ == "__main__":
    main()
'''


def write(spec: ReplaySpec, path: str | Path, *, interpret: bool = False, embed: bool = False, label: str = "",
          triton_version: str = "") -> str:
    """The script's text, written to `path`; returns how it gets the kernel, in words. Nothing is
    written when the store's records do not make a script that parses (a KinspectError says why)."""
    from kinspect.core.modes import file_mode
    from kinspect.files.store import write_atomic

    text, how = script(spec, interpret=interpret, embed=embed, label=label, triton_version=triton_version)
    out = Path(path)
    write_atomic(out, text)
    out.chmod(file_mode(executable=True))
    return how


def script(spec: ReplaySpec, *, interpret: bool = False, embed: bool = False, label: str = "",
           triton_version: str = "") -> tuple[str, str]:
    from kinspect.replay.args import FILL_NOTE, new_tensor

    plan(spec)   # a clear error when there is no source at all
    name(spec.kernel, "the kernel's name")
    ref = spec.ref
    if not embed and ref is not None and not generated(ref) and importable(ref)[0]:
        kernel_part, how = _imported(spec), f"imports the kernel from {ref.file}"
        params = _params(ref.text, spec.kernel) if ref.text else None
    elif spec.source is not None:
        kernel_part, params = _embedded(spec.source, spec.variant)
        how = f"embeds the source captured with it ({spec.source.file}:{spec.source.line})"
    else:
        kernel_part, params = _from_text(spec)
        how = f"embeds the source text in its record ({spec.ref.file})"
    if spec.source is not None and spec.source.name != spec.kernel:
        raise KinspectError(f"the record names the kernel '{spec.kernel}', its captured source "
                            f"{ascii(spec.source.name)[:60]}: {INCONSISTENT}")
    ran = "on the CPU under Triton's interpreter" if interpret else "on the GPU"
    where = f" from {spec.variant}" if spec.variant else ""
    version = f", Triton {triton_version}" if triton_version else ""
    which = ("its arguments are those of the example launch `kinspect dump` compiled it for" if spec.origin == "example"
             else f"{spec.calls:,} of the variant's {spec.total_calls:,} captured launches had these arguments")
    about = (f"One {'example' if spec.origin == 'example' else 'captured'} launch of {spec.kernel}, {ran}.\n\n" +
             textwrap.fill(f"Written by `kinspect repro {label or spec.kernel}`{where} ({spec.target}{version}): "
                           f"{which}. The script {how}. {FILL_NOTE[0].upper() + FILL_NOTE[1:]}. Needs torch and "
                           f"triton only.", 100, break_long_words=False, break_on_hyphens=False) + "\n")
    lines = ["#!/usr/bin/env python3", _docstring(about), "import os", "import sys", ""]
    if interpret:
        lines += ['# Triton reads TRITON_INTERPRET when @triton.jit runs: set it before anything imports triton',
                  'os.environ["TRITON_INTERPRET"] = "1"', ""]
    lines += ["import torch", "import triton", "", kernel_part.rstrip(), "", "",
              inspect.getsource(new_tensor).rstrip(), "", ""]
    options = {name(k, "a launch option"): v for k, v in spec.options.items()}
    lines += [f"KERNEL_NAME = {literal(spec.kernel)}", f"GRID = {literal(tuple(int(g) for g in spec.grid))}",
              f"OPTIONS = {literal(options)}", "", "", "def arguments(device):", "    torch.manual_seed(0)",
              "    return {"]
    aligned = _alignment(spec)
    for a in _checked_args(spec, params):
        lines.append(f"        {literal(a.name)}: {_argument(a, aligned.get(a.name, True))},")
    lines += ["    }", "", "", MAIN]
    text = "\n".join(lines)
    _parses(text, about, spec)
    return text, how


def _parses(text: str, about: str, spec: ReplaySpec) -> None:
    """The script parses and its docstring is the one meant (nothing from the store closed it)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as e:
        where = f" (line {e.lineno}: {e.msg})" if isinstance(e, SyntaxError) else ""
        raise KinspectError(f"the script for '{spec.kernel}' would not parse{where}: {INCONSISTENT}") from None
    if ast.get_docstring(tree, clean=False) != about:
        raise KinspectError(f"the script for '{spec.kernel}' would not start with its description: {INCONSISTENT}")


# -- values from the store, as Python ----------------------------------------------------------------

def literal(value) -> str:
    """Python source for a value read from a store (JSON: None, booleans, numbers, strings, lists and
    objects; tuples): a literal that evaluates to it, never code. A float that is not finite is
    written float('nan') or the like."""
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({repr(value)!r})"
    if isinstance(value, tuple):
        items = [literal(x) for x in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(literal(x) for x in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(str(k))}: {literal(v)}" for k, v in value.items()) + "}"
    raise KinspectError(f"a value of type {type(value).__name__} cannot be written into a script")


def _docstring(text: str) -> str:
    """The module docstring: triple-quoted where that shows `text` as it is, else its repr."""
    plain = all(c.isprintable() or c == "\n" for c in text) and "\\" not in text and '"""' not in text
    return f'"""{text}"""\n' if plain and not text.endswith('"') else repr(text) + "\n"


def _comment(text: str) -> str:
    """Text from a store as the body of a `#` comment: one line, anything unprintable escaped."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


_VALUE_TYPES = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,), "none": (type(None),)}
TORCH_DTYPES = ("float", "bfloat", "int", "uint", "bool", "complex")


def _checked_args(spec: ReplaySpec, params: tuple[list, list] | None) -> list:
    """The launch's arguments, checked against each other and the kernel: Python names, each once,
    each a parameter of the kernel's definition and every parameter without a default given (when
    the script has the definition), values of the kind they were recorded as."""
    seen = set()
    for a in spec.args:
        name(a.name, "a launch argument's name")
        if a.name in seen:
            raise KinspectError(f"the launch of '{spec.kernel}' names argument '{a.name}' twice: {INCONSISTENT}")
        seen.add(a.name)
        if params is not None and a.name not in params[0] + params[1]:
            raise KinspectError(f"the launch of '{spec.kernel}' passes '{a.name}', which its source does not take "
                                f"(it takes {', '.join(params[0] + params[1]) or 'nothing'}): {INCONSISTENT}")
        allowed = _VALUE_TYPES.get(a.kind)
        if allowed is not None and (type(a.value) not in allowed or (a.kind != "bool" and type(a.value) is bool)):
            raise KinspectError(f"argument '{a.name}' is recorded as {a.kind} with a value that is not one: "
                                f"{INCONSISTENT}")
        if a.kind in ("tensor", "tensordesc") and not (isinstance(a.dtype, str) and a.dtype.isidentifier()
                                                         and a.dtype.startswith(TORCH_DTYPES)):
            raise KinspectError(f"argument '{a.name}' has the element type {ascii(a.dtype)[:40]}, not a torch "
                                f"dtype: {INCONSISTENT}")
    missing = [p for p in (params[0] if params else ()) if p not in seen]
    if missing:
        raise KinspectError(f"the launch of '{spec.kernel}' lacks {', '.join(missing)}, which its source takes: "
                            f"{INCONSISTENT}")
    return list(spec.args)


def _params(text: str, kernel: str) -> tuple[list[str], list[str]]:
    """(parameters without a default, parameters with one) of the kernel's definition in `text`."""
    fn, _ = kernel_def(text, kernel)
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    cut = len(positional) - len(fn.args.defaults)
    keyword_only = list(zip((a.arg for a in fn.args.kwonlyargs), fn.args.kw_defaults))
    return (positional[:cut] + [n for n, d in keyword_only if d is None],
            positional[cut:] + [n for n, d in keyword_only if d is not None])


def _alignment(spec: ReplaySpec) -> dict[str, bool]:
    from kinspect.replay.args import _aligned

    try:
        return {a.name: _aligned(spec.attributes.get(a.name) or {}) for a in spec.args if a.kind == "tensor"}
    except (TypeError, ValueError, AttributeError):
        raise KinspectError(f"the specialization recorded for '{spec.kernel}' is not one: {INCONSISTENT}") from None


def _argument(a, aligned: bool) -> str:
    if a.kind == "tensor":
        extra = "" if aligned else ", aligned=False"
        return (f"new_tensor({literal(tuple(int(x) for x in a.shape))}, {literal(tuple(int(x) for x in a.strides))}, "
                f"{literal(a.dtype)}, device{extra})")
    if a.kind in _VALUE_TYPES:
        return literal(a.value)
    if a.kind == "dtype":
        return f"triton.language.core.dtype({literal(str(a.value))})"
    raise KinspectError(f"argument '{a.name}' was recorded as {a.kind}: kinspect cannot write it into a script")


# -- the kernel part --------------------------------------------------------------------------------------

def _imported(spec: ReplaySpec) -> str:
    ref = spec.ref
    return f'''import importlib.util


def _load(path, name):
    """The kernel `name` from the file it was captured from (the JITFunction under any autotune)."""
    spec = importlib.util.spec_from_file_location("captured_kernels", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, os.path.dirname(path))
    spec.loader.exec_module(module)
    kernel = getattr(module, name)
    while not hasattr(kernel, "arg_names") or type(kernel).__name__ in ("Autotuner", "Heuristics"):
        kernel = kernel.fn
    return kernel


KERNEL = _load({literal(str(Path(ref.file).resolve()))}, {literal(spec.kernel)})'''


def _source(text: str, kernel: str, where: str) -> str:
    """A function's source from the store, checked to be its definition alone, under a comment
    saying where it came from."""
    kernel_def(text, kernel)
    body = _strip_blank_decorators(textwrap.dedent(runnable_text(text))).rstrip()
    return f"# {kernel}: source from the store, {_comment(where)}\n{body}"


def _from_text(spec: ReplaySpec) -> tuple[str, tuple]:
    ref = spec.ref
    imports = INDUCTOR_IMPORTS if generated(ref) else TRITON_IMPORTS
    head = [_import_line(n, r) for n, r in imports if n != "triton"]
    body = _source(ref.text, spec.kernel, f"the text in the record of {spec.variant or spec.kernel} (captured "
                                          f"from {ref.file}:{ref.line})")
    return "\n".join(head) + "\n\n\n" + body + f"\n\n\nKERNEL = {spec.kernel}", _params(ref.text, spec.kernel)


def _embedded(ks: KernelSource, variant: str = "") -> tuple[str, tuple]:
    """The kernel and its helpers in one namespace: imports, constants, then each function after
    the helpers it calls. A name that means two things in two captured modules cannot be embedded."""
    names: dict[str, tuple] = {"triton": ("import", "triton"), "tl": ("import", "triton.language")}
    functions: list[KernelSource] = []
    seen: set = set()

    def bind(n: str, meaning: tuple, where: str) -> None:
        name(n, "a name the kernel's source uses")
        old = names.get(n)
        if old is not None and old != meaning:
            raise KinspectError(f"cannot embed '{ks.name}': '{n}' means two things in its source ({_comment(where)}); "
                                f"write the script without --embed")
        names[n] = meaning

    def visit(k: KernelSource) -> None:
        key = (k.file, k.line, k.name)
        if key in seen:
            return
        seen.add(key)
        name(k.name, "a function name in the kernel's source")
        for n, ref in k.imports:
            import_ref(ref, f"the import of '{n}'")
            bind(n, ("import", ref), k.file)
        for n, value in k.constants:
            bind(n, ("constant", _constant(value)), k.file)
        for n, helper in k.helpers:
            visit(helper)
            bind(n, ("function", helper.file, helper.line, helper.name), k.file)
        for n in sorted(kernel_def(k.text, k.name)[1]):        # its decorator must be Triton's
            meaning = names.get(n, ("", ""))
            if meaning[0] != "import" or meaning[1].partition(":")[0].split(".")[0] != "triton":
                raise KinspectError(f"the captured source of '{k.name}' decorates it with '{n}', which is not "
                                    f"Triton's: {INCONSISTENT}")
        functions.append(k)

    visit(ks)
    imports = [_import_line(n, m[1]) for n, m in names.items() if m[0] == "import" and n != "triton"]
    constants = [f"{n} = {m[1]}" for n, m in names.items() if m[0] == "constant"]
    aliases = [f"{n} = {m[3]}" for n, m in names.items() if m[0] == "function" and n != m[3]]
    if any("importlib." in line for line in imports):
        imports.insert(0, "import importlib")
    parts = ["\n".join(imports)]
    if constants:
        parts.append("\n".join(constants))
    where = f"{variant}/source.json" if variant else "source.json"
    parts += [_source(k.text, k.name, f"{where} (captured from {k.file}:{k.line})") for k in functions]
    if aliases:
        parts.append("\n".join(aliases))
    parts.append(f"KERNEL = {ks.name}")
    return "\n\n\n".join(p for p in parts if p), _params(ks.text, ks.name)


def _strip_blank_decorators(text: str) -> str:
    """runnable_text blanks the decorators it drops; in a script they need not keep their lines."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if ln.strip()), 0)
    head, rest = lines[start:], []
    for i, ln in enumerate(head):
        if ln.strip() or any(x.lstrip().startswith("def ") for x in head[:i]):
            rest.append(ln)
    return "".join(rest)


def _import_line(n: str, ref: str) -> str:
    module, attr = import_ref(ref, f"the import of '{n}'")
    if not attr:
        return f"import {module}" if n == module else f"import {module} as {n}"
    if "." not in attr:
        return f"from {module} import {attr}" + (f" as {n}" if n != attr else "")
    return f"{n} = importlib.import_module({literal(module)}).{attr}"


def _constant(encoded) -> str:
    """Python source for a constant as kinspect.replay.source.encode stored it: literals, and
    Triton's constexpr and dtype of literals."""
    if isinstance(encoded, dict) and len(encoded) == 1:
        (kind, inner), = encoded.items()
        if kind == "constexpr":
            return f"triton.language.constexpr({_constant(inner)})"
        if kind == "float":
            try:
                return literal(float(inner))
            except (TypeError, ValueError):
                raise KinspectError(f"a float constant of the kernel's source is not a number: {INCONSISTENT}") \
                    from None
        if kind == "tuple" and isinstance(inner, list):
            return "(" + "".join(f"{_constant(x)}, " for x in inner) + ")"
        if kind == "dtype":
            return f"triton.language.core.dtype({literal(str(inner))})"
    return literal(encoded)
