"""The findings kinspect reports, as one vocabulary: each kind with its severity and what to try.

A finding is a Verdict with a `kind` (kinspect.analysis.verdicts): the rules that see a problem
name its kind here, and every view (vec-report, the program summary, diff, bench, report) shows the
same words, orders by the same severity and gives the same advice. A rule may give advice of its
own where it knows more (numbers from the variant: registers, warps, the limiting resource); it is
then in the kind's terms.
"""

from __future__ import annotations

from dataclasses import dataclass

# Severity: how much a finding usually costs, so a summary can put the worst first.
MAJOR, MODERATE, MINOR = 3, 2, 1
SEVERITY_NAMES = {MAJOR: "major", MODERATE: "moderate", MINOR: "minor"}


@dataclass(frozen=True)
class Kind:
    name: str
    severity: int
    title: str       # a few words, for tables
    advice: str      # what to try, when the rule has nothing more specific


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("spills", MAJOR, "register spills",
         "fewer registers per thread: a smaller tile (BLOCK/XBLOCK), fewer num_stages, or more num_warps"),
    Kind("dot_without_matrix_units", MAJOR, "tl.dot without tensor cores",
         "fp16/bf16 inputs (or input_precision='tf32' for fp32), tile sides of at least 16, num_warps >= 4"),
    Kind("no_vector_code", MAJOR, "no vector instructions",
         "contiguous loads over a power-of-two block, and a target that has vectors (-mattr=+v for RVV; "
         "kinspect vec-report --retarget spacemit-x60 shows what LLVM makes)"),
    Kind("launch_bound", MAJOR, "launch-bound",
         "less Python a launch: work out grids, strides and the kernel once per problem and launch the compiled "
         "kernel directly (kinspect.launcher.Direct), drop per-call allocation and autotuner lookups, "
         "fuse small kernels, or capture the calls in a CUDA graph"),
    Kind("low_occupancy", MODERATE, "low occupancy",
         "more blocks per SM: fewer registers or less shared memory per block"),
    Kind("narrow_loads", MODERATE, "narrow loads",
         "a contiguous, 16-byte aligned last dimension (the JIT specializes on it); tl.max_contiguous / "
         "tl.multiple_of hints where the compiler cannot see it"),
    Kind("ordered_reduction", MODERATE, "ordered FP reductions",
         "let the reduction reassociate (an unordered vfredusum / tree reduction), or reduce in blocks"),
    Kind("scalar_reduction", MODERATE, "reduction as a scalar chain",
         "a vector reduction: reduce a block (tl.sum over a tl.arange block) rather than element by element"),
    Kind("scalar_libm", MODERATE, "scalar libm calls",
         "math the backend vectorizes (a vector math library such as SLEEF, or tl.math forms it inlines)"),
    Kind("cpu_spills", MODERATE, "spills in the hot loop",
         "a smaller block or LMUL, so the loop's values fit the vector registers"),
    Kind("no_fma", MINOR, "no fused multiply-add",
         "fp fusion on (enable_fp_fusion, TRITON_DEFAULT_FP_FUSION=1) so multiply and add fuse"),
    Kind("gather_loads", MINOR, "strided or gathered loads",
         "unit-stride access along the vectorized dimension (transpose the data or the loop)"),
    Kind("unreadable_stage", MINOR, "a stage could not be read",
         "recompile the variant (kinspect dump) or check the file it names"),
)}


def kind(name: str) -> Kind:
    return KINDS[name]
