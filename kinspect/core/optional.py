"""kinspect's optional dependencies, and the one line that names the extra to install.

The core (dump of a live backend, ls, show, vec-report, diff of saved variants, bench on the CPU,
report without plots) needs triton, torch, pygments, click and pyelftools only, so it installs where those
are all there is, such as a RISC-V board with spine-triton's triton and its own torch (PyPI has no
riscv64 wheels of llvmlite, numpy or matplotlib; numpy is a core dependency everywhere else, for Triton's
interpreter). What needs more says so:

    llvmlite = need("llvmlite.binding", "--retarget")   # KinspectError: --retarget needs llvmlite: ...
"""

from __future__ import annotations

import importlib
import importlib.util

from kinspect.core.errors import KinspectError

# module -> (the package to install, the kinspect extra that installs it)
EXTRAS = {
    "llvmlite": ("llvmlite", "retarget"),
    "matplotlib": ("matplotlib", "report"),
    "numpy": ("numpy", "interpret"),     # core but on riscv64 (pyproject.toml)
    "ray": ("ray", "ray"),
}


class MissingDependency(KinspectError):
    """An optional dependency is not installed; the message names the extra that installs it."""


def has(module: str) -> bool:
    """Whether `module` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def install_line(module: str) -> str:
    package, extra = EXTRAS[module.split(".")[0]]
    return f"pip install 'kinspect[{extra}]'"


def need(module: str, what: str):
    """Import `module` for `what` (a command or option the user asked for), or raise one line
    naming what to install."""
    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ImportError:
        package, _ = EXTRAS[top]
        raise MissingDependency(f"{what} needs {package}: {install_line(top)}") from None
