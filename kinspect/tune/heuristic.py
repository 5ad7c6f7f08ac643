"""What the `@triton_heuristics.<kind>(...)` decorator of an Inductor kernel says, read without running it.

The decorator's arguments are Python literals (dicts, lists, numbers, strings, sets), enum members
(`ReductionHint.INNER`, `TileHint.DEFAULT`), `DeviceProperties(...)` with literal keywords and the
name `__file__`. `read(text)` evaluates exactly those, so a stored source never runs as code here;
anything else in the decorator is a located error.

    h = read(source_text)        # None: no Inductor decorator
    h.kind, h.size_hints, h.grid_type, h.reduction_hint, h.triton_meta, h.inductor_meta
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field

from kinspect.core.errors import KinspectError

# Inductor's own limits on block sizes (torch/_inductor/runtime/hints.py TRITON_MAX_BLOCK, CUDA; R0_ without
# the multi-kernel factor) and on warps (triton_heuristics: powers of two up to 32)
MAX_BLOCK = {"XBLOCK": 4096, "YBLOCK": 1024, "ZBLOCK": 1024, "R0_BLOCK": 4096, "R1_BLOCK": 2048}
MAX_WARPS = 32
# the size hint each block constexpr is bounded by
HINT_OF = {"XBLOCK": "x", "YBLOCK": "y", "ZBLOCK": "z", "R0_BLOCK": "r0_", "R1_BLOCK": "r1_"}
# the numel argument each grid axis divides by its block (Inductor's Grid1D/2D/3D)
GRID_AXES = {"Grid1D": (("xnumel", "XBLOCK"),),
             "Grid2D": (("xnumel", "XBLOCK"), ("ynumel", "YBLOCK")),
             "Grid3D": (("xnumel", "XBLOCK"), ("ynumel", "YBLOCK"), ("znumel", "ZBLOCK"))}

DECORATOR = "@triton_heuristics."    # e.g. `@triton_heuristics.reduction(`


@dataclass(frozen=True)
class Heuristic:
    kind: str                                  # pointwise, reduction, persistent_reduction, ...
    size_hints: dict = field(default_factory=dict)
    reduction_hint: str = ""                   # INNER, OUTER, ... ("" for pointwise)
    tile_hint: str = ""
    triton_meta: dict = field(default_factory=dict)     # device as a plain dict
    inductor_meta: dict = field(default_factory=dict)

    @property
    def grid_type(self) -> str:
        return str(self.inductor_meta.get("grid_type", ""))

    @property
    def persistent(self) -> bool:
        return self.kind == "persistent_reduction"

    @property
    def sm_count(self) -> int | None:
        n = (self.triton_meta.get("device") or {}).get("multi_processor_count")
        return n if isinstance(n, int) else None

    def max_block(self, name: str) -> int:
        """The largest value Inductor accepts for block `name`: its limit, and no more than the
        size hint (rounded to a power of two) of the dimension it tiles."""
        limit = MAX_BLOCK.get(name, 1)
        hint = self.size_hints.get(HINT_OF.get(name, ""), None)
        return min(limit, _pow2_at_least(hint)) if isinstance(hint, int) and hint > 0 else limit


def _pow2_at_least(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def read(text: str) -> Heuristic | None:
    """The heuristic of an Inductor kernel's source text; None when it carries no Inductor decorator."""
    start = text.find(DECORATOR)
    if start < 0:
        return None
    try:
        tree = ast.parse(text[start + 1:].split("\n@triton.jit", 1)[0].strip(), mode="eval")
    except SyntaxError as e:
        raise KinspectError(f"the Inductor decorator of this kernel does not parse (line {e.lineno}): "
                            f"{e.msg}") from None
    call = tree.body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        raise KinspectError("the Inductor decorator of this kernel is not a call of triton_heuristics.<kind>")
    kw = {k.arg: _literal(k.value) for k in call.keywords if k.arg}
    positional = [_literal(a) for a in call.args]
    if positional and "size_hints" not in kw:
        kw["size_hints"] = positional[0]
    size_hints = kw.get("size_hints") or {}
    if isinstance(size_hints, list):      # older Inductor: a list in x, y, r order
        size_hints = dict(zip(("x", "y", "z")[:len(size_hints) - 1] + ("r0_",), size_hints))
    return Heuristic(kind=call.func.attr, size_hints=dict(size_hints), reduction_hint=str(kw.get("reduction_hint") or ""),
                     tile_hint=str(kw.get("tile_hint") or ""), triton_meta=dict(kw.get("triton_meta") or {}),
                     inductor_meta=dict(kw.get("inductor_meta") or {}))


_ENUMS = {"ReductionHint", "TileHint"}


def _literal(node):
    """A literal, an enum member's name, DeviceProperties(...) as a dict, `__file__` as "": nothing
    else of the decorator is evaluated."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_literal(e) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict):
        return {_key(k): _literal(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _literal(node.operand)
        if isinstance(v, (int, float)):
            return -v
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in _ENUMS:
        return node.attr
    if isinstance(node, ast.Name) and node.id == "__file__":
        return ""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "DeviceProperties" and not node.args:
            return {k.arg: _literal(k.value) for k in node.keywords if k.arg}
        if node.func.id in ("set", "OrderedSet") and not node.keywords:
            return [] if not node.args else _literal(node.args[0])
    raise KinspectError(f"the Inductor decorator of this kernel holds an expression kinspect does not evaluate "
                        f"(line {getattr(node, 'lineno', '?')}): {ast.unparse(node)[:60]}")


def _key(node):
    if node is None:
        raise KinspectError("the Inductor decorator of this kernel unpacks a dict (**): not read")
    v = _literal(node)
    return tuple(v) if isinstance(v, list) else v


_DEF = re.compile(r"^def\s+\w+\s*\(", re.MULTILINE)     # `def triton_poi_fused_add_0(in_ptr0, ...`
_NAME = re.compile(r"^def [^(]+\(")                    # Inductor's triton_name_sub


def lookup_key(text: str, size_hints: dict) -> str | None:
    """The key of `torch._inductor.config.autotune_lookup_table` for this kernel, as torch 2.11's
    generate_lookup_hash_from_source_code makes it: sha256 of the size hints' repr and the source from
    `def` on with the kernel's name taken out. None when the text has no def."""
    import hashlib

    m = _DEF.search(text)
    if m is None:
        return None
    src = textwrap.dedent(text[m.start():]).strip()
    return hashlib.sha256((str(size_hints) + _NAME.sub("(", src, count=1)).encode("utf-8")).hexdigest()
