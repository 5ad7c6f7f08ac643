"""AMDGCN opcode table (CDNA/RDNA: gfx9, gfx90a, gfx942, gfx11, gfx12).

Data a reader can check against AMD's ISA manuals: EXACT maps single opcodes, FAMILIES maps
prefixes (`v_mfma_`) in order, first match wins, so a narrower prefix comes before a wider one
(`s_and_saveexec` before `s_and`, `v_mad_f` before `v_mad`). Unknown opcodes are records.OTHER.

Keys are mnemonics without their encoding suffix (`v_max_f32` for `v_max_f32_e32`,
`v_add_f32_dpp`); `op_name(mnemonic)` strips it. One rule is not a table entry: an op whose
name carries a float type (`_f16`, `_f32`, `_f64`, `_bf16`, ...) is `fp`.

Units: mfma (CDNA matrix cores: v_mfma_*, v_smfmac_*), wmma (RDNA: v_wmma_*, v_swmmac_*), nop.
Per-lane VALU ops are not `vector` (like a CUDA thread's scalar); packed v_pk_* ops are.
Spaces: global_/buffer_ = GLOBAL, ds_ = SHARED (LDS), scratch_ = LOCAL (spills), flat_ = NONE
(generic address), s_load = CONSTANT (scalar-cache loads of kernel arguments and uniform data).
"""

from __future__ import annotations

from dataclasses import replace

from kinspect.isa import Isa, register
from kinspect.isa.ops import OTHER, Kind, OpInfo, Space, Table, grouped, stated

# gfx9 and gfx11 names the same register encodings differently; all are one op each
ENCODING_SUFFIXES = ("_e32", "_e64", "_dpp", "_dpp8", "_sdwa", "_vop3")

FLOAT_TYPES = frozenset({"f16", "f32", "f64", "bf16", "xf32", "f8", "bf8", "fp8", "fp4", "fp6"})

# memory-op name token -> bits moved per lane (global_load_dwordx4 -> 128, ds_read_u8 -> 8)
WIDTH_TOKENS: dict[str, int] = {
    "dword": 32, "dwordx2": 64, "dwordx3": 96, "dwordx4": 128, "dwordx8": 256, "dwordx16": 512,
    "b32": 32, "b64": 64, "b96": 96, "b128": 128,
    "ubyte": 8, "sbyte": 8, "byte": 8, "u8": 8, "i8": 8,
    "ushort": 16, "sshort": 16, "short": 16, "u16": 16, "i16": 16,
}

# LDS ops that move two elements (ds_read2_b64 = 2 x 64 bits)
PAIRED_TOKENS = frozenset({"read2", "write2", "read2st64", "write2st64", "2addr"})


_PACKED = dict(vector=True)

EXACT: dict[str, OpInfo] = grouped(
    (OpInfo(Kind.NOP), "s_nop v_nop"),
    (OpInfo(Kind.CONTROL), "s_endpgm s_branch s_trap s_rfe_b64 s_setpc_b64 s_swappc_b64 "
                           "s_call_b64"),
    (OpInfo(Kind.SYNC), "s_barrier s_sleep s_dcache_inv s_dcache_wb s_icache_inv buffer_wbinvl1 "
                        "buffer_wbinvl1_vol buffer_inv buffer_wbl2 buffer_gl0_inv "
                        "buffer_gl1_inv global_inv global_wb global_wbinv"),
    (OpInfo(Kind.MOVE), "s_getpc_b64"),
    where=__name__,
)

FAMILIES: tuple[tuple[str, OpInfo], ...] = tuple(grouped(
    # matrix cores
    (OpInfo(Kind.MATRIX, unit="mfma"), "v_mfma_ v_smfmac_"),
    (OpInfo(Kind.MATRIX, unit="wmma"), "v_wmma_ v_swmmac_"),
    # multiply-add: float ones are FMA; integer v_mad_u64_u32 (address math) is ARITH
    (OpInfo(Kind.FMA), "v_fma v_mac_ v_mad_f v_mad_legacy v_mad_mix "
                       "v_madak v_madmk v_div_fmas v_dot"),
    (OpInfo(Kind.FMA, **_PACKED), "v_pk_fma"),
    (OpInfo(Kind.ARITH), "v_mad"),
    # transcendental unit
    (OpInfo(Kind.SPECIAL), "v_exp v_log v_rcp v_rsq v_sqrt v_sin v_cos"),
    # memory (widths from WIDTH_TOKENS)
    (OpInfo(Kind.LOAD, space=Space.GLOBAL), "global_load buffer_load"),
    (OpInfo(Kind.STORE, space=Space.GLOBAL), "global_store buffer_store s_store s_buffer_store"),
    (OpInfo(Kind.ATOMIC, space=Space.GLOBAL), "global_atomic buffer_atomic"),
    (OpInfo(Kind.LOAD, space=Space.LOCAL), "scratch_load"),
    (OpInfo(Kind.STORE, space=Space.LOCAL), "scratch_store"),
    (OpInfo(Kind.LOAD), "flat_load"),
    (OpInfo(Kind.STORE), "flat_store"),
    (OpInfo(Kind.ATOMIC), "flat_atomic"),
    (OpInfo(Kind.LOAD, space=Space.CONSTANT), "s_load s_buffer_load"),
    # ds_*permute / ds_swizzle use the LDS crossbar but touch no LDS memory: cross-lane moves
    (OpInfo(Kind.MOVE), "ds_bpermute ds_permute ds_swizzle"),
    (OpInfo(Kind.LOAD, space=Space.SHARED), "ds_read ds_load"),
    (OpInfo(Kind.STORE, space=Space.SHARED), "ds_write ds_store"),
    (OpInfo(Kind.ATOMIC, space=Space.SHARED), "ds_add_ ds_sub_ ds_rsub_ ds_inc_ ds_dec_ "
                                              "ds_min_ ds_max_ ds_and_ ds_or_ ds_xor_ ds_mskor_ "
                                              "ds_cmpst_ ds_cmpstore_ ds_wrxchg ds_pk_add_"),
    # conversions and moves
    (OpInfo(Kind.CONVERT), "v_cvt v_sat_pk s_cvt"),
    (OpInfo(Kind.MOVE), "v_mov v_accvgpr v_readfirstlane v_readlane v_writelane v_perm "
                        "v_swap v_pack s_mov s_cmov s_pack"),
    (OpInfo(Kind.MOVE, **_PACKED), "v_pk_mov"),
    # control: branches, and exec-mask writes that switch lanes off (divergence)
    (OpInfo(Kind.CONTROL), "s_cbranch s_and_saveexec s_or_saveexec s_xor_saveexec "
                           "s_andn1_saveexec s_andn2_saveexec s_orn1_saveexec s_orn2_saveexec "
                           "s_nand_saveexec s_nor_saveexec s_xnor_saveexec s_and_not0_saveexec "
                           "s_and_not1_saveexec s_or_not0_saveexec s_or_not1_saveexec"),
    # waits and barriers (s_waitcnt on gfx9, s_wait_loadcnt & co on gfx12)
    (OpInfo(Kind.SYNC), "s_waitcnt s_wait_ s_barrier_"),
    (OpInfo(Kind.CONFIG), "s_setprio s_setreg s_getreg s_set_gpr_idx s_denorm_mode "
                          "s_round_mode"),
    # arithmetic, logic, compare, select
    (OpInfo(Kind.ARITH, **_PACKED), "v_pk_add v_pk_sub v_pk_mul v_pk_max v_pk_min v_pk_mad "
                                    "v_pk_lshl v_pk_lshr v_pk_ashr"),
    (OpInfo(Kind.ARITH), "v_add v_sub v_mul v_max v_min v_med3 v_cmp v_cndmask v_and v_or v_xor "
                         "v_not v_lshl v_lshr v_ashr v_bfe v_bfi v_bfm v_bfrev v_ffbh v_ffbl "
                         "v_bcnt v_mbcnt v_xad v_sad v_msad v_ldexp v_frexp v_fract v_trunc "
                         "v_ceil v_floor v_rndne v_div_scale v_div_fixup v_alignbit "
                         "v_alignbyte v_cubeid v_cubesc v_cubetc v_cubema"),
    (OpInfo(Kind.ARITH), "s_add s_sub s_mul s_and s_or s_xor s_nand s_nor s_xnor "
                         "s_not s_lshl s_lshr s_ashr s_bfe s_bfm s_abs s_min s_max s_cmp "
                         "s_cselect s_bitcmp s_bitset s_ff0 s_ff1 s_flbit s_bcnt s_brev s_sext "
                         "s_quadmask s_wqm"),
    where=__name__,
).items())
TABLE = Table(__name__, stated(EXACT), prefixes=FAMILIES)


def op_name(mnemonic: str) -> str:
    """The table key of a mnemonic: `v_max_f32_e32` -> `v_max_f32`."""
    stripped = True
    while stripped:
        stripped = False
        for suffix in ENCODING_SUFFIXES:
            if mnemonic.endswith(suffix):
                mnemonic, stripped = mnemonic[: -len(suffix)], True
    return mnemonic


def lookup(op: str) -> OpInfo:
    """OpInfo for an AMDGCN op (see op_name), records.OTHER when neither table knows it."""
    info = TABLE.lookup(op)
    if info is not OTHER and not info.fp and not FLOAT_TYPES.isdisjoint(op.split("_")):
        info = replace(info, fp=True)
    return info


def memory_width(op: str) -> tuple[int | None, int | None, int | None]:
    """(width, elem_bits, lanes) a memory op's name states: global_load_dwordx4 -> (128, 32, 4)."""
    tokens = op.split("_")
    bits = next((WIDTH_TOKENS[t] for t in reversed(tokens) if t in WIDTH_TOKENS), None)
    if bits is None:
        return None, None, None
    if not PAIRED_TOKENS.isdisjoint(tokens):
        return 2 * bits, bits, 2
    if bits > 32:    # dwordx4, b128: that many 32-bit registers
        return bits, 32, bits // 32
    return bits, bits, None


register(Isa(name="amdgcn", title="AMDGCN", parser="kinspect.ir.amdgcn", lexer="kinspect.render.lexers:AmdgcnLexer",
             extensions=(".amdgcn",), machine=True, rank=20, diff_rank=20, comment=";"))
