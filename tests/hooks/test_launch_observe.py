"""Capture leaves the launch path as the program has it (issue 29): no Triton launch hook is set (a set
hook makes Inductor bypass its static launcher), Inductor's statically launched kernels are counted at
their autotuner's run, and the timer reads kernel records without telling the program a profiler is on.

The Inductor side runs on a stand-in CachingAutotuner here (Inductor makes C++ on a CPU); the real one
is in tests/gpu/test_launch_live.py."""

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from triton import knobs

import kinspect
from kinspect.hooks import tuning
from kinspect.hooks.launch_counts import TUNING, LaunchRecorder
from kinspect.hooks.timers import KernelRecordsTimer
from kinspect.hooks.observe import STATIC, LaunchObserver, static_hash, static_launcher_state
from kinspect.files.store import read_records
from tests.dryrun import dry_run
from tests.jit_kernels import _double


def _hook_is_empty(hook) -> bool:
    """Inductor's test (torch._inductor.runtime.static_triton_launcher): None or an empty HookChain."""
    return hook is None or (hasattr(hook, "calls") and not hook.calls)


def test_a_capture_sets_no_launch_hook_and_counts_launches(tmp_path, fresh_triton_cache):  # noqa: F811
    x, y = torch.empty(4096), torch.empty(4096)
    with dry_run(), kinspect.capture(tmp_path / "out") as rec:
        assert _hook_is_empty(knobs.runtime.launch_enter_hook) and _hook_is_empty(knobs.runtime.launch_exit_hook)
        for _ in range(4):
            _double[(8,)](x, y, 4096, BLOCK=512)
    [v] = read_records(tmp_path / "out")
    assert v.launches.calls == 4 and [r.hash for r in rec.variants] == [v.hash]
    from triton.compiler.compiler import CompiledKernel

    assert CompiledKernel.__dict__["run"].fget.__qualname__.startswith("CompiledKernel"), "Triton's property is back"


class _StaticLauncher:
    _is_static = True
    config = "cfg"

    def __init__(self, calls):
        self.calls = calls

    def __call__(self, *args, stream):
        self.calls.append((args, stream))


def _autotuner_class(observer):
    class CachingAutotuner:                 # what Inductor's does on its run's fast path
        def __init__(self, launchers):
            self.launchers = launchers
            self.triton_meta = {"signature": {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32",
                                              "XBLOCK": "constexpr"}}
            self.fn = SimpleNamespace(__name__="triton_poi_fused_add_0")

        def run(self, *args, stream, **kwargs):
            if len(self.launchers) != 1:         # "autotuning": keep the first config
                self.launchers = self.launchers[:1]
            return self.launchers[0](*args, stream=stream)

        def _interpret_args_grid(self, args, config):
            return args, ((args[-1] + 1023) // 1024, 1, 1)

    original = CachingAutotuner.run
    CachingAutotuner.run = observer._autotuner_run(original)
    return CachingAutotuner, original


def test_statically_launched_kernels_are_counted_at_their_autotuners_run():
    rec = LaunchRecorder()
    observer = LaunchObserver(rec)
    cls, original = _autotuner_class(observer)
    calls = []
    at = cls([_StaticLauncher(calls), _StaticLauncher(calls)])
    x = torch.empty(4)
    for n in (4096, 4096, 4096, 100):
        at.run(x, x, n, stream=7)
    assert "run" in at.__dict__, "later calls go straight to the per-instance counter"
    assert len(calls) == 4 and calls[0] == ((x, x, 4096), 7), "the launcher gets what it got before"
    [tally] = rec.tallies.values()
    assert tally.kernel == "triton_poi_fused_add_0" and tally.calls == 4 and tally.names == ("in_ptr0", "out_ptr0", "xnumel")
    launches = rec.launches(tally, pid=1, rk=None, host="h")
    assert dict(launches.grids) == {(4, 1, 1): 3, (1, 1, 1): 1}
    assert launches.signatures[0].args[2].value == 4096 and launches.signatures[0].args[0].shape == (4,)
    assert rec.observed == {STATIC: 1}
    # inside an autotuner's benchmark nothing is counted; once restored, nothing at all
    tuning._wrapped(lambda: at.run(x, x, 4096, stream=7))()
    observer.live[0] = False
    at.run(x, x, 4096, stream=7)
    assert tally.calls == 4 and len(calls) == 6


def test_a_non_static_autotuner_gets_its_own_run_back():
    rec = LaunchRecorder()
    cls, original = _autotuner_class(LaunchObserver(rec))
    launcher = _StaticLauncher([])
    launcher._is_static = False
    at = cls([launcher])
    at.run(torch.empty(4), torch.empty(4), 4, stream=0)
    assert at.__dict__["run"].__func__ is original and not rec.tallies, "Triton's launcher wrapper counts those"


def test_static_hash_comes_from_the_kernel_or_from_the_cache_folder_name():
    import base64

    h = "ab" * 32
    runner = type("K", (), {"hash": h, "run": lambda self: None})().run
    launcher = eval("lambda: runner", {"runner": runner})
    assert static_hash(launcher) == h
    folder = base64.b32encode(bytes.fromhex(h)).decode().rstrip("=")
    assert static_hash(type("L", (), {"cache_hash": folder})()) == h
    assert static_launcher_state().startswith(("on", "off", "unknown"))


def test_kernel_records_are_matched_by_name_and_by_order_where_a_name_has_two_variants():
    batches = [[("k", 1, 1_000_000)],          # a session's kernels: (name, start ns, duration ns)
               [("k", 2, 2_000_000), ("k", 3, 3_000_000), ("k", 4, 4_000_000)],
               [("k", 5, 5_000_000), ("k", 6, 6_000_000)]]
    started = []
    timer = KernelRecordsTimer(session=(lambda: started.append(1), lambda: batches.pop(0)))
    rec = LaunchRecorder(timer=timer)
    rec.tally("h1", "k", ())
    assert started == [1] and not timer.cell("k")[0]
    rec.tally("h2", "k", ())       # a second variant of the name: records so far are h1's, then in order
    assert timer.cell("k")[0] and rec.tallies["h1"].total_ms == 1.0
    for key in ("h2", (TUNING, "h1"), "h1"):
        timer.enter(rec, key, "k", 0)
    timer.resolve(rec, final=False)
    assert rec.tallies["h2"].total_ms == 2.0 and rec.tallies["h1"].tuning_ms == 3.0
    assert rec.tallies["h1"].total_ms == 5.0
    # Inductor's benchmark of a static kernel: every record of the name since the last read is tuning
    timer.tuning_window(rec, "k", (TUNING, "h2"))
    assert rec.tallies["h2"].tuning_ms == 11.0


def test_opening_starts_the_first_window_once_before_any_variant_is_known():
    """Inductor's static path counts a kernel's first launch after it ran: the observer opens the timer
    first so that launch is in the session (issue 29: 566 timed of 567 on the H200)."""
    started = []
    timer = KernelRecordsTimer(session=(lambda: started.append(1), lambda: []))
    rec = LaunchRecorder(timer=timer)
    timer.open(rec)
    assert started == [1] and timer._on
    timer.open(rec)
    rec.tally("h", "k", ())               # the variant, known after its launch: no second session
    assert started == [1] and timer.windows == 1 and timer._keys == {"k": "h"}
    timer.resolve(rec, final=True)
    timer.open(rec)                        # after the end nothing opens again
    assert started == [1]


def test_sampled_timing_opens_windows_of_launches():
    windows = []
    timer = KernelRecordsTimer(sample=4, session=(lambda: windows.append("on"), lambda: []))
    timer.WINDOW = 10
    rec = LaunchRecorder(timer=timer)
    rec.tally("h", "k", ())
    assert timer.cell("k")[0], "sampling counts down on every launch"
    for _ in range(200):
        timer.enter(rec, "h", "k", 0)
    assert 3 <= timer.windows <= 10 and "1 launch in 4" in timer.coverage()


def test_the_kineto_session_does_not_tell_the_program_a_profiler_is_on():
    """Inductor's run takes its profiler path when torch.autograd.profiler._is_profiler_enabled is set;
    kinspect's session (CUDA activities only) must not set it. CPU activities stand in here."""
    from torch.autograd import profiler as ap
    from torch._C._profiler import ProfilerActivity

    from kinspect.hooks import timers

    start, stop = timers._kineto({ProfilerActivity.CPU})
    start()
    try:
        assert not ap._is_profiler_enabled
        torch.ones(3).add_(1)
    finally:
        events = stop()
    assert any(name == "aten::add_" for name, _, _ in events)


@pytest.mark.parametrize("env", [{}, {"TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER": "1"}])
def test_the_capture_command_leaves_the_static_launcher_setting_alone(tmp_path, monkeypatch, env):
    import json
    import subprocess
    import sys

    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", raising=False) if not env else None
    probe = tmp_path / "probe.py"
    probe.write_text("import json, os, sys\nprint(json.dumps(os.environ.get('TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER')))\n")
    out = subprocess.run([sys.executable, "-m", "kinspect", "capture", "-o", str(tmp_path / "s"), "--", sys.executable,
                          str(probe)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == env.get("TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER")


def test_a_static_kernel_from_a_warm_cache_is_recorded_from_its_fresh_triton_cache_folder(tmp_path, fresh_triton_cache):  # noqa: F811
    """With a warm FX-graph cache Inductor loads a static kernel's cubin from Triton's cache folder: no
    compile, no listener call. The capture records the variant from that folder's files."""
    from kinspect.hooks.listener import Recorder
    from kinspect.files.store import Store

    x, y = torch.empty(4096), torch.empty(4096)
    with dry_run():
        k = _double.warmup(x, y, 4096, BLOCK=512, grid=(8,))
    folder = Path(knobs.cache.dir) / next(p.name for p in Path(knobs.cache.dir).iterdir()
                                          if (p / "_double.json").is_file())
    store = Store(tmp_path / "out")
    rec = Recorder(store, launches=LaunchRecorder(store))
    rec.adopt_cached(k.hash, "_double", folder, SimpleNamespace(fn=_double, signature={"x_ptr": "*fp32"}, constants={"BLOCK": 512}))
    [v] = read_records(tmp_path / "out")
    assert v.hash == k.hash and v.cache_hit and v.stage("ptx") is not None and v.constexprs == {"BLOCK": 512}
    rec.adopt_cached("f" * 64, "_double", folder)         # not that folder's kernel: nothing recorded
    assert len(list(read_records(tmp_path / "out"))) == 1 and not rec.errors


def test_a_second_capture_in_one_process_counts_what_the_first_one_wrapped(tmp_path, fresh_triton_cache):  # noqa: F811
    x, y = torch.empty(4096), torch.empty(4096)
    with dry_run():
        k = _double.warmup(x, y, 4096, BLOCK=512, grid=(8,))
        for out in ("a", "b"):
            with kinspect.capture(tmp_path / out):
                for _ in range(2):
                    k[(8, 1, 1)](x, y, 4096)
                    k.module = object()      # loaded (as on a GPU): it keeps its launcher, kinspect's wrapper
        k.module = None
    for out in ("a", "b"):
        [v] = read_records(tmp_path / out)
        assert v.launches.calls == 2, out
    rec = LaunchRecorder()
    observer = LaunchObserver(rec)
    cls, _ = _autotuner_class(observer)
    at = cls([_StaticLauncher([])])
    at.run(torch.empty(4), torch.empty(4), 4, stream=0)
    observer.restore()
    assert "run" not in at.__dict__ and "_kinspect_counter" not in at.__dict__


def test_the_programs_own_profiler_takes_the_session_and_gives_it_back(monkeypatch):
    """One kineto session per process: while kinspect times, the program's torch.profiler still starts
    (kinspect's session is read and stopped first, and started again once the program's stops). CPU
    activities stand in for CUDA's here."""
    from torch.autograd import profiler as ap
    from torch.profiler import ProfilerActivity, profile

    from kinspect.hooks import timers

    real = timers._kineto
    monkeypatch.setattr(timers, "_kineto", lambda: real({ProfilerActivity.CPU}))
    before = ap._prepare_profiler
    timer = KernelRecordsTimer()
    rec = LaunchRecorder(timer=timer)
    rec.tally("h", "k", ())                       # the first launch starts kinspect's session
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        torch.ones(3).mul_(2)
    assert any(e.name == "aten::mul_" for e in prof.events()), "the program's profiler ran"
    assert timer._on and timer.paused == 1 and not timer.failed
    timer.resolve(rec, final=True)                # (CPU records: none of them is a kernel to time)
    assert "not timed while the program's own profiler ran (1 time(s))" in timer.coverage()
    assert ap._prepare_profiler is before, "given back at the end"


def test_alternating_signatures_are_each_counted_and_past_the_limit_go_to_other(monkeypatch):
    """The wrapper keeps the last launch's key and count cell: launches that alternate keys, or repeat
    one, are each counted under their own key; keys past the records' limit count as `other`."""
    from kinspect.hooks import launch_counts as launch_records
    from kinspect.hooks.observe import triton_wrapper

    monkeypatch.setattr(launch_records, "SIGNATURES", 2)
    seen = []
    kernel = SimpleNamespace(hash="a" * 64, name="k", src=None)
    rec = LaunchRecorder()
    w = triton_wrapper(rec, [True], kernel, lambda *a: seen.append(a[9:]))
    x = torch.empty(4)
    for n in (8, 8, 16, 8, 16, 16, 32, 32, 8):
        w(4, 1, 1, 0, None, None, None, None, None, x, n)
    [tally] = rec.tallies.values()
    assert {k[3]: c[0] for k, c in tally.counts.items()} == {8: 4, 16: 3} and tally.other == 2
    assert tally.calls == 9 and len(seen) == 9 and seen[0] == (x, 8)


def test_a_capture_gives_triton_kernels_their_own_launcher_back(tmp_path, fresh_triton_cache):  # noqa: F811
    """After the capture, a kernel's launch goes straight to Triton's launcher again (no frame of
    kinspect's), and a second capture wraps it afresh."""
    x, y = torch.empty(4096), torch.empty(4096)
    with dry_run():
        k = _double.warmup(x, y, 4096, BLOCK=512, grid=(8,))
        with kinspect.capture(tmp_path / "a"):
            k[(8, 1, 1)](x, y, 4096)
            k.module = object()                  # loaded, as on a GPU: _run stays set
            assert hasattr(k._run, "kinspect_launcher")
        assert not hasattr(k._run, "kinspect_launcher"), "Triton's launcher, unwrapped"
        with kinspect.capture(tmp_path / "b"):
            k[(8, 1, 1)](x, y, 4096)
            k[(8, 1, 1)](x, y, 4096)
        k.module = None
    [v] = read_records(tmp_path / "b")
    assert v.launches.calls == 2


def test_timing_starts_before_a_static_kernels_first_launch():
    """Inductor's first static launch runs inside its autotuner's run, before kinspect's counter for it
    exists: the timer's session is started first, so that launch is timed too (the H200 test saw
    566 timed launches of 567)."""
    events = []

    class Launcher(_StaticLauncher):
        def __call__(self, *args, stream):
            events.append("launch")

    timer = KernelRecordsTimer(session=(lambda: events.append("start"), lambda: []))
    rec = LaunchRecorder(timer=timer)
    cls, _ = _autotuner_class(LaunchObserver(rec))
    at = cls([Launcher([])])
    for _ in range(2):
        at.run(torch.empty(4), torch.empty(4), 4, stream=0)
    assert events == ["start", "launch", "launch"]
