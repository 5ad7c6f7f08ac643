"""What kinspect reads of Triton's kernel metadata (a cache entry's <kernel>.json, a CompiledKernel's
metadata, a trace's compilation event): the target it was compiled for, and the options a variant keeps."""

from __future__ import annotations

from typing import Any

from kinspect.core.model import Target

# metadata keys kept as the variant's options (the rest stays in the stored <name>.json)
OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "warp_size", "maxnreg", "shared", "tmem_size",
               "enable_fp_fusion", "debug", "arch", "waves_per_eu", "matrix_instr_nonkdim", "kpack",
               "global_scratch_size")


def target_of(metadata: dict) -> Target:
    t = metadata.get("target")
    if isinstance(t, dict):
        return Target(str(t["backend"]), str(t["arch"]), int(t.get("warp_size") or 0))
    if t is not None and hasattr(t, "backend"):
        return Target(str(t.backend), str(t.arch), int(getattr(t, "warp_size", 0) or 0))
    if isinstance(t, (list, tuple)) and len(t) >= 2:
        return Target(str(t[0]), str(t[1]), int(t[2]) if len(t) > 2 else 0)
    return Target("unknown", "unknown")


def jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return str(value)
