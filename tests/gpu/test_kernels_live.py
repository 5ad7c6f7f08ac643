"""The shipped kernels at real sizes on a GPU, against torch (opt-in: `python -m pytest -m gpu tests/gpu`).

Speed is benchmarks/kernels_gpu.py's business; these check results, in every dtype (the CPU
interpreter cannot check bfloat16 matrix products), with the autotuned launchers the benchmark times.

Each case runs once, in a pool of worker processes side by side (`ran`): Triton compiles one kernel at
a time in a process and an autotuned case compiles and times every config, so one after another in
this process the file took 141 s on the H200; compiled ahead in other processes and then run again
here, still 137 s. Each test reports its own case's outcome: its assertion's traceback, what it
printed, how long it took. Only the cases of the tests pytest selected run. kinspect bench against
Nsight Compute (benchmarks/bench_vs_ncu.py) is one of the cases: it checks the method, not the ratio, so
it may share the GPU, and it is the longest, so it starts first.
"""

import contextlib
import inspect
import io
import json
import multiprocessing
import os
import tempfile
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, wait
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from kinspect.bench.check import compare
from kinspect.cli import main
from kinspect.kernels import elementwise, fused_mm_softmax_tiled, matmul, softmax

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16


def ok(out, ref, precision):
    c = compare(out.float(), ref.float(), precision=precision)
    assert c.ok, c.describe()


def name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


SOFTMAX_SHAPES = [(8192, 8192), (32768, 1024), (1048576, 2), (64, 262144), (4097, 1000), (3, 1), (1000, 3)]
# each strategy (one row or several per program, looped rows, masked odd widths) in float32 and
# bfloat16; float16 takes bfloat16's strategies (same item size), so two shapes check it
SOFTMAX = [(shape, dtype) for dtype in (F32, BF16) for shape in SOFTMAX_SHAPES] + [(SOFTMAX_SHAPES[0], F16),
                                                                                   (SOFTMAX_SHAPES[3], F16)]
# the autotuned paths: whole rows, narrowest to widest (each width compiles its own configs), and the two
# passes past WHOLE_ROW_MAX (2048 would compile the same configs as 4096)
SQUARE = [(n, dtype) for dtype in (F32, BF16) for n in (64, 256, 512, 1024, 4096)]
ODD = [(1000, 777, 333), (64, 4096, 64), (4096, 64, 100), (1, 1, 1), (129, 257, 17)]
# every odd shape along both dims in tf32 and bfloat16; float16 (the same code as bfloat16 but for the
# conversions) on two of them, one per dim: each case is a compile of its own
ODD_CASES = [(mnk, dim, dtype) for dtype in (F32, BF16) for dim in (-1, 0) for mnk in ODD] + [(ODD[0], -1, F16),
                                                                                             (ODD[4], 0, F16)]
MATMUL = [(mnk, dtype) for mnk in [(4096, 4096, 4096), (1000, 777, 333), (1, 1, 1)] for dtype in (F16, BF16, F32)]
ELEMENTWISE = [F32, BF16, F16]


# --- the cases (run in the workers) ---------------------------------------------------------------------

def softmax_at_real_sizes(shape, dtype):
    x = torch.randn(*shape, device="cuda", dtype=dtype)
    ok(softmax.softmax(x), torch.softmax(x.float(), -1), name(dtype))


def softmax_on_a_strided_view_and_the_one_row_kernel():
    x = torch.randn(3000, 1024, device="cuda")[:, :1000]
    ok(softmax.softmax(x), torch.softmax(x, -1), "float32")
    ok(softmax.softmax_one_row(x), torch.softmax(x, -1), "float32")


def fused_tiled_square_along_rows(n, dtype):
    a = (torch.randn(n, n, device="cuda") * n ** -0.25).to(dtype)
    b = (torch.randn(n, n, device="cuda") * n ** -0.25).to(dtype)
    out = fused_mm_softmax_tiled.fused_mm_softmax_tiled(a, b)
    assert out.dtype == dtype
    ok(out, torch.softmax(a.float() @ b.float(), -1), "tf32" if dtype == F32 else name(dtype))
    print(f"N={n} {name(dtype)}: {fused_mm_softmax_tiled.describe_call(a, b)}")


def fused_tiled_odd_shapes_both_dims(mnk, dim, dtype):
    m, n, k = mnk
    a = (torch.randn(m, k, device="cuda") * k ** -0.25).to(dtype)
    b = (torch.randn(k, n, device="cuda") * k ** -0.25).to(dtype)
    # plan()'s tile, not autotuned: every odd shape is its own specialization, and autotuning each
    # would compile every configuration again (the square test above covers the autotuned launcher)
    out = fused_mm_softmax_tiled.fused_mm_softmax_tiled(a, b, dim, autotune=False)
    ok(out, torch.softmax(a.float() @ b.float(), dim), "tf32" if dtype == F32 else name(dtype))


def fused_tiled_ieee_is_float32_exact():
    a, b = torch.randn(300, 200, device="cuda"), torch.randn(200, 500, device="cuda")
    out = fused_mm_softmax_tiled.fused_mm_softmax_tiled(a, b, input_precision="ieee")
    ok(out, torch.softmax(a.double() @ b.double(), -1), "float32")


def matmul_autotuned(mnk, dtype):
    m, n, k = mnk
    a, b = torch.randn(m, k, device="cuda", dtype=dtype), torch.randn(k, n, device="cuda", dtype=dtype)
    out = matmul.matmul(a, b, autotune=m == 4096)  # odd shapes: the default tile, one compile each
    ok(out, a.float() @ b.float(), "tf32" if dtype == F32 else name(dtype))


def elementwise_at_real_sizes(dtype):
    x = torch.randn(1 << 24, device="cuda", dtype=dtype) * 6
    y = torch.randn(1 << 24, device="cuda", dtype=dtype)
    ok(elementwise.gelu(x), torch.nn.functional.gelu(x.float(), approximate="tanh"), name(dtype))
    ok(elementwise.add(x, y), x.float() + y.float(), name(dtype))
    m = x.view(4096, 4096)
    ok(elementwise.square(m), m.float() * m.float(), name(dtype))


def _bench_json(*argv) -> dict:
    with tempfile.TemporaryDirectory(prefix="kinspect-kernels-live-") as tmp:
        r = CliRunner().invoke(main, ["bench", *argv, "--json", "--no-compile", "--store", str(Path(tmp) / "out")])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def bench_runs_both_passes_of_the_tiled_kernel():
    """kinspect bench on the two-pass path: the check sees pass 2's output, the variant is pass 1's."""
    d = _bench_json("fused_mm_softmax_tiled", "--size", "2048")
    assert d["check"]["ok"], d["check"]
    assert d["constexprs"]["ONE_TILE"] is False and d["asm"]["matrix_instructions"] > 0
    assert d["first_call"]["cold"]["cache_hit"] is False
    print(json.dumps({k: d[k] for k in ("steady", "throughput", "references")}, indent=1))


def bench_softmax_narrow_rows():
    d = _bench_json("softmax", "--size", "1048576x2")
    assert d["check"]["ok"] and d["method"]["grid"] == [512] and d["options"]["num_warps"] == 4
    print(json.dumps(d["throughput"], indent=1))


def bench_vs_ncu_measures_both_sides():
    """benchmarks/bench_vs_ncu.py runs and reports the ratio of kinspect's time to ncu's (skipped without
    ncu). The ratio itself is the benchmark's to report (it moved around 5% on the H200, and here the other
    cases share the GPU): here the method, both numbers measured, positive and finite."""
    import math
    import shutil
    import subprocess
    import sys

    if shutil.which("ncu") is None:
        pytest.skip("ncu not on PATH")
    script = Path(__file__).parents[2] / "benchmarks" / "bench_vs_ncu.py"
    out = subprocess.run([sys.executable, str(script), "--repeats", "1"], capture_output=True, text=True,
                         check=True).stdout
    print(out)
    ratio = float(out.rsplit("kinspect / ncu = ", 1)[1].split()[0])
    assert math.isfinite(ratio) and ratio > 0


# --- the pool ---------------------------------------------------------------------------------------------

_COUNTS = {"compiled": 0, "loaded": 0}


def _worker_init(kinspect_cache: str) -> None:
    """Worker initializer: a kinspect cache of the pool's own (kinspect bench measures the device's
    ceilings once per cache: here they would be measured beside the other cases, and the suite's later
    benches would compare against them); count this process's compiles and Triton cache hits (the listener
    Triton calls for both), chained to any listener already set."""
    from triton import knobs

    os.environ["KINSPECT_CACHE_DIR"] = kinspect_cache

    previous = knobs.compilation.listener

    def listener(*, cache_hit, **kwargs):
        _COUNTS["loaded" if cache_hit else "compiled"] += 1
        if previous is not None:
            previous(cache_hit=cache_hit, **kwargs)

    knobs.compilation.listener = listener


def run_case(case: str, args: tuple) -> dict:
    """One case in a worker: its failure's traceback (error) or why it skipped, what it printed, its
    seconds, the compiles and cache hits it caused."""
    printed, before, t0 = io.StringIO(), dict(_COUNTS), time.perf_counter()
    out = {}
    try:
        with contextlib.redirect_stdout(printed):
            globals()[case](*args)
    except pytest.skip.Exception as e:
        out["skipped"] = str(e.msg)
    except Exception:
        out["error"] = traceback.format_exc()
    return {**out, "printed": printed.getvalue(), "seconds": time.perf_counter() - t0,
            "counts": {k: _COUNTS[k] - before[k] for k in _COUNTS}}


# the heaviest cases first (each autotuned square compiles and times up to 12 configs), so none starts last alone
WEIGHT = {"bench_vs_ncu_measures_both_sides": 4, "fused_tiled_square_along_rows": 3, "matmul_autotuned": 2,
          "bench_runs_both_passes_of_the_tiled_kernel": 2, "fused_tiled_odd_shapes_both_dims": 1}
DEADLINE_S = 420


def _case_of(item) -> tuple[str, tuple] | None:
    """(case function's name, its arguments) for a test of this file that runs a case, else None."""
    case = item.originalname.removeprefix("test_")
    fn = globals().get(case)
    if item.module.__name__ != __name__ or case == item.originalname or not callable(fn):
        return None
    params = getattr(getattr(item, "callspec", None), "params", {})
    return case, tuple(params[p] for p in inspect.signature(fn).parameters)


def run_all(cases: dict) -> dict:
    """{key: run_case's answer} for {key: (case, args)}, in a pool of spawned processes (one per two
    cores, at most 8), the heaviest cases first; a case not done by the deadline, or lost with its
    worker, has a failure saying so. Prints the totals and the slowest cases."""
    workers = max(1, min(8, (os.cpu_count() or 2) // 2, len(cases)))
    t0 = time.perf_counter()
    outcomes, late = {}, set()
    own_cache = tempfile.TemporaryDirectory(prefix="kinspect-kernels-live-cache-")
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init,
                               initargs=(own_cache.name,))
    try:
        futures = {pool.submit(run_case, *c): key
                   for key, c in sorted(cases.items(), key=lambda kv: -WEIGHT.get(kv[1][0], 0))}
        done, late = wait(futures, timeout=DEADLINE_S)
        for f in done:
            e = f.exception()
            outcomes[futures[f]] = f.result() if e is None else {"error": f"its worker was lost: {e!r}"}
        for f in late:
            outcomes[futures[f]] = {"error": f"not finished {DEADLINE_S} s after the pool started"}
    finally:
        procs = list((getattr(pool, "_processes", None) or {}).values())    # (shutdown forgets them)
        pool.shutdown(wait=not late, cancel_futures=True)
        for proc in procs:   # a hung case's worker goes too
            if proc.is_alive():
                proc.kill()
                proc.join()
        own_cache.cleanup()
    total = {k: sum(o.get("counts", {}).get(k, 0) for o in outcomes.values()) for k in ("compiled", "loaded")}
    print(f"{len(cases)} cases in {workers} processes in {time.perf_counter() - t0:.1f} s: {total['compiled']} "
          f"kernels compiled, {total['loaded']} loaded from the Triton cache; the slowest:")
    for key, o in sorted(outcomes.items(), key=lambda kv: -kv[1].get("seconds", 0))[:12]:
        print(f"  {o.get('seconds', 0):6.1f} s  {str(key).rsplit('::', 1)[-1]}  "
              f"({o.get('counts', {}).get('compiled', 0)} compiled)")
    return outcomes


@pytest.fixture(scope="module")
def _outcomes(request) -> dict:
    """run_case's answers for the selected tests of this file, by node id. The session's cold programs
    (conftest's cold_runs), where a selected test uses them, and the setups the selected test files declare
    with conftest's beside_first start first and run beside the cases: the cases check results, not times;
    of the cold capture's GPU times the tests after only read them or hold a replay within a factor of 4 of
    them (test_replay_live.py); the setups check what their programs did, not how long it took; each has
    its own kinspect cache, so none leaves device ceilings measured beside the others. All are waited for
    here: nothing runs beside the tests after this file."""
    from tests.gpu.conftest import needs_cold_runs, start_beside, wait_beside

    cold = needs_cold_runs(request.session)
    if cold:
        request.getfixturevalue("cold_started")
    start_beside(request.session, request.getfixturevalue("tmp_path_factory"))
    try:
        outcomes = run_all({item.nodeid: c for item in request.session.items if (c := _case_of(item)) is not None})
    finally:
        wait_beside()
    if cold:
        request.getfixturevalue("cold_runs")
    return outcomes


@pytest.fixture
def ran(request, _outcomes):
    """Report this test's case: what it printed, and its failure as the test's."""
    def check():
        o = _outcomes[request.node.nodeid]
        counts = o.get("counts", {})
        print(o.get("printed", ""), end="")
        print(f"({o.get('seconds', 0):.1f} s in a worker; {counts.get('compiled', 0)} kernels compiled, "
              f"{counts.get('loaded', 0)} loaded from the Triton cache)")
        if "error" in o:
            pytest.fail(o["error"], pytrace=False)
        if "skipped" in o:
            pytest.skip(o["skipped"])
    return check


# --- the tests ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dtype", SOFTMAX)
def test_softmax_at_real_sizes(shape, dtype, ran):
    ran()


def test_softmax_on_a_strided_view_and_the_one_row_kernel(ran):
    ran()


@pytest.mark.parametrize("n,dtype", SQUARE)
def test_fused_tiled_square_along_rows(n, dtype, ran):
    ran()


@pytest.mark.parametrize("mnk,dim,dtype", ODD_CASES)
def test_fused_tiled_odd_shapes_both_dims(mnk, dim, dtype, ran):
    ran()


def test_fused_tiled_ieee_is_float32_exact(ran):
    ran()


@pytest.mark.parametrize("mnk,dtype", MATMUL)
def test_matmul_autotuned(mnk, dtype, ran):
    ran()


@pytest.mark.parametrize("dtype", ELEMENTWISE)
def test_elementwise_at_real_sizes(dtype, ran):
    ran()


def test_bench_runs_both_passes_of_the_tiled_kernel(ran):
    ran()


def test_bench_softmax_narrow_rows(ran):
    ran()


def test_bench_vs_ncu_measures_both_sides(ran):
    ran()
