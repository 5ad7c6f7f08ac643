"""A diff of one stage between two variants: on normalized text, with repeats folded.

A bigger block size mostly repeats the same instructions more times, so the added lines of a
sweep's diff are runs of one short pattern. Runs of a pattern of up to MAX_PERIOD lines repeated
at least twice are shown once with their count ("×16"): the diff says what changed, not how often.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Sequence

from kinspect.diff.normalize import Normalized

MAX_PERIOD = 16
CONTEXT = 3


@dataclass(frozen=True)
class LineRun:
    """Lines of one kind (' ' same, '-' only in A, '+' only in B), shown once, `repeat` times over."""

    tag: str
    lines: tuple[str, ...]
    repeat: int = 1


@dataclass(frozen=True)
class Hunk:
    a_start: int        # 1-based line numbers in the original files
    a_count: int
    b_start: int
    b_count: int
    runs: tuple[LineRun, ...]


@dataclass(frozen=True)
class StageDiff:
    stage: str
    a_lines: int            # lines in each original file
    b_lines: int
    raw_changed: int        # lines removed + added by a diff of the files as they are
    changed: int            # lines removed + added by a diff of the normalized text
    shown: int              # lines the folded diff prints (removed + added)
    hunks: tuple[Hunk, ...]

    @property
    def identical(self) -> bool:
        return not self.hunks


def changed_lines(a: Sequence[str], b: Sequence[str]) -> int:
    return _changed(_matcher(a, b))


def _changed(m: difflib.SequenceMatcher) -> int:
    return sum((i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in m.get_opcodes() if tag != "equal")


def _matcher(a: Sequence[str], b: Sequence[str]) -> difflib.SequenceMatcher:
    # autojunk would call every common instruction "junk" in a normalized listing and miss matches
    return difflib.SequenceMatcher(None, a, b, autojunk=False)


def fold(lines: Sequence[str], tag: str) -> list[LineRun]:
    """Runs of a repeated pattern (period 1..MAX_PERIOD, at least twice) as one LineRun with a count."""
    runs, i, n = [], 0, len(lines)
    while i < n:
        best_p, best_k = 1, 1
        for p in range(1, min(MAX_PERIOD, (n - i) // 2) + 1):
            pattern = lines[i:i + p]
            k = 1
            while lines[i + k * p:i + (k + 1) * p] == pattern:
                k += 1
            if k >= 2 and p * k > best_p * best_k:
                best_p, best_k = p, k
        if best_k > 1:
            runs.append(LineRun(tag, tuple(lines[i:i + best_p]), best_k))
            i += best_p * best_k
        else:
            if runs and runs[-1].repeat == 1:
                runs[-1] = LineRun(tag, runs[-1].lines + (lines[i],))
            else:
                runs.append(LineRun(tag, (lines[i],)))
            i += 1
    return runs


def diff_stage(stage: str, a_raw: Sequence[str], b_raw: Sequence[str], a: Normalized, b: Normalized,
               context: int = CONTEXT) -> StageDiff:
    hunks, shown = [], 0
    matcher = _matcher(a.lines, b.lines)  # one matching serves the hunks and the count (opcodes are cached)
    for group in matcher.get_grouped_opcodes(context):
        runs: list[LineRun] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                runs.append(LineRun(" ", tuple(a.lines[i1:i2])))
                continue
            for t, part in (("-", a.lines[i1:i2]), ("+", b.lines[j1:j2])):
                folded = fold(part, t)
                shown += sum(len(r.lines) for r in folded)
                runs += folded
        (_, i1, _, j1, _), (_, _, i2, _, j2) = group[0], group[-1]
        hunks.append(Hunk(_origin(a, i1), i2 - i1, _origin(b, j1), j2 - j1, tuple(runs)))
    return StageDiff(stage=stage, a_lines=len(a_raw), b_lines=len(b_raw), raw_changed=changed_lines(a_raw, b_raw),
                     changed=_changed(matcher), shown=shown, hunks=tuple(hunks))


def _origin(n: Normalized, index: int) -> int:
    if not n.origin:
        return 0
    return n.origin[min(index, len(n.origin) - 1)]


def unified(d: StageDiff, a_name: str, b_name: str) -> list[str]:
    out = [f"--- {a_name}", f"+++ {b_name}"]
    for h in d.hunks:
        out.append(f"@@ -{h.a_start},{h.a_count} +{h.b_start},{h.b_count} @@ (normalized lines; numbers from the files)")
        for r in h.runs:
            out += _run_lines(r)
    return out


def _run_lines(r: LineRun) -> list[str]:
    if r.repeat == 1:
        return [f"{r.tag} {line}" for line in r.lines]
    if len(r.lines) == 1:
        return [f"{r.tag} {r.lines[0]}    ×{r.repeat}"]
    return [f"{r.tag} {line}" for line in r.lines] + [f"{r.tag} ... the {len(r.lines)} lines above ×{r.repeat}"]


def side_by_side(d: StageDiff, a_name: str, b_name: str, width: int = 160) -> list[str]:
    """Two columns, A left and B right; `|` changed, `<` only in A, `>` only in B."""
    col = max(20, (width - 3) // 2)
    out = [f"{_cut(a_name, col):<{col}}   {_cut(b_name, col)}", "-" * (2 * col + 3)]
    for h in d.hunks:
        out.append(f"@@ {h.a_start},{h.a_count}  {h.b_start},{h.b_count}")
        left: list[str] = []
        right: list[str] = []

        def flush():
            for k in range(max(len(left), len(right))):
                lt, rt = left[k] if k < len(left) else "", right[k] if k < len(right) else ""
                mark = "|" if lt and rt else ("<" if lt else ">")
                out.append(f"{_cut(lt, col):<{col}} {mark} {_cut(rt, col)}")
            left.clear()
            right.clear()

        for r in h.runs:
            shown = _run_lines(r)
            if r.tag == " ":
                flush()
                out += [f"{_cut(line[2:], col):<{col}}   {_cut(line[2:], col)}" for line in shown]
            else:
                (left if r.tag == "-" else right).extend(line[2:] for line in shown)
        flush()
    return out


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"
