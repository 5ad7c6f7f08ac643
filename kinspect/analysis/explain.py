"""What the program view says about each kernel beyond its summary row: how far it is from the
speed of light (kinspect.analysis.sol), which ATen ops and model lines made it (kinspect.files.provenance),
and, where `--counters` measured it, the counters beside the findings they confirm or contradict
(kinspect.analysis.pairing); with the program's call sites, its ranks and why a kernel has several
variants. Records the views read (kinspect.render.program, .html, .json).

    view = kernel_view(row, variant, sol)     # a KernelView: the row, its Speed, Provenance, CountersView
"""

from __future__ import annotations

from dataclasses import dataclass

from kinspect.analysis.callsites import SiteCost
from kinspect.analysis.pairing import Pairing
from kinspect.analysis.ranks import KernelRanks
from kinspect.analysis.sol import Speed
from kinspect.analysis.summary import KernelRow
from kinspect.analysis.variants import VariantWhy
from kinspect.core.model import Variant
from kinspect.files.counters import Counters
from kinspect.files.provenance import Origin


@dataclass(frozen=True)
class Provenance:
    """Where a kernel came from: its own source, or the ATen ops and model lines Inductor recorded."""

    status: str                       # "own source", "recorded" or "not recorded"
    why: str = ""
    fix: str = ""
    origin: Origin | None = None      # recorded: Inductor's origin of the kernel
    short: str = ""                   # recorded: the model's file:line (or its ATen ops), short
    lines: tuple[str, ...] = ()       # recorded: each call site's line
    note: str = ""


@dataclass(frozen=True)
class CountersView:
    """What Nsight Compute measured for a kernel's busiest variant, beside the findings it speaks to."""

    measured: Counters
    estimate_bytes: float | None      # kinspect.analysis.traffic's estimate of the bytes per call
    estimate_method: str
    figures: tuple[str, ...]          # the kernel-wide measured figures, each a few words
    pairs: tuple[Pairing, ...]        # one per finding of the busiest variant


@dataclass(frozen=True)
class KernelView:
    """One kernel of the program view: its row, its speed of light (an empty Speed when not timed),
    where it came from and its counters (None when its busiest variant is unknown or was not measured)."""

    row: KernelRow
    speed: Speed
    provenance: Provenance | None = None
    counters: CountersView | None = None
    counters_failed: str = ""         # why --counters measured nothing for it
    call_sites: tuple[SiteCost, ...] = ()             # the user's lines that launched it, most GPU time first
    ranks: KernelRanks | None = None                  # its GPU time per rank (a program of several ranks)
    variants_explained: tuple[VariantWhy, ...] = ()   # what the JIT specialized differently in each variant

    @property
    def kernel(self) -> str:
        return self.row.kernel


def kernel_view(row: KernelRow, variant: Variant | None, sol, counters_failed: str = "") -> KernelView:
    """`variant` is the row's busiest variant, `sol` the program's kinspect.analysis.sol.ProgramSol (None:
    not computed)."""
    speed = ((sol.speeds.get(row.kernel) if sol is not None else None) or Speed(row.kernel)).rounded()
    spread = sol.ranks if sol is not None else None
    program = dict(call_sites=tuple(sol.call_sites.get(row.kernel, ())) if sol is not None else (),
                   ranks=spread.kernels.get(row.kernel) if spread is not None else None,
                   variants_explained=tuple(sol.variants.get(row.kernel, ())) if sol is not None else ())
    if variant is None:
        return KernelView(row=row, speed=speed, counters_failed=counters_failed, **program)
    return KernelView(row=row, speed=speed, provenance=provenance_status(variant),
                      counters=counters_view(row, variant, sol), counters_failed=counters_failed, **program)


def counters_view(row: KernelRow, variant: Variant, sol) -> CountersView | None:
    from kinspect.files import counters
    from kinspect.analysis.pairing import figures, pair
    from kinspect.analysis.traffic import traffic

    measured = counters.read(variant.path) if variant.path else None
    if measured is None:
        return None
    copy = sol.ceilings.copy_gbps if sol is not None and sol.ceilings is not None else None
    estimate = traffic(variant)
    return CountersView(measured=measured, estimate_bytes=None if estimate is None else estimate.bytes,
                        estimate_method="" if estimate is None else estimate.describe(),
                        figures=tuple(figures(measured, copy)), pairs=tuple(pair(row.busiest.findings, measured, copy)))


def provenance_status(variant: Variant) -> Provenance:
    """What the program view says about where a kernel came from."""
    from kinspect.files import provenance
    from kinspect.analysis.kernel_ast import is_inductor

    if not is_inductor(variant):
        src = variant.source
        where = f"{src.file}:{src.line}" if src is not None else "its source is not in the record"
        return Provenance(status="own source", why=f"a hand-written kernel: {where}")
    origin = provenance.read(variant.path) if variant.path else None
    if origin is None:
        return Provenance(
            status="not recorded",
            why="Inductor's output code for this kernel was not seen in a captured process (the store was "
                "captured by an older kinspect, or the graph was compiled ahead of time, by AOTInductor or "
                "cpp_wrapper, or in a process the capture did not reach)",
            fix="capture the program with this kinspect: kinspect capture --store DIR -- python prog.py")
    lines = tuple(f.describe() for f in origin.lines)
    if not lines:
        return Provenance(
            status="recorded", origin=origin, short=origin.short(), lines=lines,
            why="ATen ops known; no model line: Inductor kept no stack trace for its calls. Dynamo leaves "
                "frames inside torch/nn/modules out of the traces, so a torch.nn module compiled directly "
                "(torch.compile(nn.TransformerEncoderLayer(...))) names no line; a graph traced without Dynamo "
                "(torch.export's) has none either",
            fix="compile a module or function of your own that calls it (torch.compile(model), its forward "
                "calling the layer): the traces then name that code's lines")
    return Provenance(status="recorded", origin=origin, short=origin.short(), lines=lines,
                      note="the line of the last op Inductor fused into the kernel, for each place it is called from")
