"""A SASS listing as `kinspect show` prints it: every instruction led by its scheduling control codes.

Triton's dump already prints them before each instruction (`02:-:1:Y:4	LEA ...`); nvdisasm -hex and
cuobjdump print the instruction's encoding instead, whose high word (the line after the
instruction) holds them. Those two lines become one here: the control codes in Triton's notation,
then the instruction without its encoding, so every SASS dialect reads the same way. A listing
without encodings (plain nvdisasm, as kinspect derived it before) is shown as it is.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from kinspect.ir.sass import ENCODING_HIGH, ENCODING_LOW, TRITON_INSTRUCTION, decode_control, nvdisasm_instruction

LEGEND = ("// control codes wait:read:write:yield:stall = barriers waited on (bit mask, in decimal), barrier set "
          "until the sources are read, until the result is written ('-' none), Y = may yield, stall cycles (hex)")
WIDTH = 11          # `02:-:1:Y:4` and a space


def with_control_codes(lines: Iterable[str]) -> Iterator[str]:
    """The listing's lines (newlines kept) with control codes shown; the legend comes first when
    any instruction has them. Header lines before the first instruction are held (a few dozen)."""
    lines = iter(lines)
    head: list[str] = []
    for line in lines:
        if nvdisasm_instruction(line) or TRITON_INSTRUCTION.match(line):
            coded = TRITON_INSTRUCTION.match(line) is not None or ENCODING_LOW.search(line) is not None
            if coded:
                yield LEGEND + "\n"
            yield from _decoded([*head, line], lines) if ENCODING_LOW.search(line) else (*head, line)
            yield from lines
            return
        head.append(line)
    yield from head


def _decoded(head: list[str], rest: Iterator[str]) -> Iterator[str]:
    """nvdisasm -hex / cuobjdump lines: an instruction and its encoding's high word as one line."""
    pad = " " * WIDTH
    held = None
    for line in _chain(head, rest):
        if held is not None:
            m = ENCODING_HIGH.match(line)
            if m:
                text = ENCODING_LOW.sub("", held.rstrip("\r\n")).rstrip()
                yield f"{decode_control(int(m['word'], 16)).notation():<{WIDTH - 1}} {text.lstrip()}\n"
                held = None
                continue
            yield pad + held
            held = None
        if nvdisasm_instruction(line) and ENCODING_LOW.search(line):
            held = line
        else:
            yield (pad + line) if line.strip() else line
    if held is not None:
        yield pad + held


def _chain(head: list[str], rest: Iterator[str]) -> Iterator[str]:
    yield from head
    yield from rest
