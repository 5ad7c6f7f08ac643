"""The program view in the terminal: one row per kernel, with its worst finding; ranked by headroom
(GPU time minus the ideal time) when the capture timed the kernels, else by GPU time or findings.

The columns and the header lines are shared with the HTML report (kinspect.render.html), so both
show the same figures."""

from __future__ import annotations

from kinspect.analysis.findings import SEVERITY_NAMES
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


def _where(extra: dict, width: int = 40) -> str:
    """Where a kernel came from, short: the model's file:line (or its ATen ops) that made it."""
    p = extra.get("provenance") or {}
    text = p.get("short") or {"own source": "(own source)", "not recorded": "-"}.get(p.get("status"), "-")
    sites = [s for s in extra.get("call_sites") or [] if s.get("site")]
    if sites and not p.get("short"):       # a hand-written kernel: the user's line that launched it
        text = _site_short(sites[0]) + (f" (+{len(sites) - 1} sites)" if len(sites) > 1 else "")
    return text if len(text) <= width else text[:width - 1].rstrip(" ,") + "…"


def _site_short(s: dict) -> str:
    return f"{s['file'].rsplit('/', 1)[-1]}:{s['line']}" if s.get("file") else s["site"]


def variant_lines(kernel: str, extra: dict) -> list[str]:
    """What tells a kernel's variants apart, and which were compiled while the program ran it."""
    found = extra.get("variants_explained") or []
    out = [f"  {kernel}: {len(found)} variants"] if found else []
    for w in found:
        line = f"    {w['variant']}: {', '.join(w['differs'])}"
        if w["compiled_while_running"]:
            line += f"; ! compiled while the program was running the kernel, by {w['trigger']}"
        out.append(line)
    return out


def call_site_lines(kernel: str, extra: dict) -> list[str]:
    """The call sites of one kernel, with calls and GPU ms each (≈: split from a variant's time by calls)."""
    sites = extra.get("call_sites") or []
    if not sites:
        return []
    out = [f"  {kernel}: launched from {len(sites)} call site{'s' if len(sites) != 1 else ''}"]
    for s in sites:
        ms = "" if s.get("gpu_ms") is None else f"  {'≈' if s.get('gpu_ms_estimated') else ''}{s['gpu_ms']:,.3f} ms"
        out.append(f"    {s['calls']:>8,} calls{ms}  {s['site'] or '(not recorded: launches past the signatures kept)'}")
    return out


def columns(rows: list[KernelRow], extras: dict | None = None) -> list[tuple[str, callable, str]]:
    """(header, cell of a row, alignment) of the columns that say something for these rows. With
    `extras` (kernel -> kinspect.analysis.explain.kernel_extras) holding speed-of-light figures, the
    columns are those of "what to fix first": GPU time, GB/s, % of bandwidth, ideal, headroom, where."""
    extras = extras or {}
    timed = any(r.gpu_ms is not None for r in rows)
    launched = any(r.calls is not None for r in rows)
    sol = any(extras.get(r.kernel, {}).get("headroom_ms") is not None for r in rows)
    # GB/s need bytes and GPU time only: shown with no ceiling to take a % of (a store without device.json)
    rates = not sol and any(extras.get(r.kernel, {}).get("gb_per_s") is not None for r in rows)
    x = lambda r, k: extras.get(r.kernel, {}).get(k)    # noqa: E731
    gbps = ("GB/s", lambda r: ("≤" if x(r, "bytes_upper_bound") and x(r, "gb_per_s") is not None else "") +
            _num(x(r, "gb_per_s"), ",.0f"), ">")
    cols = [("#", None, ">"), ("kernel", lambda r: r.name, "<")]
    if not sol or any(len(r.variants) > 1 for r in rows):
        cols.append(("var", lambda r: str(len(r.variants)), ">"))
    if launched:
        cols.append(("calls", lambda r: "-" if r.calls is None else f"{r.calls:,}", ">"))
    if timed and not sol:
        cols.append(("GPU %", lambda r: "-" if r.share is None else f"{100 * r.share:.1f}%", ">"))
    if timed:
        cols.append(("GPU ms", lambda r: "-" if r.gpu_ms is None else f"{r.gpu_ms:,.3f}", ">"))
    if rates:
        cols += [gbps, ("bytes/call", lambda r: _bytes(x(r, "bytes_per_call")), ">")]
    if sol:
        cols += [gbps,
                 ("%spec" if any("datasheet" in (x(r, "pct_of_bandwidth_of") or "") for r in rows) else "%bw",
                  lambda r: _num(x(r, "pct_of_bandwidth"), ".0f") + (
                      "ᴸ²" if (x(r, "bandwidth_ceiling") or "DRAM") != "DRAM" else ""), ">"),
                 ("ideal", lambda r: _num(x(r, "ideal_ms"), ",.3f") + {"launch": "ᴸ", "compute": "ᶜ"}.get(
                     x(r, "bound_by"), ""), ">"),
                 ("headroom", lambda r: _num(x(r, "headroom_ms"), ",.3f"), ">")]
    else:
        cols.append(("JIT ms", lambda r: _ms(r.jit_us) + ("*" if r.jit_us is not None and r.jit_cached else ""), ">"))
    cols += [
        ("regs", lambda r: "-" if r.busiest.registers is None else str(r.busiest.registers), ">"),
        ("spills", lambda r: "-" if not r.busiest.spills else str(r.busiest.spills), ">"),
        ("occ", lambda r: "-" if r.busiest.occupancy is None else f"{r.busiest.occupancy:.0%}", ">"),
    ]
    if sol:
        cols.append(("where", lambda r: _where(extras.get(r.kernel, {})), "<"))
    else:
        cols += [("vector", lambda r: f"{r.busiest.vector:,}", ">"), ("matrix", _matrix, ">")]
    if any((extras.get(r.kernel, {}).get("ranks") or {}).get("slowest_rank") is not None for r in rows):
        cols.insert(next(i for i, c in enumerate(cols) if c[0] == "GPU ms") + 1 if any(c[0] == "GPU ms" for c in cols)
                    else len(cols), ("slowest rank", _slowest_rank(extras), ">"))
    return [c for c in cols if c[1] is None or any(c[1](r) != "-" for r in rows)]


def _slowest_rank(extras: dict):
    """The cell of the rank that spent the most GPU time on a kernel, and by how much over the fastest."""
    def cell(r) -> str:
        ranks = extras.get(r.kernel, {}).get("ranks") or {}
        rank = ranks.get("slowest_rank")
        if rank is None:
            return "-"
        ms = ranks["gpu_ms_by_rank"][str(rank)]
        spread = ranks.get("rank_spread")
        return f"r{rank} {ms:,.3f}" + (f" +{100 * spread:.0f}%" if spread else "")
    return cell


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


def table(rows: list[KernelRow], width: int = 160, extras: dict | None = None) -> list[str]:
    cols = columns(rows, extras)
    brief = any(h == "headroom" for h, _, _ in cols)
    cells = [[h for h, _, _ in cols]] + [[str(i) if f is None else f(r) for _, f, _ in cols]
                                         for i, r in enumerate(rows, 1)]
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


def header(rows: list[KernelRow], where: str, sol: dict | None = None) -> list[str]:
    """The lines above the table: what it covers and how it is ranked; with the program's speed of light
    (kinspect.analysis.sol.ProgramSol.to_json), the program's totals, the Triton kernels' share of all
    the GPU time, the largest other kernels, and the ceilings and per-launch floor used."""
    variants = sum(len(r.variants) for r in rows)
    head = f"{where}: {len(rows)} kernels, {variants} variant{'s' if variants != 1 else ''}"
    calls = [r.calls for r in rows if r.calls is not None]
    if calls:
        head += f", {sum(calls):,} launches"
    gpu = [r.gpu_ms for r in rows if r.gpu_ms is not None]
    ranked = sol is not None and sol.get("headroom_ms") is not None
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
        cover = "" if abs(sol["gpu_ms_with_ideal"] - sol["gpu_ms"]) < 5e-4 else \
            f" (of the {sol['gpu_ms_with_ideal']:,.3f} ms of kernels with an ideal time)"
        out.append(f"  program: GPU {sol['gpu_ms']:,.3f} ms, ideal {sol['ideal_ms']:,.3f} ms, headroom "
                   f"{sol['headroom_ms']:,.3f} ms{cover}")
    share = sol.get("triton_share_of_gpu_time")
    if share is not None:
        others = ", ".join(f"{other_name(k['name'])} {k['ms']:,.2f} ms ({k['calls']:,} calls)"
                           for k in (sol.get("largest_other_kernels") or [])[:3])
        window = sol.get("share_window")
        window = (f" {window}" if window else
                  " (a store from before kinspect recorded the window: it may include GPU work before the first "
                  "Triton launch, such as weight initialisation)")
        apart = sol.get("tuning_other_kernels") is not None
        out.append(f"  Triton kernels: {100 * share:.1f}% of the GPU time the profiler saw{window}, "
                   + ("autotuning apart" if apart else "their autotuning included")
                   + (f"; the largest others: {others}" if others else ""))
        comm = sol.get("communication_kernels") or []
        if comm:
            out.append("  communication: " + ", ".join(f"{other_name(k['name'])} {k['ms']:,.2f} ms ({k['calls']:,} calls)"
                                                        for k in comm[:3]))
    else:
        out.append("  the share of Triton kernels in all GPU time is unknown: the store does not list the other GPU "
                   "work (captured by an older kinspect; kinspect capture --time records it)")
    late = sol.get("compiled_while_running") or {}
    if late:
        out.append(f"  ! recompiled while running: {', '.join(late)} (a variant compiled after the program had "
                   f"launched another; -k NAME says what triggered it)")
    ranks = sol.get("ranks")
    if ranks:
        by = ranks["gpu_ms_by_rank"]
        slow = ranks.get("slowest_rank")
        out.append(f"  ranks: {len(ranks['ranks'])}; Triton GPU ms per rank: " +
                   ", ".join(f"r{r} {ms:,.3f}" for r, ms in by.items()) +
                   (f"; slowest rank {slow}" if slow is not None and len(by) > 1 else "") + " (--rank N shows one)")
        for note in ranks.get("notes") or []:
            out.append(f"  ! {note}")
    if sol.get("tuning_other_kernels"):
        fills = ", ".join(f"{other_name(k['name'])} {k['ms']:,.2f} ms ({k['calls']:,} calls)"
                          for k in sol["tuning_other_kernels"][:2])
        out.append(f"  autotuning: {sol['tuning_gpu_ms']:,.2f} ms of GPU work while autotuners benchmarked, not the "
                   f"program's (its trials and what ran between them: {fills})")
    out.append(f"  {sol['ceilings_note']}")
    if ranked:
        out.append(f"  ideal = the longest of: bytes at the {'datasheet' if 'datasheet' in sol['ceilings_note'] else 'copy'} "
                   f"bandwidth (ᴸ²: the L2's), FLOPs at the matmul peak (ᶜ), launches at the floor (ᴸ); "
                   f"{sol['launch_floor_note']}")
    return out


def summary(rows: list[KernelRow], *, where: str, width: int = 160, shown: int = 0, extras: dict | None = None,
            sol: dict | None = None, detailed=()) -> str:
    """The program table, with header lines saying what it covers and a line per finding kind."""
    out = header(rows, where, sol) + table(rows, width, extras)
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
    sites = [line for k in detailed for line in call_site_lines(k, (extras or {}).get(k, {}))]
    why = [line for k in detailed for line in variant_lines(k, (extras or {}).get(k, {}))]
    if why:
        out.append("  variants (what the JIT specialized differently):")
        out += why
    if sites:
        out.append("  call sites (the user's line that launched each kernel; ≈: a variant's time split by calls):")
        out += sites
    if shown:
        out.append(f"  details of the top {shown} below (--all for every kernel, -k NAME for one)")
    return "\n".join(out)
