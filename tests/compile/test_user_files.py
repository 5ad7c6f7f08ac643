"""Loading kernel files as projects write them (kinspect.compile.loader, .autotune, .user): module-level
code, the target's driver at import, definitions-only loads, names that are not kernels, autotune
configs and heuristics, the missing-arguments command, and bad input as one line."""

import textwrap
from pathlib import Path

import pytest


from tests.helpers import one_error_line, run_raising as run, TESTS

DATA = TESTS / "data"
CORPUS = TESTS / "corpus"


def write(tmp_path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_module_level_code_never_launches_and_never_prints_into_the_output(tmp_path):
    r = run("dump", f"{DATA}/module_level.py:scale_kernel", "--store", tmp_path)
    assert r.exit_code == 0, r.output
    # the launch is recorded and returns without running; the import goes on
    assert "loaded   imported" in r.output and "launched 'scale_kernel' (line 29), recorded, not run" in r.output
    assert "module-level print" not in r.output
    assert "spec     SCALE=2.0, BLOCK=256" in r.output        # kinspect_examples come before the file's launch
    assert "launch   " not in r.output


def test_a_script_that_parses_its_arguments_at_import_is_loaded_by_definitions(tmp_path):
    r = run("dump", f"{DATA}/guarded_script.py:fill_kernel", "--arg", "out_ptr=*fp32", "--arg", "value=fp32",
            "--arg", "n=i32", "-p", "BLOCK=128", "--store", tmp_path)
    assert r.exit_code == 0, r.output
    assert "its module-level code calls sys.exit(2) (line 8)" in r.output
    assert "required" not in r.output                        # argparse's own complaint stays out


def test_import_sees_the_targets_driver_and_a_usable_device(tmp_path):
    f = write(tmp_path, "arch.py", """
        import torch
        import triton
        import triton.language as tl

        TARGET = triton.runtime.driver.active.get_current_target()
        DEVICE = triton.runtime.driver.active.get_active_torch_device()
        WEIGHTS = torch.ones(8, device=DEVICE)      # allocates: the device works here

        @triton.jit
        def k(x_ptr, ARCH: tl.constexpr, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), tl.full((BLOCK,), 1.0, tl.float32))

        kinspect_examples = {"k": {"args": {"x_ptr": "*fp32"},
                                   "constexprs": {"ARCH": str(TARGET.arch), "BLOCK": int(WEIGHTS.numel())}}}
        if __name__ == "__main__":
            raise SystemExit("kinspect must not run the file as a script")
    """)
    from kinspect import api

    for target, arch in (("hip:gfx942", "gfx942"), ("cuda:80", "80")):   # imported again for each target
        result = api.dump(f"{f}:k", target=target, out_dir=tmp_path / "out")
        assert result.variant.constexprs["ARCH"] == arch
        assert result.variant.user.loaded.startswith("imported ")


def test_definitions_only_keeps_definitions_and_skips_module_level_code(tmp_path):
    from kinspect.compile import loader
    from kinspect.compile.driver import compile_only
    from kinspect.compile.targets import resolve

    f = write(tmp_path, "defs.py", """
        import itertools
        import torch
        import triton
        import triton.language as tl
        try:
            import not_a_module_anywhere
        except ImportError:
            not_a_module_anywhere = None

        SCALE = tl.constexpr(2.0)
        TILES = [triton.Config({"BLOCK": b}, num_warps=w) for b, w in itertools.product((64, 128), (4, 8))]
        X = torch.ones(4)

        def generated():
            return [triton.Config({"BLOCK": 32})]

        MORE = generated()

        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            pass

        def launch():
            k[(1,)](X, BLOCK=16)

        OUT = launch()
        Y = X + 1
        print("x")
        raise RuntimeError("stop the import here")
    """)
    resolved = resolve("cuda:90")
    got = loader.load(str(f), driver_context=compile_only(resolved.target), target_key="t", offline=True)
    m = got.module
    assert not got.imported and "importing it failed at line 30: RuntimeError: stop the import here" in got.how
    assert "before that, it launched 'k' (line 25 via line 27), recorded, not run" in got.how
    (launch,) = got.launches
    assert launch.kernel == "k" and launch.constexprs == {"BLOCK": 16} and launch.grid == (1,)
    assert launch.args["x_ptr"].shape == (4,) and launch.where == "module-level code"
    assert len(m.TILES) == 4 and len(m.MORE) == 1 and m.SCALE == 2.0 and m.not_a_module_anywhere is None
    for skipped in ("X", "OUT", "Y"):
        assert not hasattr(m, skipped), skipped
    assert got.skipped == 5 and not got.failed   # X, OUT (a launcher's call), Y, print, raise


def test_a_package_module_with_relative_imports_loads_definitions_too(tmp_path):
    """The package's __init__ (one that does more than gather names, so it runs: kinspect.compile.light)
    fails at import: its module still loads, relative imports resolved."""
    pkg = tmp_path / "ops"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import torch\nimport not_a_module_kinspect_knows\nnot_a_module_kinspect_knows.setup()\n")
    (pkg / "helpers.py").write_text("import triton\nimport triton.language as tl\n\n@triton.jit\ndef twice(x):\n"
                                    "    return x * 2\n")
    (pkg / "kern.py").write_text(textwrap.dedent("""
        import triton
        import triton.language as tl
        from .helpers import twice

        @triton.jit
        def twice_kernel(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, twice(tl.load(x_ptr + offs)))
    """))
    r = run("dump", f"{pkg / 'kern.py'}:twice_kernel", "--arg", "x_ptr=*fp32", "-p", "BLOCK=64", "--store",
            tmp_path / "out", "-t", "cuda:80")
    assert r.exit_code == 0, r.output
    assert "definitions only from" in r.output, r.output
    assert "importing it failed at ops/__init__.py:2: ModuleNotFoundError: No module named " \
        "'not_a_module_kinspect_knows'" in r.output.replace(str(tmp_path) + "/", "")


def test_names_that_are_not_kernels_point_to_the_kernel(tmp_path):
    one_error_line(run("dump", f"{DATA}/module_level.py:_plain_copy", "--store", tmp_path),
                   "is the Python function under the kernel 'copy_kernel'", "module_level.py:copy_kernel")
    one_error_line(run("dump", f"{CORPUS}/autotuned_matmul.py:matmul", "--store", tmp_path),
                   "a Python function that launches 'matmul_kernel'", "autotuned_matmul.py:matmul_kernel")
    one_error_line(run("dump", f"{CORPUS}/autotuned_matmul.py:M", "--store", tmp_path),
                   "a value of type int", "kernels here: matmul_kernel")
    assert not tmp_path.joinpath("kinspect-out").exists() and not list(tmp_path.iterdir())


def test_a_file_whose_import_and_definitions_both_fail_is_one_line(tmp_path):
    out = tmp_path / "out"
    one_error_line(run("dump", f"{DATA}/broken_definition.py:copy_kernel", "--store", out),
                   "importing it failed at line 6", "'copy_kernel' itself failed at line 11: NameError: "
                   "name 'CONFIGS' is not defined")
    bad = write(tmp_path, "bad.py", "import triton\ndef oops(:\n")
    one_error_line(run("dump", f"{bad}:oops", "--store", out), "has a syntax error at line 2")
    assert not out.exists()


def test_config_numbers_are_checked(tmp_path):
    out = tmp_path / "out"
    one_error_line(run("dump", f"{CORPUS}/autotuned_matmul.py:matmul_kernel", "--config", "5", "--store", out),
                   "--config 5 is out of range", "has 5 autotune configs (0..4)")
    one_error_line(run("diff", f"{CORPUS}/autotuned_matmul.py:matmul_kernel", "--config", "1,7", "-j", "1",
                       "--store", out), "--config 7 is out of range")
    one_error_line(run("dump", f"{CORPUS}/string_constexpr.py:activation_kernel", "--config", "0", "--store", out),
                   "is not autotuned")
    one_error_line(run("dump", "add", "--config", "0", "--store", out), "is a shipped kernel")
    assert not out.exists()


def test_a_pruned_config_compiles_when_asked_and_p_overrides_with_a_note(tmp_path):
    r = run("dump", f"{CORPUS}/autotuned_matmul.py:matmul_kernel", "--config", "4", "-p", "GROUP_M=4",
            "-p", "EVEN_K=False", "-t", "cuda:80", "--store", tmp_path)
    assert r.exit_code == 0, r.output
    assert "autotuned: config 4 of 5  BLOCK_M=64 BLOCK_N=64 BLOCK_K=128 GROUP_M=8" in r.output
    assert "prune_configs_by drops config 4 for these arguments; compiled as asked" in r.output
    assert "-p GROUP_M overrides what the config sets" in r.output
    assert "-p EVEN_K overrides its @triton.heuristics value" in r.output
    assert "GROUP_M=4" in r.output and "EVEN_K=False" in r.output


def test_tensor_descriptor_and_shaped_pointer_arguments():
    from kinspect.compile.args import DescriptorSpec, parse_arg_type, spec_of
    from kinspect.core.errors import UsageError

    d = parse_arg_type("a", "tensordesc<fp16[64, 32]>:256x128")
    assert type(d).__name__ == "TensorDescriptor" and list(d.block_shape) == [64, 32] and list(d.shape) == [256, 128]
    assert spec_of(d) == "tensordesc<fp16[64,32]>:256x128"
    later = parse_arg_type("a", "tensordesc<bf16[BLOCK_M,64]>")
    assert isinstance(later, DescriptorSpec)
    assert list(later.make({"BLOCK_M": 128}, "a").block_shape) == [128, 64]
    assert tuple(parse_arg_type("x", "*fp8e4nv:16x32").shape) == (16, 32)
    for spec, needle in (("tensordesc<fp17[64]>", "unknown element type"), ("*fp32:12xa", "is not a shape"),
                         ("tensordesc<fp16[64,64]>:8", "1 dimensions, the block")):
        with pytest.raises(UsageError, match=needle):
            got = parse_arg_type("a", spec)
            got.make({}, "a") if isinstance(got, DescriptorSpec) else None


def test_what_names_a_user_kernel():
    from kinspect.compile.loader import is_user_kernel

    assert is_user_kernel("x.py:k") and is_user_kernel("pkg.mod:k")
    assert not is_user_kernel("hip:gfx942") and not is_user_kernel("fused_mm_softmax")
    assert not is_user_kernel("cuda:90") and not is_user_kernel("x.py:")


def test_configs_and_heuristics_are_what_tritons_own_run_passes():
    """Against Triton's own code: its Autotuner.run, made to take config i without benchmarking,
    and its Heuristics.run pass the JITFunction exactly the constexprs and options kinspect compiles."""
    from kinspect.bench.runtime import as_launched
    from kinspect.compile.autotune import chain
    from kinspect.compile.targets import resolve
    from kinspect.compile.user import load

    class Picks(dict):       # an autotune cache that holds config i for every key
        def __init__(self, config):
            super().__init__()
            self.config = config

        def __contains__(self, key):
            return True

        def __getitem__(self, key):
            return self.config

    class Recorder:
        def run(self, *args, **kwargs):
            self.kwargs = kwargs

    for i in (0, 2, 3):
        uk = load(f"{CORPUS}/autotuned_matmul.py:matmul_kernel", {}, {}, config=i, resolved=resolve("cuda:90"))
        c = chain(uk.wrapper, uk.name)
        tuner, heuristics = c.wrappers
        saved_cache, saved_fn, recorder = tuner.cache, heuristics.fn, Recorder()
        tuner.cache, heuristics.fn = Picks(tuner.configs[i]), recorder
        try:
            positional, keywords = as_launched(c.jit, uk.args)   # as autotuner_pick launches it on a GPU
            assert len(positional) == 12 and not keywords
            tuner.run(*positional, grid=(1,), warmup=True, **uk.given)
        finally:
            tuner.cache, heuristics.fn = saved_cache, saved_fn
        passed = {k: v for k, v in recorder.kwargs.items() if k not in ("grid", "warmup")}
        assert passed == {**uk.constexprs, **uk.options}, i


def test_heuristics_alone_are_computed_from_the_example_arguments(tmp_path):
    f = write(tmp_path, "heur.py", """
        import triton
        import triton.language as tl

        @triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"]),
                            "WIDE": lambda args: args["BLOCK"] >= 1024})
        @triton.jit
        def row_kernel(x_ptr, n, BLOCK: tl.constexpr, WIDE: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
    """)
    r = run("dump", f"{f}:row_kernel", "--arg", "x_ptr=*fp32", "--arg", "n=i32:1000", "--store", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert "heuristics BLOCK=1024, WIDE=True" in r.output and "autotuned" not in r.output


def test_vec_report_compiles_the_config_asked_for(tmp_path):
    r = run("vec-report", f"{CORPUS}/autotuned_matmul.py:matmul_kernel", "--config", "2", "-t", "cuda:80",
            "--store", tmp_path)
    assert r.exit_code == 0, r.output
    assert "autotuned: config 2 of 5  BLOCK_M=64 BLOCK_N=128 BLOCK_K=64" in r.output
    assert "HMMA" in r.output       # the config's tile runs on the tensor cores


def test_an_autotuned_kernel_runs_under_the_interpreter_with_its_grid_function():
    """bench --interpret: under TRITON_INTERPRET the wrappers hold the interpreter's stand-in for the
    JITFunction; config 0 and the heuristics still apply, and the file's grid function sizes the launch."""
    r = run("bench", f"{CORPUS}/autotuned_matmul.py:matmul_kernel", "--interpret")
    assert r.exit_code == 0, r.output
    assert "grid (256,)" in r.output     # 1024/64 x 1024/64 programs for config 0
