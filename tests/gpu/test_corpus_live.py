"""The corpus on a real GPU: user kernels' variants timed on their example arguments, an autotuned
kernel's configs timed and ranked beside what Triton's own autotuner picks, module-level code that
launches never run while kinspect loads the file.

The five commands share nothing, so they run side by side, each `kinspect` in a process of its own
(most of a diff's time is its compile workers starting and compiling, and Triton's autotuner compiling
the configs again). Their timings are checked for their shape (quantiles in order, a fastest config
named, the autotuner's pick named), never for their values, which sharing the GPU would move."""

import json
import os
import re
from pathlib import Path

import pytest

from tests.corpus.manifest import CORPUS, kernel_path
from tests.gpu.conftest import beside_first, beside_result, kinspect_side_by_side

BY_ID = {e["id"]: e for e in CORPUS}
ROOT = Path(__file__).parents[2]
COMMANDS = {
    "autotune": ["diff", kernel_path(BY_ID["autotune"]), "--json", "--table"],
    "host_descriptor": ["diff", kernel_path(BY_ID["host_descriptor"]), "--json", "--table"],
    "device_descriptor": ["diff", kernel_path(BY_ID["device_descriptor"]), "-p", "BLOCK_M=32,64", "--json", "--table"],
    "grid3d": ["diff", kernel_path(BY_ID["grid3d"]), "-p", "BLOCK_S=16,32", "--json", "--table"],
    "tutorial": ["dump", kernel_path(BY_ID["tutorial"]), *BY_ID["tutorial"]["flags"]],
}


@beside_first
def run_commands(tmp_path_factory) -> dict:
    """{command's name: (exit code, stdout, stdout and stderr)}, every command run at once, with a kinspect
    cache of their own (they may run beside the first file's cases)."""
    tmp = tmp_path_factory.mktemp("corpus-live")
    env = {**os.environ, "KINSPECT_CACHE_DIR": str(tmp / "kinspect-cache")}
    done = kinspect_side_by_side({name: ([*argv, "--store", tmp / name], env) for name, argv in COMMANDS.items()},
                                 timeout=300, cwd=ROOT)
    return {name: (r.returncode, r.stdout, r.stdout + r.stderr) for name, r in done.items()}


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict:
    return beside_result(run_commands, tmp_path_factory)


def result(ran: dict, name: str) -> str:
    code, stdout, output = ran[name]
    assert code == 0, output[-4000:]
    return stdout


def timed(d: dict) -> list[dict]:
    for v in d["variants"]:
        t = v["runtime"]
        assert t is not None, (v["label"], d["notes"])
        assert 0 < t["p20_ms"] <= t["median_ms"] <= t["p80_ms"]
        assert "do_bench" in t["method"]
    return d["variants"]


def test_autotuned_configs_are_timed_and_ranked_beside_the_autotuners_pick(ran):
    d = json.loads(result(ran, "autotune"))
    rows = timed(d)
    assert [v["config"] for v in rows] == [0, 1, 2, 3]
    assert all(v["runtime"]["tflop_per_s"] > 0 for v in rows)        # the file's flops formula
    fastest = min(rows, key=lambda v: v["runtime"]["median_ms"])["config"]
    notes = "\n".join(d["notes"])
    assert f"matmul_kernel: fastest config {fastest} (" in notes and "faster than the slowest" in notes
    assert "matmul_kernel: Triton's autotuner picks config " in notes and "for key M=1024, N=1024, K=64" in notes
    print(notes)


def test_host_descriptors_with_a_pre_hook_are_timed_per_config(ran):
    d = json.loads(result(ran, "host_descriptor"))
    assert [v["config"] for v in timed(d)] == [0, 1]
    assert any("Triton's autotuner picks config" in n for n in d["notes"]), d["notes"]


def test_in_kernel_descriptors_get_a_scratch_allocator(ran):
    assert len(timed(json.loads(result(ran, "device_descriptor")))) == 2


def test_a_plain_user_kernel_is_timed_with_its_declared_grid(ran):
    rows = timed(json.loads(result(ran, "grid3d")))
    assert all("grid (2, 4, 4)" in v["runtime"]["method"] for v in rows)


def test_module_level_launches_are_not_run_on_the_gpu_either(ran):
    result(ran, "tutorial")
    output = ran["tutorial"][2]
    # the file's own launch (line 38, called at line 47) and, where its benchmark's imports are there,
    # the benchmark's: recorded for their values, never run (how far the import got depends on the host)
    assert re.search(r"launched(?: [\d,]+ launch(?:es)?:)? 'add_kernel' \(line 38 via line 47\)(?: and [^,]*)?, "
                     r"recorded, not run", output), output
    assert "loaded on the device:" in output
