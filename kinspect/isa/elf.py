"""ELF objects (cubin, hsaco, a CPU backend's .o and .so) read through pyelftools: both classes (ELF32,
ELF64) and both byte orders, section headers read lazily, every field untrusted.

    machine(path)      # e_machine, which names the ISA (kinspect.isa.of_elf), or None
    text_bytes(path)   # bytes of executable sections (SHF_EXECINSTR, not NOBITS), or None

A file that is not ELF, or is cut short, or whose headers point outside it, gives None: these are
read from stores that may come from anywhere (STYLE.md, habit 13).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

from elftools.common.exceptions import ELFError
from elftools.construct import ConstructError
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile
from elftools.elf.enums import ENUM_E_MACHINE

MAGIC = b"\x7fELF"
# what a corrupt header can make pyelftools (or the stream under it) raise
_BAD = (ELFError, ConstructError, OSError, ValueError, OverflowError, EOFError, KeyError, TypeError)


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[tuple[ELFFile, int] | None]:
    try:
        f = open(path, "rb")
    except OSError:
        yield None
        return
    with f:
        if f.read(4) != MAGIC:
            yield None
            return
        f.seek(0)
        try:
            elf = ELFFile(f)
        except _BAD:
            yield None
            return
        yield elf, os.fstat(f.fileno()).st_size


def machine(path: Path) -> int | None:
    """The object's e_machine (EM_CUDA 190, EM_AMDGPU 224, EM_RISCV 243, ...), or None when it is no ELF."""
    with _opened(path) as opened:
        if opened is None:
            return None
        elf, _ = opened
        try:
            return _number(elf.header["e_machine"])
        except _BAD:
            return None


def _number(value) -> int:
    """e_machine as a number: pyelftools names the machines it knows (`EM_CUDA`), leaves others numbers."""
    return value if isinstance(value, int) else ENUM_E_MACHINE[value]


def text_bytes(path: Path) -> int | None:
    """Bytes of executable sections, or None when the file is not a readable ELF object. In a cubin that
    is `.text.<kernel>`; in a CPU .so it includes the launcher code Triton's CPU backends link in."""
    with _opened(path) as opened:
        if opened is None:
            return None
        elf, size = opened
        try:
            count = elf.num_sections()
            entry = elf.header["e_shentsize"]
            if count and (entry < elf.structs.Elf_Shdr.sizeof() or
                          elf.header["e_shoff"] + entry * count > size):
                return None      # a section table past the file's end: truncated or forged
            total = 0
            for section in elf.iter_sections():
                header = section.header
                if header["sh_flags"] & SH_FLAGS.SHF_EXECINSTR and header["sh_type"] != "SHT_NOBITS":
                    total += header["sh_size"]
            return total
        except _BAD:
            return None
