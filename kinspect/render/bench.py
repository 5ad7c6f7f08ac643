"""Terminal output of `kinspect bench` and `kinspect bench --interpret`."""

from __future__ import annotations

from kinspect.analysis.findings import kind
from kinspect.bench.call_profile import GROUPS
from kinspect.bench.first_call import FirstCall
from kinspect.bench.interpreted_check import NOTE, Interpreted
from kinspect.bench.launch_path import CallTiming, LaunchPath
from kinspect.render.terminal import clean, relative, human_bytes, spec_line


def _ms(x: float) -> str:
    return f"{x:,.4g}" if x < 1 else f"{x:,.1f}"


def _pct(x: float) -> str:
    return f"{x:.0f}%" if x >= 10 else f"{x:.2g}%"


def _first(name: str, f: FirstCall, *, width: int) -> str:
    stages = ", ".join(f"{k} {_ms(v)}" for k, v in f.stages_ms().items())
    what = "compiled" if not f.cache_hit else "from the on-disk cache"
    startup = f" + Triton start-up {_ms(f.startup_ms)} ms (once per process)" if f.startup_ms else ""
    return (f"  {name:<{width}} {_ms(f.wall_ms):>9} ms  = JIT {_ms(f.jit_ms)} ms ({what}: {stages}){startup}"
            f" + {_ms(f.rest_ms)} ms other (specialization, launcher, loading, launch, run)")


def _asm(m, loaded: dict | None) -> str:
    """The variant's record (kinspect.analysis.summary.VariantMetrics) in one line."""
    parts = []
    if m.registers is not None:
        regs = f"{m.registers} registers"
        if loaded and loaded.get("registers") is not None and loaded["registers"] != m.registers:
            regs += f" ({loaded['registers']} as loaded)"
        elif loaded:
            regs += " (as loaded)"
        parts.append(regs)
    if m.spills is not None:
        parts.append(f"{m.spills} spills")
    if m.shared_bytes is not None:
        parts.append(f"{human_bytes(m.shared_bytes)} shared")
    if m.occupancy is not None:
        parts.append(f"occupancy {m.occupancy:.0%} (limited by {m.occupancy_limiter})")
    matrix = ", ".join(f"{n} {unit}" for unit, n in sorted(m.matrix_units)) or "none"
    parts.append(f"{m.instructions:,} {m.isa} instructions, {m.vector:,} vector, matrix: {matrix}")
    return ", ".join(parts)


def render(r) -> str:
    """`kinspect bench`'s result (kinspect.bench.measure.BenchResult: a view does not import the
    command that makes what it shows) as text."""
    v = r.variant
    src = f"{relative(v.source.file)}:{v.source.line}" if v.source else "source unknown"
    out = [f"kernel   {r.label}  ({v.kernel}, {src})",
           f"target   {r.target_note}; size {r.size or '-'} {r.dtype}; {spec_line(v)}",
           f"stored   {relative(v.path)}/", "",
           "first call"]
    out.append(_first("cold (cache miss)", r.first.cold, width=17))
    out.append(_first("warm (cache hit)", r.first.warm, width=17))
    if r.in_user_cache is not None:
        out.append("  your Triton cache " + ("holds this variant: your program's first call loads it (warm)"
                                             if r.in_user_cache else
                                             "does not hold this variant: your program's first call compiles (cold)"))
    s = r.steady
    out += ["", f"steady state  median {_ms(s.wall.median)} ms (p20 {_ms(s.wall.p20)}, p80 {_ms(s.wall.p80)}), "
                f"CV {s.wall.cv:.1%}, {s.wall.n} runs"]
    if s.cpu is not None:
        out.append(f"  CPU time {_ms(s.cpu.median)} ms per run: {s.busy_threads:.1f} threads busy on average; "
                   f"threads available: {s.threads}")
    t = r.throughput
    if t.gbps is not None:
        pct = f" = {_pct(t.pct_copy)} of the measured copy bandwidth ({t.copy['gbps']:,.0f} GB/s, measured " \
              f"{t.copy['measured']})" if t.pct_copy is not None else ""
        out.append(f"  {t.gbps:,.0f} GB/s{pct}")
    if t.tflops is not None:
        pct = f" = {_pct(t.pct_peak)} of measured {t.peak['dtype']} matmul ({t.peak['tflops']:,.1f} TFLOP/s, " \
              f"{t.peak['method'].split(';')[0]})" if t.pct_peak is not None else ""
        out.append(f"  {t.tflops:,.1f} TFLOP/s{pct}" if t.tflops >= 10 else f"  {t.tflops:,.2f} TFLOP/s{pct}")
    if t.note:
        out.append(f"  ({t.note})")
    for ref in r.references:
        if ref.timing is None:
            out.append(f"  {ref.name}: not timed ({ref.error})")
            continue
        faster = f"kernel {ref.ratio:.2f}x {'faster' if ref.ratio >= 1 else 'the speed'}" if ref.ratio else ""
        extra = f"; compiled in {_ms(ref.compile_ms)} ms" if ref.compile_ms is not None else ""
        out.append(f"  {ref.name:<13} median {_ms(ref.timing.wall.median)} ms: {faster}{extra}")
    if r.check is not None:
        out.append(f"  {r.check.describe()}")
    if r.launch is not None:
        out += ["", *launch_path(r.launch)]
    out += ["", f"asm      {_asm(r.metrics, v.extra.get('loaded'))}"]
    for f in r.metrics.findings:
        out.append(f"  {'!!' if f.severity >= 3 else '!'} {f.text}\n      try: {f.advice}")
    if r.profile is not None:
        p = r.profile
        kernel = f"; kernel time by the profiler (CUPTI, no L2 flush) median {_ms(p.kernel_ms)} ms" \
            if p.kernel_ms is not None else ""
        out += ["", f"profile  {p.runs} calls of {p.op}: trace {p.path} ({p.op_events} op events, "
                    f"{p.kernel_events} kernel events){kernel}; sorted by device time:", p.table.rstrip()]
    m = r.method
    out += ["", f"method   {m['timing']}", f"         {m['device']}; {m['clocks_note']}",
            "         " + ", ".join(f"{k} {val}" for k, val in m["versions"].items())]
    out += [f"  note: {clean(n)}" for n in r.notes + v.notes]
    return "\n".join(out)


def render_interpreted(r: Interpreted) -> str:
    out = [f"kernel   {r.label} under TRITON_INTERPRET, size {r.size}, grid {r.grid}: {_ms(r.wall_ms)} ms"]
    out.append(f"  {r.check.describe()}" if r.check else "  no torch reference to check against")
    out.append(f"  note: {NOTE}")
    return "\n".join(out)


def _called(t: CallTiming) -> str:
    a, h = t.as_called, t.host
    return (f"as called {_ms(a.median)} ms a call (p20 {_ms(a.p20)}, p80 {_ms(a.p80)}), of which Python (host) "
            f"{_ms(h.median)} ms")


def launch_path(p: LaunchPath) -> list[str]:
    """The launch-path section: as called against the GPU time, the host split, the verdict, the profile."""
    j = p.jit
    out = [f"launch   {j.label}: loops of {j.calls} calls, one synchronize after each ({j.as_called.n} loops)",
           f"  {_called(j)}"]
    if p.gpu is not None:
        out.append(f"  GPU only  {_ms(p.gpu.median)} ms a call ({p.gpu_method})")
    if p.launcher is not None:
        later = f" + later passes {_ms(p.later_passes_ms)} ms" if p.later_passes_ms else ""
        out.append(f"  Python a call = JIT {_ms(p.jit_python_ms)} ms (binding, specialization, grid, launch "
                   f"metadata) + compiled launcher {_ms(p.launcher.median)} ms (CompiledKernel.run alone){later}")
    v = p.verdict
    if v is not None:
        out.append(f"  {v.line()}")
    if p.wrapper is not None:
        w = p.wrapper_verdict
        out.append(f"  {p.wrapper.label}: {_called(p.wrapper)}" + (f"; {w.line().split(':', 1)[0]}, "
                                                                   f"{w.slowdown:.2f}x its GPU time" if w else ""))
    if v is not None and (v.launch_bound or v.near):
        out.append(f"  try: {kind('launch_bound').advice}")
    if p.profiles:
        out.append("  where the Python goes, ms a call (cProfile: each group's share of the profiled time, "
                   "times the unprofiled host time a call):")
        width = max(len(title) for _, title, _ in GROUPS)
        cell = max(18, *(min(len(q.label), 32) for q in p.profiles))
        labels = [q.label if len(q.label) <= cell else q.label[:cell - 1] + "…" for q in p.profiles]
        out.append(f"    {'':<{width}}  " + "  ".join(f"{label:>{cell}}" for label in labels))
        for name, title, _ in GROUPS:
            cells = []
            for q in p.profiles:
                g = q.group(name)
                text = "-" if g is None or g.share < 0.005 else \
                    (f"{g.ms:.4f} " if g.ms is not None else "") + f"{g.share:>4.0%}"
                cells.append(f"{text:>{cell}}")
            if any(c.strip() != "-" for c in cells):
                out.append(f"    {title:<{width}}  " + "  ".join(cells))
    out += [f"  note: {n}" for n in p.notes]
    return out
