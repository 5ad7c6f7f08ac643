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
    name: str      # "sweep" or "roofline"
    title: str
    svg: str       # an <svg> element, ready to inline
    caption: str


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
        ax.plot(at, [y for _, y in pts], marker="o", color="#2a6fb0")
        if name == "runtime":
            lo = [y - rows[i].runtime.p20_ms for i, y in pts]
            hi = [rows[i].runtime.p80_ms - y for i, y in pts]
            ax.errorbar(at, [y for _, y in pts], yerr=[lo, hi], fmt="none", ecolor="#555", capsize=3)
        ax.set_ylabel(_text(label))
        ax.set_ylim(bottom=0)
        if numeric:
            if all(x & (x - 1) == 0 for x in xs if isinstance(x, int)) and len(set(xs)) > 2:
                ax.set_xscale("log", base=2)
            ax.set_xticks(sorted(set(xs)), [_text(str(x)) for x in sorted(set(xs))])
            ax.set_xlabel(_text(keys[0]))
        else:
            ax.set_xticks(range(len(rows)), [_text(r.label) for r in rows], rotation=30, ha="right", fontsize=7)
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
    for (r, t), x in zip(pts, intensity):
        ax.plot([x], [t.tflops], marker="o", linestyle="none", color="#c0392b")
        ax.annotate(_text(r.label), (x, t.tflops), textcoords="offset points", xytext=(5, 4), fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("TFLOP/s")
    ax.grid(alpha=0.3, which="both")
    caption = (f"roofs: measured copy bandwidth {bw:,.0f} GB/s and torch.matmul peak {peak:,.1f} TFLOP/s")
    return Plot(name="roofline", title="Roofline", svg=_svg(fig, "roofline"), caption=caption)


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
    return Plot(name=name, title=title, svg=_svg(fig, name), caption=caption)


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
