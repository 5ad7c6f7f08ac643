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
class FindingKind:
    name: str
    severity: int
    title: str       # a few words, for tables
    advice: str      # what to try, when the rule has nothing more specific


KINDS: dict[str, FindingKind] = {k.name: k for k in (
    FindingKind("spills", MAJOR, "register spills",
         "fewer registers per thread: a smaller tile (BLOCK/XBLOCK), fewer num_stages, or more num_warps"),
    FindingKind("dot_without_matrix_units", MAJOR, "tl.dot without tensor cores",
         "fp16/bf16 inputs (or input_precision='tf32' for fp32), tile sides of at least 16, num_warps >= 4"),
    FindingKind("no_vector_code", MAJOR, "no vector instructions",
         "contiguous loads over a power-of-two block, and a target that has vectors (-mattr=+v for RVV; "
         "kinspect vec-report --retarget spacemit-x60 shows what LLVM makes)"),
    FindingKind("launch_bound", MAJOR, "launch-bound",
         "less Python a launch: work out grids, strides and the kernel once per problem and launch the compiled "
         "kernel directly (kinspect.backends.direct_launch.Direct), drop per-call allocation and autotuner lookups, "
         "fuse small kernels, or capture the calls in a CUDA graph"),
    FindingKind("low_occupancy", MODERATE, "low occupancy",
         "more blocks per SM: fewer registers or less shared memory per block"),
    FindingKind("narrow_loads", MODERATE, "narrow loads",
         "a contiguous, 16-byte aligned last dimension (the JIT specializes on it); tl.max_contiguous / "
         "tl.multiple_of hints where the compiler cannot see it"),
    FindingKind("ordered_reduction", MODERATE, "ordered FP reductions",
         "let the reduction reassociate (an unordered vfredusum / tree reduction), or reduce in blocks"),
    FindingKind("scalar_reduction", MODERATE, "reduction as a scalar chain",
         "a vector reduction: reduce a block (tl.sum over a tl.arange block) rather than element by element"),
    FindingKind("scalar_libm", MODERATE, "scalar libm calls",
         "math the backend vectorizes (a vector math library such as SLEEF, or tl.math forms it inlines)"),
    FindingKind("cpu_spills", MODERATE, "spills in the hot loop",
         "a smaller block or LMUL, so the loop's values fit the vector registers"),
    FindingKind("no_fma", MINOR, "no fused multiply-add",
         "fp fusion on (enable_fp_fusion, TRITON_DEFAULT_FP_FUSION=1) so multiply and add fuse"),
    FindingKind("gather_loads", MINOR, "strided or gathered loads",
         "unit-stride access along the vectorized dimension (transpose the data or the loop)"),
    FindingKind("unreadable_stage", MINOR, "a stage could not be read",
         "recompile the variant (kinspect dump) or check the file it names"),
)}


# What to try when Inductor wrote the kernel: its user changes the model or Inductor's choices, not the
# kernel's code (Inductor regenerates it). Kinds not listed keep their advice.
INDUCTOR_ADVICE: dict[str, str] = {
    "narrow_loads": "Inductor keeps loads narrow where it cannot prove the index contiguous and 16-byte aligned: "
                    "make the tensor contiguous with a last dimension that is a multiple of 16 bytes (a "
                    "`.contiguous()` before the op, or torch._inductor.config.comprehensive_padding=True), and avoid "
                    "slicing or concatenating it at odd offsets in the model",
    "low_occupancy": "another config for this kernel: XBLOCK / R0_BLOCK (powers of two, XBLOCK <= 4096) and num_warps, "
                     "searched by torch.compile(mode='max-autotune-no-cudagraphs') or set per kernel in "
                     "torch._inductor.config.autotune_lookup_table",
    "spills": "smaller blocks for this kernel (XBLOCK / R0_BLOCK: mode='max-autotune-no-cudagraphs' tries them and "
              "drops configs that spill), or less fused into it (torch._inductor.config.max_fusion_size)",
    "gather_loads": "a layout Inductor can index with unit stride: a `.contiguous()` (or the permute moved) before "
                    "the op that reads the tensor",
    "launch_bound": "fewer launches per step: CUDA graphs (torch.compile(mode='reduce-overhead')) or more work per "
                    "launch (a larger batch)",
    "dot_without_matrix_units": "bf16/fp16 matmul inputs (torch.autocast), or torch.backends.cuda.matmul."
                                "allow_tf32=True for fp32",
}


def kind(name: str) -> FindingKind:
    return KINDS[name]


def advice_for(name: str, advice: str, inductor: bool) -> str:
    """What to try for a finding of kind `name` whose rule said `advice` ("" for the kind's default): for a
    kernel Inductor wrote, the config Inductor accepts and the model-level change, with the rule's
    figures kept in brackets."""
    if not inductor or name not in INDUCTOR_ADVICE:
        return advice or KINDS[name].advice
    return INDUCTOR_ADVICE[name] + (f" ({advice})" if advice else "")
