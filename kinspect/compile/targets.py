"""Targets a user names with -t, and the default (the active device, else cuda:90 offline). What a
target name means comes from the backend registry (kinspect.backends): each backend that compiles
offline names its Triton plugin, its presets and what its arch looks like."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kinspect import backends
from kinspect.backends import Backend
from kinspect.core.errors import UsageError
from kinspect.core.model import Target

DEFAULT_OFFLINE = "cuda:90"
# e.g. "cuda:86", "hip:gfx90a": a backend's name and an arch
TARGET_RE = re.compile(r"^(?P<backend>[A-Za-z_][\w-]*):(?P<arch>[A-Za-z0-9_]+)$")


@dataclass(frozen=True)
class Resolved:
    target: Target
    offline: bool      # compiled with kinspect's compile-only driver, no device involved
    note: str          # what the output says about how the target was chosen
    backend_name: str = ""   # the kinspect backend that compiles it, where the target's Triton name does not say

    @property
    def backend(self) -> Backend:
        return backends.get(self.backend_name) if self.backend_name else backends.for_target(self.target.backend)


def offline_backends() -> list[Backend]:
    """The backends kinspect compiles for offline (those that name presets)."""
    return [b for b in backends.all_backends() if b.presets]


def presets() -> dict[str, tuple[Backend, str, int]]:
    """-t name -> (backend, arch, warp size), for every backend's presets."""
    return {p.name: (b, p.arch, p.warp_size) for b in offline_backends() for p in b.presets}


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
    return [name for name, (backend, _, _) in presets().items() if backend.plugin in have]


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
    return not any(os.path.exists(p) for p in GPU_NODES) and \
        installed_backends() <= {b.plugin for b in offline_backends()}


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
    """Activate the one installed backend whose driver a program activates by hand (kinspect.backends:
    `by_hand`, spine-triton's and triton-shared's); its target, or None."""
    try:
        from triton.backends import backends
        from triton.runtime import driver
    except Exception:
        return None
    from kinspect import backends as registry

    by_hand = [b.plugin for b in registry.all_backends() if b.by_hand]
    found = [name for name in by_hand if name in backends]
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
    backend = next((b for b in offline_backends() if m and b.name == m["backend"]), None)
    if backend is None:
        raise UsageError(f"unknown target '{text}'; use one of: {', '.join(available() + ['device'])}")
    arch = m["arch"]
    if backend.plugin not in installed_backends():
        raise UsageError(f"target '{text}' needs Triton's {backend.plugin} backend, not installed here; "
                         f"use one of: {', '.join(available() + ['device'])}")
    if backend.arch_re is not None and not backend.arch_re.fullmatch(arch):
        raise UsageError(f"target '{text}': a {backend.name} arch is {backend.arch_words or backend.arch_re.pattern}; "
                         f"use one of: {', '.join(available())}")
    preset = backend.preset(arch)
    target = Target(backend.target_name, arch, preset.warp_size if preset else backend.warp_size)
    if backend.target_name == backend.name:
        return Resolved(target, True, f"{target} (offline)")
    return Resolved(target, True, f"{target} (offline, backend {backend.name})", backend.name)


def _preset(name: str) -> Target:
    backend, arch, warp = presets()[name]
    return Target(backend.target_name, arch, warp)
