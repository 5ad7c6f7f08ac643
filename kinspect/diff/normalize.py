"""Canonical text of a stage, so a diff between two variants shows only real changes.

Two compiles of one kernel differ in much that carries no meaning: SSA value and register numbers,
label numbers, `#loc` references and debug-location lines, SASS addresses, hashes and the kernel's
own name. Each dialect's Rules say, as data, which lines to drop, what to strip and which names
lose their numbers: `add.s32 %r68, %r67, %r66` becomes `add.s32 %r?, %r?, %r?`.

Numbers are erased rather than renumbered in order of first use: one extra instruction early in a
bigger variant would shift every later number and make every later line differ. What is lost is
which operand feeds which; what is kept is the instruction stream, whose changes are the real ones.
Each normalized line keeps the number of the line it came from, for hunk headers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable


@dataclass(frozen=True)
class Block:
    """A run of lines to drop: from a line matching `start` to one matching `end`; the end line
    is dropped too when `inclusive` (PTX's `}`), else kept (the next `.section` in assembly)."""

    start: re.Pattern
    end: re.Pattern
    inclusive: bool


@dataclass(frozen=True)
class Rules:
    """What noise looks like in one dialect."""

    drop: tuple[re.Pattern, ...] = ()           # whole lines of debug info
    strip: tuple[re.Pattern, ...] = ()          # parts of a line to remove (comments, loc(...), addresses)
    # names whose number is erased: each pattern has groups `base` (kept) and `n` (becomes `?`)
    erase: tuple[re.Pattern, ...] = ()
    blocks: tuple[Block, ...] = ()


# Hashes: Triton's cache keys (base32 of sha256, 52 chars) and hex digests (32+ chars).

# /root/.triton/cache/ZQ4KXQ7DEB4JJFH3KOKZQHTX6RDNIE5VKFM6ZXMFFRMI5ZFR7T6Q/k.ptx
HASH_RE = re.compile(r"\b(?:[A-Z2-7]{52}|[0-9a-f]{32,64})\b")

# -- MLIR (ttir, ttgir, triton-cpu/shared dialects). %c128_i32 and %arg4 keep their meaning. -------

# #loc12 = loc("/work/kernels/fused_mm_softmax.py":22:17)
MLIR_LOC_DEF_RE = re.compile(r"^\s*#loc\d*\s*=\s*loc\(")
#     %5 = tt.load %4 : tensor<64x64x!tt.ptr<f32>, #blocked> loc(#loc7)
# ^bb1(%c_max_5: f32 loc(callsite(#loc1 at #loc38))):
MLIR_LOC_USE_RE = re.compile(r"(?<!\s)\s*loc\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)")
# %12 = arith.addi %11, %c0_i32_3 : i32
MLIR_SSA_RE = re.compile(r"(?P<base>%)(?P<n>\d+)\b")
# %cst_3 = arith.constant dense<0.000000e+00> : tensor<64xf32, #blocked>
MLIR_UNIQUED_RE = re.compile(r"(?P<base>%[A-Za-z_][\w$.]*?_)(?P<n>\d+)\b")
# ^bb3(%45: i32):
MLIR_BLOCK_RE = re.compile(r"(?P<base>\^bb)(?P<n>\d+)")

# -- LLVM IR ------------------------------------------------------------------------------------

#   %13 = fadd float %11, %12, !dbg !25
LLVM_DBG_RE = re.compile(r"(?:,|(?<!\s))\s*!dbg\s+!\d+")
# !21 = distinct !DILexicalBlockFile(scope: !4, file: !22, discriminator: 0)
LLVM_DEBUG_META_RE = re.compile(r"^!\d+\s*=\s*(?:distinct\s+)?!DI|^!llvm\.dbg\.cu\b|^\s*#dbg_")
#   br label %27
LLVM_VALUE_RE = re.compile(r"(?P<base>%)(?P<n>\d+)\b")
# 27:                                               ; preds = %15
LLVM_LABEL_DEF_RE = re.compile(r"^(?P<base>)(?P<n>\d+)(?=:)")
# !nvvm.annotations = !{!3}
LLVM_META_RE = re.compile(r"(?P<base>!)(?P<n>\d+)\b")
#   br i1 %8, label %9, label %27   ; preds = %5
SEMI_COMMENT_RE = re.compile(r"(?<!\s)\s*;.*$")

# -- PTX (%r<265> declarations and %tid.x keep their text) ---------------------------------------

#     .loc    1 22 25                         // fused_mm_softmax.py:22:25
#     .file    1 "/work/kernels/fused_mm_softmax.py"
PTX_DEBUG_RE = re.compile(r"^\s*\.(?:loc|file)\s")
# $L__tmp3:
# $L__func_begin0:
PTX_DEBUG_LABEL_RE = re.compile(r"^\s*\$L__(?:tmp|func_begin|func_end)\d+:\s*$")
#     .section    .debug_str
PTX_DEBUG_SECTION_RE = re.compile(r"^\s*\.section\s+\.debug")
#     }
BLOCK_END_RE = re.compile(r"^\s*}\s*$")
#     add.s32     %r68, %r67, %r66;
PTX_REG_RE = re.compile(r"(?P<base>%[a-z]+)(?P<n>\d+)\b(?![<.])")
# @%p1 bra $L__BB0_2;
PTX_LABEL_RE = re.compile(r"(?P<base>\$L__[A-Za-z_]+?)(?P<n>\d+(?:_\d+)?)\b")
#     mov.u32     %r65, %tid.x;   // a comment
SLASH_COMMENT_RE = re.compile(r"(?<!\s)\s*//.*$")

# -- SASS (nvdisasm) ----------------------------------------------------------------------------

#     //## File "/work/kernels/fused_mm_softmax.py", line 22
SASS_FILE_RE = re.compile(r"^\s*//##")
#         /*0010*/                   S2R R0, SR_TID.X ;
#         /* 0x000fe20000000f00 */
SASS_ADDRESS_RE = re.compile(r"/\*\s*(?:0x)?[0-9a-f]+\s*\*/\s*")
# 02:-:1:Y:4	LEA R244, R3, R2, 0x7;   (Triton's dump: control codes before the instruction)
SASS_CONTROL_RE = re.compile(r"^(?:--|\d\d):[-0-7]:[-0-7]:[-Y]:[0-9a-fA-F]+\t")
# LDC R1, c[0x0][0x28] ;   (nvdisasm and cuobjdump put a space before the `;`, Triton's dump none)
SASS_SEMICOLON_RE = re.compile(r"\s+(?=;)")
# IMAD R3, R2.reuse, R4, RZ ;
# @P0 BRA `(.L_x_1) ;
# ULDC.64 UR4, c[0x0][0x210] ;
SASS_REG_RE = re.compile(r"\b(?P<base>R|UR|P|UP|B)(?P<n>\d+)\b")
# .L_x_12:
# @P0 BRA LBB3;
SASS_LABEL_RE = re.compile(r"(?P<base>\.L_x_|\bLBB)(?P<n>\d+)\b")

# -- AMDGCN and CPU assembly (LLVM's assembly printer) -------------------------------------------

#     .loc    1 22 25 prologue_end   ; k.py:22:25
#     .cfi_offset ra, -8
ASM_DEBUG_RE = re.compile(r"^\s*\.(?:loc|file|cfi_\w+)\b")
#     .section    .debug_info,"",@progbits
ASM_DEBUG_SECTION_RE = re.compile(r"^\s*\.section\s+\.debug")
#     .section    .rodata.cst4,"aM",@progbits,4
#     .text
ASM_SECTION_RE = re.compile(r"^\s*\.(?:section|text)\b(?!\s+\.debug)")
# .LBB0_3:
#     lui    a0, %hi(.LCPI0_1)
ASM_LABEL_RE = re.compile(r"(?P<base>\.L[A-Za-z_]+?)(?P<n>\d+(?:_\d+)?)\b")
#     v_add_f32_e32 v1, v2, v3
#     s_load_dwordx2 s[0:1], s[4:5], 0x0
AMD_REG_RE = re.compile(r"\b(?P<base>[vsa])(?P<n>\d+|\[\d+:\d+\])(?![\w])")
#     vle32.v    v8, (a0)    # a comment
# # %bb.0:
HASH_COMMENT_RE = re.compile(r"(?:^|(?<!\s)\s+)#\s.*$")

PTX_DEBUG_SECTION = Block(PTX_DEBUG_SECTION_RE, BLOCK_END_RE, inclusive=True)
ASM_DEBUG_SECTION = Block(ASM_DEBUG_SECTION_RE, ASM_SECTION_RE, inclusive=False)

RULES: dict[str, Rules] = {
    "mlir": Rules(drop=(MLIR_LOC_DEF_RE,), strip=(MLIR_LOC_USE_RE,),
                  erase=(MLIR_SSA_RE, MLIR_UNIQUED_RE, MLIR_BLOCK_RE)),
    "llvm": Rules(drop=(LLVM_DEBUG_META_RE,), strip=(LLVM_DBG_RE, SEMI_COMMENT_RE),
                  erase=(LLVM_VALUE_RE, LLVM_LABEL_DEF_RE, LLVM_META_RE)),
    "ptx": Rules(drop=(PTX_DEBUG_RE, PTX_DEBUG_LABEL_RE), strip=(SLASH_COMMENT_RE,), erase=(PTX_REG_RE, PTX_LABEL_RE),
                 blocks=(PTX_DEBUG_SECTION,)),
    "sass": Rules(drop=(SASS_FILE_RE,), strip=(SASS_CONTROL_RE, SASS_ADDRESS_RE, SLASH_COMMENT_RE, SASS_SEMICOLON_RE),
                  erase=(SASS_REG_RE, SASS_LABEL_RE)),
    "amdgcn": Rules(drop=(ASM_DEBUG_RE,), strip=(SEMI_COMMENT_RE,), erase=(AMD_REG_RE, ASM_LABEL_RE),
                    blocks=(ASM_DEBUG_SECTION,)),
}
GENERIC = Rules()
# Comments of CPU assembly as LLVM and objdump print it, by how the ISA starts one (its spec's comment)
COMMENT_RES = {"#": HASH_COMMENT_RE, "//": SLASH_COMMENT_RE, ";": SEMI_COMMENT_RE}


def rules_for(dialect: str) -> Rules:
    """The dialect's Rules: its own above, or, for CPU assembly (an ISA whose spec names its arches,
    kinspect.isa), debug lines and sections dropped, comments stripped and label numbers erased."""
    if dialect in RULES:
        return RULES[dialect]
    from kinspect.isa import find

    spec = find(dialect)
    if spec is None or not spec.cpu:
        return GENERIC
    comment = COMMENT_RES.get(spec.comment) or re.compile(rf"(?<!\s)\s*{re.escape(spec.comment)}.*$")
    return Rules(drop=(ASM_DEBUG_RE,), strip=(comment,), erase=(ASM_LABEL_RE,),
                 blocks=(ASM_DEBUG_SECTION,))


@dataclass
class Normalized:
    lines: list[str] = field(default_factory=list)      # canonical text, one entry per kept line
    origin: list[int] = field(default_factory=list)     # 1-based line number each came from
    dropped: int = 0                                    # lines dropped as debug info / blank


def _erase(m: re.Match) -> str:
    """`%r68` -> `%r?`; an AMD register range keeps its width: `s[4:5]` -> `s[?:?+1]`."""
    n = m["n"]
    if n.startswith("["):
        lo, hi = (int(x) for x in n[1:-1].split(":"))
        return f"{m['base']}[?:?+{hi - lo}]"
    return f"{m['base']}?"


def normalize(lines: Iterable[str], dialect: str, *, names: Iterable[str] = ()) -> Normalized:
    """The canonical lines of a stage. `names` (the kernels' own names) become `<kernel>`."""
    rules = rules_for(dialect)
    names = sorted({n for n in names if n}, key=len, reverse=True)
    name_re = re.compile("|".join(re.escape(n) for n in names)) if names else None
    out = Normalized()
    block: Block | None = None
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if block is not None:
            if not block.end.match(line) or block.start.match(line):
                out.dropped += 1
                continue
            ended, block = block, None
            if ended.inclusive:
                out.dropped += 1
                continue
        block = next((b for b in rules.blocks if b.start.match(line)), None)
        if block is not None or any(p.search(line) for p in rules.drop):
            out.dropped += 1
            continue
        for p in rules.strip:
            line = p.sub("", line)
        line = HASH_RE.sub("<hash>", line)
        if name_re is not None:
            line = name_re.sub("<kernel>", line)
        for p in rules.erase:
            line = p.sub(_erase, line)
        line = " ".join(line.split())
        if not line:
            out.dropped += 1
            continue
        out.lines.append(line)
        out.origin.append(number)
    return out
