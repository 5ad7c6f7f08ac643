"""CUPTI's kernel records as the timer reads them, on records laid out as CUPTI's header declares
CUpti_ActivityKernel4..10 (packed; the fields up to `name` that those versions share), in a buffer
walked the way cuptiActivityGetNextRecord walks one. The GPU tests read real records."""

import ctypes
import threading
from types import SimpleNamespace

from kinspect.hooks import cupti


class _Kernel(ctypes.Structure):         # CUpti_ActivityKernel9's leading fields, from cupti_activity.h
    _pack_ = 1
    _fields_ = [("kind", ctypes.c_uint32), ("cacheConfig", ctypes.c_uint8), ("sharedMemoryConfig", ctypes.c_uint8),
                ("registersPerThread", ctypes.c_uint16), ("partitionedGlobalCacheRequested", ctypes.c_uint32),
                ("partitionedGlobalCacheExecuted", ctypes.c_uint32), ("start", ctypes.c_uint64),
                ("end", ctypes.c_uint64), ("completed", ctypes.c_uint64), ("deviceId", ctypes.c_uint32),
                ("contextId", ctypes.c_uint32), ("streamId", ctypes.c_uint32), ("grid", ctypes.c_int32 * 3),
                ("block", ctypes.c_int32 * 3), ("staticSharedMemory", ctypes.c_int32),
                ("dynamicSharedMemory", ctypes.c_int32), ("localMemoryPerThread", ctypes.c_uint32),
                ("localMemoryTotal", ctypes.c_uint32), ("correlationId", ctypes.c_uint32), ("gridId", ctypes.c_int64),
                ("name", ctypes.c_void_p), ("tail", ctypes.c_uint8 * 88)]   # the rest of a record


class _Memcpy(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("kind", ctypes.c_uint32), ("rest", ctypes.c_uint8 * 60)]


def _records_reader(records):
    """A KernelRecords whose library walks `records` (ctypes structures laid end to end)."""
    size = sum(ctypes.sizeof(r) for r in records)
    buf = ctypes.create_string_buffer(size)
    offsets, at = [], 0
    for r in records:
        ctypes.memmove(ctypes.addressof(buf) + at, ctypes.addressof(r), ctypes.sizeof(r))
        offsets.append(at)
        at += ctypes.sizeof(r)
    base = ctypes.addressof(buf)

    def get_next(buffer, valid, record):
        current = record._obj.value
        i = 0 if current is None else offsets.index(current - base) + 1
        if i >= len(offsets) or offsets[i] >= valid:
            return 3                   # CUPTI_ERROR_MAX_LIMIT_REACHED: no more records
        record._obj.value = buffer + offsets[i]
        return 0

    reader = object.__new__(cupti.KernelRecords)
    reader.lib = SimpleNamespace(cuptiActivityGetNextRecord=get_next)
    reader._names, reader._kernels = {}, []
    reader._lock = threading.Lock()
    return reader, buf, size


def test_kernel_records_give_name_start_and_duration_and_other_kinds_are_skipped():
    names = [ctypes.create_string_buffer(b"triton_poi_fused_add_0"),
             ctypes.create_string_buffer(b"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEvi")]
    k1 = _Kernel(kind=cupti.CONCURRENT_KERNEL, start=1_000, end=3_500, correlationId=7)
    k1.name = ctypes.addressof(names[0])
    copy = _Memcpy(kind=1)
    k2 = _Kernel(kind=cupti.CONCURRENT_KERNEL, start=4_000, end=4_250)
    k2.name = ctypes.addressof(names[1])
    broken = _Kernel(kind=cupti.CONCURRENT_KERNEL, start=0, end=0)      # no timestamps: CUPTI could not time it
    broken.name = ctypes.addressof(names[0])
    assert _Kernel.start.offset == cupti.START_AT and _Kernel.name.offset == cupti.NAME_AT
    reader, buf, size = _records_reader([k1, copy, k2, broken])
    reader._read(ctypes.addressof(buf), size)
    assert reader._kernels == [("triton_poi_fused_add_0", 1_000, 2_500), (names[1].value.decode(), 4_000, 250)]
    assert cupti.demangle(reader._kernels[1][0]) == \
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int)"
    assert cupti.demangle("triton_poi_fused_add_0") == "triton_poi_fused_add_0"


def test_without_a_cupti_library_the_timer_says_it_uses_kinetos_session(monkeypatch):
    from kinspect.hooks import timers

    monkeypatch.setattr(cupti, "find_library", lambda: None)
    monkeypatch.setattr(timers, "_kineto", lambda: (lambda: None, lambda: []))
    start, stop, method, clock = timers._session()
    assert clock is None, "no CUPTI clock: no benchmark windows"
    assert method.startswith(timers.KINETO) and "CUPTI alone could not be loaded (OSError: no libcupti found" in method
