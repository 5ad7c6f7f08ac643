"""Pygments lexers for the stages pygments does not know (MLIR, SASS, AMDGCN), and `lexer_for`.

pygments ships LlvmLexer and PtxLexer, but both emit Error tokens on real Triton output (LLVM
attributes newer than their keyword lists, such as `captures(none)`; PTX guards `@%p1`, the
`shared::cta` qualifiers), so `lexer_for` returns thin subclasses that add those forms.
"""

from __future__ import annotations

from pygments.lexer import Lexer, RegexLexer, bygroups, inherit, words
from pygments.lexers import JsonLexer, LlvmLexer, TextLexer
from pygments.token import (Comment, Keyword, Name, Number, Operator, Punctuation, String,
                            Whitespace)

try:                                     # pygments >= 2.16
    from pygments.lexers import PtxLexer
except ImportError:                      # pragma: no cover - older pygments
    PtxLexer = None

# Punctuation the compilers print; anything else is left as an Error token on purpose, so a
# test over real output notices when a lexer misses a form.
_PUNCTUATION = r"[(){}\[\]<>,;:=*+\-|!?.~^&/'`\\$@%#]"

# %a_11  %acc_77:9  %c-1_i32
_MLIR_VALUE = r"%[\w.$-]+(?::\d+)?(?:#\d+)?"

_MLIR_TYPES = ("tensor", "vector", "memref", "index", "none", "complex", "tuple", "bf16", "tf32")


class MlirLexer(RegexLexer):
    """MLIR as Triton and MLIR print it: TTIR, TTGIR, linalg, memref, the LLVM dialect."""

    name = "MLIR"
    aliases = ["mlir", "ttir", "ttgir", "ttcir", "tttcir"]
    filenames = ["*.mlir", "*.ttir", "*.ttgir"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r'"[A-Za-z_][\w$]*(?:\.[\w$]+)+"(?=\()', Keyword),   # generic form: "tt.reduce"(%c)
            (r'"(?:[^"\\]|\\.)*"', String),
            (r"#loc[\w.$]*", Comment.Preproc),                    # location aliases
            (r"\bloc(?=\()", Comment.Preproc),
            (r"#[\w.$-]+", Name.Decorator),                       # attribute aliases, #ttg.x
            (r"![\w.$-]+", Keyword.Type),                         # !tt.ptr, !llvm.struct
            (r"\^[\w.$-]+", Name.Label),                          # ^bb0
            (r"@[\w.$-]+", Name.Function),                        # @kernel
            (_MLIR_VALUE, Name.Variable),                         # %a_11
            (r"[A-Za-z_][\w$]*(?:\.[\w$]+)+", Keyword),           # tt.dot, arith.addf
            (words(_MLIR_TYPES, suffix=r"\b"), Keyword.Type),
            # f32, i1, f8E4M3FN, also at the end of a shape (128x128xf32)
            (r"(?:(?<=\dx)|(?<=\?x)|\b)(?:f(?:16|32|64|80|128)|f[4-8]E\w+|[us]?i\d+)\b", Keyword.Type),
            (r"\b\d+(?=x)", Number.Integer),                      # 128x128xf32 shapes
            (r"(?<=[\d?])x(?=[\d?!a-z])", Punctuation),
            (r"0x[0-9A-Fa-f]+", Number.Hex),
            (r"-?\d+\.\d*(?:[eE][-+]?\d+)?", Number.Float),
            (r"-?\d+", Number.Integer),
            (r"->", Operator),
            (r"[A-Za-z_][\w$-]*", Name),                          # attribute names, keywords
            (_PUNCTUATION, Punctuation),
        ],
    }


# SASS registers: R0..R255, RZ, UR4, URZ, predicates P0/PT/UP0/UPT, barriers B0, SR_TID.X
_SASS_REGISTER = (r"\b(?:R\d+|RZ|UR\d+|URZ|UP[0-7T]|P[0-7T]|B\d+|SR_[\w.]+)"
                  r"(?:\.(?:reuse|64|128|H[01](?:_H[01])?|B[0-3]|F32|X\d|\w+))*\b")


class SassLexer(RegexLexer):
    """NVIDIA SASS as nvdisasm and cuobjdump -sass print it."""

    name = "SASS"
    aliases = ["sass"]
    filenames = ["*.sass"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            # 02:-:1:Y:4  control codes before an instruction (Triton's dump, `kinspect show`)
            (r"^(?:--|\d\d):[-0-7]:[-0-7]:[-Y]:[0-9a-fA-F]+(?=\s)", Comment.Preproc),
            (r"//##.*?$", Comment.Special),                       # //## File "...", line N
            (r"//.*?$", Comment.Single),
            # /*0040*/  @!P0 HGMMA.64x128x8.F32.TF32 ...: address, guard, opcode
            (r"(/\*[0-9a-fA-F]{4,}\*/)(\s+)(@!?U?P[0-7T]\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)",
             bygroups(Comment.Special, Whitespace, Name.Decorator, Keyword)),
            (r"/\*.*?\*/", Comment.Multiline),                    # /* 0x000fe40000000f00 */
            (r"@!?U?P[0-7T]\b", Name.Decorator),
            (r"(?<=\t)([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)(?=[\s;])", Keyword),   # Triton's dump: opcode after a tab
            (r"^\s*[\w.$]+:", Name.Label),                        # .L_x_1:
            (r"`\([\w.$]+\)", Name.Label),                        # BRA `(.L_x_0)
            (r"\bc\[0x[0-9a-fA-F]+\]\[0x[0-9a-fA-F]+\]", Name.Constant),  # c[0x0][0x210]
            (r"\b(?:g?desc|tmem)(?=\[)", Name.Builtin),            # desc[UR60][R4.64]
            (_SASS_REGISTER, Name.Variable),
            (r'@?"[^"]*"', String),
            (r"\.[A-Za-z_][\w.]*", Keyword.Pseudo),               # .section, .align
            (r"[-+]?(?:INF|QNAN|NAN)\b", Number.Float),
            (r"0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+\.\d+(?:e[-+]?\d+)?", Number.Float),
            (r"-?\d+", Number.Integer),
            (r"[A-Za-z_][\w.$]*", Name),
            (_PUNCTUATION, Punctuation),
        ],
    }


class AmdgcnLexer(RegexLexer):
    """AMDGCN assembly as LLVM prints it for Triton (code, directives, the metadata YAML)."""

    name = "AMDGCN"
    aliases = ["amdgcn"]
    filenames = ["*.amdgcn"]

    tokens = {
        "root": [
            (r"^([ \t]+)([a-z][a-z0-9_]*)\b", bygroups(Whitespace, Keyword)),  # mnemonics
            (r"\n|[ \t]+", Whitespace),          # newline apart: the rule above anchors at ^
            (r";.*?$", Comment.Single),
            (r"//.*?$", Comment.Single),
            (r"/\*.*?\*/", Comment.Multiline),
            (r'"(?:[^"\\]|\\.)*"', String),
            (r"^[\w.$]+:", Name.Label),                           # .LBB0_1:  softmax_kernel:
            (r"\b[vsa]\[\d+:\d+\]", Name.Variable),               # v[0:3], s[4:5]
            (r"\bttmp\[\d+:\d+\]|\bttmp\d+\b", Name.Variable),
            (r"\b[vsa]\d+\b", Name.Variable),                      # v0, s12, a3
            (r"\b(?:vcc(?:_lo|_hi)?|exec(?:_lo|_hi)?|m0|scc|vccz|execz|off|flat_scratch"
             r"(?:_lo|_hi)?)\b", Name.Builtin),
            (r"\.[A-Za-z_][\w.]*", Keyword.Pseudo),               # .amdhsa_*, .loc, .vgpr_count
            (r"0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+\.\d+(?:e[-+]?\d+)?", Number.Float),
            (r"-?\d+", Number.Integer),
            (r"[A-Za-z_][\w.$]*", Name),                          # modifiers, symbols, YAML
            (_PUNCTUATION, Punctuation),
        ],
    }


class LlvmIrLexer(LlvmLexer):
    """pygments' LlvmLexer plus attribute words and debug records newer than its lists."""

    name = "LLVM IR (kinspect)"
    aliases = []

    tokens = {
        "root": [
            (r"#dbg_\w+", Keyword),                               # #dbg_value(...) records
            inherit,
            (r"[A-Za-z_][\w.]*", Name.Attribute),                 # captures, DW_TAG_*, ...
            (_PUNCTUATION, Punctuation),
        ],
    }


def _ptx_lexer() -> type[Lexer] | None:
    if PtxLexer is None:                 # pragma: no cover - older pygments
        return None

    class PtxIrLexer(PtxLexer):
        """pygments' PtxLexer plus guards (`@%p1`, `@!%p2`) and `::` qualifiers."""

        name = "PTX (kinspect)"
        aliases = []

        tokens = {
            "root": [
                (r"@!?%[\w$.]+", Name.Decorator),
                (r"[A-Za-z_.][\w.]*::[\w:.]+", Keyword),          # fence.proxy.async.shared::cta
                inherit,
                (_PUNCTUATION, Punctuation),
            ],
        }

    return PtxIrLexer


PtxIrLexer = _ptx_lexer()

# Stage names shown with a dialect's lexer where a caller has the stage's name, not its dialect.
_STAGE_DIALECTS = {"ttir": "mlir", "ttgir": "mlir", "ttcir": "mlir", "tttcir": "mlir", "llir": "llvm"}


def lexer_for(dialect: str) -> Lexer:
    """A pygments lexer instance for a dialect (the one its spec names, kinspect.isa) or a stage name;
    plain text for anything unknown, so rendering never fails on a new stage."""
    import importlib

    from kinspect import isa

    name = dialect.lower()
    if name == "json":
        return JsonLexer()
    spec = isa.find(_STAGE_DIALECTS.get(name, name))
    if spec is None or not spec.lexer:
        return TextLexer()
    module, _, attr = spec.lexer.partition(":")
    cls = getattr(importlib.import_module(module), attr, None)
    return (cls or TextLexer)()
