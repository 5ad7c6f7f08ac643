"""Code size: the bytes of executable sections in a variant's binary (cubin, hsaco, .o, .so), read from
its ELF section headers (kinspect.isa.elf: every section with SHF_EXECINSTR counts). In a cubin that is
`.text.<kernel>`; in a CPU .so it includes the launcher code Triton's CPU backends link in beside the
kernel.
"""

from __future__ import annotations

from pathlib import Path

from kinspect.core.model import Variant
from kinspect.isa.elf import text_bytes


def code_bytes(v: Variant) -> int | None:
    """The variant's machine-code size from its first binary stage that is an ELF object."""
    for s in v.stages:
        if s.binary:
            size = text_bytes(Path(v.path, s.file))
            if size is not None:
                return size
    return None
