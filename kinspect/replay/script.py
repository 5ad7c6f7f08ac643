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

import inspect
import textwrap
from pathlib import Path

from kinspect.errors import KinspectError
from kinspect.replay.source import INDUCTOR_IMPORTS, TRITON_IMPORTS, KernelSource, decode
from kinspect.replay.spec import ReplaySpec, generated, importable, plan


def write(spec: ReplaySpec, path: str | Path, *, interpret: bool = False, embed: bool = False, label: str = "",
          triton_version: str = "") -> str:
    """The script's text, written to `path`; returns how it gets the kernel, in words."""
    text, how = script(spec, name=Path(path).name, interpret=interpret, embed=embed, label=label,
                       triton_version=triton_version)
    out = Path(path)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text)
    tmp.replace(out)
    out.chmod(0o755)
    return how


def script(spec: ReplaySpec, *, name: str = "repro.py", interpret: bool = False, embed: bool = False,
           label: str = "", triton_version: str = "") -> tuple[str, str]:
    from kinspect.replay.args import FILL_NOTE, new_tensor

    plan(spec)   # a clear error when there is no source at all
    ref = spec.ref
    if not embed and ref is not None and not generated(ref) and importable(ref)[0]:
        kernel_part, how = _imported(spec), f"imports the kernel from {ref.file}"
    elif spec.source is not None:
        kernel_part, how = _embedded(spec.source), f"embeds the source captured with it ({spec.source.file}:" \
                                                    f"{spec.source.line})"
    else:
        kernel_part, how = _from_text(spec), f"embeds the source text in its record ({spec.ref.file})"
    ran = "on the CPU under Triton's interpreter" if interpret else "on the GPU"
    where = f" from {spec.variant}" if spec.variant else ""
    version = f", Triton {triton_version}" if triton_version else ""
    about = (f"Written by `kinspect repro {label or spec.kernel}`{where} ({spec.target}{version}): "
             f"{spec.calls:,} of the variant's {spec.total_calls:,} captured launches had these arguments. "
             f"The script {how}. {FILL_NOTE[0].upper() + FILL_NOTE[1:]}. Needs torch and triton only.")
    header = (f'#!/usr/bin/env python3\n"""One captured launch of {spec.kernel}, {ran}.\n\n'
              f'{textwrap.fill(about, 100, break_long_words=False, break_on_hyphens=False)}\n"""\n')
    lines = [header, "import os", "import sys", ""]
    if interpret:
        lines += ['# Triton reads TRITON_INTERPRET when @triton.jit runs: set it before anything imports triton',
                  'os.environ["TRITON_INTERPRET"] = "1"', ""]
    lines += ["import torch", "import triton", "", kernel_part.rstrip(), "", "",
              inspect.getsource(new_tensor).rstrip(), "", ""]
    lines += [f"GRID = {tuple(spec.grid)!r}", f"OPTIONS = {spec.options!r}", "", "",
              "def arguments(device):", "    torch.manual_seed(0)", "    return {"]
    aligned = _alignment(spec)
    for a in spec.args:
        lines.append(f"        {a.name!r}: {_argument(a, aligned.get(a.name, True))},")
    lines += ["    }", "", ""]
    lines += [f'''def main():
    interpret = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
    if interpret:
        device = torch.device("cpu")
    else:
        try:
            device = triton.runtime.driver.active.get_active_torch_device()
        except RuntimeError as e:
            sys.exit(f"no GPU here ({{e}}); run it under Triton's interpreter: TRITON_INTERPRET=1 python {name}")
    KERNEL[GRID](**arguments(device), **OPTIONS)
    if device.type != "cpu":
        getattr(torch, device.type).synchronize()
    print(f"ok: {spec.kernel} ran once on {{device}}, grid {{GRID}}")


if __name__ == "__main__":
    main()
''']
    return "\n".join(lines), how


def _alignment(spec: ReplaySpec) -> dict[str, bool]:
    from kinspect.replay.args import _aligned

    return {a.name: _aligned(spec.attributes.get(a.name) or {}) for a in spec.args if a.kind == "tensor"}


def _argument(a, aligned: bool) -> str:
    if a.kind == "tensor":
        extra = "" if aligned else ", aligned=False"
        return f"new_tensor({tuple(a.shape)!r}, {tuple(a.strides)!r}, {a.dtype!r}, device{extra})"
    if a.kind in ("int", "float", "bool", "str", "none"):
        return repr(a.value)
    if a.kind == "dtype":
        return f"triton.language.core.dtype({str(a.value)!r})"
    raise KinspectError(f"argument '{a.name}' was recorded as {a.kind} ({a.value}): kinspect cannot write it into "
                        f"a script")


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


KERNEL = _load({str(Path(ref.file).resolve())!r}, {spec.kernel!r})'''


def _from_text(spec: ReplaySpec) -> str:
    from kinspect.replay.source import runnable_text

    ref = spec.ref
    imports = INDUCTOR_IMPORTS if generated(ref) else TRITON_IMPORTS
    head = [_import_line(n, r) for n, r in imports if n != "triton"]
    body = _strip_blank_decorators(textwrap.dedent(runnable_text(ref.text)))
    return "\n".join(head) + "\n\n\n" + body.rstrip() + f"\n\n\nKERNEL = {spec.kernel}"


def _embedded(ks: KernelSource) -> str:
    """The kernel and its helpers in one namespace: imports, constants, then each function after
    the helpers it calls. A name that means two things in two captured modules cannot be embedded."""
    from kinspect.replay.source import runnable_text

    names: dict[str, tuple] = {"triton": ("import", "triton"), "tl": ("import", "triton.language")}
    functions: list[KernelSource] = []
    seen: set = set()

    def bind(name: str, meaning: tuple, where: str) -> None:
        old = names.get(name)
        if old is not None and old != meaning:
            raise KinspectError(f"cannot embed '{ks.name}': '{name}' means two things in its source ({where}); "
                                f"write the script without --embed")
        names[name] = meaning

    def visit(k: KernelSource) -> None:
        key = (k.file, k.line, k.name)
        if key in seen:
            return
        seen.add(key)
        for name, ref in k.imports:
            bind(name, ("import", ref), k.file)
        for name, value in k.constants:
            bind(name, ("constant", repr(value)), k.file)
        for name, helper in k.helpers:
            visit(helper)
            bind(name, ("function", helper.file, helper.line, helper.name), k.file)
        functions.append(k)

    visit(ks)
    imports = [_import_line(n, m[1]) for n, m in names.items() if m[0] == "import" and n != "triton"]
    constants = [f"{n} = {_literal(dict(k.constants)[n])}" for k in functions for n, _ in k.constants
                 if names.get(n, (None,))[0] == "constant"]
    constants = list(dict.fromkeys(constants))
    aliases = [f"{n} = {m[3]}" for n, m in names.items() if m[0] == "function" and n != m[3]]
    if any("importlib." in line for line in imports):
        imports.insert(0, "import importlib")
    parts = ["\n".join(imports)]
    if constants:
        parts.append("\n".join(constants))
    parts += [_strip_blank_decorators(textwrap.dedent(runnable_text(k.text))).rstrip() for k in functions]
    if aliases:
        parts.append("\n".join(aliases))
    parts.append(f"KERNEL = {ks.name}")
    return "\n\n\n".join(p for p in parts if p)


def _strip_blank_decorators(text: str) -> str:
    """runnable_text blanks the decorators it drops; in a script they need not keep their lines."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if ln.strip()), 0)
    head, rest = lines[start:], []
    for i, ln in enumerate(head):
        if ln.strip() or any(x.lstrip().startswith("def ") for x in head[:i]):
            rest.append(ln)
    return "".join(rest)


def _import_line(name: str, ref: str) -> str:
    module, _, attr = ref.partition(":")
    if not attr:
        return f"import {module}" if name == module else f"import {module} as {name}"
    if "." not in attr:
        return f"from {module} import {attr}" + (f" as {name}" if name != attr else "")
    return f"{name} = importlib.import_module({module!r}).{attr}"


def _literal(encoded) -> str:
    """Python source for a constant as kinspect.replay.source.encode stored it."""
    if isinstance(encoded, dict):
        if "constexpr" in encoded:
            return f"triton.language.constexpr({_literal(encoded['constexpr'])})"
        if "float" in encoded:
            return f"float({encoded['float']!r})"
        if "tuple" in encoded:
            items = [_literal(x) for x in encoded["tuple"]]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if "dtype" in encoded:
            return f"triton.language.core.dtype({encoded['dtype']!r})"
    return repr(decode(encoded))
