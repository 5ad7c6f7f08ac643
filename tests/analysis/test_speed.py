"""Speed of light per kernel: Nsight Compute's CSV as kinspect reads it (on the real CSV of the GPT-2
program on an H200), the device ceilings a store keeps, FLOPs of a real compiled matmul, and the
achieved GB/s, ideal time and headroom of the GPT-2 capture's kernels."""

import dataclasses
import gzip
import json

import pytest

from kinspect.files import ceilings, counters
from kinspect.analysis.flops import flops
from kinspect.analysis.sol import MEASURED, by_headroom, kernel_speeds, program_speed
from kinspect.files.counters import Counters, by_kernel, parse_csv
from kinspect.core.errors import KinspectError, KinspectWarning
from kinspect.core.records import to_json
from kinspect.render.json import sol_json, speed_json
from kinspect.core.model import ArgSpec, Launches, LaunchSignature
from kinspect.files.store import read_records
from tests.helpers import H200

@pytest.fixture(scope="module")
def ncu_rows(gpt2):
    return parse_csv(gzip.open(gpt2 / "ncu.csv.gz", "rt").read())


def test_ncu_raw_csv_rows_and_their_metrics(ncu_rows):
    assert len(ncu_rows) == 118                   # the units row is not a launch
    groups = by_kernel(ncu_rows)
    c = Counters.from_rows(groups[("triton_poi_fused_mm_t_view_0", (201056, 1, 1))])
    assert c.launches == 1 and c.dram_read == 412_149_760 and c.dram_write == 797_784_064
    assert c.duration_ns == 315_232 and c.l2_size == 62_914_560
    assert c.registers == 26 and c.occupancy_pct == 87.58 and c.grid_size == 201056
    reasons = [r for r, _ in c.stalls]
    assert reasons[0] == "long_scoreboard" and "selected" in reasons
    assert [r for r, _ in c.top_stalls()] == ["long_scoreboard", "drain", "lg_throttle"]
    assert c.l1_over_dram == pytest.approx(8.24, abs=0.01)


def test_the_measured_bytes_count_writes_still_held_in_l2(ncu_rows):
    """A kernel whose 16 MB of output stays in the 60 MiB L2: DRAM counted 0.02 MB of writes."""
    c = Counters.from_rows(by_kernel(ncu_rows)[("triton_per_fused_add_native_dropout_native_layer_norm_view_8",
                                                (4096, 1, 1))])
    assert c.dram_write < 1e5
    assert c.dram_bytes == pytest.approx(c.dram_read + 32 * c.l2_write_sectors)
    big = Counters("k", 1, dram_read=1.0, dram_write=386e6, l2_write_sectors=548e6 / 32, l2_size=62_914_560)
    assert big.dram_bytes == pytest.approx(1.0 + 386e6 + 62_914_560), "at most the L2's size more than DRAM saw"


def test_a_text_without_ncus_header_is_one_clear_error():
    with pytest.raises(KinspectError, match="no ncu CSV header"):
        parse_csv("==PROF== Connected to process 12\nhello\n")


def test_counters_round_trip_through_a_variant_folder_and_reject_other_files(tmp_path, ncu_rows):
    c = Counters.from_rows(ncu_rows[:1], how="ncu ...", ncu_version="2025.3", measured="2026-11-25")
    counters.write(tmp_path, c)
    assert counters.read(tmp_path) == c
    (tmp_path / counters.FILE).write_text(json.dumps({"version": 99, "kernel": "x"}))
    with pytest.warns(KinspectWarning, match=r"not of the shape kinspect writes \(ValueError\)"):
        assert counters.read(tmp_path) is None
    (tmp_path / counters.FILE).write_text("{not json")
    with pytest.warns(KinspectWarning, match=r"not of the shape kinspect writes \(JSONDecodeError\)"):
        assert counters.read(tmp_path) is None


def test_a_store_keeps_its_ceilings_and_an_older_one_says_what_it_used(tmp_path, monkeypatch):
    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(tmp_path / "cache"))
    store = tmp_path / "store"
    store.mkdir()
    got, why = ceilings.for_store(store)
    assert got is None and "no device ceilings" in why
    cache = tmp_path / "cache" / "device"
    cache.mkdir(parents=True)
    (cache / "copy-ab.json").write_text(json.dumps({"gbps": 3008.0, "device": "NVIDIA H100 80GB HBM3",
                                                    "measured": "2026-11-22", "method": "torch copy_ ... on cuda, x"}))
    (cache / "matmul-bfloat16-cd.json").write_text(json.dumps({"tflops": 600.0, "dtype": "bfloat16",
                                                               "device": "NVIDIA H100 80GB HBM3"}))
    got, why = ceilings.for_store(store)
    assert got.copy_gbps == 3008.0 and got.peak("bfloat16") == 600.0
    assert "the store has no device ceilings" in why and "NVIDIA H100" in why and "2026-11-22" in why
    ceilings.write(store, H200)
    got, why = ceilings.for_store(store)
    assert got.copy_gbps == 4249.0 and got.source == "measured by the capture on its GPU"
    (store / ceilings.FILE).write_text(json.dumps({"version": 1, "device": "x", "copy_gbps": -1}))
    with pytest.warns(KinspectWarning, match="not of the shape kinspect writes"):
        assert ceilings.read(store) is None, "a file that is not sound is not used"


def test_flops_of_a_real_matmul_are_2mnk(real_variant):
    v = real_variant("matmul", "cuda:90", BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8)
    m = n = k = 2048
    args = (ArgSpec("a_ptr", "tensor", shape=(m, k), strides=(k, 1), dtype="float16"),
            ArgSpec("b_ptr", "tensor", shape=(k, n), strides=(n, 1), dtype="float16"),
            ArgSpec("c_ptr", "tensor", shape=(m, n), strides=(n, 1), dtype="float16"),
            ArgSpec("M", "int", m), ArgSpec("N", "int", n), ArgSpec("K", "int", k))
    launched = dataclasses.replace(v, launches=Launches(calls=1, signatures=(
        LaunchSignature(grid=(m // 128 * n // 128, 1, 1), args=args, calls=1),)))
    f = flops(launched)
    assert f.per_call == 2 * m * n * k and f.dtype == "float16" and f.dots == 1


def test_gpt2_kernels_ranked_by_headroom(gpt2):
    variants = list(read_records(gpt2 / "gpt2"))
    speeds = kernel_speeds(variants, H200)
    assert len(speeds) == 37, "every kernel launched with GPU time"
    top = speeds["triton_poi_fused_mm_t_view_0"]
    assert top.bytes_per_call == pytest.approx(1.235e9, rel=0.01)
    assert top.gb_per_s == pytest.approx(top.bytes_per_call * top.timed_calls / (top.gpu_ms * 1e-3) / 1e9)
    assert top.pct_of_bandwidth == pytest.approx(100 * top.gb_per_s / 4249.0)
    assert top.headroom_ms == pytest.approx(top.gpu_ms - top.ideal_ms) and top.bound_by == "memory"
    ranked = by_headroom(speeds)
    assert ranked[0].startswith("triton_red_fused__log_softmax__log_softmax_backward")
    with_headroom = [k for k in ranked if speeds[k].headroom_ms is not None]
    assert ranked[:len(with_headroom)] == with_headroom, "kernels with no ideal time come last"
    assert [speeds[k].headroom_ms for k in with_headroom] == sorted((speeds[k].headroom_ms for k in with_headroom),
                                                                    reverse=True)
    # never above a ceiling: kernels faster than DRAM allows (inputs from the L2) get no % and no ideal from
    # bytes here, since these ceilings have no L2 figure, and say why
    above = [s for s in speeds.values() if s.gb_per_s and s.gb_per_s > 4249.0 * 1.001]
    assert above, "the H200 capture has kernels fed from the L2"
    for s in above:
        assert s.pct_of_bandwidth is None and any("above the DRAM copy bandwidth" in n for n in s.notes), s.kernel
    assert all(s.pct_of_bandwidth is None or s.pct_of_bandwidth <= 100 for s in speeds.values())
    total = program_speed(speeds.values())
    assert total.gpu_ms == pytest.approx(sum(s.gpu_ms for s in speeds.values()))
    # the kernels' headroom summed, none below 0 (a kernel faster than its DRAM ideal read from L2)
    assert total.headroom_ms == pytest.approx(sum(s.headroom_ms for s in speeds.values() if s.headroom_ms is not None))
    assert total.headroom_ms >= total.covered_ms - total.ideal_ms - 1e-9
    row = to_json(speed_json(top))
    assert set(row) >= {"bytes_per_call", "gb_per_s", "pct_of_bandwidth", "ideal_ms", "headroom_ms"}
    # with an L2 ceiling those kernels are held to it, never above 100%
    with_l2 = kernel_speeds(variants, dataclasses.replace(H200, l2_gbps=9000.0, l2_bytes=50 << 20))
    for s in above:
        l2 = with_l2[s.kernel]
        if s.bytes_per_call <= 50 << 20 and s.gb_per_s <= 9000.0:
            assert l2.bandwidth_ceiling == "L2" and l2.pct_of_bandwidth == pytest.approx(100 * s.gb_per_s / 9000.0)
            assert l2.ideal_ms is not None and any("came from the L2" in n for n in l2.notes)
    assert all(s.pct_of_bandwidth is None or s.pct_of_bandwidth <= 100 for s in with_l2.values())
    no_ceiling = kernel_speeds(variants, None)["triton_poi_fused_mm_t_view_0"]
    assert no_ceiling.gb_per_s == pytest.approx(top.gb_per_s) and no_ceiling.ideal_ms is None


def test_measured_counters_replace_the_estimate(gpt2, ncu_rows, tmp_path):
    import shutil

    src = next(v for v in read_records(gpt2 / "gpt2") if v.kernel == "triton_poi_fused_mm_t_view_0")
    folder = tmp_path / "variant"
    shutil.copytree(src.path, folder)
    c = Counters.from_rows(by_kernel(ncu_rows)[(src.kernel, (201056, 1, 1))])
    counters.write(folder, c)
    v = dataclasses.replace(src, path=str(folder))
    s = kernel_speeds([v], H200)[src.kernel]
    assert s.bytes_method == MEASURED and s.bytes_per_call == c.dram_bytes


def test_a_kernels_variants_combine_by_their_calls():
    from kinspect.analysis.sol import _figures, combine

    a = _figures("k", 2.0, 10, 1e6, "index expressions", False, None, "", H200, ())
    b = _figures("k", 1.0, 30, 2e6, "tensor sizes (an upper bound)", True, None, "", H200, ())
    s = combine("k", [a, b], H200)
    assert s.timed_calls == 40 and s.gpu_ms == 3.0 and s.bytes_per_call == pytest.approx(1.75e6)
    assert s.upper_bound and s.ideal_ms == pytest.approx(a.ideal_ms + b.ideal_ms)
    assert s.headroom_ms == pytest.approx(3.0 - s.ideal_ms)
    assert s.bytes_method == "index expressions + tensor sizes (an upper bound)"


def test_the_profiler_keeps_the_gpu_work_no_hook_saw_and_the_program_view_names_it(gpt2, tmp_path):
    """Kernels the launch hooks did not see (cuBLAS, copies) are summed by name; the capture keeps the largest
    in the store, and the program view gives the Triton kernels' share of all the GPU time."""
    import shutil

    from kinspect.files import gpu_time
    from kinspect.analysis.sol import for_program
    from kinspect.hooks.launch_counts import LaunchRecorder
    from kinspect.hooks.timers import KernelRecordsTimer, other_kernels
    from kinspect.program.run import _summaries

    fill = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEvi"    # as CUPTI names it
    events = [("triton_k", 0, 1000), ("sm90_xmma_gemm_bf16", 5, 4_000_000), ("sm90_xmma_gemm_bf16", 9, 2_000_000),
              ("Memcpy DtoD", 12, 500_000), (fill, 14, 250_000)]
    timer = KernelRecordsTimer(session=(lambda: None, lambda: events))
    rec = LaunchRecorder(timer=timer)
    rec.tally("h1", "triton_k", ())          # its first launch starts the session
    timer.resolve(rec, final=True)
    assert rec.tallies["h1"].total_ms == pytest.approx(0.001)
    assert other_kernels(timer) == {"sm90_xmma_gemm_bf16": {"calls": 2, "ms": 6.0}, "Memcpy DtoD": {"calls": 1, "ms": 0.5},
                                    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int)":
                                    {"calls": 1, "ms": 0.25}}
    assert timer.others_window() == "from the first observed Triton launch to the end"

    folder = tmp_path / ".kinspect-capture"
    folder.mkdir()
    for pid in (1, 2):
        (folder / f"{pid}.json").write_text(json.dumps({"launches": 1, "timing": {
            "method": timer.method, "ms": 1.0, "failed": "", "other_kernels": other_kernels(timer),
            "window": timer.others_window()}}))
    cutlass = "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_" + "x" * 300 + ">(Params)"
    long = tmp_path / "long"
    long.mkdir()
    (long / "3.json").write_text(json.dumps({"launches": 5, "hook_ms": 0.25, "timing": {
        "method": timer.method, "ms": 1.0, "other_kernels": {cutlass: {"calls": 1, "ms": 0.5}}}}))
    assert _summaries(long)[:2] == (5, 0.25)       # read whole, the long C++ name too
    launches, hook_ms, timing, _, _ = _summaries(folder)
    assert launches == 2
    assert timing.other_kernels["sm90_xmma_gemm_bf16"] == {"calls": 4, "ms": 12.0}
    assert timing.window == "from the first observed Triton launch to the end"

    store = tmp_path / "gpt2"
    shutil.copytree(gpt2 / "gpt2", store)
    gpu_time.write_others(store, timing.other_kernels, timing.method, timing.window)
    d = to_json(sol_json(for_program(list(read_records(store)))))
    assert d["share_window"] == timing.window, "the share says over which window the profiler read the rest"
    triton = sum(v.launches.gpu.total_ms + v.launches.tuning_ms for v in read_records(store) if v.launches and v.launches.gpu) + \
        sum(v.launches.tuning_ms for v in read_records(store) if v.launches and not v.launches.gpu)
    assert d["triton_share_of_gpu_time"] == pytest.approx(triton / (triton + 13.5), abs=1e-4)
    assert [k["name"] for k in d["largest_other_kernels"]] == ["sm90_xmma_gemm_bf16", "Memcpy DtoD",
                                                              "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int)"]


def test_a_launch_bound_kernel_gets_the_per_launch_floor_as_its_ideal(gpt2):
    """A layer norm of 0.1 MB a call, 108 launches of 2.2 µs: its bytes alone give an ideal of 3 µs and
    all its GPU time as headroom; the floor of each launch makes the ideal 108 launches' worth."""
    from kinspect.analysis.sol import for_program, launch_floor

    variants = list(read_records(gpt2 / "gpt2"))
    name = "triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_4"
    floor, note = launch_floor(variants, H200)
    assert floor == pytest.approx(0.64) and "shortest launch this capture timed" in note
    assert "triton_poi_fused_add_arange_0" in note
    s = kernel_speeds(variants, H200, floor)[name]
    assert s.timed_calls == 108 and s.bound_by == "launch"
    assert s.ideal_ms == pytest.approx(108 * 0.64e-3) and s.headroom_ms == pytest.approx(s.gpu_ms - 108 * 0.64e-3)
    assert kernel_speeds(variants, H200)[name].ideal_ms < 0.01, "without a floor, bytes alone"
    measured = dataclasses.replace(H200, launch_floor_us=2.0)
    floor, note = launch_floor(variants, measured)
    assert floor == 2.0 and "device's measured floor" in note
    assert kernel_speeds(variants, measured, floor)[name].ideal_ms == pytest.approx(0.216)
    big = kernel_speeds(variants, measured, floor)["triton_poi_fused_mm_t_view_0"]
    assert big.bound_by == "memory", "a kernel that moves a gigabyte is not launch bound"
    d = to_json(sol_json(for_program(variants)))
    assert d["launch_floor_us"] == pytest.approx(0.64) and d["launch_floor_note"]


def test_device_json_keeps_the_launch_floor(tmp_path):
    c = dataclasses.replace(H200, launch_floor_us=1.9)
    ceilings.write(tmp_path, c)
    back = ceilings.read(tmp_path)
    assert back.launch_floor_us == 1.9 and "1.90 µs per launch" in back.describe()
    old = c.to_json()
    del old["launch_floor_us"]
    (tmp_path / "device.json").write_text(json.dumps(old))
    assert ceilings.read(tmp_path).launch_floor_us is None, "a store from before the floor still reads"
