"""What the device can do, measured once and cached: copy bandwidth.

The figure is device-to-device copy of a 1 GiB buffer (`dst.copy_(src)`, bytes read + written),
timed by triton.testing.do_bench (L2 flushed between runs), median of the runs. It is cached in
kinspect's cache per device name and driver, with the date and the method, so every roofline
percentage can say what it is a percentage of.
"""

from __future__ import annotations

import datetime
import json

from kinspect.cache import cache_dir, key_of, write_text

COPY_BYTES = 1 << 30
METHOD = "torch copy_ of a 1 GiB buffer, 2 bytes moved per byte copied, triton.testing.do_bench median"


def device_name() -> str:
    import torch

    return torch.cuda.get_device_name()


def copy_bandwidth() -> dict:
    """{"gbps", "method", "measured", "device"} for the current device, measured on first use."""
    import torch

    name = device_name()
    path = cache_dir() / "device" / f"{key_of(name, torch.version.cuda or torch.version.hip or '')}.json"
    if path.is_file():
        return json.loads(path.read_text())
    from triton.testing import do_bench

    src = torch.empty(COPY_BYTES // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    ms = do_bench(lambda: dst.copy_(src), warmup=25, rep=200, return_mode="median")
    record = {"gbps": round(2 * COPY_BYTES / (ms * 1e-3) / 1e9, 1), "method": METHOD, "device": name,
              "measured": datetime.date.today().isoformat()}
    write_text(path, json.dumps(record))
    return record
