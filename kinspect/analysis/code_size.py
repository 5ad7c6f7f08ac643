"""Code size: the bytes of executable sections in a variant's binary (cubin, hsaco, .o, .so).

Read from the ELF section headers (ELF64, either byte order), without any tool: every section
with SHF_EXECINSTR counts. In a cubin that is `.text.<kernel>`; in a CPU .so it includes the
launcher code Triton's CPU backends link in beside the kernel.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from kinspect.core.model import Variant

SHF_EXECINSTR = 0x4


def text_bytes(path: Path) -> int | None:
    """Bytes of executable sections, or None when the file is not a readable ELF64 object."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2:
                return None
            order = "<" if head[5] == 1 else ">"
            shoff, = struct.unpack_from(order + "Q", head, 0x28)
            shentsize, shnum = struct.unpack_from(order + "HH", head, 0x3A)
            if shentsize < 64 or shnum == 0 or shnum > 65535:
                return None
            if shoff + shentsize * shnum > os.fstat(f.fileno()).st_size:
                return None  # truncated, or an offset past any file (seek would raise)
            f.seek(shoff)
            table = f.read(shentsize * shnum)
    except OSError:
        return None
    if len(table) < shentsize * shnum:
        return None  # truncated
    total = 0
    for i in range(shnum):
        flags, = struct.unpack_from(order + "Q", table, i * shentsize + 0x08)
        size, = struct.unpack_from(order + "Q", table, i * shentsize + 0x20)
        sh_type, = struct.unpack_from(order + "I", table, i * shentsize + 0x04)
        if flags & SHF_EXECINSTR and sh_type != 8:  # 8 = SHT_NOBITS
            total += size
    return total


def code_bytes(v: Variant) -> int | None:
    """The variant's machine-code size from its first binary stage that is an ELF object."""
    for s in v.stages:
        if s.binary:
            size = text_bytes(Path(v.path, s.file))
            if size is not None:
                return size
    return None
