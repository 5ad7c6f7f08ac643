"""`kinspect dump` on real offline compiles (no GPU): stages, specialization, variants, bad input."""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from kinspect.cli import main
from tests.helpers import one_error_line, run, TESTS

DATA = TESTS / "data"


@pytest.mark.parametrize("target, stages", [
    ("cuda:90", {"ttir", "ttgir", "llir", "ptx", "cubin", "sass"}),
    ("cuda:80", {"ttir", "ttgir", "llir", "ptx", "cubin", "sass"}),
    ("hip:gfx942", {"ttir", "ttgir", "llir", "amdgcn", "hsaco"}),
])
def test_offline_variant_has_every_stage(real_variant, target, stages):
    v = real_variant("fused_mm_softmax", target, BLOCK_SIZE=64)
    assert stages <= {s.name for s in v.stages}
    assert v.offline and str(v.target) == target
    for s in v.stages:
        assert Path(v.path, s.file).stat().st_size == s.bytes > 0 or s.name == "json"
    assert v.times is not None and {"ttir", "ttgir", "llir"} <= {name for name, _ in v.times.stages}


def test_specialization_is_the_jits(real_variant):
    """Through warmup with real tensors the pointers are 16-byte aligned, so the JIT marks them
    divisible by 16 and SASS loads 128 bits at a time (plain ASTSource without attrs gives LDG.E)."""
    v = real_variant("fused_mm_softmax", "cuda:90", BLOCK_SIZE=64)
    assert v.attributes["a_ptr"]["tt.divisibility"] == 16
    assert v.signature["a_ptr"] == "*fp32"
    assert v.constexprs == {"BLOCK_SIZE": 64}
    assert v.attributes["stride_ak"] == {"constant": 1}
    sass = Path(v.path, v.stage("sass").file).read_text()
    assert "LDG.E.128" in sass and "HGMMA" in sass
    assert re.search(r'//## File ".*fused_mm_softmax.py", line \d+', sass), "nvdisasm line markers kept"


def test_record_round_trips(real_variant):
    from kinspect.files.store import read_record

    v = real_variant("add", "cuda:90")
    again = read_record(Path(v.path))
    assert again == v
    data = json.loads(Path(v.path, "record.json").read_text())
    assert data["record_version"] == 2 and "path" not in data


def test_a_version_1_record_still_reads(real_variant, tmp_path):
    """Stores written before launch records (record_version 1: no `launches`, no `startup_us`)."""
    import shutil

    from kinspect.files.store import read_record

    v = real_variant("add", "cuda:90")
    old = tmp_path / "old"
    shutil.copytree(v.path, old)
    data = json.loads((old / "record.json").read_text())
    data["record_version"] = 1
    data.pop("launches")
    data["times"].pop("startup_us")
    (old / "record.json").write_text(json.dumps(data))
    again = read_record(old)
    assert again.launches is None and again.times.startup_us == 0
    assert again.times.total_us == v.times.total_us and again.stages == v.stages


def test_dump_cli_summary(tmp_path):
    r = run("dump", "fused_mm_softmax", "-t", "cuda:90", "-p", "BLOCK_SIZE=32", "--store", tmp_path)
    assert r.exit_code == 0, r.output
    assert "target   cuda:90 (offline)" in r.output
    for stage in ("ttir", "ttgir", "llir", "ptx", "cubin", "sass"):
        assert re.search(rf"^  {stage}\s+(\d+|-)\s+", r.output, re.M), stage
    assert "JIT total" in r.output


def test_default_target_without_a_device_is_cuda90_offline(tmp_path):
    from kinspect.compile.targets import active_device_target

    if active_device_target() is not None:
        pytest.skip("a device is present: the default is the device (tests/gpu checks that)")
    r = run("dump", "add", "--store", tmp_path)
    assert "target   cuda:90 (offline: no device here)" in r.output


def test_block_sizes_land_in_separate_folders(tmp_path):
    for bs in (32, 64):
        assert run("dump", "fused_mm_softmax", "-t", "cuda:90", "-p", f"BLOCK_SIZE={bs}", "--store", tmp_path).exit_code == 0
    folders = sorted(p.name for p in (tmp_path / "fused_mm_softmax").iterdir())
    assert len(folders) == 2
    assert folders[0].startswith("cuda-90_BLOCK_SIZE-32_") and folders[1].startswith("cuda-90_BLOCK_SIZE-64_")


def test_two_targets_do_not_overwrite(tmp_path):
    for t in ("cuda:90", "hip:gfx942"):
        assert run("dump", "add", "-t", t, "--store", tmp_path).exit_code == 0
    folders = {p.name.split("_")[0]: p for p in (tmp_path / "add").iterdir()}
    assert set(folders) == {"cuda-90", "hip-gfx942"}
    assert not list(folders["cuda-90"].glob("*.amdgcn")) and not list(folders["hip-gfx942"].glob("*.cubin"))


def test_num_warps_option(tmp_path):
    r = run("dump", "softmax", "-t", "cuda:90", "--num-warps", "8", "--size", "64x256", "--store", tmp_path)
    assert r.exit_code == 0, r.output
    assert "num_warps=8" in r.output


def test_stage_option_prints_plain_text_when_not_a_tty(tmp_path):
    r = run("dump", "add", "-t", "cuda:90", "--stage", "ptx", "--store", tmp_path)
    assert r.exit_code == 0
    assert ".visible .entry add_kernel" in r.output and "\x1b[" not in r.output


def test_user_kernel_with_cli_args(tmp_path):
    r = run("dump", f"{DATA}/user_kernels.py:good_kernel", "--arg", "x_ptr=*fp32", "--arg", "y_ptr=*fp32",
            "--arg", "n=i32:100", "-p", "BLOCK=128", "-t", "hip:gfx942", "--store", tmp_path)
    assert r.exit_code == 0, r.output
    [folder] = (tmp_path / "good_kernel").iterdir()
    record = json.loads((folder / "record.json").read_text())
    assert record["signature"]["x_ptr"] == "*fp32" and record["constexprs"] == {"BLOCK": 128}
    assert "tt.divisibility" not in record["attributes"].get("n", {})  # 100 is not a multiple of 16


def test_user_kernel_declares_its_examples(tmp_path):
    r = run("dump", f"{DATA}/user_kernels.py:good_kernel", "--store", tmp_path)
    assert r.exit_code == 0, r.output
    [folder] = (tmp_path / "good_kernel").iterdir()
    record = json.loads((folder / "record.json").read_text())
    assert record["signature"]["x_ptr"] == "*fp16" and record["constexprs"] == {"BLOCK": 512}
    assert record["attributes"]["n"]["tt.divisibility"] == 16


@pytest.mark.parametrize("args, needles", [
    (["dump", "no_such_kernel"], ["kernel 'no_such_kernel' not found"]),
    (["dump", "fused_mm_sofmax"], ["did you mean 'fused_mm_softmax'"]),
    (["dump", "add", "-t", "cuda:x"], ["cuda:90", "hip:gfx942"]),
    (["dump", "add", "-t", "tpu:v5"], ["unknown target 'tpu:v5'", "cuda:80"]),
    (["dump", "add", "-p", "BLOCK_SIZE"], ["not NAME=VALUE"]),
    (["dump", "add", "-p", "BLOCK=4"], ["no constexpr 'BLOCK'", "BLOCK_SIZE"]),
    (["dump", "add", "--arg", "x=*fp32"], ["--arg is for user kernels"]),
    (["dump", f"{DATA}/user_kernels.py:good_kernel", "--arg", "x_ptr=*fp33"], ["unknown type 'fp33'"]),
    (["dump", f"{DATA}/user_kernels.py:good_kernel", "--arg", "n=i32:many"], ["not an integer"]),
    (["dump", f"{DATA}/user_kernels.py:bad_kernel"], ["failed to compile at", "user_kernels.py:9",
                                                  "--arg 'x_ptr=*fp32' --arg n=i32:1024 -p BLOCK=64"]),
    (["dump", f"{DATA}/user_kernels.py:goo_kernel"], ["did you mean 'good_kernel'"]),
    (["dump", f"{DATA}/nothere.py:k"], ["not found"]),
    (["dump", "add", "--stage", "cubin"], ["is binary"]),
    (["dump", "add", "--stage", "ptxx"], ["did you mean 'ptx'"]),
])
def test_bad_input_is_one_line(tmp_path, args, needles):
    one_error_line(run(*args, "--store", tmp_path), *needles)


def test_compile_error_names_triton_message_and_python_line(tmp_path):
    src = (DATA / "user_kernels.py").read_text().splitlines()
    line = 1 + next(i for i, ln in enumerate(src) if "tl.store(y_ptr" in ln)
    r = run("dump", f"{DATA}/user_kernels.py:bad_kernel", "--arg", "x_ptr=*fp32", "--arg", "n=i32",
            "-p", "BLOCK=64", "--store", tmp_path)
    one_error_line(r, "failed to compile", f"user_kernels.py:{line}", "y_ptr is not defined")
    assert not list(tmp_path.rglob("*.ttir")), "nothing half-written"


def test_unwritable_output_folder(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    one_error_line(run("dump", "add", "--store", blocker / "out"), "cannot write to", "--store")


def test_debug_shows_the_traceback(tmp_path):
    r = CliRunner().invoke(main, ["--debug", "dump", "no_such_kernel", "--store", str(tmp_path)])
    assert r.exit_code != 0 and r.exception is not None


def test_no_temporary_folders_left(tmp_path):
    run("dump", "add", "--store", tmp_path)
    run("dump", "add", "--store", tmp_path)  # same variant again: replaced, not duplicated
    assert not [p for p in tmp_path.rglob(".*") if p.is_dir()]
    assert len(list((tmp_path / "add").iterdir())) == 1
