"""The program view in the terminal: one row per kernel, busiest first, with its worst finding."""

from __future__ import annotations

from kinspect.analysis.findings import SEVERITY_NAMES
from kinspect.analysis.summary import KernelRow

MARK = {3: "!!", 2: "!", 1: "-"}


def _ms(us: int | None) -> str:
    return "-" if us is None else f"{us / 1000:,.0f}" if us >= 100_000 else f"{us / 1000:,.1f}"


def _matrix(r: KernelRow) -> str:
    b = r.busiest
    return f"{b.matrix:,} " + "+".join(u for u, _ in b.matrix_units) if b.matrix else "0"


def columns(rows: list[KernelRow]) -> list[tuple[str, callable, str]]:
    """(header, cell of a row, alignment) of the columns that say something for these rows."""
    timed = any(r.gpu_ms is not None for r in rows)
    launched = any(r.calls is not None for r in rows)
    cols = [
        ("#", None, ">"), ("kernel", lambda r: r.name, "<"), ("var", lambda r: str(len(r.variants)), ">"),
    ]
    if launched:
        cols.append(("calls", lambda r: "-" if r.calls is None else f"{r.calls:,}", ">"))
    if timed:
        cols += [("GPU %", lambda r: "-" if r.share is None else f"{100 * r.share:.1f}%", ">"),
                 ("GPU ms", lambda r: "-" if r.gpu_ms is None else f"{r.gpu_ms:,.3f}", ">")]
    cols += [
        ("JIT ms", lambda r: _ms(r.jit_us) + ("*" if r.jit_us is not None and r.jit_cached else ""), ">"),
        ("regs", lambda r: "-" if r.busiest.registers is None else str(r.busiest.registers), ">"),
        ("spills", lambda r: "-" if r.busiest.spills is None else str(r.busiest.spills), ">"),
        ("occ", lambda r: "-" if r.busiest.occupancy is None else f"{r.busiest.occupancy:.0%}", ">"),
        ("vector", lambda r: f"{r.busiest.vector:,}", ">"),
        ("matrix", _matrix, ">"),
    ]
    return [c for c in cols if c[1] is None or any(c[1](r) != "-" for r in rows)]


def table(rows: list[KernelRow], width: int = 160) -> list[str]:
    cols = columns(rows)
    cells = [[h for h, _, _ in cols]] + [[str(i) if f is None else f(r) for _, f, _ in cols]
                                         for i, r in enumerate(rows, 1)]
    widths = [max(len(c[k]) for c in cells) for k in range(len(cols))]
    out = []
    for line, r in zip(cells, [None] + rows):
        text = "  " + "  ".join(f"{c:{a}{w}}" for c, w, (_, _, a) in zip(line, widths, cols))
        room = max(width - len(text) - 2, 24)
        if r is None:
            finding = "top finding"
        elif r.top is None:
            finding = "-"
        else:
            finding = f"{MARK[r.top.severity]} {r.top.text}"
        out.append(f"{text}  {finding[:room - 1] + '…' if len(finding) > room else finding}".rstrip())
    return out


def tuning_note(rows: list[KernelRow]) -> str:
    """What the rows leave out: launches autotuners made while benchmarking configs ('' if none)."""
    tuning = sum(v.tuning_calls for r in rows for v in r.variants)
    if not tuning:
        return ""
    tuning_ms = sum(v.tuning_ms for r in rows for v in r.variants)
    gpu = f" ({tuning_ms:,.3f} ms of GPU time)" if tuning_ms else ""
    return (f"not counted above: {tuning:,} launches{gpu} by autotuners benchmarking configs (Inductor's, "
            f"triton.autotune's), which a run with empty caches pays once")


def summary(rows: list[KernelRow], *, where: str, width: int = 160, shown: int = 0) -> str:
    """The program table, with a header line saying what it covers and a line per finding kind."""
    variants = sum(len(r.variants) for r in rows)
    head = f"{where}: {len(rows)} kernels, {variants} variant{'s' if variants != 1 else ''}"
    calls = [r.calls for r in rows if r.calls is not None]
    if calls:
        head += f", {sum(calls):,} launches"
    gpu = [r.gpu_ms for r in rows if r.gpu_ms is not None]
    if gpu:
        head += f", {sum(gpu):,.3f} ms of GPU time captured; ranked by GPU time"
    else:
        head += "; ranked by their worst finding (no GPU time captured: kinspect capture --time)"
    out = [head] + table(rows, width)
    kinds: dict[str, list[str]] = {}
    advice: dict[str, set[str]] = {}
    for i, r in enumerate(rows, 1):
        for v in r.variants:
            for f in v.findings:
                advice.setdefault(f.kind, set()).add(f.advice)
                if str(i) not in kinds.setdefault(f.kind, []):
                    kinds[f.kind].append(str(i))
    if kinds:
        from kinspect.analysis.findings import KINDS

        out.append("  findings (rows):")
        for kind in sorted(kinds, key=lambda k: (-KINDS[k].severity, k)):
            k = KINDS[kind]
            out.append(f"    {MARK[k.severity]} {k.title} ({SEVERITY_NAMES[k.severity]}): "
                       f"{', '.join(kinds[kind][:12])}{' …' if len(kinds[kind]) > 12 else ''}; try: "
                       f"{next(iter(advice[kind])) if len(advice[kind]) == 1 else k.advice}")
    note = tuning_note(rows)
    if note:
        out.append(f"  {note}")
    if any(r.jit_us is not None and r.jit_cached for r in rows):
        out.append("  * JIT ms of a cache hit: the program found the kernel in Triton's on-disk cache; a first run "
                   "with an empty cache compiles it")
    if shown:
        out.append(f"  details of the top {shown} below (--all for every kernel, -k NAME for one)")
    return "\n".join(out)
