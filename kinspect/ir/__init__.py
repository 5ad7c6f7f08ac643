"""One parser per dialect: pure text -> records (see records.py).

`parse(dialect, lines)` dispatches by dialect name to the parser its spec names (kinspect.isa); each
parser module has `parse(lines)` and says what it reads in FORMATS.
"""

from __future__ import annotations

import importlib
from typing import Iterable, Iterator

from kinspect import isa
from kinspect.core.errors import NotFound, did_you_mean
from kinspect.ir.records import Record


def dialects() -> list[str]:
    """The dialects a parser reads."""
    return [s.name for s in isa.all_isas()]


def parser(dialect: str):
    spec = isa.find(dialect)
    if spec is None:
        known = dialects()
        raise NotFound(f"no parser for dialect '{dialect}'{did_you_mean(dialect, known)}; "
                       f"known: {', '.join(sorted(known))}")
    return importlib.import_module(spec.parser)


def formats(dialect: str) -> tuple[str, ...]:
    """What the dialect's parser reads (its FORMATS), in words."""
    return getattr(parser(dialect), "FORMATS", ())


def parse(dialect: str, lines: str | Iterable[str]) -> Iterator[Record]:
    return parser(dialect).parse(lines)
