"""ISA knowledge as data: one opcode table module per ISA (see STYLE: tables, not if-chains)."""

from __future__ import annotations


def merge(*groups: dict, where: str) -> dict:
    """One table from several groups of entries; a name listed twice is an import-time error,
    not a silent override."""
    table: dict = {}
    for group in groups:
        for name, value in group.items():
            if name in table:
                raise ValueError(f"{where} lists {name!r} twice")
            table[name] = value
    return table
