"""x86-64 opcode table, AT&T mnemonics as LLVM prints them: GPR, SSE, AVX/AVX2, FMA, AVX-512,
VNNI, AMX, and a little x87.

Check it against the Intel 64 and IA-32 Architectures Software Developer's Manual, Volume 2
(instruction set reference) and the AMX chapter of the ISA extensions reference. AT&T spelling:
integer instructions carry a size suffix (`movl`, `addq`, `imull`, `cmovll`), which `classify`
strips for the GPR families listed in GPR; sign/zero extensions are `movslq`, `movzbl`, ...

What the table does not decide (the parser does, from operands): the unit ("sse", "avx",
"avx512": encoding shows in the registers and `{k}` decorations), the width (widest xmm/ymm/zmm
register named), LOAD/STORE for MOVE-family instructions with a memory operand, and the Space.

Decisions worth knowing:
- FP ops come in packed (`...ps/...pd/...ph`, vector=True) and scalar (`...ss/...sd/...sh`,
  vector=False) forms; the suffix also gives the element bits.
- `hadd/hsub/phadd/dpps` are REDUCE (horizontal); `vpdpbusd` and friends (VNNI) are FMA.
- `vrcp*`, `vrsqrt*`, `vexp2*` estimates are SPECIAL.
- Sign/zero extensions (`movslq`, `cltq`, `vpmovzxwd`) and packs are CONVERT.
- `vzeroupper`, `ldmxcsr`, AMX `ldtilecfg` are CONFIG; `lea` and `nop` never touch memory.
- `nop` (any size suffix) is NOP; prefetches, `cpuid` and `rdtsc` count as OTHER.
"""

from __future__ import annotations

import re

from kinspect.isa import Isa, register
from kinspect.isa.ops import Access, Kind, Match, OpInfo, Space, Table, merge, stated


def _op(kind: Kind, **kw) -> OpInfo:
    return OpInfo(kind, **kw)

ARITH, MOVE, CONVERT = _op(Kind.ARITH), _op(Kind.MOVE), _op(Kind.CONVERT)
CONTROL, CONFIG, SYNC = _op(Kind.CONTROL), _op(Kind.CONFIG), _op(Kind.SYNC)
ATOMIC = _op(Kind.ATOMIC, space=Space.GLOBAL)
PUSH = _op(Kind.STORE, space=Space.STACK)
POP = _op(Kind.LOAD, space=Space.STACK)
S_ARITH, S_FMA = _op(Kind.ARITH, fp=True), _op(Kind.FMA, fp=True)
S_MOVE, S_CONVERT, S_SPECIAL = _op(Kind.MOVE, fp=True), _op(Kind.CONVERT, fp=True), _op(Kind.SPECIAL, fp=True)
V_ARITH, V_FMA = _op(Kind.ARITH, vector=True, fp=True), _op(Kind.FMA, vector=True, fp=True)
V_MOVE, V_CONVERT = _op(Kind.MOVE, vector=True, fp=True), _op(Kind.CONVERT, vector=True, fp=True)
V_SPECIAL = _op(Kind.SPECIAL, vector=True, fp=True)
V_REDUCE = _op(Kind.REDUCE, vector=True, fp=True, ordered=False)
VI_ARITH, VI_FMA = _op(Kind.ARITH, vector=True), _op(Kind.FMA, vector=True)
VI_MOVE, VI_CONVERT = _op(Kind.MOVE, vector=True), _op(Kind.CONVERT, vector=True)
VI_REDUCE = _op(Kind.REDUCE, vector=True, ordered=False)
V_LOAD_UNIT = _op(Kind.LOAD, vector=True, space=Space.GLOBAL, access=Access.UNIT)
V_GATHER = _op(Kind.LOAD, vector=True, space=Space.GLOBAL, access=Access.INDEXED)
V_SCATTER = _op(Kind.STORE, vector=True, space=Space.GLOBAL, access=Access.INDEXED)
MASK_ARITH, MASK_MOVE = _op(Kind.ARITH, unit="avx512"), _op(Kind.MOVE, unit="avx512")
AMX_MATRIX = _op(Kind.MATRIX, vector=True, unit="amx")
X87_LOAD = _op(Kind.LOAD, fp=True, space=Space.GLOBAL, unit="x87")
X87_STORE = _op(Kind.STORE, fp=True, space=Space.GLOBAL, unit="x87")
X87_ARITH, X87_MOVE = _op(Kind.ARITH, fp=True, unit="x87"), _op(Kind.MOVE, fp=True, unit="x87")

# Integer (GPR) instructions that take an AT&T size suffix b/w/l/q: base -> OpInfo.
GPR: dict[str, OpInfo] = merge(
    {op: ARITH for op in (
      "add adc sub sbb and or xor not neg inc dec cmp test imul mul idiv div shl shr sar sal "
      "rol ror rcl rcr shld shrd bt bts btr btc bsf bsr tzcnt lzcnt popcnt andn bextr blsi "
      "blsr blsmsk bzhi sarx shlx shrx rorx pdep pext mulx adcx adox bswap lea").split()},
    {op: MOVE for op in "mov movabs xchg".split()},
    {op: ATOMIC for op in "cmpxchg xadd".split()},
    {"push": PUSH, "pop": POP},
    {op: CONTROL for op in "call ret jmp".split()},
    {"nop": _op(Kind.NOP)},
    where=__name__,
)
_SUFFIX_BITS = {"b": 8, "w": 16, "l": 32, "q": 64}

# Exact mnemonics: -> (OpInfo, element bits).
EXACT: dict[str, tuple[OpInfo, int | None]] = merge(
    {op: (CONVERT, None) for op in "cltq cqto cltd cwtl cbtw cwtd movsx movzx movsxd".split()},
    {f"mov{sz}{a}{b}": (CONVERT, _SUFFIX_BITS[b]) for sz in "sz" for a, b in
     (("b", "w"), ("b", "l"), ("b", "q"), ("w", "l"), ("w", "q"))},
    {"movslq": (CONVERT, 64)},
    {"leave": (MOVE, None), "enter": (MOVE, None)},
    {op: (CONTROL, None) for op in "ud2 hlt int3 syscall".split()},
    {op: (SYNC, None) for op in "mfence lfence sfence pause".split()},
    {op: (CONFIG, None) for op in "vzeroupper vzeroall emms ldmxcsr stmxcsr vldmxcsr vstmxcsr".split()},
    {op: (MOVE, b) for op, b in (("movd", 32), ("vmovd", 32), ("vmovq", 64))},
    {op: (V_MOVE, b) for op, b in (("vbroadcastss", 32), ("vbroadcastsd", 64))},
    {op: (VI_MOVE, None) for op in (
      "vbroadcastf128 vbroadcasti128 vbroadcastf32x2 vbroadcastf32x4 vbroadcastf32x8 "
      "vbroadcastf64x2 vbroadcastf64x4 vbroadcasti32x2 vbroadcasti32x4 vbroadcasti32x8 "
      "vbroadcasti64x2 vbroadcasti64x4 vperm2f128 vperm2i128 palignr vpalignr valignd valignq "
      "pslldq vpslldq psrldq vpsrldq").split()},
    {op: (V_MOVE, 32) for op in "movlhps vmovlhps movhlps vmovhlps".split()},
    {op: (V_MOVE, b) for op, b in (("movshdup", 32), ("vmovshdup", 32), ("movsldup", 32),
                                   ("vmovsldup", 32), ("movddup", 64), ("vmovddup", 64))},
    {op: (V_LOAD_UNIT, None) for op in "lddqu vlddqu movntdqa vmovntdqa".split()},
    {op: (VI_ARITH, 64) for op in "pmuludq vpmuludq pmuldq vpmuldq".split()},
    {op: (VI_ARITH, None) for op in "ptest vptest psadbw vpsadbw pmaddwd vpmaddwd pmaddubsw "
                                    "vpmaddubsw vpternlogd vpternlogq vdbpsadbw".split()},
    # AVX-VNNI / AVX512-VNNI / AVX-VNNI-INT8/16: dot product accumulated into 32-bit lanes
    {op: (VI_FMA, 32) for op in (
      "vpdpbusd vpdpbusds vpdpwssd vpdpwssds vpdpbssd vpdpbssds vpdpbsud vpdpbsuds vpdpbuud "
      "vpdpbuuds vpdpwsud vpdpwsuds vpdpwusd vpdpwusds vpdpwuud vpdpwuuds").split()},
    # AMX: tile matrix multiply, tile loads/stores (TENSOR space: tiles), configuration
    {op: (AMX_MATRIX, None) for op in (
      "tdpbf16ps tdpfp16ps tdpbssd tdpbsud tdpbusd tdpbuud tcmmimfp16ps tcmmrlfp16ps").split()},
    {"tileloadd": (_op(Kind.LOAD, vector=True, space=Space.TENSOR, unit="amx"), None)},
    {"tileloaddt1": (_op(Kind.LOAD, vector=True, space=Space.TENSOR, unit="amx"), None)},
    {"tilestored": (_op(Kind.STORE, vector=True, space=Space.TENSOR, unit="amx"), None)},
    {"tilezero": (_op(Kind.MOVE, vector=True, unit="amx"), None)},
    {op: (_op(Kind.CONFIG, unit="amx"), None) for op in "ldtilecfg sttilecfg tilerelease".split()},
    where=__name__,
)

_P = r"(?P<e>ps|pd|ph)"          # packed FP
_S = r"(?P<e>ss|sd|sh)"          # scalar FP
_I = r"(?P<e>b|w|d|q)"           # integer element
_CC = r"(?:n?[abgl]e?|n?[cosz]|n?p|p[eo]|n?e)"
_FP_OPS = (r"add|sub|mul|div|min|max|sqrt|addsub|round|rndscale|scalef|getexp|getmant|range"
           r"|reduce|fixupimm|and|andn|or|xor|cmp[a-z_]*|fpclass")
_FP_MOVES = (r"(?:mova|movu|movnt|movh|movl|movmsk|shuf|unpckl|unpckh|blend|blendv|perm|permil"
             r"|permi2|permt2|expand|compress|maskmov)")
_INT_OPS = (r"(?:add|sub|adds|subs|addus|subus|mins|minu|maxs|maxu|abs|avg|sign|cmpeq|cmpgt|cmp"
            r"|cmpu|mull|mulh|mulhu|mulhrs|sll|srl|sra|sllv|srlv|srav|rol|ror|rolv|rorv|lzcnt"
            r"|popcnt|conflict|and|andn|or|xor|test|testn)")

# Ordered (pattern, OpInfo) rules for the regular families; group `e` gives the element bits.
RULES: tuple[tuple[re.Pattern, OpInfo], ...] = (
    (re.compile(rf"^vf(?:n?m(?:add|sub)|maddsub|msubadd)(?:132|213|231)?{_P}$"), V_FMA),
    (re.compile(rf"^vf(?:n?m(?:add|sub))(?:132|213|231)?{_S}$"), S_FMA),
    (re.compile(rf"^v?(?:hadd|hsub|dp){_P}$"), V_REDUCE),
    (re.compile(rf"^v?(?:rcp|rsqrt|rcp14|rsqrt14|rcp28|rsqrt28|exp2){_P}$"), V_SPECIAL),
    (re.compile(rf"^v?(?:rcp|rsqrt|rcp14|rsqrt14|rcp28|rsqrt28){_S}$"), S_SPECIAL),
    (re.compile(rf"^v?(?:{_FP_OPS}){_P}$"), V_ARITH),
    (re.compile(rf"^v?(?:{_FP_OPS}|comi|ucomi){_S}$"), S_ARITH),
    (re.compile(rf"^v?mov{_S}$"), S_MOVE),
    (re.compile(rf"^v?{_FP_MOVES}{_P}$"), V_MOVE),
    (re.compile(r"^v?(?:insert|extract)(?P<e>ps)$"), V_MOVE),
    (re.compile(r"^v(?:insert|extract)[fi](?:128|32x4|32x8|64x2|64x4)$"), VI_MOVE),
    (re.compile(r"^v?cvtt?(?:ss|sd|sh|u?si)2u?(?:ss|sd|sh|si)(?:l|q|64)?$"), S_CONVERT),
    (re.compile(r"^v?cvt[a-z0-9]*2[a-z0-9]*$"), V_CONVERT),
    (re.compile(r"^v?ph(?:add|sub)(?:s?w|d)$"), VI_REDUCE),
    (re.compile(rf"^v?p{_INT_OPS}{_I}$"), VI_ARITH),
    (re.compile(r"^v?p(?:and|andn|or|xor)(?P<e>d|q)?$"), VI_ARITH),
    (re.compile(r"^v?p(?:unpckl|unpckh)(?:bw|wd|dq|qdq)$"), VI_MOVE),
    (re.compile(r"^v?pshuf(?:b|d|hw|lw)$"), VI_MOVE),
    (re.compile(r"^v?pblend(?:w|vb|d|mb|mw|md|mq)$"), VI_MOVE),
    (re.compile(rf"^vperm(?:i2|t2)?{_I}$"), VI_MOVE),
    (re.compile(rf"^vp(?:broadcast|expand|compress|movm2){_I}$"), VI_MOVE),
    (re.compile(rf"^vpmov{_I}2m$"), VI_MOVE),
    (re.compile(rf"^v?p(?:insr|extr){_I}$"), VI_MOVE),
    (re.compile(r"^v?pmovmskb$"), VI_MOVE),
    (re.compile(r"^v?movdq[au](?:8|16|32|64)?$|^v?movntdq$"), VI_MOVE),
    (re.compile(r"^v?maskmovdqu$|^vpmaskmov[dq]$"), VI_MOVE),
    (re.compile(r"^v?pmov[sz]x(?:bw|bd|bq|wd|wq|dq)$|^vpmov(?:s|us)?(?:qb|qw|qd|db|dw|wb)$"), VI_CONVERT),
    (re.compile(r"^v?pack[su]s(?:wb|dw)$"), VI_CONVERT),
    (re.compile(r"^vp?gather[dq](?P<e>d|q|ps|pd)$"), V_GATHER),
    (re.compile(r"^vp?scatter[dq](?P<e>d|q|ps|pd)$"), V_SCATTER),
    (re.compile(r"^k(?:and|andn|or|xor|xnor|not|ortest|test|shiftl|shiftr|add|unpck)"
                r"(?:b|w|d|q|bw|wd|dq)$"), MASK_ARITH),
    (re.compile(r"^kmov[bwdq]$"), MASK_MOVE),
    (re.compile(rf"^j(?:{_CC}|e?cxz|rcxz)$"), CONTROL),
    (re.compile(rf"^set{_CC}b?$"), ARITH),
    (re.compile(rf"^cmov{_CC}[wlq]?$"), MOVE),
    (re.compile(r"^f(?:ld|ild)(?:s|l|t|ll)?$|^fld[z1]$"), X87_LOAD),
    (re.compile(r"^f(?:st|stp|ist|istp|isttp)(?:s|l|t|ll)?$"), X87_STORE),
    (re.compile(r"^f(?:add|sub|subr|mul|div|divr)(?:p|s|l)?$|^f(?:chs|abs|sqrt|u?comip?)$"), X87_ARITH),
    (re.compile(r"^fxch$"), X87_MOVE),
)

# Instructions whose memory-syntax operand is an address, not an access (lea, nop); and
# mnemonics that exist only EVEX-encoded (AVX-512) even on xmm/ymm registers.

# leaq
ADDRESS_ONLY_RE = re.compile(r"^(?:lea|nop)[wlq]?$")
# vextractf32x4
EVEX_ONLY_RE = re.compile(r"(?:32x[248]|64x[24])$|^vperm[it]2|^vpternlog|^vmovdq[au](?:8|16|32|64)$"
                          r"|^vp?compress|^vp?expand|^vpmovm2|^vpmov[bwdq]2m$|^vp?scatter|^vrcp14"
                          r"|^vrsqrt14|^vscalef|^vgetexp|^vgetmant|^vrndscale|^vfixupimm|^vrange"
                          r"|^vreduce|^vfpclass|^vpconflict|^vplzcnt|^valign[dq]$|^k")

_E_BITS = {"b": 8, "w": 16, "d": 32, "q": 64, "ps": 32, "pd": 64, "ph": 16, "ss": 32, "sd": 64, "sh": 16}


# The GPR instructions with their AT&T size suffix (`addl`, `movq`): the suffix states the bits.
SUFFIXED: dict[str, tuple[OpInfo, int]] = {op + suffix: (info, bits) for op, info in GPR.items()
                                           for suffix, bits in _SUFFIX_BITS.items()}

TABLE = Table(__name__, merge(EXACT, stated(GPR), SUFFIXED, where=__name__), rules=RULES, group_bits=_E_BITS)


def classify(op: str) -> Match:
    """OpInfo and stated element bits for a lower-case AT&T mnemonic; OTHER when unknown."""
    return TABLE.classify(op)


def lookup(op: str) -> OpInfo:
    return classify(op.lower()).info


register(Isa(
    name="x86", title="x86-64", parser="kinspect.ir.x86", lexer="pygments.lexers:GasLexer", machine=True, rank=30,
    diff_rank=40, arches=("x86_64", "x86-64", "amd64"), triples=("x86_64", "i686", "i386"),
    # "vmovups (%rdi), %zmm0"
    telltale=re.compile(r"%(?:[re]?[a-d]x|[re]?[sd]i|[re]?[sb]p|r\d+[dwb]?|[xyz]mm\d+|rip)\b"),
    elf_machine=0x3E, vector_name="SIMD (SSE/AVX/AVX-512)", fma_names="vfmadd*ps"))
