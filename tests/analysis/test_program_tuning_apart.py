"""GPU work launched while an autotuner benchmarks is tuning, never the program's: its Triton launches
(Launches.tuning_ms) and the GPU work no hook saw (the L2-flush fills Inductor's benchmarker writes between
trials: 7,172 calls and 119 ms in a cold 5-step Llama run on the H100, 39,060 calls on 2 ranks) stay out of
"the largest others" and out of the Triton share; NCCL's kernels are their own line."""

import json
import shutil

from click.testing import CliRunner

from kinspect.cli import main
from kinspect.files import gpu_time
from kinspect.hooks import tuning
from kinspect.hooks.launch_counts import LaunchRecorder
from kinspect.hooks.timers import KernelRecordsTimer, other_kernels

FILL = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>>(int, at::native::FillFunctor<int>)"
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def test_windows_and_what_ran_inside_them(monkeypatch):
    now = [100]
    monkeypatch.setattr(tuning, "CLOCK", [lambda: now[0]])
    monkeypatch.setattr(tuning, "WINDOWS", [])

    def bench():
        now[0] += 10            # the benchmark runs for 10 ns of the profiler's clock
        inner()                 # a nested benchmark (a subclass calling its parent) opens no second window

    inner = tuning._wrapped(lambda: None)
    tuning._wrapped(bench)()
    now[0] = 500
    tuning._wrapped(lambda: None)()
    assert tuning.WINDOWS == [[100, 110], [500, 500]]
    assert tuning.in_window(105, tuning.WINDOWS) and tuning.in_window(110, tuning.WINDOWS)
    assert not tuning.in_window(99, tuning.WINDOWS) and not tuning.in_window(111, tuning.WINDOWS)
    assert tuning.in_window(500, tuning.WINDOWS) and not tuning.in_window(501, tuning.WINDOWS)
    tuning.WINDOWS.append([900, 0])     # still open: reaches to now
    assert tuning.in_window(10_000, tuning.WINDOWS)


def test_records_inside_a_benchmark_window_are_tuning_not_others(monkeypatch):
    monkeypatch.setattr(tuning, "CLOCK", [lambda: 0])
    monkeypatch.setattr(tuning, "WINDOWS", [[1_000, 2_000]])
    records = [("k", 10, 1_000_000),                 # the program's Triton kernel
               (FILL, 1_500, 2_000_000),             # a fill between two trials
               (FILL, 3_000, 4_000_000),             # the program's own fill, after the benchmark
               ("cutlass_gemm", 1_200, 8_000_000)]   # a benchmarked extern kernel (max-autotune's)
    timer = KernelRecordsTimer(session=(lambda: None, lambda: records))
    rec = LaunchRecorder(timer=timer)
    rec.tally("h", "k", ())
    timer.resolve(rec, final=False, restart=False)
    assert other_kernels(timer) == {FILL: {"calls": 1, "ms": 4.0}}
    assert other_kernels(timer, "tuning_others") == {"cutlass_gemm": {"calls": 1, "ms": 8.0},
                                                     FILL: {"calls": 1, "ms": 2.0}}
    assert rec.tallies["h"].total_ms == 1.0
    assert tuning.WINDOWS == [], "closed windows are dropped once their records are read"
    summary = rec.summary()
    assert summary["timing"]["tuning_other_kernels"][FILL] == {"calls": 1, "ms": 2.0}


def test_the_header_keeps_tuning_apart_and_names_communication(gpt2, tmp_path, monkeypatch):  # noqa: F811
    """A store's other_kernels.json with tuning kept apart: the header's others hold neither the fills
    nor NCCL (its own line), and the JSON says the same."""
    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(tmp_path / "cache"))
    store = tmp_path / "gpt2"
    shutil.copytree(gpt2 / "gpt2", store)
    gpu_time.write_others(store, {FILL: {"calls": 12, "ms": 0.5}, NCCL: {"calls": 40, "ms": 3.0},
                                  "cutlass_gemm": {"calls": 4, "ms": 1.0}},
                          "CUPTI kernel records", "from the first observed Triton launch to the end",
                          tuning={FILL: {"calls": 7172, "ms": 119.0}})
    r = CliRunner().invoke(main, ["vec-report", str(store), "--top", "0"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    text = r.output
    assert "autotuning apart" in text and "communication: ncclDevKernel_AllReduce" in text
    tuned = next(x for x in text.splitlines() if x.startswith("  autotuning: "))
    assert "ms of GPU work while autotuners benchmarked" in tuned and "119.00 ms (7,172 calls)" in tuned
    others = next(x for x in text.splitlines() if "the largest others" in x)
    assert "nccl" not in others and "119" not in others
    sol = json.loads(CliRunner().invoke(main, ["vec-report", str(store), "--json"]).stdout)["speed_of_light"]
    assert [k["name"] for k in sol["communication_kernels"]] == [NCCL]
    assert [k["name"] for k in sol["tuning_other_kernels"]] == [FILL] and sol["tuning_gpu_ms"] >= 119.0
    assert NCCL not in [k["name"] for k in sol["largest_other_kernels"]]
