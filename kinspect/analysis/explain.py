"""What the program view says about each kernel beyond its summary row: how far it is from the
speed of light (kinspect.analysis.sol), which ATen ops and model lines made it (kinspect.provenance),
and, where `--counters` measured it, the counters beside the findings they confirm or contradict
(kinspect.analysis.counters).

    extra = kernel_extras(row, variant, sol)     # merged into the row's JSON by api.Program
"""

from __future__ import annotations

from kinspect.model import Variant


def kernel_extras(row, variant: Variant | None, sol) -> dict:
    """`row` is a kinspect.analysis.summary.KernelRow, `variant` its busiest variant, `sol` the
    program's kinspect.analysis.sol.ProgramSol (None: not computed)."""
    from kinspect import counters, provenance
    from kinspect.analysis.counters import figures, pair
    from kinspect.analysis.sol import Speed

    speed = sol.speeds.get(row.kernel) if sol is not None else None
    out = (speed or Speed(row.kernel)).to_json()
    if variant is None:
        return out
    out["provenance"] = provenance.status(variant)
    measured = counters.read(variant.path) if variant.path else None
    if measured is not None:
        copy = sol.ceilings.copy_gbps if sol is not None and sol.ceilings is not None else None
        from kinspect.analysis.traffic import traffic

        pairs = pair(row.busiest.findings, measured, copy)
        estimate = traffic(variant)
        out["counters"] = {**measured.to_json(), "dram_bytes": measured.dram_bytes,
                           "estimate": None if estimate is None else {"bytes": estimate.bytes,
                                                                      "method": estimate.describe()},
                           "l1_over_dram": measured.l1_over_dram, "figures": figures(measured, copy),
                           "findings": [p.to_json() for p in pairs]}
    return out
