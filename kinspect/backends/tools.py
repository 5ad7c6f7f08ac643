"""External tools kinspect runs (nvdisasm, cuobjdump): where they are and how to call them.

Found without importing triton: the triton wheel ships NVIDIA's binaries under
triton/backends/nvidia/bin; TRITON_<TOOL>_PATH overrides, as in Triton itself; then PATH.
Always argument lists, never a shell.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

from kinspect.errors import KinspectError


def nvidia_tool(name: str) -> str | None:
    env = os.environ.get(f"TRITON_{name.upper()}_PATH")
    if env and Path(env).is_file():
        return env
    spec = importlib.util.find_spec("triton")
    if spec is not None and spec.origin:
        path = Path(spec.origin).parent / "backends" / "nvidia" / "bin" / name
        if path.is_file():
            return str(path)
    return shutil.which(name)


def run_tool(argv: list[str], *, timeout: float = 120) -> str:
    """Run a tool, return stdout; a failure becomes a KinspectError naming the tool and its message."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise KinspectError(f"{Path(argv[0]).name} failed: {e}") from None
    if proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).strip().splitlines()
        raise KinspectError(f"{Path(argv[0]).name} failed: {msg[-1] if msg else f'exit {proc.returncode}'}")
    return proc.stdout
