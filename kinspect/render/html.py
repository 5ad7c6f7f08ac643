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
from kinspect.analysis.explain import Provenance
from kinspect.analysis.sol import Speed
from kinspect.diff.result import DiffResult, stage_rank
from kinspect.diff.table import Row
from kinspect.core.errors import KinspectError
from kinspect.render import plots
from kinspect.render.code import Packed, packed_all

esc = functools.partial(html.escape, quote=True)
# Variants whose stages and verdicts a page carries (the rest stay rows of its table): past a few
# hundred, highlighting every stage takes minutes and makes a page no browser opens
EMBEDDED = 200


class Report:
    """A report over the rows of a sweep or of saved variants; `chosen` is the variant shown first.
    With `program` (kinspect.analysis.program_view.ProgramView: a kernel per row, ranked, with its speed of light,
    provenance and counters) it is a program's report: the kernel table (the terminal's columns and
    header, kinspect.render.program) and its time-share and JIT charts come first, no plot draws a
    metric across unrelated kernels, and each variant is headed by its kernel's number in the table."""

    def __init__(self, result: DiffResult, reports: list[VariantReport] | dict[int, VariantReport], *,
                 chosen: int = 0, metrics=(), program=None, tunes: dict | None = None, embed: int | None = None):
        """`reports`: each row's analysis, or those of the rows embedded_rows() names (row -> analysis):
        the page carries no other, so a store of 20,000 variants is analysed in full 200 times."""
        self.result, self.chosen, self.metrics = result, chosen, tuple(metrics)
        self.program = program
        self.tunes = tunes or {}     # row index -> kinspect.tune.outcome.Tuned
        self.embedded = embedded_rows(result.rows, chosen, program, embed)
        self.reports = dict(enumerate(reports)) if isinstance(reports, list) else dict(reports)
        if any(self.reports.get(i) is None for i in self.embedded):
            raise ValueError("an analysis for each row the page carries in full")

    @property
    def left_out(self) -> int:
        """Variants in the table whose stages and verdicts the page does not carry (past the cap)."""
        return len(self.rows) - len(self.embedded)

    @property
    def rows(self) -> list[Row]:
        return self.result.rows

    @functools.cached_property
    def plots(self) -> list[plots.Plot]:
        from kinspect.core.optional import has

        if not has("matplotlib"):    # an extra (kinspect[report]): the page says so where the plots go
            return []
        if self.program is not None:
            rows = self.program.rows
            numbered = [(n, k.kernel) for n, k in enumerate(rows, 1)]
            found = [plots.time_share(rows), plots.jit_per_kernel(rows),
                     plots.program_roofline(numbered, self.program.sol) if self.program.sol is not None else None]
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
        from kinspect.files.store import write_atomic

        path = Path(path)
        data = self.html.encode("utf-8", "backslashreplace")    # a path's bytes that are not UTF-8: shown escaped
        try:
            write_atomic(path, data)
        except OSError as e:
            raise KinspectError(f"cannot write the report to '{path}': {e.strerror}; "
                                f"choose another place with -o") from None
        return len(data)


def embedded_rows(rows: list[Row], chosen: int, program=None, cap: int | None = None) -> list[int]:
    """The rows whose variant the page carries in full, in row order: the chosen one, then for a
    program each kernel's busiest variant by rank, then the rest in order, `cap` in all (default
    EMBEDDED)."""
    cap = EMBEDDED if cap is None else cap
    order = [chosen]
    if program is not None:
        from kinspect.analysis.summary import variant_key

        index = {variant_key(r.variant): i for i, r in enumerate(rows)}
        order += [index[k.busiest.key] for k in program.rows if k.busiest.key in index]
    picked = dict.fromkeys(i for i in order if 0 <= i < len(rows))
    for i in range(len(rows)):
        if len(picked) >= cap:
            break
        picked.setdefault(i)
    return sorted(list(picked)[:max(cap, 1)])


def page(report: Report) -> str:
    rows = report.rows
    blobs: dict[str, str] = {}
    variants, sections = [{"label": r.label, "codes": []} for r in rows], []
    embedded = report.embedded
    for i, found in zip(embedded, packed_all([rows[i].variant for i in embedded])):
        row = rows[i]
        entries = [{"name": c.name, "dialect": c.dialect, "blob": _blob(c, blobs)} for c in found]
        variants[i]["codes"] = entries
        sections.append(_variant(i, row, report.reports[i], found, entries, hidden=i != report.chosen,
                                 kernel=_kernel_of(report, row), tune=report.tunes.get(i)))
    if report.left_out:
        shown = set(embedded)
        sections += [_not_embedded(i, rows[i], len(embedded)) for i in range(len(rows)) if i not in shown]
    data = {"chosen": report.chosen, "variants": variants}
    script = package.files("kinspect.render").joinpath("report.js").read_text(encoding="utf-8")
    css = package.files("kinspect.render").joinpath("report.css").read_text(encoding="utf-8")
    from pygments.formatters import HtmlFormatter

    css += HtmlFormatter().get_style_defs("pre.lines .tx")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    policy = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
              f"img-src data:; base-uri 'none'; form-action 'none'")
    title = _title(rows) if report.program is None else \
        f"kinspect report: {len(report.program.rows)} kernels of a program"
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


def _not_embedded(i: int, row: Row, cap: int) -> str:
    """A variant past the cap: its row is in the table; clicking it says how to see it."""
    return (f'<section class="variant" id="variant-{i}" hidden><h2>{esc(f"Variant {i + 1}: {row.label}")}</h2>'
            f'<p class="note">{esc(_left_out_note(cap))} This one: kinspect show {esc(row.variant.path)}</p>'
            f'<div class="hits" hidden><span class="count"></span></div></section>')


def _left_out_note(cap: int) -> str:
    return (f"This page carries the stages and verdicts of {cap} variants (the one shown first and each kernel's "
            f"busiest first); the others are in the table only. To see one: kinspect report ... --variant N "
            f"(N: its row), or kinspect show its folder.")


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
    if report.left_out:
        extra.append(f"{report.left_out} of {len(rows)} variants left out of the page: " + _left_out_note(len(report.embedded)))
    notes = "".join(f'<p class="note">{esc(x)}</p>' for x in extra)
    return (f'<section id="variants"><h2>Variants</h2><p class="note">Click a row to show that variant below.</p>'
            f'<table class="metrics"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
            f"{notes}</section>")


def _program(report: Report) -> str:
    """The kernels of a program, ranked as in the terminal (by headroom when timed against ceilings): click
    a row for its busiest variant; click a heading to sort."""
    from kinspect.analysis.summary import variant_key
    from kinspect.render.program import columns, header, short_finding, tuning_note

    index = {variant_key(r.variant): i for i, r in enumerate(report.rows)}
    view = report.program
    kernels = view.kernels
    cols = columns(list(kernels))
    brief = any(h == "headroom" for h, _, _ in cols)
    head = "".join(f'<th class="{"k" if h == "kernel" else ""}" data-sort="{"text" if h in ("kernel", "where") else "num"}">'
                   f"{esc(h)}</th>" for h, _, _ in cols) + '<th class="finding" data-sort="num">top finding</th>'
    body = []
    for n, view_k in enumerate(kernels, 1):
        k = view_k.row
        cells = []
        for h, f, _ in cols:
            text = str(n) if f is None else f(view_k)
            if h == "kernel":
                cells.append(f'<td class="k" title="{esc(k.kernel)}">{esc(text)}</td>')
            elif h == "where":
                lines = view_k.provenance.lines if view_k.provenance is not None else ()
                cells.append(f'<td class="k" title="{esc(chr(10).join(lines))}">{esc(text)}</td>')
            else:
                cells.append(f'<td data-v="{esc(_sort_value(text))}">{esc(text)}</td>')
        top = k.top
        tip = "" if top is None else f"{top.text}\ntry: {top.advice}"
        shown = "-" if top is None else short_finding(top, mark=False) if brief else top.text
        cells.append(f'<td class="finding {"sev" + str(top.severity) if top else ""}" data-v="{top.severity if top else 0}" '
                     f'title="{esc(tip)}">{esc(shown)}</td>')
        i = index.get(k.busiest.key, 0)
        chosen = ' class="chosen"' if i == report.chosen else ""
        body.append(f'<tr data-variant="{i}"{chosen}>{"".join(cells)}</tr>')
    lines = header(list(view.rows), "", view.sol)
    first = lines[0].removeprefix(": ")
    notes = "".join(f'<p class="note">{esc(x.strip())}</p>' for x in lines[1:])
    if report.left_out:
        notes += (f'<p class="note">{report.left_out} of {len(report.rows)} variants left out of the page: '
                  f'{esc(_left_out_note(len(report.embedded)))}</p>')
    return (f'<section id="program"><h2>Kernels</h2><p class="note">{esc(first[0].upper() + first[1:])}. Click a row '
            f'to show its busiest variant below; click a heading to sort.</p>{notes}'
            f'<table class="metrics program"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
            + (f'<p class="note">{esc(note[0].upper() + note[1:])}.</p>' if (note := tuning_note(list(view.rows)))
               else "")
            + "</section>")


def _kernel_of(report: Report, row: Row):
    """(number in the program table, KernelView) of a row's kernel; None outside a program."""
    if report.program is None:
        return None
    for n, k in enumerate(report.program.kernels, 1):
        if k.kernel == row.variant.kernel:
            return n, k
    return None


def _sort_value(text: str) -> str:
    """A cell's value for sorting: its number (`1,234`, `12.5%`, `0.341`), or '' when it has none."""
    num = text.replace(",", "").rstrip("%").split(" ")[0]
    try:
        return repr(float(num))
    except ValueError:
        return ""


def _plots(report: Report) -> str:
    figures = [f'<figure class="plot" data-plot="{p.name}" aria-describedby="plot-{p.name}-text">'
               f'<div role="img" aria-label="{esc(p.title)}">{p.svg}</div>'
               f'<figcaption id="plot-{p.name}-text">{esc(p.caption)}{_plot_table(p)}</figcaption></figure>'
               for p in report.plots]
    from kinspect.core.optional import has, install_line

    if not figures:
        why = ("one variant: nothing swept to plot" if len(report.rows) < 2
               else "no metric varies across these variants")
        if not has("matplotlib"):
            why = f"No plots: they are drawn by matplotlib, which is not installed ({install_line('matplotlib')})"
        figures = [f'<p class="note">{esc(why)}</p>']
    if report.program is not None:
        figures.append('<p class="note">A program\'s kernels are unrelated: no plot draws a metric across them '
                       "but their speeds under the device's roofs. Sweep one kernel (kinspect report KERNEL -p ...) "
                       "to plot a metric against a parameter.</p>")
    if report.program is None and not any(p.name == "roofline" for p in report.plots):
        figures.append('<p class="note">No roofline: it needs each variant\'s runtime, bytes and FLOPs, which '
                       "kinspect report measures for shipped kernels on a machine with a GPU.</p>")
    return f'<section id="plots"><h2>Plots</h2><div class="plots">{"".join(figures)}</div></section>'


def _launches(v) -> str:
    """What the captured program launched the variant with: calls, grid, each argument's dtype, shape and
    strides or value (the most frequent signatures)."""
    from kinspect.render.launches import launch_lines

    lines = launch_lines(v)
    if not lines:
        return ""
    return '<h3>Launches</h3><ul class="launches mono">' + "".join(f"<li>{esc(x)}</li>" for x in lines) + "</ul>"


def _plot_table(p) -> str:
    """The figures a plot draws, as a table beside it (what a screen reader reads, and what to quote)."""
    if not p.table:
        return ""
    head, *rows = p.table
    th = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
    return (f'<details open><summary>{esc(p.title)} figures</summary><table class="metrics plot-figures">'
            f"<thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></details>")


def _variant(i: int, row: Row, analysis: VariantReport, found: list[Packed], entries: list[dict], hidden: bool,
             kernel=None, tune=None) -> str:
    v = row.variant
    spec = [f"{k}={x}" for k, x in v.constexprs.items()]
    spec += [f"{k}={v.options[k]}" for k in ("num_warps", "num_stages") if k in v.options]
    facts = " · ".join([v.kernel, str(v.target), *spec, v.path])
    cards = [_resources(row), _instructions(analysis), _jit(row), _runtime(row)]
    if kernel is not None:     # a program's kernel: headed by its number and name, its own config, its figures
        n, view_k = kernel
        k = view_k.row
        which = ""
        if len(k.variants) > 1:
            from kinspect.analysis.summary import variant_key

            keys = [x.key for x in k.variants]
            which = f" (variant {keys.index(variant_key(v)) + 1} of {len(keys)})" if variant_key(v) in keys else ""
        title = f"Kernel {n}: {v.kernel}{which}" + (f" · {', '.join(spec)}" if spec else "")
        cards = [_speed(view_k.speed), _origin(view_k.provenance), *cards]
    else:
        title = f"Variant {i + 1}: {row.label}"
    verdicts = "".join(
        f'<li class="{esc(x.level)}"{_line_attr(x, analysis)}>{esc(x.text)}'
        + (f'<span class="try">try: {esc(x.what_to_try)}</span>' if x.kind else "") + "</li>"
        for x in analysis.verdicts)
    notes = [f"problem: {p}" for p in analysis.problems] + [f"note: {n}" for n in v.notes]
    notes += [f"assumed: {name}={spec} (kinspect's guess: set your own with --arg/-p or --from)"
              for name, spec in row.metrics.assumed]
    return "".join([
        f'<section class="variant" id="variant-{i}"{" hidden" if hidden else ""}>',
        f"<h2>{esc(title)}</h2>", f'<p class="sub mono">{esc(facts)}</p>',
        f'<div class="cards">{"".join(c for c in cards if c)}</div>', _counters(kernel),
        _launches(v),
        f'<h3>Verdicts</h3><ul class="verdicts">{verdicts or "<li class=info>none</li>"}</ul>',
        "".join(f'<p class="note">{esc(n)}</p>' for n in notes), _tune(tune),
        _code_panes(v, found, entries), "</section>"])


def _tune(tune) -> str:
    """What `kinspect tune` measured for this variant: its candidates and timings, and the winner."""
    if tune is None:
        return ""
    from kinspect.render.tune import render

    return f'<h3>Tune</h3><pre class="tune">{esc(render(tune.result, tune.outcome))}</pre>'


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


def _resources(row: Row) -> str:
    """The variant's record, as the tables above show it (kinspect.analysis.summary.VariantMetrics)."""
    m = row.metrics
    return _card("Resources", [
        ("registers", None if m.registers is None else f"{m.registers} ({m.registers_from})"),
        ("spills", None if m.spills is None else f"{m.spills}"),
        ("shared memory", None if m.shared_bytes is None else size_text(m.shared_bytes)),
        ("occupancy", m.occupancy_text or None),
        ("code size", None if m.code_bytes is None else f"{m.code_bytes:,} bytes"),
    ])


def _instructions(analysis: VariantReport) -> str:
    m = analysis.isa
    if m is None:
        return _card("Machine code", [("stage", "none to analyse (no sass, amdgcn or CPU assembly)")])
    matrix = ", ".join(f"{u} {n:,}" for u, n in m.matrix.most_common()) or "0"
    widths = ", ".join(f"{n}×{bits}-bit" for bits, n in sorted(m.load_widths.items(), reverse=True))
    title = f"Machine code: {m.dialect}" if m.dialect.lower() == m.stage.lower() else f"{m.dialect} (from {m.stage})"
    return _card(title, [
        ("instructions", f"{m.instructions:,}"), ("vector", f"{m.vector:,}"), ("matrix", matrix),
        ("scalar FP", f"{m.scalar_fp:,}"), ("global loads", widths),
        ("top", ", ".join(f"{op} {n}" for op, n in m.mnemonics.most_common(6))),
    ])


def size_text(n: int) -> str:
    """A size in bytes as people read it: `0 bytes`, `16 bytes`, `1.5 KiB`, `48 KiB`, `2.3 MiB`."""
    if n < 1024:
        return f"{n:,} byte{'s' if n != 1 else ''}"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if n < 1024 or unit == "GiB":
            return f"{n:,.1f}".removesuffix(".0") + f" {unit}"


def _speed(s: Speed) -> str:
    """The kernel's speed of light, as the program table has it."""
    if s.gb_per_s is None and s.headroom_ms is None:
        return ""
    b = s.bytes_per_call
    return _card("Speed of light", [
        ("bytes per call", None if b is None else f"{'≤ ' if s.upper_bound else ''}"
         f"{b / 1e6:,.2f} MB ({s.bytes_method or None})"),
        ("achieved", None if s.gb_per_s is None else f"{s.gb_per_s:,.0f} GB/s" +
         ("" if s.pct_of_bandwidth is None else f", {s.pct_of_bandwidth:.0f}% of "
          + (s.bandwidth_of or
             {"L2": "the L2's bandwidth (inputs from the L2)", "L2 and DRAM": "the L2 and DRAM bandwidths (inputs "
              "partly from the L2)"}.get(s.bandwidth_ceiling, "copy bandwidth")))),
        ("TFLOP/s", None if s.tflop_per_s is None else f"{s.tflop_per_s:,.1f}" +
         ("" if s.pct_of_peak is None else f", {s.pct_of_peak:.0f}% of the matmul peak")),
        ("ideal", None if s.ideal_ms is None else f"{s.ideal_ms:,.3f} ms ({s.bound_by or None} bound)"),
        ("headroom", None if s.headroom_ms is None else f"{s.headroom_ms:,.3f} ms"),
    ])


def _origin(p: Provenance | None) -> str:
    if p is None:
        return ""
    if p.status != "recorded":
        return _card("Where it came from", [(p.status, p.why), ("fix", p.fix or None)])
    aten = ", ".join(p.origin.aten) if p.origin is not None else ""
    return _card("Where it came from", [("ATen ops", aten)] +
                 [(f"line {i}", x) for i, x in enumerate(p.lines, 1)] +
                 [("note", p.why or None), ("fix", p.fix or None)])


def _counters(kernel) -> str:
    """Nsight Compute's counters beside the findings they confirm or contradict (vec-report --counters)."""
    if kernel is None:
        return ""
    from kinspect.render.measured import MARKS

    view_k = kernel[1]
    c = view_k.counters
    if c is None:
        failed = view_k.counters_failed
        return f'<p class="note">counters: {esc(failed)}</p>' if failed else ""
    pairs = "".join(f"<li>{esc(MARKS[p.verdict])} {esc(p.finding)} → {esc(p.text)}</li>"
                    for p in sorted(c.pairs, key=lambda p: p.demoted))
    return (f'<h3>Counters (Nsight Compute {esc(c.measured.ncu_version)})</h3><p class="note">'
            f'{esc("; ".join(c.figures))}</p>' + (f'<ul class="verdicts">{pairs}</ul>' if pairs else ""))


def _jit(row: Row) -> str:
    stages = dict(row.metrics.jit_stages)
    if not stages:
        return ""
    top = max(stages.values()) or 1
    body = "".join(f'<dt>{esc(k)}</dt><dd>{us / 1000:,.1f} ms<span class="bar" style="width:{round(90 * us / top)}px">'
                   f"</span></dd>" for k, us in stages.items())
    total = "" if row.metrics.jit_us is None else f"<dt>total</dt><dd>{row.metrics.jit_us / 1000:,.1f} ms</dd>"
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
    ranked = [c for c in stages if stage_rank(c.dialect) is not None and c.lines]
    if ranked:
        return min(ranked, key=lambda c: stage_rank(c.dialect)).name
    return stages[0].name if stages else None
