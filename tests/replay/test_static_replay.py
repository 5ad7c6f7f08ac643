"""A kernel Inductor's static launcher ran, from its record to a replay, as `--counters` replays it under ncu:
the static launcher passes runtime arguments only (no XBLOCK), and on a warm cache the variant is recorded
from Triton's cache folder (no compile in the capture). The static path runs on a stand-in CachingAutotuner
and the replay under Triton's interpreter here; on the GPU, tests/gpu/test_counters_live.py. And what
`--counters` says when ncu measured nothing: what the replay printed."""

import os
import stat
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import triton
import triton.language as tl

from kinspect.bench.ncu import measure, nothing_measured
from kinspect.core.errors import KinspectError
from kinspect.hooks.listener import Recorder
from kinspect.hooks.session import finish_launches
from kinspect.hooks.launch_counts import LaunchRecorder
from kinspect.hooks.observe import STATIC, LaunchObserver
from kinspect.files.store import Store, read_records
from tests.dryrun import dry_run
from tests.helpers import ROOT


@triton.jit
def triton_poi_fused_add_mul_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask)
    tmp1 = tmp0 * tmp0
    tmp2 = tmp1 + tmp0
    tl.store(out_ptr0 + (x0), tmp2, xmask)


SIGNATURE = {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32", "XBLOCK": "constexpr"}


def _static_autotuner(observer, kernel, calls, fn=triton_poi_fused_add_mul_0, filename=None):
    """Inductor's CachingAutotuner with one static launcher, as far as the observer reads it: the launcher's
    globals hold `runner` (its StaticallyLaunchedCudaKernel's run, whose object has the hash, name and cubin
    path), its config the constexprs Inductor chose."""

    class StaticKernel:
        hash, name, cubin_path = kernel.hash, kernel.name, kernel.cubin_path

        def run(self, *args):
            calls.append(args)

    launcher = eval("lambda *args, stream: runner(*args)", {"runner": StaticKernel().run})
    launcher._is_static = True
    launcher.config = SimpleNamespace(kwargs={"XBLOCK": 512})

    class CachingAutotuner:
        def __init__(self):
            self.launchers = [launcher]
            self.triton_meta = {"signature": dict(SIGNATURE), "constants": {},     # torch 2.11 with Triton >= 3.3
                                "configs": [{(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]],
                                             (2,): [["tt.divisibility", 16]]}]}
            self.fn = fn
            if filename is not None:
                self.filename = filename          # Inductor's: the kernel module's file

        def run(self, *args, stream, **kwargs):
            return self.launchers[0](*args, stream=stream)

        def _interpret_args_grid(self, args, config):
            return args, ((args[-1] + config.kwargs["XBLOCK"] - 1) // config.kwargs["XBLOCK"], 1, 1)

    CachingAutotuner.run = observer._autotuner_run(CachingAutotuner.run)
    return CachingAutotuner()


@pytest.fixture()
def static_store(tmp_path, monkeypatch) -> Path:
    """A capture of two static launches of a kernel compiled before it (a warm cache): recorded from its
    Triton cache folder at its first launch."""
    return _static_capture(tmp_path, monkeypatch)


def _static_capture(tmp_path, monkeypatch, **autotuner) -> Path:
    from triton import knobs

    from kinspect.compile.driver import fresh_binders

    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(tmp_path / "kcache"))
    x, y = torch.empty(4096), torch.empty(4096)
    with knobs.cache.scope(), fresh_binders(triton_poi_fused_add_mul_0):
        knobs.cache.dir = str(tmp_path / "triton-cache")
        with dry_run():
            compiled = triton_poi_fused_add_mul_0.warmup(x, y, 4096, XBLOCK=512, grid=(8,))
        cubin = next(Path(knobs.cache.dir).rglob(f"{compiled.name}.json")).with_suffix(".cubin")
        kernel = SimpleNamespace(hash=compiled.hash, name=compiled.name, cubin_path=str(cubin))
        store = Store(tmp_path / "out")
        launches = LaunchRecorder(store)
        rec = Recorder(store, launches=launches)
        observer = LaunchObserver(launches, on_first=rec.adopt, on_static=rec.adopt_cached)
        calls = []
        at = _static_autotuner(observer, kernel, calls, **autotuner)
        for _ in range(2):
            at.run(x, y, 4096, stream=0)
        observer.restore()
        finish_launches(launches)
    assert len(calls) == 2 and launches.observed == {STATIC: 1} and not rec.errors, rec.errors
    return tmp_path / "out"


def test_a_static_launch_is_recorded_without_constexprs_and_replays_with_the_records(static_store):
    from kinspect.bench.interpreted_check import interpret
    from kinspect.replay.spec import load

    [v] = read_records(static_store)
    [sig] = v.launches.signatures
    assert [a.name for a in sig.args] == ["in_ptr0", "out_ptr0", "xnumel"] and sig.grid == (8, 1, 1)
    assert v.constexprs == {"XBLOCK": 512} and v.launches.calls == 2
    # Inductor's specialization is kept: a replay builds 16-byte aligned tensors, as the program ran
    assert v.attributes == {n: {"tt.divisibility": 16} for n in ("in_ptr0", "out_ptr0", "xnumel")}
    spec = load(v.path)
    assert {a.name: a.value for a in spec.args if a.kind != "tensor"} == {"xnumel": 4096, "XBLOCK": 512}
    ran = interpret(v.kernel, replay=v.path)
    assert ran.grid == (8, 1, 1) and ran.label == "triton_poi_fused_add_mul_0"


def test_a_kernel_whose_autotuner_came_back_from_a_compile_worker_keeps_its_source(tmp_path, monkeypatch):
    """Inductor drops a JITFunction's Python function before a compile worker pickles its autotuner, and
    the program gets it back without one: on the H200 a warm-cache capture of the GPT-2 program recorded 4
    of the 5 kernels `tune` was asked for with no source to replay them from. The JITFunction's own lines
    and the autotuner's file are recorded instead, and the replay runs from them."""
    import copy

    from kinspect.bench.interpreted_check import interpret

    pickled = copy.copy(triton_poi_fused_add_mul_0)
    pickled.fn = None                                   # as CachingAutotuner.prepare_for_pickle leaves it
    store = _static_capture(tmp_path, monkeypatch, fn=pickled, filename=__file__)
    [v] = read_records(store)
    assert v.source is not None and v.source.file == __file__
    assert v.source.text.startswith("@triton.jit\ndef triton_poi_fused_add_mul_0(")
    assert v.source.line == triton_poi_fused_add_mul_0.starting_line_number
    ran = interpret(v.kernel, replay=v.path)
    assert ran.grid == (8, 1, 1) and ran.label == "triton_poi_fused_add_mul_0"
    # without a file to name, nothing is recorded as the source rather than a guess
    store = _static_capture(tmp_path / "nofile", monkeypatch, fn=pickled)
    [v] = read_records(store)
    assert v.source is None


def test_a_captured_launch_whose_grid_was_not_worked_out_is_not_run(static_store):
    import json

    from kinspect.bench.captured import prepare

    [v] = read_records(static_store)
    record = Path(v.path) / "record.json"
    d = json.loads(record.read_text())
    for s in d["launches"]["signatures"]:
        s["grid"] = [0, 0, 0]
    record.write_text(json.dumps(d))
    with pytest.raises(KinspectError, match=r"grid \(0, 0, 0\), which launches no program"):
        prepare(v.path, device="cpu")


FAKE_NCU = r'''#!{python}
"""Stands in for Nsight Compute that profiles no kernel: it runs the replay it is given and writes no report."""
import subprocess, sys
args = sys.argv[1:]
if "--version" in args:
    print("Version 2025.3.1.0 (build 36398880)")
    sys.exit(0)
app = args[args.index("{python}"):]
proc = subprocess.run(app, capture_output=True, text=True)
sys.stdout.write(proc.stdout)
sys.stderr.write(proc.stderr)
print("==WARNING== No kernels were profiled.")
print("Available Kernels:")
print("  1. vectorized_elementwise_kernel")
'''


def test_when_ncu_measured_nothing_the_error_says_what_the_replay_printed(static_store, tmp_path):
    """On the H200 the replays of static launches failed (no XBLOCK) and the error read only ncu's last line,
    `2. vectorized_elementwise_kernel`. Here the replay (the real child, on a machine without a GPU) fails to
    launch: the error names the kernel and the replay's own error."""
    ncu = tmp_path / "ncu"
    ncu.write_text(FAKE_NCU.format(python=sys.executable))
    ncu.chmod(ncu.stat().st_mode | stat.S_IEXEC)
    [v] = read_records(static_store)
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with pytest.raises(KinspectError) as e:
            measure([v.path], ncu=str(ncu), timeout=300)
    finally:
        for k, x in old.items():
            os.environ.pop(k) if x is None else os.environ.__setitem__(k, x)
    text = str(e.value)
    assert text.startswith("ncu measured nothing (exit 0): the replay could not launch 1 of 1 kernel(s): "
                           "triton_poi_fused_add_mul_0: "), text
    assert "vectorized_elementwise_kernel" not in text and "\n" not in text


def test_the_reason_ncu_measured_nothing_is_read_from_the_replays_lines():
    names = ["k0", "k1"]
    ok = "kinspect-ncu 0 ok 8,1,1 - k0\nkinspect-ncu 1 ok 4,1,1 - k1\n==WARNING== No kernels were profiled.\n"
    assert nothing_measured(0, ok, names) == ("ncu measured nothing (exit 0): the replay launched its 2 kernel(s) "
                                              "(k0, k1) but ncu profiled none of them by name (ncu: No kernels were "
                                              "profiled.)")
    crashed = "Traceback (most recent call last):\n  ...\nImportError: no module named torch\n"
    assert nothing_measured(1, crashed, names).endswith("the replay printed no result: ImportError: no module named torch")
    failed = "kinspect-ncu 0 failed - - TypeError: dynamic_func() missing 1 required positional argument: 'XBLOCK'\n" \
             "kinspect-ncu 1 ok 4,1,1 - k1\n"
    assert nothing_measured(0, failed, names).endswith(
        "could not launch 1 of 2 kernel(s): k0: TypeError: dynamic_func() missing 1 required positional argument: "
        "'XBLOCK'")
