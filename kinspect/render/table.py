"""Terminal tables: cells laid out in columns, each as wide as its widest cell. The one place a view pads
its columns (the variants list, a capture's launch table, the sweep and JIT tables, the program table).

    aligned([("#", "kernel", "calls"), ("1", "softmax", "1,024")], "<<>")
    # ['  #  kernel   calls', '  1  softmax  1,024']
"""

from __future__ import annotations

from typing import Sequence

INDENT = GAP = "  "


def aligned(lines: Sequence[Sequence[str]], align: str | Sequence[str] = "<", *, free_last: bool = False) -> list[str]:
    """Each line's cells padded to their column's width and joined by two spaces, indented by two. `align`
    is "<" (left) or ">" (right) for every column, or one of them per column. With `free_last`, the last
    column is not padded (a folder, a free text at the end of each line)."""
    if not lines:
        return []
    n = len(lines[0])
    padded = n - 1 if free_last else n
    if isinstance(align, str) and len(align) == 1:
        align = align * n
    widths = [max(len(line[k]) for line in lines) for k in range(padded)]
    out = []
    for line in lines:
        cells = [c.rjust(w) if a == ">" else c.ljust(w) for c, w, a in zip(line, widths, align)]
        out.append(INDENT + GAP.join(cells + ([line[-1]] if free_last else [])))
    return out
