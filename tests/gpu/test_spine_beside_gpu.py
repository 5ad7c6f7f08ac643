"""The spine-triton stand-in (tests/spine_plugin) installed on a GPU host with Triton 3.6: kinspect
activates a by-hand CPU backend's driver only when no driver is active, so with a GPU it never takes
the GPU's place; a program that activates the CPU backend itself is still captured on it. Both commands
check what ran where, not how long it took, so they run beside the first file's cases (conftest)."""

import json
import sys

import pytest

from kinspect.files.store import read_records
from tests.gpu.conftest import beside_first, beside_result
from tests.helpers import kinspect_process as kinspect, make_spine


@beside_first
def run_commands(tmp_path_factory) -> dict:
    """{"bench" | "capture": (the finished command, its store)}, one after the other, with the plugin's
    environment (its own Triton and kinspect caches)."""
    env, script = make_spine(tmp_path_factory)
    tmp = tmp_path_factory.mktemp("spine-beside")
    return {"bench": (kinspect(env, "bench", "add", "--size", "1048576", "--json", "--store", tmp / "bench"),
                      tmp / "bench"),
            "capture": (kinspect(env, "capture", "--store", tmp / "capture", "--", sys.executable, script),
                        tmp / "capture")}


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict:
    return beside_result(run_commands, tmp_path_factory)


def test_the_gpu_stays_the_device_with_a_cpu_backend_installed(ran):
    r, _ = ran["bench"]
    assert r.returncode == 0, r.stderr + r.stdout
    d = json.loads(r.stdout)
    assert d["target"].startswith("cuda:"), d["target"]


def test_a_program_that_activates_the_cpu_backend_is_captured_on_it(ran):
    r, store = ran["capture"]
    assert r.returncode == 0, r.stderr
    [v] = read_records(store)
    assert str(v.target) == "cpu:spacemit-x60" and v.launches.calls == 3
