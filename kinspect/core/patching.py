"""Attributes (and mapping entries) replaced until closed, then put back, even on errors.

Every place kinspect replaces something of Triton's, torch's or the standard library's (a listener, a
class's `run`, `torch.cuda.device_count`, `subprocess.Popen`) goes through a `Patches`: it remembers what
each name held (or that it held nothing), and `close()` puts every one back in the reverse order, running
every restore even if one fails. A restore is chain-friendly where asked (`keep_newer`): a name something
else replaced after kinspect keeps that newer value, so a tool that wrapped kinspect's hook is not undone.

    with Patches() as p:
        p.attr(knobs.compilation, "listener", recorder)
        ...                       # on leaving, listener is what it was

`patched(owner, name, value)` is the one-attribute form.
"""

from __future__ import annotations

import contextlib
import types
from typing import Any, Callable, Iterator, MutableMapping

_ABSENT = object()      # the name was not set on the owner itself: restoring removes it


class Patches:
    """What was replaced, newest last; `close()` (or leaving the `with`) restores it all, newest first."""

    def __init__(self) -> None:
        self._undo = contextlib.ExitStack()

    def attr(self, owner: Any, name: str, value: Any, *, keep_newer: bool = False) -> Any:
        """Set `owner.name` to `value` until closed; returns what `owner.name` gave before. A class's or a
        module's name it did not hold itself (inherited, or missing) is removed again rather than set to
        the inherited value. With `keep_newer`, the restore leaves alone a value set after this one."""
        previous = getattr(owner, name, None)
        own = _own(owner, name)
        self._undo.callback(_restore_attr, owner, name, own, value, keep_newer)
        setattr(owner, name, value)
        return previous

    def item(self, mapping: MutableMapping, key: Any, value: Any) -> Any:
        """Set `mapping[key]` (sys.modules, a registry) to `value` until closed; returns what it held."""
        previous = mapping.get(key, _ABSENT)
        self._undo.callback(_restore_item, mapping, key, previous)
        mapping[key] = value
        return None if previous is _ABSENT else previous

    def callback(self, fn: Callable, *args, **kwargs) -> None:
        """Run `fn` when closing, in turn with the restores (for what is not an attribute: an import hook
        taken off sys.meta_path, another hook's own restore)."""
        self._undo.callback(fn, *args, **kwargs)

    def close(self) -> None:
        """Put everything back, newest first. Every restore runs; the first error is raised afterwards."""
        self._undo.close()

    def __enter__(self) -> Patches:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextlib.contextmanager
def patched(owner: Any, name: str, value: Any) -> Iterator[Any]:
    """`owner.name` is `value` in the block; afterwards it is what it was (or absent, as it was)."""
    with Patches() as p:
        p.attr(owner, name, value)
        yield value


def _own(owner: Any, name: str) -> Any:
    """What `owner` itself holds under `name`, or _ABSENT. For an instance, what getattr gives (its class's
    descriptors decide where a value is stored); for a class or a module, its own namespace only."""
    if isinstance(owner, (type, types.ModuleType)):
        return vars(owner).get(name, _ABSENT)
    return getattr(owner, name, _ABSENT)


def _restore_attr(owner: Any, name: str, own: Any, value: Any, keep_newer: bool) -> None:
    if keep_newer:
        if _own(owner, name) is not value:
            return
    if own is _ABSENT:
        with contextlib.suppress(AttributeError):
            delattr(owner, name)
    else:
        setattr(owner, name, own)


def _restore_item(mapping: MutableMapping, key: Any, previous: Any) -> None:
    if previous is _ABSENT:
        mapping.pop(key, None)
    else:
        mapping[key] = previous
