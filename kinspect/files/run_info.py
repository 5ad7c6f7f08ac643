"""What a captured program ran with: Python, Triton and torch versions and the GPU, as the program's
own processes saw them (`<store>/run.json`). A program diff's header says each run's versions and
device from it; a store made before kinspect kept it says what it can from its records (Triton's
version is in every record) and names the rest as not recorded.

    env = environment()            # in the program's process, at its exit: versions of what it imported
    write(root, env); read(root)
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from kinspect.files import jsonfile

FILE = "run.json"
RUN_VERSION = 1


@dataclass(frozen=True)
class RunInfo:
    python: str = ""
    triton: str = ""
    torch: str = ""
    device: str = ""          # torch.cuda.get_device_name() where the program used a GPU through torch
    host: str = ""

    def to_json(self) -> dict:
        return {"version": RUN_VERSION, "python": self.python, "triton": self.triton, "torch": self.torch,
                "device": self.device, "host": self.host}

    @classmethod
    def from_json(cls, d: dict) -> "RunInfo":
        if not isinstance(d, dict) or d.get("version") != RUN_VERSION:
            raise ValueError("not a run record")
        return cls(**{k: _text(d.get(k)) for k in ("python", "triton", "torch", "device", "host")})


def _text(x) -> str:
    if x is not None and not isinstance(x, str):
        raise ValueError("a run record's fields are strings")
    return (x or "")[:200]


def environment() -> dict:
    """The versions of what this process imported, and its GPU's name: nothing is imported here, and
    the GPU is asked only where torch already initialised CUDA (at a program's exit, never before)."""
    import platform
    import socket

    out = {"python": platform.python_version(), "host": socket.gethostname()}
    for name in ("triton", "torch"):
        mod = sys.modules.get(name)
        version = getattr(mod, "__version__", None)
        if isinstance(version, str):
            out[name] = version
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            out["device"] = str(torch.cuda.get_device_name())
    except Exception:       # a broken driver at exit: the device stays unnamed
        pass
    return out


def merged(envs: list[dict]) -> RunInfo | None:
    """One record from the environments of a program's processes: the first to name each field (the
    process that used the GPU names the device; compile workers name no device)."""
    fields = {}
    for env in envs:
        for k in ("python", "triton", "torch", "device", "host"):
            if isinstance(env.get(k), str) and env[k] and k not in fields:
                fields[k] = env[k][:200]
    return RunInfo(**fields) if fields else None


def write(root: str | os.PathLike, info: RunInfo) -> Path:
    return jsonfile.write(Path(root) / FILE, info.to_json())


def read(root: str | os.PathLike) -> RunInfo | None:
    """The store's run record; None when it has none or the file is not one this kinspect wrote."""
    return jsonfile.read(Path(root) / FILE, RunInfo.from_json, limit=1 << 16)
