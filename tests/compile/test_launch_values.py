"""The project's own launch values (issue 38): a kernel's wrapper called with made-up inputs, so the
constexprs it computes (triton.next_power_of_2), the tensors it allocates (int8, bf16), its strides
and data_ptr() addresses are the project's; every guess visible in the record, in --json and on the
verdicts it shapes; and the smaller items (i64 without a value, a namespace package's module name,
a NameError traced to the ImportError it began as). Kernels written here in the styles real
projects use, compiled for real, offline."""

import json
import textwrap
from pathlib import Path


from tests.helpers import one_error_line, run_raising as run


def ok(*args):
    r = run(*args)
    assert r.exit_code == 0, r.output
    return r.output


def record(store: Path) -> dict:
    (found,) = store.glob("*/*/record.json")
    return json.loads(found.read_text())


def assumed_by_name(rec: dict) -> dict:
    """A record's assumed values by name: {'scale4:out': {name, spec, why, kind}}."""
    return {a["name"]: a for a in rec["user"]["assumed"]}


def write(folder: Path, name: str, text: str) -> Path:
    f = folder / name
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(textwrap.dedent(text))
    return f


QUANT = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _quant_rows(x_ptr, y_ptr, s_ptr, stride_x, N, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride_x + cols, mask=cols < N, other=0.0).to(tl.float32)
        scale = tl.max(tl.abs(x)) / 127.0
        tl.store(y_ptr + row * N + cols, (x / scale).to(tl.int8), mask=cols < N)
        tl.store(s_ptr + row, scale.to(s_ptr.dtype.element_ty))


    def quantize_rows(x):
        assert x.dtype in (torch.bfloat16, torch.float16)
        M, N = x.shape
        y = torch.empty((M, N), dtype=torch.int8, device=x.device)
        s = torch.empty(M, dtype=torch.bfloat16, device=x.device)
        _quant_rows[(M,)](x, y, s, x.stride(0), N, BLOCK=triton.next_power_of_2(N), num_warps=8)
        return y, s
"""


def test_a_wrapper_gives_its_constexprs_allocations_and_strides_with_no_flags(tmp_path):
    f = write(tmp_path, "quant.py", QUANT)
    out = ok("dump", f"{f}:_quant_rows", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    sig = rec["signature"]
    # the wrapper's own allocations and its dtype check (bf16 first), not the kernel-body guesses
    assert (sig["x_ptr"], sig["y_ptr"], sig["s_ptr"]) == ("*bf16", "*i8", "*bf16"), sig
    # BLOCK = triton.next_power_of_2(N) of the made-up 16x4096 input; num_warps the wrapper's
    assert rec["constexprs"]["BLOCK"] == 4096 and rec["options"]["num_warps"] == 8
    assert "the project's wrapper quantize_rows() (line 17) called with made-up inputs" in out
    assumed = rec["user"]["assumed"]
    assert [a["name"] for a in assumed] == ["quantize_rows:x"] and assumed[0]["kind"] == "input"
    assert assumed[0]["spec"] == "*bf16:16x4096" and "one the wrapper compares it with" in assumed[0]["why"]
    # the call is a --from text that reproduces the compile
    call = rec["user"]["from"]
    again = ok("dump", f"{f}:_quant_rows", "--from", call, "--store", tmp_path / "again")
    assert record(tmp_path / "again")["signature"] == sig and "assumed" not in again.split("stored")[0]


def test_the_verdicts_say_the_launch_values_rest_on_made_up_inputs(tmp_path):
    f = write(tmp_path, "quant.py", QUANT)
    ok("dump", f"{f}:_quant_rows", "--store", tmp_path / "out")
    (folder,) = (tmp_path / "out").glob("*/*/record.json")
    report = json.loads(ok("vec-report", folder.parent, "--json"))[0]
    assert report["assumed"][0]["name"] == "quantize_rows:x"
    said = [v["text"] for v in report["verdicts"] if "made-up inputs" in v["text"]]
    assert said == ["the launch values come from quantize_rows() called with made-up inputs "
                    "(quantize_rows:x=*bf16:16x4096): sizes, dtypes and what follows from them are guesses"]


RMS = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _rms_norm(X, Y, W, stride, N, eps, BLOCK_N: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
        tl.store(Y + row * stride + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


    def rms_norm(x, w, eps=1e-6):
        M, N = x.shape
        y = torch.empty_like(x)
        _rms_norm[(M,)](x, y, w, x.stride(0), N, eps, BLOCK_N=triton.next_power_of_2(N))
        return y
"""


def test_rmsnorm_gets_block_n_from_its_wrapper_with_no_flags(tmp_path):
    """The issue's RMSNorm: kinspect assumed BLOCK_N=64 for N=1024 (64 elements over 128 threads) and
    said the loads were not vectorized; the program's launch passes next_power_of_2(N)."""
    main_block = """

        if __name__ == "__main__":
            x = torch.randn(8, 1024, dtype=torch.float16, device="cuda")
            rms_norm(x, torch.ones(1024, dtype=torch.float16, device="cuda"))
    """
    f = tmp_path / "rms.py"
    f.write_text(textwrap.dedent(RMS) + textwrap.dedent(main_block))
    out = ok("dump", f"{f}:_rms_norm", "--store", tmp_path / "a")
    rec = record(tmp_path / "a")
    assert rec["constexprs"]["BLOCK_N"] == 1024 and rec["signature"]["N"] == "i32"
    assert rec["signature"]["X"] == "*fp16" and "its __main__ block" in out and "assumed" not in out.split("stored")[0]
    # without the __main__ block, the wrapper itself with made-up rows of 4096: BLOCK_N follows N
    g = write(tmp_path / "b", "rms.py", RMS)
    ok("dump", f"{g}:_rms_norm", "--store", tmp_path / "b" / "out")
    rec = record(tmp_path / "b" / "out")
    assert rec["constexprs"]["BLOCK_N"] == 4096 and rec["signature"]["eps"] == "fp32"


def test_a_data_ptr_argument_is_a_64_bit_address(tmp_path):
    f = write(tmp_path, "gather.py", """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def _copy_from(src_addr, out_ptr, n, BLOCK: tl.constexpr):
            src = src_addr.to(tl.pointer_type(tl.float16))
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


        def copy_from(x):
            out = torch.empty_like(x)
            _copy_from[(triton.cdiv(x.numel(), 1024),)](x.data_ptr(), out, x.numel(), BLOCK=1024)
            return out
    """)
    ok("dump", f"{f}:_copy_from", "--store", tmp_path / "a")
    assert record(tmp_path / "a")["signature"]["src_addr"] == "i64"
    # the kernel alone: the code casts it to a pointer, so it is assumed 64-bit too
    g = write(tmp_path / "b", "gather.py", (tmp_path / "gather.py").read_text().split("def copy_from")[0])
    out = ok("dump", f"{g}:_copy_from", "--store", tmp_path / "b" / "out")
    assert record(tmp_path / "b" / "out")["signature"]["src_addr"] == "i64"
    assert "src_addr=i64:4294967296  (a 64-bit integer: its value is a device address" in out


def test_i64_without_a_value_compiles_as_i64_and_a_small_one_is_refused(tmp_path):
    f = write(tmp_path, "k.py", """
        import triton
        import triton.language as tl


        @triton.jit
        def k(x_ptr, addr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) + addr)
    """)
    ok("dump", f"{f}:k", "--arg", "x_ptr=*i64", "--arg", "addr=i64", "-p", "BLOCK=64", "--store", tmp_path / "a")
    assert record(tmp_path / "a")["signature"]["addr"] == "i64"
    one_error_line(run("dump", f"{f}:k", "--arg", "addr=i64:1024", "--store", tmp_path / "b"),
                   "Triton passes an int below 2**31 as i32")


def test_a_namespace_package_is_imported_under_the_name_its_files_use(tmp_path):
    root = tmp_path / "proj"
    write(root, "core/__init__.py", "")
    write(root, "core/consts.py", "BLOCK = 128\n")
    write(root, "core/ops/__init__.py", "")
    f = write(root, "core/ops/scale.py", """
        import triton
        import triton.language as tl
        from proj.core.consts import BLOCK as DEFAULT_BLOCK


        @triton.jit
        def scale(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
    """)
    from kinspect.compile.loader import locate

    where = locate(str(f))
    assert (where.module, where.root) == ("proj.core.ops.scale", tmp_path.resolve())
    ok("dump", f"{f}:scale", "--store", tmp_path / "out")
    # COAT's layout: proj/ is the repository (its pyproject.toml, its tests/): the project's folder,
    # not the folder it was cloned into
    from kinspect.compile.loader import project_folder

    assert project_folder(where) == tmp_path.resolve()
    write(root, "pyproject.toml", "")
    assert project_folder(locate(str(f))) == root.resolve()


def test_a_package_with_no_init_files_is_imported_under_the_name_its_file_uses(tmp_path):
    # flash-bidirectional-linear-attention's layout: no __init__.py in any folder, the kernel's file
    # importing `from nsproj.utils import contiguous`; its tests, in tests/ at the top, are the project's
    write(tmp_path, "nsproj/utils.py", "def contiguous(fn):\n    return fn\n")
    write(tmp_path, "setup.py", "")
    f = write(tmp_path, "nsproj/ops/scale/kernels.py", """
        import triton
        import triton.language as tl
        from nsproj.utils import contiguous


        @triton.jit
        def scale(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
    """)
    from kinspect.compile.loader import locate, project_files

    where = locate(str(f))
    assert (where.module, where.root) == ("nsproj.ops.scale.kernels", tmp_path.resolve())
    write(tmp_path, "tests/test_scale.py", "from nsproj.ops.scale.kernels import scale\n")
    assert Path("tests/test_scale.py") in [p for p, _ in project_files(where)]
    ok("dump", f"{f}:scale", "--store", tmp_path / "out")
    # a folder named as an installed package is not that package
    g = write(tmp_path, "triton/mine/k.py", (tmp_path / "nsproj/ops/scale/kernels.py").read_text()
              .replace("from nsproj.utils import contiguous", ""))
    assert locate(str(g)).module.startswith("kinspect_user_")


def test_a_name_error_names_the_import_it_began_as(tmp_path):
    f = write(tmp_path, "k.py", """
        import triton
        import triton.language as tl
        from kinspect_no_such_module import fast_exp


        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, fast_exp(tl.load(x_ptr + offs)))
    """)
    one_error_line(run("dump", f"{f}:k", "--store", tmp_path / "out"),
                   "'fast_exp' is undefined because its definition failed (line 4: ModuleNotFoundError",
                   "edit and run: kinspect dump")


def test_a_value_is_never_inferred_from_itself(tmp_path):
    """tl.dot(p.to(v.dtype), v): V's type was taken from p's fp32, giving 12 HGMMA where fp16 gives 8."""
    f = write(tmp_path, "attn.py", """
        import triton
        import triton.language as tl


        @triton.jit
        def attn(Q, K, V, Out, N_CTX, BLOCK: tl.constexpr, D: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            d = tl.arange(0, D)
            q = tl.load(Q + offs[:, None] * D + d[None, :])
            acc = tl.zeros((BLOCK, D), dtype=tl.float32)
            for start in range(0, N_CTX, BLOCK):
                k = tl.load(K + (start + offs)[None, :] * D + d[:, None])
                v = tl.load(V + (start + offs)[:, None] * D + d[None, :])
                s = tl.dot(q, k)
                p = tl.exp(s - tl.max(s, 1)[:, None])
                acc += tl.dot(p.to(v.dtype), v)
            tl.store(Out + offs[:, None] * D + d[None, :], acc)
    """)
    out = ok("dump", f"{f}:attn", "--store", tmp_path / "out")
    assert record(tmp_path / "out")["signature"]["V"] == "*fp16"
    assert "whose other operand is cast to its type" in out
    (folder,) = (tmp_path / "out").glob("*/*/record.json")
    report = json.loads(ok("vec-report", folder.parent, "--json"))[0]
    # verdicts on lines that use assumed values say so; the assumed values are in the JSON
    assert {a["name"] for a in report["assumed"]} >= {"Q", "K", "V", "BLOCK", "D"}
    dots = [v["text"] for v in report["verdicts"] if "tl.dot(p.to(v.dtype), v)" in v["text"]]
    assert dots and all(t.startswith("on the assumed BLOCK=64, D=64") for t in dots), dots


def test_a_wrapper_passing_inf_gives_a_store_kinspect_reads_again(tmp_path):
    """A wrapper's float("inf") default (mamba's dt_limit=(0.0, inf)) is an argument value like any other:
    the record keeps it, and vec-report and diff read the store (kinspect's own schema refused it)."""
    f = write(tmp_path, "clampk.py", """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def clamp_kernel(x_ptr, y_ptr, hi, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n)
            tl.store(y_ptr + offs, tl.minimum(x, hi), mask=offs < n)


        def clamp(x, hi=float("inf")):
            y = torch.empty_like(x)
            clamp_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, hi, x.numel(), BLOCK=1024)
            return y
    """)
    ok("dump", f"{f}:clamp_kernel", "--from", "clamp(torch.empty(4096))", "-t", "cuda:90", "--store", tmp_path / "s")
    args = {a["name"]: a for a in record(tmp_path / "s")["user"]["example"]["args"]}
    assert args["hi"]["value"] == float("inf")
    (folder,) = (tmp_path / "s").glob("*/*/record.json")
    assert "loads are 128-bit" in ok("vec-report", folder.parent)
    assert "clamp_kernel" in ok("ls", tmp_path / "s")


GATED = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _gated_norm(X, W, Z, Y, stride, N, eps, BLOCK_N: tl.constexpr, HAS_Z: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        if HAS_Z:
            x *= tl.load(Z + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
        tl.store(Y + row * stride + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


    def gated_norm(x, weight, z, eps):
        batch, seqlen, dim = x.shape
        x = x.reshape(-1, dim)
        assert weight.shape == (dim,)
        assert weight.dtype == x.dtype, "weight and x must be one dtype"
        if z.shape[-1] != x.shape[-1]:
            raise ValueError("z must match x")
        y = torch.empty_like(x)
        _gated_norm[(x.shape[0],)](x, weight, z, y, x.stride(0), dim, eps, BLOCK_N=triton.next_power_of_2(dim),
                                   HAS_Z=True)
        return y
"""


def test_made_up_inputs_are_changed_until_the_wrappers_own_checks_pass(tmp_path):
    """mamba's style: `assert weight.shape == (dim,)` and friends stopped every made-up call, and
    the kernel's body decided alone (fp32 pointers, BLOCK_N 16). The value each check wants is read
    in the wrapper's frame, the input changed, the call made again; the change is said."""
    f = write(tmp_path, "gated.py", GATED)
    out = ok("dump", f"{f}:_gated_norm", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    assert "the project's wrapper gated_norm() (line 20) called with made-up inputs" in out
    # x of rank 3 as the tuple unpacking fixes it; weight (dim,) and z's last dim from the checks
    assert rec["constexprs"]["BLOCK_N"] == 128 and rec["constexprs"]["HAS_Z"] is True
    assumed = assumed_by_name(rec)
    # bf16 where nothing says (wrappers.FLOAT_DEFAULT)
    assert assumed["gated_norm:x"]["spec"] == "*bf16:4x32x128"
    assert assumed["gated_norm:weight"]["spec"] == "*bf16:128"
    assert "shape 128 from the wrapper's check at line 23" in assumed["gated_norm:weight"]["why"]
    assert "rank" not in assumed["gated_norm:weight"]["why"]
    # `z.shape[-1] != x.shape[-1]` then raise: the one size changed, the rest of the made-up shape kept
    assert assumed["gated_norm:z"]["spec"] == "*bf16:16x128"
    assert "shape 16x128 from the wrapper's check at line 26" in assumed["gated_norm:z"]["why"], assumed
    # the call it says is the call that works: --from with it gives the same compile
    again = ok("dump", f"{f}:_gated_norm", "--from", rec["user"]["from"], "--store", tmp_path / "again")
    assert record(tmp_path / "again")["signature"] == rec["signature"] and "assumed" not in again.split("stored")[0]


def test_a_check_kinspect_cannot_satisfy_leaves_the_kernels_code_to_decide(tmp_path):
    """`assert N % 3 == 0` is no equality of an input's shape: nothing is changed, the kernel's own
    code decides and says it did."""
    text = GATED.replace("batch, seqlen, dim = x.shape\n", "batch, seqlen, dim = x.shape\n        assert dim % 3 == 0\n")
    f = write(tmp_path, "gated.py", text)
    out = ok("dump", f"{f}:_gated_norm", "--store", tmp_path / "out")
    assert "assumed" in out and "called with made-up inputs: --from" not in out
    # and it says so: the wrapper was tried, where it stopped, and where the values come from instead
    assert ("launch   the project's wrapper gated_norm() called with made-up inputs (4 tries) never launched "
            "'_gated_norm'; the first stopped at gated_norm() (line 20): it failed at line 22: AssertionError; "
            "values from the kernel's code") in out, out


TRACEABLE = """
    import functools

    import torch
    import triton
    import triton.language as tl
    from torch.library import triton_op, wrap_triton


    def input_guard(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*(a.contiguous() if isinstance(a, torch.Tensor) else a for a in args), **kwargs)
        return wrapper


    @triton.jit
    def _scale_kernel(X, Y, n, scale, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < n)
        tl.store(Y + offs, x * scale, mask=offs < n)


    @triton_op("kinspect_test::scale_impl", mutates_args={})
    def _scale_impl(x: torch.Tensor, scale: float, out_dtype: torch.dtype) -> torch.Tensor:
        assert x.dtype == torch.float16
        assert out_dtype in (torch.float32, torch.bfloat16) and out_dtype.is_floating_point
        y = torch.empty_like(x, dtype=out_dtype)
        n = x.numel()
        wrap_triton(_scale_kernel)[(triton.cdiv(n, 1024),)](x, y, n, scale, BLOCK=1024)
        return y


    @input_guard
    def scale_rows(x, scale):
        assert x.dim() == 2
        return torch.ops.kinspect_test.scale_impl(x, scale, torch.float32)
"""


def test_a_kernel_launched_through_wrap_triton_in_a_triton_op_gets_its_wrappers_values(tmp_path):
    """flash-attention's style: `torch.library.wrap_triton(kernel)[grid](...)` inside a
    `@triton_op`; fla's: a wrapper under a functools.wraps decorator. Neither was found as a
    wrapper, and the kernel's body decided (fp32)."""
    f = write(tmp_path, "traceable.py", TRACEABLE)
    out = ok("dump", f"{f}:_scale_kernel", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    assert "the project's wrapper _scale_impl() (line 24) called with made-up inputs" in out, out
    # out_dtype, a torch.dtype the op takes: the first of those it accepts, not a made-up int (nor a
    # tensor, for the attribute it shares with tensors)
    assert (rec["signature"]["X"], rec["signature"]["Y"], rec["signature"]["scale"]) == ("*fp16", "*fp32", "fp32")
    assumed = assumed_by_name(rec)
    assert assumed["_scale_impl:out_dtype"]["spec"] == "fp32", assumed


def test_a_check_of_element_size_gives_a_dtype_of_that_size(tmp_path):
    """torchao's style: `assert scales.element_size() == 1` (e8m0 scales, a byte each) stopped every
    made-up call (bf16 or fp32); the input becomes a byte tensor, as Triton reads it (u8)."""
    f = write(tmp_path, "swizzle.py", """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def _swizzle(src, dst, rows, cols, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(dst + offs, tl.load(src + offs, mask=offs < rows * cols), mask=offs < rows * cols)


        def rearrange(scales):
            assert scales.element_size() == 1, "scales are one byte each"
            rows, cols = scales.shape
            out = torch.empty(rows * cols, dtype=scales.dtype, device=scales.device)
            _swizzle[(triton.cdiv(rows * cols, 1024),)](scales, out, rows, cols, BLOCK=1024)
            return out
    """)
    ok("dump", f"{f}:_swizzle", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    assert (rec["signature"]["src"], rec["signature"]["dst"]) == ("*u8", "*u8"), rec["signature"]
    (made,) = rec["user"]["assumed"]
    assert "dtype u8 from the wrapper's check at line 14" in made["why"], made


def test_a_projects_own_triton_folder_is_not_called_inside_triton(tmp_path):
    """mamba and flash-attention keep their kernels in `ops/triton/`: an error raised there was said
    to be '(inside Triton: triton/rotary.py:127)'. Only Triton's own package is Triton."""
    body = """
        import triton
        import triton.language as tl


        @triton.jit
        def k(X, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(X + offs, tl.load(X + offs, mask=offs < n), mask=offs < n)

        {fails}
    """
    own = write(tmp_path / "proj" / "ops" / "triton", "k.py", body.format(fails='raise ValueError("boom")'))
    out = ok("dump", f"{own}:k", "--store", tmp_path / "a")
    assert "ValueError: boom" in out and "inside Triton" not in out, out
    theirs = write(tmp_path / "other", "k.py", body.format(fails='triton.cdiv("rows", 2)'))
    out = ok("dump", f"{theirs}:k", "--store", tmp_path / "b")
    assert "(inside Triton: triton/" in out, out


ROPE = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _rope(Q, COS, SIN, OUT, n, HALF: tl.constexpr):
        row = tl.program_id(0)
        d = tl.arange(0, HALF)
        c = tl.load(COS + (row % n) * HALF + d)
        s = tl.load(SIN + (row % n) * HALF + d)
        x0 = tl.load(Q + row * 2 * HALF + d)
        x1 = tl.load(Q + row * 2 * HALF + HALF + d)
        tl.store(OUT + row * 2 * HALF + d, x0 * c - x1 * s)
        tl.store(OUT + row * 2 * HALF + HALF + d, x0 * s + x1 * c)


    def rope(q, k, cos, sin):
        assert q.dim() == 4 and k.dim() == 4
        assert k.shape[-1] == q.shape[-1]
        assert cos.shape[-1] == sin.shape[-1], "cos and sin must have the same last dimension"
        assert cos.shape[-1] * 2 == q.shape[-1], "cos/sin dim must be half of q/k dim"
        assert q.shape[:-2] == k.shape[:-2], "q and k must have the same length"
        out = torch.empty_like(q)
        _rope[(q.numel() // q.shape[-1],)](q, cos, sin, out, cos.shape[0], HALF=cos.shape[-1])
        return out
"""


def test_checks_with_arithmetic_slices_and_two_inputs_are_met_without_undoing_each_other(tmp_path):
    """FlagGems' rotary style: `cos.shape[-1] * 2 == q.shape[-1]` sets cos (the arithmetic undone),
    `cos.shape[-1] == sin.shape[-1]` then sets sin, not cos back (which went round in circles), and
    `q.shape[:-2] == k.shape[:-2]` sets a slice of a shape."""
    f = write(tmp_path, "rope.py", ROPE)
    ok("dump", f"{f}:_rope", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    assumed = {a["name"]: a["spec"] for a in rec["user"]["assumed"]}
    assert rec["user"]["from"].startswith("rope(")
    # q and k of rank 4 (2x32x1024x128), cos and sin of half their head size
    assert (assumed["rope:cos"], assumed["rope:sin"]) == ("*bf16:16x64", "*bf16:16x64"), assumed
    assert rec["constexprs"]["HALF"] == 64


def test_a_slice_of_a_shape_is_set_where_a_check_compares_one(tmp_path):
    f = write(tmp_path, "rope.py", ROPE.replace("assert q.dim() == 4 and k.dim() == 4", "assert q.dim() == 4"))
    ok("dump", f"{f}:_rope", "--store", tmp_path / "out")
    assumed = assumed_by_name(record(tmp_path / "out"))
    q, k = (assumed[f"rope:{n}"]["spec"].split(":")[1].split("x") for n in "qk")
    assert q[:-2] == k[:-2] and q[-1] == k[-1], (q, k)
    assert "from the wrapper's check at line 24" in assumed["rope:q"]["why"] + assumed["rope:k"]["why"]


SOFTMAX = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _softmax(X, Y, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(X + tl.program_id(0) * n + offs, mask=offs < n, other=-float("inf"))
        tl.store(Y + tl.program_id(0) * n + offs, tl.exp(x - tl.max(x, 0)), mask=offs < n)


    def softmax(x, dim):
        assert -x.ndim <= dim < x.ndim, "Invalid dim"
        n = x.shape[dim]
        y = torch.empty_like(x)
        _softmax[(x.numel() // n,)](x, y, n, BLOCK=triton.next_power_of_2(n))
        return y
"""


def test_an_int_that_picks_a_dimension_is_the_last_one(tmp_path):
    """FlagGems' `softmax(x, dim)` with `x.shape[dim]`: a made-up 128 failed its `Invalid dim` check."""
    f = write(tmp_path, "softmax.py", SOFTMAX)
    ok("dump", f"{f}:_softmax", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    assert rec["user"]["from"].endswith(", -1)") and rec["user"]["from"].startswith("softmax(")
    (dim,) = [a for a in rec["user"]["assumed"] if a["name"] == "softmax:dim"]
    assert dim["spec"] == "i32:-1" and "picks a dimension" in dim["why"]
    assert rec["constexprs"]["BLOCK"] == 4096


def test_a_string_the_wrapper_compares_picks_the_kernel_it_launches(tmp_path):
    """bitsandbytes' style: `if quant_type == "fp4": fp4_kernel[...] else: nf4_kernel[...]`. A made-up
    int never matched, so neither kernel got its wrapper's values; each value the wrapper compares is
    tried, and one that matches none for the `else`."""
    f = write(tmp_path, "quant4.py", """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def _fp4(A, OUT, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(OUT + offs, tl.load(A + offs, mask=offs < n).to(tl.uint8), mask=offs < n)


        @triton.jit
        def _nf4(A, OUT, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(OUT + offs, (tl.load(A + offs, mask=offs < n) * 2).to(tl.uint8), mask=offs < n)


        def quantize_4bit(A, blocksize, quant_type):
            out = torch.empty(A.numel(), dtype=torch.uint8, device=A.device)
            grid = (triton.cdiv(A.numel(), blocksize),)
            if quant_type == "fp4":
                _fp4[grid](A, out, A.numel(), BLOCK=blocksize)
            else:
                _nf4[grid](A, out, A.numel(), BLOCK=blocksize)
            return out
    """)
    for kernel, said in (("_fp4", "'fp4'"), ("_nf4", "''")):
        ok("dump", f"{f}:{kernel}", "--store", tmp_path / kernel)
        rec = record(tmp_path / kernel)
        assert rec["user"]["from"].endswith(f", {said})"), rec["user"]["from"]
        assert rec["signature"]["OUT"] == "*u8", rec["signature"]


def test_a_shape_argument_is_a_list_of_sizes(tmp_path):
    """FlagGems' `RmsNorm.apply(x, normalized_shape, weight)` takes len() and math.prod() of
    normalized_shape: a made-up int raised TypeError, and the kernel's code decided alone."""
    f = write(tmp_path, "norm.py", RMS.replace('''    def rms_norm(x, w, eps=1e-6):
        M, N = x.shape''', '''    def rms_norm(x, normalized_shape, w, eps=1e-6):
        dim = x.ndim - len(normalized_shape)
        M, N = math.prod(x.shape[:dim]), math.prod(normalized_shape)''').replace("import torch", "import math\n    import torch"))
    ok("dump", f"{f}:_rms_norm", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    assert rec["user"]["from"].startswith("rms_norm(") and ", [4096], " in rec["user"]["from"], rec["user"]["from"]
    assert rec["constexprs"]["BLOCK_N"] == 4096


def test_code_that_reads_best_config_after_an_autotuned_launch_goes_on(tmp_path):
    """A recorded launch runs nothing, so an Autotuner had no `best_config` and code reading it after
    the launch (FlagGems' libentry; a second kernel sized by the first's chosen block) stopped there."""
    f = write(tmp_path, "two_pass.py", """
        import torch
        import triton
        import triton.language as tl


        @triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"])
        @triton.jit
        def _partial(X, P, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(P + tl.program_id(0), tl.sum(tl.load(X + offs, mask=offs < n, other=0.0), 0))


        @triton.jit
        def _final(P, OUT, m, BLOCK_P: tl.constexpr):
            offs = tl.arange(0, BLOCK_P)
            tl.store(OUT, tl.sum(tl.load(P + offs, mask=offs < m, other=0.0), 0))


        def total(x):
            n = x.numel()
            partials = torch.empty(n, dtype=torch.float32, device=x.device)
            _partial[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, partials, n)
            m = triton.cdiv(n, _partial.best_config.kwargs["BLOCK"])
            out = torch.empty(1, dtype=torch.float32, device=x.device)
            _final[(1,)](partials, out, m, BLOCK_P=triton.next_power_of_2(m))
            return out
    """)
    ok("dump", f"{f}:_final", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    # 16x4096 made up: 65536 elements in blocks of the first config's 256
    assert rec["user"]["from"].startswith("total(") and rec["constexprs"]["BLOCK_P"] == 256, rec["constexprs"]
    assert rec["signature"]["P"] == "*fp32"


def test_a_size_an_earlier_check_set_is_kept_where_arithmetic_compares_it(tmp_path):
    """`assert cos.shape[-1] == 64` sets cos; `assert cos.shape[-1] * 2 == q.shape[-1]` must then set
    q, not cos back to half of q's (which undid the first check until the repairs ran out)."""
    f = write(tmp_path, "rope2.py", """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def _half(Q, COS, OUT, HALF: tl.constexpr):
            d = tl.arange(0, HALF)
            tl.store(OUT + d, tl.load(Q + d) * tl.load(COS + d))


        def half(q, cos):
            assert cos.shape[-1] == 64
            assert cos.shape[-1] * 2 == q.shape[-1]
            out = torch.empty_like(q)
            _half[(1,)](q, cos, out, HALF=cos.shape[-1])
            return out
    """)
    ok("dump", f"{f}:_half", "--store", tmp_path / "out")
    assumed = assumed_by_name(record(tmp_path / "out"))
    # the first plan (16x4096) kept, q's last size set to 128
    assert assumed["half:q"]["spec"] == "*bf16:16x128", assumed
    assert assumed["half:cos"]["spec"] == "*bf16:16x64"


SCALE_KERNELS = """
    import triton
    import triton.language as tl


    @triton.jit
    def scale_rows_kernel(x_ptr, w_ptr, out_ptr, n_cols, x_stride, HAS_W: tl.constexpr, SAVE: tl.constexpr,
                          BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols)
        if HAS_W:
            x *= tl.load(w_ptr + cols, mask=cols < n_cols)
        if SAVE:
            x += 1
        tl.store(out_ptr + row * n_cols + cols, x.to(out_ptr.dtype.element_ty), mask=cols < n_cols)
"""

SCALE_LAYER = """
    import torch
    import triton

    from .scale_kernels import scale_rows_kernel


    class ScaleRows(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w=None):
            x = x.unsqueeze(0) if x.ndim == 1 else x
            rows, cols = x.flatten(0, -2).shape
            assert w is None or w.shape[0] == cols
            out = torch.empty((rows, cols), dtype=torch.float16, device=x.device)
            scale_rows_kernel[(rows,)](x, w, out, cols, x.stride(0), HAS_W=w is not None,
                                       SAVE=x.requires_grad, BLOCK=triton.next_power_of_2(cols))
            return out
"""


def test_a_wrapper_in_another_module_of_the_package_gives_the_values(tmp_path):
    """attorch's style: the kernels in `*_kernels.py`, the autograd Function that launches them in
    `*_layer.py`, which imports them. The kernel's own file has no wrapper; its package's module
    that names it has, and is called as the kernel's module would call it."""
    pkg = tmp_path / "proj" / "scaler"
    write(pkg, "__init__.py", "")
    f = write(pkg, "scale_kernels.py", SCALE_KERNELS)
    write(pkg, "scale_layer.py", SCALE_LAYER)
    write(pkg, "tests/test_scale.py", "from scaler.scale_kernels import scale_rows_kernel\nraise SystemExit(1)\n")
    out = ok("dump", f"{f}:scale_rows_kernel", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    assert "the project's wrapper ScaleRows.apply() (line 9 of scaler.scale_layer) called with made-up" in out
    # the wrapper's own values: its next_power_of_2, its fp16 allocation. The optional w is left None
    # (as projects' own calls mostly leave optional tensors); x requires grad (an autograd
    # Function's input), which the wrapper passes on as SAVE; x's rank is not the 1 of the branch
    # `x.ndim == 1`, which requires nothing
    assert rec["constexprs"]["HAS_W"] is False and rec["constexprs"]["BLOCK"] == 4096
    assert rec["constexprs"]["SAVE"] is True
    # the one half type the wrapper names, for its scratch, is the type of its inputs
    assert rec["signature"]["out_ptr"] == rec["signature"]["x_ptr"] == "*fp16"
    assumed = assumed_by_name(rec)
    assert assumed["ScaleRows.apply:x"]["spec"] == "*fp16:16x4096"
    assert "it requires grad (the input of an autograd Function)" in assumed["ScaleRows.apply:x"]["why"]
    assert "ScaleRows.apply:w" not in assumed, assumed
    assert "input of the wrapper ScaleRows.apply() at line 9 of scaler.scale_layer" in assumed["ScaleRows.apply:x"]["why"]
    # the --from text it says reproduces the compile
    again = ok("dump", f"{f}:scale_rows_kernel", "--from", rec["user"]["from"], "--store", tmp_path / "again")
    assert record(tmp_path / "again")["signature"] == rec["signature"]


ATTN = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _attn_rows(Q, K, V, Out, stride_m, D: tl.constexpr, BLOCK_N: tl.constexpr):
        start = tl.program_id(0) * 16
        rows = start + tl.arange(0, 16)
        cols = tl.arange(0, D)
        q = tl.load(Q + rows[:, None] * stride_m + cols[None, :])
        acc = tl.zeros((16, D), dtype=tl.float32)
        for n in range(0, 128, BLOCK_N):
            keys = n + tl.arange(0, BLOCK_N)
            k = tl.load(K + keys[None, :] * stride_m + cols[:, None])
            v = tl.load(V + keys[:, None] * stride_m + cols[None, :])
            p = tl.dot(q, k)
            acc += tl.dot(p.to(Q.dtype.element_ty), v)
        tl.store(Out + rows[:, None] * stride_m + cols[None, :], acc.to(Out.dtype.element_ty))


    def attention(q, k, v):
        M, D = q.shape
        out = torch.empty_like(q)
        _attn_rows[(M // 16,)](q, k, v, out, q.stride(0), D=D, BLOCK_N=32)
        return out
"""


def test_a_pointer_typed_after_another_takes_the_made_up_type_of_that_one(tmp_path):
    """flag_attn's style: `tl.dot(p.to(Q.dtype.element_ty), v)` types V as whatever Q is. With Q a
    made-up input, V was given the kernel's fp16 habit and Q and K bf16: tl.dot met two types and the
    compile failed. V's type is Q's, so V is made up as Q is."""
    f = write(tmp_path, "attn.py", ATTN)
    ok("dump", f"{f}:_attn_rows", "--store", tmp_path / "out")
    sig = record(tmp_path / "out")["signature"]
    assert sig["Q"] == sig["K"] == sig["V"] == "*bf16", sig


def test_the_one_half_type_a_wrapper_names_is_the_type_of_its_inputs(tmp_path):
    """A wrapper that allocates its scratch as torch.float16 is of a project whose activations are
    fp16: its float inputs nothing else types are fp16, and the assumed line says why."""
    f = write(tmp_path, "attn.py", ATTN.replace(
        "    def attention(q, k, v):\n        M, D = q.shape\n",
        "    def attention(q, k, v):\n        M, D = q.shape\n        buf = torch.empty(1, dtype=torch.float16)\n"))
    out = ok("dump", f"{f}:_attn_rows", "--store", tmp_path / "out")
    sig = record(tmp_path / "out")["signature"]
    assert sig["Q"] == sig["K"] == sig["V"] == sig["Out"] == "*fp16", sig
    assert "its dtype fp16: the one half type the wrapper's code names (line 25)" in out


SCALED = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _scaled_copy(X, Y, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < n)
        if MODE.lower() == "double":
            x = x * 2
        tl.store(Y + offs, x.to(Y.dtype.element_ty), mask=offs < n)


    class _scaled(torch.autograd.Function):
        @staticmethod
        def _call(x, mode, out_dtype):
            mode = mode or "same"
            out_dtype = out_dtype or x.dtype
            y = torch.empty(x.shape, dtype=out_dtype, device=x.device)
            _scaled_copy[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), MODE=mode, BLOCK=1024)
            return y

        @classmethod
        def forward(cls, ctx, x, mode=None, out_dtype=None):
            return _scaled._call(x, mode=mode, out_dtype=out_dtype)
"""


def test_an_autograd_functions_forward_is_the_entry_to_its_own_static_launcher(tmp_path):
    """triton-lang/kernels' style: `forward` (a classmethod here) passes its inputs on to the class's
    own static `_call`, which launches. `_call` made up alone got an int for `mode` (the kernel's
    `MODE.lower()` failed); the Function's `apply` gives the defaults its forward has, and its `x`
    is the tensor `_call` reads it as."""
    f = write(tmp_path, "scaled.py", SCALED)
    out = ok("dump", f"{f}:_scaled_copy", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    assert "the project's wrapper _scaled.apply() (line 25) called with made-up inputs" in out
    assert rec["constexprs"]["MODE"] == "same" and rec["signature"]["Y"] == rec["signature"]["X"] == "*bf16"
    assert [a["name"] for a in rec["user"]["assumed"]] == ["_scaled.apply:x"]


def test_the_half_type_a_project_names_most_is_the_type_of_made_up_inputs(tmp_path):
    """A project whose tests write `dtype=torch.float16` (and its code at most half as often
    torch.bfloat16) runs in fp16: a wrapper's float inputs that nothing else types are made up
    fp16, and say why; where neither type leads, bf16 as before."""
    pkg = tmp_path / "proj"
    write(pkg / "scaler", "__init__.py", "")
    f = write(pkg / "scaler", "scale_kernels.py", SCALE_KERNELS)
    write(pkg / "scaler", "scale_layer.py", SCALE_LAYER.replace("dtype=torch.float16", "dtype=x.dtype"))
    test = "import torch\n" + "".join(f"x{i} = torch.randn(8, dtype=torch.float16)\n" for i in range(4))
    write(pkg / "tests", "test_scale.py", test)
    out = ok("dump", f"{f}:scale_rows_kernel", "--store", tmp_path / "out")
    assert record(tmp_path / "out")["signature"]["x_ptr"] == "*fp16"
    assert "its dtype fp16: the half type the project's code and tests name most (4 times, the other 0)" in out
    write(pkg / "tests", "test_more.py", "import torch\n" + "y = torch.bfloat16\n" * 3)
    ok("dump", f"{f}:scale_rows_kernel", "--store", tmp_path / "again")
    assert record(tmp_path / "again")["signature"]["x_ptr"] == "*bf16"


def test_the_float_type_a_projects_tests_try_first_is_the_type_of_made_up_inputs(tmp_path):
    """A project whose tests parametrize `[torch.float32, torch.float16]` runs in fp32 first, even
    where its code names fp16 most (attorch's style): made-up float inputs are fp32, and say why;
    the tests' lists outweigh the half-type count."""
    pkg = tmp_path / "proj"
    write(pkg / "scaler", "__init__.py", "")
    f = write(pkg / "scaler", "scale_kernels.py", SCALE_KERNELS)
    write(pkg / "scaler", "scale_layer.py", SCALE_LAYER.replace("dtype=torch.float16", "dtype=x.dtype"))
    test = ("import pytest\nimport torch\n" + "x = torch.randn(8, dtype=torch.float16)\n" * 5 +
            "".join(f"@pytest.mark.parametrize('dtype', [torch.float32, torch.float16])\ndef test_{i}(dtype):\n"
                    f"    pass\n" for i in range(3)))
    write(pkg / "tests", "test_scale.py", test)
    out = ok("dump", f"{f}:scale_rows_kernel", "--store", tmp_path / "out")
    assert record(tmp_path / "out")["signature"]["x_ptr"] == "*fp32"
    assert "its dtype fp32: the float type the project's tests try first (3 of their dtype lists, the next 0)" in out
    # lists that lead by less than twice over say nothing: the half type named most decides
    write(pkg / "tests", "test_more.py", "import torch\nD = (torch.float16, torch.bfloat16)\n" * 2)
    ok("dump", f"{f}:scale_rows_kernel", "--store", tmp_path / "again")
    assert record(tmp_path / "again")["signature"]["x_ptr"] == "*fp16"


def test_a_neighbour_whose_import_runs_on_is_stopped_and_the_next_one_read(tmp_path, monkeypatch):
    """Importing a package's other modules runs their module-level code: one that never ends is
    stopped at its share of the time allowed, and the module after it still gives the wrapper."""
    from kinspect.compile import loader

    monkeypatch.setattr(loader, "NEIGHBOURS_BUDGET_S", 6)
    pkg = tmp_path / "proj" / "scaler"
    write(pkg, "__init__.py", "")
    f = write(pkg, "scale_kernels.py", SCALE_KERNELS)
    write(pkg, "a_spin.py", "from .scale_kernels import scale_rows_kernel\nwhile True:\n    pass\n")
    write(pkg, "scale_layer.py", SCALE_LAYER)
    out = ok("dump", f"{f}:scale_rows_kernel", "--store", tmp_path / "out")
    assert "the project's wrapper ScaleRows.apply() (line 9 of scaler.scale_layer)" in out


def test_an_assert_of_none_or_a_shape_is_met_by_its_shape(tmp_path):
    """`assert w is None or w.shape[0] == cols` of a w given: the made-up w's first size is changed to
    the row's, as for `assert w.shape[0] == cols`."""
    pkg = tmp_path / "proj" / "scaler"
    write(pkg, "__init__.py", "")
    f = write(pkg, "scale_kernels.py", SCALE_KERNELS)
    write(pkg, "scale_layer.py", SCALE_LAYER.replace("def forward(ctx, x, w=None):", "def forward(ctx, x, w):"))
    ok("dump", f"{f}:scale_rows_kernel", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    assumed = assumed_by_name(rec)
    assert rec["constexprs"]["HAS_W"] is True
    assert assumed["ScaleRows.apply:w"]["spec"].startswith("*fp16:4096"), assumed
    assert "from the wrapper's check at line 13" in assumed["ScaleRows.apply:w"]["why"]


PASSED_KERNEL = """
    import functools

    import torch
    import triton
    import triton.language as tl


    def cast_inputs(fn):                      # a decorator of the forward, as torch.amp.custom_fwd is
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            return fn(*args, **kwargs)
        return inner


    @triton.jit
    def _norm_one_pass(out_ptr, x_ptr, w_ptr, stride, N, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        y = x * tl.rsqrt(tl.sum(x * x) / N + eps) * tl.load(w_ptr + cols, mask=cols < N)
        tl.store(out_ptr + row * stride + cols, y, mask=cols < N)


    @triton.jit
    def _norm_two_pass(out_ptr, x_ptr, w_ptr, stride, N, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, N, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
            acc += x * x
        rstd = tl.rsqrt(tl.sum(acc) / N + eps)
        for start in range(0, N, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + cols, mask=cols < N)
            tl.store(out_ptr + row * stride + cols, x * rstd * w, mask=cols < N)


    @triton.jit
    def _unrelated(a_ptr, b_ptr, n):
        i = tl.arange(0, 128)
        tl.store(b_ptr + i, tl.load(a_ptr + i, mask=i < n), mask=i < n)


    class Norm(torch.autograd.Function):
        @staticmethod
        @cast_inputs
        def forward(ctx, x, weight, eps, implementation):
            assert x.dtype == weight.dtype
            if x.dtype == torch.float16:
                eps = max(eps, 1.6e-5)
            out = torch.empty_like(x)
            M, N = x.shape
            block = min(triton.next_power_of_2(N), 4096)
            implementation[(M,)](out_ptr=out, x_ptr=x, w_ptr=weight, stride=x.stride(0), N=N, eps=eps,
                                 BLOCK=block, num_warps=8)
            return out


    def norm(x, weight, eps, implementation=_norm_one_pass):
        return Norm.apply(x, weight, eps, implementation)
"""


def test_a_wrapper_that_launches_the_kernel_it_is_passed_is_passed_this_one(tmp_path):
    f = write(tmp_path, "norms.py", PASSED_KERNEL)
    for kernel in ("_norm_one_pass", "_norm_two_pass"):
        out = ok("dump", f"{f}:{kernel}", "--store", tmp_path / kernel)
        rec = record(tmp_path / kernel)
        # the wrapper under its decorator is read; the kernel itself is its argument, not a guess
        assert f"Norm.apply() (line 48) called with made-up inputs" in out
        assert rec["user"]["from"].startswith("Norm.apply(") and rec["user"]["from"].endswith(f", {kernel})")
        assert rec["constexprs"]["BLOCK"] == 4096 and rec["options"]["num_warps"] == 8
        assert rec["signature"]["x_ptr"] == rec["signature"]["out_ptr"] == "*fp16", rec["signature"]
        assert "implementation" not in {a["name"].split(":")[-1] for a in rec["user"]["assumed"]}
    # a kernel the launch's keywords do not fit is not launched by it: its own body decides
    ok("dump", f"{f}:_unrelated", "--store", tmp_path / "unrelated")
    assert "from" not in record(tmp_path / "unrelated")["user"]


SPLATTED = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _scale4(x_ptr, o_ptr, sxb, sxh, sxm, sxd, sob, soh, som, sod, M, D: tl.constexpr, BLOCK: tl.constexpr):
        pid, bh = tl.program_id(0), tl.program_id(1)
        rows = pid * BLOCK + tl.arange(0, BLOCK)
        d = tl.arange(0, D)
        x = tl.load(x_ptr + bh * sxh + rows[:, None] * sxm + d[None, :] * sxd, mask=rows[:, None] < M)
        tl.store(o_ptr + bh * soh + rows[:, None] * som + d[None, :] * sod, x * 2, mask=rows[:, None] < M)


    def scale4(x, out):
        batch, heads, m, d = x.size()
        grid = (triton.cdiv(m, 64), batch * heads)
        _scale4[grid](x, out, *x.stride(), *out.stride(), m, D=d, BLOCK=64)
        return out
"""


def test_a_tensor_whose_strides_are_splatted_beside_a_4d_ones_is_4d(tmp_path):
    f = write(tmp_path, "splat.py", SPLATTED)
    ok("dump", f"{f}:_scale4", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    out = assumed_by_name(rec)["scale4:out"]
    assert out["spec"].count("x") == 3 and "as x's, whose strides the launch splats beside its own" in out["why"]
    assert rec["constexprs"]["D"] == 128


BOTH_ENDS = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _qk(Q, K, O, sqb, sqh, sqm, sqd, skb, skh, skn, skd, sob, soh, som, son, M, N,
            D: tl.constexpr, BLOCK: tl.constexpr):
        bh = tl.program_id(0)
        m = tl.arange(0, BLOCK)
        d = tl.arange(0, D)
        q = tl.load(Q + bh * sqh + m[:, None] * sqm + d[None, :] * sqd, mask=m[:, None] < M, other=0.0)
        k = tl.load(K + bh * skh + m[:, None] * skn + d[None, :] * skd, mask=m[:, None] < N, other=0.0)
        tl.store(O + bh * soh + m[:, None] * som + m[None, :] * son, tl.dot(q, tl.trans(k)))


    class QK(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, out):
            assert q.shape[-1] == k.shape[-1]
            assert q.dtype in [torch.float16, torch.bfloat16]
            batch, heads, m, d = q.size()
            n = k.size(2)
            _qk[(batch * heads,)](q, k, out, *q.stride(), *k.stride(), *out.stride(), m, n, D=d, BLOCK=64,
                                  num_warps=4 if k.size(3) <= 64 else 8)
            return out


    def qk(q: torch.Tensor, k: torch.Tensor, out: torch.Tensor):
        return QK.apply(q, k, out)
"""


def test_sizes_read_at_both_ends_do_not_outrank_a_splat_beside_a_4d_tensor(tmp_path):
    # kernl's attention: `k.size(3)` and `k.shape[-1]` are one dimension of a 4-D k whose strides
    # fill the kernel's four; a 5-D guess shifted every later argument and the call launched nothing
    f = write(tmp_path, "ends.py", BOTH_ENDS)
    ok("dump", f"{f}:_qk", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    assumed = assumed_by_name(rec)
    assert assumed["QK.apply:k"]["spec"].count("x") == 3, assumed["QK.apply:k"]
    assert rec["constexprs"]["D"] == 128 and rec["options"]["num_warps"] == 8


def test_an_annotated_tensor_passed_on_is_what_the_callee_reads_it_as(tmp_path, monkeypatch):
    # `q: torch.Tensor` says a tensor, not its rank: qk() passes q on to QK.apply, which makes it 4-D
    import importlib

    from kinspect.compile import wrappers
    from kinspect.compile.file_launches import kernel_key

    write(tmp_path, "ends_passed.py", BOTH_ENDS)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("ends_passed")
    found = wrappers.calls(module, module._qk, kernel_key(module._qk))
    call = next(c for c in found if c.func == "qk")
    q = next(i for i in call.inputs if i.name == "q")
    assert len(q.shape) == 4 and "as q's" not in q.why, q


CHANNEL_LAST = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _shift_add(X, O, sxb, sxd, sxt, sob, sod, sot, T, D, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
        b, pt, pd = tl.program_id(0), tl.program_id(1), tl.program_id(2)
        t = pt * BLOCK_T + tl.arange(0, BLOCK_T)
        d = pd * BLOCK_D + tl.arange(0, BLOCK_D)
        m = (t[:, None] < T) & (t[:, None] > 0) & (d[None, :] < D)
        x = tl.load(X + b * sxb + (t[:, None] - 1) * sxt + d[None, :] * sxd, mask=m, other=0.0)
        y = tl.load(X + b * sxb + t[:, None] * sxt + d[None, :] * sxd, mask=m, other=0.0)
        tl.store(O + b * sob + t[:, None] * sot + d[None, :] * sod, x + y, mask=m)


    def shift_add(x):
        batch, dim, seqlen = x.shape
        is_channel_last = (x.stride(1) == 1) & (x.stride(2) > 1)
        out = torch.empty_like(x)
        if not is_channel_last:
            assert 0, "Need to run in channel-last layout"
        grid = (batch, triton.cdiv(seqlen, 64), triton.cdiv(dim, 64))
        _shift_add[grid](x, out, x.stride(0), x.stride(1), x.stride(2), out.stride(0), out.stride(1),
                         out.stride(2), seqlen, dim, BLOCK_T=64, BLOCK_D=64)
        return out
"""


def test_a_wrapper_that_wants_channel_last_gets_it(tmp_path):
    # causal-conv1d's style: the wrapper compares x.stride(1) with 1 and refuses any other layout;
    # the made-up x is laid out with dimension 1 innermost, so its stride along d is the one 1
    f = write(tmp_path, "conv.py", CHANNEL_LAST)
    ok("dump", f"{f}:_shift_add", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    x = assumed_by_name(rec)["shift_add:x"]
    assert "dimension 1 innermost (the wrapper compares x.stride(1) with 1)" in x["why"], x
    assert "movedim(-1, 1)" in rec["user"]["from"], rec["user"]["from"]
    sig = rec["signature"]
    assert sig["sxd"] == sig["sod"] == "constexpr" and sig["sxt"] == sig["sot"] == "i32", sig


VARLEN = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _pack_heads(X, Y, cu_in, cu_out, stride_t, stride_h, H: tl.constexpr, D: tl.constexpr, BLK: tl.constexpr):
        pid, h, b = tl.program_id(0), tl.program_id(1), tl.program_id(2)
        start = tl.load(cu_in + b)
        n = tl.load(cu_in + b + 1) - start
        rows = pid * BLK + tl.arange(0, BLK)
        d = tl.arange(0, D)
        x = tl.load(X + (start + rows[:, None]) * stride_t + h * stride_h + d[None, :], mask=rows[:, None] < n)
        tl.store(Y + (tl.load(cu_out + b) + pid) * H + h, tl.max(tl.abs(x)))


    def pack_heads(x, cu_seqlens, max_seqlen, BLK=64):
        heads, head_dim = x.shape[1], x.shape[-1]
        lengths = cu_seqlens[1:] - cu_seqlens[:-1]
        cu_out = torch.nn.functional.pad(torch.cumsum((lengths + BLK - 1) // BLK, dim=0), (1, 0))
        y = torch.empty((cu_out[-1], heads), dtype=torch.float32, device=x.device)
        grid = (triton.cdiv(max_seqlen, BLK), heads, cu_seqlens.shape[0] - 1)
        _pack_heads[grid](x, y, cu_seqlens, cu_out, x.stride(0), x.stride(1), H=heads, D=head_dim, BLK=BLK)
        return y
"""


def test_offsets_are_a_vector_and_sizes_read_from_both_ends_are_different_dimensions(tmp_path):
    """varlen style: `cu_seqlens` (integers the kernel reads as offsets) is made up 1-D, so the
    wrapper's cumsum gives the int64 offsets it passes on; x.shape[1] and x.shape[-1] make x 3-D
    (tokens, heads, head size), so the head size is a head's, not a hidden size."""
    f = write(tmp_path, "varlen.py", VARLEN)
    ok("dump", f"{f}:_pack_heads", "--store", tmp_path / "out")
    rec = record(tmp_path / "out")
    assert rec["signature"]["cu_in"] == "*i32" and rec["signature"]["cu_out"] == "*i64", rec["signature"]
    assert (rec["constexprs"]["H"], rec["constexprs"]["D"]) == (32, 128)
    why = {a["name"]: a["why"] for a in rec["user"]["assumed"]}
    assert "rank 1 (nothing fixes it; integers: indices)" in why["pack_heads:cu_seqlens"]
    assert "rank 3 (at least: it reads sizes 1 from its start and 1 from its end)" in why["pack_heads:x"]


def test_only_the_projects_own_test_folders_count_for_its_float_type(tmp_path):
    """A project that sits under a folder named `test` (a user's ~/test/proj) is not all tests: only
    its own tests' dtype lists count (loader.project_files gives paths from the project's folder)."""
    from kinspect.compile.loader import locate, project_files
    from kinspect.compile.wrappers import project_dtype

    lists = "import torch\nD = [torch.float32, torch.float16]\n" * 3
    top = tmp_path / "test" / "proj"
    write(top / "pkg", "__init__.py", "")
    kernels = write(top / "pkg", "ops.py", lists)
    assert project_dtype(project_files(locate(str(kernels)))) is None
    write(top / "tests", "check_ops.py", lists)
    assert project_dtype(project_files(locate(str(kernels))))[0] == "fp32"
    (top / "tests" / "check_ops.py").unlink()
    write(top / "pkg", "test_ops.py", lists)
    assert project_dtype(project_files(locate(str(kernels))))[0] == "fp32"


SPARSE = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _gather_rows(A, Offsets, Out, N, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        start = tl.load(Offsets + row)
        cols = tl.arange(0, BLOCK)
        x = tl.load(A + start * N + cols, mask=cols < N, other=0.0)
        tl.store(Out + row * N + cols, x, mask=cols < N)


    def gather_rows(shape, data, offsets, offsets_t, transpose):
        M, N = shape
        assert data.shape[1] == N
        out = torch.empty(M, N, dtype=data.dtype, device=data.device)
        a_offsets = offsets
        if transpose:
            a_offsets = offsets_t
        _gather_rows[(M,)](data, a_offsets, out, N, BLOCK=triton.next_power_of_2(N))
        return out
"""


def test_a_shape_the_wrapper_unpacks_and_offsets_passed_through_a_local_name(tmp_path):
    # stk's dsd(shape, data, offsets, ..., offsets_t, ...): `M, K = shape`, and the offsets the
    # kernel loads passed as `a_offsets`, one of two parameters; both were made ints, and the
    # call stopped at `M, K = shape` ('int' object is not iterable)
    f = write(tmp_path, "sparse.py", SPARSE)
    out = ok("dump", f"{f}:_gather_rows", "--store", str(tmp_path / "s"))
    assert "the project's wrapper gather_rows() (line 16) called with made-up inputs" in out
    said = assumed_by_name(record(tmp_path / "s"))
    assert said["gather_rows:shape"]["spec"] == "shape:16x4096"
    assert said["gather_rows:offsets"]["spec"].startswith("*i32:")
    assert said["gather_rows:offsets_t"]["spec"].startswith("*i32:")
    assert record(tmp_path / "s")["constexprs"]["BLOCK"] == 4096


SCALE_FN = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _scale_fwd(x_ptr, y_ptr, s, N, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < N)
        tl.store(y_ptr + offs, x * s, mask=offs < N)


    @triton.jit
    def _scale_bwd(dy_ptr, dx_ptr, s, N, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dy = tl.load(dy_ptr + offs, mask=offs < N)
        tl.store(dx_ptr + offs, dy * s, mask=offs < N)


    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, s):
            assert x.dtype == torch.float16
            y = torch.empty_like(x)
            N = x.numel()
            _scale_fwd[(triton.cdiv(N, 1024),)](x, y, s, N, BLOCK=1024)
            ctx.s = s
            return y

        @staticmethod
        def backward(ctx, dy):
            dx = torch.empty_like(dy)
            N = dy.numel()
            _scale_bwd[(triton.cdiv(N, 1024),)](dy, dx, ctx.s, N, BLOCK=1024)
            return dx, None
"""


def test_a_kernel_its_autograd_functions_backward_launches(tmp_path):
    # lightning-attention's and many training libraries' backward kernels: launched only by the
    # Function's backward, which no forward call reaches; the call is trained through
    f = write(tmp_path, "scale.py", SCALE_FN)
    out = ok("dump", f"{f}:_scale_bwd", "--store", str(tmp_path / "s"))
    assert "the project's wrapper Scale.apply() (line 22) called with made-up inputs and trained through" in out
    assert "(_out := Scale.apply(" in out and "torch.autograd.backward(_outs := [t for t in (_out if " in out
    rec = record(tmp_path / "s")
    assert rec["signature"]["dy_ptr"] == "*fp16" and rec["constexprs"]["BLOCK"] == 1024
    out = ok("dump", f"{f}:_scale_fwd", "--store", str(tmp_path / "t"))
    assert "trained through" not in out and "Scale.apply()" in out


STRICT_BWD = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _gate_fwd(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < N).to(tl.float32)
        tl.store(y_ptr + offs, (x * tl.sigmoid(x)).to(y_ptr.dtype.element_ty), mask=offs < N)


    @triton.jit
    def _gate_bwd(x_ptr, dy_ptr, dx_ptr, N, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < N).to(tl.float32)
        dy = tl.load(dy_ptr + offs, mask=offs < N).to(tl.float32)
        s = tl.sigmoid(x)
        tl.store(dx_ptr + offs, (dy * s * (1 + x * (1 - s))).to(dx_ptr.dtype.element_ty), mask=offs < N)


    class Gate(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.empty_like(x)
            _gate_fwd[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, dy):
            x, y = ctx.saved_tensors
            assert dy.is_contiguous()
            assert x.stride() == y.stride() == dy.stride()
            dx = torch.empty_like(x)
            _gate_bwd[(triton.cdiv(x.numel(), 1024),)](x, dy, dx, x.numel(), BLOCK=1024)
            return dx
"""


def test_a_function_of_two_outputs_is_trained_through_both(tmp_path):
    # NeMo's RnntLogProbs returns its target and blank scores: each gets a gradient
    two = STRICT_BWD.replace("            return y\n", "            return y, y * 2\n").replace(
        "def backward(ctx, dy):", "def backward(ctx, dy, dy2):")
    f = write(tmp_path, "gate2.py", two)
    out = ok("dump", f"{f}:_gate_bwd", "--store", str(tmp_path / "s"))
    assert "called with made-up inputs and trained through" in out, out
    assert record(tmp_path / "s")["constexprs"]["BLOCK"] == 1024


def test_a_backward_that_asserts_a_dense_gradient_is_trained_through(tmp_path):
    # the Triton tutorial's attention descendants: backward asserts `dO.is_contiguous()` and that its
    # strides are the output's, as a model's next layer gives it; `.sum().backward()` gave strides of 0
    f = write(tmp_path, "gate.py", STRICT_BWD)
    out = ok("dump", f"{f}:_gate_bwd", "--store", str(tmp_path / "s"))
    assert "called with made-up inputs and trained through" in out, out
    rec = record(tmp_path / "s")
    assert rec["signature"]["dy_ptr"] == rec["signature"]["x_ptr"] != "" and rec["constexprs"]["BLOCK"] == 1024


HALF_BY_KERNELS = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _pv_kernel(p_ptr, v_ptr, o_ptr, N: tl.constexpr, D: tl.constexpr):
        rows = tl.arange(0, N)
        cols = tl.arange(0, D)
        p = tl.load(p_ptr + rows[:, None] * N + rows[None, :])
        v = tl.load(v_ptr + rows[:, None] * D + cols[None, :])
        o = tl.dot(p.to(tl.float16), v.to(tl.float16))
        tl.store(o_ptr + rows[:, None] * D + cols[None, :], o.to(tl.float16))


    def pv(p, v):
        o = torch.empty(p.shape[0], v.shape[1], dtype=v.dtype, device=v.device)
        _pv_kernel[(1,)](p, v, o, p.shape[0], v.shape[1])
        return o


    def check(n=64, d=64):
        p = torch.softmax(torch.randn(n, n), dim=-1).half()
        return pv(p, torch.randn(n, d).half())
"""


def test_the_half_type_a_projects_kernels_cast_to_types_made_up_inputs(tmp_path):
    # the Triton tutorial's descendants name float16 as `tl.float16` in their kernels and `.half()` in
    # their checks, seldom as `torch.float16`: that is the project's half type too
    f = write(tmp_path, "pv.py", HALF_BY_KERNELS)
    out = ok("dump", f"{f}:_pv_kernel", "--store", str(tmp_path / "s"))
    assert "its dtype fp16: the half type the project's code and tests name most (5 times, the other 0)" in out, out
    assert record(tmp_path / "s")["signature"]["v_ptr"] == "*fp16"


FLAG_BY_CONDITIONAL = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _masked_copy(x_ptr, y_ptr, N, STAGE: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < N)
        if STAGE == 3:
            x = tl.where(offs < N // 2, x, 0.0)
        tl.store(y_ptr + offs, x, mask=offs < N)


    def masked_copy(x, causal):
        y = torch.empty_like(x)
        stage = 3 if causal else 1
        _masked_copy[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), STAGE=stage, BLOCK=1024)
        return y
"""


def test_a_wrapper_parameter_tested_by_a_conditional_expression_is_a_flag(tmp_path):
    # the Triton tutorial's attention: `STAGE = 3 if causal else 1`; made up as an int, causal was 128
    f = write(tmp_path, "masked.py", FLAG_BY_CONDITIONAL)
    out = ok("dump", f"{f}:_masked_copy", "--store", str(tmp_path / "s"))
    assert "masked_copy:causal=i1:0  (a flag the wrapper takes" in out, out
    assert record(tmp_path / "s")["constexprs"]["STAGE"] == 1


COUNTS_TO_OFFSETS = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _group_rows(x_ptr, y_ptr, starts_ptr, ends_ptr, D: tl.constexpr):
        g = tl.program_id(0)
        start = tl.load(starts_ptr + g).to(tl.int32)
        end = tl.load(ends_ptr + g).to(tl.int32)
        cols = tl.arange(0, D)
        acc = tl.zeros((D,), dtype=tl.float32)
        for r in range(start, end):
            acc += tl.load(x_ptr + r * D + cols).to(tl.float32)
        tl.store(y_ptr + g * D + cols, acc)


    def group_rows(x, counts):
        ends = counts.cumsum(0)
        starts = ends - counts
        y = torch.empty(counts.shape[0], x.shape[1], dtype=torch.float32, device=x.device)
        _group_rows[(counts.shape[0],)](x, y, starts, ends, D=x.shape[1])
        return y
"""


def test_a_wrapper_input_the_kernel_reads_as_offsets_through_its_cumsum_is_integers(tmp_path):
    # xtuner's grouped GEMM: the wrapper takes each group's size and passes the kernel cumsum(sizes) -
    # sizes; the kernel reads those as row bounds, so the sizes are integers (made up bf16 before)
    f = write(tmp_path, "groups.py", COUNTS_TO_OFFSETS)
    out = ok("dump", f"{f}:_group_rows", "--store", str(tmp_path / "s"))
    assert "group_rows:counts=*i64:" in out and "the wrapper computes starts_ptr's argument from it" in out, out
    sig = record(tmp_path / "s")["signature"]
    assert sig["starts_ptr"] == sig["ends_ptr"] == "*i64" and sig["y_ptr"] == "*fp32"


SAVED_LENGTHS = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _seq_grad(x_ptr, dx_ptr, dy_ptr, lengths_ptr, labels_ptr, T, V, BLOCK: tl.constexpr):
        b = tl.program_id(0)
        t = tl.program_id(1).to(tl.int64)
        length = tl.load(lengths_ptr + b)
        if t >= length:
            return
        cols = tl.arange(0, BLOCK)
        row = (b * T + t) * V
        label = tl.load(labels_ptr + b * T + t)
        x = tl.load(x_ptr + row + cols, mask=cols < V, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + b * T + t).to(tl.float32)
        dx = tl.where(cols == label, dy * (1 - x), -dy * x)
        tl.store(dx_ptr + row + cols, dx, mask=cols < V)


    class SeqScore(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, labels, lengths):
            labels = labels.contiguous()
            ctx.save_for_backward(x, labels, lengths)
            return x.amax(dim=-1), x.amin(dim=-1)

        @staticmethod
        def backward(ctx, dy, dy_min):
            x, labels, lengths = ctx.saved_tensors
            dx = torch.empty_like(x)
            B, T, V = x.shape
            _seq_grad[(B, T)](x, dx, dy.contiguous(), lengths, labels, T, V, BLOCK=triton.next_power_of_2(V))
            return dx, None, None
"""


def test_what_a_functions_backward_reads_of_its_saved_inputs_types_them(tmp_path):
    # NeMo's RNN-T log-probs: forward saves the labels and lengths (ctx.save_for_backward), backward
    # unpacks ctx.saved_tensors and launches the kernel, which bounds each program by a length and
    # compares the labels with its columns: both are integers (made up fp32 before)
    f = write(tmp_path, "seq.py", SAVED_LENGTHS)
    out = ok("dump", f"{f}:_seq_grad", "--store", str(tmp_path / "s"))
    assert "SeqScore.apply:lengths=*i32:" in out and "as the kernel's code gives lengths_ptr" in out, out
    assert "SeqScore.apply:labels=*i32:" in out
    sig = record(tmp_path / "s")["signature"]
    assert sig["lengths_ptr"] == sig["labels_ptr"] == "*i32" and sig["x_ptr"] != "*i32"
    # the kernel alone: a loaded value a program's index is compared with is a length
    g = write(tmp_path, "seq_kernel.py", SAVED_LENGTHS.split("    class SeqScore")[0])
    out = ok("dump", f"{g}:_seq_grad", "--store", str(tmp_path / "t"))
    assert "lengths_ptr=*i32  (a pointer: loaded at line 11; element type i32: its values bound a program's " \
           "index at line 12" in out, out


def test_a_backward_that_checks_its_device_sees_the_targets(tmp_path):
    # qwen3-moe-fused's style: the backward's wrapper asserts its gradient is on the GPU; the autograd
    # engine runs backward with no torch function mode, so the check read the CPU
    f = write(tmp_path, "scale.py", SCALE_FN.replace(
        "            dx = torch.empty_like(dy)", "            assert dy.is_cuda and dy.device.type == 'cuda'\n"
                                                "            dx = torch.empty_like(dy)"))
    ok("dump", f"{f}:_scale_bwd", "--store", str(tmp_path / "s"))
    assert record(tmp_path / "s")["signature"]["dy_ptr"] == "*fp16"


GUARDED = """
    import torch
    import triton
    import triton.language as tl


    def on_device(t):             # DeepSpeed's accelerator check, in the same spirit
        return str(t.device).startswith("cuda:")


    @triton.jit
    def _gelu(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < N).to(tl.float32)
        tl.store(y_ptr + offs, x * tl.sigmoid(1.702 * x), mask=offs < N)


    def gelu(x):
        assert x.is_cuda, "x must be on the GPU"
        assert on_device(x)
        if x.device.type == "cpu":         # the CPU's path: no kernel
            return torch.nn.functional.gelu(x)
        y = torch.empty_like(x)
        host = torch.zeros(1, device="cpu")
        assert not host.is_cuda
        N = x.numel()
        _gelu[(triton.cdiv(N, 1024),)](x, y, N, BLOCK=1024)
        return y
"""


def test_a_wrapper_that_checks_its_tensors_are_on_the_gpu(tmp_path):
    # the made-up inputs are made on the CPU; the wrapper sees them on the GPU they stand for, and
    # a tensor it makes on the CPU itself stays there (DeepSpeed's `on_accelerator`, `is_cuda`,
    # a CPU fallback): before, every call stopped at the first assert and BLOCK was guessed 64
    f = write(tmp_path, "guarded.py", GUARDED)
    out = ok("dump", f"{f}:_gelu", "--store", str(tmp_path / "s"))
    assert "the project's wrapper gelu() (line 18) called with made-up inputs" in out, out
    assert record(tmp_path / "s")["constexprs"]["BLOCK"] == 1024


CACHE_COPY = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _copy_to_cache(K, KCache, Tables, Lens, stride_kt, stride_cb, block_size, HEAD_DIM: tl.constexpr):
        t = tl.program_id(0)
        pos = tl.load(Lens + t)
        block = tl.load(Tables + t * 8 + pos // block_size)
        d = tl.arange(0, HEAD_DIM)
        tl.store(KCache + block * stride_cb + (pos % block_size) * HEAD_DIM + d, tl.load(K + t * stride_kt + d))


    def copy_to_cache(k, k_cache, lengths, tables):
        assert k.dtype == k_cache.dtype, "k and its cache differ"
        bsz, head_dim = k.shape
        assert lengths.shape[0] == tables.shape[0] == bsz, "incompatible batch"
        _copy_to_cache[(bsz,)](k, k_cache, tables, lengths, k.stride(0), k_cache.stride(0), k_cache.shape[1],
                               HEAD_DIM=head_dim)
"""

CACHE_COPY_TEST = """
    import torch
    from proj.cache import copy_to_cache

    def test_copy():
        k = torch.randn(6, 32, dtype=torch.float16)
        copy_to_cache(k, make_cache(), lengths_of(6), tables_of(6))
"""


def test_a_chained_check_and_the_tests_dtype_kept_when_inputs_disagree(tmp_path):
    # ColossalAI's `assert kv_lengths.shape[0] == block_tables.shape[0] == bsz`: a chain, each pair
    # checked; and `k.dtype == k_cache.dtype` with k's dtype the test's (fp16): the made-up cache
    # takes it, not the other way round
    write(tmp_path, "proj/__init__.py", "")
    write(tmp_path, "proj/cache.py", CACHE_COPY)
    write(tmp_path, "tests/test_cache.py", CACHE_COPY_TEST)
    out = ok("dump", f"{tmp_path}/proj/cache.py:_copy_to_cache", "--store", str(tmp_path / "s"))
    said = assumed_by_name(record(tmp_path / "s"))
    assert said["copy_to_cache:k"]["spec"] == "*fp16:6x32", out
    assert said["copy_to_cache:k_cache"]["spec"].startswith("*fp16:"), out
    assert said["copy_to_cache:lengths"]["spec"] == said["copy_to_cache:tables"]["spec"] == "*i32:6", out
    assert record(tmp_path / "s")["constexprs"]["HEAD_DIM"] == 32


ENTRY_KERNELS = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _scale_norm_kernel(x_ptr, w_ptr, y_ptr, N, eps, BLOCK_N: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=cols < N)
        y = x * tl.rsqrt(tl.sum(x * x, axis=0) / N + eps) * w
        tl.store(y_ptr + row * N + cols, y.to(y_ptr.dtype.element_ty), mask=cols < N)


    def scale_norm_fn(x, w, eps):
        y = torch.empty_like(x)
        M, N = x.reshape(-1, x.shape[-1]).shape
        _scale_norm_kernel[(M,)](x, w, y, N, eps, BLOCK_N=triton.next_power_of_2(N))
        return y


    @triton.jit
    def _gather_kernel(x_ptr, idx_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
        row = tl.program_id(0)
        src = tl.load(idx_ptr + row)
        d = tl.arange(0, BLOCK_D)
        tl.store(out_ptr + row * D + d, tl.load(x_ptr + src * D + d, mask=d < D), mask=d < D)


    def gather(x, idx):
        out = x.new_empty(idx.numel(), x.shape[1])
        _gather_kernel[(idx.numel(),)](x, idx, out, x.shape[1], BLOCK_D=triton.next_power_of_2(x.shape[1]))
        return out
"""

ENTRY_LAYERS = """
    import torch
    from proj import kernels


    class ScaleNorm(torch.nn.Module):
        def __init__(self, dim, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = torch.nn.Parameter(torch.ones(dim))

        def forward(self, x):
            return kernels.scale_norm_fn(x, self.weight, self.eps)


    class GatherOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, indices, top_k=1):
            return kernels.gather(x, indices // top_k)


    gather = GatherOp.apply


    def gather_all(xs, indices):
        return [kernels.gather(x, indices) for x in xs]
"""

ENTRY_TEST = """
    import pytest
    import torch
    from proj import ops
    from proj.ops import ScaleNorm


    @pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
    @pytest.mark.parametrize("d", [768])
    def test_norm(d, dtype):
        x = torch.randn(2, 16, d, dtype=dtype, device="cuda")
        norm = ScaleNorm(d).to(dtype).cuda()
        assert norm(x).shape == x.shape


    def test_gather_all():          # a list of tensors: not rebuilt, and no stop to the others
        xs = [torch.randn(8, 96), torch.randn(8, 96)]
        ops.gather_all(xs, torch.arange(8))


    def test_gather():
        x = torch.randn(8, 96, dtype=torch.bfloat16)
        out = ops.gather(x, torch.arange(8, dtype=torch.int16), 2)
"""


def test_a_kernel_the_tests_reach_through_the_projects_other_code(tmp_path):
    # lightning-attention's `SimpleRMSNorm(768)(x)`, megablocks' `ops.padded_gather(...)` (an
    # autograd Function's apply, re-exported): the tests call neither wrapper, so each was called
    # with made-up inputs (bf16 16x4096: BLOCK_N 4096 where the test's give 1024)
    write(tmp_path, "proj/__init__.py", "")
    write(tmp_path, "proj/kernels.py", ENTRY_KERNELS)
    write(tmp_path, "proj/ops/__init__.py", "from proj.ops.layers import ScaleNorm, gather, gather_all\n")
    write(tmp_path, "proj/ops/layers.py", ENTRY_LAYERS)
    write(tmp_path, "tests/test_ops.py", ENTRY_TEST)
    kernels = tmp_path / "proj/kernels.py"
    out = ok("dump", f"{kernels}:_scale_norm_kernel", "--store", str(tmp_path / "a"))
    assert ("the project's ScaleNorm (proj/ops/layers.py:6), which reaches it, called as its test calls it "
            "(tests/test_ops.py:13, test_norm)") in out, out
    rec = record(tmp_path / "a")
    assert rec["constexprs"]["BLOCK_N"] == 1024 and rec["signature"]["x_ptr"] == "*fp16"
    assert rec["signature"]["w_ptr"] == "*fp16"          # the module's weight, cast by the test's .to(dtype)
    assert assumed_by_name(rec)["ScaleNorm:x"]["kind"] == "tested"
    out = ok("dump", f"{kernels}:_gather_kernel", "--store", str(tmp_path / "b"))
    assert "the project's gather (proj/ops/layers.py:22), which reaches it" in out, out
    rec = record(tmp_path / "b")
    assert rec["signature"]["x_ptr"] == "*bf16" and rec["signature"]["idx_ptr"] == "*i16"
    assert rec["constexprs"]["BLOCK_D"] == 128


SCALE_MODULE = SCALE_FN.replace('''            assert x.dtype == torch.float16
''', "") + """

    class ScaleLayer(torch.nn.Module):
        def __init__(self, s=2.0):
            super().__init__()
            self.s = s

        def forward(self, x):
            return Scale.apply(x, self.s)


    __all__ = ["ScaleLayer"]
"""

SCALE_MODULE_TEST = """
    import pytest
    import torch
    from proj import ScaleLayer


    def get_params():
        cases = []
        for b in [2, 4]:
            for n in [96, 4096]:
                cases.append((b, n))
        return cases


    @pytest.mark.parametrize("b, n", get_params())
    @pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
    def test_scale(b, n, dtype):
        x = torch.randn((b, n), dtype=dtype, device="cuda").requires_grad_()
        layer = ScaleLayer()
        y = layer(x)
        y.backward(torch.randn_like(y))
"""


def test_a_backward_kernel_the_tests_reach_through_a_module_trained_through(tmp_path):
    # lightning-attention's SimpleRMSNorm: re-exported by `from .layers import *`, its cases a list a
    # loop appends to; its backward kernel reached by training through the test's call
    write(tmp_path, "proj/__init__.py", "from .layers import *\n")
    f = write(tmp_path, "proj/layers.py", SCALE_MODULE)
    write(tmp_path, "tests/test_scale.py", SCALE_MODULE_TEST)
    out = ok("dump", f"{f}:_scale_bwd", "--store", str(tmp_path / "s"))
    assert "the project's ScaleLayer (proj/layers.py:38), which reaches it, called as its test calls it" in out, out
    assert "trained through" in out
    rec = record(tmp_path / "s")
    assert rec["signature"]["dy_ptr"] == "*fp32" and assumed_by_name(rec)["ScaleLayer:x"]["spec"] == "*fp32:2x96"


SCAN = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _scan_kernel(x_ptr, y_ptr, S, H: tl.constexpr):
        offs = tl.arange(0, H)
        h = tl.zeros([H], dtype=tl.float32)
        for s in range(S):
            x = tl.load(x_ptr + s * H + offs)
            h = (x + h).to(y_ptr.dtype.element_ty)
            tl.store(y_ptr + s * H + offs, h)


    def scan(x):
        y = torch.empty_like(x)
        S, H = x.shape
        _scan_kernel[(1,)](x, y, S, H=triton.next_power_of_2(H))
        return y
"""


def test_made_up_float_inputs_the_kernel_does_not_take_are_tried_in_the_other_types(tmp_path):
    # cute-kernels' RNN: an fp32 state carried through a loop and re-assigned in the input's type;
    # the made-up bf16 inputs failed to compile and the dump stopped there
    f = write(tmp_path, "scan.py", SCAN)
    out = ok("dump", f"{f}:_scan_kernel", "--store", str(tmp_path / "s"))
    assert "with made-up bf16 inputs the kernel failed to compile" in out and "so fp32 ones" in out, out
    rec = record(tmp_path / "s")
    assert rec["signature"]["x_ptr"] == "*fp32"
    said = assumed_by_name(rec)["scan:x"]
    assert said["spec"] == "*fp32:16x4096" and "the made-up bf16 inputs failed to compile" in said["why"]
    # and where a check of the wrapper's changed the made-up input's shape first, its dtype is still a guess
    checked = write(tmp_path, "scan_checked.py", SCAN.replace("        S, H = x.shape\n",
                                                              "        S, H = x.shape\n        assert x.shape[1] == 96\n"))
    out = ok("dump", f"{checked}:_scan_kernel", "--store", str(tmp_path / "c"))
    assert "shape 16x96 from the wrapper's check" in out and "so fp32 ones" in out, out
    # a type the user gives is not changed: the failure is theirs to see
    r = run("dump", f"{f}:_scan_kernel", "--from", "scan(torch.empty(4, 64, dtype=torch.float16))",
            "--store", str(tmp_path / "t"))
    assert r.exit_code == 2 and "Loop-carried variable h" in r.output and not (tmp_path / "t").exists()


# qwen3-moe-fused's style: the wrapper counts tokens per expert with a helper compiled by
# @torch.compile(fullgraph=True) at import; Dynamo cannot trace the device stand-in
COMPILED_HELPER = """
    import torch
    import triton
    import triton.language as tl


    @torch.compile(fullgraph=True)
    def expert_counts(selected, num_experts: int):
        return (torch.arange(num_experts, device=selected.device)[:, None] == selected[None, :]).sum(
            dim=1, dtype=torch.int32)


    @triton.jit
    def _count_scale_kernel(x_ptr, counts_ptr, y_ptr, N, BLOCK: tl.constexpr):
        e = tl.program_id(0)
        c = tl.load(counts_ptr + e)
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + e * N + offs, mask=offs < N)
        tl.store(y_ptr + e * N + offs, x * c, mask=offs < N)


    def count_scale(x, selected):
        assert x.is_cuda
        counts = expert_counts(selected, x.shape[0])
        y = torch.empty_like(x)
        _count_scale_kernel[(x.shape[0],)](x, counts, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
"""


def test_a_helper_torch_compile_compiled_at_import_runs_as_it_is(tmp_path):
    f = write(tmp_path, "moe.py", COMPILED_HELPER)
    ok("dump", f"{f}:_count_scale_kernel", "--from",
       "count_scale(torch.randn(8, 512, dtype=torch.bfloat16), torch.randint(0, 8, (64,)))", "--store", str(tmp_path / "s"))
    rec = record(tmp_path / "s")
    assert rec["signature"]["counts_ptr"] == "*i32" and rec["signature"]["x_ptr"] == "*bf16"
    assert rec["constexprs"]["BLOCK"] == 512
    import torch
    assert torch.compile.__module__.startswith("torch")       # put back


# xtuner's style: the package picks its GPU implementation by torch.accelerator.is_available(), and
# the op is a torch.library.custom_op whose body makes its output with device="cuda"
CUSTOM_OP = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _scale_rows_kernel(x_ptr, y_ptr, N, scale, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * N + offs, mask=offs < N)
        tl.store(y_ptr + row * N + offs, x * scale, mask=offs < N)


    @torch.library.custom_op("kproj::scale_rows", mutates_args=())
    def scale_rows_gpu(x: torch.Tensor, scale: float) -> torch.Tensor:
        assert x.is_cuda
        y = torch.empty(x.shape, dtype=x.dtype, device="cuda")
        M, N = x.shape
        _scale_rows_kernel[(M,)](x, y, N, scale, BLOCK=triton.next_power_of_2(N))
        return y


    def scale_rows_cpu(x, scale):
        return x * scale


    scale_rows = scale_rows_gpu if torch.accelerator.is_available() else scale_rows_cpu
"""


def test_a_custom_ops_body_makes_its_tensors_on_the_stand_in_device(tmp_path):
    f = write(tmp_path, "ops.py", CUSTOM_OP)
    ok("dump", f"{f}:_scale_rows_kernel", "--from", "scale_rows(torch.randn(8, 300, dtype=torch.float16), 0.5)",
       "--store", tmp_path / "s")
    rec = record(tmp_path / "s")
    assert rec["signature"]["x_ptr"] == "*fp16" and rec["signature"]["y_ptr"] == "*fp16"
    assert rec["constexprs"]["BLOCK"] == 512


# CoLT5's style: a mask parameter the wrapper inverts and converts with .int(), a float scalar
# named for what it is (`current_eps`), which the kernel sets from another float in a branch
MASK_WRAPPER = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _masked_decay_kernel(x_ptr, mask_ptr, N, current_eps, eps_decay, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        m = tl.load(mask_ptr + row * N + offs, mask=offs < N, other=0) == 1
        x = tl.load(x_ptr + row * N + offs, mask=offs < N, other=0.)
        for _ in range(3):
            x = tl.where(m, x / current_eps, x)
            current_eps *= eps_decay
            if current_eps < eps:
                current_eps = eps
        tl.store(x_ptr + row * N + offs, x, mask=offs < N)


    def masked_decay(x, mask, eps=0.1):
        assert x.is_cuda
        x = x.masked_fill(~mask, 0.)
        mask_ints = mask.int()
        M, N = x.shape
        _masked_decay_kernel[(M,)](x, mask_ints, N, 1.0, 0.9, eps, BLOCK=triton.next_power_of_2(N))
        return x
"""


def test_an_inverted_mask_is_a_bool_tensor_and_an_eps_named_scalar_a_float(tmp_path):
    f = write(tmp_path, "decay.py", MASK_WRAPPER)
    out = ok("dump", f"{f}:_masked_decay_kernel", "--store", tmp_path / "a")
    assert record(tmp_path / "a")["signature"]["mask_ptr"] == "*i32"
    assert "masked_decay:mask=*i1" in out
    # the kernel alone: current_eps is a float by its name, as eps is
    g = write(tmp_path / "b", "decay.py", MASK_WRAPPER.split("def masked_decay")[0])
    ok("dump", f"{g}:_masked_decay_kernel", "--store", tmp_path / "b" / "out")
    assert record(tmp_path / "b" / "out")["signature"]["current_eps"] == "fp32"


def test_a_torch_optimizer_steps_on_the_stand_in_device(tmp_path):
    # apex's fused-optimizer test steps torch.optim.Adam first, which asks torch.accelerator for its
    # current stream (is a CUDA graph being captured?)
    f = write(tmp_path, "ops.py", CUSTOM_OP)
    ok("dump", f"{f}:_scale_rows_kernel", "--from",
       "[p := torch.nn.Parameter(torch.randn(8, device='cuda')), setattr(p, 'grad', torch.ones_like(p)), "
       "torch.optim.Adam([p]).step(), scale_rows(torch.randn(8, 300, dtype=torch.float16), 0.5)]",
       "--store", tmp_path / "s")
    assert record(tmp_path / "s")["signature"]["x_ptr"] == "*fp16"
