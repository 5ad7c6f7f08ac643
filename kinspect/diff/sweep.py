"""Compile the cross product of a sweep's values, in parallel processes.

Triton's compile holds the GIL for much of its work, so threads would not overlap: each worker is
a fresh `python -m kinspect.diff.worker` process that reads jobs as JSON lines on stdin and answers
one JSON line per job. Fresh processes, not multiprocessing: nothing the caller started (CUDA,
OpenMP threads) is forked, and the caller's __main__ is never re-imported in a worker. Each worker
pays the torch/triton import once (about 3 s), in parallel with the others, and then compiles job
after job; the caller itself never imports Triton for a sweep. One worker per usable core, at most
one per job; with one job, or jobs=1, the compile runs in this process.

Ctrl-C stops a sweep: the workers run in process groups of their own (a terminal's Ctrl-C reaches
this process only, never a compile halfway), and this process kills them and raises
kinspect.core.interrupt.Interrupted with the outcomes finished before.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable

from kinspect.diff.jobs import Job, JobResult
from kinspect.core.errors import KinspectError
from kinspect.core.interrupt import Interrupted
from kinspect.core.parallel import usable_cores


@dataclass(frozen=True)
class Sweep:
    outcomes: tuple[JobResult, ...]
    workers: int                 # processes that compiled (1: in this process)
    cores: int
    seconds: float
    notes: tuple[str, ...] = field(default_factory=tuple)


def cross(kernels, *, targets=(None,), constexprs: dict[str, list] | None = None, num_warps=(None,),
          num_stages=(None,), args=(), size=None, out_dir="",
          configs: Callable[[str, str | None, dict], list] | None = None) -> list[Job]:
    """Every combination, in the order the values were given (kernels outermost). `configs(kernel,
    target, constexprs)` gives an autotuned kernel's config numbers to sweep (default: none)."""
    constexprs = constexprs or {}
    keys = list(constexprs)
    jobs = []
    for kernel, target, values in itertools.product(kernels, targets or (None,),
                                                    itertools.product(*(constexprs[k] for k in keys))):
        chosen = dict(zip(keys, values))
        for c, w, s in itertools.product(configs(kernel, target, chosen) if configs else [None],
                                         num_warps or (None,), num_stages or (None,)):
            jobs.append(Job(kernel=kernel, target=target, constexprs=tuple(chosen.items()), num_warps=w,
                            num_stages=s, args=tuple(args), size=size, out_dir=str(out_dir), config=c))
    return jobs


def compile_job(job: Job) -> JobResult:
    """Compile one job into its store and make its record of figures (kinspect.analysis.summary: the
    analysis is as costly as the compile, so it runs in the worker too, and is cached); a KinspectError
    becomes the outcome's error line."""
    from kinspect.analysis.summary import summaries
    from kinspect.compile.args import parse_args
    from kinspect.compile.dump import dump

    if job.replay:      # a captured launch compiled again: the kernel and arguments come from the capture
        from kinspect.diff.replayed import compile_job as compile_replay

        return compile_replay(job)
    try:
        result = dump(job.kernel, target=job.target, constexprs=dict(job.constexprs),
                      args=parse_args(job.args), num_warps=job.num_warps, num_stages=job.num_stages,
                      size=job.size, out_dir=job.out_dir, config=job.config, reuse=True)
        figures = summaries([result.variant], jobs=1)[0]
    except KinspectError as e:
        return JobResult(job, error=str(e))
    from kinspect.compile.variant import REUSED_NOTE

    return JobResult(job, path=result.variant.path, metrics=figures.to_json(),
                     reused=REUSED_NOTE in result.variant.notes)


def configs_of(kernel: str, targets: list, combos: list[dict], args: list[str], only: list[int] | None) -> dict:
    """{"configs": for each target and -p combination, the config numbers to sweep ([None] for a
    kernel that is not autotuned)} or {"error": the one-line message}."""
    from kinspect.compile.args import parse_args
    from kinspect.compile.user import configs_to_sweep
    from kinspect.core.errors import KinspectError

    try:
        return {"configs": [configs_to_sweep(kernel, target, combo, parse_args(args), only)
                            for target in targets for combo in combos]}
    except KinspectError as e:
        return {"error": str(e)}


def run(jobs: list[Job], *, workers: int | None = None,
        progress: Callable[[JobResult | None, int], None] | None = None, started: list | None = None,
        subprocesses: bool = False) -> Sweep:
    """Compile every job; outcomes come back in the jobs' order whatever order they finish in.
    `progress(outcome, total)` is called once with None before the first compile, then per job.
    `started` are Workers already running (see plan): they compile first, the extra ones stop.
    With `subprocesses`, even one job compiles in a worker (this process cannot compile: its Triton
    runs under the interpreter)."""
    import time

    started = list(started or ())
    try:
        if progress:
            progress(None, len(jobs))
    except BaseException:        # Ctrl-C at "compiling 0/N": no worker started for this sweep lives on
        for w in started:
            w.kill()
        raise

    cores = usable_cores()
    workers = max(1, min(workers or cores, len(jobs)))
    start = time.perf_counter()
    for w in started[workers:]:
        w._stop()
    started = started[:workers]
    if started:
        outcomes = _in_pool(jobs, workers, progress, started)
    elif workers == 1 and not subprocesses:
        outcomes = []
        try:
            for job in jobs:
                outcomes.append(compile_job(job))
                if progress:
                    progress(outcomes[-1], len(jobs))
        except KeyboardInterrupt:
            raise Interrupted(dict(enumerate(outcomes))) from None
    else:
        outcomes = _in_pool(jobs, workers, progress)
    notes = ()
    if workers > 1:
        notes = (f"compiled in {workers} processes on {cores} core(s): JIT times include waiting for a core",)
    return Sweep(tuple(outcomes), workers, cores, time.perf_counter() - start, notes)


def _in_pool(jobs: list[Job], workers: int, progress, started: list | None = None) -> list[JobResult]:
    """Feed jobs to `workers` worker processes, one thread per worker to talk to it. Ctrl-C (or any
    exception here) kills every worker; Interrupted carries the outcomes finished before."""
    import queue
    import threading

    todo: queue.Queue = queue.Queue()
    for i, job in enumerate(jobs):
        todo.put(i)
    results: dict[int, JobResult] = {}
    lock = threading.Lock()
    stop = threading.Event()
    ready = list(started or ())
    pool: list[Worker] = []

    def serve(w: Worker):
        with w:
            while not stop.is_set():
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    outcome = w.compile(jobs[i])
                except Exception as e:  # the worker could not even start (no memory, no python)
                    outcome = JobResult(jobs[i], error=f"could not run a compile worker: {type(e).__name__}: {e}")
                with lock:
                    if stop.is_set():      # killed: the outcome is the kill's, not the job's
                        return
                    results[i] = outcome
                    if progress:
                        progress(outcome, len(jobs))

    threads: list[threading.Thread] = []
    try:        # from the first worker made: Ctrl-C at any moment leaves no worker compiling on its own
        pool += [ready.pop() if ready else Worker() for _ in range(workers)]
        threads += [threading.Thread(target=serve, args=(w,), daemon=True) for w in pool]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    except BaseException as e:
        with lock:
            stop.set()
            done = dict(results)
        for w in pool + ready:
            w.kill()
        for t in threads:
            t.join(timeout=10)
        if isinstance(e, KeyboardInterrupt):
            raise Interrupted(done) from None
        raise
    return [results[i] for i in range(len(jobs))]


class Worker:
    """One `python -m kinspect.diff.worker` process; a crash becomes the job's error, and the next
    job gets a fresh process."""

    def __init__(self):
        import threading

        self.proc = None
        self.killed = False
        self._lock = threading.Lock()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._stop()

    def _start(self):
        import subprocess
        import sys
        import tempfile

        with self._lock:
            if self.killed:
                raise KinspectError("the sweep was stopped")
            self.stderr = tempfile.TemporaryFile()
            # a process group of its own: a terminal's Ctrl-C is the caller's to handle (kill)
            self.proc = subprocess.Popen([sys.executable, "-m", "kinspect.diff.worker"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self.stderr, text=True, bufsize=1,
                                         start_new_session=True)

    def kill(self) -> None:
        """Stop the worker now, with what it runs (ptxas: its whole process group); it starts no more."""
        import os
        import signal

        with self._lock:
            self.killed = True
            proc = self.proc
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
            proc.wait()

    def _stop(self):
        if self.proc is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except Exception:
                self.proc.kill()
            self.stderr.close()
            self.proc = None

    def compile(self, job: Job) -> JobResult:
        import dataclasses

        answer, died = self._ask(dataclasses.asdict(job))
        if died:
            return JobResult(job, error=died)
        return JobResult(job, **answer)

    def plan(self, request: dict) -> dict:
        """An autotuned kernel's configs for each target and -p combination (see worker.plan)."""
        answer, died = self._ask({"plan": request})
        if died:
            raise KinspectError(died)
        return answer

    def _ask(self, message: dict) -> tuple[dict, str]:
        """(the worker's answer, "") or ({}, why it died)."""
        import json

        if self.proc is None:
            self._start()
        try:
            self.proc.stdin.write(json.dumps(message) + "\n")
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
            return {}, f"the compile worker died (exit {code}): {last[-1] if last else 'no message'}"
        return json.loads(answer), ""


def absolute_kernel(kernel: str) -> str:
    """A user kernel's file as an absolute path, so a worker finds it whatever its directory."""
    from kinspect.compile.loader import absolute

    return absolute(kernel)


def plan(kernels: list[str], *, targets, constexprs: dict[str, list] | None, args=(), only=None,
         workers: int | None = None) -> tuple[Callable[[str, str | None, dict], list], list]:
    """The configs to sweep for each user kernel, target and -p combination: every config
    prune_configs_by keeps for the example arguments (or the numbers in `only`). Asked of a worker
    process, so this one never imports Triton; the workers are started here, all at once, and go
    on to compile (pass them to run). Returns (configs(kernel, target, constexprs), workers)."""
    from kinspect.compile.loader import is_user_kernel

    users = [k for k in kernels if is_user_kernel(k)]
    if not users:
        if only:
            raise KinspectError("--config picks autotune configs of a kernel in your file (file.py:kernel)")
        return (lambda kernel, target, chosen: [None]), []
    constexprs = constexprs or {}
    keys = list(constexprs)
    combos = [dict(zip(keys, values)) for values in itertools.product(*(constexprs[k] for k in keys))]
    if workers == 1:   # -j 1: everything in this process, as a one-job sweep compiles
        pool, asker = [], configs_of
    else:
        pool = [Worker() for _ in range(max(1, min(workers or usable_cores(), 64)))]
        for w in pool:
            w._start()  # they import torch and triton in parallel while the first one answers
        asker = lambda **request: pool[0].plan(request)  # noqa: E731
    found: dict[tuple, list] = {}
    try:
        for kernel in users:
            answer = asker(kernel=kernel, targets=list(targets), combos=combos, args=list(args),
                           only=list(only) if only else None)
            if answer.get("error"):
                raise KinspectError(answer["error"])
            for (target, i), configs in zip(itertools.product(targets, range(len(combos))), answer["configs"]):
                found[kernel, target, i] = configs
    except BaseException:
        for w in pool:
            w._stop()
        raise

    def configs(kernel: str, target: str | None, chosen: dict) -> list:
        i = combos.index(chosen) if kernel in users else 0
        return found.get((kernel, target, i), [None])

    return configs, pool
