"""NVIDIA opcode tables: SASS (the machine code nvdisasm/cuobjdump print) and PTX.

Data, not logic: each table maps an opcode to an OpInfo that a reader can check against the
vendor manuals ("CUDA Binary Utilities: Instruction Set Reference" for SASS, "PTX ISA" for PTX).
Opcodes missing from a table are records.OTHER: counted, never guessed.

SASS keys are opcode roots, the text before the first dot (`LDG` for `LDG.E.128`). PTX keys are
the longest dotted prefix that names an operation (`ld` for `ld.global.v4.b32`, `wgmma.mma_async`
for `wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32`); `ptx_op(mnemonic)` finds it.

Tensor-core units name the generation, so one question ("does it use wgmma?") is one unit:
  hmma     warp-level mma.sync (sm70-sm90, sm120): HMMA, IMMA, DMMA, BMMA, QMMA, OMMA; PTX mma
  hgmma    warpgroup wgmma (sm90): HGMMA, IGMMA, QGMMA, BGMMA; PTX wgmma.mma_async
  tcgen05  5th-generation tensor cores and tensor memory (sm100): UTC*MMA, LDTM/STTM; PTX tcgen05.*
Other units: ldsm/stsm (ldmatrix/stmatrix), ldgsts (cp.async), tma (bulk/tensor copies), nop.

Per-thread GPU operations are not `vector`; packed ones (HFMA2, add.f16x2) are. A parser may
refine an OpInfo from what the instruction itself states (state space, wide access, float type).
"""

from __future__ import annotations

from dataclasses import replace

from kinspect.isa import Isa, register
from kinspect.isa.ops import OTHER, Kind, OpInfo, Space, grouped, longest_prefix


_FP = dict(fp=True)
_PACKED = dict(fp=True, vector=True)

SASS: dict[str, OpInfo] = grouped(
    # tensor cores, by generation (see module docstring)
    (OpInfo(Kind.MATRIX, unit="hmma", **_FP), "HMMA DMMA QMMA OMMA"),
    (OpInfo(Kind.MATRIX, unit="hmma"), "IMMA BMMA"),
    (OpInfo(Kind.MATRIX, unit="hgmma", **_FP), "HGMMA QGMMA"),
    (OpInfo(Kind.MATRIX, unit="hgmma"), "IGMMA BGMMA"),
    (OpInfo(Kind.MATRIX, unit="tcgen05", **_FP), "UTCHMMA UTCQMMA UTCOMMA"),
    (OpInfo(Kind.MATRIX, unit="tcgen05"), "UTCIMMA"),
    # UTCMMA: the name of the UTC*MMA family; the element type is not in the name
    (OpInfo(Kind.MATRIX, unit="tcgen05"), "UTCMMA"),
    (OpInfo(Kind.LOAD, space=Space.TENSOR, unit="tcgen05"), "LDTM LDT UTCCP"),
    (OpInfo(Kind.STORE, space=Space.TENSOR, unit="tcgen05"), "STTM STT"),
    (OpInfo(Kind.SYNC, unit="tcgen05"), "UTCBAR"),
    (OpInfo(Kind.CONFIG, unit="tcgen05"), "UTCATOMSWS"),
    (OpInfo(Kind.MOVE, unit="tcgen05"), "UTCSHIFT"),
    # memory; the width comes from the modifiers (.128, .64, .U16), the parser reads them
    (OpInfo(Kind.LOAD, space=Space.GLOBAL), "LDG LDGMC"),
    (OpInfo(Kind.STORE, space=Space.GLOBAL), "STG"),
    (OpInfo(Kind.LOAD), "LD"),           # generic address: the space is decided at run time
    (OpInfo(Kind.STORE), "ST"),
    (OpInfo(Kind.LOAD, space=Space.SHARED), "LDS"),
    (OpInfo(Kind.STORE, space=Space.SHARED), "STS STAS"),
    (OpInfo(Kind.LOAD, space=Space.SHARED, unit="ldsm"), "LDSM"),
    (OpInfo(Kind.STORE, space=Space.SHARED, unit="stsm"), "STSM"),
    (OpInfo(Kind.LOAD, space=Space.LOCAL), "LDL"),      # local memory = register spills
    (OpInfo(Kind.STORE, space=Space.LOCAL), "STL"),
    (OpInfo(Kind.LOAD, space=Space.CONSTANT), "LDC ULDC LDCU"),
    (OpInfo(Kind.LOAD, space=Space.GLOBAL, unit="ldgsts"), "LDGSTS"),   # cp.async global -> shared
    (OpInfo(Kind.LOAD, space=Space.TENSOR, unit="tma"), "UTMALDG UTMAPF UBLKCP UBLKPF"),
    (OpInfo(Kind.STORE, space=Space.TENSOR, unit="tma"), "UTMASTG"),
    (OpInfo(Kind.ATOMIC, space=Space.TENSOR, unit="tma"), "UTMAREDG UBLKRED"),
    (OpInfo(Kind.ATOMIC), "ATOM"),
    (OpInfo(Kind.ATOMIC, space=Space.GLOBAL), "ATOMG RED REDG"),
    (OpInfo(Kind.ATOMIC, space=Space.SHARED), "ATOMS REDAS"),
    # floating point
    (OpInfo(Kind.FMA, **_FP), "FFMA FFMA32I DFMA UFFMA FHFMA"),
    (OpInfo(Kind.FMA, **_PACKED), "HFMA2 HFMA2_32I FFMA2"),
    (OpInfo(Kind.ARITH, **_FP), "FADD FADD32I FMUL FMUL32I FMNMX FMNMX3 FSETP FSET FSEL FCHK "
                                "FSWZADD FRND DADD DMUL DSETP DMNMX FHADD UFADD UFMUL UFMNMX "
                                "UFSEL UFSET UFSETP UFRND"),
    (OpInfo(Kind.ARITH, **_PACKED), "HADD2 HADD2_32I HMUL2 HMUL2_32I HMNMX2 HSETP2 HSET2 "
                                    "VHMNMX FADD2 FMUL2"),
    (OpInfo(Kind.SPECIAL, **_FP), "MUFU"),
    # integer, logic, compare/select (IMAD is the integer workhorse: address math, moves)
    (OpInfo(Kind.ARITH), "IMAD IMUL IMUL32I IADD IADD3 IADD32I IABS ISCADD ISCADD32I ISETP IMNMX "
                         "VIMNMX VIMNMX3 VIADD VIADDMNMX VABSDIFF VABSDIFF4 IDP IDP4A LOP LOP3 "
                         "LOP32I SHF SHL SHR BREV BMSK FLO POPC SGXT LEA SEL PLOP3 PSETP "
                         "UIADD3 UIMAD UIMNMX UIABS UISETP ULOP ULOP3 ULOP32I UPOPC UBREV UBMSK "
                         "UFLO USEL USGXT USHF USHL USHR ULEA UPLOP3 UPSETP UVIADD UVIMNMX"),
    (OpInfo(Kind.REDUCE, ordered=False), "REDUX CREDUX"),     # warp-wide reductions
    # conversions
    (OpInfo(Kind.CONVERT, **_FP), "F2F F2I I2F F2FP I2FP F2IP UF2F UF2FP UF2I UF2IP UI2F UI2FP"),
    (OpInfo(Kind.CONVERT), "I2I I2IP UI2I UI2IP"),
    # moves, shuffles, special registers, votes
    (OpInfo(Kind.MOVE), "MOV MOV32I UMOV CS2R S2R S2UR R2UR CS2UR SHFL PRMT UPRMT MOVM P2R R2P "
                        "UP2UR UR2UP B2R VOTE VOTEU ACTIVEMASK MATCH"),
    # control flow
    (OpInfo(Kind.CONTROL), "BRA BRX BRXU JMP JMX JMXU CALL RET EXIT KILL BSSY BSYNC BREAK BPT BMOV "
                           "PREEXIT ELECT YIELD"),
    # barriers, fences, waits
    (OpInfo(Kind.SYNC), "BAR BARRIER MEMBAR FENCE ERRBAR CGAERRBAR DEPBAR LDGDEPBAR WARPSYNC "
                        "WARPGROUP WARPGROUPSET SYNCS ARRIVES UCGABAR_ARV UCGABAR_WAIT ACQBULK "
                        "NANOSLEEP"),
    (OpInfo(Kind.CONFIG), "USETMAXREG"),
    (OpInfo(Kind.NOP), "NOP"),    # known, and does no work
    where=__name__,
)

# SASS modifiers that state the bits one thread moves (LDG.E.128, LDS.U16, ATOMG.E.ADD.F64);
# a memory op without one moves 32 bits
SASS_SIZE_MODIFIERS: dict[str, int] = {
    "128": 128, "64": 64, "32": 32,
    "U8": 8, "S8": 8, "U16": 16, "S16": 16,
    "U32": 32, "S32": 32, "F32": 32, "U64": 64, "S64": 64, "F64": 64,
}

# PTX state spaces (`ld.global`, `st.shared::cta`) -> Space; .param and .const live in the
# constant banks (SASS reads kernel parameters with LDC)
PTX_SPACES: dict[str, Space] = {
    "global": Space.GLOBAL,
    "shared": Space.SHARED,
    "shared::cta": Space.SHARED,
    "shared::cluster": Space.SHARED,
    "local": Space.LOCAL,
    "param": Space.CONSTANT,
    "const": Space.CONSTANT,
}

# PTX type suffix -> (element bits, elements); packed types hold two elements in one register
PTX_TYPES: dict[str, tuple[int, int]] = {
    **{t: (8, 1) for t in ("b8", "u8", "s8", "e4m3", "e5m2")},
    **{t: (16, 1) for t in ("b16", "u16", "s16", "f16", "bf16")},
    **{t: (32, 1) for t in ("b32", "u32", "s32", "f32", "tf32")},
    **{t: (64, 1) for t in ("b64", "u64", "s64", "f64")},
    "b128": (128, 1),
    **{t: (16, 2) for t in ("f16x2", "bf16x2")},
    **{t: (8, 2) for t in ("e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "ue8m0x2")},
    "e2m1x2": (4, 2),
    "f32x2": (32, 2),
}

PTX_FLOAT_TYPES = frozenset({"f16", "bf16", "f32", "tf32", "f64", "f16x2", "bf16x2", "f32x2",
                             "e4m3", "e5m2", "e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2"})

PTX: dict[str, OpInfo] = grouped(
    # memory; ld/st/atom/red take their space from the qualifier (`ld.global`), see PTX_SPACES
    (OpInfo(Kind.LOAD), "ld"),
    (OpInfo(Kind.LOAD, space=Space.GLOBAL), "ldu"),
    (OpInfo(Kind.STORE), "st"),
    (OpInfo(Kind.STORE, space=Space.SHARED), "st.async"),
    (OpInfo(Kind.ATOMIC), "atom red"),
    (OpInfo(Kind.ATOMIC, space=Space.SHARED), "red.async"),
    (OpInfo(Kind.LOAD, space=Space.SHARED, unit="ldsm"), "ldmatrix"),
    (OpInfo(Kind.STORE, space=Space.SHARED, unit="stsm"), "stmatrix"),
    (OpInfo(Kind.LOAD, space=Space.GLOBAL, unit="ldgsts"), "cp.async"),
    # bulk copies go through the TMA engine; the parser turns `.global.shared` ones into stores
    (OpInfo(Kind.LOAD, space=Space.TENSOR, unit="tma"), "cp.async.bulk cp.async.bulk.tensor "
                                                        "cp.async.bulk.prefetch"),
    (OpInfo(Kind.ATOMIC, space=Space.TENSOR, unit="tma"), "cp.reduce.async.bulk"),
    (OpInfo(Kind.SYNC), "cp.async.commit_group cp.async.wait_group cp.async.wait_all "
                        "cp.async.mbarrier.arrive cp.async.bulk.commit_group "
                        "cp.async.bulk.wait_group"),
    # tensor cores
    (OpInfo(Kind.MATRIX, unit="hmma"), "mma wmma.mma"),
    (OpInfo(Kind.MATRIX, unit="hgmma"), "wgmma.mma_async"),
    (OpInfo(Kind.SYNC, unit="hgmma"), "wgmma.fence wgmma.commit_group wgmma.wait_group"),
    (OpInfo(Kind.MATRIX, unit="tcgen05"), "tcgen05.mma"),
    (OpInfo(Kind.LOAD, space=Space.TENSOR, unit="tcgen05"), "tcgen05.ld tcgen05.cp"),
    (OpInfo(Kind.STORE, space=Space.TENSOR, unit="tcgen05"), "tcgen05.st"),
    (OpInfo(Kind.CONFIG, unit="tcgen05"), "tcgen05.alloc tcgen05.dealloc "
                                          "tcgen05.relinquish_alloc_permit"),
    (OpInfo(Kind.SYNC, unit="tcgen05"), "tcgen05.commit tcgen05.wait tcgen05.fence"),
    (OpInfo(Kind.MOVE, unit="tcgen05"), "tcgen05.shift"),
    # arithmetic; fp comes from the type suffix (add.f32 vs add.s32)
    (OpInfo(Kind.FMA), "fma"),
    # mad is integer in Triton's PTX (mad.lo, mad.wide); LLVM writes float multiply-add as fma
    (OpInfo(Kind.ARITH), "add sub mul mad mul24 mad24 div rem abs neg min max setp set selp slct "
                         "and or xor not cnot shl shr shf bfe bfi brev clz popc bfind fns testp "
                         "copysign sad lop3 szext bmsk addc subc madc dp4a dp2a"),
    (OpInfo(Kind.SPECIAL), "ex2 lg2 rcp rsqrt sqrt sin cos tanh"),
    (OpInfo(Kind.REDUCE, ordered=False), "redux"),
    (OpInfo(Kind.CONVERT), "cvt cvta"),
    (OpInfo(Kind.MOVE), "mov shfl prmt movmatrix vote match activemask"),
    (OpInfo(Kind.CONTROL), "bra brx call ret exit trap brkpt elect"),
    (OpInfo(Kind.SYNC), "bar barrier membar fence mbarrier griddepcontrol nanosleep"),
    (OpInfo(Kind.CONFIG), "setmaxnreg"),
    where=__name__,
)

_PTX_KEY_DEPTH = max(key.count(".") for key in PTX) + 1


def lookup_sass(op: str) -> OpInfo:
    """OpInfo for a SASS opcode root (`LDG`), records.OTHER when the table does not know it."""
    return SASS.get(op, OTHER)


def lookup_ptx(op: str) -> OpInfo:
    """OpInfo for a PTX op key (`ld`, `wgmma.mma_async`), records.OTHER when unknown."""
    return PTX.get(op, OTHER)


def ptx_op(mnemonic: str) -> str:
    """The PTX table key of a mnemonic: its longest dotted prefix in the table, else its root."""
    key, info = longest_prefix(PTX, mnemonic, _PTX_KEY_DEPTH)
    return key if info is not OTHER else mnemonic.split(".", 1)[0]


def ptx_info(mnemonic: str) -> tuple[str, OpInfo]:
    """(table key, OpInfo) of a PTX mnemonic with what its qualifiers state on top of the table's
    entry: the state space of a memory op (`ld.global`), floating point (`add.f32`, `cvt.rn.bf16x2.f32`)."""
    op = ptx_op(mnemonic)
    info = lookup_ptx(op)
    qualifiers = mnemonic.split(".")[1:]
    if info.kind in (Kind.LOAD, Kind.STORE, Kind.ATOMIC) and info.space is Space.NONE:
        space = next((PTX_SPACES[q] for q in qualifiers if q in PTX_SPACES), None)
        if space is not None:
            info = replace(info, space=space)
    if (not info.fp and info.kind not in (Kind.LOAD, Kind.STORE, Kind.OTHER)
            and any(q in PTX_FLOAT_TYPES for q in qualifiers)):
        info = replace(info, fp=True)
    return op, info


register(Isa(name="ptx", title="PTX", parser="kinspect.ir.ptx", lexer="kinspect.render.lexers:PtxIrLexer",
             extensions=(".ptx",), diff_rank=10, virtual=True))
register(Isa(name="sass", title="SASS", parser="kinspect.ir.sass", lexer="kinspect.render.lexers:SassLexer",
             extensions=(".sass",), machine=True, rank=10, diff_rank=60, control_codes=True))
