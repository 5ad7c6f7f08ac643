"""Terminal output of `kinspect diff`: the metric table, JIT times per stage, the stage diff."""

from __future__ import annotations

from kinspect.diff.result import DiffResult
from kinspect.diff.table import Row
from kinspect.diff.textdiff import side_by_side, unified
from kinspect.render.table import aligned
from kinspect.render.terminal import human_bytes, ms


def _num(x) -> str:
    return "-" if x is None else f"{x:,}"


def _matrix(r: Row) -> str:
    m = r.metrics
    if not m.matrix:
        return "0"
    return f"{m.matrix:,} " + "+".join(sorted(u for u, _ in m.matrix_units))


def columns(rows: list[Row]) -> list[tuple[str, callable]]:
    """(header, cell text of a row) for the metric table; "#" has no function (the row number)."""
    isa = rows[0].metrics.isa if len({r.metrics.isa for r in rows}) == 1 else "isa"
    cols = [
        ("#", None), ("variant", lambda r: r.label),
        ("regs", lambda r: _num(r.metrics.registers)), ("spills", lambda r: _num(r.metrics.spills)),
        ("shared", lambda r: "-" if r.metrics.shared_bytes is None else human_bytes(r.metrics.shared_bytes)),
        ("occupancy", lambda r: "-" if r.metrics.occupancy is None
         else f"{r.metrics.occupancy:.0%} {r.metrics.occupancy_limiter}"),
        (f"{isa} instrs", lambda r: _num(r.metrics.instructions)), ("vector", lambda r: _num(r.metrics.vector)),
        ("matrix", _matrix),
        ("code", lambda r: "-" if r.metrics.code_bytes is None else human_bytes(r.metrics.code_bytes)),
        ("JIT ms", lambda r: ms(r.metrics.jit_us) or "-"),
    ]
    if any(r.runtime for r in rows):
        cols += [
            ("time ms (p20-p80)", lambda r: "-" if r.runtime is None else
             f"{r.runtime.median_ms:.4g} ({r.runtime.p20_ms:.4g}-{r.runtime.p80_ms:.4g})"),
            ("GB/s", lambda r: "-" if r.runtime is None or r.runtime.gbps is None else f"{r.runtime.gbps:,.0f}"),
            ("TFLOP/s", lambda r: "-" if r.runtime is None or r.runtime.tflops is None
             else f"{r.runtime.tflops:,.1f}"),
            ("% roofline", lambda r: "-" if r.runtime is None or r.runtime.roofline_pct is None
             else f"{r.runtime.roofline_pct:.0f}% {r.runtime.roofline_of}"),
            ("vs #1 on its GPU", lambda r: "-" if r.runtime is None or r.runtime.vs_baseline is None
             else f"{r.runtime.vs_baseline:.3f}x"),
            ("timed on", lambda r: "-" if r.runtime is None or not r.runtime.gpu else r.runtime.gpu),
        ]
    # drop columns that say nothing for any row (e.g. registers on a CPU)
    return [(h, f) for h, f in cols if f is None or any(f(r) != "-" for r in rows)]


def table(rows: list[Row]) -> list[str]:
    cols = columns(rows)
    cells = [[h for h, _ in cols]] + [[str(i) if f is None else f(r) for h, f in cols]
                                      for i, r in enumerate(rows, 1)]
    left = {"variant"}
    return [line.rstrip() for line in aligned(cells, ["<" if h in left else ">" for h, _ in cols])]


def jit_table(rows: list[Row]) -> list[str]:
    stages = list(dict.fromkeys(s for r in rows for s, _ in r.metrics.jit_stages))
    if not stages:
        return []
    head = ["#"] + stages + ["total"]
    body = [[str(i)] + [ms(dict(r.metrics.jit_stages).get(s)) or "-" for s in stages] + [ms(r.metrics.jit_us) or "-"]
            for i, r in enumerate(rows, 1)]
    return aligned([head] + body, ">")


def findings_lines(rows: list[Row]) -> list[str]:
    """Each variant's worst finding and what to try, by row number."""
    from kinspect.render.program import MARK

    found = [(i, r.metrics.findings[0], len(r.metrics.findings)) for i, r in enumerate(rows, 1) if r.metrics.findings]
    if not found:
        return []
    out = ["", "  findings (the worst of each variant)"]
    for i, f, n in found:
        more = f" (+{n - 1} more)" if n > 1 else ""
        out.append(f"  {i:>3} {MARK[f.severity]} {f.text}{more}")
        out.append(f"        try: {f.advice}")
    return out


def assumed_lines(rows: list[Row]) -> list[str]:
    """The values kinspect assumed to compile the variants (the same for every row of one sweep, as a
    rule: said once then), so no figure above reads as the program's own."""
    sets = list(dict.fromkeys(r.metrics.assumed for r in rows if r.metrics.assumed))
    if not sets:
        return []
    out = ["", "  assumed (kinspect's guesses, not the program's values: set them with --arg/-p or --from)"]
    for assumed in sets:
        which = [str(i) for i, r in enumerate(rows, 1) if r.metrics.assumed == assumed]
        head = "all" if len(which) == len(rows) else ",".join(which)
        out.append(f"  {head:>3} " + ", ".join(f"{k}={v}" for k, v in assumed))
    return out


def render(result: DiffResult, *, side: bool = False, width: int = 160) -> str:
    rows = result.rows
    out = table(rows)
    jit = jit_table(rows)
    if jit:
        out += ["", "  JIT ms per stage (source = building the IR from the Python AST)"] + jit
    out += findings_lines(rows)
    out += assumed_lines(rows)
    for o in result.failed:
        out.append(f"  failed: {o.job.describe()}: {o.error}")
    for link in result.links:
        out.append(f"  {link.describe()}")
    out += [f"  note: {n}" for n in result.notes]
    d = result.text
    if d is not None:
        a, b = rows[result.pair[0]], rows[result.pair[1]]
        out += ["", f"{result.stage}: {a.label} ({d.a_lines:,} lines) vs {b.label} ({d.b_lines:,} lines); "
                    f"changed lines: {d.raw_changed:,} raw, {d.changed:,} normalized, {d.shown:,} shown "
                    f"(numbers, debug lines, addresses and names normalized; repeats folded)"]
        if d.identical:
            out.append("  identical after normalization")
        elif side:
            out += side_by_side(d, a.label, b.label, width=width)
        else:
            out += unified(d, a.label, b.label)
    return "\n".join(out)
