"""Make real foreign inputs of one kernel compile, offline, for the trace and differential tests:

    python tests/trace_maker.py OUT KERNEL TARGET [COMPRESSION ...]    (COMPRESSION "-": no trace)

In one process it compiles KERNEL (file.py:name with kinspect_examples, or a shipped kernel's file
and name) for TARGET through kinspect's compile-only driver, exactly as `kinspect dump` specializes
it, with

- tritonparse's structured logging on (`tritonparse.structured_logging.init`, SASS dump on), once
  per COMPRESSION ("none", "gzip", "zstd"): OUT/trace-<compression>/ holds its raw trace; "default"
  writes OUT/trace-default/ with tritonparse's default options (no SASS: only ttir, ttgir, llir, ptx
  and the metadata);
- TRITON_KERNEL_DUMP=1 into OUT/dump and TRITON_CACHE_DIR=OUT/cache: Triton's own dump and cache;

then records one launch of it through tritonparse's own launch hook (LaunchHookImpl with the
metadata add_launch_metadata makes from the example arguments: a launch event as on a GPU, without
running anything), and writes tritonparse's parsed output of the plain trace into OUT/parsed.
Run in its own process: tritonparse's logging and Triton's knobs are process-wide.
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class _Lazy:
    """What Triton hands a launch hook: an object whose get() gives the launch's metadata."""

    def __init__(self, data):
        self.data = data

    def get(self):
        return self.data


def main(out: Path, kernel: str, target: str, compressions: list[str]) -> None:
    os.environ.update(TRITON_KERNEL_DUMP="1", TRITON_DUMP_DIR=str(out / "dump"), TRITON_CACHE_DIR=str(out / "cache"),
                      TRITON_ALWAYS_COMPILE="1")
    sys.path.insert(0, str(ROOT))
    from kinspect.compile.driver import compile_only, fresh_binders
    from kinspect.compile.targets import resolve
    from kinspect.compile.user import load

    resolved = resolve(target)
    uk = load(kernel, {}, {}, resolved=resolved)
    if compressions == ["-"]:             # Triton's dump and cache only (where tritonparse is not installed)
        with compile_only(resolved.target), fresh_binders(uk.fn):
            uk.fn.warmup(**uk.args, **uk.constexprs, **uk.options, grid=uk.grid)
        return
    import tritonparse.structured_logging as tp

    kernel_obj = None
    for compression in compressions:
        if compression == "default":    # tritonparse's defaults: no SASS (it dumps SASS only when asked)
            tp.init(str(out / "trace-default"), enable_trace_launch=True)
        else:
            tp.init(str(out / f"trace-{compression}"), enable_trace_launch=True, enable_sass_dump=True,
                    compression=compression)
        with compile_only(resolved.target), fresh_binders(uk.fn):
            kernel_obj = uk.fn.warmup(**uk.args, **uk.constexprs, **uk.options, grid=uk.grid)
        # the grid as the program gave it: tritonparse on a GPU (triton 3.6, H200) records attn_fwd[(2, 2)]
        # as [2, 2], and kinspect reads it as the driver launches it, (2, 2, 1)
        grid = tuple(uk.grid(uk.args) if callable(uk.grid) else uk.grid)
        launch = tp.add_launch_metadata(grid, kernel_obj.metadata, {**uk.args, **uk.constexprs})
        tp.LaunchHookImpl()(_Lazy({"name": kernel_obj.name, "function": None, "stream": 0, **launch}))
        tp.clear_logging_config()       # closes this trace's file: the next compression writes its own
    if "none" in compressions:
        from tritonparse.parse.utils import unified_parse

        unified_parse(str(out / "trace-none"), out=str(out / "parsed"), overwrite=True, skip_logger=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:] or ["none"])
