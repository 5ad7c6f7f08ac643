"""Targets a user names with -t, and the default (the active device, else cuda:90 offline)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kinspect.errors import UsageError, did_you_mean
from kinspect.model import Target

# name -> (Triton backend, arch, warp size). Triton's GPUTarget takes an int arch for cuda.
PRESETS: dict[str, tuple[str, str, int]] = {
    "cuda:80": ("cuda", "80", 32),
    "cuda:90": ("cuda", "90", 32),
    "cuda:100": ("cuda", "100", 32),
    "hip:gfx942": ("hip", "gfx942", 64),
    "hip:gfx950": ("hip", "gfx950", 64),
}
DEFAULT_OFFLINE = "cuda:90"
# Compute capabilities of NVIDIA GPUs Triton compiles for (sm_75 up); LLVM aborts the process on
# any other (`-t cuda:91`: "Cannot select: intrinsic"), so an unknown one is refused before the compile.
CUDA_ARCHS = ("75", "80", "86", "87", "89", "90", "100", "101", "103", "110", "120", "121")
# e.g. "cuda:86", "hip:gfx90a"
TARGET_RE = re.compile(r"^(?P<backend>cuda|hip):(?P<arch>[A-Za-z0-9_]+)$")
_TRITON_BACKEND = {"cuda": "nvidia", "hip": "amd"}


@dataclass(frozen=True)
class Resolved:
    target: Target
    offline: bool      # compiled with kinspect's compile-only driver, no device involved
    note: str          # what the output says about how the target was chosen


def installed_backends() -> set[str]:
    """Triton backends installed here (nvidia, amd, cpu, spine_triton, ...), found without importing
    triton: folders under triton/backends, and plugins registered as Triton discovers them (entry
    points in the `triton.backends` group)."""
    import importlib.util
    from importlib.metadata import entry_points
    from pathlib import Path

    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.origin:
        return set()
    root = Path(spec.origin).parent / "backends"
    found = {p.name for p in root.iterdir() if (p / "compiler.py").is_file()}
    try:
        found |= {ep.name for ep in entry_points().select(group="triton.backends")}
    except Exception:   # a broken distribution's metadata must not stop kinspect
        pass
    return found


def available() -> list[str]:
    have = installed_backends()
    return [name for name, (backend, _, _) in PRESETS.items() if _TRITON_BACKEND[backend] in have]


# Device nodes a GPU driver creates on Linux: NVIDIA, AMD (ROCm), and WSL's GPU paravirtualization.
GPU_NODES = ("/dev/nvidiactl", "/dev/kfd", "/dev/dxg")


def no_device_possible() -> bool:
    """True when Triton cannot have an active device here: Linux with no GPU device node, no CPU
    backend installed, and Triton not imported yet (so no driver set by hand). Asking Triton itself
    imports torch: seconds that a sweep's parent process need not spend."""
    import os
    import sys

    if not sys.platform.startswith("linux") or "triton" in sys.modules:
        return False
    return not any(os.path.exists(p) for p in GPU_NODES) and installed_backends() <= set(_TRITON_BACKEND.values())


# Backends whose driver is never active on its own: a program activates it by hand, as spine-triton
# 3.6's examples do (`triton.runtime.driver.set_active(CPUDriver())`); triton-shared's likewise.
BY_HAND = ("spine_triton", "triton_shared")


def active_device_target() -> Target | None:
    """The target of Triton's active driver, or None when there is no device here. With no driver
    active and one by-hand CPU backend installed (a board with spine-triton), that backend's driver
    is activated, as the user's own program would: it is the only device such a machine has."""
    if no_device_possible():
        return None
    try:
        from triton.runtime import driver

        t = driver.active.get_current_target()
    except Exception:  # Triton raises RuntimeError("0 active drivers") and friends
        t = _activate_by_hand()
        if t is None:
            return None
    return Target(str(t.backend), str(t.arch), int(getattr(t, "warp_size", 0) or 0))


def _activate_by_hand():
    """Activate the one installed by-hand backend's driver (BY_HAND); its target, or None."""
    try:
        from triton.backends import backends
        from triton.runtime import driver
    except Exception:
        return None
    found = [name for name in BY_HAND if name in backends]
    if len(found) != 1:
        return None
    try:
        d = backends[found[0]].driver()
        t = d.get_current_target()
    except Exception:   # a broken install (its runtime library missing): no device, as before
        return None
    driver.set_active(d)
    return t


def resolve(text: str | None) -> Resolved:
    if text in (None, "", "auto"):
        device = active_device_target()
        if device is not None:
            return Resolved(device, False, f"{device} (the active device)")
        return Resolved(_preset(DEFAULT_OFFLINE), True, f"{DEFAULT_OFFLINE} (offline: no device here)")
    if text == "device":
        device = active_device_target()
        if device is None:
            raise UsageError(f"no device here: Triton found no active driver; compile offline with "
                             f"-t {DEFAULT_OFFLINE} (or one of: {', '.join(available())})")
        return Resolved(device, False, f"{device} (the active device)")
    m = TARGET_RE.match(text)
    if not m:
        raise UsageError(f"unknown target '{text}'; use one of: {', '.join(available() + ['device'])}")
    backend, arch = m["backend"], m["arch"]
    if _TRITON_BACKEND[backend] not in installed_backends():
        raise UsageError(f"target '{text}' needs Triton's {_TRITON_BACKEND[backend]} backend, not installed here; "
                         f"use one of: {', '.join(available() + ['device'])}")
    if backend == "cuda" and not arch.isdigit():
        raise UsageError(f"target '{text}': a cuda arch is a number like 80 or 90; "
                         f"use one of: {', '.join(available())}")
    if backend == "cuda" and arch not in CUDA_ARCHS:
        raise UsageError(f"target '{text}': no NVIDIA GPU has compute capability {arch}"
                         f"{did_you_mean(arch, CUDA_ARCHS)}; known: {', '.join(CUDA_ARCHS)}")
    target = Target(backend, arch, PRESETS.get(text, (backend, arch, 32 if backend == "cuda" else 64))[2])
    return Resolved(target, True, f"{target} (offline)")


def _preset(name: str) -> Target:
    backend, arch, warp = PRESETS[name]
    return Target(backend, arch, warp)
