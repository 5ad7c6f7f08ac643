"""Pure-Python work over many variants, spread over the machine's cores.

kinspect's parsers, analyses and highlighting are pure Python, so threads would not overlap: many
items are handed to worker processes, forked where the platform allows (nothing to import again).
A sweep's compiles are not done here: they run in fresh processes (kinspect.diff.sweep), since a
parent that imported Triton or CUDA must not be forked into a compiler.
"""

from __future__ import annotations

import os
from typing import Callable, Iterable, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def process_map(fn: Callable[[T], R], items: Iterable[T], *, least: int, jobs: int | None = None) -> list[R]:
    """[fn(x) for x in items], in order: in this process below `least` items or on one core, else in
    `jobs` worker processes (default one per core), in chunks so each starts once. `fn` must be a
    module-level function (or a functools.partial of one) for the workers to receive it."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    items = list(items)
    workers = min(jobs or usable_cores(), len(items))
    if workers < 2 or len(items) < least:
        return [fn(x) for x in items]
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    chunk = max(1, len(items) // (workers * 4))
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method)) as pool:
        return list(pool.map(fn, items, chunksize=chunk))
