"""The project's own tests, run with every launch recorded and none run (kinspect.compile.test_runs),
where their text cannot be read whole: a callee that is a loop variable, cases decoded at run time,
inputs from a helper method. Projects written here in the styles of cute-kernels' unittest classes and
pytest's parametrize; each kernel compiled for real, offline."""

import sys
import textwrap
from pathlib import Path

from kinspect.compile import test_runs
from tests.compile.test_launch_values import assumed_by_name, ok, record, write
from tests.compile.test_test_calls import NORM, norm_project

# cute-kernels' style: a unittest class whose cases the project decodes at run time, the function
# under test a loop variable, the inputs made by a helper method
UNREADABLE_TEST = """
    import itertools
    import json
    import unittest

    import torch

    from proj.ops.norm import rms_norm

    FUNCTIONS = [rms_norm]


    def cases():
        return json.loads('[[[6, 2048], "bfloat16"], [[4, 512], "float16"]]')


    class TestNorm(unittest.TestCase):
        def inputs(self, shape, dtype):
            x = torch.randn(*shape).to(getattr(torch, dtype)).cuda()
            return x, torch.ones(shape[-1], dtype=x.dtype, device=x.device)

        def test_rms(self):
            for function, (shape, dtype) in itertools.product(FUNCTIONS, cases()):
                with self.subTest(shape=shape):
                    x, w = self.inputs(shape, dtype)
                    y = function(x, w)
                    torch.testing.assert_close(y, x)
"""


def project(tmp_path: Path, test: str = UNREADABLE_TEST) -> Path:
    return norm_project(tmp_path, test)


def test_the_test_is_run_to_the_kernels_launch(tmp_path):
    # read from the text, the inputs were made up (bf16 16x4096: BLOCK_N 4096); run, the test's first
    # case is bf16 6x2048, and the comparison after the launch never runs
    f = project(tmp_path)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    node = "tests/test_norm.py::TestNorm::test_rms"
    assert f"the project's test {node} ran, every launch recorded and none run" in out
    rec = record(tmp_path / "s")
    assert rec["signature"]["x_ptr"] == "*bf16" and rec["signature"]["w_ptr"] == "*bf16"
    assert rec["constexprs"]["BLOCK_N"] == 2048
    assert rec["user"]["from"] == node
    # nothing assumed of the wrapper's inputs: they are the test's own
    assert not [a for a in assumed_by_name(rec).values() if a["kind"] in ("input", "tested")]
    # nothing written into the project, and its test modules not left imported
    assert not list(tmp_path.rglob(".pytest_cache")) and not list(tmp_path.rglob("__pycache__"))
    assert "test_norm" not in sys.modules


def test_the_node_it_names_runs_again_with_from(tmp_path):
    f = project(tmp_path)
    node = "tests/test_norm.py::TestNorm::test_rms"
    ok("dump", f"{f}:_rms_kernel", "--from", str(tmp_path / node), "--store", str(tmp_path / "s"))
    rec = record(tmp_path / "s")
    assert rec["constexprs"]["BLOCK_N"] == 2048 and rec["signature"]["x_ptr"] == "*bf16"


def test_a_test_that_fails_before_the_launch_leaves_the_wrapper_to_its_made_up_inputs(tmp_path):
    f = project(tmp_path, UNREADABLE_TEST.replace("x, w = self.inputs(shape, dtype)",
                                                  "x, w = self.inputs(shape, dtype)\n"
                                                  "                    raise RuntimeError('needs a GPU')"))
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's tests (tests/test_norm.py), run, did not launch it" in out
    assert "RuntimeError: needs a GPU" in out
    assert "wrapper rms_norm()" in out and "with made-up inputs" in out


def test_a_test_past_its_budget_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(test_runs, "TEST_BUDGET_S", 1)
    f = project(tmp_path, UNREADABLE_TEST.replace("def test_rms(self):",
                                                  "def test_rms(self):\n            import time; time.sleep(30)"))
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "did not launch it: they ran past 1 s" in out and "with made-up inputs" in out


def test_a_pytest_node_is_not_code_to_evaluate():
    assert test_runs.is_node("tests/test_norm.py::TestNorm::test_rms[fp16-1024]")
    assert test_runs.is_node("tests/test_norm.py")
    assert not test_runs.is_node("rms_norm(torch.randn(4, 8))")
    assert not test_runs.is_node("main")


def test_tests_beside_a_python_folder_are_the_projects(tmp_path):
    # Triton's and FastVideo's layout: pyproject.toml and tests/ above the python/ folder the package is in
    write(tmp_path, "pyproject.toml", "[project]\nname = 'proj'\n")
    write(tmp_path, "python/proj/__init__.py", "")
    write(tmp_path, "python/proj/ops/__init__.py", "")
    f = write(tmp_path, "python/proj/ops/norm.py", NORM)
    write(tmp_path, "tests/test_norm.py", UNREADABLE_TEST)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's test tests/test_norm.py::TestNorm::test_rms ran" in out
    assert record(tmp_path / "s")["constexprs"]["BLOCK_N"] == 2048


def test_what_a_test_sets_for_the_process_is_undone(tmp_path, monkeypatch):
    import os

    import torch

    f = project(tmp_path, UNREADABLE_TEST.replace("def test_rms(self):", "def test_rms(self):\n"
                                                  "            import os; os.environ['CUDA_VISIBLE_DEVICES'] = '2'\n"
                                                  "            torch.set_default_dtype(torch.float64)\n"
                                                  "            os.chdir('/')"))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    cwd = os.getcwd()
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's test tests/test_norm.py::TestNorm::test_rms ran" in out
    assert "CUDA_VISIBLE_DEVICES" not in os.environ and torch.get_default_dtype() == torch.float32
    assert os.getcwd() == cwd


# ring-flash-attention's style: a test written as a script, `main()` under `__main__`, no test function
SCRIPT_TEST = """
    import torch

    from proj.ops.norm import rms_norm as triton_rms_norm


    def main():
        shapes = dict(__import__("json").loads('{"rows": 3, "cols": 768}'))
        x = torch.randn(shapes["rows"], shapes["cols"], dtype=torch.float16, device="cuda")
        y = triton_rms_norm(x, torch.ones(shapes["cols"], dtype=x.dtype, device=x.device))
        assert torch.allclose(y, x)


    if __name__ == "__main__":
        main()
"""


def test_a_test_written_as_a_script_runs_its_main_block(tmp_path):
    f = project(tmp_path, SCRIPT_TEST)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's test tests/test_norm.py ran" in out
    rec = record(tmp_path / "s")
    assert rec["constexprs"]["BLOCK_N"] == 1024 and rec["signature"]["x_ptr"] == "*fp16"


# cute-kernels' style again: a case that builds the project's CUDA extension before the Triton one, and
# the function under test compiled
BUILDING_TEST = """
    import os

    import torch
    from torch.utils.cpp_extension import load as load_cpp_extension

    from proj.ops.norm import rms_norm


    def test_cuda_backend():
        os.makedirs("build", exist_ok=True)
        load_cpp_extension("proj_norm", sources=["proj/ops/norm.cu"], build_directory="build")


    def test_triton_backend():
        x = torch.randn(2, 256, dtype=torch.bfloat16, device="cuda")
        torch.compile(rms_norm, fullgraph=True)(x, torch.ones(256, dtype=x.dtype, device="cuda"))
"""


def test_no_extension_is_built_and_torch_compile_leaves_the_function_as_it_is(tmp_path):
    f = project(tmp_path, BUILDING_TEST)
    write(tmp_path, "proj/ops/norm.cu", "this is not C++ and is never compiled")
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's test tests/test_norm.py::test_triton_backend ran" in out
    assert record(tmp_path / "s")["constexprs"]["BLOCK_N"] == 256
    assert not list((tmp_path / "build").iterdir())
    from torch.utils import cpp_extension

    assert cpp_extension.load.__module__ == "torch.utils.cpp_extension" and torch_compile_is_torchs()


def torch_compile_is_torchs() -> bool:
    import torch

    return torch.compile.__module__.startswith("torch")


# axolotl's style: a conftest whose session fixtures, used by every test, download models
DOWNLOADING_CONFTEST = """
    import os

    import pytest


    @pytest.fixture(scope="session", autouse=True)
    def download_model():
        assert os.environ.get("HF_HUB_OFFLINE") == "1"
        raise OSError("We couldn't connect to the Hub and cannot find the files in the local cache")
"""


def test_a_failing_autouse_fixture_is_passed_over_and_said(tmp_path):
    f = project(tmp_path)
    write(tmp_path, "tests/conftest.py", DOWNLOADING_CONFTEST)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's test tests/test_norm.py::TestNorm::test_rms ran" in out
    assert "1 autouse fixture of its failed and was passed over: download_model (OSError)" in out
    assert record(tmp_path / "s")["constexprs"]["BLOCK_N"] == 2048


def test_a_conftest_that_fails_to_import_is_left_out_and_said(tmp_path):
    # Megatron-LM's conftest imports typing.override (Python 3.12): pytest could not start; run without
    # it, the test that needs none of its fixtures launches the kernel
    f = project(tmp_path)
    write(tmp_path, "tests/conftest.py", "import addict_not_installed\n")
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's test tests/test_norm.py::TestNorm::test_rms ran" in out, out
    assert "run without the project's conftest.py files, which pytest could not import (ModuleNotFoundError: " \
           "No module named 'addict_not_installed')" in out
    assert record(tmp_path / "s")["constexprs"]["BLOCK_N"] == 2048
    # where the tests still launch nothing without it, the launch line says both
    other = tmp_path / "other"
    f = project(other)
    write(other, "tests/conftest.py", "import addict_not_installed\n")
    write(other, "tests/test_norm.py", """
        import not_installed_either

        from proj.ops.norm import rms_norm


        def test_rms():
            rms_norm(*not_installed_either.inputs())
    """)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(other / "t"))
    assert "No module named 'not_installed_either'" in out and "(run without the project's conftest.py files, " \
           "which pytest could not import: ModuleNotFoundError: No module named 'addict_not_installed')" in out, out


def test_tests_in_the_kernels_own_file_and_beside_the_package_are_run(tmp_path):
    # forgetting-transformer's style: a pytest test beside the kernel, in its own file
    write(tmp_path, "proj/__init__.py", "")
    write(tmp_path, "proj/ops/__init__.py", "")
    own = NORM + '''

    def test_norm():
        x = torch.randn(3, 384).to(getattr(torch, "float16")).cuda()
        rms_norm(x, torch.ones(384, dtype=x.dtype, device=x.device))
'''
    f = write(tmp_path, "proj/ops/norm.py", own)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's test proj/ops/norm.py::test_norm ran" in out
    assert record(tmp_path / "s")["constexprs"]["BLOCK_N"] == 512
    # native-sparse-attention-pytorch's: the test file in the project's folder, beside the package
    write(tmp_path, "proj/ops/norm.py", NORM)
    write(tmp_path, "test_norm.py", UNREADABLE_TEST)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s2"))
    assert "the project's test test_norm.py::TestNorm::test_rms ran" in out


def test_a_test_file_that_launches_at_import_is_named_as_the_file(tmp_path):
    # native-sparse-attention-pytorch's test_triton_nsa.py: the comparison runs at module level
    f = project(tmp_path, SCRIPT_TEST.replace('if __name__ == "__main__":\n        main()', "main()"))
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's test tests/test_norm.py ran" in out and "--from 'tests/test_norm.py'" in out
    assert record(tmp_path / "s")["constexprs"]["BLOCK_N"] == 1024


def test_a_script_named_from_another_folder_runs_its_main_block(tmp_path, monkeypatch):
    # `--from test_norm.py` typed in tests/: the file pytest is given is the one whose __main__ runs
    f = project(tmp_path, SCRIPT_TEST)
    monkeypatch.chdir(tmp_path / "tests")
    out = ok("dump", f"{f}:_rms_kernel", "--from", "test_norm.py", "--store", str(tmp_path / "s"))
    assert "by the test test_norm.py" in out
    assert record(tmp_path / "s")["constexprs"]["BLOCK_N"] == 1024


# a benchmark script in the style of Triton's tutorials: the only call goes through
# triton.testing.do_bench, which asks the active driver for its device interface before calling
BENCH_TEST = """
    import json

    import torch
    import triton

    from proj.ops.norm import rms_norm


    def test_speed():
        for rows, n in json.loads("[[8, 768]]"):
            x = torch.randn(rows, n, dtype=torch.float16, device="cuda")
            w = torch.ones(n, dtype=torch.float16, device="cuda")
            ms = triton.testing.do_bench(lambda: rms_norm(x, w))
            assert ms > 0
"""


def test_a_launch_inside_do_bench_is_recorded(tmp_path):
    f = project(tmp_path, BENCH_TEST)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's test tests/test_norm.py::test_speed ran" in out
    rec = record(tmp_path / "s")
    assert rec["constexprs"]["BLOCK_N"] == 1024 and rec["signature"]["x_ptr"] == "*fp16"


def test_no_tests_reads_the_tests_and_runs_none(tmp_path):
    # the same unreadable test: with --no-tests it is never run, so the wrapper's inputs are made up
    f = project(tmp_path)
    out = ok("dump", f"{f}:_rms_kernel", "--no-tests", "--store", str(tmp_path / "s"))
    assert "ran, every launch recorded" not in out and "run, did not launch it" not in out
    rec = record(tmp_path / "s")
    assert rec["user"]["from"] != "tests/test_norm.py::TestNorm::test_rms"
    assert [a for a in assumed_by_name(rec).values() if a["kind"] in ("input", "tested")]


# apex's style: the kernel reads a global that is not a constexpr (a dict of Triton dtypes), which
# Triton compiles only with TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1; the test's setUp sets it and its
# tearDown takes it away again
GLOBALS_KERNEL = """
    import torch
    import triton
    import triton.language as tl

    _DTYPES = {0: tl.float32, 1: tl.float16}
    _CODES = {torch.float32: 0, torch.float16: 1}


    @triton.jit
    def _scale_kernel(x_ptr, n, scale, DTYPE: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(x_ptr + offs, (x * scale).to(_DTYPES[DTYPE.value]), mask=offs < n)


    def scale_(x, scale):
        n = x.numel()
        _scale_kernel[(triton.cdiv(n, 1024),)](x, n, scale, DTYPE=_CODES[x.dtype], BLOCK=1024)
        return x
"""

GLOBALS_TEST = """
    import os
    import unittest

    import torch

    from proj.ops.scale import scale_


    class TestScale(unittest.TestCase):
        def setUp(self):
            os.environ["TRITON_ALLOW_NON_CONSTEXPR_GLOBALS"] = "1"

        def tearDown(self):
            os.environ.pop("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", None)

        def test_scale(self):
            for n in [int(s) for s in "4096 17".split()]:
                x = torch.randn(n, device="cuda").half()
                scale_(x, 0.5)
"""


def test_a_compile_setting_the_test_sets_is_the_launchs(tmp_path, monkeypatch):
    monkeypatch.delenv("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", raising=False)
    write(tmp_path, "proj/__init__.py", "")
    write(tmp_path, "proj/ops/__init__.py", "")
    write(tmp_path, "tests/test_scale.py", GLOBALS_TEST)
    f = write(tmp_path, "proj/ops/scale.py", GLOBALS_KERNEL)
    out = ok("dump", f"{f}:_scale_kernel", "--store", str(tmp_path / "s"))
    assert "the project's test tests/test_scale.py::TestScale::test_scale ran" in out
    assert "compiled with TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1, as the project's code had set it" in out
    rec = record(tmp_path / "s")
    assert rec["signature"]["x_ptr"] == "*fp16" and rec["constexprs"]["DTYPE"] == 1
    import os
    assert "TRITON_ALLOW_NON_CONSTEXPR_GLOBALS" not in os.environ


# a project with no tests, whose benchmarks call the wrapper: x-attention's demo and FlagAttention's
# style of script, read where they can be, run (their __main__ block, argparse defaults) where not
BENCH_READ = """
    import torch

    from proj.ops.norm import rms_norm


    def bench_rms():
        x = torch.randn(6, 2048, dtype=torch.bfloat16, device="cuda")
        w = torch.ones(2048, dtype=torch.bfloat16, device="cuda")
        rms_norm(x, w)
"""

BENCH_SCRIPT = """
    import argparse
    import json

    import torch

    from proj.ops import norm


    def main():
        p = argparse.ArgumentParser()
        p.add_argument("--dtype", default="float16")
        args = p.parse_args()
        for rows, n in json.loads("[[3, 768], [64, 8192]]"):
            x = torch.randn(rows, n, device="cuda").to(getattr(torch, args.dtype))
            norm.rms_norm(x, torch.ones_like(x[0]))


    if __name__ == "__main__":
        main()
"""


def no_tests_project(tmp_path: Path, path: str, bench: str) -> Path:
    f = norm_project(tmp_path, "")
    (tmp_path / "tests" / "test_norm.py").unlink()
    (tmp_path / "tests").rmdir()
    write(tmp_path, path, bench)
    return f


def test_a_benchmarks_call_is_read_where_there_are_no_tests(tmp_path):
    f = no_tests_project(tmp_path, "benchmarks/bench_rms.py", BENCH_READ)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "called as its test calls it (benchmarks/bench_rms.py:10, bench_rms)" in out
    rec = record(tmp_path / "s")
    assert rec["signature"]["x_ptr"] == "*bf16" and rec["constexprs"]["BLOCK_N"] == 2048


def test_an_examples_script_is_run_where_there_are_no_tests(tmp_path):
    f = no_tests_project(tmp_path, "examples/norm_demo.py", BENCH_SCRIPT)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's example examples/norm_demo.py ran" in out
    rec = record(tmp_path / "s")
    assert rec["signature"]["x_ptr"] == "*fp16" and rec["constexprs"]["BLOCK_N"] == 1024


def test_a_product_too_large_for_the_cpu_is_not_computed_and_said(tmp_path):
    # an example that runs its reference first (xtuner's: 128 products of 1.3e10 multiply-adds before
    # the call): the product is zeros of its shape, not computed, and the launch line says its values
    # are not the project's
    reference = textwrap.indent(textwrap.dedent("""
        ref = torch.randn(4096, 4096, device="cuda", requires_grad=True) @ torch.randn(4096, 4096, device="cuda")
        assert ref.shape == (4096, 4096) and ref.is_cuda
        ref += 1                # apex's reference adds its bias in place
        ref.sum().backward()
    """).lstrip("\n"), " " * 8)
    heavy = BENCH_SCRIPT.replace("        for rows, n in", reference + "        for rows, n in")
    f = no_tests_project(tmp_path, "examples/norm_demo.py", heavy)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's example examples/norm_demo.py ran" in out
    assert "1 matrix product (6.9e+10 multiply-adds) its code made before the launch was too large for the CPU " \
           "and not computed: values read from its output (zeros) are not the project's" in out
    assert record(tmp_path / "s")["constexprs"]["BLOCK_N"] == 1024


HUGE_REFERENCE = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _rowscale_fwd(x_ptr, y_ptr, scale, D: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, D)
        tl.store(y_ptr + row * D + cols, (tl.load(x_ptr + row * D + cols) * scale).to(tl.float16))


    @triton.jit
    def _rowscale_bwd(dy_ptr, dx_ptr, scale, D: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, D)
        tl.store(dx_ptr + row * D + cols, (tl.load(dy_ptr + row * D + cols) * scale).to(tl.float16))


    class RowScale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            y = torch.empty_like(x)
            _rowscale_fwd[(x.numel() // x.shape[-1],)](x, y, scale, D=x.shape[-1])
            ctx.scale = scale
            return y

        @staticmethod
        def backward(ctx, dy):
            assert dy.is_contiguous()
            dx = torch.empty_like(dy)
            _rowscale_bwd[(dy.numel() // dy.shape[-1],)](dy, dx, ctx.scale, D=dy.shape[-1])
            return dx, None


    def test_op(B, H, N, D, dtype=torch.float16):
        q = torch.empty((B, H, N, D), dtype=dtype, device="cuda").normal_(mean=0.0, std=0.5).requires_grad_()
        k = torch.empty((B, H, N, D), dtype=dtype, device="cuda").normal_(mean=0.0, std=0.5).requires_grad_()
        do = torch.randn_like(q)
        # the reference: B*H*N*N scores, masked, softmaxed in fp32
        mask = torch.tril(torch.ones((N, N), device="cuda"))
        p = torch.matmul(q, k.transpose(2, 3)) * D ** -0.5
        p[:, :, mask == 0] = float("-inf")
        p = torch.softmax(p.float(), dim=-1).half()
        ref = torch.matmul(p, k)
        ref.backward(do)
        ref_dq, q.grad = q.grad.clone(), None
        out = RowScale.apply(q, D ** -0.5)
        out.backward(do)
        assert torch.allclose(ref, out, atol=1e-2)


    if __name__ == "__main__":
        test_op(B=8, H=16, N=4096, D=64)
"""


def test_a_reference_too_large_for_the_cpu_is_not_computed_and_said(tmp_path):
    # the Triton tutorial's attention descendants check against a reference of B*H*N*N scores (2**31
    # here: gigabytes for each of its mask, float(), softmax and half(); the process was killed for
    # memory): those results are made and not filled, and the launch line says so
    f = write(tmp_path, "rowscale.py", HUGE_REFERENCE)
    out = ok("dump", f"{f}:_rowscale_bwd", "--store", str(tmp_path / "s"))
    assert "by its __main__ block" in out, out
    assert "2 matrix products (2.7e+11 multiply-adds) and 5 other torch calls on up to 2.1e+09 elements its code " \
           "made before the launch were too large for the CPU and not computed" in out, out
    rec = record(tmp_path / "s")
    assert rec["signature"]["dy_ptr"] == "*fp16" and rec["constexprs"]["D"] == 64


# scattermoe's layers: the kernel's wrapper is five calls away from what the test names (kernel <-
# group_op <- group <- GroupFn <- group_apply <- Experts <- MLP), and the test's inputs are decoded
DEEP_OPS = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _group(src_ptr, idx_ptr, out_ptr, K, BLOCK_K: tl.constexpr):
        row = tl.program_id(0)
        src = tl.load(idx_ptr + row)
        offs = tl.arange(0, BLOCK_K)
        tl.store(out_ptr + row * K + offs, tl.load(src_ptr + src * K + offs, mask=offs < K), mask=offs < K)


    def group_op(x, idx, out):
        _group[(idx.numel(),)](x, idx, out, x.shape[1], BLOCK_K=triton.next_power_of_2(x.shape[1]))


    def group(x, idx):
        out = x.new_empty(idx.numel(), x.shape[1])
        group_op(x, idx, out)
        return out
"""

DEEP_LAYERS = """
    import torch
    from torch import nn

    from deep import ops


    class GroupFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, idx):
            return ops.group(x, idx)


    def group_apply(x, idx):
        return GroupFn.apply(x, idx)


    class Experts(nn.Module):
        def forward(self, x, idx):
            return group_apply(x, idx)


    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.experts = Experts()

        def forward(self, x, idx):
            return self.experts(x, idx)
"""

DEEP_TEST = """
    import json

    import torch

    from deep.layers import MLP


    def test_mlp():
        for length, dim in json.loads("[[4, 200]]"):
            x = torch.randn(length, dim, dtype=torch.float16, device="cuda")
            MLP()(x, torch.topk(torch.randn(length, 8), 2)[1].flatten())
"""


def test_a_test_five_calls_away_from_the_wrapper_is_run(tmp_path):
    write(tmp_path, "deep/__init__.py", "")
    write(tmp_path, "deep/layers.py", DEEP_LAYERS)
    write(tmp_path, "tests/test_mlp.py", DEEP_TEST)
    f = write(tmp_path, "deep/ops.py", DEEP_OPS)
    out = ok("dump", f"{f}:_group", "--store", str(tmp_path / "s"))
    assert "the project's test tests/test_mlp.py::test_mlp ran" in out
    rec = record(tmp_path / "s")
    assert rec["signature"]["src_ptr"] == "*fp16" and rec["signature"]["idx_ptr"] == "*i64"
    assert rec["constexprs"]["BLOCK_K"] == 256


def test_a_benchmark_runs_where_every_test_fails_to_import(tmp_path):
    # qwen3-moe-fused's style: each test module imports a package that is not installed; its
    # benchmark scripts at the top do not, and call the wrapper
    f = no_tests_project(tmp_path, "benchmark_rms.py", BENCH_SCRIPT)
    for name in ("test_a.py", "test_b.py", "test_c.py"):
        write(tmp_path, f"tests/{name}", "import not_installed_here\nfrom proj.ops.norm import rms_norm\n\n\n"
                                         "def test_rms():\n    rms_norm(None, None)\n")
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's benchmark benchmark_rms.py ran, every launch recorded and none run" in out
    assert record(tmp_path / "s")["constexprs"]["BLOCK_N"] == 1024


# gn-kernels' style: a benchmark script that sets the GPU as torch's default device and times torch's
# own product before the project's kernel
DEFAULT_DEVICE_BENCH = """
    import json

    import torch
    from triton.testing import do_bench

    from proj.ops.norm import rms_norm


    def main():
        torch.set_default_device("cuda")
        for rows, n in json.loads("[[16, 640]]"):
            x = torch.randn(rows, n, dtype=torch.bfloat16)
            w = torch.ones(n, dtype=torch.bfloat16)
            ms_torch = do_bench(lambda: x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True)).to(x.dtype) * w)
            ms_ours = do_bench(lambda: rms_norm(x, w), quantiles=[0.5, 0.2, 0.8])[0]
            print(f"{ms_torch / ms_ours:.2f}x")


    if __name__ == "__main__":
        main()
"""


def test_a_benchmark_that_sets_the_default_device_and_times_torch_first(tmp_path):
    f = no_tests_project(tmp_path, "benchmarks/bench_norm.py", DEFAULT_DEVICE_BENCH)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's benchmark benchmarks/bench_norm.py ran" in out
    rec = record(tmp_path / "s")
    assert rec["signature"]["x_ptr"] == "*bf16" and rec["constexprs"]["BLOCK_N"] == 1024
    import torch
    assert torch.get_default_device().type == "cpu"


def test_a_benchmark_script_in_another_top_folder_is_run(tmp_path):
    # SLA's layout: no tests, its kernels' benchmark in evaluate/bench_kernel.py
    f = no_tests_project(tmp_path, "evaluate/bench_norm.py", BENCH_SCRIPT)
    write(tmp_path, "evaluate/plot_results.py", "import not_installed_here\n")    # not a benchmark: not read
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's benchmark evaluate/bench_norm.py ran, every launch recorded and none run" in out
    assert record(tmp_path / "s")["constexprs"]["BLOCK_N"] == 1024


def test_a_benchmark_script_beside_the_package_named_bench_last_is_run(tmp_path):
    # a project with its timing script at the top, `norm_bench.py`, as `*_bench.py` is named in its folders
    f = no_tests_project(tmp_path, "norm_bench.py", BENCH_SCRIPT)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's benchmark norm_bench.py ran, every launch recorded and none run" in out
    assert record(tmp_path / "s")["constexprs"]["BLOCK_N"] == 1024


def test_the_tests_run_before_a_benchmark_that_launches_at_import(tmp_path):
    # lightning-attention's layout: benchmarks/benchmark_*.py runs its perf_report at module level,
    # which pytest would do while collecting, before any test ran
    f = project(tmp_path)
    write(tmp_path, "benchmarks/benchmark_norm.py", """
        import torch

        from proj.ops.norm import rms_norm

        x = torch.randn(3, 768, dtype=torch.float16, device="cuda")
        rms_norm(x, torch.ones(768, dtype=torch.float16, device="cuda"))
    """)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "the project's test tests/test_norm.py::TestNorm::test_rms ran" in out
    assert record(tmp_path / "s")["constexprs"]["BLOCK_N"] == 2048
