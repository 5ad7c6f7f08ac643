"""Compile the cross product of a sweep's values, in parallel processes.

Triton's compile holds the GIL for much of its work, so threads would not overlap: each worker is
a fresh `python -m kinspect.diff.worker` process that reads jobs as JSON lines on stdin and answers
one JSON line per job. Fresh processes, not multiprocessing: nothing the caller started (CUDA,
OpenMP threads) is forked, and the caller's __main__ is never re-imported in a worker. Each worker
pays the torch/triton import once (about 3 s), in parallel with the others, and then compiles job
after job; the caller itself never imports Triton for a sweep. One worker per usable core, at most
one per job; with one job, or jobs=1, the compile runs in this process.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from kinspect.errors import KinspectError


@dataclass(frozen=True)
class Job:
    """One variant to compile, in plain values a worker process can receive."""

    kernel: str                              # shipped name or absolute path/file.py:name
    target: str | None
    constexprs: tuple[tuple[str, object], ...] = ()
    num_warps: int | None = None
    num_stages: int | None = None
    args: tuple[str, ...] = ()               # --arg NAME=TYPE strings, parsed in the worker
    size: str | None = None
    out_dir: str = ""
    replay: str = ""                         # a captured variant's folder or a replay spec file (kinspect.replay)

    def describe(self) -> str:
        parts = [self.kernel] + [f"{k}={v}" for k, v in self.constexprs]
        parts += [f"{k}={v}" for k, v in (("target", self.target), ("num_warps", self.num_warps),
                                          ("num_stages", self.num_stages)) if v is not None]
        return " ".join(parts)


@dataclass(frozen=True)
class Outcome:
    job: Job
    path: str | None = None      # the stored variant folder
    error: str | None = None
    metrics: dict | None = None  # its row figures (kinspect.diff.table.metrics), measured by the worker


@dataclass(frozen=True)
class Sweep:
    outcomes: tuple[Outcome, ...]
    workers: int                 # processes that compiled (1: in this process)
    cores: int
    seconds: float
    notes: tuple[str, ...] = field(default_factory=tuple)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def cross(kernels, *, targets=(None,), constexprs: dict[str, list] | None = None, num_warps=(None,),
          num_stages=(None,), args=(), size=None, out_dir="") -> list[Job]:
    """Every combination, in the order the values were given (kernels outermost)."""
    constexprs = constexprs or {}
    keys = list(constexprs)
    jobs = []
    for kernel, target, values, w, s in itertools.product(kernels, targets or (None,),
                                                          itertools.product(*(constexprs[k] for k in keys)),
                                                          num_warps or (None,), num_stages or (None,)):
        jobs.append(Job(kernel=kernel, target=target, constexprs=tuple(zip(keys, values)), num_warps=w,
                        num_stages=s, args=tuple(args), size=size, out_dir=str(out_dir)))
    return jobs


def compile_job(job: Job) -> Outcome:
    """Compile one job into its store and measure its row figures (the analysis is as costly as the
    compile, so it runs in the worker too); a KinspectError becomes the outcome's error line."""
    from kinspect import api
    from kinspect.compile.args import parse_args
    from kinspect.diff.table import metrics

    if job.replay:      # a captured launch compiled again: the kernel and arguments come from the capture
        from kinspect.replay.compile import compile_job as compile_replay

        return compile_replay(job)
    try:
        result = api.dump(job.kernel, target=job.target, constexprs=dict(job.constexprs),
                          args=parse_args(job.args), num_warps=job.num_warps, num_stages=job.num_stages,
                          size=job.size, out_dir=job.out_dir)
        figures = metrics(result.variant)
    except KinspectError as e:
        return Outcome(job, error=str(e))
    return Outcome(job, path=result.variant.path, metrics=figures)


def run(jobs: list[Job], *, workers: int | None = None,
        progress: Callable[[Outcome | None, int], None] | None = None, subprocesses: bool = False) -> Sweep:
    """Compile every job; outcomes come back in the jobs' order whatever order they finish in.
    `progress(outcome, total)` is called once with None before the first compile, then per job.
    With `subprocesses`, even one job compiles in a worker (this process cannot compile: its Triton
    runs under the interpreter)."""
    import time

    if progress:
        progress(None, len(jobs))

    cores = usable_cores()
    workers = max(1, min(workers or cores, len(jobs)))
    start = time.perf_counter()
    if workers == 1 and not subprocesses:
        outcomes = []
        for job in jobs:
            outcomes.append(compile_job(job))
            if progress:
                progress(outcomes[-1], len(jobs))
    else:
        outcomes = _in_pool(jobs, workers, progress)
    notes = ()
    if workers > 1:
        notes = (f"compiled in {workers} processes on {cores} core(s): JIT times include waiting for a core",)
    return Sweep(tuple(outcomes), workers, cores, time.perf_counter() - start, notes)


def _in_pool(jobs: list[Job], workers: int, progress) -> list[Outcome]:
    """Feed jobs to `workers` worker processes, one thread per worker to talk to it."""
    import queue
    import threading

    todo: queue.Queue = queue.Queue()
    for i, job in enumerate(jobs):
        todo.put(i)
    results: dict[int, Outcome] = {}
    lock = threading.Lock()

    def serve():
        with Worker() as w:
            while True:
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    outcome = w.compile(jobs[i])
                except Exception as e:  # the worker could not even start (no memory, no python)
                    outcome = Outcome(jobs[i], error=f"could not run a compile worker: {type(e).__name__}: {e}")
                with lock:
                    results[i] = outcome
                    if progress:
                        progress(outcome, len(jobs))

    threads = [threading.Thread(target=serve, daemon=True) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [results[i] for i in range(len(jobs))]


class Worker:
    """One `python -m kinspect.diff.worker` process; a crash becomes the job's error, and the next
    job gets a fresh process."""

    def __init__(self):
        self.proc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._stop()

    def _start(self):
        import subprocess
        import sys
        import tempfile

        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "kinspect.diff.worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, text=True, bufsize=1)

    def _stop(self):
        if self.proc is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except Exception:
                self.proc.kill()
            self.stderr.close()
            self.proc = None

    def compile(self, job: Job) -> Outcome:
        import dataclasses
        import json

        if self.proc is None:
            self._start()
        try:
            self.proc.stdin.write(json.dumps(dataclasses.asdict(job)) + "\n")
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            answer = ""
        if not answer:
            self.proc.wait()
            self.stderr.seek(0)
            last = [ln for ln in self.stderr.read().decode(errors="replace").splitlines() if ln.strip()]
            code = self.proc.returncode
            self._stop()
            return Outcome(job, error=f"the compile worker died (exit {code}): {last[-1] if last else 'no message'}")
        return Outcome(job, **json.loads(answer))


def absolute_kernel(kernel: str) -> str:
    """A user kernel's file as an absolute path, so a worker finds it whatever its directory."""
    from kinspect.compile.user import is_user_kernel

    if not is_user_kernel(kernel):
        return kernel
    path, _, name = kernel.rpartition(":")
    return f"{Path(path).resolve()}:{name}"
