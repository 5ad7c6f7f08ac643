"""Figures in a sample's output that change from run to run or from machine to machine.

A sample prints every such figure (a time, GB/s, a ratio of times, an error measured on random
inputs, a path, what this machine's CPU is) through one of the functions below. Run normally,
they print the figure. With `--stable` (or KINSPECT_SAMPLES_STABLE=1) they print a placeholder
that names the kind of figure: `<ms>`, `<GB/s>`, `<path>`, ... so everything else a sample says
(what the compiler made, registers, instruction counts, which results are correct) can be
compared exactly with samples/expected/NAME.txt, as tests/test_samples.py does.

Plain Python, no kinspect import: samples import it as `_expect` from their own folder.
"""

from __future__ import annotations

import os

stable = os.environ.get("KINSPECT_SAMPLES_STABLE") == "1"


def add_flag(parser) -> None:
    """--stable on an argparse parser; call `configure(args)` after parsing."""
    parser.add_argument("--stable", action="store_true",
                        help="print volatile figures (times, GB/s, paths, ...) as placeholders such as <ms>, "
                             "so the output can be compared with samples/expected/")


def configure(args) -> None:
    global stable
    stable = stable or bool(getattr(args, "stable", False))


def figure(value: float | None, kind: str, fmt: str = "{:,.3g}") -> str:
    """`value` formatted, or `<kind>` under --stable. None (not measured) prints as '-' either way."""
    if value is None:
        return "-"
    return f"<{kind}>" if stable else fmt.format(value)


def ms(value: float | None) -> str:
    """Milliseconds: 3 significant figures below 100, whole numbers above."""
    if value is not None and abs(value) >= 100:
        return figure(value, "ms", "{:,.0f}")
    return figure(value, "ms", "{:.3g}")


def gbps(value: float | None) -> str:
    return figure(value, "GB/s", "{:,.0f}" if value is not None and abs(value) >= 100 else "{:.3g}")


def ratio(value: float | None) -> str:
    return figure(value, "x", "{:.2f}")


def error(value: float | None) -> str:
    """An error measured on random inputs (it changes with the draw, the CPU's vector units, ...)."""
    return figure(value, "err", "{:.2g}")


def count(value: int | None, kind: str = "n") -> str:
    """A count that depends on timing (runs that fit in a time budget, say)."""
    return figure(value, kind, "{:,}")


def text(value: str, kind: str) -> str:
    """Text that names this run or this machine: a path, a device, a date, a host CPU."""
    return f"<{kind}>" if stable else value
