"""One parser per dialect: pure text -> records (see records.py).

`parse(dialect, lines)` dispatches by dialect name; each parser module has `parse(lines)`.
"""

from __future__ import annotations

import importlib
from typing import Iterable, Iterator

from kinspect.errors import NotFound, did_you_mean
from kinspect.ir.records import Record

# dialect name -> module that parses it
DIALECTS: dict[str, str] = {
    "mlir": "kinspect.ir.mlir",        # ttir, ttgir, ttcir, linalg, llvm dialect, any MLIR text
    "llvm": "kinspect.ir.llvm",        # LLVM IR (.llir, .ll)
    "ptx": "kinspect.ir.ptx",
    "sass": "kinspect.ir.sass",        # nvdisasm / cuobjdump -sass text
    "amdgcn": "kinspect.ir.amdgcn",
    "riscv": "kinspect.ir.riscv",
    "x86": "kinspect.ir.x86",
    "aarch64": "kinspect.ir.aarch64",
}


def parser(dialect: str):
    try:
        module = DIALECTS[dialect]
    except KeyError:
        raise NotFound(f"no parser for dialect '{dialect}'{did_you_mean(dialect, DIALECTS)}; "
                       f"known: {', '.join(sorted(DIALECTS))}") from None
    return importlib.import_module(module)


def formats(dialect: str) -> tuple[str, ...]:
    """What the dialect's parser reads (its FORMATS), in words."""
    return getattr(parser(dialect), "FORMATS", ())


def parse(dialect: str, lines: str | Iterable[str]) -> Iterator[Record]:
    return parser(dialect).parse(lines)
