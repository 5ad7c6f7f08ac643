"""The spine-triton stand-in (tests/spine_plugin) installed on a GPU host with Triton 3.6: kinspect
activates a by-hand CPU backend's driver only when no driver is active, so with a GPU it never takes
the GPU's place; a program that activates the CPU backend itself is still captured on it."""

import json
import sys

from kinspect.store import read_records
from tests.test_spine_live import kinspect, spine  # noqa: F401  (the fixture)


def test_the_gpu_stays_the_device_with_a_cpu_backend_installed(spine, tmp_path):  # noqa: F811
    env, _ = spine
    r = kinspect(env, "bench", "add", "--size", "1048576", "--json", "--store", tmp_path / "out")
    assert r.returncode == 0, r.stderr + r.stdout
    d = json.loads(r.stdout)
    assert d["target"].startswith("cuda:"), d["target"]


def test_a_program_that_activates_the_cpu_backend_is_captured_on_it(spine, tmp_path):  # noqa: F811
    env, script = spine
    r = kinspect(env, "capture", "--store", tmp_path / "out", "--", sys.executable, script)
    assert r.returncode == 0, r.stderr
    [v] = read_records(tmp_path / "out")
    assert str(v.target) == "cpu:spacemit-x60" and v.launches.calls == 3
