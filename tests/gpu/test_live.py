"""Live paths on a real GPU (opt-in: `python -m pytest -m gpu tests/gpu`)."""

from pathlib import Path

import torch
from click.testing import CliRunner

import kinspect
from kinspect.cli import main
from kinspect.files.store import read_records



def test_default_target_is_the_device(tmp_path):
    r = CliRunner().invoke(main, ["dump", "fused_mm_softmax", "--store", str(tmp_path)])
    assert r.exit_code == 0, r.output
    major, minor = torch.cuda.get_device_capability()
    assert f"target   cuda:{major}{minor} (the active device)" in r.output
    [v] = read_records(tmp_path)
    assert not v.offline
    assert v.loaded.registers > 0  # filled only when the binary is loaded on the device
    print(r.output)


def test_offline_target_on_a_gpu_machine_restores_the_driver(tmp_path):
    from triton.runtime import driver

    before = driver.active
    r = CliRunner().invoke(main, ["dump", "add", "-t", "hip:gfx942", "--store", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert driver.active is before


def test_live_capture_of_a_launched_kernel(tmp_path):
    from kinspect.kernels import get

    spec = get("softmax")
    ex = spec.example("256x1000", torch.float32, "cuda")
    with kinspect.capture(tmp_path) as rec:
        spec.fn[ex.grid](**ex.args, **ex.constexprs)
    torch.testing.assert_close(ex.args["y_ptr"], spec.reference(ex.args["x_ptr"]))
    assert rec.variants, "the launched kernel was recorded"
    v = rec.variants[-1]
    assert v.target.backend == "cuda" and not v.offline
    assert {"ttir", "ptx", "cubin"} <= {s.name for s in v.stages}
    from kinspect.analysis.derived import complete

    assert complete(v).stage("sass") is not None, "SASS is derived at first read, outside the user's compile"
    from kinspect.files.store import read_record

    assert read_record(Path(v.path)).launches.calls == 1, "its launch, merged into the record when the block ended"


def test_capture_records_torch_compile_kernels(cold_capture):
    store, stderr = cold_capture
    variants = list(read_records(store))
    assert variants, "inductor's Triton kernels were recorded"
    assert all(v.target.backend == "cuda" for v in variants)
    assert any(v.kernel.startswith("triton_") for v in variants)
