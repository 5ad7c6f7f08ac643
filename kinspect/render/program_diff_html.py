"""`kinspect report STORE_A STORE_B`: a program diff (kinspect.diff.programs) as one offline HTML file: each
run's header, the kernels ranked by GPU time lost per step (the terminal's table, every column), the story
and the stage diffs of one kernel. No script at all: the policy forbids every script, and every text is
escaped. The same input gives the same bytes."""

from __future__ import annotations

import functools
import html
from importlib import resources as package
from pathlib import Path

from kinspect.diff.programs import ProgramDiff
from kinspect.diff.textdiff import unified
from kinspect.render import program_diff as text_view

esc = functools.partial(html.escape, quote=True)
POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def page(d: ProgramDiff) -> str:
    css = package.files("kinspect.render").joinpath("report.css").read_text(encoding="utf-8")
    title = f"kinspect report: {d.a.path} → {d.b.path}"
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f'<meta http-equiv="Content-Security-Policy" content="{esc(POLICY)}">',
             f"<title>{esc(title)}</title><style>{css}</style></head><body>",
             f"<header><h1>{esc(title)}</h1></header>",
             "<section><pre>" + esc("\n".join(text_view.header("A", d.a) + text_view.header("B", d.b))) + "</pre>",
             _table(d), "</section>"]
    if d.story:
        parts.append(f"<section><h2>The top change</h2><p>{esc(d.story)}</p></section>")
    p = d.pair
    if p is not None:
        steps = ", ".join(f"{s.title or s.stage} {'identical' if s.identical else f'{s.changed_lines} lines differ'}"
                          for s in p.stages)
        parts.append(f"<section><h2>{esc(p.kernel)}: its stages</h2><p>{esc(steps)}</p>")
        for diff in (p.first_diff, p.isa):
            if diff is not None and not diff.identical:
                lines = unified(diff, "A " + (p.a.name or p.a.path), "B " + (p.b.name or p.b.path))
                parts.append(f"<h3>{esc(diff.stage)}</h3><pre>{esc(chr(10).join(lines))}</pre>")
        parts.append("</section>")
    parts += [f'<p class="note">{esc(n)}</p>' for n in d.notes]
    parts += ["</body></html>", ""]
    return "\n".join(parts)


def _table(d: ProgramDiff) -> str:
    cols = text_view.columns(d)
    head = "".join(f"<th>{esc(h)}</th>" for h, _ in cols)
    body = []
    for i, c in enumerate(d.changes, 1):
        cells = "".join(f"<td title=\"{esc(c.kernel) if h == 'kernel' else ''}\">"
                        f"{esc(str(i) if f is None else c.kernel if h == 'kernel' else f(c))}</td>" for h, f in cols)
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def save(d: ProgramDiff, path: str | Path) -> int:
    """Write the file whole or not at all; its size in bytes."""
    from kinspect.core.errors import KinspectError
    from kinspect.files.store import write_atomic

    data = page(d).encode("utf-8", "backslashreplace")
    try:
        write_atomic(Path(path), data)
    except OSError as e:
        raise KinspectError(f"cannot write the report to '{path}': {e.strerror}; choose another place with -o") from None
    return len(data)
