"""A wrapper's inputs read from the call the project's test makes (kinspect.compile.test_calls): the
test's dtypes, shapes, index tensors and flags, rebuilt from its text without running it. Projects
written here in the styles real ones use: pytest and look-alike parametrize decorators, hypothesis,
helpers a test calls with its cases, offsets built with cumsum and pad."""

import ast
import textwrap
from pathlib import Path

from kinspect.compile import test_calls
from tests.compile.test_launch_values import assumed_by_name, ok, record, write

NORM = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _rms_kernel(x_ptr, w_ptr, y_ptr, stride, N, eps, BLOCK_N: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask)
        y = x * tl.rsqrt(tl.sum(x * x, axis=0) / N + eps) * w
        tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


    def rms_norm(x, w, eps=1e-6):
        y = torch.empty_like(x)
        M, N = x.shape
        _rms_kernel[(M,)](x, w, y, x.stride(0), N, eps, BLOCK_N=triton.next_power_of_2(N))
        return y


    @triton.jit
    def _jagged_sum_kernel(values_ptr, offsets_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
        b = tl.program_id(0)
        start = tl.load(offsets_ptr + b)
        end = tl.load(offsets_ptr + b + 1)
        d = tl.arange(0, BLOCK_D)
        acc = tl.zeros([BLOCK_D], dtype=tl.float32)
        for i in range(start, end):
            acc += tl.load(values_ptr + i * D + d, mask=d < D, other=0.0).to(tl.float32)
        tl.store(out_ptr + b * D + d, acc, mask=d < D)


    def jagged_sum(values, offsets, max_len: int):
        B = offsets.numel() - 1
        D = values.shape[1]
        out = torch.empty(B, D, dtype=torch.float32, device=values.device)
        _jagged_sum_kernel[(B,)](values, offsets, out, D, BLOCK_D=triton.next_power_of_2(D))
        return out
"""

# ColossalAI's look-alike of pytest's parametrize, and a shape list read from the module
NORM_TEST = """
    import torch
    from colossalai.testing import parameterize

    from proj.ops.norm import rms_norm

    SHAPES = [(4, 512), (8, 1024)]


    @parameterize("dtype", [torch.float16, torch.bfloat16])
    @parameterize("M, N", SHAPES)
    def test_rms(dtype, M, N):
        x = torch.randn(M, N, dtype=dtype, device="cuda")
        w = torch.ones(N, device="cuda").to(dtype)
        rms_norm(x, w)
"""

# fbgemm's style: hypothesis draws the case; offsets are the int64 torch.cumsum makes, padded
JAGGED_TEST = """
    import torch
    import torch.nn.functional as F
    from hypothesis import given, settings, strategies as st

    import proj.ops.norm as ops


    class TestJagged:
        @given(B=st.integers(2, 8), D=st.sampled_from([32, 64]), dtype=st.sampled_from([torch.float32]))
        @settings(max_examples=10)
        def test_sum(self, B, D, dtype):
            lengths = torch.randint(0, 10, (B,))
            offsets = F.pad(torch.cumsum(lengths, dim=0), (1, 0))
            values = torch.randn(64, D, dtype=dtype)
            ops.jagged_sum(values, offsets, 10)
"""


def norm_project(tmp_path: Path, test: str) -> Path:
    """The package proj.ops.norm (NORM), with `test` as its tests/test_norm.py: the kernel's file."""
    write(tmp_path, "proj/__init__.py", "")
    write(tmp_path, "proj/ops/__init__.py", "")
    write(tmp_path, "tests/test_norm.py", test)
    return write(tmp_path, "proj/ops/norm.py", NORM)


def project(tmp_path: Path) -> Path:
    write(tmp_path, "tests/test_jagged.py", JAGGED_TEST)
    return norm_project(tmp_path, NORM_TEST)


def test_the_wrapper_is_called_as_the_test_calls_it(tmp_path):
    # the made-up inputs were bf16 16x4096: BLOCK_N 4096; the test's are fp16 4x512
    f = project(tmp_path)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "called as its test calls it (tests/test_norm.py:15, test_rms)" in out
    rec = record(tmp_path / "s")
    assert rec["signature"]["x_ptr"] == "*fp16" and rec["signature"]["w_ptr"] == "*fp16"
    assert rec["constexprs"]["BLOCK_N"] == 512
    said = assumed_by_name(rec)
    assert said["rms_norm:x"]["spec"] == "*fp16:4x512" and said["rms_norm:x"]["kind"] == "tested"
    assert "read from the test, not run" in said["rms_norm:w"]["why"]
    report = ok("vec-report", str(tmp_path / "s"))
    assert "called as the project's test calls it (rms_norm:x=*fp16:4x512, rms_norm:w=*fp16:512)" in report


def test_offsets_torch_cumsum_builds_are_int64(tmp_path):
    f = project(tmp_path)
    ok("dump", f"{f}:_jagged_sum_kernel", "--store", str(tmp_path / "s"))
    rec = record(tmp_path / "s")
    assert rec["signature"]["offsets_ptr"] == "*i64"
    assert rec["signature"]["values_ptr"] == "*fp32"
    assert rec["constexprs"]["BLOCK_D"] == 32          # hypothesis's first of sampled_from([32, 64])
    said = assumed_by_name(rec)
    assert said["jagged_sum:offsets"]["spec"] == "*i64:3"  # integers(2, 8): B=2, padded by one


def test_an_argument_it_cannot_read_still_gives_its_dtype(tmp_path):
    # `model(x)` cannot be rebuilt: that input is made up, of the dtype its expression names
    f = norm_project(tmp_path, """
        import torch
        from proj.ops.norm import rms_norm

        def test_rms():
            x = make_activations(4, 512).to(torch.float16)
            rms_norm(x, torch.ones(512, dtype=torch.float16))
    """)
    ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    rec = record(tmp_path / "s")
    assert rec["signature"]["x_ptr"] == "*fp16"
    said = assumed_by_name(rec)
    assert said["rms_norm:x"]["kind"] == "input" and "as the project's test passes it" in said["rms_norm:x"]["why"]
    assert said["rms_norm:w"]["kind"] == "tested"


def defined_in(fn_text: str, file: str) -> dict:
    """The functions `fn_text` defines, as if defined in `file` (the project's file that a test's
    call of another function of the same name is told apart from)."""
    ns = {}
    exec(fn_text, ns)
    for fn in [v for v in ns.values() if callable(v)]:
        fn.__code__ = fn.__code__.replace(co_filename=file)
    return ns


def calls_of(test_text: str, fn_text: str, name: str):
    ns = {}
    exec(textwrap.dedent(fn_text), ns)
    tests = test_calls.Tests([(Path("tests/test_x.py"), textwrap.dedent(test_text).encode())])
    return tests.calls(ns[name], {name}, "torch")


def test_a_helper_the_test_calls_with_its_cases():
    found = calls_of("""
        import pytest, torch
        from proj import op

        def _run(M, N, dtype, flag=False):
            x = torch.rand((M, N), dtype=dtype).view(-1)
            idx = torch.arange(M, dtype=torch.int32)
            op(x, idx, use_fast=flag)

        @pytest.mark.parametrize("M,N", [pytest.param(3, 64, id="small"), (8, 8)])
        def test_op(M, N):
            for dtype in (torch.bfloat16, torch.float32):
                _run(M, N, dtype, flag=True)
    """, "def op(x, idx, use_fast=False): pass", "op")
    (call,) = found
    assert call.test == "_run" and call.line == 8
    assert call.args["x"].shape == (192,) and call.args["x"].dtype == "bf16"
    assert call.args["idx"].dtype == "i32" and call.args["idx"].shape == (3,)
    assert call.args["use_fast"].value is True


def test_torch_own_functions_of_the_same_name_are_not_the_wrapper():
    found = calls_of("""
        import torch
        from proj import softmax

        def test_softmax():
            x = torch.randn(4, 8)
            ref = torch.softmax(x, -1)
            ref2 = x.softmax(-1)
    """, "def softmax(x, dim): pass", "softmax")
    assert found == []


def test_the_rebuilt_text_is_only_torch_constructors_with_literals():
    # what the test computes with its own code is never copied into the call
    (call,) = calls_of("""
        import os, torch
        from proj import op

        def test_op():
            n = int(os.environ.get("N", "64"))
            x = torch.randn(4, 64, dtype=torch.float16) * 2
            op(x, n)
    """, "def op(x, n): pass", "op")
    assert call.args["n"] is None
    assert call.args["x"].text == "(torch.randn(4, 64, dtype=torch.float16) * 2)"
    # every name in the text is torch's
    names = {n.id for n in ast.walk(ast.parse(call.args["x"].text)) if isinstance(n, ast.Name)}
    assert names == {"torch"}


def test_nested_literals_keyword_methods_and_moves():
    (call,) = calls_of("""
        import torch
        from proj import op

        def test_op():
            offs = torch.tensor([[0, 3], [3, 7]], dtype=torch.int32)
            x = torch.empty(4, 8).normal_(mean=0, std=0.02).to(torch.device("cuda")).half()
            op(x, offs, scale=0.5)
    """, "def op(x, offsets, scale=1.0): pass", "op")
    assert call.args["offsets"].shape == (2, 2) and call.args["offsets"].dtype == "i32"
    assert call.args["x"].text == "torch.empty(4, 8, dtype=torch.float32).normal_(mean=0, std=0.02).to(torch.float16)"
    assert call.args["scale"].value == 0.5


def test_fixtures_of_the_file_and_of_conftest():
    ns = {}
    exec("def op(x, idx, block): pass", ns)
    tests = test_calls.Tests([
        (Path("tests/conftest.py"), textwrap.dedent("""
            import pytest, torch

            @pytest.fixture(params=[torch.float32, torch.float16], ids=str)
            def dtype(request):
                return request.param

            @pytest.fixture
            def block():
                return 64
        """).encode()),
        (Path("tests/test_x.py"), textwrap.dedent("""
            import pytest, torch
            from proj import op

            @pytest.fixture
            def idx():
                yield torch.arange(8, dtype=torch.int32)

            def test_op(dtype, idx, block):
                op(torch.randn(8, 16, dtype=dtype), idx, block)
        """).encode())])
    (call,) = tests.calls(ns["op"], {"op"}, "torch")
    assert call.args["x"].dtype == "fp32" and call.args["idx"].dtype == "i32" and call.args["block"].value == 64


def test_constants_imported_from_another_test_module():
    ns = {}
    exec("def op(x): pass", ns)
    tests = test_calls.Tests([
        (Path("tests/kernels/utils.py"), b"import torch\nDTYPES = [torch.bfloat16, torch.float16]\nSIZES = [(7, 96)]\n"),
        (Path("tests/kernels/test_op.py"), textwrap.dedent("""
            import pytest, torch
            from proj import op
            from tests.kernels.utils import DTYPES, SIZES as S

            @pytest.mark.parametrize("dtype", DTYPES)
            @pytest.mark.parametrize("m,n", S)
            def test_op(dtype, m, n):
                op(torch.randn(m, n, dtype=dtype))
        """).encode())])
    (call,) = tests.calls(ns["op"], {"op"}, "torch")
    assert call.args["x"].dtype == "bf16" and call.args["x"].shape == (7, 96)


def test_a_large_package_leaves_the_tests_beside_it_read(tmp_path, monkeypatch):
    # ColossalAI's package is thousands of files: the scan's budget went to it, and no test was read
    from kinspect.compile import loader

    monkeypatch.setattr(loader, "MAX_SCANNED", 2)
    f = project(tmp_path)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "called as its test calls it (tests/test_norm.py:15, test_rms)" in out


def test_the_tests_plain_call_before_one_with_optional_arguments():
    found = calls_of("""
        import torch
        from proj import op

        def test_op():
            x = torch.randn(2, 64, dtype=torch.float16)
            op(x, 1e-5, residual=torch.rand(2, 64, dtype=torch.float16))
            op(x, 1e-5)
    """, "def op(x, eps, residual=None): pass", "op")
    assert found[0].line == 7 and found[0].args["residual"] is not None
    found = calls_of("""
        import torch
        from proj import op

        def test_op():
            x = torch.randn(2, 64, dtype=torch.float16)
            op(x, eps)
            op(x, 1e-5)
    """, "def op(x, eps, residual=None): pass", "op")
    assert found[0].line == 8


def test_cases_a_function_of_the_module_makes():
    # lightning-attention's `@pytest.mark.parametrize("b, h, n, d, e", get_params())`
    (call,) = calls_of("""
        import pytest, torch
        from proj import attn

        def get_params():
            array = [
                (6, 8, 256, 128, 64),
                (6, 8, 512, 128, 64),
            ]
            return array

        @pytest.mark.parametrize("b, h, n, d, e", get_params())
        @pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
        def test_attn(b, h, n, d, e, dtype):
            q = (torch.randn((b, h, n, d), dtype=dtype, device="cuda") / 10).requires_grad_()
            v = (torch.randn((b, h, n, e), dtype=dtype, device="cuda") / 10).requires_grad_()
            attn(q, v, slopes(h))
    """, "def attn(q, v, s): pass", "attn")
    assert call.args["q"].shape == (6, 8, 256, 128) and call.args["q"].dtype == "bf16" and call.args["q"].grad
    assert call.args["v"].text == "(torch.randn(6, 8, 256, 64, dtype=torch.bfloat16) / 10).requires_grad_()"
    assert call.args["s"] is None


def test_a_reference_of_the_same_name_from_the_tests_is_not_the_wrapper():
    found = calls_of("""
        import torch
        from tests.reference import rms_norm

        def test_ref():
            rms_norm(torch.randn(4, 8), torch.ones(8))
    """, "def rms_norm(x, w): pass", "rms_norm")
    assert found == []


def test_tensors_a_helper_of_the_tests_returns():
    # `q, k = _pair(shape, dtype)` calling `make_qk(*shape, dtype=dtype)` of tests/utils.py: what
    # they return is read in their bodies, with the test's cases and the helper's defaults, the
    # branch its flag takes (`if dtype == torch.float16`), and a returned item it cannot read (`idx`,
    # from a model) left to the plans while the others are read
    ns = {}
    exec("def op(q, k, idx): pass", ns)
    tests = test_calls.Tests([
        (Path("tests/utils.py"), textwrap.dedent("""
            import torch

            def make_qk(b, h, n, d, dtype=torch.float32, device="cuda"):
                q = torch.randn(b, h, n, d, dtype=dtype, device=device)
                if dtype == torch.float16:
                    k = torch.randn(b, h, n, d, dtype=dtype, device=device)
                else:
                    k = torch.randn(b, h, n, d, dtype=torch.float32, device=device)
                return q, k
        """).encode()),
        (Path("tests/test_op.py"), textwrap.dedent("""
            import pytest, torch
            from proj import op, router
            from tests.utils import make_qk

            def _inputs(shape, dtype):
                q, k = make_qk(*shape, dtype=dtype)
                return q.contiguous(), k.transpose(1, 2), router(q)

            @pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
            @pytest.mark.parametrize("shape", [(2, 4, 64, 32)])
            def test_op(shape, dtype):
                q, k, idx = _inputs(shape, dtype)
                op(q, k, idx)
        """).encode())])
    (call,) = tests.calls(ns["op"], {"op"}, "torch")
    assert call.args["q"].dtype == "fp16" and call.args["q"].shape == (2, 4, 64, 32)
    assert call.args["k"].dtype == "fp16" and call.args["k"].shape == (2, 64, 4, 32)
    assert call.args["q"].text == "torch.randn(2, 4, 64, 32, dtype=torch.float16).contiguous()"
    assert call.args["idx"] is None


def test_unittest_classes_their_cases_and_set_up():
    # absl's class-level `parameters(*CASES)` and `named_parameters`, the parameterized package's
    # `expand`, and what setUp and the class body set on self
    ns = {}
    exec("def op(x, idx, block): pass", ns)
    tests = test_calls.Tests([(Path("proj/ops_test.py"), textwrap.dedent("""
        import unittest
        import torch
        from absl.testing import parameterized
        from parameterized import parameterized as pz
        from proj import op

        _CASES = [(128, 64, torch.bfloat16), (256, 64, torch.float16)]

        @parameterized.parameters(*_CASES)
        class OpTest(parameterized.TestCase):
            def testOp(self, m, n, dtype):
                op(torch.randn(m, n, dtype=dtype), torch.arange(m, dtype=torch.int16), n)

        class NamedTest(parameterized.TestCase):
            @parameterized.named_parameters(("small", 8, torch.float16), ("big", 4096, torch.float32))
            def testOp(self, n, dtype):
                op(torch.randn(4, n, dtype=dtype), torch.arange(4, dtype=torch.int32), 32)

        class PlainTest(unittest.TestCase):
            block = 16

            def setUp(self):
                self.x = torch.randn(3, 5, dtype=torch.float16)

            @pz.expand([(torch.int64,), (torch.int32,)])
            def test_op(self, idx_dtype):
                op(self.x, torch.arange(3, dtype=idx_dtype), self.block)
    """).encode())])
    found = {c.line: c for c in tests.calls(ns["op"], {"op"}, "torch")}
    first, named, plain = found[13], found[18], found[28]
    assert first.args["x"].shape == (128, 64) and first.args["x"].dtype == "bf16"
    assert first.args["idx"].dtype == "i16" and first.args["block"].value == 64
    assert named.args["x"].shape == (4, 8) and named.args["x"].dtype == "fp16"
    assert plain.args["x"].shape == (3, 5) and plain.args["x"].dtype == "fp16"
    assert plain.args["idx"].dtype == "i64" and plain.args["block"].value == 16


def test_a_call_of_a_list_the_test_built_and_cases_a_helper_module_makes():
    # DeepSpeed's style: `op(*args)` of `args = [x, bias, mp_size]`, and its dtypes from
    # `get_dtypes()` of a module beside it (a relative import), a global it fills on first call
    ns = {}
    exec("def op(x, bias, mp_size, flag): pass", ns)
    tests = test_calls.Tests([
        (Path("tests/unit/ops/utils.py"), textwrap.dedent("""
            import torch
            DTYPES = None

            def get_dtypes(include_float=True):
                global DTYPES
                if DTYPES is None:
                    DTYPES = [torch.float16, torch.float32] if include_float else [torch.float16]
                    try:
                        if accelerator().is_bf16_supported():
                            DTYPES.append(torch.bfloat16)
                    except AttributeError:
                        pass
                return DTYPES
        """).encode()),
        (Path("tests/unit/ops/test_op.py"), textwrap.dedent("""
            import pytest, torch
            from .utils import get_dtypes

            @pytest.mark.parametrize("hidden", [512, 4096])
            @pytest.mark.parametrize("dtype", get_dtypes())
            @pytest.mark.parametrize("mp_size", [1, 2])
            def test_op(hidden, dtype, mp_size):
                from proj.ops import op
                x = torch.randn((1, 3, hidden), dtype=dtype, device=accelerator().device_name())
                args = [x, torch.randn((hidden), dtype=dtype), mp_size]
                op(*args, flag=mp_size > 1)
        """).encode())])
    (call,) = tests.calls(ns["op"], {"op"}, "torch")
    assert call.args["x"].dtype == "fp16" and call.args["x"].shape == (1, 3, 512)
    assert call.args["bias"].shape == (512,) and call.args["mp_size"].value == 1
    assert call.args["flag"].value is False


def test_another_function_of_the_wrappers_name_gives_its_arguments_by_name():
    # megablocks' tests call ops.padded_gather(x, indices, bin_ids, bins, padded_bins, top_k), an
    # autograd Function over kernels.padded_gather(x, indices, bin_ids, weights, bins, padded_bins,
    # top_k): bound by position to the wrapper, `bins` became `weights`; by name, each is itself
    ns = defined_in("def gather(x, indices, weights, bins, top_k): pass", "/proj/pkg/kernels.py")
    tests = test_calls.Tests([
        (Path("pkg/kernels.py"), b"def gather(x, indices, weights, bins, top_k): pass\n"),
        (Path("pkg/ops/__init__.py"), b"from pkg.ops.gather import gather\n"),
        (Path("pkg/ops/gather.py"), textwrap.dedent("""
            import torch
            from pkg import kernels

            class GatherOp(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x, indices, bins, top_k):
                    return kernels.gather(x, indices, None, bins, top_k)

            gather = GatherOp.apply
        """).encode()),
        (Path("tests/test_ops.py"), textwrap.dedent("""
            import torch
            from pkg import ops

            def test_gather():
                x = torch.randn(16, 8, dtype=torch.float16)
                bins = torch.tensor([4, 16], dtype=torch.int32)
                ops.gather(x, torch.arange(16, dtype=torch.int32), bins, 2)
        """).encode())])
    (call,) = tests.calls(ns["gather"], {"gather"}, "torch")
    assert call.via == "pkg.ops.gather" and "by name through pkg.ops.gather()" in call.at
    assert call.args["x"].dtype == "fp16" and call.args["bins"].shape == (2,) and call.args["top_k"].value == 2
    assert "weights" not in call.args


def test_another_function_of_the_wrappers_name_by_position_where_neither_names_the_other():
    # lightning-thunder's tests call thunder.torch.cross_entropy(a, /, target, weight, ...), which
    # its executor runs as the wrapper cross_entropy(input, target, weight, ...): `a` is `input`
    ns = defined_in("def cross_entropy(input, target, weight=None, ignore_index=-100, reduction='mean'): pass",
                    "/proj/pkg/triton_ce.py")
    tests = test_calls.Tests([
        (Path("pkg/triton_ce.py"), b"def cross_entropy(input, target, weight=None): pass\n"),
        (Path("pkg/torch.py"), b"def cross_entropy(a, /, target, weight=None, *, ignore_index=-100, reduction='mean'):"
                               b"\n    pass\n"),
        (Path("tests/test_ce.py"), textwrap.dedent("""
            import torch
            import pkg.torch as ptorch

            def test_ce():
                logits = torch.randn(64, 500, dtype=torch.float16)
                ptorch.cross_entropy(logits, torch.randint(0, 500, (64,)), reduction="sum")
        """).encode())])
    (call,) = tests.calls(ns["cross_entropy"], {"cross_entropy"}, "torch")
    assert call.args["input"].shape == (64, 500) and call.args["input"].dtype == "fp16"
    assert call.args["target"].dtype == "i64" and call.args["reduction"].value == "sum"


def test_helper_methods_of_a_test_class_and_of_its_base_class():
    # a unittest base class of the tests' with the helpers its tests call: `self.make_pair(...)`,
    # a static `Commons.cases()` for the cases
    ns = {}
    exec("def op(x, y, block): pass", ns)
    tests = test_calls.Tests([
        (Path("tests/commons.py"), textwrap.dedent("""
            import unittest
            import torch

            class Commons(unittest.TestCase):
                dtype = torch.float16

                @staticmethod
                def cases():
                    return [(64, 32), (128, 128)]

                def make_pair(self, m, n, dtype=None):
                    x = torch.randn(m, n, dtype=dtype or torch.float32)
                    return x, self.expected(x)
        """).encode()),
        (Path("tests/test_op.py"), textwrap.dedent("""
            import torch
            from parameterized import parameterized
            from proj import op
            from tests.commons import Commons

            class OpTest(Commons):
                @parameterized.expand(Commons.cases())
                def test_op(self, m, n):
                    x, y = self.make_pair(m, n, dtype=torch.bfloat16)
                    op(x, y, n)
        """).encode())])
    (call,) = tests.calls(ns["op"], {"op"}, "torch")
    assert call.args["x"].shape == (64, 32) and call.args["x"].dtype == "bf16"
    assert call.args["y"] is None and call.args["block"].value == 32


def test_a_call_through_torch_ops_of_the_op_the_wrapper_is_registered_as():
    # FBGEMM's tests call torch.ops.fbgemm.sll_jagged_dense_bmm(...), registered from a table
    # {"sll_jagged_dense_bmm": {"CUDA": jagged_dense_bmm, ...}}; a CPU table of the same op names
    # another function, which is not the GPU's; a custom_op's name is its decorator's
    ns = defined_in("def bmm(x, y, offsets, N): pass\ndef scale(x, s): pass", "/proj/pkg/ops.py")
    tests = test_calls.Tests([
        (Path("pkg/cpu.py"), b"def bmm_cpu(x, y, offsets, N): pass\nregs = {'sll_bmm': {'CPU': bmm_cpu}}\n"),
        (Path("pkg/ops.py"), textwrap.dedent("""
            import torch

            def bmm(x, y, offsets, N):
                pass

            @torch.library.custom_op("pkg::scale_op", mutates_args=())
            def scale(x: torch.Tensor, s: float) -> torch.Tensor:
                pass

            op_registrations = {"sll_bmm": {"CUDA": bmm, "AutogradCUDA": bmm}}
        """).encode()),
        (Path("tests/test_ops.py"), textwrap.dedent("""
            import torch

            def test_bmm():
                x = torch.rand(7, 16)
                offsets = torch.cat([torch.tensor([0], dtype=torch.int32), torch.tensor([3, 4]).cumsum(0)])
                torch.ops.fbgemm.sll_bmm(x, torch.rand(2, 16, 8), offsets, 4)

            def test_scale():
                torch.ops.pkg.scale_op.default(torch.randn(8, dtype=torch.float16), 0.5)
        """).encode())])
    (call,) = tests.calls(ns["bmm"], {"bmm"}, "torch")
    assert call.test == "test_bmm" and call.args["x"].shape == (7, 16)
    assert call.args["offsets"].dtype == "i64" and call.args["offsets"].shape == (3,)
    (call,) = tests.calls(ns["scale"], {"scale"}, "torch")
    assert call.args["x"].dtype == "fp16" and call.args["s"].value == 0.5


def test_a_comparison_of_a_list_of_tensors_is_not_read_and_stops_nothing():
    # torchtitan's helpers compare what they build; a list of tensors is neither a value nor a dtype
    found = calls_of("""
        import torch
        from proj import op

        def test_op():
            pair = [torch.randn(2, 4), torch.randn(2, 4)]
            if pair == [None, None]:
                pair = []
            op(torch.randn(3, 8), pair)
    """, "def op(x, pair): pass", "op")
    (call,) = found
    assert call.args["x"].shape == (3, 8)


def test_torch_testing_make_tensor():
    found = calls_of("""
        import torch
        from torch.testing import make_tensor
        from proj import op

        def test_op():
            x = make_tensor((4, 96), dtype=torch.bfloat16, device="cuda", low=-1, high=1)
            idx = torch.testing.make_tensor(4, dtype=torch.int32, device="cuda", low=0, high=4)
            op(x, idx, torch.randperm(7), torch.linspace(0, 1, 5))
    """, "def op(x, idx, perm, grid): pass", "op")
    (call,) = found
    assert call.args["x"].shape == (4, 96) and call.args["x"].dtype == "bf16"
    assert call.args["idx"].shape == (4,) and call.args["idx"].dtype == "i32"
    assert call.args["perm"].shape == (7,) and call.args["perm"].dtype == "i64"
    assert call.args["grid"].shape == (5,) and call.args["grid"].dtype == "fp32"
    import torch
    for name in ("x", "idx", "perm", "grid"):      # each text rebuilds what it says
        v = call.args[name]
        t = eval(v.text, {"torch": torch})
        assert tuple(t.shape) == v.shape and str(t.dtype) == "torch." + test_calls.TENSOR_DTYPES[v.dtype], name


def test_an_entry_that_calls_the_wrapper_by_a_name_a_package_re_exports_it_as():
    # FBGEMM's fp32_to_mx4 calls `quantize_mx4`, which fbgemm_gpu.triton re-exports
    # `triton_quantize_mx4 as`; its own code never spells the wrapper's name
    tests = test_calls.Tests([
        (Path("pkg/__init__.py"), b""),
        (Path("pkg/triton/__init__.py"), b"from .kernels import scale as fast_scale\n"),
        (Path("pkg/triton/kernels.py"), b"def scale(x, s):\n    pass\n"),
        (Path("pkg/utils.py"), textwrap.dedent("""
            def to_scaled(x, s=2.0, use_triton=True):
                if use_triton:
                    from pkg.triton import fast_scale
                    return fast_scale(x, s)
                return x * s

            def unrelated(x):
                return x
        """).encode()),
        (Path("tests/test_utils.py"), textwrap.dedent("""
            import torch
            from pkg.utils import to_scaled, unrelated

            def test_scaled():
                unrelated(torch.randn(3))
                to_scaled(torch.randn(64, dtype=torch.float16), 0.5)
        """).encode())])
    (call,) = tests.entries({"scale"}, "torch", set())
    assert call.entry.name == "to_scaled" and call.args["x"].dtype == "fp16" and call.args["s"].value == 0.5


def test_a_shape_put_together_from_tuples_is_read(tmp_path):
    # apex's openfold tests: `torch.randn((2, 2) + normalized_shape, device=device)`
    f = norm_project(tmp_path, """
        import torch

        from proj.ops.norm import rms_norm


        def test_rms():
            normalized_shape = (768,)
            x = torch.randn((6,) + normalized_shape, device="cuda")
            rms_norm(x, torch.ones(normalized_shape, device="cuda"))
    """)
    out = ok("dump", f"{f}:_rms_kernel", "--store", str(tmp_path / "s"))
    assert "called as its test calls it" in out
    assert assumed_by_name(record(tmp_path / "s"))["rms_norm:x"]["spec"] == "*fp32:6x768"


def test_the_tests_found_through_a_name_bound_at_module_level_in_a_large_package(tmp_path):
    # xtuner's layout: the kernel deep in a package of more files than are read; the module beside it
    # binds the name the tests call to what a function picks (`group_gemm = get_group_gemm()`); the
    # custom op's `@op.register_fake def _(...)` beside the kernel, whose name every `for _ in` uses
    from kinspect.compile import loader
    from kinspect.compile.test_calls import Tests

    f = write(tmp_path, "xt/ops/moe/cuda/kern.py", """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def _scale_kernel(x_ptr, N, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < N) * 2, mask=offs < N)


        def scale(x):
            _scale_kernel[(1,)](x, x.numel(), BLOCK=1024)
            return x


        def _(x):
            return scale(x)
    """)
    for path in ("xt/__init__.py", "xt/ops/__init__.py", "xt/ops/moe/cuda/__init__.py"):
        write(tmp_path, path, "")
    write(tmp_path, "xt/ops/moe/__init__.py", """
        def get_scale():
            from .cuda.kern import scale
            return scale


        group_scale = get_scale()
    """)
    for i in range(loader.MAX_SCANNED + 5):       # more files than are read, shallower than the kernel's
        write(tmp_path, f"xt/data/m{i}.py", f"def loop_{i}():\n    for _ in range(3):\n        pass\n")
    write(tmp_path, "tests/test_scale.py", "from xt.ops.moe import group_scale\n\n\ndef test_scale():\n"
                                           "    group_scale(None)\n")
    write(tmp_path, "tests/test_data.py", "from xt.data.m0 import loop_0\n\n\ndef test_loop():\n    loop_0()\n")
    where = loader.locate(str(f))
    tests = Tests(loader.project_files(where), root=loader.project_folder(where))
    assert tests.naming({"_scale_kernel", "scale"}, "_scale_kernel", "kern") == [Path("tests/test_scale.py")]
