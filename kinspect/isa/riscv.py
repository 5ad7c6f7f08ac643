"""RISC-V opcode table: RV64GC scalar, F/D/Zfh, Zba/Zbb/Zbs/Zicond, RVV 1.0, SpacemiT IME.

Sources a reader can check it against:
- The RISC-V Instruction Set Manual, Volume I (unprivileged), chapters on RV32I/RV64I, M, A, F,
  D, Zfh, B (Zba/Zbb/Zbs), Zicond, Zicsr; and the assembler pseudo-instructions LLVM prints
  (`li`, `mv`, `j`, `ret`, `call`, `tail`, `sext.w`, `beqz`, ...).
- "V" Standard Extension for Vector Operations, version 1.0: section numbers are cited per block
  (7 loads/stores, 11 integer, 12 fixed-point, 13 floating-point, 14 reductions, 15 mask,
  16 permutation) plus the aliases LLVM prints (`vmv.v.v` is 11.16, `vneg.v`, `vfneg.v`, ...).
- SpacemiT IME (XSMTVDot): LLVM's RISCVInstrInfoXSpacemiT.td and the riscv-ime-extension-spec.
  The K1's X60 core implements the integer `smt.vmadot*` family only.

Decisions worth knowing:
- Loads/stores say Space.GLOBAL (ordinary memory); the parser changes it to STACK from operands.
- Whole-register loads/stores (`vl1re32.v`, `vs1r.v`) are unit-stride LOAD/STORE: they move
  memory, and LLVM uses them for vector spills (address in a register, so only LLVM's
  "Folded Spill" comment or the surrounding code shows it is the stack).
- Integer sign/zero extension (`sext.w`, `zext.b`, `vsext.vf2`) is CONVERT on every ISA here.
- `vfredusum/vfredmax/vfredmin` are unordered (tree) reductions; `vfredosum/vfwredosum` are the
  ordered, sequential ones (slow: one add per element).
- Compressed `c.*` forms (objdump prints them) are looked up without the `c.` prefix.
- `nop` is NOP; prefetch hints (`prefetch.r`) are not listed and count as OTHER.
"""

from __future__ import annotations

import re

from kinspect.isa import Isa, register
from kinspect.isa.ops import Access, Kind, Match, OpInfo, Space, Table, merge, stated


def _op(kind: Kind, **kw) -> OpInfo:
    return OpInfo(kind, **kw)

# -- scalar ---------------------------------------------------------------------------------------
LOAD = _op(Kind.LOAD, space=Space.GLOBAL)
STORE = _op(Kind.STORE, space=Space.GLOBAL)
FLOAD = _op(Kind.LOAD, fp=True, space=Space.GLOBAL)
FSTORE = _op(Kind.STORE, fp=True, space=Space.GLOBAL)
ARITH = _op(Kind.ARITH)
CONVERT = _op(Kind.CONVERT)
MOVE = _op(Kind.MOVE)
CONTROL = _op(Kind.CONTROL)
CONFIG = _op(Kind.CONFIG)
SYNC = _op(Kind.SYNC)
ATOMIC = _op(Kind.ATOMIC, space=Space.GLOBAL)
F_ARITH = _op(Kind.ARITH, fp=True)
F_FMA = _op(Kind.FMA, fp=True)
F_CONVERT = _op(Kind.CONVERT, fp=True)
F_MOVE = _op(Kind.MOVE, fp=True)

# -- vector (RVV 1.0) ----------------------------------------------------------------------------
_V = dict(vector=True, unit="rvv")
V_CONFIG = _op(Kind.CONFIG, **_V)
V_LOAD_UNIT = _op(Kind.LOAD, space=Space.GLOBAL, access=Access.UNIT, **_V)
V_STORE_UNIT = _op(Kind.STORE, space=Space.GLOBAL, access=Access.UNIT, **_V)
V_LOAD_STRIDED = _op(Kind.LOAD, space=Space.GLOBAL, access=Access.STRIDED, **_V)
V_STORE_STRIDED = _op(Kind.STORE, space=Space.GLOBAL, access=Access.STRIDED, **_V)
V_LOAD_INDEXED = _op(Kind.LOAD, space=Space.GLOBAL, access=Access.INDEXED, **_V)
V_STORE_INDEXED = _op(Kind.STORE, space=Space.GLOBAL, access=Access.INDEXED, **_V)
V_ARITH = _op(Kind.ARITH, **_V)
V_FMA = _op(Kind.FMA, **_V)
V_MOVE = _op(Kind.MOVE, **_V)
V_CONVERT = _op(Kind.CONVERT, **_V)
V_REDUCE = _op(Kind.REDUCE, ordered=False, **_V)
VF_ARITH = _op(Kind.ARITH, fp=True, **_V)
VF_FMA = _op(Kind.FMA, fp=True, **_V)
VF_MOVE = _op(Kind.MOVE, fp=True, **_V)
VF_CONVERT = _op(Kind.CONVERT, fp=True, **_V)
VF_SPECIAL = _op(Kind.SPECIAL, fp=True, **_V)
VF_REDUCE_TREE = _op(Kind.REDUCE, fp=True, ordered=False, **_V)
VF_REDUCE_ORDERED = _op(Kind.REDUCE, fp=True, ordered=True, **_V)

# -- SpacemiT IME --------------------------------------------------------------------------------
IME_MATRIX = _op(Kind.MATRIX, vector=True, unit="ime")
IME_F_MATRIX = _op(Kind.MATRIX, vector=True, fp=True, unit="ime")
IME_MOVE = _op(Kind.MOVE, vector=True, unit="ime")

# Scalar mnemonics -> (OpInfo, bits moved or computed when the mnemonic says it).
SCALAR: dict[str, tuple[OpInfo, int | None]] = merge(
    {op: (LOAD, bits) for op, bits in
     (("lb", 8), ("lbu", 8), ("lh", 16), ("lhu", 16), ("lw", 32), ("lwu", 32), ("ld", 64))},
    {op: (STORE, bits) for op, bits in (("sb", 8), ("sh", 16), ("sw", 32), ("sd", 64))},
    {op: (FLOAD, bits) for op, bits in (("flh", 16), ("flw", 32), ("fld", 64), ("flq", 128))},
    {op: (FSTORE, bits) for op, bits in (("fsh", 16), ("fsw", 32), ("fsd", 64), ("fsq", 128))},
    {op: (ARITH, None) for op in (
      # RV64I, M
      "add addi addw addiw sub subw and andi or ori xor xori sll slli sllw slliw srl srli srlw "
      "srliw sra srai sraw sraiw slt slti sltu sltiu mul mulh mulhu mulhsu mulw div divu divw "
      "divuw rem remu remw remuw "
      # pseudo-instructions
      "neg negw not seqz snez sltz sgtz "
      # Zba, Zbb, Zbs, Zbc, Zicond
      "sh1add sh2add sh3add sh1add.uw sh2add.uw sh3add.uw add.uw slli.uw andn orn xnor clz clzw "
      "ctz ctzw cpop cpopw max maxu min minu rol rolw ror rori roriw rorw orc.b rev8 bclr bclri "
      "bext bexti binv binvi bset bseti clmul clmulh clmulr czero.eqz czero.nez").split()},
    {op: (CONVERT, None) for op in "sext.b sext.h sext.w zext.b zext.h zext.w".split()},
    {op: (MOVE, None) for op in "mv li lui auipc la lla".split()},
    {op: (CONTROL, None) for op in (
      "beq bne blt bge bltu bgeu beqz bnez blez bgez bltz bgtz bgt ble bgtu bleu "
      "j jal jalr jr ret call tail ecall ebreak").split()},
    {op: (SYNC, None) for op in "fence fence.i fence.tso pause".split()},
    {"nop": (_op(Kind.NOP), None)},
    {op: (CONFIG, None) for op in (
      "csrr csrw csrs csrc csrrw csrrs csrrc csrrwi csrrsi csrrci csrwi csrsi csrci "
      "frcsr fscsr frrm fsrm fsrmi frflags fsflags fsflagsi rdcycle rdtime rdinstret").split()},
    where=__name__,
)

# Compressed forms whose uncompressed name differs beyond the `c.` prefix.
COMPRESSED = {"c.lwsp": "lw", "c.ldsp": "ld", "c.swsp": "sw", "c.sdsp": "sd", "c.flwsp": "flw",
              "c.fldsp": "fld", "c.fswsp": "fsw", "c.fsdsp": "fsd", "c.addi16sp": "addi",
              "c.addi4spn": "addi"}

_VXI, _VX, _VF = ("vv", "vx", "vi"), ("vv", "vx"), ("vv", "vf")
_WIDE_X, _WIDE_F, _NARROW = ("vv", "vx", "wv", "wx"), ("vv", "vf", "wv", "wf"), ("wv", "wx", "wi")
_FCVT = ("xu.f.v", "x.f.v", "rtz.xu.f.v", "rtz.x.f.v", "f.xu.v", "f.x.v")
_FNCVT = ("xu.f.w", "x.f.w", "rtz.xu.f.w", "rtz.x.f.w", "f.xu.w", "f.x.w", "f.f.w", "rod.f.f.w")

# RVV arithmetic: (base names, operand forms, OpInfo); expanded to `base.form` keys.
VECTOR_OPS: tuple[tuple[tuple[str, ...], tuple[str, ...], OpInfo], ...] = (
    (("vsetvli", "vsetivli", "vsetvl"), ("",), V_CONFIG),                       # 6
    (("vlm", "vle1"), ("v",), V_LOAD_UNIT),                                      # 7.4 (vle1: v0.10)
    (("vsm", "vse1"), ("v",), V_STORE_UNIT),
    # 11 integer
    (("vadd",), _VXI, V_ARITH), (("vsub",), _VX, V_ARITH), (("vrsub",), ("vx", "vi"), V_ARITH),
    (("vwaddu", "vwadd", "vwsubu", "vwsub"), _WIDE_X, V_ARITH),
    (("vzext", "vsext"), ("vf2", "vf4", "vf8"), V_CONVERT),
    (("vadc",), ("vvm", "vxm", "vim"), V_ARITH),
    (("vmadc",), ("vvm", "vxm", "vim", "vv", "vx", "vi"), V_ARITH),
    (("vsbc",), ("vvm", "vxm"), V_ARITH), (("vmsbc",), ("vvm", "vxm", "vv", "vx"), V_ARITH),
    (("vand", "vor", "vxor", "vsll", "vsrl", "vsra"), _VXI, V_ARITH),
    (("vnsrl", "vnsra"), _NARROW, V_ARITH),
    (("vmseq", "vmsne", "vmsleu", "vmsle"), _VXI, V_ARITH),
    (("vmsltu", "vmslt"), _VX, V_ARITH),
    (("vmsgtu", "vmsgt"), ("vx", "vi", "vv"), V_ARITH),                         # .vv: alias
    (("vmsgeu", "vmsge"), ("vv", "vx", "vi"), V_ARITH),                         # aliases
    (("vminu", "vmin", "vmaxu", "vmax", "vmul", "vmulh", "vmulhu", "vmulhsu"), _VX, V_ARITH),
    (("vdivu", "vdiv", "vremu", "vrem", "vwmul", "vwmulu", "vwmulsu"), _VX, V_ARITH),
    (("vmacc", "vnmsac", "vmadd", "vnmsub", "vwmaccu", "vwmacc", "vwmaccsu"), _VX, V_FMA),
    (("vwmaccus",), ("vx",), V_FMA),
    (("vmerge",), ("vvm", "vxm", "vim"), V_MOVE),
    (("vmv",), ("v.v", "v.x", "v.i", "x.s", "s.x"), V_MOVE),                     # 11.16, 16.1
    (("vneg", "vnot"), ("v",), V_ARITH),                                         # aliases
    (("vwcvt", "vwcvtu"), ("x.x.v",), V_CONVERT), (("vncvt",), ("x.x.w",), V_CONVERT),
    # 12 fixed-point
    (("vsaddu", "vsadd", "vssrl", "vssra"), _VXI, V_ARITH),
    (("vssubu", "vssub", "vaaddu", "vaadd", "vasubu", "vasub", "vsmul"), _VX, V_ARITH),
    (("vnclipu", "vnclip"), _NARROW, V_ARITH),
    # 13 floating-point
    (("vfadd", "vfsub", "vfmul", "vfdiv", "vfmin", "vfmax", "vfsgnj", "vfsgnjn", "vfsgnjx"),
     _VF, VF_ARITH),
    (("vfrsub", "vfrdiv"), ("vf",), VF_ARITH),
    (("vfwadd", "vfwsub"), _WIDE_F, VF_ARITH), (("vfwmul",), _VF, VF_ARITH),
    (("vfmacc", "vfnmacc", "vfmsac", "vfnmsac", "vfmadd", "vfnmadd", "vfmsub", "vfnmsub",
      "vfwmacc", "vfwnmacc", "vfwmsac", "vfwnmsac", "vfwmaccbf16"), _VF, VF_FMA),
    (("vfsqrt", "vfclass", "vfneg", "vfabs"), ("v",), VF_ARITH),
    (("vfrsqrt7", "vfrec7"), ("v",), VF_SPECIAL),                                # estimates
    (("vmfeq", "vmfne", "vmflt", "vmfle"), _VF, VF_ARITH),
    (("vmfgt", "vmfge"), ("vf", "vv"), VF_ARITH),                                # .vv: alias
    (("vfmerge",), ("vfm",), VF_MOVE), (("vfmv",), ("v.f", "f.s", "s.f"), VF_MOVE),
    (("vfcvt",), _FCVT, VF_CONVERT),
    (("vfwcvt",), _FCVT + ("f.f.v",), VF_CONVERT),
    (("vfncvt",), _FNCVT, VF_CONVERT),
    (("vfncvtbf16",), ("f.f.w",), VF_CONVERT), (("vfwcvtbf16",), ("f.f.v",), VF_CONVERT),
    # 14 reductions
    (("vredsum", "vredmaxu", "vredmax", "vredminu", "vredmin", "vredand", "vredor", "vredxor",
      "vwredsumu", "vwredsum"), ("vs",), V_REDUCE),
    (("vfredusum", "vfredmax", "vfredmin", "vfwredusum", "vfredsum", "vfwredsum"), ("vs",),
     VF_REDUCE_TREE),                                                            # *sum: v0.10 names
    (("vfredosum", "vfwredosum"), ("vs",), VF_REDUCE_ORDERED),
    # 15 mask
    (("vmand", "vmnand", "vmandn", "vmxor", "vmor", "vmnor", "vmorn", "vmxnor", "vmandnot",
      "vmornot"), ("mm",), V_ARITH),
    (("vmnot", "vcpop", "vpopc", "vfirst", "vmsbf", "vmsif", "vmsof", "viota"), ("m",), V_ARITH),
    (("vmmv", "vmclr", "vmset"), ("m",), V_MOVE), (("vid",), ("v",), V_MOVE),
    # 16 permutation
    (("vslideup", "vslidedown"), ("vx", "vi"), V_MOVE),
    (("vslide1up", "vslide1down"), ("vx",), V_MOVE),
    (("vfslide1up", "vfslide1down"), ("vf",), VF_MOVE),
    (("vrgather",), _VXI, V_MOVE), (("vrgatherei16",), ("vv",), V_MOVE),
    (("vcompress",), ("vm",), V_MOVE),
    (("vmv1r", "vmv2r", "vmv4r", "vmv8r"), ("v",), V_MOVE),
    # SpacemiT IME (riscv-ime-extension-spec, "Instruction description"): integer dot-product matrix
    # multiply-accumulate and its sliding-window forms 1-3 and n (slide in t0) (LLVM 22's XSMTVDot,
    # the K1's X60, has vmadot and 1-3); the fp forms vfmadot, vfmadot1-3, vfmadotn (not on the X60);
    # and the later revision's sparse (.sp), block-quantized (.hp), widening fp and layout instructions.
    (tuple(f"smt.vmadot{w}{s}" for w in ("", "1", "2", "3", "n") for s in ("", "u", "su", "us")),
     ("",), IME_MATRIX),
    (tuple(f"smt.vmadot{s}" for s in ("", "u", "su", "us")), ("sp", "hp"), IME_MATRIX),
    (tuple(f"smt.vf{w}madot{n}" for w in ("", "w") for n in ("", "1", "2", "3", "n")), ("",), IME_F_MATRIX),
    (("smt.vpack", "smt.vupack", "smt.vnpack", "smt.vnspack", "smt.vnpack4", "smt.vnspack4"),
     ("vv",), IME_MOVE),
)

_EEW = r"(?P<eew>8|16|32|64)"
# Ordered (pattern, OpInfo) rules for the regular families; the `eew`/`fmt` group gives the bits.
RULES: tuple[tuple[re.Pattern, OpInfo], ...] = (
    (re.compile(rf"^vle{_EEW}(?:ff)?\.v$"), V_LOAD_UNIT),                        # 7.4, 7.7
    (re.compile(rf"^vse{_EEW}\.v$"), V_STORE_UNIT),
    (re.compile(rf"^vlse{_EEW}\.v$"), V_LOAD_STRIDED),                           # 7.5
    (re.compile(rf"^vsse{_EEW}\.v$"), V_STORE_STRIDED),
    # 7.6: the number is the *index* width; the data width is SEW from vtype
    (re.compile(r"^vl[uo]xei(?:8|16|32|64)\.v$"), V_LOAD_INDEXED),
    (re.compile(r"^vs[uo]xei(?:8|16|32|64)\.v$"), V_STORE_INDEXED),
    (re.compile(rf"^vlseg[2-8]e{_EEW}(?:ff)?\.v$"), V_LOAD_UNIT),                # 7.8
    (re.compile(rf"^vsseg[2-8]e{_EEW}\.v$"), V_STORE_UNIT),
    (re.compile(rf"^vlsseg[2-8]e{_EEW}\.v$"), V_LOAD_STRIDED),
    (re.compile(rf"^vssseg[2-8]e{_EEW}\.v$"), V_STORE_STRIDED),
    (re.compile(r"^vl[uo]xseg[2-8]ei(?:8|16|32|64)\.v$"), V_LOAD_INDEXED),
    (re.compile(r"^vs[uo]xseg[2-8]ei(?:8|16|32|64)\.v$"), V_STORE_INDEXED),
    (re.compile(rf"^vl[1248]re{_EEW}\.v$"), V_LOAD_UNIT),                        # 7.9
    (re.compile(r"^vl[1248]r\.v$"), V_LOAD_UNIT),
    (re.compile(r"^vs[1248]r\.v$"), V_STORE_UNIT),
    # F, D, Zfh, Q, Zfa: fadd.s fmax.d fsgnj.h ...
    (re.compile(r"^f(?:add|sub|mul|div|min|max|minm|maxm|sqrt|sgnj|sgnjn|sgnjx|abs|neg|eq|lt|le"
                r"|gt|ge|class|round|roundnx|leq|ltq)\.(?P<fmt>[hsdq])$"), F_ARITH),
    (re.compile(r"^f(?:madd|msub|nmadd|nmsub)\.(?P<fmt>[hsdq])$"), F_FMA),
    (re.compile(r"^fcvt\.[a-z]+\.[a-z]+$"), F_CONVERT),                          # fcvt.s.w fcvt.lu.d
    (re.compile(r"^fmv\.(?:(?P<fmt>[hsdq])|x\.[hwd]|[hwd]\.x)$"), F_MOVE),
    (re.compile(r"^fli\.(?P<fmt>[hsdq])$"), F_MOVE),
    (re.compile(r"^(?:amo[a-z]+|lr|sc)\.[wd](?:\.aq|\.rl|\.aqrl)?$"), ATOMIC),   # A
)

_FMT_BITS = {"h": 16, "s": 32, "d": 64, "q": 128}


def _expand() -> dict[str, OpInfo]:
    return merge(*({f"{base}.{form}" if form else base: info for form in forms}
                   for bases, forms, info in VECTOR_OPS for base in bases), where=__name__)


VECTOR: dict[str, OpInfo] = _expand()

TABLE = Table(__name__, merge(SCALAR, stated(VECTOR), where=__name__), rules=RULES, group_bits=_FMT_BITS,
              respell=lambda op: COMPRESSED.get(op, op[2:]) if op.startswith("c.") else None)


def classify(op: str) -> Match:
    """OpInfo and stated element bits for a lower-case mnemonic; OTHER when unknown."""
    return TABLE.classify(op)


def lookup(op: str) -> OpInfo:
    return classify(op.lower()).info


# Targets that are (or may be) the K1's X60, whose IME is integer-only: spine-triton names the core,
# dumps and other backends only the architecture.
X60_ARCHES = ("spacemit-x60", "spacemit-a60", "riscv64", "riscv", "?")

register(Isa(
    name="riscv", title="RISC-V", parser="kinspect.ir.riscv", lexer="pygments.lexers:GasLexer", machine=True, rank=40,
    diff_rank=30, arches=("riscv64", "riscv"), triples=("riscv64", "riscv32"),
    # "vsetvli a0, zero, e32, m1"
    telltale=re.compile(r"^\s*(?:vsetvli|vsetivli|addi|auipc|slli|srli|flw|fsw|ld|sd)\s+(?:[astx]\d|ra|sp|zero|f[at]?\d)"),
    elf_machine=0xF3, objdump="riscv64-linux-gnu-objdump",
    # what llvm-objdump must be told to decode everything a Triton CPU backend emits (RVV, Zfh, Zb*; the
    # X60's Zvfh, Zicond and IME as XSMTVDot); an llvm-objdump too old for one ignores it with a warning
    # (version 14 leaves Zicond's czero.* undecoded)
    objdump_mattr="+m,+a,+f,+d,+c,+v,+zfh,+zba,+zbb,+zbs,+zvfh,+zicond,+xsmtvdot",
    vector_name="RVV", fma_names="vfmacc/vfmadd", unordered_reduction="vfredusum",
    ordered_reduction=re.compile(r"redosum"),                    # vfredosum.vs, vfwredosum.vs
    vector_config=re.compile(r"^vsetvl|^vsetivli$"), vector_config_words="vsetvli/vsetivli; SEW,LMUL mix",
    register_spill=re.compile(r"^v[ls][1248]r(?:e\d+)?\.v$"),   # vl1re32.v, vs1r.v
    matrix_unit="ime", matrix_name="IME", matrix_ops="smt.vmadot",
    matrix_absent=((X60_ARCHES, "the X60's IME is integer-only, so an fp matmul runs on RVV (vfmacc/vfwmacc at best)"),)))
