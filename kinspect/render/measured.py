"""`vec-report --counters`: each measured kernel's counters beside its findings, in the terminal.

Reads the program view's JSON (kinspect.api.Program.to_json): kernels that carry `counters`, in the
order of their headroom."""

from __future__ import annotations

from kinspect.analysis.summary import display_name

MARKS = {"confirms": "✓", "contradicts": "✗ demoted:", "not measured": "·"}


def section(program: dict) -> str:
    kernels = {k["kernel"]: k for k in program.get("kernels", [])}
    order = (program.get("speed_of_light") or {}).get("ranked_by_headroom") or list(kernels)
    measured = [kernels[k] for k in order if k in kernels and ("counters" in kernels[k] or "counters_failed" in kernels[k])]
    if not measured:
        return "counters: none measured"
    first = next((k["counters"] for k in measured if "counters" in k), None)
    how = (f"Nsight Compute {first['ncu_version']}, one replay of each kernel's captured launch, caches flushed"
           if first else "Nsight Compute")
    out = [f"counters ({how}), most headroom first:"]
    for k in measured:
        name = display_name(k["kernel"])
        if "counters" not in k:
            out.append(f"  {name}: {k['counters_failed']}")
            continue
        c = k["counters"]
        line = f"  {name}: " + "; ".join(c["figures"])
        out.append(line)
        if c.get("notes"):
            out.append(f"    note: {'; '.join(c['notes'])}")
        pairs = sorted(c["findings"], key=lambda p: p["demoted"])
        for p in pairs:
            out.append(f"    {MARKS[p['verdict']]} {p['finding']} → {p['measured']}")
        guess = c.get("estimate")
        if guess and c.get("dram_bytes"):
            out.append(f"    bytes per call: measured {c['dram_bytes'] / 1e6:,.1f} MB (used from now on), estimated "
                       f"{guess['bytes'] / 1e6:,.1f} MB ({guess['method']}): {guess['bytes'] / c['dram_bytes']:.2f}x")
    return "\n".join(out)
