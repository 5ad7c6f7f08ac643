"""The corpus of real-style kernel files (tests/corpus) through dump, vec-report and diff, offline,
for cuda:90, cuda:80 and gfx942: each succeeds with only its --arg flags (or none where the file
declares kinspect_examples), except where Triton itself refuses, which is one clear line.

One session fixture runs every command once (in this process: -j 1 for diff, so no worker
start-ups); the tests below read its results, and check each file's feature in the compiled code.
"""

import json
from pathlib import Path

import pytest

from tests.corpus.manifest import CORPUS, HERE, TARGETS, kernel_path
from tests.helpers import one_error_line, run_raising as run

pytestmark = pytest.mark.slow       # subprocesses or many compiles: -m 'not slow' leaves it out

BY_ID = {e["id"]: e for e in CORPUS}


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """{(id, command, target or "all"): click Result}, each entry's store folder, and the folder of the variant
    dump stored per (id, target) (the diff after it adds other configs of an autotuned kernel to the store)."""
    from kinspect.files.store import read_records

    results, stores, dumped = {}, {}, {}
    for e in CORPUS:
        out = stores[e["id"]] = tmp_path_factory.mktemp(f"corpus-{e['id']}")
        flags = e.get("flags", [])
        for t in TARGETS:
            results[e["id"], "dump", t] = run("dump", kernel_path(e), "-t", t, "--store", out, *flags)
            # vec-report reads the variant dump stored (it compiles as dump does: one compile, not two), or
            # compiles where dump stored none (a target Triton refuses: the same one line again)
            done = [v.path for v in read_records(out) if str(v.target) == t]
            if done:
                dumped[e["id"], t] = done[0]
            results[e["id"], "vec-report", t] = (run("vec-report", done[0], "--json") if done else
                                                 run("vec-report", kernel_path(e), "-t", t, "--store", out, "--json",
                                                     *flags))
        # into dump's store: the same requests are taken from it as they are (a sweep reuses them), so the
        # fixture compiles each kernel and target once (compiling again into a fresh store was 585 s of CI)
        results[e["id"], "diff", "all"] = run("diff", kernel_path(e), "-t", ",".join(TARGETS), "-j", "1", "--json",
                                              "--no-bench", "--store", out, *flags)
    return results, stores, dumped


def stored(corpus, entry_id: str, target: str):
    """The variant dump stored for an entry and target (kinspect.core.model.Variant)."""
    from kinspect.files.store import read_record

    dumped = corpus[2]
    assert (entry_id, target) in dumped, f"{entry_id}: nothing stored for {target}"
    return read_record(Path(dumped[entry_id, target]))


def stage(v, name: str) -> str:
    return Path(v.path, v.stage(name).file).read_text()


def report(corpus, entry_id: str, target: str) -> dict:
    r = corpus[0][entry_id, "vec-report", target]
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)[0]


@pytest.mark.parametrize("entry", CORPUS, ids=lambda e: e["id"])
def test_dump_and_vec_report_succeed_or_say_what_triton_refuses(corpus, entry):
    results, stores, _ = corpus
    for t in TARGETS:
        refused = entry.get("refused", {}).get(t)
        for command in ("dump", "vec-report"):
            r = results[entry["id"], command, t]
            if refused:
                one_error_line(r, refused)
            else:
                assert r.exit_code == 0, f"{command} {t}: {r.output}"
        if refused:   # nothing half-written: no variant for the refused target
            from kinspect.files.store import read_records

            assert not [v for v in read_records(stores[entry["id"]]) if str(v.target) == t]


@pytest.mark.parametrize("entry", CORPUS, ids=lambda e: e["id"])
def test_diff_compares_the_targets_triton_compiles_for(corpus, entry):
    r = corpus[0][entry["id"], "diff", "all"]
    refused = entry.get("refused", {})
    if len(refused) == len(TARGETS):
        one_error_line(r, next(iter(refused.values())))
        return
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    configs = entry.get("configs", 1)   # an autotuned kernel: every config, per target
    assert sorted({v["target"] for v in d["variants"]}) == sorted(t for t in TARGETS if t not in refused)
    assert len(d["variants"]) == configs * (len(TARGETS) - len(refused))
    assert len(d["failed"]) == configs * len(refused)
    for f in d["failed"]:
        target = f["job"].split("target=")[1].split()[0]
        assert refused[target] in f["error"], f
    assert d["diff"]["a"] != d["diff"]["b"]   # the first two variants' stages, diffed


def test_tutorial_file_runs_whole_and_launches_nothing(corpus, tmp_path):
    r = corpus[0]["tutorial", "dump", "cuda:90"]
    # the module-level call, then the benchmark's calls through triton.testing.do_bench, each made once
    # (16 sizes), none timed
    assert "loaded   imported" in r.output
    assert "launched 17 launches: 'add_kernel' (line 38 via line 47), recorded, not run" in r.output
    assert "launch   " not in r.output          # every value given with --arg/-p: the launch is not needed
    # with no flags, the values of that launch
    r = run("dump", kernel_path(BY_ID["tutorial"]), "--store", tmp_path)
    assert r.exit_code == 0, r.output
    assert "launch   launch 0 of the 17 of 'add_kernel' (--launch N picks another), by module-level code " \
           "(line 38 via line 47)" in r.output


def test_package_module_loads_by_path_and_by_module_name(corpus, monkeypatch, tmp_path):
    assert "loaded   imported" in corpus[0]["package", "dump", "cuda:90"].output
    monkeypatch.chdir(HERE)
    r = run("dump", "pkg_layers.activations:bias_act_kernel", "-t", "cuda:80", "--store", tmp_path)
    assert r.exit_code == 0, r.output
    assert "kernel   bias_act_kernel" in r.output and "pkg_layers/activations.py" in r.output


def test_autotuned_kernel_compiles_its_configs_and_heuristics(corpus):
    r = corpus[0]["autotune", "dump", "cuda:90"]
    assert "autotuned: config 0 of 5  BLOCK_M=64 BLOCK_N=64 BLOCK_K=32 GROUP_M=8 num_warps=4 num_stages=3" in r.output
    assert "heuristics EVEN_K=True" in r.output
    assert "prune_configs_by keeps 4 of 5 configs for these arguments" in r.output
    v = stored(corpus, "autotune", "cuda:90")
    assert {k: v.constexprs[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "EVEN_K")} == \
        {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "EVEN_K": True}
    d = json.loads(corpus[0]["autotune", "diff", "all"].stdout)
    by_target = {}
    for row in d["variants"]:
        by_target.setdefault(row["target"], []).append(row)
        assert f"config={row['config']}" in row["label"].split()
    for t, rows in by_target.items():
        assert [r["config"] for r in rows] == [0, 1, 2, 3], t     # config 4 (BLOCK_K 128 > K 64) pruned
        assert [r["constexprs"]["BLOCK_M"] for r in rows] == [64, 128, 64, 128]
        assert all(r["matrix_instructions"] > 0 for r in rows), t
        assert len({r["shared_bytes"] for r in rows}) > 1, t        # the tiles differ in what they stage
    assert "prune_configs_by keeps 4 of 5 configs for these arguments" in d["notes"]


def test_host_descriptor_is_a_tensordesc_argument_and_tma_on_hopper(corpus):
    for t in TARGETS:
        v = stored(corpus, "host_descriptor", t)
        assert v.signature["in_desc"] == "tensordesc<fp16[64, 64]>", t   # the config's block, by its pre_hook
    assert "UTMALDG" in stage(stored(corpus, "host_descriptor", "cuda:90"), "sass")
    assert "UTMALDG" not in stage(stored(corpus, "host_descriptor", "cuda:80"), "sass")


def test_device_descriptor_needs_scratch_on_hopper(corpus):
    v = stored(corpus, "device_descriptor", "cuda:90")
    assert v.options["global_scratch_size"] > 0             # the launch needs triton.set_allocator
    assert "UTMALDG" in stage(v, "sass")
    assert stored(corpus, "device_descriptor", "cuda:80").options["global_scratch_size"] == 0


def test_do_not_specialize_leaves_size_and_seed_unspecialized(corpus):
    v = stored(corpus, "do_not_specialize", "cuda:90")
    assert "tt.divisibility" in v.attributes.get("x_ptr", {})
    assert "n_elements" not in v.attributes and "seed" not in v.attributes


def test_libdevice_math_reaches_each_backends_library(corpus):
    assert "__nv_erff" in stage(stored(corpus, "libdevice_cuda", "cuda:80"), "ttir")
    assert "__nv_log1pf" in stage(stored(corpus, "libdevice", "cuda:90"), "ttir")
    assert "__ocml_log1p_f32" in stage(stored(corpus, "libdevice", "hip:gfx942"), "ttir")


def test_fp8_uses_each_targets_fp8_matrix_instructions(corpus):
    """The file picks its fp8 type from the driver kinspect made active for the target."""
    assert "QGMMA.64x64x32.F32.E4M3.E4M3" in stage(stored(corpus, "fp8", "cuda:90"), "sass")
    assert "f8E5M2" in stage(stored(corpus, "fp8", "cuda:80"), "ttgir")
    assert "f8E4M3" not in stage(stored(corpus, "fp8", "cuda:80"), "ttgir")
    assert "_fp8_fp8" in stage(stored(corpus, "fp8", "hip:gfx942"), "amdgcn")   # v_mfma_..._fp8_fp8


def test_three_d_grid_and_string_constexpr(corpus):
    assert "%ctaid.z" in stage(stored(corpus, "grid3d", "cuda:90"), "ptx")
    assert stored(corpus, "string_constexpr", "cuda:90").constexprs["ACTIVATION"] == "silu"


def test_dot_accumulator_uses_matrix_units_everywhere(corpus):
    for t in TARGETS:
        assert report(corpus, "dot_accumulator", t)["matrix_instructions"] > 0, t


def test_an_autotuned_kernels_configs_compile_in_parallel(tmp_path):
    """The sweep as a user runs it: worker processes, one per core, compile the configs."""
    from kinspect.diff.sweep import usable_cores

    r = run("diff", kernel_path(BY_ID["autotune"]), "-t", "cuda:90", "--json", "--no-bench", "--table",
            "--store", tmp_path)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["sweep"]["jobs"] == 4 and d["sweep"]["workers"] == min(4, usable_cores())
    assert not d["failed"]
    for row in d["variants"]:
        assert row["registers"] > 0 and row["spills"] == 0 and row["shared_bytes"] > 0 and 0 < row["occupancy"] <= 1
        assert row["instructions"] > row["vector_instructions"] > 0 and row["matrix_by_unit"]["hgmma"] > 0
        assert row["jit_ms"] > 0 and {"ttir", "ttgir", "llir", "ptx", "cubin"} <= set(row["jit_ms_by_stage"])


def test_a_stored_config_reloads_as_the_launch_a_gpu_times(corpus):
    """What `diff` times on a GPU, built on the CPU: the variant's kernel reloaded with its
    example arguments, config and heuristics (the launch itself needs the GPU: tests/gpu)."""
    import inspect

    from kinspect.bench.runtime import user_launch

    for entry_id in ("autotune", "host_descriptor", "grid3d"):
        v = stored(corpus, entry_id, "cuda:90")
        launch = user_launch(v, device="cpu")
        params = inspect.signature(launch.fn.fn).parameters
        assert v.constexprs and all(launch.constexprs[k] == x for k, x in v.constexprs.items() if k in params), \
            entry_id
        assert launch.options["num_warps"] == v.options["num_warps"]
    mm = user_launch(stored(corpus, "autotune", "cuda:90"), device="cpu")
    assert mm.flops == 2 * 1024 * 1024 * 64 and mm.grid({"BLOCK_M": 64, "BLOCK_N": 64}) == (256,)
    desc = user_launch(stored(corpus, "host_descriptor", "cuda:90"), device="cpu")
    assert list(desc.args["in_desc"].block_shape) == [64, 64]      # the config's pre_hook ran again
    assert user_launch(stored(corpus, "grid3d", "cuda:90"), device="cpu").grid == (2, 4, 4)


def test_config_verdicts_rank_the_timed_configs_beside_the_autotuners_pick(corpus):
    import dataclasses

    from kinspect.bench.stats import Runtime
    from kinspect.diff.configs import config_verdicts
    from kinspect.diff.table import rows as make_rows
    from kinspect.files.store import read_records

    d = json.loads(corpus[0]["autotune", "diff", "all"].stdout)
    paths = [Path(v["path"]) for v in d["variants"] if v["target"] == "cuda:90"]
    variants = [v for v in read_records(paths[0].parent.parent) if str(v.target) == "cuda:90"]
    ms = {0: 0.30, 1: 0.20, 2: 0.10, 3: 0.12}

    def runtime(v):
        median = ms[v.user.autotune.config.index]
        return Runtime(median_ms=median, p20_ms=median * 0.98, p80_ms=median * 1.02)

    timed = [dataclasses.replace(r, runtime=runtime(r.variant)) for r in make_rows(variants)]
    lines = config_verdicts(timed, picker=lambda v: {"config": 3, "key": {"M": 1024, "N": 1024, "K": 64},
                                                     "ms": 0.115, "benchmarked": 4})
    assert lines[0] == ("matmul_kernel: fastest config 2 (0.1 ms): 1.20x ahead of the next, config 3; "
                        "3.00x faster than the slowest, config 0")
    assert lines[1] == ("matmul_kernel: Triton's autotuner picks config 3 for key M=1024, N=1024, K=64 "
                        "(4 configs benchmarked; its own do_bench 0.115 ms); kinspect timed it at 0.12 ms, "
                        "1.20x the fastest")


def test_the_autotuners_own_pick_runs_its_benchmark_as_at_a_first_launch(corpus, monkeypatch):
    """autotuner_pick on the CPU, under a driver that compiles and "launches" without a GPU
    (tests/dryrun.py): Triton's own Autotuner.run prunes with the positional arguments, benchmarks
    each kept config with the driver's benchmarker (here: given timings, in the order it asks) and
    picks the fastest."""
    from kinspect.bench.runtime import autotuner_pick
    from kinspect.compile.autotune import chain
    from kinspect.compile.user import load
    from tests.dryrun import DryRunDriver, dry_run

    timings = iter([0.30, 0.20, 0.10, 0.15])
    asked = []

    def benchmarker(kernel_call, quantiles):
        kernel_call()
        asked.append(1)
        ms = next(timings)
        return [ms, ms * 0.98, ms * 1.02]

    monkeypatch.setattr(DryRunDriver, "get_benchmarker", lambda self: benchmarker)
    v = stored(corpus, "autotune", "cuda:90")
    with dry_run("cuda:90") as driver:
        pick = autotuner_pick(v, device="cpu", own={v.user.kernel})    # the file named by the user
        tuner = chain(load(v.user.kernel, {}, {}).wrapper, "matmul_kernel").autotuner
        tuner.__dict__.pop("do_bench", None)      # Triton caches the benchmarker on the autotuner
    assert pick == {"config": 2, "key": {"M": 1024, "N": 1024, "K": 64}, "ms": 0.10, "benchmarked": 4}
    assert len(asked) == 4                          # config 4 pruned (BLOCK_K 128 > K 64), never benchmarked
    assert driver.launched[-1].grid == (128, 1, 1)  # then launched once with config 2: 1024/64 x 1024/128
