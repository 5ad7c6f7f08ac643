"""The corpus: kernel files written the way tutorials, scripts and kernel libraries write them (for
these tests, not copied from other projects), and what each should give on each target.

Files without `kinspect_examples` are run with only --arg and -p flags, as a user would; the
others with no flags at all: their values come from kinspect_examples, from the file's own launch
(main_launch), or from what the kernel's code implies (moe_gemm, attention_bwd, gpu_pkg). `refused` names what Triton itself refuses, per target, as a part of
its one-line error: kinspect must pass that on as one clear line (exit 2), nothing written.
"""

from pathlib import Path

HERE = Path(__file__).parent
TARGETS = ("cuda:90", "cuda:80", "hip:gfx942")


def block_pointers_removed() -> bool:
    """Triton 3.9 removed tl.make_block_ptr (3.6 on the GPU machine still has it)."""
    import inspect

    import triton.language as tl

    try:
        return "removed" in inspect.getsource(tl.make_block_ptr)
    except (OSError, TypeError, AttributeError):
        return not hasattr(tl, "make_block_ptr")


def _args(**values) -> list[str]:
    out = []
    for name, spec in values.items():
        out += ["--arg", f"{name}={spec}"]
    return out


def _p(**values) -> list[str]:
    out = []
    for name, value in values.items():
        out += ["-p", f"{name}={value}"]
    return out


CORPUS = [
    {"id": "tutorial", "kernel": "tutorial_add.py:add_kernel",
     "flags": _args(x_ptr="*fp32", y_ptr="*fp32", output_ptr="*fp32", n_elements="i32:98432") + _p(BLOCK_SIZE=1024)},
    {"id": "package", "kernel": "pkg_layers/activations.py:bias_act_kernel"},
    {"id": "autotune", "kernel": "autotuned_matmul.py:matmul_kernel", "configs": 4},   # of 5: one pruned
    {"id": "block_ptr", "kernel": "block_ptr.py:row_sum_kernel",
     "flags": _args(x_ptr="*fp16:256x512", out_ptr="*fp32:256", M="i32:256", N="i32:512", stride_m="i32:512",
                    stride_n="i32:1") + _p(BLOCK_M=32, BLOCK_N=64),
     "refused": {t: "Block pointers have been removed" for t in TARGETS} if block_pointers_removed() else {}},
    {"id": "host_descriptor", "kernel": "tensor_desc.py:scale_desc_kernel", "configs": 2},
    {"id": "device_descriptor", "kernel": "tensor_desc.py:transpose_kernel"},
    {"id": "do_not_specialize", "kernel": "no_specialize.py:dropout_kernel",
     "flags": _args(x_ptr="*fp32", out_ptr="*fp32", n_elements="i32:4096", p="fp32:0.5", seed="i32:7")
     + _p(BLOCK_SIZE=1024)},
    {"id": "libdevice_cuda", "kernel": "libdevice_math.py:gelu_erf_kernel",
     "refused": {"hip:gfx942": "Implicit conversion of CUDA __nv_erff device function has been dropped"}},
    {"id": "libdevice", "kernel": "libdevice_math.py:softplus_kernel"},
    {"id": "fp8", "kernel": "fp8_matmul.py:fp8_gemm_kernel"},
    {"id": "grid3d", "kernel": "grid3d.py:bias_heads_kernel"},
    {"id": "string_constexpr", "kernel": "string_constexpr.py:activation_kernel"},
    {"id": "moe_index_pointers", "kernel": "moe_gemm.py:fused_moe_kernel"},
    {"id": "attention_bwd_names", "kernel": "attention_bwd.py:_bwd_dq_kernel"},
    {"id": "main_block_launch", "kernel": "main_launch.py:softmax_kernel"},
    {"id": "gpu_at_import", "kernel": "gpu_pkg/kernels.py:persistent_rmsnorm_kernel", "configs": 4},
    {"id": "dot_accumulator", "kernel": "dot_accumulate.py:linear_kernel",
     "flags": _args(x_ptr="*fp32:256x128", w_ptr="*fp32:128x256", y_ptr="*fp32:256x256", M="i32:256", N="i32:256",
                    K="i32:128", stride_xm="i32:128", stride_wk="i32:256", stride_ym="i32:256")
     + _p(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)},
    {"id": "flash_attention", "kernel": "flash_attention.py:attn_fwd"},
]


def kernel_path(entry: dict) -> str:
    path, _, name = entry["kernel"].rpartition(":")
    return f"{HERE / path}:{name}"
