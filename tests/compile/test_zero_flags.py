"""Any real kernel file, with no flags (issue 26): the file's own launches, values inferred from the
kernel's code, every constexpr kind through -p, GPU questions at import answered as the target's
device, packages loaded as packages. Kernels written here in the styles real projects use
(tests/corpus), compiled for real, offline."""

import textwrap
from pathlib import Path

import pytest
import torch

from tests.helpers import one_error_line, run_raising as run, TESTS

DATA = TESTS / "data"
CORPUS = TESTS / "corpus"


def ok(*args):
    r = run(*args)
    assert r.exit_code == 0, r.output
    return r.output


def assumed(output: str) -> dict:
    """name -> spec of the `assumed` lines of dump's output."""
    found, inside = {}, False
    for line in output.splitlines():
        if line.startswith("assumed  "):
            inside = True
        elif not line.startswith("         "):
            inside = False
        if inside and "=" in line and "(" in line:
            name, _, rest = line[9:].partition("=")
            found[name] = rest.split("  (")[0]
    return found


def stored(out: Path):
    from kinspect.files.store import read_records

    (v,) = read_records(out)
    return v


# -- values from the file's own launches ----------------------------------------------------------

def test_a_module_level_launch_gives_the_values(tmp_path):
    out = ok("dump", f"{CORPUS}/tutorial_add.py:add_kernel", "--store", tmp_path)
    assert "launch   launch 0 of the 17 of 'add_kernel' (--launch N picks another), by module-level code " \
           "(line 38 via line 47), recorded, not run" in out
    assert "assumed" not in out and "spec     BLOCK_SIZE=1024" in out
    v = stored(tmp_path)
    assert v.signature["x_ptr"] == "*fp32" and v.signature["n_elements"] == "i32"
    assert v.user.launch.startswith("launch 0 of the 17")
    # launch 1 is the benchmark's, through triton.testing.do_bench: its first size, 2**12
    ok("dump", f"{CORPUS}/tutorial_add.py:add_kernel", "--launch", "1", "--store", tmp_path / "b")
    from kinspect.files.store import read_records

    (b,) = read_records(tmp_path / "b")
    assert {a["name"]: a["value"] for a in b.user.example["args"]}["n_elements"] == 4096


def test_a_file_that_fails_later_gives_the_launch_it_made_first(tmp_path, monkeypatch):
    # the tutorial's benchmark needs pandas (triton.testing's perf_report imports it to run): on a machine
    # without it the file stops there, as `python tutorial_add.py` would, after its module-level launch
    import shutil
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)
    f = tmp_path / "tutorial_add.py"          # a fresh copy: loads are cached per file version
    shutil.copy(CORPUS / "tutorial_add.py", f)
    out = ok("dump", f"{f}:add_kernel", "--store", tmp_path / "s")
    assert "definitions only from" in out and "importing it failed at line 79: ModuleNotFoundError" in out
    assert "pandas" in out and "before that, it launched 'add_kernel' (line 38 via line 47)" in out
    assert "launch   the one launch of 'add_kernel', by module-level code (line 38 via line 47)" in out
    assert "assumed" not in out and "spec     BLOCK_SIZE=1024" in out


def test_the_main_block_launches_with_cuda_tensors_and_launch_n_picks_another(tmp_path):
    out = ok("dump", f"{CORPUS}/main_launch.py:softmax_kernel", "--store", tmp_path / "a")
    assert "launch 0 of 'softmax_kernel' (kinspect stopped the code there; --launch N picks a later one), by its " \
           "__main__ block (line 22 via line 36)" in out
    assert "spec     BLOCK_SIZE=1024" in out                        # 781 columns
    out = ok("dump", f"{CORPUS}/main_launch.py:softmax_kernel", "--launch", "1", "--store", tmp_path / "b")
    assert "spec     BLOCK_SIZE=2048" in out                        # 1823 columns
    one_error_line(run("dump", f"{CORPUS}/main_launch.py:softmax_kernel", "--launch", "2", "--store", tmp_path / "c"),
                   "--launch 2: its __main__ block launched 'softmax_kernel' 2 times", "--launch 1 is the last")
    assert not (tmp_path / "c").exists()


def test_from_names_the_function_whose_launch_to_take(tmp_path):
    out = ok("dump", f"{CORPUS}/main_launch.py:softmax_kernel", "--from", "bench_large", "--store", tmp_path)
    assert "by --from bench_large" in out and "spec     BLOCK_SIZE=4096" in out
    assert stored(tmp_path).signature["in_ptr"] == "*fp16"
    one_error_line(run("dump", f"{CORPUS}/main_launch.py:softmax_kernel", "--from", "no_such_function", "--store",
                       tmp_path / "x"), "--from no_such_function", "NameError")


def test_launches_are_recorded_not_run_and_stand_ins_keep_alignment():
    from kinspect.compile.file_launches import FileLaunchRecorder, StandIn, active, stand_in

    x = torch.empty(1025)
    assert stand_in(x) == StandIn(torch.float32, (1025,), (1,), True)
    unaligned = stand_in(x[1:])
    assert not unaligned.aligned and unaligned.make().data_ptr() % 16 != 0
    from tests.corpus.dot_accumulate import linear_kernel

    rec = FileLaunchRecorder(__file__, str(TESTS))
    with active(rec):
        assert linear_kernel[(4,)](x, x, x, 1, 2, 3, 4, 5, 6, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, num_warps=2) is None
    (launch,) = rec.launches
    assert launch.constexprs == {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16} and launch.options == {"num_warps": 2}
    assert launch.args["M"] == 1 and launch.grid == (4,) and launch.where == "module-level code"


# -- values inferred from the kernel's code -------------------------------------------------------

def test_pointers_and_element_types_come_from_the_code_not_the_names(tmp_path):
    a = assumed(ok("dump", f"{CORPUS}/gated_mlp.py:_dwf_kernel", "--store", tmp_path / "a"))
    assert a["DW"] == a["e"] == a["g"] == "*fp16"                  # stores .to(tl.float16) values through them
    assert a["n_elements"] == "i32:1024"
    a = assumed(ok("dump", f"{CORPUS}/attention_bwd.py:_bwd_dq_kernel", "--store", tmp_path / "b"))
    assert a["K"] == a["DO"] == a["Q"] == a["V"] == "*fp16"        # tl.dot operands
    assert a["DQ"] == "*fp32" and a["L"] == "*fp32" and a["CACHE"] == "''" and a["HEAD_DIM"] == "64"
    a = assumed(ok("dump", f"{CORPUS}/attention_bwd.py:_rotary_kernel", "--store", tmp_path / "c"))
    assert a["cos"] == a["sin"] == a["X"] == a["OUT"] == "*fp32" and a["ACTIVATION"] == "leaky_relu"


def test_index_pointers_dtype_constexprs_and_flags_of_a_fused_moe_kernel(tmp_path):
    out = ok("dump", f"{CORPUS}/moe_gemm.py:fused_moe_kernel", "-t", "cuda:90", "--store", tmp_path)
    a = assumed(out)
    assert a["sorted_token_ids_ptr"] == a["expert_ids_ptr"] == "*i32"
    assert a["a_ptr"] == a["b_ptr"] == "*fp16" and a["compute_type"] == "fp32"
    assert a["MUL_ROUTED_WEIGHT"] == "False" and a["stride_ak"] == "i32:1" and a["stride_am"] == "i32:1024"
    assert "its values are offsets into b_ptr at line 37" in out
    assert "(guesses: set your own with --arg/-p or --from, or declare kinspect_examples" in out
    v = stored(tmp_path)
    assert v.signature["sorted_token_ids_ptr"] == "*i32" and v.constexprs["compute_type"] == "fp32"
    assert "HGMMA" in Path(v.path, v.stage("sass").file).read_text()
    assert len(v.user.assumed) == len(a)


def test_static_asserts_hold_for_assumed_values(tmp_path):
    f = tmp_path / "asserts.py"
    f.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr, SPLIT: tl.constexpr, EVEN: tl.constexpr):
            tl.static_assert(BLOCK % SPLIT == 0 and BLOCK // SPLIT >= 32)
            tl.static_assert(EVEN)
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) * SPLIT)
    """))
    out = ok("dump", f"{f}:k", "--store", tmp_path / "out")
    a = assumed(out)
    assert a["EVEN"] == "True" and int(a["BLOCK"]) // int(a["SPLIT"]) >= 32
    assert "so that the tl.static_assert at line" in out


def test_a_constexpr_called_as_a_function_gets_an_identity(tmp_path):
    f = tmp_path / "act.py"
    f.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, y_ptr, ACT: tl.constexpr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, ACT(tl.load(x_ptr + offs)))
    """))
    out = ok("dump", f"{f}:k", "--store", tmp_path / "out")
    assert "ACT=<identity function>  (called as a function at line 8" in out


# a kernel that cannot compile: a name its code uses is defined nowhere
UNDEFINED_NAME = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + undefined_name)
"""


def test_a_failed_compile_with_assumed_values_is_one_line_with_the_command_to_edit(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text(textwrap.dedent(UNDEFINED_NAME))
    one_error_line(run("dump", f"{f}:k", "--store", tmp_path / "out"), f"at {f}:8", "undefined_name",
                   "kinspect assumed 3 values (x_ptr=*fp32, n=i32:1024, BLOCK=64); the values it used, to change: "
                   f"edit and run: kinspect dump {f}:k --arg 'x_ptr=*fp32' --arg n=i32:1024 -p BLOCK=64")
    assert not (tmp_path / "out").exists()


def test_a_failed_compile_says_why_no_launch_of_the_projects_gave_the_values(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text(textwrap.dedent(UNDEFINED_NAME) + textwrap.dedent("""


        def op(x):
            import kinspect_not_installed_here
            k[(1,)](x, x.numel(), BLOCK=1024)
    """))
    one_error_line(run("dump", f"{f}:k", "--store", tmp_path / "out"),
                   "kinspect assumed 3 values (x_ptr=*fp32, n=i32:1024, BLOCK=64); the project's wrapper op() "
                   "called with made-up inputs (", "never launched 'k'", "kinspect_not_installed_here")


# -- -p takes every constexpr kind ------------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("64", 64), ("0x10", 16), ("0.5", 0.5), ("True", True), ("false", False), ("None", None), ("", ""),
    ("''", ""), ('"relu"', "relu"), ("leaky_relu", "leaky_relu"), ("tl.float16", "fp16"), ("torch.bfloat16", "bf16"),
    ("triton.language.float8e4nv", "fp8e4nv"), ("tl.int8", "int8")])
def test_p_values(text, expected):
    from kinspect.compile.args import parse_value

    got = parse_value(text, "X")
    if type(got).__name__ == "dtype":
        got = str(got)
    assert got == expected and type(got) is type(expected)


def test_p_dtype_words_are_dtypes_where_the_kernel_uses_a_dtype_and_strings_where_it_compares(tmp_path):
    out = ok("dump", f"{CORPUS}/moe_gemm.py:fused_moe_kernel", "-p", "compute_type=fp16", "-p", "top_k=2",
             "--store", tmp_path / "a")
    assert stored(tmp_path / "a").constexprs["compute_type"] == "fp16" and "compute_type=" not in \
        "".join(assumed(out))
    out = ok("dump", f"{CORPUS}/attention_bwd.py:_rotary_kernel", "-p", "ACTIVATION=", "-p", "rotary_dim=64",
             "--store", tmp_path / "b")
    assert stored(tmp_path / "b").constexprs["ACTIVATION"] == ""
    ok("dump", f"{CORPUS}/attention_bwd.py:_bwd_dq_kernel", "-p", "CACHE=.cg", "-p", "HEAD_DIM=128",
       "--store", tmp_path / "c")
    assert stored(tmp_path / "c").constexprs["CACHE"] == ".cg"


@pytest.mark.parametrize("flag,needle", [("BLOCK_M='abc", "the quote is not closed"),
                                         ("BLOCK_M=tl.float17", "no such dtype"),
                                         ("BLOCK_M=abc", "BLOCK_M is an integer in the kernel (tl.arange at line 11)")])
def test_malformed_p_values_are_one_line(tmp_path, flag, needle):
    one_error_line(run("dump", f"{CORPUS}/dot_accumulate.py:linear_kernel", "-p", flag, "--store", tmp_path / "out"),
                   f"-p {flag}", needle)
    assert not (tmp_path / "out").exists()


# -- GPU questions at import ------------------------------------------------------------------------

def test_torch_answers_as_the_targets_device_and_everything_is_restored():
    import torch.utils._triton as torch_triton

    from kinspect.compile.device import as_target
    from kinspect.core.model import Target

    before = (torch.cuda.is_available, torch.cuda.get_device_properties, torch.version.cuda, torch.version.hip,
              torch_triton.has_triton)
    with as_target(Target("cuda", "90", 32)):
        assert torch.cuda.is_available() and torch.cuda.device_count() == 1 and torch.cuda.current_device() == 0
        assert torch.cuda.get_device_capability() == (9, 0) and "H100" in torch.cuda.get_device_name(0)
        p = torch.cuda.get_device_properties("cuda")
        assert p.multi_processor_count == 132 and p.total_memory == 80 * 2**30 and p.warp_size == 32
        assert torch.version.cuda and torch.version.hip is None and torch_triton.has_triton()
        # made on the CPU, answered as the GPU's: a wrapper's `assert x.is_cuda` holds, and its
        # `if x.device.type == "cpu": return reference(x)` is not taken
        x = torch.randn(8, device="cuda")
        made = [x, x.cuda(), x.to("cuda:0"), torch.empty_like(x), torch.randn(2)]
        assert all(t.is_cuda and not t.is_cpu and t.device == torch.device("cuda", 0) and t.get_device() == 0
                   for t in made)
        # what the code itself puts on the CPU stays there
        host = [x.cpu(), x.to("cpu"), torch.zeros(2, device="cpu"), x.to(torch.device("cpu"))]
        assert all(t.device.type == "cpu" and not t.is_cuda and t.get_device() == -1 for t in host)
        assert torch.cuda.is_current_stream_capturing() is False    # flashinfer's wrappers ask it first
        with torch.cuda.nvtx.range("forward"):        # a CPU build's NVTX raised "not installed"
            torch.cuda.nvtx.mark("here")
        # a test saving and restoring the device's random state around a case (an IndexError before)
        torch.cuda.set_rng_state(torch.cuda.get_rng_state())
    assert all(t.device.type == "cpu" for t in made)     # what they are, once the block ends
    with pytest.raises(ZeroDivisionError), as_target(Target("hip", "gfx942", 64)):
        assert torch.cuda.get_device_capability() == (9, 4) and torch.version.hip and torch.version.cuda is None
        assert torch.cuda.get_device_properties(0).gcnArchName.startswith("gfx942")
        assert "MI300" in torch.cuda.get_device_name()
        1 / 0
    after = (torch.cuda.is_available, torch.cuda.get_device_properties, torch.version.cuda, torch.version.hip,
             torch_triton.has_triton)
    assert after == before and not torch.cuda.is_available()
    with pytest.raises(RuntimeError, match="NVTX"):
        torch.cuda.nvtx.range_push("x")
    with pytest.raises(Exception):
        torch.empty(1, device="cuda")


def test_a_file_that_asks_the_device_at_import_gets_the_targets_answers(tmp_path):
    """broken_import.py picks its config from get_device_capability() at import: each target its own."""
    for target, block in (("cuda:90", 128), ("cuda:80", 64), ("hip:gfx942", 128)):
        out = ok("dump", f"{DATA}/broken_import.py:copy_kernel", "-t", target, "--store", tmp_path / target.replace(":", "-"))
        assert "loaded   imported" in out and f"BLOCK={block}" in out, out


def test_a_package_that_needs_a_gpu_at_import_loads_as_a_package(tmp_path):
    out = ok("dump", f"{CORPUS}/gpu_pkg/kernels.py:persistent_rmsnorm_kernel", "-t", "hip:gfx942", "--store", tmp_path)
    assert "loaded   imported" in out and "NUM_PROGRAMS=304" in out and "ON_AMD=True" in out
    out = ok("dump", f"{CORPUS}/gpu_pkg/kernels.py:persistent_rmsnorm_kernel", "-t", "cuda:90", "--store", tmp_path)
    assert "NUM_PROGRAMS=132" in out and "ON_AMD=False" in out and "config 0 of 4" in out


def test_namespace_packages_class_kernels_and_has_triton_guards(tmp_path, monkeypatch):
    out = ok("dump", f"{CORPUS}/ns_kernels/ops.py:scale_rows_kernel", "--store", tmp_path / "a")
    assert "loaded   imported" in out
    assert assumed(out)["inp"] == "*fp32"           # offset, passed on to a helper that loads through it
    monkeypatch.chdir(CORPUS)
    ok("dump", "ns_kernels.ops:scale_rows_kernel", "--store", tmp_path / "b")
    out = ok("dump", f"{CORPUS}/class_kernels.py:Sum.backward", "--store", tmp_path / "c")
    assert "kernel   Sum.backward" in out
    ok("dump", f"{CORPUS}/class_kernels.py:amax_kernel", "--store", tmp_path / "d")
    r = run("dump", f"{CORPUS}/class_kernels.py:Sum.sideways", "--store", tmp_path / "e")
    one_error_line(r, "no kernel 'Sum.sideways'", "Sum.backward", "Sum.forward")


def test_assignment_made_kernels_and_their_heuristics(tmp_path):
    out = ok("dump", f"{CORPUS}/gated_mlp.py:_fg_kernel", "--store", tmp_path)
    assert "heuristics LONG_INDEXING=False" in out and assumed(out)["e"] == "*fp32"


# -- autotune pruners --------------------------------------------------------------------------------

def test_a_pruner_reads_constexprs_and_a_raising_pruner_is_one_line(tmp_path):
    out = ok("dump", f"{CORPUS}/packed_gemv.py:gemv_int4_kernel", "--store", tmp_path / "a")
    assert "group_size=64" in out and "prune_configs_by keeps 4 of 6 configs" in out
    assert assumed(out)["b_ptr"] == "*i32"
    one_error_line(run("dump", f"{CORPUS}/packed_gemv.py:gemv_int4_kernel", "-p", "group_size=None", "--store",
                       tmp_path / "b"),
                   "prune_configs_by (kernel_config_pruner at", "packed_gemv.py:12) raised TypeError")
    # with --config the pruner's failure is a note: the compile goes on (and fails where None is divided by)
    one_error_line(run("dump", f"{CORPUS}/packed_gemv.py:gemv_int4_kernel", "-p", "group_size=None", "--config", "1",
                       "--store", tmp_path / "c"), "failed to compile at", "packed_gemv.py:32")


# -- what real files do that the first pass missed ---------------------------------------------------

def test_a_constexpr_dividing_a_runtime_int_keeps_its_block_size(tmp_path):
    # a GPTQ-style dequantising matmul: `groupsize // BLOCK_K` is a runtime int divided by the block
    # size, and BLOCK_K is also tl.dot's K; only `BLOCK_N // SPLIT` makes SPLIT small
    f = tmp_path / "qlinear.py"
    f.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def qmm(a_ptr, b_ptr, c_ptr, groupsize, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr, SPLIT: tl.constexpr):
            rm = tl.arange(0, BLOCK_M)
            rn = tl.arange(0, BLOCK_N)
            rk = tl.arange(0, BLOCK_K)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in range(0, K // BLOCK_K):
                g = k // (groupsize // BLOCK_K)
                a = tl.load(a_ptr + rm[:, None] * K + rk[None, :] + k * BLOCK_K)
                b = tl.load(b_ptr + (rk[:, None] // 8) * BLOCK_N + rn[None, :] + g)
                b = ((b >> ((rk[:, None] % 8) * 4)) & 0xF).to(tl.float16)
                acc += tl.dot(a, b)
            part = tl.arange(0, BLOCK_N // SPLIT)
            tl.store(c_ptr + rm[:, None] * BLOCK_N + part[None, :], tl.sum(acc, axis=1)[:, None] + part[None, :])
    """))
    a = assumed(ok("dump", f"{f}:qmm", "--store", tmp_path / "out"))
    assert a["BLOCK_K"] == "64" and a["SPLIT"] == "2" and a["b_ptr"] == "*i32", a


def test_what_files_ask_the_driver_and_torch_at_import_is_answered(tmp_path):
    # tutorials read the driver's device properties and seed torch's generators at import; kernels
    # take a tl.rand seed, an option named like a launch option, and compare their element type
    f = tmp_path / "tut.py"
    f.write_text(textwrap.dedent("""
        import torch
        import triton
        import triton.language as tl

        torch.manual_seed(0)
        PROPS = triton.runtime.driver.active.utils.get_device_properties(0)
        assert PROPS["max_shared_mem"] > 100_000 and PROPS["multiprocessor_count"] == 132   # an H100's

        @triton.jit
        def drop(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr, num_stages: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask)
            if x_ptr.dtype.element_ty == tl.float16:
                x = x * 2
            keep = tl.rand(seed, offs) > p
            for _ in tl.range(0, 1, num_stages=num_stages):
                tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=mask)
    """))
    out = ok("dump", f"{f}:drop", "--store", tmp_path / "out")
    assert "loaded   imported" in out, out
    a = assumed(out)
    assert a["seed"].startswith("i32") and a["x_ptr"] == "*fp16" and a["p"].startswith("fp32"), a


def test_assumed_tiles_shrink_with_the_warps_of_the_first_autotune_config(tmp_path):
    # linear-attention style: configs sweep num_warps from 1; 64-wide tiles on one warp take minutes
    f = tmp_path / "chunk.py"
    f.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (1, 2, 4)], key=["BT", "BK"])
        @triton.jit
        def chunk_fwd(k, v, o, T, BT: tl.constexpr, BK: tl.constexpr):
            o_t = tl.arange(0, BT)
            o_k = tl.arange(0, BK)
            b_k = tl.load(k + o_t[:, None] * BK + o_k[None, :], mask=o_t[:, None] < T)
            b_v = tl.load(v + o_k[:, None] * BK + o_k[None, :])
            tl.store(o + o_t[:, None] * BK + o_k[None, :], tl.dot(b_k, b_v), mask=o_t[:, None] < T)
    """))
    out = ok("dump", f"{f}:chunk_fwd", "--store", tmp_path / "out")
    a = assumed(out)
    assert a["BT"] == a["BK"] == "16" and "16, for the 1 warp of its first autotune config" in out, out


def test_a_static_range_count_that_is_also_a_block_is_small(tmp_path):
    # fine-tuning-library style: a register-held vector of MAX_BLOCKS scores filled by an unrolled loop
    f = tmp_path / "res.py"
    f.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def res_fwd(v_ptr, out_ptr, n_blocks, D, BLOCK_D: tl.constexpr, MAX_BLOCKS: tl.constexpr):
            cols = tl.arange(0, BLOCK_D)
            scores = tl.zeros((MAX_BLOCKS,), dtype=tl.float32)
            for i in tl.static_range(0, MAX_BLOCKS):
                if i < n_blocks:
                    v = tl.load(v_ptr + i * D + cols, mask=cols < D, other=0.0)
                    scores = tl.where(tl.arange(0, MAX_BLOCKS) == i, tl.sum(v, axis=0), scores)
            tl.store(out_ptr + tl.arange(0, MAX_BLOCKS), scores)
    """))
    out = ok("dump", f"{f}:res_fwd", "--store", tmp_path / "out")
    a = assumed(out)
    assert a["MAX_BLOCKS"] == "2" and a["BLOCK_D"] == "64" and "the loop is unrolled" in out, out


# -- device-query tools at import: nvidia-smi, rocm-smi, pynvml ----------------------------------

def test_vendor_query_commands_and_nvml_answer_as_the_target_and_agree(tmp_path):
    """vendor_pkg finds its vendor by running each vendor's query command at import (no success:
    "No device were detected"), and its pruner reads the SM clock from nvidia-smi and from NVML,
    which must agree: the H100 stand-in's 1980 MHz keeps the big tiles, the A100's 1410 the small."""
    out = ok("dump", f"{CORPUS}/vendor_pkg/ops.py:scaled_copy_kernel", "-t", "cuda:90", "--store", tmp_path / "a")
    assert "loaded   imported" in out and "it ran nvidia-smi, answered as the target's device" in out
    assert "rocm-smi, missing" in out and "config 2 of 4" in out, out
    out = ok("dump", f"{CORPUS}/vendor_pkg/ops.py:scaled_copy_kernel", "-t", "cuda:80", "--store", tmp_path / "b")
    assert "config 0 of 4" in out, out
    # on an AMD target nvidia-smi is missing and NVML has no library: the file's own pruner fails there
    r = run("dump", f"{CORPUS}/vendor_pkg/ops.py:scaled_copy_kernel", "-t", "hip:gfx942", "--store", tmp_path / "c")
    one_error_line(r, "prune_configs_by (sm_clock_mhz at", "NVML Shared Library Not Found")
    out = ok("dump", f"{CORPUS}/vendor_pkg/ops.py:scaled_copy_kernel", "-t", "hip:gfx942", "--config", "0",
             "--store", tmp_path / "d")
    assert "rocm-smi, answered as the target's device" in out and "nvidia-smi, missing" in out, out


def test_query_tools_are_answered_from_the_device_facts_and_restored():
    import shutil
    import subprocess
    import sys

    from kinspect.compile.device import as_target
    from kinspect.core.model import Target

    before = (subprocess.Popen, shutil.which, sys.modules.get("pynvml"))
    with as_target(Target("cuda", "90", 32)):
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,compute_cap,memory.total", "--format=csv,noheader"],
                           capture_output=True, text=True)
        assert q.returncode == 0 and q.stdout.strip() == "NVIDIA H100 80GB HBM3, 9.0, 81920 MiB"
        bad = subprocess.run(["nvidia-smi", "--query-gpu=power.draw", "--format=csv"], capture_output=True, text=True)
        assert bad.returncode == 2 and "not a valid field" in bad.stderr     # no invented figure
        assert subprocess.check_output("nvidia-smi -L", shell=True).decode().startswith("GPU 0: NVIDIA H100")
        with pytest.raises(FileNotFoundError):
            subprocess.run(["rocm-smi"])
        assert shutil.which("nvidia-smi") and shutil.which("rocm-smi") is None
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        assert pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM) == 1980
        assert pynvml.nvmlDeviceGetCudaComputeCapability(h) == (9, 0)
        assert subprocess.run([sys.executable, "-c", "print(1)"], capture_output=True).stdout == b"1\n"
    with as_target(Target("hip", "gfx942", 64)):
        assert "gfx942" in subprocess.run(["rocminfo"], capture_output=True, text=True).stdout
        with pytest.raises(FileNotFoundError):
            subprocess.check_output(["/usr/bin/nvidia-smi"])
    assert (subprocess.Popen, shutil.which, sys.modules.get("pynvml")) == before


# -- tl.dot pairs, float constexprs, heuristics that read their own name ------------------------------

def test_dot_operands_get_one_element_type(tmp_path):
    """The identity-trick dot (its second operand cast to Q's own element type) says nothing of Q:
    Q and K pair as fp16 and it compiles; a B that says nothing takes the bf16 its A is checked for."""
    out = ok("dump", f"{CORPUS}/dot_pairs.py:attn_fwd_identity_trick", "-p", "Q_IN_REGS=True", "--store",
             tmp_path / "a")
    got = assumed(out)
    assert got["Q"] == got["K"] == got["V"] == "*fp16", out
    assert got["sm_scale"] == "fp32:1.0" and "multiplies a tl.float32 value at line 30" in out
    out = ok("dump", f"{CORPUS}/dot_pairs.py:gemm_a_checked", "--store", tmp_path / "b")
    got = assumed(out)
    assert got["a_ptr"] == got["b_ptr"] == "*bf16" and "the other operand of tl.dot at line 53 is a_ptr" in out


def test_float_constexprs_by_use_and_a_heuristic_reading_its_own_name(tmp_path):
    # the kernel alone: with its wrapper beside it, the wrapper's own values are used
    text = (CORPUS / "norm_flags.py").read_text()
    (tmp_path / "norm_flags.py").write_text(text[:text.index("def rms_norm_bwd(")])
    out = ok("dump", f"{tmp_path}/norm_flags.py:_rms_norm_bwd", "--store", tmp_path / "out")
    got = assumed(out)
    assert got["eps"] == "1.0" and "a term of tl.rsqrt's argument at line 18" in out
    assert got["OFFSET"] == "1.0" and got["n_cols"].startswith("i32")
    assert got["GEMMA"] == "False" and "the @triton.heuristics value that sets it reads it from the launch" in out
    assert "heuristics GEMMA=False" in out


def test_what_offsets_a_pointer_is_an_integer(tmp_path):
    """`X + i * row_step` makes row_step an integer even where it also meets a float; `scale`
    multiplying a float value is a float (no name says so)."""
    import importlib.util

    from kinspect.compile.assume import assume

    f = tmp_path / "offsets_float.py"
    f.write_text(textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def k(X, Y, factor, row_step, n):
            i = tl.program_id(0)
            x = tl.load(X + i * row_step).to(tl.float32)
            tl.store(Y + i, x * factor + row_step)
        '''))
    spec = importlib.util.spec_from_file_location("offsets_float", f)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    got = {a.name: a.spec for a in assume(module.k, ["X", "Y", "factor", "row_step", "n"])}
    assert got["factor"] == "fp32:1.0" and got["row_step"].startswith("i32"), got


def test_a_failed_guess_suggests_other_values_derived_from_the_error():
    """The suggestion never repeats what failed: a tile over Triton's limit halves the largest
    assumed block; a tl.dot of two types retypes the pointer nothing fixed; an error that says
    nothing to act on gets no new values."""
    import torch

    from kinspect.compile.assume import Assumed, improve

    blocks = (Assumed("BLOCK_M", 128, "128", "a power of two: tl.arange at line 3", True, "pow2"),
              Assumed("BLOCK_N", 64, "64", "a power of two: tl.arange at line 4", True, "pow2"))
    better, how = improve(blocks, "numel (2097152) exceeds triton maximum tensor numel (1048576)")
    assert [a.value for a in better] == [64, 64] and "BLOCK_M=64" in how and "not 128" in better[0].why
    ptrs = (Assumed("a", torch.empty(1, dtype=torch.float16), "*fp16", "a pointer: loaded at line 5; element type "
                    "fp16: a tl.dot operand at line 9", False, "pointer"),
            Assumed("b", torch.empty(1), "*fp32", "a pointer: loaded at line 6; element type fp32: nothing in the "
                    "code fixes it", False, "pointer"))
    better, how = improve(ptrs, "Both operands must be same dtype. Got fp16 and fp32")
    assert [a.spec for a in better] == ["*fp16", "*fp16"] and better[1].value.dtype == torch.float16
    assert improve(ptrs, "NameError('undefined_name is not defined')") == ((), "")


def test_assumed_tiles_stay_within_tritons_largest_tensor(tmp_path):
    f = tmp_path / "scales.py"
    f.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def unswizzle(s_ptr, o_ptr, REP_M: tl.constexpr, REP_K: tl.constexpr):
            offs = tl.arange(0, REP_M * REP_K * 512)
            s = tl.load(s_ptr + offs).reshape(REP_M, REP_K, 32, 4, 4)
            tl.store(o_ptr + offs, s.trans(0, 3, 2, 1, 4).reshape(REP_M * REP_K * 512))
    """))
    out = ok("dump", f"{f}:unswizzle", "--store", tmp_path / "out")
    got = assumed(out)
    assert int(got["REP_M"]) * int(got["REP_K"]) * 512 <= 1 << 16, got
    assert "stays within 65536 elements" in out


def test_a_parameter_that_is_a_pointer_only_under_a_flag_is_a_number_where_the_flag_is_off(tmp_path):
    """flash-attention's rotary style: `SEQLEN_OFFSETS` is an int or a pointer as a constexpr flag
    says. It was assumed a pointer with the flag False, and the live branch (`rm + SEQLEN_OFFSETS`,
    then rows of COS) did not compile. With the flag given True it is a pointer again; a bias
    pointer used only under HAS_BIAS, and never as a number, stays a pointer."""
    f = tmp_path / "rotary_style.py"
    f.write_text(textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def rot(OUT, X, COS, B, OFFSETS, seqlen_ro, IS_OFFSETS_TENSOR: tl.constexpr, HAS_BIAS: tl.constexpr,
                BLOCK_M: tl.constexpr, HALF: tl.constexpr):
            pid = tl.program_id(0)
            rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
            if not IS_OFFSETS_TENSOR:
                rm_cs = rm + OFFSETS
            else:
                rm_cs = rm + tl.load(OFFSETS + pid)
            rk = tl.arange(0, HALF)
            cos = tl.load(COS + rm_cs[:, None] * HALF + rk[None, :], mask=rm_cs[:, None] < seqlen_ro, other=1.0)
            x = tl.load(X + rm[:, None] * HALF + rk[None, :])
            y = x * cos
            if HAS_BIAS:
                y += tl.load(B + rk)[None, :]
            tl.store(OUT + rm[:, None] * HALF + rk[None, :], y)
        '''))
    out = ok("dump", f"{f}:rot", "--store", tmp_path / "a")
    got = assumed(out)
    assert got["OFFSETS"].startswith("i32:") and got["IS_OFFSETS_TENSOR"] == "False", got
    assert "a pointer only under `if IS_OFFSETS_TENSOR:`" in out and got["B"] == "*fp32", got
    out = ok("dump", f"{f}:rot", "-p", "IS_OFFSETS_TENSOR=True", "--store", tmp_path / "b")
    assert assumed(out)["OFFSETS"].startswith("*"), out


def test_a_loaded_value_that_bounds_an_index_is_an_integer(tmp_path):
    # MInference's sparse attention: `seqlen = tl.load(seqlens + b)` bounds the rows (`offs_m < seqlen`)
    f = tmp_path / "varlen.py"
    f.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl


        @triton.jit
        def _varlen_copy(X, Seqlens, Out, stride_b, BLOCK_M: tl.constexpr):
            b = tl.program_id(0)
            seqlen = tl.load(Seqlens + b)
            offs_m = tl.arange(0, BLOCK_M)
            x = tl.load(X + b * stride_b + offs_m, mask=offs_m < seqlen, other=0.0)
            tl.store(Out + b * stride_b + offs_m, x.to(tl.float16), mask=offs_m < seqlen)
    """))
    out = ok("dump", f"{f}:_varlen_copy", "--store", tmp_path / "s")
    a = assumed(out)
    assert a["Seqlens"] == "*i32" and "its values bound a tl.arange index at line 11" in out
    assert a["Out"] == "*fp16"


def test_a_loaded_value_cast_to_an_integer_and_used_as_an_index_is_an_integer(tmp_path):
    # a grouped GEMM over tensor descriptors: each group's first and last row, loaded and cast
    # (`.to(tl.int32)`), bound its loop and offset its descriptors; a copy whose row starts are cast
    # to int64 before they offset a pointer; a float loaded and cast to an integer is data, not an index
    f = tmp_path / "groups.py"
    f.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl


        @triton.jit
        def _group_sum(X, Starts, Ends, Out, N: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
            g = tl.program_id(0)
            start = tl.load(Starts + g).to(tl.int32)
            end = tl.load(Ends + g).to(tl.int32)
            x_desc = tl.make_tensor_descriptor(X, shape=[end, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
            acc = tl.zeros((BLOCK_K, BLOCK_N), dtype=tl.float32)
            for k in range(0, tl.cdiv(end - start, BLOCK_K)):
                acc += x_desc.load([start + k * BLOCK_K, 0]).to(tl.float32)
            tl.store(Out + g * BLOCK_N + tl.arange(0, BLOCK_N), tl.sum(acc, axis=0))


        @triton.jit
        def _gather_rows(X, RowStarts, Codes, Out, stride, BLOCK: tl.constexpr):
            r = tl.program_id(0)
            row = tl.load(RowStarts + r).to(tl.int64)
            code = tl.load(Codes + r).to(tl.int32)
            offs = tl.arange(0, BLOCK)
            x = tl.load(X + row * stride + offs)
            tl.store(Out + r * BLOCK + offs, x * code)
    """))
    out = ok("dump", f"{f}:_group_sum", "--store", tmp_path / "s")
    a = assumed(out)
    assert a["Starts"] == "*i32" and a["Ends"] == "*i32", a
    assert "tl.cdiv on its values, cast to an integer, at line 13" in out
    assert "its values are a tensor descriptor's shape at line 11" in out
    out = ok("dump", f"{f}:_gather_rows", "--store", tmp_path / "t")
    a = assumed(out)
    assert a["RowStarts"] == "*i32" and "its values are offsets into X at line 24" in out
    assert a["Codes"] == "*fp32" and "nothing in the code fixes it" in out


def test_an_assumed_value_its_pruner_keeps_no_config_for_is_one_the_configs_set(tmp_path):
    # a MoE kernel autotuned over tiles whose pruner keeps the configs whose BLOCK_M is the padding
    # the routing used: an assumed PAD kept none; one of the configs' values keeps one, and says so
    f = tmp_path / "moe.py"
    f.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl


        def keep_padding(configs, named_args, **kwargs):
            pad = named_args.get("PAD", kwargs.get("PAD"))
            return [c for c in configs if c.kwargs["BLOCK_M"] == pad]


        @triton.autotune(configs=[triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}), triton.Config({"BLOCK_M": 16, "BLOCK_N": 32})],
                         key=["N"], prune_configs_by={"early_config_prune": keep_padding})
        @triton.jit
        def _moe_rows(x_ptr, y_ptr, N, PAD: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
            rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            cols = tl.arange(0, BLOCK_N)
            mask = cols[None, :] < N
            x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
            tl.store(y_ptr + rows[:, None] * N + cols[None, :], x * 2, mask=mask)
    """))
    out = ok("dump", f"{f}:_moe_rows", "--store", tmp_path / "s")
    assert "PAD=16" in out and "autotuned: config 1 of 2" in out, out
    assert "a value the autotune configs set, for which prune_configs_by keeps a config" in out
    # a value given is the user's: its pruner's error stays one line
    one_error_line(run("dump", f"{f}:_moe_rows", "-p", "PAD=8", "--store", tmp_path / "t"),
                   "prune_configs_by raised")


def test_what_offsets_a_pointer_made_from_a_loaded_address_is_an_integer(tmp_path):
    # a grouped GEMM's: each group's A is an address loaded from a table, and its leading
    # dimension, loaded from another, offsets it
    f = tmp_path / "grouped.py"
    f.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl


        @triton.jit
        def _grouped_copy(group_a_ptrs, g_lds, out_ptr, BLOCK: tl.constexpr):
            g = tl.program_id(0)
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            lda = tl.load(g_lds + g)
            offs = tl.arange(0, BLOCK)
            x = tl.load(a_ptr + offs * lda)
            tl.store(out_ptr + g * BLOCK + offs, x)
    """))
    out = ok("dump", f"{f}:_grouped_copy", "--store", tmp_path / "s")
    a = assumed(out)
    assert a["group_a_ptrs"] == "*i64" and a["g_lds"] == "*i32"
    assert "its values offset a pointer made from an address at line 12" in out


def test_element_types_a_flag_picks_follow_the_branch_the_flag_takes(tmp_path):
    # tritonbench's bf16 x int16 GEMM: which operand is int16 depends on TRANSPOSE, and kinspect
    # took the first comparison it read (b bf16, in the `if TRANSPOSE:` branch) where the flag is
    # False: the static_assert in the `else` failed the compile
    f = tmp_path / "mixed.py"
    f.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl


        @triton.jit
        def _mixed_dot(a_ptr, b_ptr, c_ptr, TRANSPOSE: tl.constexpr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
            b = tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :], mask=offs[:, None] < BLOCK, other=0)
            if TRANSPOSE:
                tl.static_assert(a.dtype == tl.int16)
                tl.static_assert(b.dtype == tl.bfloat16)
                c = tl.dot(a.to(tl.bfloat16), b)
            else:
                tl.static_assert(a.dtype == tl.bfloat16)
                tl.static_assert(b.dtype == tl.int16)
                c = tl.dot(a, b.to(tl.bfloat16))
            tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], c)
    """))
    a = assumed(ok("dump", f"{f}:_mixed_dot", "--store", tmp_path / "s"))
    assert a["TRANSPOSE"] == "False" and a["a_ptr"] == "*bf16" and a["b_ptr"] == "*i16"
    a = assumed(ok("dump", f"{f}:_mixed_dot", "-p", "TRANSPOSE=True", "--store", tmp_path / "t"))
    assert a["a_ptr"] == "*i16" and a["b_ptr"] == "*bf16"


def test_a_constexpr_that_divides_a_word_is_a_part_of_it(tmp_path):
    # AutoGPTQ's dequant: `32 // bits` values packed in an int32, masked with maxq = 2**bits - 1;
    # a block-like 64 made the per-word count 0 and the mask 2**64 - 1, out of range for int32
    f = tmp_path / "packed.py"
    f.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl


        @triton.jit
        def _unpack(q_ptr, out_ptr, n, bits: tl.constexpr, BLOCK: tl.constexpr):
            per_word: tl.constexpr = 32 // bits
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            word = tl.load(q_ptr + offs // per_word, mask=offs < n)
            value = (word >> ((offs % per_word) * bits)) & ((1 << bits) - 1)
            tl.store(out_ptr + offs, value.to(tl.float16), mask=offs < n)
    """))
    out = ok("dump", f"{f}:_unpack", "--store", tmp_path / "s")
    a = assumed(out)
    assert a["bits"] == "4" and "it divides 32 at line 8" in out


def test_a_loaded_value_beside_a_typed_one_in_a_conditional_is_of_that_type(tmp_path):
    # flashinfer's group GEMM arguments: `tl.load(w_indices + pid) if w_indices else tl.cast(pid,
    # tl.int64)`; kinspect assumed w_indices *fp32 and the compile failed (fp32 and int64)
    f = tmp_path / "group_args.py"
    f.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl


        @triton.jit
        def _group_args(w_indices, w_ptr, out_ptr, stride_w):
            pid = tl.program_id(0)
            w_i = tl.load(w_indices + pid) if w_indices else tl.cast(pid, tl.int64)
            tl.store(out_ptr + pid, (w_ptr + w_i * stride_w).to(tl.int64, bitcast=True))
    """))
    out = ok("dump", f"{f}:_group_args", "--store", tmp_path / "s")
    assert assumed(out)["w_indices"] == "*i64" and "its values meet tl.int64 ones in a conditional at line 9" in out
