"""Which line of the user's code launched a kernel: read once per new launch signature (the launch
observer's slow path), never on the per-launch path.

A library kernel's own source says nothing of who called it (the RMSNorm of which layer, the loss);
its call site is the first frame of the Python stack that is not Triton, torch, kinspect, the standard
library or the kernel's own package (its wrappers and autograd functions live there): for a Liger
kernel patched into a transformers Llama, the model's line in modeling_llama.py. A launch from
autograd's engine (a backward on a device thread) has no such frame: it is named so.
"""

from __future__ import annotations

import os
import sys
import sysconfig

from kinspect.core.model import CallSite

AUTOGRAD = "autograd backward"
_roots: tuple | None = None


def _skipped_roots() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(folders whose frames are never a call site: Triton, torch, kinspect, Inductor's generated code;
    the standard library's folders; the installed packages' folders, which are not the standard library
    even where a system Python keeps them inside it: transformers' model code there is the user's)."""
    global _roots
    if _roots is None:
        packages = []
        for name in ("triton", "torch", "kinspect", "torchgen", "functorch"):
            path = getattr(sys.modules.get(name), "__file__", None)
            if path:
                packages.append(os.path.dirname(os.path.abspath(path)) + os.sep)
        inductor = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
        if inductor:          # the output code whose `call` launches Inductor's kernels
            packages.append(os.path.abspath(inductor) + os.sep)
        paths = sysconfig.get_paths()
        stdlib = tuple(os.path.abspath(paths[k]) + os.sep for k in ("stdlib", "platstdlib") if paths.get(k))
        installed = tuple(os.path.abspath(paths[k]) + os.sep for k in ("purelib", "platlib") if paths.get(k))
        _roots = (tuple(packages), stdlib, installed)
    return _roots


def _not_users(path: str, own: tuple[str, ...]) -> bool:
    packages, stdlib, installed = _skipped_roots()
    if path.startswith(packages) or (own and path.startswith(own)) or f"{os.sep}torchinductor_" in path:
        return True
    if path.startswith(stdlib):
        library = path.startswith(installed) or any(f"{os.sep}{d}{os.sep}" in path
                                                    for d in ("site-packages", "dist-packages"))
        return not library
    return False


def own_roots(fn) -> tuple[str, ...]:
    """The kernel's own file and, where it is in a package, the package's folder: `fn` is the
    JITFunction (or the Python function) whose launches are observed."""
    inner = getattr(fn, "fn", fn)
    code = getattr(inner, "__code__", None)
    out = []
    if code is not None:
        out.append(os.path.abspath(code.co_filename))
    top = (getattr(inner, "__module__", None) or "").split(".")[0]
    package = sys.modules.get(top)
    if top and getattr(package, "__path__", None) and getattr(package, "__file__", None):
        out.append(os.path.dirname(os.path.abspath(package.__file__)) + os.sep)
    return tuple(out)


def call_site(own: tuple[str, ...] = (), depth: int = 2) -> CallSite | None:
    """The user's frame that led to this launch (None: none found, outside autograd)."""
    frame = sys._getframe(depth)
    autograd = False
    while frame is not None:
        file = frame.f_code.co_filename
        path = os.path.abspath(file) if not file.startswith("<") else file
        if file.startswith("<") or _not_users(path, own):
            autograd = autograd or f"{os.sep}autograd{os.sep}" in path
            frame = frame.f_back
            continue
        return CallSite(file=path, line=frame.f_lineno, function=frame.f_code.co_name)
    return CallSite(file="", line=0, function=AUTOGRAD) if autograd else None
