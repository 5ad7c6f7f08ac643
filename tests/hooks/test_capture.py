"""Capture: the listener chains and restores; `kinspect capture -- script` records what it compiles."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import triton
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import kinspect
from kinspect.analysis.derived import complete
from kinspect.files.store import read_records
from tests.jit_kernels import _double
from tests.helpers import ROOT



def _compile(block, target=GPUTarget("cuda", 90, 32)):
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    return triton.compile(ASTSource(_double, sig, constexprs={"BLOCK": block}), target=target)


def test_capture_records_and_chains_previous_listener(tmp_path, private_triton_cache):
    seen = []

    def theirs(**kw):
        seen.append(kw["metadata"]["name"])

    knobs.compilation.listener = theirs
    try:
        with kinspect.capture(tmp_path / "out") as rec:
            assert knobs.compilation.listener is not theirs
            _compile(128)
            _compile(128)  # a cache hit: recorded, and the first record's compile times kept
        assert knobs.compilation.listener is theirs
    finally:
        knobs.compilation.listener = None
    assert seen == ["_double", "_double"], "the previous listener still sees every compile"
    assert [v.cache_hit for v in rec.variants] == [False, False]
    [stored] = read_records(tmp_path / "out")
    assert stored.times is not None and stored.times.total_us > 0
    assert {"ttir", "ptx", "cubin"} <= {s.name for s in stored.stages}
    # Inside the user's compile capture only links the stage files: SASS is made at first read, into
    # kinspect's cache, and the store is left as it was.
    assert "sass" not in {s.name for s in stored.stages}
    before = sorted(p.name for p in Path(stored.path).iterdir())
    whole = complete(stored)
    assert whole.stage("sass") is not None and "HGMMA" not in Path(whole.stage("sass").file).read_text()
    assert Path(whole.stage("sass").file).read_text().count("LDG") >= 1
    assert sorted(p.name for p in Path(stored.path).iterdir()) == before


def test_capture_restores_listener_on_exception(tmp_path, private_triton_cache):
    def theirs(**kw):
        pass

    knobs.compilation.listener = theirs
    try:
        with pytest.raises(ZeroDivisionError):
            with kinspect.capture(tmp_path / "out"):
                _compile(64)
                1 / 0
        assert knobs.compilation.listener is theirs
    finally:
        knobs.compilation.listener = None


def test_capture_restores_none(tmp_path, private_triton_cache):
    assert knobs.compilation.listener is None
    with kinspect.capture(tmp_path / "out"):
        pass
    assert knobs.compilation.listener is None


def test_a_recording_failure_does_not_break_the_users_compile(tmp_path, private_triton_cache, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with kinspect.capture(blocker / "out") as rec:
        kernel = _compile(32)  # the user's compile goes on
    assert kernel.asm["ptx"]
    assert rec.errors and "could not record" in capsys.readouterr().err


def test_capture_cli_runs_a_script_and_records_every_kernel(tmp_path):
    out = tmp_path / "out"
    env_cache = tmp_path / "cache"
    proc = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(out), "--",
                           sys.executable, str(ROOT / "samples" / "aot_compile.py")],
                          capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "TRITON_CACHE_DIR": str(env_cache)})
    assert proc.returncode == 0, proc.stderr
    variants = list(read_records(out))
    # the two ahead-of-time targets; on a GPU machine the sample also launches (a third variant)
    assert {"cuda:90", "hip:gfx942"} <= {str(v.target) for v in variants}
    assert {v.offline for v in variants} == {False}  # captured as compiled, nothing offline about it
    assert all(v.origin == "capture" and v.kernel == "scale_kernel" for v in variants)
    assert re.search(r"kinspect: [23] variant\(s\) recorded", proc.stderr)


def test_capture_survives_find_spec_before_import(tmp_path):
    """torch looks triton up with importlib.util.find_spec long before importing it."""
    script = tmp_path / "probe.py"
    script.write_text("import importlib.util, runpy\n"
                      "assert importlib.util.find_spec('triton') is not None\n"
                      f"runpy.run_path({str(ROOT / 'samples' / 'aot_compile.py')!r}, run_name='__main__')\n")
    proc = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(tmp_path / "out"), "--",
                           sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "TRITON_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    assert {"cuda:90", "hip:gfx942"} <= {str(v.target) for v in read_records(tmp_path / "out")}


def test_capture_cli_passes_the_scripts_exit_code(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import sys; sys.exit(3)\n")
    proc = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(tmp_path / "out"), "--",
                           sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3
    assert "nothing recorded: the program stopped (exit 3)" in proc.stderr
