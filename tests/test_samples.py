"""The samples' CPU parts, run as a user runs them, against samples/expected/NAME.txt.

Each sample runs in a child process with no GPU visible (CUDA_VISIBLE_DEVICES and friends empty),
in private Triton, inductor and kinspect caches, so the output is what a CPU-only machine prints
whatever this machine has. Figures that move from run to run print as placeholders (`--stable`,
samples/_expect.py); everything else must match the expected file line for line.

After a deliberate change, regenerate the expected files with the same commands:

    KINSPECT_REGENERATE=1 python -m pytest -q tests/test_samples.py
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow       # subprocesses or many compiles: -m 'not slow' leaves it out

ROOT = Path(__file__).resolve().parent.parent
SAMPLES_DIR = ROOT / "samples"
EXPECTED = SAMPLES_DIR / "expected"
TIMEOUT_S = 600

# sample -> its arguments here; samples/README.md lists the same commands
SAMPLES = {
    "aot_compile": [],
    "torch_compile_capture": [],
    "gpt2_train": [],
    "k1_rvv_question": ["--stable"],
    "gelu_four_ways": ["--stable"],
    "square_block_size": ["--stable"],
    "softmax_rows": [],
    # 16..64: BLOCK_SIZE 128 and 256 take tens of seconds to compile on a small CPU
    "compile_time_vs_block": ["--stable", "--values", "16,32,64"],
}
NO_GPU = {"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": "", "ROCR_VISIBLE_DEVICES": ""}
# What the expected files were made with: another Triton or LLVM makes other code (the GPU host has
# Triton 3.6), so there the samples must still run, but their output is not compared.
VERSIONS = EXPECTED / "VERSIONS"


def versions() -> str:
    import llvmlite
    import triton

    return f"triton {triton.__version__}\nllvmlite {llvmlite.__version__}\n"


def command(name: str) -> list[str]:
    return [sys.executable, str(SAMPLES_DIR / f"{name}.py"), *SAMPLES[name]]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every sample started at once (most of their time is spent in child compilers and waiting),
    each in its own caches; {name: Popen}."""
    started = {}
    for name in SAMPLES:
        tmp = tmp_path_factory.mktemp(name)
        env = {**os.environ, **NO_GPU, "TRITON_CACHE_DIR": str(tmp / "triton"),
               "TORCHINDUCTOR_CACHE_DIR": str(tmp / "inductor"), "KINSPECT_CACHE_DIR": str(tmp / "kinspect"),
               "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
               "PYTHONWARNINGS": "ignore"}
        env.pop("KINSPECT_SAMPLES_STABLE", None)
        started[name] = subprocess.Popen(command(name), cwd=tmp, env=env, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True)
    yield started
    for proc in started.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("name", list(SAMPLES))
def test_sample_prints_its_expected_output(name, runs):
    out, err = runs[name].communicate(timeout=TIMEOUT_S)
    assert runs[name].returncode == 0, f"{' '.join(command(name))} exited {runs[name].returncode}:\n{err[-3000:]}"
    expected_file = EXPECTED / f"{name}.txt"
    if os.environ.get("KINSPECT_REGENERATE") == "1":
        expected_file.parent.mkdir(exist_ok=True)
        expected_file.write_text(out)
        VERSIONS.write_text(versions())
        return
    if VERSIONS.read_text() != versions():
        pytest.skip(f"it ran; its output is not compared: samples/expected/ was made with "
                    f"{VERSIONS.read_text().strip()}, this is {versions().strip()}".replace("\n", ", "))
    assert expected_file.is_file(), f"no {expected_file.relative_to(ROOT)}: KINSPECT_REGENERATE=1 writes it"
    expected = expected_file.read_text()
    if out != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), out.splitlines(True),
                                            f"samples/expected/{name}.txt", f"{name}.py {' '.join(SAMPLES[name])}"))
        pytest.fail(f"samples/{name}.py printed something else than its expected output "
                    f"(KINSPECT_REGENERATE=1 rewrites it after a deliberate change):\n{diff}", pytrace=False)


def test_every_sample_has_an_expected_output():
    scripts = sorted(p.stem for p in SAMPLES_DIR.glob("*.py") if not p.name.startswith("_"))
    assert scripts == sorted(SAMPLES), "a sample without an entry in SAMPLES (and an expected output), or the reverse"
    assert sorted(p.stem for p in EXPECTED.glob("*.txt")) == sorted(SAMPLES)


def test_stable_mode_hides_volatile_figures_and_only_those(monkeypatch):
    sys.path.insert(0, str(SAMPLES_DIR))
    try:
        import _expect
    finally:
        sys.path.remove(str(SAMPLES_DIR))
    monkeypatch.setattr(_expect, "stable", False)
    assert (_expect.ms(0.1234), _expect.ms(1234.5), _expect.gbps(3944.2), _expect.gbps(0.51)) == \
        ("0.123", "1,234", "3,944", "0.51")
    assert (_expect.error(9.4e-8), _expect.ratio(2.061), _expect.text("/tmp/x", "path")) == ("9.4e-08", "2.06", "/tmp/x")
    monkeypatch.setattr(_expect, "stable", True)
    assert (_expect.ms(0.1234), _expect.gbps(3944.2), _expect.error(1e-7), _expect.text("/tmp/x", "path")) == \
        ("<ms>", "<GB/s>", "<err>", "<path>")
    assert _expect.ms(None) == "-"  # not measured is not volatile


def test_the_stable_flag_reaches_the_helper():
    """--stable on the command line, not only the environment variable, switches a sample's output."""
    env = {**os.environ, **NO_GPU, "PYTHONPATH": str(ROOT)}
    env.pop("KINSPECT_SAMPLES_STABLE", None)
    code = ("import sys; sys.path.insert(0, {d!r}); import argparse, _expect; ap = argparse.ArgumentParser(); "
            "_expect.add_flag(ap); _expect.configure(ap.parse_args(sys.argv[1:])); print(_expect.ms(1.5))")
    for args, shown in (([], "1.5"), (["--stable"], "<ms>")):
        proc = subprocess.run([sys.executable, "-c", code.format(d=str(SAMPLES_DIR)), *args], env=env,
                              capture_output=True, text=True, timeout=60)
        assert proc.stdout.strip() == shown, proc.stderr


def test_k1_sample_prints_the_compile_times_a_captured_folder_recorded(tmp_path, capsys):
    """A kinspect store captured on the board keeps Triton's time per stage; the sample prints them."""
    import importlib.util
    from types import SimpleNamespace

    from triton.backends.compiler import GPUTarget

    from kinspect.hooks.listener import Recorder
    from kinspect.files.store import Store
    from tests.conftest import CPU_FIXTURES
    from tests.helpers import sections

    parts = sections(CPU_FIXTURES / "triton-cpu-arm64-neon" / "sum_64_torch.float32_nomask.asm")
    src = tmp_path / "triton-cache"
    src.mkdir()
    group = {}
    for fname, text in {"sum_kernel.llir": parts["LLVM IR"], "sum_kernel.asm": parts["ASM"]}.items():
        (src / fname).write_text(text)
        group[fname] = str(src / fname)
    times = SimpleNamespace(ir_initialization=1500, lowering_stages=[("ttir", 2000), ("llir", 250)], store_results=0)
    Recorder(Store(tmp_path / "board"), strict=True)(
        src=None, metadata={"name": "sum_kernel", "hash": "h", "target": GPUTarget("cpu", "aarch64", 0)},
        metadata_group=group, times=times, cache_hit=False)
    spec = importlib.util.spec_from_file_location("k1_rvv_question", SAMPLES_DIR / "k1_rvv_question.py")
    sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sample)
    assert sample.main([str(tmp_path / "board"), "--jit-kernel", "add"]) == 0
    out = capsys.readouterr().out
    assert "sum_kernel as recorded in FOLDER (cpu:aarch64): JIT 3.75 ms = source 1.5, ttir 2, llir 0.25" in out
    assert "FOLDER records no compile times" not in out
