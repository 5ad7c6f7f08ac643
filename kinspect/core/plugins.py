"""Registries that fail loudly, and registrations from other distributions, found as Triton finds its
backends: entry points.

kinspect's ISAs (kinspect.isa) and backends (kinspect.backends) are registries: each built-in module
registers its entries when imported, and a distribution adds its own by naming them in its metadata,
e.g. in its pyproject.toml:

    [project.entry-points."kinspect.backends"]
    xpu = "kinspect_xpu:BACKEND"

A name registered twice is an error when the registry loads; an unknown name is an error that lists
the known ones; an entry point that cannot be loaded is an error naming it (a registry that silently
lost an entry would misread stages).
"""

from __future__ import annotations

import importlib
from typing import Generic, Iterator, TypeVar

from kinspect.core.errors import KinspectError, NotFound, did_you_mean

T = TypeVar("T")


def plugins(group: str) -> Iterator[tuple[object, object]]:
    """(entry point, loaded object) of every entry point in `group`, by name."""
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group=group), key=lambda ep: ep.name):
        try:
            value = ep.load()
        except Exception as e:
            raise KinspectError(f"cannot load {group} entry point '{ep.name} = {ep.value}': "
                                f"{type(e).__name__}: {e}") from None
        yield ep, value


class Registry(Generic[T]):
    """Entries of one kind by name: kinspect's own (the `builtin` modules register them when imported),
    then those of the `group` entry points (each names an entry, or a list of them)."""

    def __init__(self, what: str, kind: type, group: str, builtin: tuple[str, ...]):
        self.what, self.kind, self.group, self.builtin = what, kind, group, builtin
        self._entries: dict[str, T] = {}
        self._origin: dict[str, str] = {}
        self._loaded = False

    def register(self, entry: T, origin: str | None = None) -> T:
        if not isinstance(entry, self.kind):
            raise TypeError(f"{origin or 'a module'} registered {entry!r} as a {self.what}, not a "
                            f"{self.kind.__module__}.{self.kind.__name__}")
        known = self._entries.get(entry.name)
        if known is not None and known is not entry:
            raise RuntimeError(f"{self.what} {entry.name!r} registered twice ({self._origin[entry.name]} and "
                               f"{origin or 'another'})")
        self._entries[entry.name] = entry
        self._origin.setdefault(entry.name, origin or "kinspect")
        return entry

    def load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for module in self.builtin:
            importlib.import_module(module)
        for ep, value in plugins(self.group):
            for entry in value if isinstance(value, (list, tuple)) else (value,):
                self.register(entry, f"entry point {ep.value!r}")

    def reload(self) -> None:
        """Forget what entry points registered and look for them again: for a process whose sys.path
        changed since the registry loaded (a plugin installed meanwhile)."""
        for name, origin in list(self._origin.items()):
            if origin.startswith("entry point"):
                del self._entries[name], self._origin[name]
        self._loaded = False
        self.load()

    def find(self, name: str) -> T | None:
        self.load()
        return self._entries.get(name)

    def get(self, name: str) -> T:
        found = self.find(name)
        if found is None:
            raise NotFound(f"unknown {self.what} '{name}'{did_you_mean(name, self._entries)}; known: "
                           f"{', '.join(sorted(self._entries))}")
        return found

    def values(self) -> list[T]:
        """Every entry, in the order registered."""
        self.load()
        return list(self._entries.values())
