"""One executor for fan-out (kinspect.core.executor): local processes and one worker per GPU, pinned; a
Ray cluster (the optional extra) giving the same sweep as the local compile; bad --cluster values are one
line."""

import json

import pytest
from click.testing import CliRunner

from kinspect.cli import main
from kinspect.core.executor import LocalExecutor, _over_gpus, executor, resolve


def test_gpu_jobs_run_one_per_gpu_each_worker_pinned_and_pins_are_kept():
    items = [()] * 6
    results = _over_gpus("kinspect.core.executor:probe", items, [0, 1], {0: 1, 5: 0}, None)
    assert [r.error for r in results] == [None] * 6
    seen = [r.value for r in results]
    assert set(seen) == {"0", "1"} and seen[0] == "1" and seen[5] == "0"
    assert all(r.gpu is not None and str(r.gpu.index) == r.value for r in results)


def test_cpu_jobs_keep_their_order_and_failures_are_results():
    ex = LocalExecutor(gpus=[], workers=2)
    got = ex.map("kinspect.core.executor:visible_gpus", [(), ()])
    assert [r.value for r in got] == [[], []]
    bad = ex.map("kinspect.core.executor:resolve", [("os:system",)])
    assert bad[0].value is None and "kinspect's own functions only" in bad[0].error
    with pytest.raises(ValueError):
        resolve("builtins:eval")


def test_a_cluster_is_named_or_refused_in_one_line():
    with pytest.raises(ValueError, match="give ray"):
        executor("dask")
    r = CliRunner().invoke(main, ["diff", "softmax", "-p", "BLOCK_N=256,512", "--no-bench", "--cluster", "dask"])
    assert r.exit_code == 2 and r.output.startswith("error: --cluster dask") and "Traceback" not in r.output


def test_a_sweep_on_ray_is_the_local_sweep(tmp_path):
    """Ray's local mode on this 2-core machine: the same variants (folders) and the same figures as the
    local executor's compile."""
    pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'kinspect[ray]')")
    args = ["diff", "softmax", "-p", "BLOCK_N=128,256", "--num-warps", "4,8", "-t", "cuda:90", "--no-bench",
            "--table", "--json"]
    local = CliRunner().invoke(main, [*args, "--store", str(tmp_path / "local")])
    assert local.exit_code == 0, local.output
    on_ray = CliRunner().invoke(main, [*args, "--store", str(tmp_path / "ray"), "--cluster", "ray"])
    assert on_ray.exit_code == 0, on_ray.output
    a, b = json.loads(local.stdout), json.loads(on_ray.stdout)
    rows = lambda d: [{k: v for k, v in r.items() if "jit" not in k and k not in ("path", "folder")}  # noqa: E731
                      for r in d["variants"]]
    assert rows(a) == rows(b) and len(rows(a)) == 4
    assert sorted(p.name for p in (tmp_path / "local" / "softmax").iterdir()) == \
        sorted(p.name for p in (tmp_path / "ray" / "softmax").iterdir())
    assert any("compiled on the ray cluster" in n for n in b["notes"])


def test_gpu_jobs_on_ray_go_to_one_actor_per_gpu_and_pins_are_kept():
    """Ray with two logical GPUs on this machine: each GPU job runs in the actor that holds its GPU (Ray
    sets CUDA_VISIBLE_DEVICES for the actor's life), pinned items reach their GPU, and the actors are
    kept between calls, as the local executor's workers are."""
    ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'kinspect[ray]')")
    from kinspect.core.executor import RayExecutor

    if ray.is_initialized():
        ray.shutdown()
    ex = RayExecutor(num_cpus=2, num_gpus=2)
    try:
        assert ex.gpus == [0, 1]
        results = ex.map("kinspect.core.executor:probe", [()] * 6, gpu=True, pin={0: 1, 5: 0})
        assert [r.error for r in results] == [None] * 6
        seen = [r.value for r in results]
        assert set(seen) == {"0", "1"} and seen[0] == "1" and seen[5] == "0"
        assert all(r.gpu is not None and str(r.gpu.index) == r.value for r in results)
        actors = list(ex._actors)
        again = ex.map("kinspect.core.executor:probe", [()] * 2, gpu=True, pin={0: 0, 1: 1})
        assert [r.value for r in again] == ["0", "1"] and ex._actors == actors
        bad = ex.map("kinspect.core.executor:resolve", [("os:system",)], gpu=True)
        assert bad[0].value is None and "kinspect's own functions only" in bad[0].error
        cpu = ex.map("kinspect.core.executor:probe", [()] * 2)      # the actors hold no CPU a compile needs
        assert [r.error for r in cpu] == [None, None]
    finally:
        ex.close()
        ray.shutdown()
