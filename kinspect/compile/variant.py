"""Compile one variant through the JIT (on the device, or offline through the compile-only driver)
and record it with kinspect.hooks into a kinspect store, from a private Triton cache."""

from __future__ import annotations

import contextlib
from pathlib import Path

from kinspect.compile import compile_error_line, jit_function, private_cache
from kinspect.compile.targets import Resolved
from kinspect.core.errors import CompileError, KinspectError
from kinspect.core.model import Loaded, Variant


# said of a variant a sweep took from the store instead of compiling it (progress lines count these apart)
REUSED_NOTE = "reused from the store: its JIT times are those of its own compile (a fresh --store compiles again)"

def compile_variant(fn, *, args: dict, constexprs: dict, grid, resolved: Resolved, out_dir: str | Path,
                    group: str, options: dict | None = None, extra: dict | None = None,
                    reuse: bool = False, env: dict | None = None) -> Variant:
    """Compile one variant and store it; returns the stored Variant, with `extra` (how a user
    kernel was loaded, its autotune config) added to its record. With `reuse`, a variant the store
    holds from the same request (request_key) is returned as stored, its JIT times those of its
    own compile: a sweep run twice, or `report` after `diff`, shows the same figures. `env`: Triton's
    compile settings to set in the environment for this compile (file_launches.COMPILE_KNOBS), as the
    launch's own code had them."""
    from kinspect.compile.file_launches import knobs_set

    with knobs_set(env or {}):
        return _compile(fn, args=args, constexprs=constexprs, grid=grid, resolved=resolved, out_dir=out_dir,
                        group=group, options=options, extra=extra, reuse=reuse)


def _compile(fn, *, args: dict, constexprs: dict, grid, resolved: Resolved, out_dir: str | Path, group: str,
             options: dict | None, extra: dict | None, reuse: bool) -> Variant:
    from kinspect.compile.driver import compile_only, fresh_binders
    from kinspect.hooks.record import finish
    from kinspect.hooks.session import recording

    fn = jit_function(fn)
    # an option the kernel has a parameter of the same name for (gemlite's `num_stages: tl.constexpr`)
    # is that parameter's value, passed once
    options = {k: v for k, v in (options or {}).items() if v is not None and k not in constexprs and k not in args}
    request = request_key(fn, args, constexprs, resolved, options)
    if reuse:
        stored = _stored(out_dir, group, request)
        if stored is not None:
            return stored
    extra = {**(extra or {}), "request": request}
    on_device = not resolved.offline
    driver = contextlib.nullcontext() if on_device else compile_only(resolved.target)
    with private_cache(), driver, fresh_binders(fn), \
            recording(out_dir, group=group, offline=resolved.offline, strict=True, origin="kinspect",
                      launches=False, backend=resolved.backend_name or None) as rec:
        try:
            kernel = fn.warmup(**args, **constexprs, **options, grid=grid)
        except KinspectError:
            raise
        except Exception as e:
            raise CompileError(compile_error_line(fn, e)) from None
        if not rec.variants:
            raise KinspectError(f"Triton compiled '{group}' but reported no variant (was the listener replaced?)")
        # kinspect's own command: derive SASS / CPU assembly now, outside Triton's compile.
        variant = finish(rec.variants[-1])
        if extra:
            variant = with_extra(variant, extra)
        # Load inside the block: the private cache still holds the binary Triton may read lazily.
        # a CPU backend has no registers to load
        return with_loaded_resources(variant, kernel) if on_device and resolved.backend.gpu else variant


def request_key(fn, args: dict, constexprs: dict, resolved: Resolved, options: dict) -> str:
    """What decides a compile, before it runs: the kernel's source and that of everything it calls
    (the JIT's own cache_key), the arguments as specialization sees them (dtype, shape, strides,
    16-byte alignment; scalars by value), constexprs, options, target, Triton's version and the
    TRITON_* settings of the environment (cache and dump folders aside)."""
    import hashlib
    import os

    import triton

    def arg(v):
        if hasattr(v, "data_ptr") and hasattr(v, "stride"):
            return ("tensor", str(v.dtype), tuple(v.shape), tuple(v.stride()), v.data_ptr() % 16 == 0)
        return repr(v)

    env = sorted((k, v) for k, v in os.environ.items()
                 if k.startswith(("TRITON_", "MLIR_", "LLVM_")) and not k.endswith(("_CACHE_DIR", "_DUMP_DIR")))
    parts = (fn.cache_key, sorted((k, arg(v)) for k, v in args.items()), sorted((k, repr(v)) for k, v in
             constexprs.items()), sorted(options.items()), str(resolved.target), resolved.offline,
             triton.__version__, env)
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def _stored(out_dir: str | Path, group: str, request: str) -> Variant | None:
    """The variant of the store's `group` compiled from `request`, as stored, or None."""
    import dataclasses

    from kinspect.core.errors import KinspectError
    from kinspect.files.store import kernel_folder, read_record

    folder = kernel_folder(Path(out_dir), group)
    for record in sorted(folder.glob("*/record.json")) if folder.is_dir() else ():
        try:
            v = read_record(record.parent)
        except KinspectError:
            continue
        if v.request == request and not v.problems:
            note = REUSED_NOTE
            return dataclasses.replace(v, notes=v.notes + (note,))
    return None


def with_extra(variant: Variant, extra: dict) -> Variant:
    """The variant with `extra` (Variant's fields by name: request, user) set, and its record updated."""
    import dataclasses

    from kinspect.files.store import Store

    variant = dataclasses.replace(variant, **extra)
    Store(Path(variant.path).parent.parent).update_record(variant)
    return variant


def with_loaded_resources(variant: Variant, kernel) -> Variant:
    """On a device, load the binary to read the registers and spills the driver reports."""
    import dataclasses

    from kinspect.files.store import Store

    try:
        kernel._init_handles()
        loaded = Loaded(registers=int(kernel.n_regs), spills=int(kernel.n_spills),
                        max_threads=int(getattr(kernel, "n_max_threads", 0) or 0))
    except Exception as e:
        return dataclasses.replace(variant, notes=variant.notes + (f"could not load on the device: {e}",))
    variant = dataclasses.replace(variant, loaded=loaded)
    Store(Path(variant.path).parent.parent).update_record(variant)
    return variant
