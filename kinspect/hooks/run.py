"""`kinspect capture -o DIR -- CMD ...`: run a command with every Python process under capture."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from kinspect.errors import KinspectError, UsageError
from kinspect.model import Variant
from kinspect.sources import users_environment
from kinspect.store import Store, read_records

BOOT = Path(__file__).parent / "boot"


def run(command: list[str], out_dir: str | Path) -> tuple[int, list[Variant]]:
    """Run `command` with capture active in it and its Python subprocesses; (exit code, new variants)."""
    if not command:
        raise UsageError("nothing to run; e.g. kinspect capture -o out -- python script.py")
    out = Path(out_dir).resolve()
    started = time.time()
    # Fails early, with one line, on an unwritable folder or one another kinspect is writing; the
    # command's Python processes record under this lock (the environment says they may).
    with Store(out).lock():
        env = users_environment(os.environ)  # the command compiles into the user's Triton cache, as without kinspect
        env["KINSPECT_CAPTURE_DIR"] = str(out)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BOOT), env.get("PYTHONPATH", "")) if p)
        try:
            code = subprocess.call(command, env=env)
        except FileNotFoundError:
            raise KinspectError(f"command '{command[0]}' not found") from None
        except KeyboardInterrupt:
            code = 130
    # an empty store folder is removed again when the command compiled nothing
    new = [v for v in read_records(out) if _mtime(v) >= started - 1] if out.is_dir() else []
    return code, new


def _mtime(v: Variant) -> float:
    try:
        return Path(v.path, "record.json").stat().st_mtime
    except OSError:
        return 0.0
