"""What the device can do, measured once and cached: copy bandwidth (DRAM, and within the L2), matmul
FLOP/s per dtype, and the least GPU time one launch takes (launch_floor).

Copy bandwidth is a device-to-device copy of a 1 GiB buffer (`dst.copy_(src)`, bytes read +
written). Peak FLOP/s is torch.matmul of two 8192x8192 matrices in the dtype (cuBLAS on a GPU;
float32 with TF32 allowed, as Triton's tl.dot uses TF32 for float32 by default). Both are timed
like kernels (kinspect.bench.timing: device events, L2 flushed; wall time on a CPU) and cached in
kinspect's cache per device and driver, with the date and the method, so every percentage can
say what it is a percentage of. They are measurements of this device, not datasheet figures.
"""

from __future__ import annotations

import datetime
import json
import platform
from typing import Callable

from kinspect.bench.timing import timer_for
from kinspect.core.cache import cache_dir, key_of, write_text

COPY_BYTES = 1 << 30
CPU_COPY_BYTES = 1 << 28
MATMUL_N = 8192
CPU_MATMUL_N = 2048


def device_name(device: str = "cuda") -> str:
    if device == "cpu":
        return cpu_name()
    import torch

    return torch.cuda.get_device_name()


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "uarch", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cached(kind: str, device: str, measure: Callable[[], dict]) -> dict:
    import torch

    name = device_name(device)
    driver = "cpu" if device == "cpu" else (torch.version.cuda or torch.version.hip or "")
    path = cache_dir() / "device" / f"{kind}-{key_of(name, driver)}.json"
    if path.is_file():
        try:
            return json.loads(path.read_text())
        except ValueError:  # a truncated record from an interrupted run: measure again
            pass
    record = {**measure(), "device": name, "measured": datetime.date.today().isoformat()}
    write_text(path, json.dumps(record))
    return record


def copy_bandwidth(device: str = "cuda") -> dict:
    """{"gbps", "method", "measured", "device"} for this device, measured on first use."""
    def measure():
        import torch

        nbytes = CPU_COPY_BYTES if device == "cpu" else COPY_BYTES
        src = torch.empty(nbytes // 4, dtype=torch.float32, device=device)
        dst = torch.empty_like(src)
        t = timer_for(device)(lambda: dst.copy_(src), warmup_ms=25, rep_ms=200)
        return {"gbps": round(2 * nbytes / (t.wall.median * 1e-3) / 1e9, 1),
                "method": f"torch copy_ of a {nbytes >> 20} MiB buffer on {device}, 2 bytes moved per byte "
                          f"copied; median of {t.wall.n} runs ({t.tool})"}

    return _cached("copy", device, measure)


def matmul_peak(dtype: str, device: str = "cuda") -> dict:
    """{"tflops", "method", "measured", "device", "dtype"}: torch.matmul's FLOP/s in `dtype`."""
    def measure():
        import torch

        n = CPU_MATMUL_N if device == "cpu" else MATMUL_N
        a = torch.randn(n, n, device=device).to(getattr(torch, dtype))
        b = torch.randn(n, n, device=device).to(getattr(torch, dtype))
        tf32 = dtype == "float32" and device != "cpu"
        saved = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        try:
            t = timer_for(device)(lambda: torch.matmul(a, b), warmup_ms=25, rep_ms=200)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = saved
        return {"tflops": round(2 * n ** 3 / (t.wall.median * 1e-3) / 1e12, 1), "dtype": dtype,
                "method": f"torch.matmul {n}x{n}x{n} {dtype}{' with TF32 allowed' if tf32 else ''} on {device}; "
                          f"median of {t.wall.n} runs ({t.tool})"}

    return _cached(f"matmul-{dtype}", device, measure)


FLOOR_LAUNCHES = 1000


def _graphed_copies_ms(src, dst, copies: int) -> float:
    """Median ms of 5 replays of a CUDA graph holding `copies` copies of src into dst back to back (no CPU
    launch cost between them): the launch floor's and the L2 bandwidth's measurement."""
    import statistics

    import torch

    dst.copy_(src)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(copies):
                dst.copy_(src)
    torch.cuda.synchronize()
    graph.replay()
    times = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def launch_floor(device: str = "cuda") -> dict:
    """{"us", "method", "measured", "device"}: the least GPU time a launch takes on this device, what a
    kernel that moves almost nothing still costs the stream. A copy of 256 floats (one block that
    loads and stores), launched 1000 times back to back in a CUDA graph (no CPU launch cost between
    them), timed with device events; the median of 5 replays, divided by the launches."""
    def measure():
        import torch

        src = torch.ones(256, device=device)
        ms = _graphed_copies_ms(src, torch.empty_like(src), FLOOR_LAUNCHES)
        return {"us": round(ms * 1e3 / FLOOR_LAUNCHES, 3),
                "method": f"a copy of 256 floats on {device} launched {FLOOR_LAUNCHES} times back to back in a CUDA "
                          f"graph, device events; median of 5 replays per launch"}

    return _cached("floor", device, measure)


L2_COPIES = 50


def l2_bandwidth(device: str = "cuda") -> dict:
    """{"gbps", "bytes", "method", "measured", "device"}: a copy that stays in the L2 cache. Source and
    destination together take half the L2 (the cache's size as the driver reports it), copied
    L2_COPIES times back to back in a CUDA graph, so after the first copy every byte read was just
    written and sits in L2; device events, median of 5 replays. The ceiling of a kernel whose inputs
    the kernel before it just wrote (kinspect.analysis.sol)."""
    def measure():
        import torch

        l2 = int(torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size)
        nbytes = max(1 << 20, l2 // 4)
        src = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
        seconds = _graphed_copies_ms(src, torch.empty_like(src), L2_COPIES) * 1e-3
        return {"gbps": round(2 * nbytes * L2_COPIES / seconds / 1e9, 1), "bytes": l2,
                "method": f"a copy of {nbytes >> 20} MiB within the {l2 >> 20} MiB L2 on {device}, {L2_COPIES} times "
                          f"back to back in a CUDA graph, 2 bytes moved per byte copied; median of 5 replays"}

    return _cached("l2", device, measure)


CEILING_DTYPES = ("bfloat16", "float16", "float32")


def ceilings(device: str = "cuda"):
    """This device's copy bandwidth and matmul peaks (bf16, fp16, fp32 with TF32) as a store keeps them
    (kinspect.files.ceilings): what `kinspect capture --time` records when the program ends. Each figure is
    measured once per device and driver and cached (about a second in all the first time)."""
    from kinspect.files.ceilings import Ceilings

    copy = copy_bandwidth(device)
    peaks = {dtype: matmul_peak(dtype, device) for dtype in CEILING_DTYPES}
    floor = launch_floor(device) if device != "cpu" else None
    l2 = _l2_or_none(device)
    method = "; ".join([copy["method"]] + [p["method"] for p in peaks.values()] + ([floor["method"]] if floor else [])
                       + ([l2["method"]] if l2 else []))
    return Ceilings(device=copy["device"], copy_gbps=float(copy["gbps"]),
                    matmul_tflops={d: float(p["tflops"]) for d, p in peaks.items()},
                    measured=min([copy["measured"]] + [p["measured"] for p in peaks.values()]), method=method,
                    source="measured by the capture on its GPU", launch_floor_us=float(floor["us"]) if floor else None,
                    l2_gbps=float(l2["gbps"]) if l2 else None, l2_bytes=int(l2["bytes"]) if l2 else None)


def _l2_or_none(device: str) -> dict | None:
    """The L2 ceiling where the device has one to measure (a GPU whose driver reports its L2 size)."""
    if device == "cpu":
        return None
    try:
        return l2_bandwidth(device)
    except Exception:          # an older torch without L2_cache_size, a device without graphs: no L2 ceiling
        return None
