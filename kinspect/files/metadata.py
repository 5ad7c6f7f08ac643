"""What kinspect reads of Triton's kernel metadata (a cache entry's <kernel>.json, a CompiledKernel's
metadata, a trace's compilation event): the target it was compiled for, and the options a variant keeps."""

from __future__ import annotations

import math
from typing import Any

from kinspect.core.model import Target

# metadata keys kept as the variant's options (the rest stays in the stored <name>.json)
OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "warp_size", "maxnreg", "shared", "tmem_size",
               "enable_fp_fusion", "debug", "arch", "waves_per_eu", "matrix_instr_nonkdim", "kpack",
               "global_scratch_size")


# How each kept option is checked when the metadata comes from a file kinspect did not write (a cache
# entry, a trace): a count in a range, a flag, or a short name. A value of another type is left out
# and said, never turned into a number by force (`int("4x")`, `int(inf)`).
COUNTS = {"num_warps": 1024, "num_stages": 1024, "num_ctas": 1024, "warp_size": 1024, "maxnreg": 1 << 16,
          "shared": 1 << 32, "tmem_size": 1 << 32, "waves_per_eu": 1024, "matrix_instr_nonkdim": 1024,
          "kpack": 1024, "global_scratch_size": 1 << 40}
FLAGS = ("enable_fp_fusion", "debug")


def _count(value, most: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
        return None
    return value


def _name(value) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value)
    return text if 0 < len(text) <= 64 and text.isprintable() else None


def target_of(metadata: dict) -> Target:
    """The target Triton metadata names; ValueError when it names one of the wrong shape."""
    t = metadata.get("target")
    if isinstance(t, dict):
        backend, arch, warp = t.get("backend"), t.get("arch"), t.get("warp_size") or 0
    elif t is not None and hasattr(t, "backend"):
        backend, arch, warp = t.backend, t.arch, getattr(t, "warp_size", 0) or 0
    elif isinstance(t, (list, tuple)) and len(t) >= 2:
        backend, arch, warp = t[0], t[1], t[2] if len(t) > 2 else 0
    else:
        return Target("unknown", "unknown")
    if _name(backend) is None or _name(arch) is None or _count(warp, 1024) is None:
        raise ValueError(f"target {str(t)[:80]!r} is not a backend, an arch and a warp size")
    return Target(str(backend), str(arch), warp)


def checked_options(meta: dict) -> tuple[dict, list[str]]:
    """The options kept of a foreign metadata dict (OPTION_KEYS), each checked; and a line for each left
    out for its type or range."""
    options, wrong = {}, []
    for key in OPTION_KEYS:
        value = meta.get(key)
        if value is None:           # not set: nothing to keep, nothing wrong
            continue
        if key in COUNTS:
            ok = _count(value, COUNTS[key]) is not None
        elif key in FLAGS:
            ok = isinstance(value, bool)
        else:
            ok = _name(value) is not None or value is None
        if ok:
            options[key] = value
        else:
            shown = repr(value) if not isinstance(value, float) or math.isfinite(value) else str(value)
            wrong.append(f"metadata {key} = {ascii(shown[:40])} is not a valid {key}; left out")
    return options, wrong


def jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return str(value)
