"""One kernel under two Tritons: `kinspect diff FILE:KERNEL --python OTHER`.

The same variant (kernel, target, constexprs, options, example arguments) is compiled here, with this
interpreter's Triton, and by another interpreter with its own Triton, offline for the one target
both are told to compile for. The other interpreter runs this installation's kinspect (its package
folder alone is put on that interpreter's path, never this environment's site-packages, whose Triton
would shadow the other one); it needs torch and Triton of its own, nothing else. Both variants go into
the store, and are compared as a program diff compares one kernel of two runs (kinspect.diff.programs):
figures, the first stage that differs, the ISA diff, the story.

A Triton that cannot compile the kernel is named with its error (Triton 3.9 removed block pointers, so
a kernel using tl.make_block_ptr compiles under 3.6 only).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from kinspect.core.errors import KinspectError, UsageError

MARK = "kinspect-other-python:"     # the line of the child's output that holds its answer
TIMEOUT_S = 900

# Run by the other interpreter: argv[1] the kernels' folder, argv[2] the request as JSON. It makes
# kinspect.kernels importable where this installation keeps the shipped kernels outside the package
# (a source checkout), compiles through kinspect.compile.dump and prints one answer line.
CHILD = r"""
import importlib.util, json, sys, traceback
def answer(d):
    print(%r + json.dumps(d), flush=True)
try:
    import kinspect
    if importlib.util.find_spec("kinspect.kernels") is None:
        spec = importlib.util.spec_from_file_location("kinspect.kernels", sys.argv[1] + "/__init__.py",
                                                      submodule_search_locations=[sys.argv[1]])
        mod = importlib.util.module_from_spec(spec)
        sys.modules["kinspect.kernels"] = mod
        spec.loader.exec_module(mod)
        kinspect.kernels = mod
    request = json.loads(sys.argv[2])
    from kinspect.compile.args import parse_args
    from kinspect.compile.dump import dump
    request["args"] = parse_args(request["args"])
    r = dump(request.pop("kernel"), **request)
    import triton, torch
    answer({"path": str(r.variant.path), "triton": triton.__version__, "torch": torch.__version__,
            "python": sys.version.split()[0]})
except BaseException as e:
    lines = str(e).strip().splitlines()
    try:
        import triton
        version = triton.__version__
    except BaseException:
        version = ""
    answer({"error": type(e).__name__ + (": " + lines[-1] if lines else ""), "triton": version,
            "trace": traceback.format_exc()[-4000:]})
""" % MARK


def compile_there(python: str, kernel: str, request: dict) -> dict:
    """Compile `kernel` with `request` (kinspect.compile.dump's keyword arguments) in `python`;
    its answer: {"path", "triton", "torch", "python"} or {"error", "triton"}."""
    import kinspect

    exe = _interpreter(python)
    package = Path(kinspect.__file__).parent
    kernels = _kernels_folder()
    with tempfile.TemporaryDirectory(prefix="kinspect-other-") as tmp:
        os.symlink(package, Path(tmp) / "kinspect")     # kinspect alone on its path, not this venv's packages
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
        env["PYTHONPATH"] = tmp
        try:
            # run in the temporary folder: a `kinspect` folder where the user stands is not imported instead
            proc = subprocess.run([exe, "-c", CHILD, str(kernels), json.dumps({"kernel": kernel, **request})],
                                  env=env, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise KinspectError(f"--python {python}: compiling {kernel} took over {TIMEOUT_S} s; stopped") from None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    raise KinspectError(f"--python {python} ended (exit code {proc.returncode}) without compiling {kernel}: {tail}")


def _interpreter(python: str) -> str:
    import shutil

    found = shutil.which(python) if os.sep not in python else (python if os.access(python, os.X_OK) else None)
    if not found:
        raise UsageError(f"--python {python}: no such interpreter; give the path of another environment's "
                         f"python (e.g. --python ../triton36/.venv/bin/python)")
    return found


def _kernels_folder() -> Path:
    from kinspect import kernels

    return Path(kernels.__file__).parent


def here(kernel: str, request: dict) -> dict:
    """The same compile in this interpreter, answered as the other one answers."""
    from kinspect.compile.args import parse_args
    from kinspect.compile.dump import dump

    try:
        r = dump(kernel, **{**request, "args": parse_args(request["args"])})
    except KinspectError as e:
        return {"error": str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__,
                "triton": _version("triton")}
    except Exception as e:    # Triton's own compile errors come as its exception types
        lines = str(e).strip().splitlines()
        return {"error": type(e).__name__ + (": " + lines[-1] if lines else ""), "triton": _version("triton")}
    return {"path": str(r.variant.path), "triton": _version("triton"), "torch": _version("torch"),
            "python": sys.version.split()[0]}


def _version(name: str) -> str:
    mod = sys.modules.get(name)
    return getattr(mod, "__version__", "") if mod is not None else ""


def diff_tritons(kernel: str, python: str, *, target: str | None = None, constexprs: dict | None = None,
                 args=(), num_warps: int | None = None, num_stages: int | None = None,
                 size: str | None = None, out_dir: str | Path, pair_text: bool = True):
    """Compile `kernel` with `python`'s Triton (A) and with this one (B) for one target; compare them.
    `args` are --arg texts (NAME=TYPE), parsed in each interpreter.
    A Triton that cannot compile it is a KinspectError naming the version and its error."""
    from kinspect.compile.loader import absolute
    from kinspect.compile.targets import resolve
    from kinspect.diff.programs import compare_variants

    kernel = absolute(kernel)       # the other interpreter runs in another folder
    resolved = resolve(target)
    request = {"target": str(resolved.target), "constexprs": constexprs or {}, "args": list(args),
               "num_warps": num_warps, "num_stages": num_stages, "size": size, "out_dir": str(Path(out_dir).resolve())}
    b = here(kernel, request)
    a = compile_there(python, kernel, request)
    failed = [(who, d) for who, d in ((python, a), ("this kinspect's Python", b)) if "error" in d]
    if failed:
        raise KinspectError("; ".join(f"Triton {d.get('triton') or '(not importable)'} ({who}) cannot compile "
                                      f"{kernel} for {resolved.target}: {d['error']}" for who, d in failed))
    if a["triton"] == b["triton"]:
        raise UsageError(f"--python {python} has the same Triton ({a['triton']}) as this one: nothing to compare; "
                         f"give an interpreter with another Triton")
    return compare_variants(Path(a["path"]), Path(b["path"]), a_run=(python, a), b_run=(sys.executable, b),
                            text=pair_text)
