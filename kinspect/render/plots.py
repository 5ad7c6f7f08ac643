"""The report's plots, drawn by matplotlib as SVG text: a metric (or the runtime) against the swept
parameter, and the variants on a roofline when they have runtimes.

No pyplot and no global state: each plot is its own Figure, rendered with a fixed hash salt and no
date, so the same rows give the same bytes.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from kinspect.diff.table import Row

# metric name -> (axis label, how to read it from a row)
METRICS = {
    "runtime": ("median time (ms)", lambda r: r.runtime.median_ms if r.runtime else None),
    "gbps": ("GB/s", lambda r: r.runtime.gbps if r.runtime else None),
    "tflops": ("TFLOP/s", lambda r: r.runtime.tflops if r.runtime else None),
    "registers": ("registers per thread", lambda r: r.metrics.registers),
    "spills": ("spilled bytes", lambda r: r.metrics.spills),
    "shared": ("shared memory (KiB)", lambda r: None if r.metrics.shared_bytes is None else r.metrics.shared_bytes / 1024),
    "occupancy": ("occupancy (%)", lambda r: None if r.metrics.occupancy is None else 100 * r.metrics.occupancy),
    "instructions": ("instructions", lambda r: r.metrics.instructions or None),
    "vector": ("vector instructions", lambda r: r.metrics.vector),
    "matrix": ("matrix instructions", lambda r: r.metrics.matrix),
    "code": ("code size (KiB)", lambda r: None if r.metrics.code_bytes is None else r.metrics.code_bytes / 1024),
    "jit": ("JIT time (ms)", lambda r: None if r.metrics.jit_us is None else r.metrics.jit_us / 1000),
}
DEFAULT_METRICS = ("registers", "instructions", "code", "jit")


@dataclass(frozen=True)
class Plot:
    name: str      # "sweep", "roofline", "program-roofline", "time-share" or "jit"
    title: str
    svg: str       # an <svg> element, ready to inline
    caption: str
    # the figures the plot draws, as text beside it (screen readers, and numbers to quote): a header row, then rows
    table: tuple[tuple[str, ...], ...] = ()


def swept(rows: list[Row]) -> list[str]:
    """What differs between the rows: constexpr names, num_warps/num_stages, target."""
    keys = []
    facets = [_facets(r) for r in rows]
    for key in dict.fromkeys(k for f in facets for k in f):
        if len({repr(f.get(key)) for f in facets}) > 1:
            keys.append(key)
    return keys


def _facets(r: Row) -> dict:
    v = r.variant
    return {**v.constexprs, **{k: v.options[k] for k in ("num_warps", "num_stages") if k in v.options},
            "target": str(v.target)}


LABELLED = 40        # variants a sweep plot names on its axis; past that, their row numbers


def sweep(rows: list[Row], metrics=()) -> Plot | None:
    """Each metric against the swept parameter (numeric, on a log2 axis for powers of two), or
    against the variants' labels when several things vary. None for a single variant."""
    if len(rows) < 2:
        return None
    names = list(metrics) or (["runtime"] if any(r.runtime for r in rows) else list(DEFAULT_METRICS))
    series = [(n, [METRICS[n][1](r) for r in rows]) for n in names]
    series = [(n, ys) for n, ys in series if any(y is not None for y in ys)]
    if not series:
        return None
    keys = swept(rows)
    xs = [_facets(r).get(keys[0]) for r in rows] if len(keys) == 1 else None
    numeric = xs is not None and all(isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 for x in xs)
    fig = _figure(width=3.4 * len(series), height=2.9, panels=len(series))
    for ax, (name, ys) in zip(fig.axes, series):
        label, _ = METRICS[name]
        pts = [(i, y) for i, y in enumerate(ys) if y is not None]
        at = [xs[i] if numeric else i for i, _ in pts]
        # a line says "in between lies this"; between unrelated variants (labels, not a swept number) nothing does
        ax.plot(at, [y for _, y in pts], marker="o", color="#2a6fb0", linestyle="-" if numeric else "none")
        if name == "runtime":
            lo = [y - rows[i].runtime.p20_ms for i, y in pts]
            hi = [rows[i].runtime.p80_ms - y for i, y in pts]
            ax.errorbar(at, [y for _, y in pts], yerr=[lo, hi], fmt="none", ecolor="#555", capsize=3)
        ax.set_ylabel(_text(label))
        ax.set_ylim(bottom=0)
        if numeric:
            if all(x & (x - 1) == 0 for x in xs if isinstance(x, int)) and len(set(xs)) > 2:
                ax.set_xscale("log", base=2)
            if len(set(xs)) <= LABELLED:
                ax.set_xticks(sorted(set(xs)), [_text(str(x)) for x in sorted(set(xs))])
            ax.set_xlabel(_text(keys[0]))
        elif len(rows) <= LABELLED:
            ax.set_xticks(range(len(rows)), [_text(r.label) for r in rows], rotation=30, ha="right", fontsize=7)
        else:        # past a few dozen, labels overlap (and laying out thousands takes minutes): row numbers
            from matplotlib.ticker import FuncFormatter, MaxNLocator

            ax.xaxis.set_major_locator(MaxNLocator(nbins=12, integer=True))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{int(x) + 1}"))
            ax.set_xlabel("variant (its row in the table)")
        ax.grid(alpha=0.3)
    what = keys[0] if numeric else "variant"
    caption = ", ".join(METRICS[n][0] for n, _ in series) + f" against {what}"
    return Plot(name="sweep", title="Sweep", svg=_svg(fig, "sweep"), caption=caption)


def roofline(rows: list[Row]) -> Plot | None:
    """Achieved TFLOP/s against arithmetic intensity, under the measured copy bandwidth and matmul
    peak; None unless some variant has a runtime with both rates and the roofs."""
    pts = [(r, r.runtime) for r in rows if r.runtime and r.runtime.gbps and r.runtime.tflops]
    roofs = [(t.copy_gbps, t.peak_tflops) for _, t in pts if t.copy_gbps and t.peak_tflops]
    if not pts or not roofs:
        return None
    bw, peak = roofs[0]
    intensity = [t.tflops * 1e3 / t.gbps for _, t in pts]
    lo, hi = min(intensity + [peak * 1e3 / bw]) / 8, max(intensity + [peak * 1e3 / bw]) * 8
    fig = _figure(width=5.2, height=3.6, panels=1)
    ax = fig.axes[0]
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(xs, [min(peak, bw * x / 1e3) for x in xs], color="#999", linewidth=1.5)
    ax.plot(intensity, [t.tflops for _, t in pts], marker="o", linestyle="none", color="#c0392b")
    for (r, t), x in zip(pts[:LABELLED], intensity):     # past a few dozen, names would overlap
        ax.annotate(_text(r.label), (x, t.tflops), textcoords="offset points", xytext=(5, 4), fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("TFLOP/s")
    ax.grid(alpha=0.3, which="both")
    caption = (f"roofs: measured copy bandwidth {bw:,.0f} GB/s and torch.matmul peak {peak:,.1f} TFLOP/s")
    return Plot(name="roofline", title="Roofline", svg=_svg(fig, "roofline"), caption=caption)


def program_roofline(kernels, sol) -> Plot | None:
    """Each timed kernel of a captured program as a point under the store's measured ceilings. `kernels`
    are (number in the program table, name) in the table's order; `sol` is its kinspect.analysis.sol.
    ProgramSol. Kernels with a FLOP count (tl.dot) go on the roofline proper: arithmetic intensity
    (FLOP per byte) against achieved TFLOP/s, under the copy-bandwidth slope and one flat roof per
    measured matmul dtype. Kernels without one (kinspect counts only tl.dot's FLOPs) have no intensity
    to place: they go on the bandwidth panel beside it, achieved GB/s under the copy roof, each at its
    number in the table. None when no kernel has bytes and GPU time."""
    speeds = [(n, name, sol.speeds[name]) for n, name in kernels if name in sol.speeds]
    placed = [(n, name, sp) for n, name, sp in speeds if sp.gb_per_s and sp.bytes_per_call]
    if not placed:
        return None
    dots = [(n, name, sp, sp.flops_per_call / sp.bytes_per_call) for n, name, sp in placed
            if sp.flops_per_call and sp.tflop_per_s]
    memory = [(n, name, sp) for n, name, sp in placed if not (sp.flops_per_call and sp.tflop_per_s)]
    c = sol.ceilings
    bw = c.copy_gbps if c is not None else None
    peaks = dict(c.matmul_tflops) if c is not None else {}
    # the bandwidth panel widens with its kernels, so that each keeps a readable number under its point
    width = (4.6 if dots else 0) + (max(4.6, 1.4 + 0.17 * len(memory)) if memory else 0)
    fig = _figure(width=width, height=3.6, panels=bool(dots) + bool(memory))
    axes = list(fig.axes)
    if dots:
        ax = axes.pop(0)
        xs_all = [x for *_, x in dots] + ([max(peaks.values()) * 1e3 / bw] if bw and peaks else [])
        lo, hi = min(xs_all) / 8, max(xs_all) * 8
        grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        if bw:
            top = max(peaks.values()) if peaks else max(sp.tflop_per_s for _, _, sp, _ in dots) * 4
            ax.plot(grid, [min(top, bw * x / 1e3) for x in grid], color="#999", linewidth=1.5)
            for dtype, peak in sorted(peaks.items(), key=lambda kv: -kv[1]):
                knee = peak * 1e3 / bw
                ax.plot([knee, hi], [peak, peak], color="#bbb", linewidth=1, linestyle="--")
                ax.annotate(_text(f"{dtype} {peak:,.0f}"), (hi, peak), textcoords="offset points", xytext=(-4, 3),
                            ha="right", fontsize=7, color="#777")
        for n, _, sp, x in dots:
            ax.plot([x], [sp.tflop_per_s], marker="o", linestyle="none", color="#c0392b")
            ax.annotate(str(n), (x, sp.tflop_per_s), textcoords="offset points", xytext=(4, 3), fontsize=7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (FLOP/byte)")
        ax.set_ylabel("achieved TFLOP/s")
        ax.set_title("kernels with tl.dot", fontsize=8)
        ax.grid(alpha=0.3, which="both")
    if memory:
        ax = axes.pop(0)
        ax.plot([n for n, _, _ in memory], [sp.gb_per_s for _, _, sp in memory], marker="o", linestyle="none",
                color="#2a6fb0")
        if bw:
            ax.axhline(bw, color="#999", linewidth=1.5)
            ax.annotate(_text(f"copy {bw:,.0f} GB/s (measured)"), (0, bw), xycoords=("axes fraction", "data"),
                        textcoords="offset points", xytext=(4, 3), ha="left", fontsize=7, color="#777")
        ax.set_xticks([n for n, _, _ in memory], [str(n) for n, _, _ in memory], fontsize=6)
        ax.set_xlabel("kernel (its number in the table)")
        ax.set_ylabel("achieved GB/s")
        ax.set_ylim(bottom=0, top=max([sp.gb_per_s for _, _, sp in memory] + [bw or 0]) * 1.15)
        ax.set_title("no FLOP count: bandwidth only", fontsize=8)
        ax.grid(alpha=0.3)
    roofs = (f"roofs measured on {c.device}: copy {bw:,.0f} GB/s" + "".join(f", {k} matmul {v:,.0f} TFLOP/s"
                                                                           for k, v in peaks.items())
             if c is not None else f"no roofs drawn: {sol.ceilings_note}")
    caption = (f"Each timed kernel as a point, numbered as in the Kernels table: {len(dots)} with tl.dot by "
               f"arithmetic intensity against achieved TFLOP/s, {len(memory)} without a FLOP count by achieved GB/s; "
               f"{roofs}. Bytes are estimates (the table's method per kernel), so a point above a roof means "
               f"the estimate is high (reads served by the L2), not a faster device.")
    head = ("#", "kernel", "GB/s", "% of copy", "FLOP/byte", "TFLOP/s", "% of peak", "bound by")
    rows = [(str(n), name, f"{sp.gb_per_s:,.0f}", _pct(sp.pct_of_bandwidth),
             f"{sp.flops_per_call / sp.bytes_per_call:,.1f}" if sp.flops_per_call else "-",
             f"{sp.tflop_per_s:,.1f}" if sp.tflop_per_s else "-", _pct(sp.pct_of_peak), sp.bound_by or "-")
            for n, name, sp in sorted(placed, key=lambda t: t[0])]
    return Plot(name="program-roofline", title="Roofline", svg=_svg(fig, "program-roofline"), caption=caption,
                table=(head, *rows))


def _pct(x) -> str:
    return "-" if x is None else f"{x:,.0f}%"


BARS = 15   # kernels a program's bar charts show (the rest are summed in one bar)


def time_share(rows) -> Plot | None:
    """Each kernel's share of the program's captured GPU time (kinspect.analysis.summary.KernelRow),
    the busiest first; None when no GPU time was captured."""
    timed = [r for r in rows if r.gpu_ms]
    if not timed:
        return None
    total = sum(r.gpu_ms for r in timed)
    bars = [(r.name, 100 * r.gpu_ms / total) for r in timed[:BARS]]
    if len(timed) > BARS:
        bars.append((f"{len(timed) - BARS} more kernels", 100 * sum(r.gpu_ms for r in timed[BARS:]) / total))
    return _bars("time-share", "Share of GPU time", bars, "% of the captured GPU time",
                 f"share of {total:,.3f} ms of GPU time captured, per kernel")


def jit_per_kernel(rows) -> Plot | None:
    """What a first run pays to compile each kernel (every variant's JIT time), the costliest first."""
    jit = sorted((r for r in rows if r.jit_us), key=lambda r: -r.jit_us)
    if not jit:
        return None
    bars = [(r.name, r.jit_us / 1000) for r in jit[:BARS]]
    if len(jit) > BARS:
        bars.append((f"{len(jit) - BARS} more kernels", sum(r.jit_us for r in jit[BARS:]) / 1000))
    total = sum(r.jit_us for r in jit) / 1000
    return _bars("jit", "JIT time per kernel", bars, "JIT ms (all its variants)",
                 f"JIT time per kernel: {total:,.0f} ms in all (Triton's one-time start-up not included)")


def _bars(name: str, title: str, bars: list[tuple[str, float]], xlabel: str, caption: str) -> Plot:
    fig = _figure(width=6.2, height=0.8 + 0.24 * len(bars), panels=1)
    ax = fig.axes[0]
    ys = list(range(len(bars)))[::-1]
    ax.barh(ys, [x for _, x in bars], color="#2a6fb0", height=0.7)
    ax.set_yticks(ys, [_text(label) for label, _ in bars], fontsize=7, family="monospace")
    ax.set_xlabel(_text(xlabel))
    ax.grid(alpha=0.3, axis="x")
    return Plot(name=name, title=title, svg=_svg(fig, name), caption=caption,
                table=(("kernel", xlabel), *((label, f"{x:,.3g}") for label, x in bars)))


def _figure(width: float, height: float, panels: int):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    fig.subplots(1, panels, squeeze=False)
    return fig


def _text(s: str) -> str:
    """A label as matplotlib shows it verbatim: `$` would start mathtext."""
    return str(s).replace("$", r"\$")


_PROLOGUE = re.compile(r"\A.*?(?=<svg)", re.S)  # the XML declaration and DOCTYPE before <svg


def _svg(fig, salt: str) -> str:
    import matplotlib

    import warnings

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": f"kinspect-{salt}", "svg.fonttype": "none"}), \
            warnings.catch_warnings():
        # long tick labels (a sweep's variants, a program's kernels) can leave constrained layout no
        # room: matplotlib then draws the figure as it is and says so on stderr, which is noise here
        warnings.filterwarnings("ignore", message=".*constrained_layout not applied")
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return _PROLOGUE.sub("", buf.getvalue(), count=1)
