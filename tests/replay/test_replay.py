"""Replay and capture without a GPU, on this CPU-only machine.

One interpreted capture of a real-style program (kernels in a module and in the script itself: a
helper and a constexpr global, a loop, masks, a misaligned view, an autotuned kernel) serves most
tests: `kinspect capture --interpret -t cuda:90` must store each launched kernel compiled for
cuda:90 with its launches, the specialization the JIT gives the real arguments (checked against
compiling the same kernel directly from its file with the same arguments), and the autotuner's
decision; `kinspect repro` of a variant must run under TRITON_INTERPRET; `kinspect diff VARIANT -p`
must recompile it with the captured signature. The H100 capture in tests/fixtures/capture supplies
real Inductor kernels (source text with Inductor's decorators, no source file here)."""

import json
import os
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest
import torch

from kinspect.core import records
from kinspect.core.model import ArgSpec, SourceRef
from kinspect.replay import args as replay_args
from kinspect.replay.source import of_function, rebuild
from kinspect.replay.spec import ReplaySpec, importable, plan
from kinspect.files.store import read_autotune, read_records
from tests.conftest import FIXTURES
from tests.helpers import run

@pytest.fixture(scope="module")
def captured(interpreted_capture):
    """The program captured under the interpreter (conftest): (store, program folder, capture --json)."""
    return interpreted_capture


def _by_kernel(store):
    out = {}
    for v in read_records(store):
        out.setdefault(v.kernel, []).append(v)
    return out


def test_interpreted_capture_stores_each_launched_kernel_compiled_for_the_target(captured):
    store, _, summary = captured
    found = _by_kernel(store)
    assert sorted(found) == ["add_kernel", "row_sum", "softmax_rows"]
    for v in (v for vs in found.values() for v in vs):
        assert str(v.target) == "cuda:90" and v.offline and v.origin == "capture --interpret"
        assert {"ttir", "ttgir", "llir", "ptx", "cubin", "sass"} <= {s.name for s in v.stages}
        assert Path(v.path, "source.json").is_file()
        assert not v.notes, v.notes             # the compile saw the specialization the interpreted launch had
    [sm] = found["softmax_rows"]
    assert sm.launches.calls == 1 and dict(sm.launches.grids) == {(7, 1, 1): 1}
    top = sm.launches.top()
    assert [a.name for a in top.args] == ["x_ptr", "y_ptr", "n_cols", "stride", "BLOCK"]
    assert top.args[0] == ArgSpec("x_ptr", "tensor", shape=(7, 100), strides=(100, 1), dtype="float32", device="cpu")
    assert top.args[2].value == 100 and top.args[4].value == 128
    # two specializations of row_sum: the misaligned view is not tt.divisibility 16
    rows = sorted(found["row_sum"], key=lambda v: -v.launches.calls)
    assert [v.launches.calls for v in rows] == [2, 1]
    assert rows[0].attributes["x_ptr"] == {"tt.divisibility": 16} and "x_ptr" not in rows[1].attributes
    assert summary["launches"] == 5 and summary["interpret"] == "cuda:90"
    assert (store / ".kinspect-interpret").exists() is False


def test_the_captured_specialization_is_the_one_the_jit_gives_the_real_arguments(captured, tmp_path):
    """Compiled straight from the kernel's file with the program's arguments, the same variant."""
    from kinspect import api

    store, root, _ = captured
    [sm] = _by_kernel(store)["softmax_rows"]
    x = torch.randn(7, 100)
    direct = api.dump(f"{root / 'kernels_mod.py'}:softmax_rows", target="cuda:90", constexprs={"BLOCK": 128},
                      args={"x_ptr": x, "y_ptr": torch.empty_like(x), "n_cols": 100, "stride": 100},
                      out_dir=tmp_path).variant
    assert direct.hash == sm.hash and direct.attributes == sm.attributes


def test_the_autotuners_decision_is_recorded_and_every_config_compiled(captured):
    store, _, summary = captured
    [d] = read_autotune(store)
    assert d.kernel == "add_kernel" and d.key_names == ("n",) and d.key[0] == 777
    assert d.how == "interpreter" and d.best.kwargs == {"BLOCK": 64}
    assert [t.config.kwargs["BLOCK"] for t in d.timings] == [64, 128] and all(not t.ms for t in d.timings)
    variants = _by_kernel(store)["add_kernel"]
    blocks = {v.constexprs["BLOCK"]: v for v in variants}
    assert sorted(blocks) == [64, 128]
    assert blocks[64].launches.calls == 1 and blocks[128].launches is None   # a trial: compiled, not run
    assert blocks[128].options["num_warps"] == 4
    assert summary["autotune"][0]["best"]["kwargs"] == {"BLOCK": 64}


def test_repro_scripts_run_under_the_interpreter(captured, tmp_path):
    """A kernel of the script itself (its source embedded: importing the script would run the
    program) and a kernel of a module (imported from it)."""
    store, root, _ = captured
    ambiguous = run("repro", "row_sum", "--store", store, "-o", tmp_path / "r1.py")
    assert ambiguous.exit_code == 2 and "matches 2 variants; name one" in ambiguous.output
    busiest = max(_by_kernel(store)["row_sum"], key=lambda v: v.launches.calls)
    r1 = run("repro", busiest.name, "--store", store, "-o", tmp_path / "r1.py", "--interpret")
    assert r1.exit_code == 0, r1.output
    assert "embeds the source captured with it" in r1.output
    r2 = run("repro", "softmax_rows", "--store", store, "-o", tmp_path / "r2.py")
    assert r2.exit_code == 0 and "imports the kernel from" in r2.output, r2.output
    assert "@triton.jit\ndef row_sum" in (tmp_path / "r1.py").read_text()
    both = "import runpy, sys\nfor p in sys.argv[1:]: runpy.run_path(p, run_name='__main__')"
    proc = subprocess.run([sys.executable, "-c", both, str(tmp_path / "r1.py"), str(tmp_path / "r2.py")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "TRITON_INTERPRET": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("ok: ") == 2 and "grid (7, 1, 1)" in proc.stdout


def test_repro_never_writes_into_a_triton_cache_or_a_folder(captured, tmp_path, monkeypatch):
    store, _, _ = captured
    cache = tmp_path / "triton-cache"
    (cache / "abc").mkdir(parents=True)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    inside = run("repro", "softmax_rows", "--store", store, "-o", cache / "abc" / "r.py")
    assert inside.exit_code == 2 and "which kinspect only reads" in inside.output, inside.output
    folder = run("repro", "softmax_rows", "--store", store, "-o", tmp_path)
    assert folder.exit_code == 2 and "is a folder; give a file name such as" in folder.output
    assert list((cache / "abc").iterdir()) == [] and inside.output.count("\n") == 1


def test_diff_of_a_captured_variant_recompiles_it_with_the_captured_signature(captured):
    store, _, _ = captured
    rows = sorted(_by_kernel(store)["row_sum"], key=lambda v: v.launches.calls)
    misaligned = rows[0]
    r = run("diff", misaligned.path, "-p", "BLOCK=32,64", "--store", store, "--json", "--no-bench")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert [v["constexprs"]["BLOCK"] for v in out["variants"]] == [32, 64]
    assert out["variants"][1]["path"] == misaligned.path, "BLOCK=64 is the captured variant itself"
    kept = next(read_records(Path(misaligned.path)))
    assert kept.origin == "capture --interpret" and kept.times == misaligned.times and kept.launches.calls == 1
    for row in out["variants"]:
        again = read_records(Path(row["path"])).__next__()
        assert again.attributes == misaligned.attributes and again.signature == misaligned.signature
    unknown = run("diff", misaligned.path, "-p", "BLOK=32", "--store", store)
    assert unknown.exit_code == 2 and "did you mean 'BLOCK'" in unknown.output


def test_bench_of_a_captured_variant_needs_a_device_and_runs_interpreted(captured):
    store, _, _ = captured
    r = run("bench", "softmax_rows", "--store", store)
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert f"kinspect bench softmax_rows --store {store} --interpret" in r.output  # the hint runs as printed
    assert f"kinspect repro softmax_rows --store {store}" in r.output
    r = run("bench", "softmax_rows", "--store", store, "--interpret", "-p", "BLOCK=256")
    assert r.exit_code == 2 and "-p BLOCK=256 does not apply to a captured variant" in r.output
    r = run("bench", "softmax_rows", "--store", store, "--interpret", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["grid"] == [7, 1, 1]


@pytest.fixture(scope="module")
def inductor(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("h100")
    with tarfile.open(FIXTURES / "capture" / "transformer_h100.tgz") as tar:
        tar.extractall(out, filter="data")
    return out / "tf"


def test_an_inductor_kernel_is_rebuilt_from_its_record_and_recompiled(inductor, tmp_path):
    [v] = read_records(inductor / "triton_per_fused_sum_threshold_backward_view_5")
    from kinspect.replay.spec import from_variant

    spec = from_variant(v)
    assert plan(spec).mode == "text" and "Inductor-generated" in plan(spec).why
    r = run("diff", v.path, "-p", "XBLOCK=8", "--store", tmp_path / "out", "--json", "--no-bench", "--table")
    assert r.exit_code == 0, r.output
    [row] = json.loads(r.stdout)["variants"]
    again = next(read_records(Path(row["path"])))
    assert again.constexprs == {**v.constexprs, "XBLOCK": 8} and again.attributes == v.attributes
    assert again.source.line == v.source.line + 7, "the heuristics decorator is blanked, the def keeps its line"
    r = run("repro", v.path, "-o", tmp_path / "r.py", "--interpret")
    assert r.exit_code == 0, r.output
    text = (tmp_path / "r.py").read_text()
    assert "@triton_heuristics." not in text
    assert "import torch._inductor.runtime.triton_helpers as triton_helpers" in text
    proc = subprocess.run([sys.executable, str(tmp_path / "r.py")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ok: triton_per_fused_sum_threshold_backward_view_5 ran once on cpu, grid (8, 1, 1)" in proc.stdout


# -- pieces, no compile ------------------------------------------------------------------------------------

def test_new_tensor_has_the_captured_layout_alignment_and_values():
    t = replay_args.new_tensor((4, 3), (1, 4), "float32", "cpu")
    assert t.shape == (4, 3) and t.stride() == (1, 4) and t.data_ptr() % 16 == 0 and t.std() > 0
    m = replay_args.new_tensor((5,), (1,), "float16", "cpu", aligned=False)
    assert m.data_ptr() % 16 != 0 and m.dtype == torch.float16
    i = replay_args.new_tensor((2, 8), (0, 1), "int64", "cpu")          # a broadcast dimension
    assert i.stride() == (0, 1) and int(i.abs().sum()) == 0
    f8 = replay_args.new_tensor((16,), (1,), "float8_e4m3fn", "cpu")
    assert f8.dtype == torch.float8_e4m3fn


def test_values_split_constexprs_and_check_overrides():
    args = (ArgSpec("x", "tensor", shape=(8,), strides=(1,), dtype="int32"), ArgSpec("n", "int", value=8),
            ArgSpec("B", "int", value=16))
    vals = replay_args.values(args, {"x": "*i32", "n": "i32", "B": "constexpr"}, {}, "cpu", overrides={"B": 32})
    assert set(vals.args) == {"x", "n"} and vals.constexprs == {"B": 32}
    assert vals.integer_tensors == ("x",) and vals.tensor_bytes == 32
    assert vals.args["x"].data_ptr() % 16 != 0, "no tt.divisibility recorded: misaligned, as captured"
    from kinspect.core.errors import UsageError

    with pytest.raises(UsageError, match="tensor argument"):
        replay_args.values(args, {}, {}, "cpu", overrides={"x": 1})
    with pytest.raises(UsageError, match="no parameter C"):
        replay_args.values(args, {}, {}, "cpu", overrides={"C": 1})


def _factory():
    import triton
    import triton.language as tl

    WIDTH = tl.constexpr(8)

    @triton.jit
    def inner(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK) * WIDTH
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    return inner


def test_a_kernels_source_and_namespace_are_captured_and_rebuilt():
    """A kernel defined inside a function: its closure variable is captured like a global; the
    rebuilt kernel compiles to the same code."""
    from kinspect.compile.variant import compile_variant
    from kinspect.compile.targets import resolve

    k = _factory()
    ks = of_function(k)
    assert dict(ks.constants) == {"WIDTH": {"constexpr": 8}} and ("tl", "triton.language") in ks.imports
    again = rebuild(records.from_json(type(ks), json.loads(json.dumps(ks.to_json()))))
    assert again is not k and again.fn.__code__.co_firstlineno == k.fn.__code__.co_firstlineno
    import tempfile

    out = tempfile.mkdtemp()
    x = torch.empty(64)
    a, b = (compile_variant(fn, args={"x_ptr": x, "n": 64}, constexprs={"BLOCK": 8}, grid=(1,),
                            resolved=resolve("cuda:90"), out_dir=out, group=name)
            for fn, name in ((k, "orig"), (again, "again")))
    assert Path(a.path, "inner.ptx").read_text() == Path(b.path, "inner.ptx").read_text()


def test_a_script_is_not_imported_to_replay_its_kernel(tmp_path):
    f = tmp_path / "s.py"
    body = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n"
    f.write_text(body + "\nif __name__ == '__main__':\n    k[(1,)](1)\n")
    ref = SourceRef(str(f), 3, "@triton.jit\ndef k(x):\n    pass\n")
    assert importable(ref) == (True, "")
    f.write_text(body + "\nk[(1,)](1)\n")
    assert importable(ref) == (False, f"{f} is a script (line 7 runs code when imported)")
    f.write_text(body.replace("pass", "return"))
    assert importable(ref)[1] == f"{f} changed since the capture"
    spec = ReplaySpec(kernel="k", target="cuda:90", args=(), grid=(1, 1, 1), signature={}, attributes={}, ref=ref)
    assert plan(spec).mode == "text"


def test_replaying_a_variant_without_launches_is_one_clear_error(real_variant):
    v = real_variant("add", "cuda:90")
    r = run("repro", v.path, "-o", "/tmp/never-written.py")
    assert r.exit_code == 2 and "no launch records" in r.output and r.output.count("\n") == 1
    assert not Path("/tmp/never-written.py").exists()


def test_capture_interpret_refuses_to_time(tmp_path):
    r = run("capture", "--interpret", "--time", "--store", tmp_path / "o", "--", sys.executable, "-c", "pass")
    assert r.exit_code == 2 and "--interpret runs the kernels on the CPU" in r.output
    r = run("capture", "-t", "cuda:90", "--store", tmp_path / "o", "--", sys.executable, "-c", "pass")
    assert r.exit_code == 2 and "--interpret" in r.output
    assert not (tmp_path / "o").exists()


def test_autotuning_decisions_on_the_jit_path_record_the_timings(tmp_path):
    """Through Triton's real JIT launch path (tests/dryrun.py: compiled for cuda:90, launched
    without running), with a benchmark that reports fixed times: the decision, its timings per
    config and the chosen one, in the store and in `rec.autotune`."""
    import triton
    import triton.language as tl

    import kinspect
    from tests.dryrun import dry_run

    times = {32: 0.5, 64: 0.2, 128: float("inf")}

    def bench(kernel_call, quantiles):
        kernel_call()
        block = bench.block
        return [times[block], times[block] * 0.9, times[block] * 1.1]

    configs = [triton.Config({"BLOCK": b}, num_warps=4, pre_hook=lambda a, b=b: setattr(bench, "block", b))
               for b in times]

    @triton.autotune(configs=configs, key=["n"], do_bench=bench)
    @triton.jit
    def tuned(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    x = torch.empty(1024)
    with knobs_cache(tmp_path), dry_run(), kinspect.capture(tmp_path / "out") as rec:
        tuned[lambda m: (triton.cdiv(1024, m["BLOCK"]),)](x, 1024)
        tuned[lambda m: (triton.cdiv(1024, m["BLOCK"]),)](x, 1024)      # the same key: decided once
    [d] = rec.autotune
    assert d.how == "benchmarked" and d.best.kwargs == {"BLOCK": 64} and d.bench_s is not None
    timing = {t.config.kwargs["BLOCK"]: t for t in d.timings}
    assert timing[64].ms == pytest.approx((0.2, 0.18, 0.22)) and timing[128].failed and not timing[128].ms
    assert read_autotune(tmp_path / "out") == [d]
    assert not list((tmp_path / "out" / "tuned").glob("autotune-*.json")), "merged into autotune.json"
    from triton.runtime.autotuner import Autotuner

    assert Autotuner.run.__qualname__ == "Autotuner.run", "Triton's method is given back"


def knobs_cache(tmp_path):
    import contextlib

    from triton import knobs

    @contextlib.contextmanager
    def scope():
        with knobs.cache.scope():
            knobs.cache.dir = str(tmp_path / "triton-cache")
            yield

    return scope()


def test_kernel_source_text_blanks_other_decorators_line_for_line():
    from kinspect.replay.source import runnable_text

    text = textwrap.dedent('''\
        @triton.autotune(
            configs=[], key=[])
        @triton.jit(do_not_specialize=["n"])
        def k(n):
            pass
        ''')
    out = runnable_text(text)
    assert out.splitlines() == ["", "", '@triton.jit(do_not_specialize=["n"])', "def k(n):", "    pass"]


API_PROGRAM = """\
import sys
import torch
import triton
import triton.language as tl
import kinspect


@triton.jit
def bump(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


x = torch.zeros(100)
with kinspect.capture(sys.argv[1], target="cuda:80") as rec:
    bump[(1,)](x, 100, BLOCK=128)
    bump[(1,)](x, 100, BLOCK=128)
assert (x == 2).all(), "the interpreter ran both launches"
print([(v.kernel, str(v.target), v.launches.calls) for v in rec.variants], rec.errors)
"""


def test_capture_from_python_under_the_interpreter(tmp_path):
    """kinspect.capture() in a program run with TRITON_INTERPRET=1 compiles what it launched when
    the block ends (in a worker: this process's Triton is the interpreter's)."""
    script = tmp_path / "p.py"
    script.write_text(API_PROGRAM)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "TRITON_INTERPRET": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "[('bump', 'cuda:80', 2)] []" in proc.stdout
    [v] = read_records(tmp_path / "out")
    assert v.stage("sass") is not None and v.launches.calls == 2


def test_the_bench_launch_of_a_captured_inductor_kernel_goes_through_the_jit(inductor, tmp_path):
    """What `kinspect bench VARIANT` launches on a GPU, launched through Triton's JIT here (the
    dry-run driver compiles for cuda:90 and launches without running): the captured options are
    options the JIT takes, the grid is the captured one, and it compiles to the captured variant's
    specialization."""
    from kinspect.compile.driver import fresh_binders
    from kinspect.bench.captured import prepare
    from tests.dryrun import dry_run

    [v] = read_records(inductor / "triton_red_fused_sum_8")
    with knobs_cache(tmp_path), dry_run() as d:
        launch = prepare(v.path, device="cpu", num_warps=None, num_stages=None)
        with fresh_binders(launch.fn):
            kernel = launch()
    assert launch.options["debug"] == v.options["debug"] and launch.options["num_warps"] == v.options["num_warps"]
    from kinspect.analysis.sol import variant_speed

    assert launch.bytes_moved == sum(4 * _numel(a) for a in v.launches.top().args if a.kind == "tensor")
    assert "as the program view estimates them" in launch.estimate and "index expressions" in launch.estimate
    if v.launches.gpu is not None:
        assert launch.bytes_moved == variant_speed(v, None).bytes_per_call, "bench and the program view agree"
    assert [x.grid for x in d.launched] == [v.launches.top().grid]
    signature, _, attributes = _specialization(kernel)
    assert attributes == v.attributes and signature == v.signature


def _numel(a):
    n = 1
    for x in a.shape:
        n *= x
    return n


def _specialization(kernel):
    from kinspect.hooks.record import specialization

    return specialization(kernel.src)


def test_variants_told_apart_only_by_the_jits_specialization_are_named_by_it(captured):
    """row_sum ran on an aligned and on a misaligned view: same constexprs and options, two variants."""
    store, _, _ = captured
    listing = run("ls", store)
    assert listing.exit_code == 0, listing.output
    # the captured launches were all BLOCK=64 (the diff test adds a BLOCK=32 variant to this store,
    # which nothing else shares a spec with, so it needs no name)
    rows = [line for line in listing.output.splitlines()     # "  3  row_sum  cuda:90  BLOCK=64; ..."
            if line.split()[1:2] == ["row_sum"] and "BLOCK=64;" in line]
    assert sorted("(x_ptr aligned)" in r for r in rows) == [False, True], rows
    assert sum("(x_ptr unaligned)" in r for r in rows) == 1
    paths = [v.path for v in _by_kernel(store)["row_sum"]]
    both = run("diff", *paths)
    assert both.exit_code == 0, both.output
    assert "x_ptr aligned" in both.output and "x_ptr unaligned" in both.output


def test_launches_differing_only_in_a_constexpr_are_two_variants(tmp_path):
    """One kernel launched with BLOCK=32 and with BLOCK=128 (same types, alignment and options), and
    an autotuned kernel whose configs differ in BLOCK only: each value is its own variant."""
    (tmp_path / "prog.py").write_text(textwrap.dedent('''\
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


        @triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (64, 128, 256)], key=["n"])
        @triton.jit
        def tuned(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


        x = torch.randn(500)
        y = torch.empty_like(x)
        for block in (32, 128):
            scale[(triton.cdiv(500, block),)](x, y, 500, BLOCK=block)
        tuned[lambda meta: (triton.cdiv(500, meta["BLOCK"]),)](x, y, 500)
        '''))
    store = tmp_path / "store"
    r = run("capture", "--interpret", "-t", "cuda:90", "--store", store, "--", sys.executable, tmp_path / "prog.py")
    assert r.exit_code == 0, r.output
    found = _by_kernel(store)
    assert sorted(v.constexprs["BLOCK"] for v in found["scale"]) == [32, 128]
    assert sorted(v.constexprs["BLOCK"] for v in found["tuned"]) == [64, 128, 256]




def test_a_static_launch_records_no_constexprs_and_the_replay_takes_them_from_the_record(gpt2):
    """Inductor's static launcher passes runtime arguments only; a launch it made has no XBLOCK, and the
    H200 replays of such variants failed (`dynamic_func() missing 1 required positional argument:
    'XBLOCK'`). The spec puts the record's constexprs back, in the signature's order."""
    from kinspect.replay.spec import from_variant, with_constexprs
    from kinspect.files.store import read_records

    v = next(v for v in read_records(gpt2 / "gpt2") if v.launches and v.launches.signatures
             and "XBLOCK" in v.constexprs)
    full = from_variant(v).args
    runtime = tuple(a for a in full if v.signature.get(a.name) != "constexpr")
    assert len(runtime) < len(full)
    again = with_constexprs(v, runtime)
    assert [a.name for a in again] == [a.name for a in full]
    assert {a.name: a.value for a in again if v.signature.get(a.name) == "constexpr"} == \
        {n: x for n, x in v.constexprs.items() if v.signature.get(n) == "constexpr"}
