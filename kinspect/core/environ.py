"""Environment variables set for the length of a block and restored after it, even on errors."""

from __future__ import annotations

import contextlib
import os
from typing import Iterator


@contextlib.contextmanager
def patched(values: dict[str, str | None]) -> Iterator[None]:
    """Set each variable (None removes it) for the block; afterwards each is as it was, set or not."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        _apply(values)
        yield
    finally:
        _apply(saved)


def _apply(values: dict[str, str | None]) -> None:
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
