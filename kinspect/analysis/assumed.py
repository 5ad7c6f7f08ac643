"""What kinspect assumed to compile a variant, carried to every view of it, and the verdicts that rest
on it said so.

A user kernel compiled with no values given gets some from its file's launches, its wrapper called
with made-up inputs, or the kernel's own code (kinspect.compile.user). The record keeps each guess
(`extra.user.assumed`); here it becomes a `Guess`, and each verdict whose source line uses an assumed
parameter, directly or through the kernel's local variables, starts "on the assumed BLOCK_N=64: ...".
A guess of a wrapper's input (its shape and dtype) is behind every value the wrapper computed, so
it is said once, as a verdict of its own. Which line uses which parameter is read from the kernel's
source text kept in the record (the kernel's own body; code of the @triton.jit helpers it calls is
not followed: a verdict on a helper's line says nothing of this).
"""

from __future__ import annotations

import ast
import dataclasses
import re
import textwrap
from dataclasses import dataclass

from kinspect.core.model import WRAPPER_INPUTS, Variant

# an assumed value as older records spell it: `BLOCK=64  (a power of two: ...; set with -p)`
TEXT_RE = re.compile(r"^(?P<name>[\w.:]+)=(?P<spec>\S*)\s+\((?P<why>.*); set with (?P<how>[-\w]+)\)$")
SHOWN = 3          # assumed names a verdict names before "..."


@dataclass(frozen=True)
class Guess:
    """One value kinspect assumed for a variant."""

    name: str          # the kernel's parameter, or `wrapper:input` for a wrapper's made-up input
    spec: str          # as --arg / -p spell it: '*fp32', 'i32:1024', '64'
    why: str
    kind: str = ""     # 'pointer', 'pow2', 'int', 'float', 'input', ... (kinspect.compile.assume.Assumed)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @property
    def shown(self) -> str:
        return f"{self.name}={self.spec}"


def guesses(v: Variant) -> tuple[Guess, ...]:
    """The values the variant's record says kinspect assumed (none for a variant of a capture or a
    shipped kernel)."""
    out = []
    for a in v.user.assumed if v.user is not None else ():
        if a.name:
            out.append(Guess(a.name, a.spec, a.why, a.kind))
        elif m := TEXT_RE.match(a.text.strip()):         # a record from before it kept them typed
            out.append(Guess(m["name"], m["spec"], m["why"], "input" if m["how"] == "--from" else ""))
    return tuple(out)


def lines_using(source: str, first_line: int, names: set) -> dict[int, set]:
    """Per line of the file (the kernel's `def` at `first_line`): the names of `names` its statement
    uses, directly or through local variables computed from them (loops walked to a fixed point)."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return {}
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return {}
    offset = first_line - 1        # the text starts at the record's line (its decorators included)
    # a name -> the assumed parameters its value comes from
    flows: dict[str, set] = {n: {n} for n in names}
    statements = [s for s in ast.walk(fn) if isinstance(s, ast.stmt) and s is not fn]
    for _ in range(4):
        changed = False
        for s in statements:
            targets = _targets(s)
            if not targets:
                continue
            used = _uses(_value(s), flows)
            for t in targets:
                before = flows.get(t, set())
                if not used <= before:
                    flows[t] = before | used
                    changed = True
        if not changed:
            break
    out: dict[int, set] = {}
    for s in statements:
        if isinstance(s, (ast.For, ast.While, ast.If, ast.With)):
            part = s.iter if isinstance(s, ast.For) else s.test if isinstance(s, (ast.While, ast.If)) else None
            used = _uses(part, flows) if part is not None else set()
        else:
            used = _uses(s, flows)
        if used:
            for line in range(s.lineno, getattr(s, "end_lineno", s.lineno) + 1):
                out.setdefault(line + offset, set()).update(used)
    return out


def _targets(s) -> list[str]:
    if isinstance(s, ast.Assign):
        nodes = s.targets
    elif isinstance(s, (ast.AugAssign, ast.AnnAssign)):
        nodes = [s.target]
    elif isinstance(s, ast.For):
        nodes = [s.target]
    else:
        return []
    return [n.id for t in nodes for n in ast.walk(t) if isinstance(n, ast.Name)]


def _value(s):
    if isinstance(s, ast.For):
        return s.iter
    if isinstance(s, ast.AugAssign):
        return ast.Tuple(elts=[s.target, s.value])
    return s.value


def _uses(node, flows: dict) -> set:
    if node is None:
        return set()
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in flows:
            out |= flows[n.id]
    return out


def qualify(found: list, v: Variant) -> list:
    """The verdicts with the guesses they rest on said: a verdict on a line that uses an assumed
    parameter starts "on the assumed X=...: "; made-up wrapper inputs are one verdict of their own."""
    gs = guesses(v)
    if not gs:
        return found
    params = {g.name: g for g in gs if g.kind not in WRAPPER_INPUTS}
    inputs = [g for g in gs if g.kind in WRAPPER_INPUTS]
    src = v.source
    using = lines_using(src.text, src.line, set(params)) if src is not None and src.text and params else {}
    here = src.file if src is not None else None
    out = []
    for verdict in found:
        names = using.get(verdict.line, set()) if verdict.line is not None and (verdict.file in (None, here)) else set()
        if names:
            ordered = [params[n].shown for n in sorted(names)]
            said = ", ".join(ordered[:SHOWN]) + (", ..." if len(ordered) > SHOWN else "")
            verdict = dataclasses.replace(verdict, text=f"on the assumed {said}: {verdict.text}")
        out.append(verdict)
    if inputs:
        from kinspect.analysis.verdicts import Verdict

        made = ", ".join(g.shown for g in inputs if g.kind == "input")
        tested = ", ".join(g.shown for g in inputs if g.kind == "tested")
        wrapper = inputs[0].name.split(":")[0]
        if not made:
            text = (f"the launch values come from {wrapper}() called as the project's test calls it ({tested}): "
                    f"its inputs read from the test's text, not run")
        else:
            text = (f"the launch values come from {wrapper}() called with made-up inputs ({made})" +
                    (f" beside the test's ({tested})" if tested else "") +
                    f": sizes, dtypes and what follows from {'the made-up ones' if tested else 'them'} are guesses")
        out.append(Verdict(text, "info"))
    return out
