"""External tools kinspect runs (nvdisasm, cuobjdump): where they are and how to call them.

Found without importing triton: the triton wheel ships NVIDIA's binaries under
triton/backends/nvidia/bin; TRITON_<TOOL>_PATH overrides, as in Triton itself; then PATH.
Always argument lists, never a shell.
"""

from __future__ import annotations

import importlib.util
import re
import os
import shutil
import subprocess
from pathlib import Path

from kinspect.core.errors import KinspectError


def nvidia_tool(name: str) -> str | None:
    env = os.environ.get(f"TRITON_{name.upper().replace('-', '_')}_PATH")   # TRITON_PTXAS_BLACKWELL_PATH
    if env and Path(env).is_file():
        return env
    spec = importlib.util.find_spec("triton")
    if spec is not None and spec.origin:
        path = Path(spec.origin).parent / "backends" / "nvidia" / "bin" / name
        if path.is_file():
            return str(path)
    return shutil.which(name)


def run_tool(argv: list[str], *, timeout: float = 120) -> str:
    """Run a tool, return stdout; a failure becomes a KinspectError naming the tool and its message.
    The tool runs in a session of its own: a terminal's Ctrl-C is kinspect's to handle (it lets a
    running tool finish), not a failure of the tool to record."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                              start_new_session=True)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise KinspectError(f"{Path(argv[0]).name} failed: {e}") from None
    if proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).strip().splitlines()
        raise KinspectError(f"{Path(argv[0]).name} failed: {msg[-1] if msg else f'exit {proc.returncode}'}")
    return proc.stdout


# -- object files: llvm-objdump / objdump, their output turned back into assembler syntax -------

def elf_isa(path: Path) -> str | None:
    """The ISA of an ELF object or shared object, from its header's e_machine (each CPU ISA's spec
    names its machine, kinspect.isa)."""
    from kinspect import isa
    from kinspect.isa.elf import machine

    number = machine(path)
    spec = isa.of_elf(number) if number is not None else None
    return spec.name if spec else None


def objdump_tools(isa_name: str) -> list[list[str]]:
    """Disassembler command lines to try for this ISA, best first: llvm-objdump (told the extensions
    the ISA's spec names), the ISA's cross objdump, objdump."""
    from kinspect import isa

    spec = isa.get(isa_name)
    found = []
    llvm = shutil.which("llvm-objdump")
    if llvm:
        mattr = [f"--mattr={spec.objdump_mattr}"] if spec.objdump_mattr else []
        found.append([llvm, "-d", "-r", "-l", "--no-show-raw-insn", *mattr])
    for name in (spec.objdump, "objdump"):
        path = shutil.which(name) if name else None
        if path:
            found.append([path, "-d", "-r", "-l", "--no-show-raw-insn"])
    return found


# "0000000000000014 <sum_kernel>:"
SYMBOL_RE = re.compile(r"^([0-9a-f]+) <(.+)>:\s*$")
# "      1c:      	sext.w	a4, a4"
INSN_RE = re.compile(r"^\s+([0-9a-f]+):\s*(.*)$")
# "; /path/file.py:23" (llvm-objdump -l) or "/path/file.py:23" (GNU objdump -l)
LINE_RE = re.compile(r"^(?:; )?(/.+|[A-Za-z]:\\.+|[^\s:;][^:]*\.\w+):(\d+)(?: \(discriminator \d+\))?\s*$")
# raw instruction bytes before the mnemonic, as GNU objdump prints them without --no-show-raw-insn
RAW_BYTES_RE = re.compile(r"^(?:[0-9a-f]{2,8} )+\s*")
# a branch target as objdump prints it: "0x2c <sum_kernel+0x2c>" or "2c <.L0>"
TARGET_RE = re.compile(r"(?<![0-9a-fx])(?:0x)?([0-9a-f]+) <[^>]*>\s*$")
# a call into another symbol of a linked .so: "jalr -0x1e0(ra) <expf@plt>", "# 1020 <expf@plt>",
# "bl 0x5e0 <expf@plt>", "callq 0x1030 <expf@plt>"
PLT_TARGET_RE = re.compile(r"<([A-Za-z_][\w.$]*@plt)>\s*$")
# a relocation objdump -r prints under its instruction (an object file: calls are not resolved yet):
# "		0000000000000080:  R_RISCV_CALL_PLT	malloc" (llvm-objdump), "			80: R_RISCV_CALL_PLT	malloc" (GNU),
# "		000000000000000a:  R_X86_64_PLT32	expf-0x4" (the addend is not part of the name)
RELOC_RE = re.compile(r"^\s+([0-9a-f]+):\s+(R_[A-Z0-9_]+)(?:\s+(\S+?))?(?:[+-]0x[0-9a-f]+)?\s*$")
# Relocations that name a call's target: RISC-V's auipc+jalr pair, x86's call rel32, AArch64's bl/b.
CALL_RELOCS = frozenset({"R_RISCV_CALL", "R_RISCV_CALL_PLT", "R_X86_64_PLT32", "R_X86_64_PC32",
                         "R_AARCH64_CALL26", "R_AARCH64_JUMP26"})
CALLS = frozenset({"call", "callq", "jmp", "jmpq", "bl", "b", "jal", "jalr", "tail"})


def _call_relocs(lines: list[str]) -> dict[int, str]:
    """offset -> symbol of the call relocations in objdump -r output."""
    found = {}
    for line in lines:
        m = RELOC_RE.match(line)
        if m and m.group(2) in CALL_RELOCS and m.group(3):
            found[int(m.group(1), 16)] = m.group(3)
    return found


def _named_call(addr: int, insn: str, relocs: dict[int, str]) -> tuple[str | None, bool]:
    """The instruction as a call to the symbol its relocation or PLT annotation names, or None; and
    whether it is a RISC-V auipc whose jalr (the pair's second half) is to be dropped."""
    op, _, rest = insn.partition("\t") if "\t" in insn else insn.partition(" ")
    if op == "auipc" and addr in relocs:            # RISC-V call pair: auipc ra|t1, 0 / jalr ra|jr t1
        link = rest.split(",")[0].strip()
        return (f"\tcall\t{relocs[addr]}" if link in ("ra", "x1") else f"\ttail\t{relocs[addr]}"), True
    if op not in CALLS:
        return None, False
    sym = relocs.get(addr) or relocs.get(addr + 1)      # x86's rel32 follows the 1-byte opcode
    if sym is None:
        plt = PLT_TARGET_RE.search(insn)
        sym = plt.group(1) if plt else None
    if sym is None:
        return None, False
    if op in ("jalr", "jal"):
        op = "call"
    return f"\t{op}\t{sym}", False


def objdump_to_asm(text: str) -> tuple[str, int]:
    """objdump -d -l output as assembler text the CPU parsers read: symbols become labels, branch
    targets (printed as addresses) get `.Laddr_<hex>` labels so loops are still seen, and
    `file:line` lines become .file/.loc directives. Returns (text, instructions the disassembler
    could not decode)."""
    lines = text.splitlines()
    targets = set()
    for line in lines:
        m = INSN_RE.match(line)
        if m and not SYMBOL_RE.match(line):
            t = TARGET_RE.search(m.group(2))
            if t:
                targets.add(int(t.group(1), 16))
    relocs = _call_relocs(lines)
    out, files, unknown, drop_jalr = [], {}, 0, False
    for line in lines:
        if RELOC_RE.match(line):
            continue
        m = SYMBOL_RE.match(line)
        if m:
            name = m.group(2).strip()
            if not name.startswith("."):
                out.append(f"\t.globl\t{name}\n\t.type\t{name},@function")
            out.append(f"{name}:")
            continue
        m = INSN_RE.match(line)
        if m:
            addr, insn = int(m.group(1), 16), m.group(2).strip()
            insn = RAW_BYTES_RE.sub("", insn)
            if addr in targets:
                out.append(f".Laddr_{addr:x}:")
            if not insn or insn.startswith(("<unknown>", "(bad)", ".insn")):
                unknown += 1
                out.append("\t# undecoded")
                continue
            if drop_jalr and insn.split(None, 1)[0] in ("jalr", "jr"):
                drop_jalr = False
                continue
            call, drop_jalr = _named_call(addr, insn, relocs)
            out.append(call or "\t" + TARGET_RE.sub(lambda t: f".Laddr_{int(t.group(1), 16):x}", insn))
            continue
        m = LINE_RE.match(line.strip())
        if m:
            path = m.group(1)
            if path not in files:
                files[path] = len(files) + 1
                out.append(f'\t.file\t{files[path]} "{os.path.dirname(path)}" "{os.path.basename(path)}"')
            out.append(f"\t.loc\t{files[path]} {m.group(2)} 0")
    return "\n".join(out) + "\n", unknown


def disassemble(path: Path) -> tuple[str, str]:
    """(assembly, how) for an ELF object or shared object, with the first disassembler that
    decodes it; a KinspectError when none can."""
    found = elf_isa(path)
    if found is None:
        from kinspect.isa import all_isas

        titles = [s.title for s in all_isas() if s.elf_machine is not None]
        raise KinspectError(f"'{path.name}' is not an ELF object for {', '.join(titles[:-1])} or {titles[-1]}")
    tools = objdump_tools(found)
    if not tools:
        raise KinspectError("no llvm-objdump or objdump on PATH (install binutils or LLVM)")
    errors = []
    for argv in tools:
        try:
            raw = run_tool([*argv, str(path)])
        except KinspectError as e:
            errors.append(str(e))
            continue
        asm, unknown = objdump_to_asm(raw)
        decoded = sum(1 for line in asm.splitlines() if line.startswith("\t") and not line.startswith(("\t.", "\t#")))
        if decoded and unknown * 2 < decoded:
            how = " ".join([Path(argv[0]).name, *argv[1:]])
            return asm, how + (f" ({unknown} instructions it could not decode)" if unknown else "")
        errors.append(f"{Path(argv[0]).name} decoded {unknown} of the instructions as unknown")
    raise KinspectError("; ".join(errors))
