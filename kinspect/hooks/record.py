"""Turn one call of Triton's compilation listener into a stored kinspect Variant."""

from __future__ import annotations

import datetime
import inspect
from pathlib import Path
from typing import Any

from kinspect import backends
from kinspect.backends import derive, pending_derivers
from kinspect.files.metadata import OPTION_KEYS, jsonable, target_of
from kinspect.core.model import CompileTimes, SourceRef, StageFile, Variant
from kinspect.files.store import SOURCE, Store, write_atomic

def _arg_name(fn, path) -> str:
    names = getattr(fn, "arg_names", None) or []
    idx = path[0] if isinstance(path, tuple) else path
    base = names[idx] if isinstance(idx, int) and idx < len(names) else str(idx)
    rest = path[1:] if isinstance(path, tuple) else ()
    return base + "".join(f"[{i}]" for i in rest)


def specialization(src) -> tuple[dict, dict, dict]:
    """(signature, constexprs, attributes) by argument name, from an ASTSource.

    constexprs holds the kernel's declared tl.constexpr parameters; runtime ints the JIT
    specialised to a constant (Triton does this for the value 1) go to attributes as
    {"constant": value}, next to `tt.divisibility` and friends.
    """
    fn = getattr(src, "fn", None)
    declared = {p.name for p in getattr(fn, "params", ()) if getattr(p, "is_constexpr", False)}
    signature = {str(k): str(v) for k, v in (getattr(src, "signature", None) or {}).items()}
    constexprs, attributes = {}, {}
    for path, value in (getattr(src, "constants", None) or {}).items():
        name = _arg_name(fn, path)
        if name in declared or not declared:
            constexprs[name] = jsonable(value)
        else:
            attributes.setdefault(name, {})["constant"] = jsonable(value)
    for path, attrs in (getattr(src, "attrs", None) or {}).items():
        if attrs:
            attributes.setdefault(_arg_name(fn, path), {}).update({str(a[0]): jsonable(a[1]) for a in attrs})
    return signature, constexprs, attributes


def source_ref(src) -> SourceRef | None:
    jit = getattr(src, "fn", None)
    fn = getattr(jit, "fn", None)
    if fn is None:
        return _without_function(src, jit)
    # The JITFunction read its source when it was decorated (raw_src, starting_line_number, as
    # inspect.getsourcelines gives them): reading the file again inside the compile costs ms.
    lines, first = getattr(jit, "raw_src", None), getattr(jit, "starting_line_number", None)
    try:
        if lines is None or first is None:
            lines, first = inspect.getsourcelines(fn)
        return SourceRef(file=str(inspect.getsourcefile(fn) or fn.__code__.co_filename), line=first,
                         text="".join(lines))
    except (OSError, TypeError):
        return None


def _without_function(src, jit) -> SourceRef | None:
    """The source of a JITFunction that lost its Python function: Inductor drops it before a compile worker
    pickles its autotuner (CachingAutotuner.prepare_for_pickle), and the program gets it back without one, so
    a warm-cache capture, which sees no compile, would record no source. The JITFunction still holds the lines
    it was read from; the file is the one the caller names (`src.file`: the autotuner's module), never
    guessed."""
    lines, first, file = getattr(jit, "raw_src", None), getattr(jit, "starting_line_number", None), \
        getattr(src, "file", None)
    if not lines or not isinstance(first, int) or not file:
        return None
    return SourceRef(file=str(file), line=first, text="".join(lines))


def compile_times(times, startup_us: int = 0) -> CompileTimes | None:
    """Triton's CompileTimes, with `startup_us` of Triton's one-time start-up (hooks.startup) moved
    out of the IR initialisation it was measured in."""
    if times is None:
        return None
    stages = tuple((str(ext), int(us)) for ext, us in getattr(times, "lowering_stages", ()) or ())
    init = int(getattr(times, "ir_initialization", 0) or 0)
    startup_us = min(max(int(startup_us), 0), init)
    return CompileTimes(init - startup_us, stages, int(getattr(times, "store_results", 0) or 0), startup_us)


def build(*, src, metadata: dict, metadata_group: dict, times, cache_hit: bool, offline: bool,
          origin: str, triton_version: str, startup_us: int = 0, backend: str | None = None
          ) -> tuple[Variant, dict[str, Path]]:
    """The Variant (not yet stored) and the stage files to copy, by file name. `backend`: the kinspect
    backend that compiled it, where Triton's target does not say (default: the one it names)."""
    name = str(metadata.get("name") or getattr(src, "name", "kernel"))
    target = target_of(metadata)
    prefix = name[:150] + "."  # Triton truncates file names to 150 characters
    named = {}
    for fname, path in sorted(metadata_group.items()):
        fname = str(fname)
        if not fname.startswith("__grp__"):
            named[fname] = fname[len(prefix):] if fname.startswith(prefix) else fname.rsplit(".", 1)[-1]
    # Stage names come from the metadata group: whatever the backend made, GPU or CPU.
    backend = backends.get(backend) if backend else backends.for_target(target.backend, named.values())
    files: dict[str, Path] = {}
    stages = []
    for fname, stage in named.items():
        kind = backend.stage_kind(stage)
        p = Path(metadata_group[fname])
        files[fname] = p
        # Lines are counted when a reader asks (render.terminal): this runs inside the user's compile.
        stages.append(StageFile(name=stage, file=fname, bytes=p.stat().st_size, lines=None,
                                dialect=backends.dialect_of(kind, backend, target.arch, p), binary=kind.binary))
    stages.sort(key=lambda s: (backend.stage_kind(s.name).order, s.name))
    signature, constexprs, attributes = specialization(src)
    options = {k: jsonable(metadata[k]) for k in OPTION_KEYS if k in metadata}
    variant = Variant(
        kernel=name, hash=str(metadata.get("hash", "")), target=target, offline=offline,
        signature=signature, constexprs=constexprs, attributes=attributes, options=options,
        stages=tuple(stages), times=compile_times(times, startup_us), cache_hit=bool(cache_hit),
        triton_version=str(metadata.get("triton_version") or triton_version), source=source_ref(src),
        origin=origin, created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds"),
        extra={"backend": backend.name} if backend.name != target.backend else {})
    bundle = kernel_source(src)
    if bundle is not None:
        files[SOURCE] = bundle
    return variant, files


def kernel_source(src) -> str | None:
    """The kernel's source with its namespace (kinspect.replay.source), as JSON: what replays the
    variant later without importing the program's files. About 0.1 ms; None when the source
    cannot be read (an unpickled kernel from a compile worker, a kernel typed at a prompt)."""
    import json

    fn = getattr(src, "fn", None)
    if fn is None:
        return None
    try:
        from kinspect.replay.source import of_function

        return json.dumps(of_function(fn).to_json())
    except Exception:
        return None


def store_variant(store: Store, group: str, variant: Variant, files: dict[str, Path], *,
                  replace: bool = True) -> Variant:
    """Write the stage files Triton made and the record, atomically. Derived stages (SASS from the
    cubin, CPU assembly) are made later by `finish`: this runs inside the user's compile."""
    return store.write(group, variant, files, replace=replace)


def finish(variant: Variant) -> Variant:
    """Add the derived stages to a stored variant, in its own folder (kinspect's store), and rewrite
    its record; a variant with nothing to derive is returned as it is."""
    import dataclasses

    if not pending_derivers(variant):
        return variant
    folder = Path(variant.path)
    backend = backends.of(variant)
    files = {s.file: folder / s.file for s in variant.stages}
    new, notes, texts = derive(variant, files)
    for fname, text in texts.items():
        write_atomic(folder / fname, text)
    stages = sorted(variant.stages + tuple(new), key=lambda s: (backend.stage_kind(s.name).order, s.name))
    variant = dataclasses.replace(variant, stages=tuple(stages), notes=variant.notes + tuple(notes))
    Store(folder.parent.parent).update_record(variant)
    return variant
