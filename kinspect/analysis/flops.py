"""FLOPs a captured launch of a kernel with matrix instructions does: each tl.dot's shape (from its
TTIR, before software pipelining copies it) times the trips of the loops around it in the source,
times the launch's programs.

    f = flops(variant)       # None when the kernel has no tl.dot

A dot of M x K by K x N is 2*M*N*K FLOPs. The loops' trip counts are read from the kernel's source
(`for k in range(0, tl.cdiv(K, BLOCK_K))`, with the launch's scalars, its constexprs and the
assignments before the loop); a bound that depends on the program (a persistent kernel's
`range(pid, tiles, NUM_SMS)`) leaves the count unknown, and the result says why.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from kinspect.analysis.kernel_ast import assignment, parse
from kinspect.core.model import Variant

DOT_OPS = ("tt.dot", "tt.dot_scaled", "ttng.warp_group_dot")
# %5 = tt.dot %3, %4, %cst, inputPrecision = tf32 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32> loc(#loc9)
DOT_TYPES = re.compile(r":\s*(?:tensor|!ttg\.memdesc)<(?P<m>\d+)x(?P<k>\d+)x(?P<a>\w+)[^>]*>\s*\*\s*"
                       r"(?:tensor|!ttg\.memdesc)<(?P<k2>\d+)x(?P<n>\d+)x\w+[^>]*>\s*->\s*tensor<(?P<m2>\d+)x(?P<n2>\d+)x")
DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}


@dataclass(frozen=True)
class Flops:
    per_call: int | None          # None: a loop's trips could not be read
    dtype: str                    # the dots' input type as torch names it ("" when fp8 or mixed)
    dots: int                     # tl.dot lines in the kernel
    how: str


def flops(v: Variant) -> Flops | None:
    dots = _dots(v)
    if not dots:
        return None
    la = v.launches
    sig = la.top() if la is not None else None
    if sig is None:
        return Flops(None, "", len(dots), "no recorded launch")
    k = parse(v)
    scalars = {a.name: a.value for a in sig.args if a.kind in ("int", "float", "bool")}
    scalars.update({n: x for n, x in v.constexprs.items() if isinstance(x, (int, float, bool))})
    programs = 1
    for g in sig.grid:
        programs *= int(g)
    total = 0
    dtypes = set()
    for line, (m, n, kk, dtype) in dots.items():
        if k is None:
            return Flops(None, "", len(dots), "the kernel's source is not in its record: loop trips unknown")
        trips, why = _trips(k.body, line - k.first_line + 1, dict(scalars))
        if trips is None:
            return Flops(None, DTYPES.get(dtype, ""), len(dots), f"loop trips around line {line} unknown: {why}")
        total += 2 * m * n * kk * trips
        dtypes.add(dtype)
    dtype = DTYPES.get(dtypes.pop(), "") if len(dtypes) == 1 else ""
    return Flops(total * programs, dtype, len(dots),
                 f"2*M*N*K of each tl.dot (TTIR shapes) x its loop trips x {programs:,} programs")


def _dots(v: Variant) -> dict[int, tuple[int, int, int, str]]:
    """Source line -> (M, N, K, input type) of each tl.dot, from the first MLIR stage (TTIR)."""
    from kinspect import ir
    from kinspect.analysis.stages import open_lines
    from kinspect.core.errors import KinspectError
    from kinspect.ir.records import Instruction

    stage = next((s for s in v.stages if s.dialect == "mlir" and s.name in ("ttir", "ttgir") and not s.binary), None)
    if stage is None:
        return {}
    try:
        with open_lines(v, stage) as lines:
            found = [r for r in ir.parse("mlir", lines) if isinstance(r, Instruction) and r.op in DOT_OPS]
        if not found:
            return {}
        text = Path(v.path, stage.file).read_text(errors="replace").splitlines()
    except (KinspectError, OSError):
        return {}
    out = {}
    for r in found:
        m = DOT_TYPES.search(text[r.line - 1]) if 0 < r.line <= len(text) else None
        if m and r.loc is not None and r.loc.line not in out:
            out[r.loc.line] = (int(m["m"]), int(m["n"]), int(m["k"]), m["a"])
    return out


def _trips(body, line: int, env: dict) -> tuple[int | None, str]:
    """How many times the statement at `line` (of the source text) runs per program: the product of the
    trip counts of the loops around it."""
    for stmt in body:
        inside = stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno)
        if not inside:
            target, value = assignment(stmt)
            if target is not None:
                known = _value(value, env)
                if known is None:
                    env.pop(target, None)
                else:
                    env[target] = known
            continue
        if isinstance(stmt, ast.For):
            n, why = _range_trips(stmt.iter, env)
            if n is None:
                return None, why
            if isinstance(stmt.target, ast.Name):
                env.pop(stmt.target.id, None)
            inner, why = _trips(stmt.body, line, env)
            return (None, why) if inner is None else (n * inner, "")
        if isinstance(stmt, ast.While):
            return None, "a while loop"
        if isinstance(stmt, (ast.If, ast.With)):
            return _trips(stmt.body + getattr(stmt, "orelse", []), line, env)
        return 1, ""
    return 1, ""


def _range_trips(node, env) -> tuple[int | None, str]:
    if not (isinstance(node, ast.Call) and (isinstance(node.func, ast.Name) and node.func.id == "range" or
                                            isinstance(node.func, ast.Attribute) and
                                            node.func.attr in ("range", "static_range"))):
        return None, f"the loop is over {ast.unparse(node)[:40]}"
    args = [_value(a, env) for a in node.args]
    if any(a is None for a in args) or not 1 <= len(args) <= 3:
        return None, f"{ast.unparse(node)[:60]} depends on what the program computes"
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
    if not step:
        return None, "a zero step"
    return max(0, -(-(stop - start) // step)), ""


def _value(node, env):
    """An integer expression of known names (constants, + - * // %, cdiv, min, max); None otherwise."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        v = env.get(node.id)
        return v if type(v) is int else None
    if isinstance(node, ast.BinOp):
        a, b = _value(node.left, env), _value(node.right, env)
        if a is None or b is None:
            return None
        op = type(node.op)
        if op in (ast.FloorDiv, ast.Mod) and b == 0:
            return None
        return {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                ast.FloorDiv: lambda: a // b, ast.Mod: lambda: a % b}.get(op, lambda: None)()
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _value(node.operand, env)
        return None if v is None else -v
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        args = [_value(a, env) for a in node.args]
        if any(a is None for a in args):
            return None
        if name == "cdiv" and len(args) == 2 and args[1]:
            return -(-args[0] // args[1])
        if name in ("min", "minimum") and args:
            return min(args)
        if name in ("max", "maximum") and args:
            return max(args)
    return None
