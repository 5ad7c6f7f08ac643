"""`vec-report --counters`: each measured kernel's counters beside its findings, in the terminal.

Reads the program view (kinspect.analysis.program_view.ProgramView): kernels with counters (or a reason
they have none), in the order of their headroom."""

from __future__ import annotations

from kinspect.analysis.program_view import ProgramView
from kinspect.analysis.summary import display_name

MARKS = {"confirms": "✓", "contradicts": "✗ demoted:", "not measured": "·"}


def section(view: ProgramView) -> str:
    from kinspect.analysis.sol import by_headroom

    kernels = {k.kernel: k for k in view.kernels}
    order = by_headroom(view.sol.speeds) if view.sol is not None else []
    order = order or list(kernels)
    measured = [kernels[k] for k in order if k in kernels and (kernels[k].counters or kernels[k].counters_failed)]
    if not measured:
        return "counters: none measured"
    first = next((k.counters for k in measured if k.counters), None)
    how = (f"Nsight Compute {first.measured.ncu_version}, one replay of each kernel's captured launch, caches "
           f"flushed" if first else "Nsight Compute")
    out = [f"counters ({how}), most headroom first:"]
    for k in measured:
        name = display_name(k.kernel)
        c = k.counters
        if c is None:
            out.append(f"  {name}: {k.counters_failed}")
            continue
        out.append(f"  {name}: " + "; ".join(c.figures))
        if c.measured.notes:
            out.append(f"    note: {'; '.join(c.measured.notes)}")
        for p in sorted(c.pairs, key=lambda p: p.demoted):
            out.append(f"    {MARKS[p.verdict]} {p.finding} → {p.text}")
        dram = c.measured.dram_bytes
        if c.estimate_bytes is not None and dram:
            out.append(f"    bytes per call: measured {dram / 1e6:,.1f} MB (used from now on), estimated "
                       f"{c.estimate_bytes / 1e6:,.1f} MB ({c.estimate_method}): {c.estimate_bytes / dram:.2f}x")
    return "\n".join(out)
