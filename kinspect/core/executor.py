"""Fan-out of plain jobs over this machine's processes and GPUs, or over a Ray cluster: one interface.

    ex = executor(cluster=None, gpus=None)         # local: every visible GPU; cluster="ray" or "ray://HOST:PORT"
    results = ex.map("kinspect.bench.runtime:time_stored", [(path, size), ...], gpu=True)
    for r in results: r.value, r.error, r.gpu      # in the order of the items

A job is a function named by its import path (one of kinspect's own, never a name read from a store)
and a tuple of plain values; a result is plain values too, so a job runs the same in a local process
and on a Ray worker. GPU jobs run one at a time per GPU: locally, one worker process per visible GPU,
pinned with CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES before it imports torch; on Ray, one actor per
GPU of the cluster (Ray does placement, transfer and retries). `pin` sends an item to one GPU (a
baseline timed on each GPU a sweep uses). Ctrl-C cancels what has not finished and keeps what has.

Why actors on Ray: a Ray task that asks for a GPU gets a fresh process by default (Ray does not reuse a
GPU task's worker, ray-project/ray#29624), which would import torch for every timing; an actor holds
its GPU, pinned by Ray, for its life, like a local worker, so what a worker caches (a tune's replayer,
a baseline's time) stays valid and `pin` means the same. A lost actor is restarted and its job retried
(max_restarts, max_task_retries); CPU jobs are plain tasks, retried elsewhere.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import queue
import socket
import threading
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Callable, Iterable


@dataclass(frozen=True)
class Gpu:
    """The GPU a job ran on: its index as the worker saw it listed by the host, model and UUID."""

    index: int
    name: str = ""
    uuid: str = ""
    host: str = ""

    def describe(self) -> str:
        return f"GPU {self.index}" + (f" ({self.name})" if self.name else "") + (f" on {self.host}" if self.host else "")

    def short(self, with_host: bool) -> str:
        """Its name in a list of GPUs: `1`, or `node2:1` where they span hosts."""
        return f"{self.host}:{self.index}" if with_host else str(self.index)

    @property
    def key(self) -> tuple:
        """One GPU across hosts: its UUID where known, else host and index."""
        return (self.uuid,) if self.uuid else (self.host, self.index)


@dataclass(frozen=True)
class Result:
    value: object = None
    error: str | None = None
    gpu: Gpu | None = None


def resolve(fn: str) -> Callable:
    module, _, name = fn.partition(":")
    if not module.startswith("kinspect."):
        raise ValueError(f"{fn}: an executor runs kinspect's own functions only")
    return getattr(importlib.import_module(module), name)


def _run(fn: str, args: tuple) -> tuple[object, str | None, Gpu | None]:
    try:
        value = resolve(fn)(*args)
        return value, None, _this_gpu()
    except Exception as e:          # a job's failure is its result; the others go on
        return None, f"{type(e).__name__}: {e}", _this_gpu()


_GPU_INDEX = "KINSPECT_GPU_INDEX"


def _this_gpu() -> Gpu | None:
    index = os.environ.get(_GPU_INDEX)
    if index is None:
        return None
    name = uuid = ""
    try:
        import torch

        if torch.cuda.is_available():
            props = torch.cuda.get_device_properties(0)
            name, uuid = props.name, str(getattr(props, "uuid", ""))
    except Exception:
        pass

    return Gpu(int(index), name, uuid, socket.gethostname())


def probe() -> str:
    """What a worker sees: the GPUs it was pinned to (a check of the pinning, and of a cluster's workers)."""
    return os.environ.get("CUDA_VISIBLE_DEVICES", "")


def _pin(index: int) -> None:
    """A GPU worker's initializer: it sees only its GPU (set before torch is imported in it)."""
    os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["HIP_VISIBLE_DEVICES"] = str(index)
    os.environ[_GPU_INDEX] = str(index)


def visible_gpus() -> list[int]:
    """The GPUs this process may use, as indices of the host's list (CUDA_VISIBLE_DEVICES honoured)."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES") or os.environ.get("HIP_VISIBLE_DEVICES")
    try:
        import torch

        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:
        n = 0
    if listed is not None and listed.strip():
        parts = [p.strip() for p in listed.split(",") if p.strip()]
        if all(p.isdigit() for p in parts):
            return [int(p) for p in parts][:n or len(parts)]
    return list(range(n))


class LocalExecutor:
    """This machine: CPU jobs in a process pool, GPU jobs in one worker process per GPU."""

    name = "local"

    def __init__(self, gpus: Iterable[int] | None = None, workers: int | None = None):
        self.gpus = list(gpus) if gpus is not None else visible_gpus()
        self.workers = workers or max(1, (os.cpu_count() or 1))
        self._pools: dict[int, ProcessPoolExecutor] = {}     # one worker per GPU, kept while the executor is

    def warm(self) -> None:
        """Start each GPU's worker now (importing torch there takes seconds): a benchmark's rounds then
        time the work, not the start."""
        self.map("kinspect.core.executor:probe", [()] * len(self.gpus), gpu=True,
                 pin={i: g for i, g in enumerate(self.gpus)})

    def close(self) -> None:
        for p in self._pools.values():
            p.shutdown(wait=True, cancel_futures=True)
        self._pools.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def map(self, fn: str, items: list[tuple], *, gpu: bool = False, pin: dict[int, int] | None = None,
            progress: Callable[[int, int], None] | None = None) -> list[Result]:
        if not items:
            return []
        if not gpu:
            ctx = get_context("spawn")
            with ProcessPoolExecutor(max_workers=min(self.workers, len(items)), mp_context=ctx) as pool:
                futures = [pool.submit(_run, fn, tuple(a)) for a in items]
                out = []
                for i, f in enumerate(futures):
                    out.append(Result(*f.result()))
                    if progress:
                        progress(i + 1, len(items))
                return out
        if not self.gpus:
            raise RuntimeError("no GPU visible to time on")
        ctx = get_context("spawn")
        for g in self.gpus:
            if g not in self._pools:
                self._pools[g] = ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_pin, initargs=(g,))
        try:
            return _over_gpus(fn, items, self.gpus, pin or {}, progress, self._pools)
        except KeyboardInterrupt:
            self._pools.clear()        # cancelled and shut down by _over_gpus
            raise


def _over_gpus(fn, items, gpus, pin, progress, pools=None) -> list[Result]:
    """Each GPU's worker takes the next item when it is free; pinned items wait for their GPU."""
    results: list[Result | None] = [None] * len(items)
    shared: queue.Queue = queue.Queue()
    own: dict[int, queue.Queue] = {g: queue.Queue() for g in gpus}
    for i in range(len(items)):
        (own[pin[i]] if pin.get(i) in own else shared).put(i)
    done = [0]
    lock = threading.Lock()
    stop = threading.Event()
    owned = pools is None
    if owned:
        ctx = get_context("spawn")
        pools = {g: ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_pin, initargs=(g,)) for g in gpus}

    def serve(g: int) -> None:
        while not stop.is_set():
            try:
                i = own[g].get_nowait()
            except queue.Empty:
                try:
                    i = shared.get_nowait()
                except queue.Empty:
                    return
            try:
                results[i] = Result(*pools[g].submit(_run, fn, tuple(items[i])).result())
            except Exception as e:         # the worker died: the job's result says so
                results[i] = Result(None, f"{type(e).__name__}: {e}", Gpu(g))
            with lock:
                done[0] += 1
                if progress:
                    progress(done[0], len(items))

    threads = [threading.Thread(target=serve, args=(g,), daemon=True) for g in gpus]
    try:
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.2)
    except KeyboardInterrupt:
        stop.set()
        for p in pools.values():
            p.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        if owned:
            for p in pools.values():
                p.shutdown(wait=True, cancel_futures=True)
    return [r if r is not None else Result(None, "not run") for r in results]


class RayExecutor:
    """A Ray cluster: the one RAY_ADDRESS names, the one `address` names (ray://HOST:PORT), else a local
    Ray started for the run. CPU jobs are tasks of one CPU; GPU jobs go to one actor per GPU."""

    name = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None, num_gpus: int | None = None):
        from kinspect.core.optional import need

        self.ray = need("ray", "--cluster ray")
        if not self.ray.is_initialized():
            kwargs = {"address": address} if address else ({"address": os.environ["RAY_ADDRESS"]}
                                                           if os.environ.get("RAY_ADDRESS") else {})
            if not kwargs and num_cpus:
                kwargs["num_cpus"] = num_cpus
            if not kwargs.get("address") and num_gpus is not None:
                kwargs["num_gpus"] = num_gpus
            self.ray.init(ignore_reinit_error=True, log_to_driver=False, include_dashboard=False, **kwargs)
        self.gpus = list(range(int(self.ray.cluster_resources().get("GPU", 0))))
        self._actors: list | None = None

    def warm(self) -> None:
        """Start every GPU's actor now (each imports torch when it first runs a job)."""
        self.map("kinspect.core.executor:probe", [()] * len(self.gpus), gpu=True,
                 pin={i: g for i, g in enumerate(self.gpus)})

    def close(self) -> None:
        for a in self._actors or []:
            with contextlib.suppress(Exception):
                self.ray.kill(a)
        self._actors = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def map(self, fn: str, items: list[tuple], *, gpu: bool = False, pin: dict[int, int] | None = None,
            progress: Callable[[int, int], None] | None = None) -> list[Result]:
        if not items:
            return []
        if gpu:
            return self._on_gpus(fn, items, pin or {}, progress)
        ray = self.ray
        task = ray.remote(_ray_job).options(num_cpus=1, max_retries=2)
        refs = [task.remote(fn, tuple(a)) for a in items]
        return self._gather(refs, progress)

    def _gather(self, refs: list, progress) -> list[Result]:
        ray = self.ray
        out: list[Result | None] = [None] * len(refs)
        index = {r: i for i, r in enumerate(refs)}
        pending = list(refs)
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for r in ready:
                    out[index[r]] = self._result(r)
                if progress:
                    progress(len(refs) - len(pending), len(refs))
        except KeyboardInterrupt:
            for r in pending:
                ray.cancel(r, force=True)
            raise
        return [r if r is not None else Result(None, "not run") for r in out]

    def _result(self, ref) -> Result:
        try:
            return Result(*self.ray.get(ref))
        except Exception as e:
            return Result(None, f"{type(e).__name__}: {e}")

    def _on_gpus(self, fn, items, pin, progress) -> list[Result]:
        """Each GPU's actor takes the next item when it is free; pinned items wait for their GPU."""
        ray = self.ray
        if not self.gpus:
            raise RuntimeError("no GPU in the Ray cluster to time on")
        if self._actors is None:
            actor = ray.remote(_GpuWorker).options(num_gpus=1, num_cpus=0, max_restarts=2, max_task_retries=2)
            self._actors = _in_gpu_order(ray, [actor.remote() for _ in self.gpus])
        slot = {g: k for k, g in enumerate(self.gpus)}
        own: list[list[int]] = [[] for _ in self._actors]
        shared: list[int] = []
        for i in range(len(items)):
            (own[slot[pin[i]]] if pin.get(i) in slot else shared).append(i)
        for q in own:
            q.reverse()
        shared.reverse()
        out: list[Result | None] = [None] * len(items)
        running: dict = {}                 # ref -> (item, actor slot)
        idle = list(range(len(self._actors)))
        lost: set[int] = set()
        done = 0
        try:
            while True:
                for k in list(idle):
                    if own[k] or shared:
                        i = own[k].pop() if own[k] else shared.pop()
                        running[self._actors[k].run.remote(fn, tuple(items[i]))] = (i, k)
                        idle.remove(k)
                if not running:
                    break
                ready, _ = ray.wait(list(running), num_returns=1)
                for r in ready:
                    i, k = running.pop(r)
                    try:
                        out[i] = Result(*ray.get(r))
                        idle.append(k)
                    except ray.exceptions.RayActorError as e:     # restarts spent: its pinned items cannot run
                        lost.add(k)
                        out[i] = Result(None, f"its GPU's worker was lost: {type(e).__name__}")
                        for j in own[k]:
                            out[j] = out[i]
                        own[k].clear()
                    except Exception as e:
                        out[i] = Result(None, f"{type(e).__name__}: {e}")
                        idle.append(k)
                    done += 1
                    if progress:
                        progress(done, len(items))
                if len(lost) == len(self._actors):
                    break
        except KeyboardInterrupt:
            for r in running:
                with contextlib.suppress(Exception):
                    ray.cancel(r)
            self.close()
            raise
        return [r if r is not None else Result(None, "not run") for r in out]


def _in_gpu_order(ray, actors: list) -> list:
    """The actors sorted by the host and GPU each holds, so `pin` g means the g-th GPU of the cluster
    (on one machine, GPU g itself): Ray hands out GPUs in its own order, not the actors' creation order.
    An actor that cannot say (it died starting) keeps its place; its jobs report the loss."""
    try:
        where = ray.get([a.where.remote() for a in actors])
    except Exception:
        return actors
    return [a for _, a in sorted(zip(where, actors), key=lambda p: p[0])]


class _GpuWorker:
    """A Ray actor holding one GPU (Ray sets CUDA_VISIBLE_DEVICES for its life)."""

    def __init__(self):
        ids = os.environ.get("CUDA_VISIBLE_DEVICES", "")
        if ids and ids.split(",")[0].isdigit():
            os.environ[_GPU_INDEX] = ids.split(",")[0]

    def where(self) -> tuple[str, int]:
        index = os.environ.get(_GPU_INDEX, "")
        return socket.gethostname(), int(index) if index.isdigit() else -1

    def run(self, fn: str, args: tuple):
        return _run(fn, args)


def _ray_job(fn: str, args: tuple):
    return _run(fn, args)


def executor(cluster: str | None = None, gpus: Iterable[int] | None = None, workers: int | None = None):
    """The executor a command's --cluster (and --gpus) name: None is this machine."""
    if not cluster:
        return LocalExecutor(gpus, workers)
    if cluster == "ray":
        return RayExecutor(num_cpus=workers)
    if cluster.startswith("ray://"):
        return RayExecutor(address=cluster)
    raise ValueError(f"--cluster {cluster}: give ray (RAY_ADDRESS, else a local Ray) or ray://HOST:PORT")


def fan_out(cluster: str | None = None, gpus: int | None = None):
    """The executor a command's --cluster and --gpus name: the cluster, else this machine with its first
    `gpus` visible GPUs (default: all of them). A wrong --cluster is a UsageError of one line."""
    from kinspect.core.errors import UsageError

    try:
        return executor(cluster, None if cluster else visible_gpus()[:gpus] if gpus else None)
    except ValueError as e:
        raise UsageError(str(e)) from None


@contextlib.contextmanager
def fanned_out(cluster: str | None = None, gpus: int | None = None):
    """fan_out's executor for one command, closed (its GPU workers stopped) when the command ends."""
    ex = fan_out(cluster, gpus)
    try:
        yield ex
    finally:
        close = getattr(ex, "close", None)
        if close is not None:
            close()
