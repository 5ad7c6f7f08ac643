"""Registers, spills and shared memory of a variant, and where each figure came from: what its
backend's resources function reads (kinspect.backends: the cubin or the loaded kernel on NVIDIA, the
AMDGCN text's figures on AMD), with the occupancy those allow under the backend's limits for its arch."""

from __future__ import annotations

from kinspect import backends
from kinspect.core.model import Variant
from kinspect.backends.resources import Resources


def resources(v: Variant, stated: dict[str, int]) -> Resources:
    """`stated`: the figures the variant's machine code states about itself (kinspect.ir Resource records)."""
    backend = backends.of(v)
    if backend.resources is None:
        return Resources(shared_bytes=v.options.get("shared"), extra=tuple(sorted(stated.items())))
    return backend.resources(v, stated, backend.limits.get(v.target.arch))
