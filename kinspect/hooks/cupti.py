"""CUPTI's kernel activity records and nothing else: the `--time` timer's session.

A kineto session (torch.profiler's, even with CUDA activities only) also turns on CUPTI's records of
every CUDA runtime and driver API call, memcpy and memset; on the H200 a torch.compile'd GPT-2
training step ran 1.14x slower under one, and the same process stayed slower after it ended. Kernel
records alone cost that step about 1.06x (benchmarks/timing_sessions_gpu.py compares the two sessions;
benchmarks/gpt2_step.py measures `capture --time` against plain).
So the timer asks the CUPTI library the process's torch uses, through ctypes, for
CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL records only, and reads from each record its start and end and
the kernel's name: fields of CUpti_ActivityKernel4 to CUpti_ActivityKernel10 (CUDA 9 to 13) whose
offsets those versions share.

CUPTI has one pair of buffer callbacks per process. kineto registers its own each time a
session is enabled, so the program's own torch.profiler keeps working: the timer stops its session
when the program's profiler starts and registers its callbacks again when that one ends
(kinspect.hooks.timers.ProgramsProfiler).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import struct
import sys
import threading

CONCURRENT_KERNEL = 10      # CUpti_ActivityKind
FLUSH_FORCED = 1            # CUpti_ActivityFlag for cuptiActivityFlushAll
SUCCESS = 0
START_AT, NAME_AT = 16, 104  # offsets of `start` (then `end`) and `name` in a kernel record
BUFFER = 8 << 20            # bytes per activity buffer (about 40,000 kernel records)

_KIND = struct.Struct("<I")
_SPAN = struct.Struct("<QQ")
_PTR = struct.Struct("<Q")
_REQUESTED = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                              ctypes.POINTER(ctypes.c_size_t))
_COMPLETED = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t,
                              ctypes.c_size_t)


def find_library() -> str | None:
    """The libcupti this process uses: one already loaded (torch's kineto), else the one torch's
    CUDA packages ship (the one kineto would load), else the CUDA toolkit's."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rsplit(None, 1)[-1]
                if "/libcupti.so" in path and os.path.isfile(path):
                    return path
    except OSError:
        pass
    patterns = [os.path.join(p, "nvidia", "*", "lib", "libcupti.so*") for p in sys.path if p]
    patterns += [os.path.join(p, "nvidia", "cuda_cupti", "lib", "libcupti.so*") for p in sys.path if p]
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            patterns.append(os.path.join(home, "extras", "CUPTI", "lib64", "libcupti.so*"))
    for pattern in patterns:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return ctypes.util.find_library("cupti")


class KernelRecords:
    """A CUPTI session of kernel records: `start()`, then `stop()` gives [(kernel name, start ns,
    duration ns)] of every kernel that ran on the device in between, in the order CUPTI delivered them."""

    def __init__(self, path: str | None = None):
        path = path or find_library()
        if not path:
            raise OSError("no libcupti found (torch's nvidia packages, CUDA_HOME/extras/CUPTI)")
        lib = self.lib = ctypes.CDLL(path)
        self.path = path
        lib.cuptiActivityRegisterCallbacks.argtypes = [_REQUESTED, _COMPLETED]
        lib.cuptiActivityEnable.argtypes = lib.cuptiActivityDisable.argtypes = [ctypes.c_int]
        lib.cuptiActivityFlushAll.argtypes = [ctypes.c_uint32]
        lib.cuptiActivityGetNextRecord.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
        lib.cuptiGetTimestamp.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
        for fn in ("cuptiActivityRegisterCallbacks", "cuptiActivityEnable", "cuptiActivityDisable",
                   "cuptiActivityFlushAll", "cuptiActivityGetNextRecord", "cuptiGetTimestamp"):
            getattr(lib, fn).restype = ctypes.c_int
        self._buffers: dict[int, object] = {}     # address -> its ctypes buffer, while CUPTI holds it
        self._free: list = []
        self._kernels: list[tuple[str, int, int]] = []
        self._names: dict[int, str] = {}          # CUPTI shares one name string per kernel
        self._lock = threading.Lock()
        self._requested = _REQUESTED(self._on_requested)   # kept alive as long as CUPTI may call them
        self._completed = _COMPLETED(self._on_completed)
        self.dropped_errors = 0

    def start(self) -> None:
        rc = self.lib.cuptiActivityRegisterCallbacks(self._requested, self._completed)
        if rc != SUCCESS:
            raise RuntimeError(f"CUPTI refused the activity callbacks (error {rc}: another CUPTI client, "
                               "such as Nsight Systems or Nsight Compute, may hold it)")
        rc = self.lib.cuptiActivityEnable(CONCURRENT_KERNEL)
        if rc != SUCCESS:
            raise RuntimeError(f"CUPTI refused kernel activity records (error {rc})")

    def timestamp(self) -> int:
        """CUPTI's clock now, in ns: the clock of the records' start times."""
        t = ctypes.c_uint64(0)
        self.lib.cuptiGetTimestamp(ctypes.byref(t))
        return t.value

    def stop(self) -> list[tuple[str, int, int]]:
        try:
            import torch

            if torch.cuda.is_available():
                torch.cuda.synchronize()
        except Exception:
            pass
        self.lib.cuptiActivityDisable(CONCURRENT_KERNEL)
        self.lib.cuptiActivityFlushAll(FLUSH_FORCED)
        with self._lock:
            out, self._kernels = self._kernels, []
        return out

    # -- CUPTI's callbacks (its threads, or the one flushing) ------------------------------------------

    def _on_requested(self, buffer, size, max_records) -> None:
        try:
            with self._lock:
                b = self._free.pop() if self._free else ctypes.create_string_buffer(BUFFER + 8)
                address = (ctypes.addressof(b) + 7) & ~7        # CUPTI wants 8-byte aligned buffers
                self._buffers[address] = b
            buffer[0] = address
            size[0] = BUFFER
            max_records[0] = 0
        except Exception:
            buffer[0] = None
            size[0] = 0

    def _on_completed(self, context, stream, buffer, size, valid) -> None:
        try:
            self._read(buffer, valid)
        except Exception:
            self.dropped_errors += 1
        finally:
            with self._lock:
                b = self._buffers.pop(buffer, None)
                if b is not None:
                    self._free.append(b)

    def _read(self, buffer: int, valid: int) -> None:
        if not buffer or not valid:
            return
        view = (ctypes.c_char * valid).from_address(buffer)
        record = ctypes.c_void_p()
        get_next, names, out = self.lib.cuptiActivityGetNextRecord, self._names, []
        kind, span, ptr = _KIND.unpack_from, _SPAN.unpack_from, _PTR.unpack_from
        while get_next(buffer, valid, ctypes.byref(record)) == SUCCESS:
            at = record.value - buffer
            if kind(view, at)[0] != CONCURRENT_KERNEL:
                continue
            start, end = span(view, at + START_AT)
            p = ptr(view, at + NAME_AT)[0]
            name = names.get(p)
            if name is None:
                name = names[p] = ctypes.string_at(p).decode("utf-8", "replace") if p else "?"
            if end >= start > 0:
                out.append((name, start, end - start))
        with self._lock:
            self._kernels += out


def demangle(name: str) -> str:
    """A C++ kernel's name as people read it (CUPTI gives the mangled one; kineto's are demangled)."""
    if not name.startswith("_Z"):
        return name
    try:
        import torch

        return torch._C._demangle(name) or name
    except Exception:
        return name
