"""What a measurement was taken on: device, clocks where readable, software versions."""

from __future__ import annotations

import shutil
import subprocess

# nvidia-smi fields for the clocks at the time of the run and the limits they can reach
NVIDIA_SMI_QUERY = "name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit"


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    import torch
    import triton

    try:
        kinspect = version("kinspect")
    except PackageNotFoundError:
        kinspect = "unknown"
    out = {"kinspect": kinspect, "triton": triton.__version__, "torch": torch.__version__}
    if torch.version.cuda:
        out["cuda"] = torch.version.cuda
    if torch.version.hip:
        out["hip"] = torch.version.hip
    return out


def nvidia_clocks() -> dict[str, str] | None:
    """Clocks and driver from nvidia-smi for the current device, or None where it cannot be read."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        import torch

        index = str(torch.cuda.current_device())
        out = subprocess.run([exe, f"--query-gpu={NVIDIA_SMI_QUERY}", "--format=csv,noheader", "-i", index],
                             capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError, RuntimeError):
        return None
    values = [v.strip() for v in out.strip().splitlines()[0].split(",")] if out.strip() else []
    keys = NVIDIA_SMI_QUERY.split(",")
    return dict(zip(keys, values)) if len(values) == len(keys) else None


def describe_clocks(c: dict[str, str] | None) -> str:
    if not c:
        return "clocks not readable"
    return (f"SM {c['clocks.sm']} (max {c['clocks.max.sm']}), memory {c['clocks.mem']} (max {c['clocks.max.mem']}) "
            f"at the end of the run; driver {c['driver_version']}, clocks not locked")
