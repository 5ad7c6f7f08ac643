"""A toy ISA from outside kinspect: what a third party's ISA module looks like, all in one module (its
opcode table, its parser, its lexer, its spec).

"ZX" is made up: scalar `z` registers, vector `v` registers, `zv*` vector instructions. It is
registered the way another distribution registers one, through an entry point in the `kinspect.isas`
group naming SPEC (tests/core/test_plugins.py installs one), never by kinspect itself.
"""

import re

from pygments.lexer import RegexLexer
from pygments.token import Comment, Keyword, Name, Number, Punctuation, Whitespace

from kinspect.isa import Isa
from kinspect.ir.records import Function, Instruction, check_text, iter_lines
from kinspect.isa.ops import Access, Kind, OpInfo, Space, Table, stated

TABLE = Table(__name__, stated({
    "zvload": OpInfo(Kind.LOAD, vector=True, space=Space.GLOBAL, access=Access.UNIT),
    "zvstore": OpInfo(Kind.STORE, vector=True, space=Space.GLOBAL, access=Access.UNIT),
    "zvfma": OpInfo(Kind.FMA, vector=True, fp=True),
    "zvmul": OpInfo(Kind.ARITH, vector=True, fp=True),
    "zfadd": OpInfo(Kind.ARITH, fp=True),
    "zadd": OpInfo(Kind.ARITH),
    "ret": OpInfo(Kind.CONTROL),
}))

FORMATS = ("ZX assembly",)
# kern:
LABEL_RE = re.compile(r"^(?P<name>[A-Za-z_][\w.]*):\s*$")
#     zvfma v3, v1, v2    ; a comment
INSTRUCTION_RE = re.compile(r"^\s+(?P<mnemonic>[a-z][a-z0-9.]*)\b(?P<operands>[^;]*)")


def parse(lines):
    function = ""
    for n, line in iter_lines(lines):
        check_text(n, line, "binary data, not ZX assembly")
        if (m := LABEL_RE.match(line)):
            function = m["name"]
            yield Function(function, n)
        elif (m := INSTRUCTION_RE.match(line)) and not line.lstrip().startswith("."):
            op = m["mnemonic"]
            info = TABLE.lookup(op)
            yield Instruction(mnemonic=op, op=op, info=info, line=n, width=256 if info.vector else None,
                              function=function)


class ZxLexer(RegexLexer):
    name = "ZX"
    tokens = {"root": [
        (r";.*?$", Comment.Single),
        (r"^[A-Za-z_][\w.]*:", Name.Label),
        (r"\b[zv]\d+\b", Name.Variable),
        (r"\b[a-z][a-z0-9.]*\b", Keyword),
        (r"-?\d+", Number.Integer),
        (r"[(),]", Punctuation),
        (r"\s+", Whitespace),
    ]}


SPEC = Isa(
    name="zx", title="ZX", parser=__name__, lexer=f"{__name__}:ZxLexer", machine=True, rank=90, diff_rank=35,
    arches=("zx64",), triples=("zx64",),
    # "zvfma v3, v1, v2"
    telltale=re.compile(r"^\s+z[a-z]*\s+[zv]\d+\b"),
    comment=";", vector_name="ZV", fma_names="zvfma")
