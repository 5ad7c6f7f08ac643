"""Compile one variant through the JIT (on the device, or offline through the compile-only driver)
and record it with kinspect.hooks into a kinspect store, from a private Triton cache."""

from __future__ import annotations

import contextlib
from pathlib import Path

from kinspect.compile import compile_error_line, jit_function, private_cache
from kinspect.compile.targets import Resolved
from kinspect.errors import CompileError, KinspectError
from kinspect.model import Variant


def compile_variant(fn, *, args: dict, constexprs: dict, grid, resolved: Resolved, out_dir: str | Path,
                    group: str, options: dict | None = None, extra: dict | None = None) -> Variant:
    """Compile one variant and store it; returns the stored Variant, with `extra` (how a user
    kernel was loaded, its autotune config) added to its record."""
    from kinspect.compile.driver import compile_only, fresh_binders
    from kinspect.hooks import capture
    from kinspect.hooks.record import finish

    fn = jit_function(fn)
    # an option the kernel has a parameter of the same name for (gemlite's `num_stages: tl.constexpr`)
    # is that parameter's value, passed once
    options = {k: v for k, v in (options or {}).items() if v is not None and k not in constexprs and k not in args}
    on_device = not resolved.offline
    driver = contextlib.nullcontext() if on_device else compile_only(resolved.target)
    with private_cache(), driver, fresh_binders(fn), \
            capture(out_dir, group=group, offline=resolved.offline, strict=True, origin="kinspect",
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


def with_extra(variant: Variant, extra: dict) -> Variant:
    import dataclasses

    from kinspect.store import Store

    variant = dataclasses.replace(variant, extra={**variant.extra, **extra})
    Store(Path(variant.path).parent.parent).update_record(variant)
    return variant


def with_loaded_resources(variant: Variant, kernel) -> Variant:
    """On a device, load the binary to read the registers and spills the driver reports."""
    import dataclasses

    from kinspect.store import Store

    try:
        kernel._init_handles()
        loaded = {"registers": int(kernel.n_regs), "spills": int(kernel.n_spills),
                  "max_threads": int(getattr(kernel, "n_max_threads", 0) or 0)}
    except Exception as e:
        return dataclasses.replace(variant, notes=variant.notes + (f"could not load on the device: {e}",))
    variant = dataclasses.replace(variant, extra={**variant.extra, "loaded": loaded})
    Store(Path(variant.path).parent.parent).update_record(variant)
    return variant
