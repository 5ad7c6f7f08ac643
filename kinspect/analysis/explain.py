"""What the program view says about each kernel beyond its summary row: how far it is from the
speed of light (kinspect.analysis.sol), which ATen ops and model lines made it (kinspect.files.provenance),
and, where `--counters` measured it, the counters beside the findings they confirm or contradict
(kinspect.analysis.pairing).

    extra = kernel_extras(row, variant, sol)     # merged into the row's JSON by api.Program
"""

from __future__ import annotations

from kinspect.core.model import Variant


def kernel_extras(row, variant: Variant | None, sol) -> dict:
    """`row` is a kinspect.analysis.summary.KernelRow, `variant` its busiest variant, `sol` the
    program's kinspect.analysis.sol.ProgramSol (None: not computed)."""
    from kinspect.files import counters
    from kinspect.analysis.pairing import figures, pair
    from kinspect.analysis.sol import Speed

    speed = sol.speeds.get(row.kernel) if sol is not None else None
    out = (speed or Speed(row.kernel)).to_json()
    why = (getattr(sol, "variants", None) or {}).get(row.kernel)
    if why:
        out["variants_explained"] = [w.to_json() for w in why]
    sites = (getattr(sol, "call_sites", None) or {}).get(row.kernel)
    if sites:
        out["call_sites"] = [s.to_json() for s in sites]
    spread = getattr(sol, "ranks", None)
    if spread is not None and row.kernel in spread.kernels:
        out["ranks"] = spread.kernels[row.kernel].to_json()
    if variant is None:
        return out
    out["provenance"] = provenance_status(variant)
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


def provenance_status(variant: Variant) -> dict:
    """What the program view says about where a kernel came from: {"status", "origin" or "why" and "fix"}."""
    from kinspect.files import provenance
    from kinspect.analysis.kernel_ast import is_inductor

    if not is_inductor(variant):
        src = variant.source
        where = f"{src.file}:{src.line}" if src is not None else "its source is not in the record"
        return {"status": "own source", "why": f"a hand-written kernel: {where}"}
    origin = provenance.read(variant.path) if variant.path else None
    if origin is None:
        return {"status": "not recorded",
                "why": "Inductor's output code for this kernel was not seen in a captured process (the store was "
                       "captured by an older kinspect, or the graph was compiled ahead of time, by AOTInductor or "
                       "cpp_wrapper, or in a process the capture did not reach)",
                "fix": "capture the program with this kinspect: kinspect capture --store DIR -- python prog.py"}
    out = {"status": "recorded", "origin": origin.to_json(), "short": origin.short(),
           "lines": [f.describe() for f in origin.lines]}
    if not origin.lines:
        out["why"] = ("ATen ops known; no model line: Inductor kept no stack trace for its calls. Dynamo leaves "
                      "frames inside torch/nn/modules out of the traces, so a torch.nn module compiled directly "
                      "(torch.compile(nn.TransformerEncoderLayer(...))) names no line; a graph traced without Dynamo "
                      "(torch.export's) has none either")
        out["fix"] = ("compile a module or function of your own that calls it (torch.compile(model), its forward "
                      "calling the layer): the traces then name that code's lines")
    else:
        out["note"] = "the line of the last op Inductor fused into the kernel, for each place it is called from"
    return out
