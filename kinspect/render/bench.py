"""Terminal output of `kinspect bench` and `kinspect bench --interpret`."""

from __future__ import annotations

from kinspect.bench.first_call import FirstCall
from kinspect.bench.interpret import NOTE, Interpreted
from kinspect.bench.measure import BenchResult
from kinspect.render.terminal import relative, human_bytes, spec_line


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


def _asm(m: dict, loaded: dict | None) -> str:
    parts = []
    if m.get("registers") is not None:
        regs = f"{m['registers']} registers"
        if loaded and loaded.get("registers") is not None and loaded["registers"] != m["registers"]:
            regs += f" ({loaded['registers']} as loaded)"
        elif loaded:
            regs += " (as loaded)"
        parts.append(regs)
    if m.get("spills") is not None:
        parts.append(f"{m['spills']} spills")
    if m.get("shared_bytes") is not None:
        parts.append(f"{human_bytes(m['shared_bytes'])} shared")
    if m.get("occupancy") is not None:
        parts.append(f"occupancy {m['occupancy']:.0%} (limited by {m['occupancy_limiter']})")
    matrix = ", ".join(f"{n} {unit}" for unit, n in sorted(m.get("matrix_units", {}).items())) or "none"
    parts.append(f"{m['instructions']:,} {m['isa']} instructions, {m['vector']:,} vector, matrix: {matrix}")
    return ", ".join(parts)


def render(r: BenchResult) -> str:
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
    out += ["", f"asm      {_asm(r.metrics, v.extra.get('loaded'))}"]
    for f in r.metrics.get("findings", []):
        out.append(f"  {'!!' if f['severity'] >= 3 else '!'} {f['text']}\n      try: {f['advice']}")
    if r.profile is not None:
        p = r.profile
        kernel = f"; kernel time by the profiler (CUPTI, no L2 flush) median {_ms(p.kernel_ms)} ms" \
            if p.kernel_ms is not None else ""
        out += ["", f"profile  {p.runs} calls of {p.op}: trace {p.path} ({p.op_events} op events, "
                    f"{p.kernel_events} kernel events){kernel}; sorted by device time:", p.table.rstrip()]
    m = r.method
    out += ["", f"method   {m['timing']}", f"         {m['device']}; {m['clocks_note']}",
            "         " + ", ".join(f"{k} {val}" for k, val in m["versions"].items())]
    out += [f"  note: {n}" for n in r.notes + v.notes]
    return "\n".join(out)


def render_interpreted(r: Interpreted) -> str:
    out = [f"kernel   {r.label} under TRITON_INTERPRET, size {r.size}, grid {r.grid}: {_ms(r.wall_ms)} ms"]
    out.append(f"  {r.check.describe()}" if r.check else "  no torch reference to check against")
    out.append(f"  note: {NOTE}")
    return "\n".join(out)
