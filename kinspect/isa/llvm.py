"""What LLVM IR instructions and intrinsics are.

Three tables:
- OPCODES: the instruction opcodes of the LangRef (`fadd`, `load`, `shufflevector`, ...).
- INTRINSICS: intrinsic-name prefixes (`llvm.vector.reduce.fadd`, `llvm.nvvm.wgmma.mma_async`),
  matched on whole dotted components, longest first, so the type suffix of an overloaded
  intrinsic (`.v16f32`, `.p0`) never needs listing.
- INLINE_ASM: prefixes of the first real instruction of an inline-asm call. Triton's NVIDIA
  backend emits global loads/stores, mma.sync and wgmma as PTX inline asm in its llir, so
  without this table the most important instructions of an sm80/sm90 kernel would be opaque.
  What each is comes from the PTX table (kinspect.isa.nvidia): this table only lists the keys.

Per-instruction facts the text decides (vector type, address space, the `reassoc` flag of a
reduction) are applied by kinspect/ir/llvm.py on top of these entries.
"""

from __future__ import annotations

from dataclasses import replace

from kinspect.isa import Isa, nvidia, register
from kinspect.isa.ops import Access, Kind, OpInfo, OTHER, Space, longest_prefix, merge, named


def _merged(*groups: dict) -> dict:
    return merge(*groups, where=__name__)


def _ops(kind: Kind, names: str, **info) -> dict[str, OpInfo]:
    """One OpInfo for every whitespace-separated name in `names`."""
    return named(OpInfo(kind, **info), names)


OPCODES: dict[str, OpInfo] = _merged(
    _ops(Kind.ARITH, "add sub mul udiv sdiv urem srem shl lshr ashr and or xor icmp select "
                       "getelementptr"),
    _ops(Kind.ARITH, "fadd fsub fmul fdiv frem fneg fcmp", fp=True),
    _ops(Kind.CONVERT, "trunc zext sext ptrtoint inttoptr bitcast addrspacecast"),
    _ops(Kind.CONVERT, "fptrunc fpext fptoui fptosi uitofp sitofp", fp=True),
    _ops(Kind.MOVE, "extractelement insertelement shufflevector extractvalue insertvalue phi "
                      "freeze"),
    _ops(Kind.LOAD, "load"),
    _ops(Kind.STORE, "store"),
    _ops(Kind.ATOMIC, "atomicrmw cmpxchg"),
    _ops(Kind.SYNC, "fence"),
    _ops(Kind.CONTROL, "br switch indirectbr ret call invoke callbr resume unreachable"),
)

INTRINSICS: dict[str, OpInfo] = _merged(
    # --- target-independent ---
    _ops(Kind.FMA, "llvm.fma llvm.fmuladd", fp=True),
    _ops(Kind.SPECIAL, """llvm.exp llvm.exp2 llvm.exp10 llvm.log llvm.log2 llvm.log10 llvm.pow
        llvm.powi llvm.sin llvm.cos llvm.tan llvm.asin llvm.acos llvm.atan llvm.atan2 llvm.sinh
        llvm.cosh llvm.tanh llvm.sqrt""", fp=True),
    _ops(Kind.ARITH, """llvm.maxnum llvm.minnum llvm.maximum llvm.minimum llvm.maximumnum
        llvm.minimumnum llvm.fabs llvm.copysign llvm.floor llvm.ceil llvm.trunc llvm.rint
        llvm.nearbyint llvm.round llvm.roundeven llvm.canonicalize llvm.is.fpclass""", fp=True),
    _ops(Kind.ARITH, """llvm.smax llvm.smin llvm.umax llvm.umin llvm.abs llvm.ctpop llvm.ctlz
        llvm.cttz llvm.bitreverse llvm.bswap llvm.fshl llvm.fshr llvm.sadd llvm.uadd llvm.ssub
        llvm.usub llvm.smul llvm.umul"""),
    # fadd/fmul reductions are sequential (ordered) unless the call has `reassoc` (or `fast`);
    # the parser clears `ordered` when it sees the flag.
    _ops(Kind.REDUCE, "llvm.vector.reduce.fadd llvm.vector.reduce.fmul llvm.vp.reduce.fadd "
                        "llvm.vp.reduce.fmul", vector=True, fp=True, ordered=True),
    _ops(Kind.REDUCE, """llvm.vector.reduce.fmax llvm.vector.reduce.fmin
        llvm.vector.reduce.fmaximum llvm.vector.reduce.fminimum llvm.vp.reduce.fmax
        llvm.vp.reduce.fmin""", vector=True, fp=True, ordered=False),
    _ops(Kind.REDUCE, """llvm.vector.reduce.add llvm.vector.reduce.mul llvm.vector.reduce.and
        llvm.vector.reduce.or llvm.vector.reduce.xor llvm.vector.reduce.smax
        llvm.vector.reduce.smin llvm.vector.reduce.umax llvm.vector.reduce.umin llvm.vp.reduce.add
        llvm.vp.reduce.smax llvm.vp.reduce.umax""", vector=True, ordered=False),
    _ops(Kind.LOAD, "llvm.masked.load llvm.masked.expandload llvm.vp.load", vector=True,
           access=Access.UNIT),
    _ops(Kind.STORE, "llvm.masked.store llvm.masked.compressstore llvm.vp.store", vector=True,
           access=Access.UNIT),
    _ops(Kind.LOAD, "llvm.experimental.vp.strided.load llvm.matrix.column.major.load",
           vector=True, access=Access.STRIDED),
    _ops(Kind.STORE, "llvm.experimental.vp.strided.store llvm.matrix.column.major.store",
           vector=True, access=Access.STRIDED),
    _ops(Kind.LOAD, "llvm.masked.gather llvm.vp.gather", vector=True, access=Access.INDEXED),
    _ops(Kind.STORE, "llvm.masked.scatter llvm.vp.scatter", vector=True, access=Access.INDEXED),
    _ops(Kind.MATRIX, "llvm.matrix.multiply", vector=True),
    # --- NVIDIA (NVVM) ---
    _ops(Kind.MATRIX, "llvm.nvvm.wgmma.mma_async", unit="hgmma"),
    _ops(Kind.SYNC, "llvm.nvvm.wgmma.fence llvm.nvvm.wgmma.commit_group llvm.nvvm.wgmma.wait_group"),
    _ops(Kind.MATRIX, "llvm.nvvm.mma llvm.nvvm.wmma", unit="hmma"),
    _ops(Kind.LOAD, "llvm.nvvm.wmma.m16n16k16.load", unit="hmma"),
    _ops(Kind.MATRIX, "llvm.nvvm.tcgen05.mma", unit="tcgen05"),
    _ops(Kind.LOAD, "llvm.nvvm.tcgen05.ld", space=Space.TENSOR),
    _ops(Kind.STORE, "llvm.nvvm.tcgen05.st", space=Space.TENSOR),
    _ops(Kind.LOAD, "llvm.nvvm.ldmatrix", space=Space.SHARED),
    _ops(Kind.LOAD, "llvm.nvvm.ldu.global llvm.nvvm.ldg.global", space=Space.GLOBAL),
    _ops(Kind.LOAD, "llvm.nvvm.cp.async.ca llvm.nvvm.cp.async.cg", space=Space.GLOBAL),
    _ops(Kind.LOAD, "llvm.nvvm.cp.async.bulk.tensor", space=Space.TENSOR),
    _ops(Kind.SYNC, """llvm.nvvm.barrier llvm.nvvm.barrier0 llvm.nvvm.bar llvm.nvvm.fence
        llvm.nvvm.membar llvm.nvvm.mbarrier llvm.nvvm.cp.async.commit.group
        llvm.nvvm.cp.async.wait.group llvm.nvvm.cp.async.wait.all llvm.nvvm.cp.async.bulk.commit
        llvm.nvvm.cp.async.bulk.wait_group"""),
    _ops(Kind.MOVE, "llvm.nvvm.shfl llvm.nvvm.read.ptx.sreg llvm.nvvm.vote llvm.nvvm.prmt"),
    _ops(Kind.REDUCE, "llvm.nvvm.redux.sync", ordered=False),
    _ops(Kind.SPECIAL, """llvm.nvvm.ex2.approx llvm.nvvm.lg2.approx llvm.nvvm.sin.approx
        llvm.nvvm.cos.approx llvm.nvvm.rsqrt.approx llvm.nvvm.sqrt.approx llvm.nvvm.rcp.approx
        llvm.nvvm.tanh.approx""", fp=True),
    _ops(Kind.ARITH, """llvm.nvvm.div.full llvm.nvvm.div.approx llvm.nvvm.fmax llvm.nvvm.fmin
        llvm.nvvm.fabs llvm.nvvm.sqrt.rn llvm.nvvm.rcp.rn llvm.nvvm.div.rn""", fp=True),
    _ops(Kind.FMA, "llvm.nvvm.fma", fp=True),
    # --- AMD (AMDGCN) ---
    _ops(Kind.MATRIX, "llvm.amdgcn.mfma llvm.amdgcn.smfmac", unit="mfma"),
    _ops(Kind.MATRIX, "llvm.amdgcn.wmma llvm.amdgcn.swmmac", unit="wmma"),
    _ops(Kind.LOAD, """llvm.amdgcn.raw.buffer.load llvm.amdgcn.raw.ptr.buffer.load
        llvm.amdgcn.struct.buffer.load llvm.amdgcn.struct.ptr.buffer.load
        llvm.amdgcn.global.load.lds llvm.amdgcn.raw.ptr.buffer.load.lds""", space=Space.GLOBAL),
    _ops(Kind.STORE, """llvm.amdgcn.raw.buffer.store llvm.amdgcn.raw.ptr.buffer.store
        llvm.amdgcn.struct.buffer.store llvm.amdgcn.struct.ptr.buffer.store""", space=Space.GLOBAL),
    _ops(Kind.ATOMIC, """llvm.amdgcn.raw.buffer.atomic llvm.amdgcn.raw.ptr.buffer.atomic
        llvm.amdgcn.global.atomic""", space=Space.GLOBAL),
    _ops(Kind.LOAD, "llvm.amdgcn.ds.read.tr4 llvm.amdgcn.ds.read.tr8 llvm.amdgcn.ds.read.tr16",
           space=Space.SHARED),
    _ops(Kind.MOVE, """llvm.amdgcn.ds.bpermute llvm.amdgcn.ds.permute llvm.amdgcn.ds.swizzle
        llvm.amdgcn.update.dpp llvm.amdgcn.mov.dpp llvm.amdgcn.permlane16 llvm.amdgcn.permlanex16
        llvm.amdgcn.permlane32.swap llvm.amdgcn.permlane16.swap llvm.amdgcn.readfirstlane
        llvm.amdgcn.readlane llvm.amdgcn.writelane llvm.amdgcn.workitem.id llvm.amdgcn.workgroup.id
        llvm.amdgcn.perm"""),
    _ops(Kind.SYNC, """llvm.amdgcn.s.barrier llvm.amdgcn.s.waitcnt llvm.amdgcn.s.wait
        llvm.amdgcn.wave.barrier"""),
    _ops(Kind.SPECIAL, """llvm.amdgcn.exp2 llvm.amdgcn.log llvm.amdgcn.rcp llvm.amdgcn.rsq
        llvm.amdgcn.sqrt llvm.amdgcn.sin llvm.amdgcn.cos""", fp=True),
    _ops(Kind.FMA, "llvm.amdgcn.fdot2 llvm.amdgcn.sdot2 llvm.amdgcn.udot2 llvm.amdgcn.sdot4 "
                     "llvm.amdgcn.udot4"),
    _ops(Kind.CONVERT, "llvm.amdgcn.cvt", fp=True),
    # --- x86: AMX tiles and AVX-512 dot products ---
    _ops(Kind.MATRIX, """llvm.x86.tdpbf16ps llvm.x86.tdpfp16ps llvm.x86.tdpbssd llvm.x86.tdpbsud
        llvm.x86.tdpbusd llvm.x86.tdpbuud llvm.x86.tcmmimfp16ps llvm.x86.tcmmrlfp16ps""", unit="amx"),
    _ops(Kind.LOAD, "llvm.x86.tileloadd64 llvm.x86.tileloaddt164", unit="amx"),
    _ops(Kind.STORE, "llvm.x86.tilestored64", unit="amx"),
    _ops(Kind.CONFIG, "llvm.x86.ldtilecfg llvm.x86.sttilecfg llvm.x86.tilerelease llvm.x86.tilezero",
           unit="amx"),
    _ops(Kind.FMA, "llvm.x86.avx512bf16.dpbf16ps llvm.x86.avx512.vpdpbusd llvm.x86.avx512.vpdpwssd",
           vector=True, unit="avx512"),
    # --- AArch64: NEON matrix/dot and SME outer products ---
    _ops(Kind.MATRIX, """llvm.aarch64.neon.bfmmla llvm.aarch64.neon.smmla llvm.aarch64.neon.ummla
        llvm.aarch64.neon.usmmla""", vector=True, unit="neon"),
    _ops(Kind.FMA, "llvm.aarch64.neon.sdot llvm.aarch64.neon.udot llvm.aarch64.neon.bfdot",
           vector=True, unit="neon"),
    _ops(Kind.REDUCE, """llvm.aarch64.neon.faddv llvm.aarch64.neon.fmaxv llvm.aarch64.neon.fminv
        llvm.aarch64.neon.saddv llvm.aarch64.neon.uaddv llvm.aarch64.neon.faddp""",
           vector=True, ordered=False, unit="neon"),
    _ops(Kind.MATRIX, """llvm.aarch64.sme.mopa llvm.aarch64.sme.mops llvm.aarch64.sme.smopa
        llvm.aarch64.sme.umopa llvm.aarch64.sme.sumopa llvm.aarch64.sme.usmopa""", unit="sme"),
    # --- RISC-V vector ---
    _ops(Kind.LOAD, "llvm.riscv.vle llvm.riscv.vleff", vector=True, access=Access.UNIT, unit="rvv"),
    _ops(Kind.LOAD, "llvm.riscv.vlse", vector=True, access=Access.STRIDED, unit="rvv"),
    _ops(Kind.LOAD, "llvm.riscv.vluxei llvm.riscv.vloxei", vector=True, access=Access.INDEXED,
           unit="rvv"),
    _ops(Kind.STORE, "llvm.riscv.vse", vector=True, access=Access.UNIT, unit="rvv"),
    _ops(Kind.STORE, "llvm.riscv.vsse", vector=True, access=Access.STRIDED, unit="rvv"),
    _ops(Kind.STORE, "llvm.riscv.vsuxei llvm.riscv.vsoxei", vector=True, access=Access.INDEXED,
           unit="rvv"),
    _ops(Kind.FMA, "llvm.riscv.vfmacc llvm.riscv.vfmadd llvm.riscv.vfwmacc", vector=True, fp=True,
           unit="rvv"),
    _ops(Kind.REDUCE, "llvm.riscv.vfredusum llvm.riscv.vfredmax llvm.riscv.vfredmin",
           vector=True, fp=True, ordered=False, unit="rvv"),
    _ops(Kind.REDUCE, "llvm.riscv.vfredosum", vector=True, fp=True, ordered=True, unit="rvv"),
    _ops(Kind.CONFIG, "llvm.riscv.vsetvli llvm.riscv.vsetvlimax", unit="rvv"),
)

# The first real instruction of a PTX inline-asm string (after `mov`s that set default values
# and after the `@$N` guard), matched by dotted prefix like INTRINSICS: the keys are the forms
# Triton's inline asm uses, each what the PTX table says with the state space it names.
INLINE_ASM: dict[str, OpInfo] = {key: nvidia.ptx_info(key)[1] for key in """
    wgmma.mma_async wgmma.fence wgmma.commit_group wgmma.wait_group mma.sync mma.sp wmma.mma tcgen05.mma
    ld.global ldu.global st.global ld.shared ldmatrix st.shared stmatrix ld.local st.local ld.const ld.param
    cp.async.ca cp.async.cg cp.async.bulk.tensor atom.global red.global atom.shared red.shared
    bar.sync barrier.sync bar.arrive fence membar mbarrier cp.async.commit_group cp.async.wait_group
    cp.async.bulk.commit_group cp.async.bulk.wait_group shfl.sync mov prmt
    ex2.approx lg2.approx rcp.approx rsqrt.approx sqrt.approx sin.approx cos.approx tanh.approx cvt""".split()}


def lookup_opcode(opcode: str) -> OpInfo:
    return OPCODES.get(opcode, OTHER)


def lookup_intrinsic(name: str) -> tuple[str, OpInfo]:
    """(matched key, info) for an intrinsic name such as `llvm.vector.reduce.fadd.v16f32`."""
    return longest_prefix(INTRINSICS, name)


def lookup_inline_asm(mnemonic: str) -> tuple[str, OpInfo]:
    """(matched key, info) for an inline-asm instruction such as `ld.global.v4.b32`; floating point
    when its type says so (`ex2.approx.f32`), as in PTX."""
    key, info = longest_prefix(INLINE_ASM, mnemonic)
    if info is not OTHER and not info.fp and nvidia.ptx_info(mnemonic)[1].fp:
        info = replace(info, fp=True)
    return key, info

# What a pointer's address space means on each GPU target (the NVPTX and AMDGPU backend docs).
# CPU targets use address space 0 for everything: no entry, Space.NONE.
ADDRESS_SPACES: dict[str, dict[int, Space]] = {
    "nvptx": {1: Space.GLOBAL, 3: Space.SHARED, 4: Space.CONSTANT, 5: Space.LOCAL,
              7: Space.SHARED},                       # 7: shared::cluster
    "amdgcn": {1: Space.GLOBAL, 3: Space.SHARED, 4: Space.CONSTANT, 5: Space.LOCAL,
               7: Space.GLOBAL, 8: Space.GLOBAL},     # 7/8: buffer fat pointer / resource
}


register(Isa(name="llvm", title="LLVM IR", parser="kinspect.ir.llvm", lexer="kinspect.render.lexers:LlvmIrLexer",
             extensions=(".ll", ".llir", ".ir"), diff_rank=70))
