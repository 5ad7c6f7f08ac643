"""The corpus on a real GPU: user kernels' variants timed on their example arguments, an autotuned
kernel's configs timed and ranked beside what Triton's own autotuner picks, module-level code that
launches never run while kinspect loads the file."""

import json

from click.testing import CliRunner

from kinspect.cli import main
from tests.corpus.manifest import CORPUS, kernel_path

BY_ID = {e["id"]: e for e in CORPUS}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def timed(d: dict) -> list[dict]:
    for v in d["variants"]:
        t = v["runtime"]
        assert t is not None, (v["label"], d["notes"])
        assert 0 < t["p20_ms"] <= t["median_ms"] <= t["p80_ms"]
        assert "do_bench" in t["method"]
    return d["variants"]


def test_autotuned_configs_are_timed_and_ranked_beside_the_autotuners_pick(tmp_path):
    r = run("diff", kernel_path(BY_ID["autotune"]), "--store", tmp_path, "--json", "--table")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    rows = timed(d)
    assert [v["config"] for v in rows] == [0, 1, 2, 3]
    assert all(v["runtime"]["tflops"] > 0 for v in rows)        # the file's flops formula
    fastest = min(rows, key=lambda v: v["runtime"]["median_ms"])["config"]
    notes = "\n".join(d["notes"])
    assert f"matmul_kernel: fastest config {fastest} (" in notes and "faster than the slowest" in notes
    assert "matmul_kernel: Triton's autotuner picks config " in notes and "for key M=1024, N=1024, K=64" in notes
    print(notes)


def test_host_descriptors_with_a_pre_hook_are_timed_per_config(tmp_path):
    r = run("diff", kernel_path(BY_ID["host_descriptor"]), "--store", tmp_path, "--json", "--table")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert [v["config"] for v in timed(d)] == [0, 1]
    assert any("Triton's autotuner picks config" in n for n in d["notes"]), d["notes"]


def test_in_kernel_descriptors_get_a_scratch_allocator(tmp_path):
    r = run("diff", kernel_path(BY_ID["device_descriptor"]), "-p", "BLOCK_M=32,64", "--store", tmp_path, "--json",
            "--table")
    assert r.exit_code == 0, r.output
    assert len(timed(json.loads(r.stdout))) == 2


def test_a_plain_user_kernel_is_timed_with_its_declared_grid(tmp_path):
    r = run("diff", kernel_path(BY_ID["grid3d"]), "-p", "BLOCK_S=16,32", "--store", tmp_path, "--json", "--table")
    assert r.exit_code == 0, r.output
    rows = timed(json.loads(r.stdout))
    assert all("grid (2, 4, 4)" in v["runtime"]["method"] for v in rows)


def test_module_level_launches_are_not_run_on_the_gpu_either(tmp_path):
    e = BY_ID["tutorial"]
    r = run("dump", kernel_path(e), "--store", tmp_path, *e["flags"])
    assert r.exit_code == 0, r.output
    assert "loaded   definitions only from" in r.output
    # the file's own launch (line 38, called at line 47) is recorded for its values, never run: the
    # tutorial prints its result right after it, and nothing of that reaches the output
    assert "it launched 'add_kernel' (line 38 via line 47), recorded, not run" in r.output
    assert "The maximum difference between torch and triton" not in r.output
    assert "loaded on the device:" in r.output
