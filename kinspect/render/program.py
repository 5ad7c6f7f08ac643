"""The program view in the terminal: one row per kernel, with its worst finding; ranked by headroom
(GPU time minus the ideal time) when the capture timed the kernels, else by GPU time or findings.

The columns and the header lines are shared with the HTML report (kinspect.render.html), so both
show the same figures."""

from __future__ import annotations

from kinspect.analysis.explain import KernelView
from kinspect.analysis.findings import SEVERITY_NAMES
from kinspect.analysis.program_view import ProgramView
from kinspect.analysis.sol import ProgramSol
from kinspect.analysis.summary import KernelRow, display_name
from kinspect.render.table import aligned

MARK = {3: "!!", 2: "!", 1: "-"}


def _ms(us: int | None) -> str:
    return "-" if us is None else f"{us / 1000:,.0f}" if us >= 100_000 else f"{us / 1000:,.1f}"


def _matrix(r: KernelRow) -> str:
    b = r.busiest
    return f"{b.matrix:,} " + "+".join(u for u, _ in b.matrix_units) if b.matrix else "0"


def _num(x, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def _bytes(n) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return str(n)


def _where(k: KernelView, width: int = 40) -> str:
    """Where a kernel came from, short: the model's file:line (or its ATen ops) that made it."""
    p = k.provenance
    text = "-" if p is None else p.short or {"own source": "(own source)"}.get(p.status, "-")
    sites = [s for s in k.call_sites if s.site is not None]
    if sites and not (p is not None and p.short):       # a hand-written kernel: the user's line that launched it
        text = _site_short(sites[0]) + (f" (+{len(sites) - 1} sites)" if len(sites) > 1 else "")
    return text if len(text) <= width else text[:width - 1].rstrip(" ,") + "…"


def _site_short(s) -> str:
    """A kinspect.analysis.callsites.SiteCost's line, short: file:line, or its description."""
    return f"{s.site.file.rsplit('/', 1)[-1]}:{s.site.line}" if s.site.file else s.site.describe()


def variant_lines(k: KernelView) -> list[str]:
    """What tells a kernel's variants apart, and which were compiled while the program ran it."""
    found = k.variants_explained
    out = [f"  {k.kernel}: {len(found)} variants"] if found else []
    for w in found:
        line = f"    {w.name}: {', '.join(w.differs)}"
        if w.while_running:
            line += f"; ! compiled while the program was running the kernel, by {w.trigger}"
        out.append(line)
    return out


def call_site_lines(k: KernelView) -> list[str]:
    """The call sites of one kernel, with calls and GPU ms each (≈: split from a variant's time by calls)."""
    sites = k.call_sites
    if not sites:
        return []
    out = [f"  {k.kernel}: launched from {len(sites)} call site{'s' if len(sites) != 1 else ''}"]
    for s in sites:
        ms = "" if s.gpu_ms is None else f"  {'≈' if s.estimated else ''}{s.gpu_ms:,.3f} ms"
        where = s.site.describe() if s.site is not None else "(not recorded: launches past the signatures kept)"
        out.append(f"    {s.calls:>8,} calls{ms}  {where}")
    return out


def columns(kernels: list[KernelView]) -> list[tuple[str, callable, str]]:
    """(header, cell of a kernel, alignment) of the columns that say something for these kernels. When
    their speed of light has headroom figures, the columns are those of "what to fix first": GPU time,
    GB/s, % of bandwidth, ideal, headroom, where."""
    rows = [k.row for k in kernels]
    timed = any(r.gpu_ms is not None for r in rows)
    launched = any(r.calls is not None for r in rows)
    sol = any(k.speed.headroom_ms is not None for k in kernels)
    # GB/s need bytes and GPU time only: shown with no ceiling to take a % of (a store without device.json)
    rates = not sol and any(k.speed.gb_per_s is not None for k in kernels)
    gbps = ("GB/s", lambda k: ("≤" if k.speed.upper_bound and k.speed.gb_per_s is not None else "") +
            _num(k.speed.gb_per_s, ",.0f"), ">")
    cols = [("#", None, ">"), ("kernel", lambda k: k.row.name, "<")]
    if not sol or any(len(r.variants) > 1 for r in rows):
        cols.append(("var", lambda k: str(len(k.row.variants)), ">"))
    if launched:
        cols.append(("calls", lambda k: "-" if k.row.calls is None else f"{k.row.calls:,}", ">"))
    if timed and not sol:
        cols.append(("GPU %", lambda k: "-" if k.row.share is None else f"{100 * k.row.share:.1f}%", ">"))
    if timed:
        cols.append(("GPU ms", lambda k: "-" if k.row.gpu_ms is None else f"{k.row.gpu_ms:,.3f}", ">"))
    if rates:
        cols += [gbps, ("bytes/call", lambda k: _bytes(k.speed.bytes_per_call), ">")]
    if sol:
        cols += [gbps,
                 ("%spec" if any("datasheet" in k.speed.bandwidth_of for k in kernels) else "%bw",
                  lambda k: _num(k.speed.pct_of_bandwidth, ".0f") + (
                      "ᴸ²" if (k.speed.bandwidth_ceiling or "DRAM") != "DRAM" else ""), ">"),
                 ("ideal", lambda k: _num(k.speed.ideal_ms, ",.3f") + {"launch": "ᴸ", "compute": "ᶜ"}.get(
                     k.speed.bound_by, ""), ">"),
                 ("headroom", lambda k: _num(k.speed.headroom_ms, ",.3f"), ">")]
    else:
        cols.append(("JIT ms", lambda k: _ms(k.row.jit_us) + ("*" if k.row.jit_us is not None and k.row.jit_cached
                                                              else ""), ">"))
    cols += [
        ("regs", lambda k: "-" if k.row.busiest.registers is None else str(k.row.busiest.registers), ">"),
        ("spills", lambda k: "-" if not k.row.busiest.spills else str(k.row.busiest.spills), ">"),
        ("occ", lambda k: "-" if k.row.busiest.occupancy is None else f"{k.row.busiest.occupancy:.0%}", ">"),
    ]
    if sol:
        cols.append(("where", _where, "<"))
    else:
        cols += [("vector", lambda k: f"{k.row.busiest.vector:,}", ">"), ("matrix", lambda k: _matrix(k.row), ">")]
    if any(k.ranks is not None and k.ranks.slowest is not None for k in kernels):
        cols.insert(next(i for i, c in enumerate(cols) if c[0] == "GPU ms") + 1 if any(c[0] == "GPU ms" for c in cols)
                    else len(cols), ("slowest rank", _slowest_rank, ">"))
    return [c for c in cols if c[1] is None or any(c[1](k) != "-" for k in kernels)]


def _slowest_rank(k: KernelView) -> str:
    """The cell of the rank that spent the most GPU time on a kernel, and by how much over the fastest."""
    slow = k.ranks.slowest if k.ranks is not None else None
    if slow is None:
        return "-"
    rank, ms = slow
    spread = k.ranks.spread
    return f"r{rank} {ms:,.3f}" + (f" +{100 * spread:.0f}%" if spread else "")


def short_finding(f, mark: bool = True) -> str:
    """A finding in a few words (its kind's title and line), for a table with little room left."""
    from kinspect.analysis.findings import KINDS

    title = KINDS[f.kind].title if f.kind in KINDS else f.text
    return (f"{MARK[f.severity]} " if mark else "") + title + (f" (line {f.line})" if f.line else "")


def other_name(name: str, width: int = 48) -> str:
    """A profiler's kernel name (a C++ signature: `void ns::kernel<...>(params)`) cut to what names it."""
    name = name.removeprefix("void ")
    if name.endswith(")") and "(" in name:
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i] or name
                break
    return display_name(name, width)


def table(kernels: list[KernelView], width: int = 160) -> list[str]:
    cols = columns(kernels)
    brief = any(h == "headroom" for h, _, _ in cols)
    cells = [[h for h, _, _ in cols]] + [[str(i) if f is None else f(k) for _, f, _ in cols]
                                         for i, k in enumerate(kernels, 1)]
    rows = [k.row for k in kernels]
    out = []
    for text, r in zip(aligned(cells, [a for _, _, a in cols]), [None] + rows):
        room = max(width - len(text) - 2, 30)
        if r is None:
            finding = "top finding"
        elif r.top is None:
            finding = "-"
        else:
            finding = short_finding(r.top) if brief else f"{MARK[r.top.severity]} {r.top.text}"
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


def header(rows: list[KernelRow], where: str, sol: ProgramSol | None = None) -> list[str]:
    """The lines above the table: what it covers and how it is ranked; with the program's speed of light,
    the program's totals, the Triton kernels' share of all the GPU time, the largest other kernels, and
    the ceilings and per-launch floor used."""
    variants = sum(len(r.variants) for r in rows)
    head = f"{where}: {len(rows)} kernels, {variants} variant{'s' if variants != 1 else ''}"
    calls = [r.calls for r in rows if r.calls is not None]
    if calls:
        head += f", {sum(calls):,} launches"
    gpu = [r.gpu_ms for r in rows if r.gpu_ms is not None]
    total = sol.total if sol is not None else None
    ranked = total is not None and total.headroom_ms is not None
    if gpu:
        head += f", {sum(gpu):,.3f} ms of GPU time captured; ranked by " + (
            "headroom (GPU time minus the ideal time: what fixing each kernel could win at most)" if ranked
            else "GPU time")
    else:
        head += "; ranked by their worst finding (no GPU time captured: kinspect capture --time)"
    out = [head]
    if sol is None or not gpu:
        return out
    if ranked:
        cover = "" if abs(total.covered_ms - total.gpu_ms) < 5e-4 else \
            f" (of the {total.covered_ms:,.3f} ms of kernels with an ideal time)"
        out.append(f"  program: GPU {total.gpu_ms:,.3f} ms, ideal {total.ideal_ms:,.3f} ms, headroom "
                   f"{total.headroom_ms:,.3f} ms{cover}")
    share = sol.triton_share
    if share is not None:
        comm = sol.others.communication
        others = ", ".join(f"{other_name(name)} {k['ms']:,.2f} ms ({k['calls']:,} calls)"
                           for name, k in [(n, k) for n, k in sol.others.kernels.items() if n not in comm][:3])
        window = sol.others.window
        window = (f" {window}" if window else
                  " (a store from before kinspect recorded the window: it may include GPU work before the first "
                  "Triton launch, such as weight initialisation)")
        apart = bool(sol.others.tuning)
        out.append(f"  Triton kernels: {100 * share:.1f}% of the GPU time the profiler saw{window}, "
                   + ("autotuning apart" if apart else "their autotuning included")
                   + (f"; the largest others: {others}" if others else ""))
        if comm:
            out.append("  communication: " + ", ".join(f"{other_name(name)} {k['ms']:,.2f} ms ({k['calls']:,} calls)"
                                                        for name, k in list(comm.items())[:3]))
    else:
        out.append("  the share of Triton kernels in all GPU time is unknown: the store does not list the other GPU "
                   "work (captured by an older kinspect; kinspect capture --time records it)")
    late = [k for k, ws in sol.variants.items() if any(w.while_running for w in ws)]
    if late:
        out.append(f"  ! recompiled while running: {', '.join(late)} (a variant compiled after the program had "
                   f"launched another; -k NAME says what triggered it)")
    ranks = sol.ranks
    if ranks is not None:
        by = ranks.gpu_ms
        slow = ranks.slowest
        out.append(f"  ranks: {len(ranks.ranks)}; Triton GPU ms per rank: " +
                   ", ".join(f"r{r} {ms:,.3f}" for r, ms in sorted(by.items())) +
                   (f"; slowest rank {slow[0]}" if slow is not None and len(by) > 1 else "") + " (--rank N shows one)")
        for note in ranks.notes():
            out.append(f"  ! {note}")
    if sol.others is not None and sol.others.tuning:
        fills = ", ".join(f"{other_name(name)} {k['ms']:,.2f} ms ({k['calls']:,} calls)"
                          for name, k in list(sol.others.tuning.items())[:2])
        out.append(f"  autotuning: {sol.tuning_ms + sol.others.tuning_ms:,.2f} ms of GPU work while autotuners "
                   f"benchmarked, not the program's (its trials and what ran between them: {fills})")
    out.append(f"  {sol.ceilings_note}")
    if ranked:
        out.append(f"  ideal = the longest of: bytes at the {'datasheet' if 'datasheet' in sol.ceilings_note else 'copy'} "
                   f"bandwidth (ᴸ²: the L2's), FLOPs at the matmul peak (ᶜ), launches at the floor (ᴸ); "
                   f"{sol.floor_note}")
    return out


def summary(view: ProgramView, *, width: int = 160) -> str:
    """The program table, with header lines saying what it covers and a line per finding kind, and which
    kernels' details follow (view.details), with their variants and call sites."""
    rows, shown = list(view.rows), len(view.details)
    out = header(rows, view.where, view.sol) + table(list(view.kernels), width)
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
    detailed = [k for k in (view.kernel(d.variant.kernel) for d in view.details) if k is not None]
    sites = [line for k in detailed for line in call_site_lines(k)]
    why = [line for k in detailed for line in variant_lines(k)]
    if why:
        out.append("  variants (what the JIT specialized differently):")
        out += why
    if sites:
        out.append("  call sites (the user's line that launched each kernel; ≈: a variant's time split by calls):")
        out += sites
    if shown:
        out.append(f"  details of the top {shown} below (--all for every kernel, -k NAME for one)")
    return "\n".join(out)
