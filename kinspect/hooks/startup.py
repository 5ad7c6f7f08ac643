"""Triton's one-time start-up, timed where it happens.

The first compile in a process hashes Triton's own sources and its 500 MB libtriton for the cache
key (`triton.runtime.cache.triton_key`, cached for the process). The compilation listener reports
that time as part of the kernel's IR initialisation, so a kernel looked 2 s slow to compile when
most of it was Triton's. While a capture is active, the hash is timed when it is first computed,
and the recorder moves that time out of the next compile's IR initialisation into `startup_us`.
"""

from __future__ import annotations

import threading
import time

from kinspect.core.patching import Patches


class StartupClock:
    """Times the first triton_key() of the process; `take()` hands out the time not yet attributed."""

    def __init__(self):
        self._pending_us = 0
        self._lock = threading.Lock()
        self._patches = None

    def install(self) -> None:
        import triton.runtime.cache as cache

        original = cache.triton_key
        if not hasattr(original, "cache_info") or original.cache_info().currsize:
            return  # already paid in this process (or a Triton that computes it differently)
        clock = self

        def triton_key():
            if original.cache_info().currsize:
                return original()
            t0 = time.perf_counter()
            key = original()
            with clock._lock:
                clock._pending_us += int((time.perf_counter() - t0) * 1e6)
            return key

        triton_key.cache_info = original.cache_info  # what install() itself checks, for a nested capture
        self._patches = Patches()
        self._patches.attr(cache, "triton_key", triton_key)

    def restore(self) -> None:
        if self._patches is not None:
            self._patches.close()
            self._patches = None

    def take(self) -> int:
        with self._lock:
            us, self._pending_us = self._pending_us, 0
        return us
