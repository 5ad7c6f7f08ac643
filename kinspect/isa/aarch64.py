"""AArch64 opcode table: A64 base, FP, Advanced SIMD (NEON), SVE/SVE2 and SME.

Check it against the Arm Architecture Reference Manual for A-profile (A64 instruction set:
base, SIMD&FP, SVE, SME chapters). Mnemonics are looked up as LLVM prints them, without the
arrangement suffix Apple's assembler syntax puts on the mnemonic (`add.16b` is looked up as
`add`; the parser splits it off).

On AArch64 the mnemonic alone rarely says vector or scalar: `fadd` is scalar on `s0` and NEON
on `v0.4s`, SVE on `z0.s`. So the table gives the base kind (and fp for FP mnemonics) and the
parser decides vector, unit, width and element bits from the register operands.

Decisions worth knowing:
- Reductions: NEON `addv/faddp/fmaxv/...` and SVE `faddv/fmaxv/uaddv/...` are tree reductions
  (ordered=False); SVE `fadda` is the strictly-ordered one (ordered=True).
- SME outer products (`fmopa`, `smopa`, ...) and the i8mm/f32mm `*mmla` are MATRIX; dot products
  (`sdot`, `udot`, `bfdot`, `fdot`) and multiply-accumulates are FMA.
- Exclusive and LSE atomics are ATOMIC; acquire/release loads and stores are LOAD/STORE.
- SVE predicate setup (`ptrue`, `whilelo`) and vector-length reads (`cntw`, `rdvl`) are CONFIG,
  like RVV's vsetvli; `smstart/smstop` too.
- Sign/zero extensions (`sxtw`, `uxtl`, `sshll`) and narrowing (`xtn`) are CONVERT.
- `nop` is NOP; prefetches (`prfm`) and other hints count as OTHER.
"""

from __future__ import annotations

import re

from kinspect.isa import Isa, register
from kinspect.isa.ops import Kind, Match, OpInfo, Space, Table, merge


def _op(kind: Kind, **kw) -> OpInfo:
    return OpInfo(kind, **kw)

LOAD, STORE = _op(Kind.LOAD, space=Space.GLOBAL), _op(Kind.STORE, space=Space.GLOBAL)
ATOMIC = _op(Kind.ATOMIC, space=Space.GLOBAL)
ARITH, FMA, MOVE, CONVERT = _op(Kind.ARITH), _op(Kind.FMA), _op(Kind.MOVE), _op(Kind.CONVERT)
REDUCE = _op(Kind.REDUCE, ordered=False)
CONTROL, CONFIG, SYNC = _op(Kind.CONTROL), _op(Kind.CONFIG), _op(Kind.SYNC)
MATRIX = _op(Kind.MATRIX)
F_ARITH, F_FMA, F_MOVE = _op(Kind.ARITH, fp=True), _op(Kind.FMA, fp=True), _op(Kind.MOVE, fp=True)
F_CONVERT, F_SPECIAL = _op(Kind.CONVERT, fp=True), _op(Kind.SPECIAL, fp=True)
F_REDUCE = _op(Kind.REDUCE, fp=True, ordered=False)
F_REDUCE_ORDERED = _op(Kind.REDUCE, fp=True, ordered=True)
F_MATRIX = _op(Kind.MATRIX, fp=True)
SME_MATRIX = _op(Kind.MATRIX, vector=True, unit="sme")
SME_F_MATRIX = _op(Kind.MATRIX, vector=True, fp=True, unit="sme")
SME_CONFIG = _op(Kind.CONFIG, unit="sme")


def _all(info: OpInfo, names: str) -> dict[str, tuple[OpInfo, int | None]]:
    return {name: (info, None) for name in names.split()}


# Exact mnemonics -> (OpInfo, element bits stated by the mnemonic).
EXACT: dict[str, tuple[OpInfo, int | None]] = merge(
    _all(LOAD, "ldr ldur ldp ldnp ld1 ld2 ld3 ld4 ld1r ld2r ld3r ld4r ldar ldapr ldapur ldtr"),
    {op: (LOAD, b) for op, b in (("ldrb", 8), ("ldrh", 16), ("ldrsb", 8), ("ldrsh", 16),
                                 ("ldrsw", 32), ("ldurb", 8), ("ldurh", 16), ("ldursb", 8),
                                 ("ldursh", 16), ("ldursw", 32), ("ldpsw", 32), ("ldarb", 8),
                                 ("ldarh", 16), ("ldaprb", 8), ("ldaprh", 16))},
    _all(STORE, "str stur stp stnp st1 st2 st3 st4 stlr stlur sttr"),
    {op: (STORE, b) for op, b in (("strb", 8), ("strh", 16), ("sturb", 8), ("sturh", 16),
                                  ("stlrb", 8), ("stlrh", 16))},
    _all(ARITH, (
      "add adds sub subs adc adcs sbc sbcs neg negs ngc ngcs mul mneg smulh umulh smull umull "
      "smull2 umull2 sdiv udiv and ands orr orn eor eon bic bics mvn not lsl lsr asr ror lslv "
      "lsrv asrv rorv cmp cmn tst ccmp ccmn cset csetm cinc cinv cneg csinc csinv csneg clz cls "
      "cnt rbit rev rev16 rev32 rev64 bfi bfxil bfm sbfm ubfm sbfx ubfx sbfiz ubfiz extr abs "
      "smax smin umax umin sqadd uqadd sqsub uqsub suqadd usqadd shl sshl ushl sshr ushr srshr "
      "urshr ssra usra srsra ursra shrn shrn2 rshrn rshrn2 sqshrn uqshrn sqrshrn uqrshrn sli sri "
      "cmeq cmge cmgt cmhi cmhs cmle cmlt cmtst bsl bit bif saddl saddl2 uaddl uaddl2 ssubl "
      "ssubl2 usubl usubl2 saddw saddw2 uaddw uaddw2 ssubw usubw sabd uabd saba uaba sabdl uabdl "
      "addhn addhn2 raddhn subhn pmul pmull pmull2 sqdmulh sqrdmulh urhadd srhadd uhadd shadd "
      "uhsub shsub sqneg sqabs urecpe ursqrte "
      # SVE / SVE2
      "asrd addvl addpl incb inch incw incd decb dech decw decd incp decp cntp ptest brka brkb "
      "brkn brkpa brkpb pnext pfirst cmpeq cmpne cmpgt cmpge cmplt cmple cmphi cmphs cmplo cmpls "
      "nand nor orns ands bics eors")),
    _all(FMA, "madd msub smaddl umaddl smsubl umsubl mla mls mad msb smlal smlal2 umlal umlal2 "
              "smlsl smlsl2 umlsl umlsl2 sqdmlal sqdmlsl sdot udot usdot sudot"),
    _all(MATRIX, "smmla ummla usmmla"),                        # i8mm: 2x8 by 8x2 into 2x2
    _all(F_MATRIX, "bfmmla fmmla"),
    _all(MOVE, "mov movz movn movk movi mvni dup ins umov smov ext zip1 zip2 uzp1 uzp2 trn1 "
               "trn2 tbl tbx adr adrp csel sel movprfx compact splice insr lasta lastb clasta "
               "clastb index"),
    _all(CONVERT, "sxtb sxth sxtw uxtb uxth uxtw sxtl sxtl2 uxtl uxtl2 sshll sshll2 ushll "
                  "ushll2 xtn xtn2 sqxtn sqxtn2 uqxtn uqxtn2 sqxtun sqxtun2 sunpklo sunpkhi "
                  "uunpklo uunpkhi"),
    _all(REDUCE, "addv saddlv uaddlv smaxv sminv umaxv uminv addp smaxp sminp umaxp uminp "
                 "saddv uaddv andv orv eorv"),
    _all(F_ARITH, "fadd fsub fmul fdiv fabs fneg fsqrt fmin fmax fminnm fmaxnm fabd fcmp fcmpe "
                  "fccmp fccmpe fcmeq fcmge fcmgt fcmle fcmlt facge facgt facle faclt fmulx "
                  "frecps frsqrts frinta frinti frintm frintn frintp frintx frintz fnmul "
                  "fscale ftsmul ftssel fcmne fcmuo fsubr fdivr fmaxnmp fminnmp"),
    _all(F_FMA, "fmla fmls fmadd fmsub fnmadd fnmsub fmad fmsb fnmad fnmsb fnmla fnmls fmlal "
                "fmlal2 fmlsl fmlsl2 bfmlalb bfmlalt bfdot fdot"),
    _all(F_SPECIAL, "frecpe frsqrte frecpx fexpa"),
    _all(F_MOVE, "fmov fcsel fdup fcpy"),
    _all(F_CONVERT, "fcvt fcvtzs fcvtzu fcvtas fcvtau fcvtms fcvtmu fcvtns fcvtnu fcvtps "
                    "fcvtpu fcvtn fcvtn2 fcvtl fcvtl2 fcvtxn fcvtxn2 scvtf ucvtf bfcvt bfcvtn "
                    "bfcvtn2 fjcvtzs fcvtlt fcvtnt"),
    _all(F_REDUCE, "faddp fmaxp fminp faddv fmaxv fminv fmaxnmv fminnmv"),
    {"fadda": (F_REDUCE_ORDERED, None)},  # SVE: strictly ordered
    _all(CONTROL, "b bl br blr ret cbz cbnz tbz tbnz eret brk hlt udf svc braa brab blraa "
                  "blrab retaa retab"),
    _all(SYNC, "dmb dsb isb sb"),
    _all(_op(Kind.NOP), "nop"),
    _all(CONFIG, "msr mrs ptrue ptrues pfalse whilelo whilelt whilele whilels whilehi whilehs "
                 "whilegt whilege setffr rdffr wrffr cntb cnth cntw cntd rdvl"),
    # SME: outer products into ZA tiles; streaming mode; ZA moves
    _all(SME_MATRIX, "smopa smops umopa umops sumopa sumops usmopa usmops bmopa bmops"),
    _all(SME_F_MATRIX, "fmopa fmops bfmopa bfmops"),
    _all(SME_CONFIG, "smstart smstop"),
    {"mova": (_op(Kind.MOVE, vector=True, unit="sme"), None)},
    {"zero": (_op(Kind.MOVE, vector=True, unit="sme"), None)},
    where=__name__,
)

_CC = "eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al|nv"
# SVE contiguous/first-fault/non-fault/non-temporal/replicating loads: ld1w ldff1b ld1rqd ld1sw
_SVE_ELEM = r"(?P<e>[bhwdq])"

# Ordered (pattern, OpInfo) rules for the regular families; group `e` gives the element bits.
RULES: tuple[tuple[re.Pattern, OpInfo], ...] = (
    (re.compile(rf"^bc?\.(?:{_CC})$"), CONTROL),                                   # b.eq, bc.ne
    (re.compile(rf"^ld(?:ff|nf|nt)?1(?:r|rq|ro)?s?{_SVE_ELEM}$"), LOAD),
    (re.compile(rf"^ld[234]{_SVE_ELEM}$"), LOAD),
    (re.compile(rf"^st(?:nt)?1{_SVE_ELEM}$"), STORE),
    (re.compile(rf"^st[234]{_SVE_ELEM}$"), STORE),
    (re.compile(r"^(?:ld|st)(?:add|clr|eor|set|smax|smin|umax|umin)(?:a|al|l)?[bh]?$"), ATOMIC),
    (re.compile(r"^(?:swp|cas|casp)(?:a|al|l)?[bh]?$"), ATOMIC),
    (re.compile(r"^(?:ldx|ldax|stx|stlx)[rp][bh]?$"), ATOMIC),
)

_ELEM_BITS = {"b": 8, "h": 16, "w": 32, "d": 64, "q": 128}


TABLE = Table(__name__, EXACT, rules=RULES, group_bits=_ELEM_BITS)


def classify(op: str) -> Match:
    """OpInfo and stated element bits for a lower-case mnemonic without arrangement suffix."""
    return TABLE.classify(op)


def lookup(op: str) -> OpInfo:
    return classify(op.lower()).info


register(Isa(
    name="aarch64", title="AArch64", parser="kinspect.ir.aarch64", lexer="pygments.lexers:GasLexer", machine=True,
    rank=50, diff_rank=50, arches=("aarch64", "arm64"), triples=("aarch64", "arm64"),
    # "ldr q0, [x8]"
    telltale=re.compile(r"^\s*[a-z][a-z0-9.]*\s+(?:[xwqdsh]\d+|v\d+\.\d*[bhsd]|z\d+\.[bhsd])\b"),
    elf_machine=0xB7, objdump="aarch64-linux-gnu-objdump", comment="//", vector_name="NEON/SVE", fma_names="fmla",
    unordered_reduction="faddv", ordered_reduction=re.compile(r"^fadda$")))
