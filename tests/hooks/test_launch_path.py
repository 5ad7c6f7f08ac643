"""kinspect bench's launch path on a CPU-only machine: the launch-bound verdict and its rendering on
recorded H100 figures, the call loops on a simulated GPU, and the profile grouping and the whole
measurement on Triton's real call path (tests/dryrun.py: the JIT runs for real, the kernel does not)."""

import contextlib
import json

import pytest
import torch
import triton

from kinspect.bench.call_profile import ALLOCATION, GROUPS, CallProfile, GroupTime, profile
from kinspect.bench.launch_path import (LAUNCH_BOUND, MAX_CALLS, MIN_CALLS, CallTiming, LaunchPath, judge,
                                        loop_size, measure, time_calls)
from kinspect.bench.stats import summarize
from kinspect.compile import private_cache
from kinspect.compile.driver import fresh_binders
from kinspect.kernels import elementwise, softmax
from kinspect.render.bench import launch_path
from tests.dryrun import dry_run

# The H100 (triton 3.6, torch 2.11) in the issue: softmax 1048576x2 float32 through kinspect.kernels
H100_GPU_MS, H100_AS_CALLED_MS = 0.0103, 0.0461


# the verdict ------------------------------------------------------------------------------------------

def test_the_issues_softmax_is_launch_bound():
    v = judge(H100_GPU_MS, H100_AS_CALLED_MS)          # no host time: the Python side is what is above the GPU's
    assert v.launch_bound and not v.near and v.python_ms == pytest.approx(0.0358)
    assert v.line().startswith("launch-bound: the Python side costs 3.5x the GPU time (0.0358 ms a call above")
    measured = judge(H100_GPU_MS, H100_AS_CALLED_MS, host_ms=0.0452)
    assert "costs 4.4x the GPU time (0.0452 ms of Python a call, 0.0103 ms on the GPU)" in measured.line()
    assert "as called it takes 4.5x its GPU time" in measured.line()
    j = measured.to_json()
    assert j["launch_bound"] and j["python_measured"] and j["as_called_over_gpu"] == pytest.approx(4.476, abs=1e-3)


def test_gpu_bound_near_and_unknown():
    wide = judge(0.1351, 0.1362, host_ms=0.012)                 # softmax 8192x8192: the GPU is the work
    assert not wide.launch_bound and not wide.near and wide.line().startswith("GPU-bound")
    near = judge(H100_GPU_MS, 0.0112, host_ms=0.0071)           # within 1.1x, but Python at 0.7x the GPU
    assert near.near and "a faster kernel would wait for Python" in near.line()
    edge = judge(1.0, LAUNCH_BOUND * 1.0)
    assert edge.launch_bound
    assert judge(None, 0.1) is None and judge(0.0, 0.1) is None and judge(0.1, None) is None


# the loops -----------------------------------------------------------------------------------------------

class SimulatedGpu:
    """A clock, a call that spends `host` ms of Python and queues `gpu` ms on a GPU, and a synchronize
    that waits for the queue."""

    def __init__(self, host: float, gpu: float):
        self.now = self.free = 0.0
        self.host, self.gpu = host / 1e3, gpu / 1e3

    def clock(self):
        return self.now

    def call(self):
        self.now += self.host
        self.free = max(self.free, self.now) + self.gpu

    def sync(self):
        self.now = max(self.now, self.free)


@pytest.mark.parametrize("host,gpu,bound", [(0.045, 0.0103, True), (0.003, 0.0103, False)])
def test_loops_measure_as_called_and_host_time(host, gpu, bound):
    sim = SimulatedGpu(host, gpu)
    t = time_calls(sim.call, sim.sync, "k[grid](...)", rep_ms=50, clock=sim.clock)
    assert t.host.median == pytest.approx(host)
    # as called is the slower of the two sides, plus the last kernel's tail once a loop
    assert t.as_called.median == pytest.approx(max(host, gpu) + min(host, gpu) / t.calls * (not bound)
                                               + (gpu / t.calls if bound else 0), rel=0.02)
    assert judge(gpu, t.as_called.median, t.host.median).launch_bound is bound


def test_loop_size_aims_at_a_few_milliseconds_within_bounds():
    assert loop_size(*_sim(0.01)) == 200 == MAX_CALLS
    assert loop_size(*_sim(0.1)) == 20
    assert loop_size(*_sim(5.0)) == MIN_CALLS


def _sim(ms):
    sim = SimulatedGpu(ms, 0.0)
    return sim.call, sim.sync, sim.clock


# the profile on Triton's real call path --------------------------------------------------------------------

@pytest.fixture(scope="module")
def dry():
    kernels = (softmax.softmax_kernel, elementwise.add_kernel)
    with private_cache(), dry_run() as d, contextlib.ExitStack() as stack:
        for k in kernels:
            stack.enter_context(fresh_binders(k))
        softmax._PLANS.clear()
        yield d
        softmax._PLANS.clear()


def _shares(p: CallProfile) -> dict:
    return {g.name: g.share for g in p.groups}


def test_the_jits_call_path_is_grouped_by_stage(dry):
    x = torch.randn(1024, 2)
    y = torch.empty_like(x)
    args, constexprs, grid, options = softmax._launch_args(x, y)
    fn = softmax.softmax_kernel
    kernel = fn[grid](**args, **constexprs, **options)
    from kinspect.bench.call_profile import launcher_code

    p = profile(lambda: fn[lambda meta: grid](**args, **constexprs, **options), lambda: None, "softmax_kernel",
                calls=300, host_ms=0.05, launcher=launcher_code(kernel), fn=fn)
    s = _shares(p)
    assert sum(s.values()) == pytest.approx(1.0)
    # which groups the time falls in, not how it divides: shares move with the machine's load
    for group in ("binding", "jit", "metadata", "launcher", "caller", "grid"):
        assert s[group] > 0, (group, s)
    assert s["autotuner"] == s["allocation"] == 0.0
    assert p.group("binding").ms == pytest.approx(0.05 * s["binding"]) and p.profiled_ms > 0


def test_a_prepared_wrapper_skips_the_jit_but_allocates(dry):
    x = torch.randn(1024, 2)
    softmax.softmax(x)
    kernel = next(iter(softmax._PLANS._d.values())).direct.kernel
    from kinspect.bench.call_profile import launcher_code

    s = _shares(profile(lambda: softmax.softmax(x), lambda: None, "softmax(x)", calls=300,
                        launcher=launcher_code(kernel)))
    assert s["binding"] == s["jit"] == s["metadata"] == 0.0
    assert s["launcher"] > 0 and s["allocation"] > 0 and s["caller"] > 0, s


def test_heuristics_around_the_jit_are_their_own_group(dry):
    tuned = triton.heuristics({"BLOCK_SIZE": lambda args: 1024})(elementwise.add_kernel)
    x, y, out = torch.randn(1000), torch.randn(1000), torch.empty(1000)
    run = lambda: tuned[(1,)](x, y, out, 1000)  # noqa: E731
    run()
    s = _shares(profile(run, lambda: None, "heuristics", calls=200))
    assert s["autotuner"] > 0 and s["binding"] > 0, s


def test_allocation_pattern_matches_cprofiles_names():
    assert ALLOCATION.search("<built-in method torch.empty>")
    assert ALLOCATION.search("<method 'new_empty' of 'torch._C.TensorBase' objects>")
    assert not ALLOCATION.search("<method 't' of 'torch._C.TensorBase' objects>")


# the whole measurement, and what bench prints ---------------------------------------------------------------

def test_measure_runs_the_launch_path_end_to_end(dry):
    from kinspect.bench.prepared import prepare

    launch = prepare("softmax", device="cpu", constexprs={}, args={}, size="4096x2", num_warps=None,
                     num_stages=None)
    launch()
    p = measure(launch, lambda: None, steady_ms=0.01, rep_ms=20, profile_calls=200)
    # no CUDA here: the graph cannot be captured and the steady median stands in, said so
    assert p.gpu_ms == 0.01 and "steady-state median" in p.gpu_method and "CUDA graph" in p.notes[0]
    assert p.launcher is not None and p.launcher.median > 0        # how the timings compare is load's
    assert p.jit_python_ms == pytest.approx(max(p.jit.host.median - p.launcher.median - (p.later_passes_ms or 0), 0))
    assert p.wrapper.label == "softmax(x)" and p.wrapper.host.median > 0
    assert [q.label for q in p.profiles] == ["softmax_kernel[grid](...)", "softmax(x)"]
    d = json.loads(json.dumps(p.to_json()))
    assert d["verdict"]["gpu_ms"] == 0.01 and d["wrapper"]["label"] == "softmax(x)"
    text = "\n".join(launch_path(p))
    assert "softmax_kernel[grid](...): loops of" in text and "compiled launcher" in text


def test_the_launch_section_on_recorded_h100_figures():
    jit = CallTiming("softmax_kernel[grid](...)", 200, summarize([0.0461, 0.0458, 0.0470]),
                     summarize([0.0452, 0.0449, 0.0460]))
    wrapper = CallTiming("softmax(x)", 200, summarize([0.0112, 0.0110, 0.0115]), summarize([0.0071, 0.0070]))
    shares = dict(binding=0.30, jit=0.20, metadata=0.08, launcher=0.20, caller=0.22)
    prof = CallProfile(jit.label, 2000, 0.09, 0.0452,
                       tuple(GroupTime(n, t, shares.get(n, 0.0), shares.get(n, 0.0) * 0.0452) for n, t, _ in GROUPS))
    p = LaunchPath(jit=jit, gpu=summarize([0.0103]), gpu_method="CUDA graph of 200 calls, replayed",
                   launcher=summarize([0.0071]), wrapper=wrapper, profiles=(prof,))
    lines = launch_path(p)
    text = "\n".join(lines)
    assert "as called 0.0461 ms a call (p20 0.04592, p80 0.04664), of which Python (host) 0.0452 ms" in text
    assert "GPU only  0.0103 ms a call (CUDA graph of 200 calls, replayed)" in text
    assert "Python a call = JIT 0.0381 ms" in text and "compiled launcher 0.0071 ms" in text
    assert "launch-bound: the Python side costs 4.4x the GPU time" in text
    assert "softmax(x): as called 0.0112 ms" in text and "near launch-bound, 1.09x its GPU time" in text
    assert "try: less Python a launch" in text
    binding = next(line for line in lines if "argument binding and specialization" in line)
    assert "0.0136" in binding and "30%" in binding
    assert not any(line.strip().startswith("autotuner") for line in lines)   # an empty group is not shown
