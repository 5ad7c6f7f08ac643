"""Registrations from other distributions, found as Triton finds its backends: entry points.

A distribution that adds an ISA or a backend to kinspect names it in its metadata, e.g. in its
pyproject.toml:

    [project.entry-points."kinspect.backends"]
    xpu = "kinspect_xpu:BACKEND"

and kinspect's registry (kinspect.isa, kinspect.backends) loads it with its own entries.
"""

from __future__ import annotations

from kinspect.errors import KinspectError


def plugins(group: str) -> list[tuple]:
    """(entry point, loaded object) of every entry point in `group`, by name. One that cannot be
    loaded is an error naming it: a registry that silently lost an entry would misread stages."""
    from importlib.metadata import entry_points

    found = []
    for ep in sorted(entry_points(group=group), key=lambda ep: ep.name):
        try:
            found.append((ep, ep.load()))
        except Exception as e:
            raise KinspectError(f"cannot load {group} entry point '{ep.name} = {ep.value}': "
                                f"{type(e).__name__}: {e}") from None
    return found
