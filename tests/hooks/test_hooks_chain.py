"""Capture next to other tools' hooks (tritonparse, from the registry: the `test` extra): both get
every compile, and afterwards every Triton knob, hook and environment variable is as it was, also
when the code under capture raises or calls sys.exit."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import triton
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import kinspect
from kinspect.files.store import read_records
from tests.jit_kernels import _double
from tests.helpers import ROOT

SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


def snapshot() -> dict:
    """Every piece of global state a capture could touch."""
    return {"listener": knobs.compilation.listener, "compilation class": type(knobs.compilation),
            "autotuning listener": getattr(knobs.autotuning, "listener", None),
            "jit_post_compile_hook": knobs.runtime.jit_post_compile_hook,
            "launch_enter_hook": knobs.runtime.launch_enter_hook,
            "launch_exit_hook": knobs.runtime.launch_exit_hook,
            "cache dir": knobs.cache.dir, "environ": dict(os.environ)}


def _trace_text(folder: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in folder.glob("*.ndjson*"))


@pytest.fixture
def tritonparse_installed(tmp_path):
    """tritonparse's structured logging with its launch hooks, installed before kinspect's capture."""
    sl = pytest.importorskip("tritonparse.structured_logging", reason="tritonparse (the test extra) is not installed")
    original = snapshot()
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path / "triton-cache")
        sl.init(str(tmp_path / "trace"), enable_trace_launch=True)
        try:
            yield tmp_path / "trace"
        finally:
            sl.clear_logging_config()
            knobs.compilation.listener = original["listener"]
            knobs.runtime.jit_post_compile_hook = original["jit_post_compile_hook"]
            knobs.runtime.launch_enter_hook = original["launch_enter_hook"]
            knobs.runtime.launch_exit_hook = original["launch_exit_hook"]
            if hasattr(knobs.autotuning, "listener"):
                knobs.autotuning.listener = original["autotuning listener"]
            os.environ.clear()
            os.environ.update(original["environ"])


@pytest.mark.parametrize("ending", ["normal", "exception", "sys.exit"])
def test_capture_chains_tritonparse_and_restores_everything(tritonparse_installed, tmp_path, ending):
    before = snapshot()
    assert before["listener"] is not None and before["launch_enter_hook"] is not None, "tritonparse is installed"
    with pytest.raises((RuntimeError, SystemExit)) if ending != "normal" else _nothing():
        with kinspect.capture(tmp_path / "out") as rec:
            triton.compile(ASTSource(_double, SIG, constexprs={"BLOCK": 16}), target=GPUTarget("cuda", 90, 32))
            if ending == "exception":
                raise RuntimeError("the user's code failed")
            if ending == "sys.exit":
                sys.exit(3)
    assert snapshot() == before
    if ending == "normal":
        assert [v.kernel for v in rec.variants] == ["_double"]
    assert [v.kernel for v in read_records(tmp_path / "out")] == ["_double"], "what was recorded is kept"
    assert '"_double"' in _trace_text(tritonparse_installed), "tritonparse got the compile too"


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


SCRIPT = """
import sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from tritonparse import structured_logging

sys.path.insert(0, {root!r})
from tests.jit_kernels import _double

structured_logging.init(sys.argv[1], enable_trace_launch=True)  # after `import triton`: after kinspect
triton.compile(ASTSource(_double, {sig!r}, constexprs={{"BLOCK": 32}}), target=GPUTarget("cuda", 90, 32))
structured_logging.clear_logging_config()                       # sets the listener to None
triton.compile(ASTSource(_double, {sig!r}, constexprs={{"BLOCK": 64}}), target=GPUTarget("cuda", 90, 32))
if sys.argv[2] == "raise":
    raise RuntimeError("the script failed")
sys.exit(int(sys.argv[2]))
"""


@pytest.mark.parametrize("ending, code", [("0", 0), ("3", 3), ("raise", 1)])
def test_capture_cli_keeps_recording_when_the_script_installs_tritonparse(tmp_path, ending, code):
    """tritonparse's init() replaces Triton's one listener slot; under `kinspect capture` it becomes
    the one kinspect calls after itself, and its clear_logging_config() clears only that."""
    pytest.importorskip("tritonparse.structured_logging", reason="tritonparse (the test extra) is not installed")
    script = tmp_path / "script.py"
    script.write_text(SCRIPT.format(root=str(ROOT), sig=SIG))
    before = dict(os.environ)
    proc = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(tmp_path / "out"), "--",
                           sys.executable, str(script), str(tmp_path / "trace"), ending],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == code, proc.stderr
    assert ("RuntimeError: the script failed" in proc.stderr) == (ending == "raise")
    blocks = sorted(v.constexprs["BLOCK"] for v in read_records(tmp_path / "out"))
    assert blocks == [32, 64], proc.stderr
    assert "kinspect: 2 variant(s) recorded" in proc.stderr
    assert _trace_text(tmp_path / "trace").count('"event_type":"compilation"') == 1, "tritonparse saw its one"
    assert dict(os.environ) == before


@pytest.mark.parametrize("failing", ["kinspect.hooks.autotune.AutotuneRecorder.install",
                                     "kinspect.hooks.tuning.TuningScopes.install"])
def test_a_hook_that_fails_to_install_leaves_nothing_patched(tmp_path, monkeypatch, failing):
    """Each hook is undone as soon as it is installed (an ExitStack): one failing half-way leaves the
    listener, the launch hooks, the launch metadata and the start-up clock as they were."""
    from triton.compiler.compiler import CompiledKernel

    module, _, attr = failing.rpartition(".")
    owner = getattr(__import__(module.rpartition(".")[0], fromlist=["x"]), module.rpartition(".")[2])

    def broken(self):
        raise RuntimeError("this hook cannot be installed")

    monkeypatch.setattr(owner, attr, broken)
    before, metadata, run = snapshot(), CompiledKernel.launch_metadata, CompiledKernel.__dict__["run"]
    with pytest.raises(RuntimeError, match="cannot be installed"):
        with kinspect.capture(tmp_path / "out"):
            pass
    assert snapshot() == before
    assert CompiledKernel.launch_metadata is metadata
    # the observer patches CompiledKernel.run, then watches Inductor through TuningScopes: a failure
    # there once left the patched property behind (a later test saw it)
    assert CompiledKernel.__dict__["run"] is run
