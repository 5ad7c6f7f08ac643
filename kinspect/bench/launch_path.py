"""The launch path: what a call costs as called from Python, beside what it costs on the GPU.

A program calls a kernel in a loop of Python calls; the GPU runs each kernel once it is launched.
When the Python side of a call (the JIT binding and specializing the arguments, the grid, the launch
metadata, the compiled launcher, a wrapper's own work and allocations) takes longer than the kernel
runs, the GPU waits for Python: the kernel is launch-bound, and no faster kernel makes the program
faster. `kinspect bench` measures it:

- **as called**: a tight loop of N calls and one synchronize at the end, N chosen so a loop lasts
  about TARGET_LOOP_MS; ms a call, median over repeats. The loop before the synchronize is the
  **host** time a call (the Python side while the GPU runs: N is kept below the depth at which a
  launch queue fills and launches start to wait).
- **GPU only**: the same N calls captured in a CUDA graph and replayed (device events around each
  replay): back to back like the loop, with no Python between them. Where capture fails, the
  steady-state median (device events, L2 flushed) stands in, and says so.
- **the compiled launcher**: `CompiledKernel.run` called directly with the arguments and hooks the
  JIT passes it (the call JITFunction.run ends with, in Triton 3.6 and 3.9): the launcher's own
  cost; the rest of the host time is the JIT's Python.
- the kernel's **shipped function** where it has one (`softmax(x)`), timed the same way.

`judge(gpu_ms, as_called_ms, host_ms)` is a plain function of those figures, so any source of them
(a captured program's per-kernel records, say) can ask the same question.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from kinspect.bench.call_profile import CallProfile
from kinspect.bench.stats import Summary, summarize

# as called / GPU time from which a kernel is launch-bound: the GPU idles a third of the time or more
LAUNCH_BOUND = 1.5
# the Python side at this share of the GPU time or more is close: a faster kernel would wait for it
NEAR = 0.5
TARGET_LOOP_MS = 2.0      # about how long one loop of calls lasts
MIN_CALLS, MAX_CALLS = 10, 200
MIN_REPEATS, MAX_REPEATS = 5, 100


@dataclass(frozen=True)
class CallCost:
    """A call judged: its Python side against its GPU time (launch-bound, near it, or GPU-bound)."""

    gpu_ms: float
    as_called_ms: float
    python_ms: float        # the Python side of a call: measured host time, else as called - GPU
    measured_host: bool

    @property
    def launch_bound(self) -> bool:
        return self.as_called_ms >= LAUNCH_BOUND * self.gpu_ms

    @property
    def near(self) -> bool:
        return not self.launch_bound and self.python_ms >= NEAR * self.gpu_ms

    @property
    def ratio(self) -> float:
        """The Python side's cost in GPU times."""
        return self.python_ms / self.gpu_ms

    @property
    def slowdown(self) -> float:
        """As called / GPU time."""
        return self.as_called_ms / self.gpu_ms

    def line(self) -> str:
        python = (f"{self.python_ms:.4f} ms of Python a call" if self.measured_host else
                  f"{self.python_ms:.4f} ms a call above the GPU's")
        figures = f"({python}, {self.gpu_ms:.4f} ms on the GPU)"
        if self.launch_bound:
            return (f"launch-bound: the Python side costs {self.ratio:.1f}x the GPU time {figures}; "
                    f"as called it takes {self.slowdown:.1f}x its GPU time")
        if self.near:
            return (f"near launch-bound: the Python side costs {self.ratio:.1f}x the GPU time {figures}; as called "
                    f"{self.slowdown:.2f}x its GPU time: a faster kernel would wait for Python")
        return (f"GPU-bound: the Python side costs {self.ratio:.2f}x the GPU time {figures}; as called "
                f"{self.slowdown:.2f}x its GPU time")

    def to_json(self) -> dict:
        return {"launch_bound": self.launch_bound, "near_launch_bound": self.near, "gpu_ms": self.gpu_ms,
                "as_called_ms": self.as_called_ms, "python_ms": self.python_ms,
                "python_measured": self.measured_host, "python_over_gpu": round(self.ratio, 3),
                "as_called_over_gpu": round(self.slowdown, 3), "line": self.line()}


def judge(gpu_ms: float | None, as_called_ms: float | None, host_ms: float | None = None) -> CallCost | None:
    """Is a kernel launch-bound? From its GPU time a call, its time a call as called from Python and,
    where measured, its Python (host) time a call; None where the figures cannot say."""
    if not gpu_ms or gpu_ms <= 0 or as_called_ms is None:
        return None
    measured = host_ms is not None
    python = host_ms if measured else max(as_called_ms - gpu_ms, 0.0)
    return CallCost(gpu_ms=gpu_ms, as_called_ms=as_called_ms, python_ms=python, measured_host=measured)


@dataclass(frozen=True)
class CallTiming:
    label: str              # what was called: "softmax_kernel[grid](...)", "softmax(x)"
    calls: int              # calls a loop
    as_called: Summary      # ms a call: the loop and a final synchronize
    host: Summary           # ms a call: the loop alone, before the synchronize

    def to_json(self) -> dict:
        return {"label": self.label, "calls_per_loop": self.calls, "loops": self.as_called.n,
                "as_called_ms": self.as_called.to_json(), "host_ms": self.host.to_json()}


def loop_size(call: Callable[[], Any], sync: Callable[[], None], clock=time.perf_counter) -> int:
    """Calls a loop so that it lasts about TARGET_LOOP_MS (MIN_CALLS to MAX_CALLS)."""
    call()
    sync()
    t0 = clock()
    for _ in range(5):
        call()
    sync()
    per_call_ms = max((clock() - t0) * 1e3 / 5, 1e-6)
    return max(MIN_CALLS, min(MAX_CALLS, round(TARGET_LOOP_MS / per_call_ms)))


def time_calls(call: Callable[[], Any], sync: Callable[[], None], label: str, *, rep_ms: float = 100,
               calls: int | None = None, clock=time.perf_counter) -> CallTiming:
    """Loops of `calls` calls, each followed by one synchronize, for about `rep_ms` (MIN_REPEATS to
    MAX_REPEATS loops): as-called and host time a call."""
    n = calls or loop_size(call, sync, clock)
    host, called = [], []
    deadline = clock() + rep_ms / 1e3
    while len(called) < MIN_REPEATS or (clock() < deadline and len(called) < MAX_REPEATS):
        t0 = clock()
        for _ in range(n):
            call()
        t1 = clock()
        sync()
        t2 = clock()
        host.append((t1 - t0) * 1e3 / n)
        called.append((t2 - t0) * 1e3 / n)
    return CallTiming(label=label, calls=n, as_called=summarize(called), host=summarize(host))


def time_graph(call: Callable[[], Any], calls: int, *, rep_ms: float = 100) -> Summary:
    """ms a call on the GPU alone: `calls` calls captured in one CUDA graph, replayed for about
    `rep_ms` (3 to 20 times), device events around each replay."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):   # warm up off the capture: allocator pools, lazy loads
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            call()
    t0 = time.perf_counter()
    graph.replay()
    torch.cuda.synchronize()
    repeats = max(3, min(20, int(rep_ms / max((time.perf_counter() - t0) * 1e3, 1e-3))))
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    del graph
    return summarize(times)


def launcher_call(kernel, fn, launch) -> Callable[[], Any] | None:
    """The compiled launcher's call as JITFunction.run makes it for this launch (grid, current
    stream, the kernel's handles, launch metadata and hooks, every argument in order), or None where
    the launch's arguments do not name every parameter."""
    import inspect

    from triton import knobs
    from triton.runtime import driver

    values = {**launch.args, **launch.constexprs}
    args = []
    for p in fn.params:
        if p.name in values:
            args.append(values[p.name])
        elif p.default is not inspect.Parameter.empty:
            args.append(p.default)
        else:
            return None
    grid = tuple(launch.grid) + (1, 1)
    device = driver.active.get_current_device()
    stream = driver.active.get_current_stream(device)
    run, function, packed = kernel.run, kernel.function, kernel.packed_metadata
    enter, exit_ = knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook
    metadata = kernel.launch_metadata(tuple(launch.grid), stream, *args)

    def call():
        run(grid[0], grid[1], grid[2], stream, function, packed, metadata, enter, exit_, *args)
    return call


@dataclass(frozen=True)
class LaunchPath:
    jit: CallTiming                     # kernel[grid](...) as kinspect bench calls it
    gpu: Summary | None                 # ms a call on the GPU alone
    gpu_method: str
    launcher: Summary | None = None     # ms a call of the compiled launcher alone (the first pass's)
    later_passes_ms: float | None = None   # host ms a call of the passes after the first
    wrapper: CallTiming | None = None   # the kernel's shipped function, where it has one
    profiles: tuple[CallProfile, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def gpu_ms(self) -> float | None:
        return self.gpu.median if self.gpu else None

    @property
    def verdict(self) -> CallCost | None:
        return judge(self.gpu_ms, self.jit.as_called.median, self.jit.host.median)

    @property
    def wrapper_verdict(self) -> CallCost | None:
        return judge(self.gpu_ms, self.wrapper.as_called.median, self.wrapper.host.median) if self.wrapper else None

    @property
    def jit_python_ms(self) -> float | None:
        """The JIT's own Python a call: host time less the compiled launcher and later passes."""
        if self.launcher is None:
            return None
        return max(self.jit.host.median - self.launcher.median - (self.later_passes_ms or 0.0), 0.0)

    def to_json(self) -> dict:
        v, w = self.verdict, self.wrapper_verdict
        return {"jit": self.jit.to_json(), "gpu_ms": self.gpu.to_json() if self.gpu else None,
                "gpu_method": self.gpu_method,
                "launcher_ms": self.launcher.to_json() if self.launcher else None,
                "jit_python_ms": self.jit_python_ms, "later_passes_ms": self.later_passes_ms,
                "verdict": v.to_json() if v else None,
                "wrapper": self.wrapper.to_json() if self.wrapper else None,
                "wrapper_verdict": w.to_json() if w else None,
                "profiles": [p.to_json() for p in self.profiles], "notes": list(self.notes)}


PROFILE_MS = 500          # about how long the profile's calls take, within PROFILE_CALLS
PROFILE_CALLS = (50, 2000)


def measure(launch, sync: Callable[[], None], *, steady_ms: float, rep_ms: float = 100,
            profile_calls: int | None = None) -> LaunchPath:
    """The launch path of `launch` (kinspect.bench.prepared.Launch) on a GPU, its JIT caches warm."""
    from kinspect.bench.call_profile import launcher_code, profile

    name = getattr(launch.fn, "__name__", "kernel")
    jit = time_calls(launch, sync, f"{name}[grid](...)", rep_ms=rep_ms)
    notes = []
    try:
        gpu = time_graph(launch, jit.calls, rep_ms=rep_ms)
        method = f"CUDA graph of {jit.calls} calls, replayed {gpu.n} times (device events)"
    except Exception as e:  # a call that cannot be captured (a sync inside, say): the steady median
        gpu = summarize([steady_ms])
        method = "steady-state median (device events, L2 flushed): the calls could not be captured in a CUDA graph"
        notes.append(f"CUDA graph capture failed: {type(e).__name__}: {(str(e).strip().splitlines() or [''])[0]}")
        sync()
    kernel = launch()
    sync()
    launcher = later = None
    direct = launcher_call(kernel, launch.fn, launch)
    if direct is None:
        notes.append("the compiled launcher was not timed alone: the launch does not name every parameter")
    else:
        launcher = time_calls(direct, sync, "CompiledKernel.run", rep_ms=rep_ms / 2, calls=jit.calls).host
    if launch.then:
        later = time_calls(lambda: [step() for step in launch.then], sync, "later passes", rep_ms=rep_ms / 2,
                           calls=jit.calls).host.median
    wrapper = None
    if launch.call is not None:
        wrapper = time_calls(launch.call, sync, launch.call_text, rep_ms=rep_ms)
    code = launcher_code(kernel)
    calls = profile_calls or max(PROFILE_CALLS[0], min(PROFILE_CALLS[1], int(PROFILE_MS / jit.as_called.median)))
    profiles = [profile(launch, sync, jit.label, calls=calls, host_ms=jit.host.median, launcher=code, fn=launch.fn)]
    if wrapper is not None:
        profiles.append(profile(launch.call, sync, wrapper.label, calls=calls, host_ms=wrapper.host.median,
                                launcher=code))
    return LaunchPath(jit=jit, gpu=gpu, gpu_method=method, launcher=launcher, later_passes_ms=later,
                      wrapper=wrapper, profiles=tuple(profiles), notes=tuple(notes))
