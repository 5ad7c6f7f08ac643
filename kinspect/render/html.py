"""`kinspect report`: one self-contained HTML file (inline CSS, JS and SVG; no network request).

    report = Report(result, reports)   # a DiffResult (kinspect.diff.compare) and each row's analysis
    report.save("r.html")
    report                             # in Jupyter: shown through _repr_html_

The page holds the metric table, the plots, and per variant its resources, verdicts, JIT time per
stage, Python source and every text stage highlighted by pygments. Stages are stored gzipped (a
sweep's LLVM IR is tens of MB of highlighted HTML) and unpacked by the browser when shown.
Every text from kernels, paths and IR is escaped; a Content-Security-Policy allows only the page's
own script (by hash), so nothing injected can run and nothing can be fetched. The same input gives
the same bytes: no dates, fixed gzip headers, fixed SVG ids.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import json
import os
from importlib import resources as package
from pathlib import Path

from kinspect.analysis import VariantReport
from kinspect.diff.result import STAGE_PREFERENCE, DiffResult
from kinspect.diff.table import Row
from kinspect.errors import KinspectError
from kinspect.render import plots
from kinspect.render.code import Packed, packed_all

esc = functools.partial(html.escape, quote=True)


class Report:
    """A report over the rows of a sweep or of saved variants; `chosen` is the variant shown first.
    With `program` (kinspect.analysis.summary.KernelRow, one per kernel, ranked) it is a program's
    report: the kernel table and its time-share and JIT charts come first, and no plot draws a
    metric across unrelated kernels."""

    def __init__(self, result: DiffResult, reports: list[VariantReport], *, chosen: int = 0, metrics=(),
                 program=None):
        if len(reports) != len(result.rows):
            raise ValueError("one analysis per row")
        self.result, self.reports, self.chosen, self.metrics = result, reports, chosen, tuple(metrics)
        self.program = program

    @property
    def rows(self) -> list[Row]:
        return self.result.rows

    @functools.cached_property
    def plots(self) -> list[plots.Plot]:
        from kinspect.optional import has

        if not has("matplotlib"):    # an extra (kinspect[report]): the page says so where the plots go
            return []
        if self.program is not None:
            found = [plots.time_share(self.program), plots.jit_per_kernel(self.program), plots.roofline(self.rows)]
        else:
            found = [plots.sweep(self.rows, self.metrics), plots.roofline(self.rows)]
        return [p for p in found if p is not None]

    @functools.cached_property
    def html(self) -> str:
        return page(self)

    def _repr_html_(self) -> str:
        """The page in a sandboxed frame: its script runs, isolated from the notebook's."""
        return (f'<iframe srcdoc="{esc(self.html)}" sandbox="allow-scripts" title="kinspect report" '
                f'style="width:100%;height:85vh;border:1px solid #dde3e8"></iframe>')

    def save(self, path: str | Path) -> int:
        """Write the file whole or not at all (a temporary file renamed over it); its size in bytes."""
        from kinspect.store import write_atomic

        path = Path(path)
        data = self.html.encode("utf-8", "backslashreplace")    # a path's bytes that are not UTF-8: shown escaped
        try:
            write_atomic(path, data)
        except OSError as e:
            raise KinspectError(f"cannot write the report to '{path}': {e.strerror}; "
                                f"choose another place with -o") from None
        return len(data)


def page(report: Report) -> str:
    rows = report.rows
    blobs: dict[str, str] = {}
    variants, sections = [], []
    for i, (row, analysis, found) in enumerate(zip(rows, report.reports, packed_all([r.variant for r in rows]))):
        entries = [{"name": c.name, "dialect": c.dialect, "blob": _blob(c, blobs)} for c in found]
        variants.append({"label": row.label, "codes": entries})
        sections.append(_variant(i, row, analysis, found, entries, hidden=i != report.chosen))
    data = {"chosen": report.chosen, "variants": variants}
    script = package.files("kinspect.render").joinpath("report.js").read_text(encoding="utf-8")
    css = package.files("kinspect.render").joinpath("report.css").read_text(encoding="utf-8")
    from pygments.formatters import HtmlFormatter

    css += HtmlFormatter().get_style_defs("pre.lines .tx")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    policy = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
              f"img-src data:; base-uri 'none'; form-action 'none'")
    title = _title(rows) if report.program is None else \
        f"kinspect report: {len(report.program)} kernels of a program"
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{esc(policy)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{css}</style></head><body>",
        f"<header><h1>{esc(title)}</h1><p class=\"sub\">{esc(_subtitle(rows))}</p></header>",
        *((_program(report),) if report.program is not None else (_table(report),)), _plots(report), *sections,
        '<noscript><p class="note">The stages need JavaScript to unpack.</p></noscript>',
        f'<script type="application/json" id="kinspect-data">{_json(data)}</script>',
        *(f'<script type="application/octet-stream" id="blob-{k}">{v}</script>' for k, v in blobs.items()),
        f"<script>{script}</script>", "</body></html>", "",
    ]
    return "\n".join(parts)


def _blob(code: Packed, blobs: dict[str, str]) -> str:
    """Each distinct packed text once (a sweep's variants often share their source)."""
    key = hashlib.sha256(code.blob.encode("ascii")).hexdigest()[:16]
    blobs.setdefault(key, code.blob)
    return key


def _json(data) -> str:
    """JSON that cannot end its <script> element or open a comment."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _title(rows: list[Row]) -> str:
    groups = list(dict.fromkeys(_group(r) for r in rows))
    return "kinspect report: " + ", ".join(groups[:3]) + (f" and {len(groups) - 3} more" if len(groups) > 3 else "")


def _group(r: Row) -> str:
    v = r.variant
    return Path(v.path).parent.name if v.origin == "kinspect" and v.path else v.kernel


def _subtitle(rows: list[Row]) -> str:
    targets = ", ".join(dict.fromkeys(str(r.variant.target) for r in rows))
    tritons = ", ".join(dict.fromkeys(r.variant.triton_version for r in rows if r.variant.triton_version))
    n = len(rows)
    return f"{n} variant{'s' if n != 1 else ''} · {targets}" + (f" · triton {tritons}" if tritons else "") + \
        f" · kinspect {_version()}"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kinspect")
    except PackageNotFoundError:
        return "(not installed)"


def _table(report: Report) -> str:
    from kinspect.render.sweep import columns

    rows, result = report.rows, report.result
    cols = columns(rows)
    head = "".join(f'<th class="{"variant" if h == "variant" else ""}">{esc(h)}</th>' for h, _ in cols)
    body = []
    for i, r in enumerate(rows):
        cells = "".join(f'<td class="{"variant" if h == "variant" else ""}">{esc(str(i + 1) if f is None else f(r))}</td>'
                        for h, f in cols)
        chosen = ' class="chosen"' if i == report.chosen else ""
        body.append(f'<tr data-variant="{i}"{chosen}>{cells}</tr>')
    extra = [f"failed: {o.job.describe()}: {o.error}" for o in result.failed]
    extra += [link.describe() for link in result.links] + list(result.notes)
    notes = "".join(f'<p class="note">{esc(x)}</p>' for x in extra)
    return (f'<section id="variants"><h2>Variants</h2><p class="note">Click a row to show that variant below.</p>'
            f'<table class="metrics"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
            f"{notes}</section>")


def _program(report: Report) -> str:
    """The kernels of a program, ranked: click a row for its busiest variant; click a heading to sort."""
    from kinspect.render.program import columns, tuning_note

    from kinspect.analysis.summary import variant_key

    index = {variant_key(r.variant): i for i, r in enumerate(report.rows)}
    kernels = report.program
    cols = columns(kernels)
    head = "".join(f'<th class="{"k" if h == "kernel" else ""}" data-sort="{"text" if h == "kernel" else "num"}">'
                   f"{esc(h)}</th>" for h, _, _ in cols) + '<th class="finding" data-sort="num">top finding</th>'
    body = []
    for n, k in enumerate(kernels, 1):
        cells = []
        for h, f, _ in cols:
            text = str(n) if f is None else f(k)
            if h == "kernel":
                cells.append(f'<td class="k" title="{esc(k.kernel)}">{esc(text)}</td>')
            else:
                cells.append(f'<td data-v="{esc(_sort_value(text))}">{esc(text)}</td>')
        top = k.top
        tip = "" if top is None else f"{top.text}\ntry: {top.advice}"
        cells.append(f'<td class="finding {"sev" + str(top.severity) if top else ""}" data-v="{top.severity if top else 0}" '
                     f'title="{esc(tip)}">{esc(top.text if top else "-")}</td>')
        i = index.get(k.busiest.key, 0)
        chosen = ' class="chosen"' if i == report.chosen else ""
        body.append(f'<tr data-variant="{i}"{chosen}>{"".join(cells)}</tr>')
    total = sum(len(k.variants) for k in kernels)
    timed = any(k.gpu_ms for k in kernels)
    rank = "by GPU time" if timed else "by the severity of their worst finding (no GPU time was captured)"
    return (f'<section id="program"><h2>Kernels</h2><p class="note">{len(kernels)} kernels, {total} variants, '
            f'ranked {esc(rank)}. Click a row to show its busiest variant below; click a heading to sort.</p>'
            f'<table class="metrics program"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
            + (f'<p class="note">{esc(note[0].upper() + note[1:])}.</p>' if (note := tuning_note(kernels)) else "")
            + "</section>")


def _sort_value(text: str) -> str:
    """A cell's value for sorting: its number (`1,234`, `12.5%`, `0.341`), or '' when it has none."""
    num = text.replace(",", "").rstrip("%").split(" ")[0]
    try:
        return repr(float(num))
    except ValueError:
        return ""


def _plots(report: Report) -> str:
    figures = [f'<figure class="plot" data-plot="{p.name}">{p.svg}<figcaption>{esc(p.caption)}</figcaption></figure>'
               for p in report.plots]
    from kinspect.optional import has, install_line

    if not figures:
        why = ("one variant: nothing swept to plot" if len(report.rows) < 2
               else "no metric varies across these variants")
        if not has("matplotlib"):
            why = f"No plots: they are drawn by matplotlib, which is not installed ({install_line('matplotlib')})"
        figures = [f'<p class="note">{esc(why)}</p>']
    if report.program is not None:
        figures.append('<p class="note">A program\'s kernels are unrelated: no plot draws a metric across them. '
                       "Sweep one kernel (kinspect report KERNEL -p ...) to plot a metric against a parameter.</p>")
    if not any(p.name == "roofline" for p in report.plots):
        figures.append('<p class="note">No roofline: it needs runtimes with bytes and FLOPs, measured on a GPU '
                       "(kinspect report on a machine with one times shipped kernels).</p>")
    return f'<section id="plots"><h2>Plots</h2><div class="plots">{"".join(figures)}</div></section>'


def _variant(i: int, row: Row, analysis: VariantReport, found: list[Packed], entries: list[dict], hidden: bool) -> str:
    v = row.variant
    spec = [f"{k}={x}" for k, x in v.constexprs.items()]
    spec += [f"{k}={v.options[k]}" for k in ("num_warps", "num_stages") if k in v.options]
    facts = " · ".join([v.kernel, str(v.target), *spec, v.path])
    cards = [_resources(row, analysis), _instructions(analysis), _jit(row), _runtime(row)]
    verdicts = "".join(
        f'<li class="{esc(x.level)}"{_line_attr(x, analysis)}>{esc(x.text)}'
        + (f'<span class="try">try: {esc(x.what_to_try)}</span>' if x.kind else "") + "</li>"
        for x in analysis.verdicts)
    notes = [f"problem: {p}" for p in analysis.problems] + [f"note: {n}" for n in v.notes]
    return "".join([
        f'<section class="variant" id="variant-{i}"{" hidden" if hidden else ""}>',
        f"<h2>Variant {i + 1}: {esc(row.label)}</h2>", f'<p class="sub mono">{esc(facts)}</p>',
        f'<div class="cards">{"".join(c for c in cards if c)}</div>',
        f'<h3>Verdicts</h3><ul class="verdicts">{verdicts or "<li class=info>none</li>"}</ul>',
        "".join(f'<p class="note">{esc(n)}</p>' for n in notes),
        _code_panes(v, found, entries), "</section>"])


def _line_attr(verdict, analysis: VariantReport) -> str:
    """Verdicts about a line of the kernel's own file link to it."""
    from kinspect.analysis.verdicts import is_kernel_file

    if verdict.line is None or verdict.file is None:
        return ""
    if not is_kernel_file(analysis.variant, verdict.file):
        return ""
    return f' data-line="{int(verdict.line)}" title="show line {int(verdict.line)}"'


def _card(title: str, items: list[tuple[str, str]]) -> str:
    items = [(k, x) for k, x in items if x not in (None, "")]
    if not items:
        return ""
    body = "".join(f"<dt>{esc(k)}</dt><dd>{esc(x)}</dd>" for k, x in items)
    return f'<div class="card"><h3>{esc(title)}</h3><dl>{body}</dl></div>'


def _resources(row: Row, analysis: VariantReport) -> str:
    r = analysis.resources
    return _card("Resources", [
        ("registers", None if r.registers is None else f"{r.registers} ({r.source})"),
        ("spills", None if r.spills is None else f"{r.spills}"),
        ("shared memory", None if r.shared_bytes is None else f"{r.shared_bytes / 1024:g} KiB"),
        ("occupancy", r.occupancy.describe() if r.occupancy else None),
        ("code size", None if row.code_bytes is None else f"{row.code_bytes:,} bytes"),
    ])


def _instructions(analysis: VariantReport) -> str:
    m = analysis.isa
    if m is None:
        return _card("Machine code", [("stage", "none to analyse (no sass, amdgcn or CPU assembly)")])
    matrix = ", ".join(f"{u} {n:,}" for u, n in m.matrix.most_common()) or "0"
    widths = ", ".join(f"{n}×{bits}-bit" for bits, n in sorted(m.load_widths.items(), reverse=True))
    return _card(f"{m.dialect} ({m.stage})", [
        ("instructions", f"{m.instructions:,}"), ("vector", f"{m.vector:,}"), ("matrix", matrix),
        ("scalar FP", f"{m.scalar_fp:,}"), ("global loads", widths),
        ("top", ", ".join(f"{op} {n}" for op, n in m.mnemonics.most_common(6))),
    ])


def _jit(row: Row) -> str:
    stages = row.jit_stages
    if not stages:
        return ""
    top = max(stages.values()) or 1
    body = "".join(f'<dt>{esc(k)}</dt><dd>{us / 1000:,.1f} ms<span class="bar" style="width:{round(90 * us / top)}px">'
                   f"</span></dd>" for k, us in stages.items())
    total = "" if row.jit_us is None else f"<dt>total</dt><dd>{row.jit_us / 1000:,.1f} ms</dd>"
    times = row.variant.times
    if times is not None and times.startup_us:
        total += (f'<dt>Triton start-up</dt><dd>{times.startup_us / 1000:,.1f} ms <span class="note">(once per '
                  f"process, not this kernel's)</span></dd>")
    return f'<div class="card"><h3>JIT ms per stage</h3><dl>{body}{total}</dl></div>'


def _runtime(row: Row) -> str:
    t = row.runtime
    if t is None:
        return ""
    return _card("Runtime", [
        ("median", f"{t.median_ms:.4g} ms (p20 {t.p20_ms:.4g}, p80 {t.p80_ms:.4g}; CV {t.cv:.1%})"),
        ("GB/s", None if t.gbps is None else f"{t.gbps:,.0f}"),
        ("TFLOP/s", None if t.tflops is None else f"{t.tflops:,.2f}"),
        ("roofline", None if t.roofline_pct is None else f"{t.roofline_pct:.0f}% {t.roofline_of}"),
        ("method", t.method),
    ])


def _code_panes(v, found: list[Packed], entries: list[dict]) -> str:
    blob = {e["name"]: e["blob"] for e in entries}
    python = next((c for c in found if c.name == "python"), None)
    stages = [c for c in found if c.name != "python"]
    if python is None:
        left = '<p class="stage-note">No Python source was recorded with this variant.</p>'
        head = "Python source"
    else:
        left = f'<pre class="lines" data-code="python" data-blob="{blob["python"]}" data-first="{python.first}"></pre>'
        head = f"Python · {os.path.basename(v.source.file)}"
    default = _default_stage(stages)
    tabs = "".join(f'<button data-stage="{esc(c.name)}"{" class=on" if c.name == default else ""}>{esc(c.name)}'
                   f'<span class="n"></span></button>' for c in stages)
    pres = "".join(
        (f'<div class="stage-note" data-code="{esc(c.name)}"{"" if c.name == default else " hidden"}>{esc(c.note)}</div>'
         if c.note else "")
        + f'<pre class="lines stage-code" data-code="{esc(c.name)}" data-blob="{blob[c.name]}" data-first="1"'
        f'{"" if c.name == default else " hidden"}></pre>' for c in stages)
    hits = ('<span class="hits"><span class="count"></span> <button data-step="-1" title="previous">&#9664;</button>'
            '<button data-step="1" title="next">&#9654;</button></span>')
    return (f'<h3>Source and stages</h3><div class="code"><div class="pane"><div class="head">{esc(head)}</div>{left}'
            f'</div><div class="pane"><div class="head"><span class="tabs">{tabs}</span>{hits}</div>{pres}</div></div>')


def _default_stage(stages: list[Packed]) -> str | None:
    ranked = [c for c in stages if c.dialect in STAGE_PREFERENCE and c.lines]
    if ranked:
        return min(ranked, key=lambda c: STAGE_PREFERENCE.index(c.dialect)).name
    return stages[0].name if stages else None
