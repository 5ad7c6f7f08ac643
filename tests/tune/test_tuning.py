"""Launches an autotuner makes while benchmarking configs are counted apart from the program's.

On this CPU-only machine the launches go through tests/dryrun.py's driver (Triton's own JIT path and
launch hooks; nothing runs) and triton.autotune is given a `do_bench` that calls the config's launch
a fixed number of times, as Triton's own does many times on a GPU. Inductor's benchmark methods are
checked to be wrapped, whether Inductor's runtime was imported before the capture began or after.
The GPU side (a torch.compile'd model tuning its pointwise kernels) is tests/gpu/test_capture_live.py.
"""

import json
import os
import subprocess
import sys
import textwrap


from kinspect.hooks import tuning
from kinspect.hooks.launch_counts import TUNING, LaunchRecorder
from kinspect.hooks.timers import attribute
from kinspect.files.launches import merge
from kinspect.core.model import Launches
from kinspect.files.store import read_records
from tests.helpers import ROOT, run

BENCH_RUNS = 4

PROGRAM = f"""
import sys, torch, triton, triton.language as tl
sys.path.insert(0, {str(ROOT)!r})
from tests.dryrun import dry_run
from tests.jit_kernels import _double

timings = []


def do_bench(kernel_call, quantiles=None):
    # what Triton's do_bench does on a GPU, without a GPU: launch the config, here {BENCH_RUNS} times
    for _ in range({BENCH_RUNS}):
        kernel_call()
    timings.append(float(len(timings) + 1))      # the first config benchmarked is the fastest
    return [timings[-1]] * 3


@triton.autotune(configs=[triton.Config({{"BLOCK": 128}}), triton.Config({{"BLOCK": 256}})], key=["n"],
                 do_bench=do_bench)
@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)


x, y = torch.empty(4096), torch.empty(4096)
with dry_run():
    for _ in range(3):
        scale[lambda meta: (triton.cdiv(4096, meta["BLOCK"]),)](x, y, 4096)
    _double[(8,)](x, y, 4096, BLOCK=512)
    _double[(8,)](x, y, 4096, BLOCK=512)
"""


def test_an_autotuners_benchmark_launches_are_counted_apart(tmp_path):
    script = tmp_path / "tuned.py"
    script.write_text(PROGRAM)
    store = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(store), "--json", "--",
                           sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    found = {(v.kernel, v.constexprs["BLOCK"]): v for v in read_records(store)}
    won, lost = found["scale", 128], found["scale", 256]
    # the program's own launches: three calls of the winner; each config was launched BENCH_RUNS times
    # while the autotuner benchmarked it, and those are not the program's
    assert won.launches.calls == 3 and won.launches.tuning_calls == BENCH_RUNS and won.ran
    assert lost.launches.calls == 0 and lost.launches.tuning_calls == BENCH_RUNS and not lost.ran
    assert not lost.launches.signatures and not lost.launches.grids
    assert found["_double", 512].launches.calls == 2 and found["_double", 512].launches.tuning_calls == 0
    summary = proc.stderr
    assert "5 launch(es) in 1 process(es)" in summary        # 3 + 2: the autotuner's 8 are counted apart
    assert f"tuning: {2 * BENCH_RUNS} launch(es) while autotuners benchmarked configs: not in calls" in summary
    header = next(ln for ln in summary.splitlines() if ln.strip().startswith("kernel"))
    assert header.split()[-1] == "tuning"
    d = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sorted(v["tuning_calls"] for v in d["variants"]) == [0, BENCH_RUNS, BENCH_RUNS]
    # the program view: calls are the program's, and the tuning launches are named under the table
    r = run("vec-report", store)
    assert r.exit_code == 0, r.output
    assert f"not counted above: {2 * BENCH_RUNS} launches by autotuners benchmarking configs" in r.output
    j = json.loads(run("vec-report", store, "--json").stdout)
    rows = {k["kernel"]: k for k in j["kernels"]}
    assert rows["scale"]["calls"] == 3 and rows["scale"]["tuning_calls"] == 2 * BENCH_RUNS
    # a config only the autotuner ran cannot be replayed, and the error says why
    bad = run("repro", lost.path, "-o", tmp_path / "r.py")
    assert bad.exit_code == 2 and "only launched by an autotuner benchmarking its configs" in bad.output
    assert not (tmp_path / "r.py").exists()


def test_tuning_launches_are_timed_apart_and_keep_the_profilers_order():
    rec = LaunchRecorder()
    rec.count_tuning("h1", "k", {"n": 1})
    rec.count("h1", "k", (1,), {"n": 1})
    rec.add_time((TUNING, "h1"), 2.0)
    rec.add_time("h1", 0.5)
    la = rec.launches(rec.tallies["h1"], pid=1, rk=None, host="h")
    assert (la.calls, la.tuning_calls, la.tuning_ms) == (1, 1, 2.0) and la.gpu.total_ms == 0.5
    # the profiler's records of one name are matched by launch order, tuning launches included
    order = {"k": [(TUNING, "h1"), (TUNING, "h2"), "h1"]}
    got = attribute(order, {"k": [(1, 2_000_000), (2, 3_000_000), (3, 500_000)]})
    assert got == [((TUNING, "h1"), 2.0), ((TUNING, "h2"), 3.0), ("h1", 0.5)]
    both = merge([la, Launches(calls=2, tuning_calls=5, tuning_ms=1.0)])
    assert (both.calls, both.tuning_calls, both.tuning_ms) == (3, 6, 3.0)


def test_a_module_imported_after_the_capture_began_is_wrapped_and_restored(tmp_path, monkeypatch):
    (tmp_path / "late_tuner.py").write_text(textwrap.dedent("""\
        class Tuner:
            def bench(self, fn):
                return fn()

        class Fast(Tuner):
            def bench(self, fn):
                return super().bench(fn)
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    scopes = tuning.TuningScopes([("late_tuner", "*", "bench")])
    scopes.install()
    try:
        import late_tuner

        assert late_tuner.Fast().bench(tuning.active) is True
        assert not tuning.active()
        theirs = late_tuner.Tuner.bench
        late_tuner.Fast.bench = lambda self, fn: "theirs"          # replaced by the program meanwhile
    finally:
        scopes.restore()
        sys.modules.pop("late_tuner", None)
    assert not hasattr(late_tuner.Tuner.bench, "kinspect_tuning")
    assert theirs.kinspect_tuning is late_tuner.Tuner.bench
    assert late_tuner.Fast.bench(None, None) == "theirs", "what the program set since is left as it is"
    assert not any(isinstance(f, tuning._AfterImport) for f in sys.meta_path)


def test_inductors_benchmarks_are_wrapped_however_late_it_is_imported():
    """Triton's and Inductor's benchmark methods, for Inductor imported after the capture began (as
    torch.compile imports it at its first compile) and before it."""
    code = textwrap.dedent("""\
        import sys
        from kinspect.hooks.tuning import TuningScopes, TARGETS
        import triton.runtime.autotuner as at
        before = "torch._inductor.runtime.triton_heuristics" in sys.modules
        scopes = TuningScopes()
        scopes.install()
        import torch._inductor.runtime.triton_heuristics as th
        import torch._inductor.runtime.benchmarking as bm
        wrapped = [hasattr(at.Autotuner._bench, "kinspect_tuning"), hasattr(th.CachingAutotuner.bench, "kinspect_tuning"),
                   any(hasattr(vars(c).get("benchmark_gpu"), "kinspect_tuning") for c in vars(bm).values()
                       if isinstance(c, type))]
        scopes.restore()
        after = [hasattr(at.Autotuner._bench, "kinspect_tuning"), hasattr(th.CachingAutotuner.bench, "kinspect_tuning")]
        print(before, wrapped, after)
        """)
    for first in ("", "import torch._inductor.runtime.triton_heuristics\n"):
        proc = subprocess.run([sys.executable, "-c", first + code], capture_output=True, text=True, timeout=300,
                              cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-3000:]
        before = bool(first)
        assert proc.stdout.split("\n")[-2] == f"{before} [True, True, True] [False, False]", proc.stdout


def test_a_lookup_before_the_import_does_not_use_the_watch_up(tmp_path):
    """torch looks modules up (importlib.util.find_spec) long before it imports them; the module is
    wrapped when it is imported all the same. In a plain process: pytest's own import hook masks it."""
    (tmp_path / "looked_up.py").write_text("class Tuner:\n    def bench(self, fn):\n        return fn()\n")
    code = textwrap.dedent("""\
        import importlib.util, sys
        from kinspect.hooks.tuning import TuningScopes
        scopes = TuningScopes([("looked_up", "*", "bench")])
        scopes.install()
        assert importlib.util.find_spec("looked_up") is not None
        import looked_up
        print(hasattr(looked_up.Tuner.bench, "kinspect_tuning"))
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "True"


def test_two_watchers_of_one_late_module_both_wrap_it(tmp_path, monkeypatch):
    """Capture watches Inductor's triton_heuristics twice (the autotuners' benchmarks, and
    CachingAutotuner.run for the static launcher's launches); a program that imports torch after the
    capture began must get both. The first watcher asked PathFinder itself, so the second never saw
    the import and the H200 capture of GPT-2 counted 6 of its launches."""
    (tmp_path / "late_heuristics.py").write_text(textwrap.dedent("""\
        class Autotuner:
            def bench(self, fn):
                return fn()

            def run(self):
                return "ran"
        """))
    monkeypatch.syspath_prepend(str(tmp_path))

    def marked(original):
        def run(self):
            return "counted " + original(self)
        run.kinspect_tuning = original
        return run

    benches = tuning.TuningScopes([("late_heuristics", "Autotuner", "bench")])
    runs = tuning.TuningScopes([("late_heuristics", "Autotuner", "run")], wrap=marked)
    benches.install()
    runs.install()
    try:
        import late_heuristics

        assert late_heuristics.Autotuner().bench(tuning.active) is True
        assert late_heuristics.Autotuner().run() == "counted ran"
    finally:
        runs.restore()
        benches.restore()
        sys.modules.pop("late_heuristics", None)
    assert late_heuristics.Autotuner().run() == "ran"
