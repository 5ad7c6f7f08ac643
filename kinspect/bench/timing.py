"""Steady-state timing of a launch: device events on a GPU, wall and CPU time on a CPU backend.

GPU: triton.testing.do_bench (warmup, then repetitions with the L2 flushed before each by zeroing
Triton's flush buffer, each timed by a pair of device events); every run's time is kept.
CPU: perf_counter (wall) and process_time (CPU time of all the process's threads) around each run,
so CPU time / wall time says how many threads the kernel kept busy.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Callable

from kinspect.bench.stats import Summary, summarize

WARMUP_MS = 25
REP_MS = 100
MIN_CPU_RUNS = 5
MAX_CPU_RUNS = 10_000


@dataclass(frozen=True)
class Timing:
    wall: Summary                      # ms per run (device time on a GPU)
    cpu: Summary | None = None         # CPU ms per run, all threads (CPU backends)
    warmup_ms: int = WARMUP_MS
    rep_ms: int = REP_MS
    flush_bytes: int | None = None     # L2 flush buffer zeroed before each run (GPU)
    tool: str = ""
    threads: str = ""                  # what the CPU backend may use, and where that came from

    @property
    def busy_threads(self) -> float | None:
        """CPU time / wall time: threads kept busy on average (CPU backends)."""
        return self.cpu.median / self.wall.median if self.cpu and self.wall.median else None

    def describe(self) -> str:
        parts = [f"{self.tool}: warmup {self.warmup_ms} ms, then {self.wall.n} runs in ~{self.rep_ms} ms"]
        if self.flush_bytes:
            parts.append(f"L2 flushed before each run ({self.flush_bytes / 2**20:,.0f} MiB buffer zeroed)")
        if self.threads:
            parts.append(f"threads: {self.threads}")
        return "; ".join(parts)


def time_gpu(launch: Callable[[], object], *, warmup_ms: int = WARMUP_MS, rep_ms: int = REP_MS) -> Timing:
    from triton.runtime import driver
    from triton.testing import do_bench

    times = do_bench(launch, warmup=warmup_ms, rep=rep_ms, return_mode="all")
    try:
        flush = driver.active.get_empty_cache_for_benchmark()
        flush_bytes = flush.numel() * flush.element_size()
        del flush
    except Exception:  # a driver without a flush buffer: say nothing rather than guess
        flush_bytes = None
    return Timing(wall=summarize(list(times)), warmup_ms=warmup_ms, rep_ms=rep_ms, flush_bytes=flush_bytes,
                  tool="triton.testing.do_bench, device events per run")


def cpu_threads() -> str:
    """The thread count a CPU backend's launcher may use, and where it comes from: spine-triton's
    target carries its runtime's stream threads (`num_threads`); triton-cpu's OpenMP loop reads
    TRITON_CPU_MAX_THREADS / OMP_NUM_THREADS, else uses every core."""
    try:
        from triton.runtime import driver

        n = getattr(driver.active.get_current_target(), "num_threads", None)
    except Exception:       # no active driver: the environment is all there is to say
        n = None
    if isinstance(n, int) and n > 0:
        return f"{n} (the backend's target: its runtime's stream threads)"
    for var in ("TRITON_CPU_MAX_THREADS", "OMP_NUM_THREADS"):
        if os.environ.get(var):
            return f"{os.environ[var]} ({var})"
    return f"{os.cpu_count()} (cores; OMP_NUM_THREADS unset)"


def time_cpu(launch: Callable[[], object], *, warmup_ms: int = WARMUP_MS, rep_ms: int = REP_MS,
             clock: Callable[[], float] = time.perf_counter,
             cpu_clock: Callable[[], float] = time.process_time) -> Timing:
    """Wall and CPU time of each run: warmup for `warmup_ms`, then runs for about `rep_ms`
    (at least MIN_CPU_RUNS, at most MAX_CPU_RUNS)."""
    end = clock() + warmup_ms / 1e3
    launch()
    while clock() < end:
        launch()
    walls, cpus = [], []
    deadline = clock() + rep_ms / 1e3
    while len(walls) < MIN_CPU_RUNS or (clock() < deadline and len(walls) < MAX_CPU_RUNS):
        w0, c0 = clock(), cpu_clock()
        launch()
        walls.append((clock() - w0) * 1e3)
        cpus.append((cpu_clock() - c0) * 1e3)
    return Timing(wall=summarize(walls), cpu=summarize(cpus), warmup_ms=warmup_ms, rep_ms=rep_ms,
                  tool="time.perf_counter (wall) and time.process_time (CPU, all threads) per run",
                  threads=cpu_threads())


def timer_for(device: str) -> Callable[..., Timing]:
    """time_cpu for "cpu" (a CPU backend), time_gpu for a GPU ("cuda", which ROCm's torch uses too)."""
    return time_cpu if device == "cpu" else time_gpu
