"""A captured variant as `kinspect bench`'s input: its most frequent launch, ready to run.

`captured(name, store)` says whether a bench argument names a captured variant (a folder, or a
name in the store as `kinspect show` takes it); `prepare` makes the bench's Launch from it. The
bytes behind GB/s are those the program view estimates for the replayed launch
(kinspect.analysis.traffic: what the kernel's index expressions and masks reach, else each
tensor argument read or written once), since a captured kernel declares no formula; FLOPs are
not estimated: an argument list does not say what a kernel computes.
"""

from __future__ import annotations

from pathlib import Path

from kinspect.core.errors import KinspectError, NotFound, UsageError

BYTES_NOTE = ("GB/s from bytes estimated as the program view estimates them: {bytes} by {method}; no FLOP "
              "estimate (pass --bytes / --flops for yours)")


def no_device_line(name: str, store=None, named: str | None = None) -> str:
    """`named`: how the commands it suggests name the variant (kinspect.analysis.lookup.handle)."""
    from kinspect.files.store import store_flag

    s = store_flag(store)
    typed, name = name, named or name
    return (f"no device here to run the captured '{typed}' on (no GPU, no CPU Triton backend such as triton-cpu): "
            f"run its captured launch under Triton's interpreter with `kinspect bench {name}{s} --interpret`, write "
            f"it as a script for a GPU machine with `kinspect repro {name}{s} -o repro.py`, or read its code with "
            f"`kinspect show {name}{s} --stage ptx`")


def captured(name: str, store: str | Path, values: dict | None = None) -> str | None:
    """The folder of the captured variant `name` names (`values`, -p, pick one of several as in
    `kinspect show`), or None when it names a kernel (shipped, or file.py:kernel) or nothing in the store."""
    from kinspect import kernels
    from kinspect.compile.user import is_user_kernel
    from kinspect.analysis.lookup import find_variant
    from kinspect.files.store import is_store

    if is_user_kernel(name) or name in kernels.names():
        return None
    p = Path(name)
    if p.exists():      # a variant folder, or a store or kernel folder holding one captured variant
        if not (p.is_dir() and is_store(p)):
            _not_replayable(p)
            return None
        return str(Path(find_variant(name, store, prefer=lambda v: v.ran).path).resolve())
    if not Path(store).is_dir():
        return None

    try:
        return str(Path(find_variant(name, store, prefer=lambda v: v.ran, values=values).path).resolve())
    except NotFound:
        if values and _names_captured(name, store):
            from kinspect.files.store import store_flag

            given = " ".join(f"-p {k}={v}" for k, v in values.items())
            raise UsageError(f"{given} does not apply to a captured variant: no variant of '{name}' the store holds "
                             f"has it, and bench replays a captured launch as it was (-p only picks one of several). "
                             f"Compare block sizes with `kinspect diff {name}{store_flag(store)} --num-warps 4,8` or "
                             f"-p NAME=V1,V2 there") from None
        return None
    except UsageError:      # several: -p values pick one, as find_variant's hint says
        if not values:
            raise
    return str(Path(find_variant(name, store, prefer=lambda v: v.ran, values=values).path).resolve())


def _names_captured(name: str, store) -> bool:
    from kinspect.analysis.lookup import find_variant

    try:
        find_variant(name, store)
        return True
    except KinspectError as e:      # several match: still a captured kernel's name
        return not isinstance(e, NotFound)


def _not_replayable(p: Path) -> None:
    """A Triton cache entry, dump folder or trace named to bench: one line saying what bench takes."""
    from kinspect.core.errors import UsageError
    from kinspect.analysis.lookup import kind_of

    if p.is_file() and p.suffix == ".py":
        return
    kind = kind_of(p)
    if kind in ("stage file", "empty"):
        return
    raise UsageError(f"'{p}' is a {kind}: bench runs a kernel on the device (a shipped name, or "
                     f"file.py:kernel) or replays a variant `kinspect capture` recorded with its launches; "
                     f"see what this one compiles to with `kinspect vec-report {p}`")


def prepare(folder: str, *, device, constexprs: dict | None = None, num_warps: int | None = None,
            num_stages: int | None = None, bytes_moved: int | None = None, flops: int | None = None,
            launch: int = 1, size: str | None = None, args: dict | None = None):
    """The bench Launch of a captured variant's `launch`-th most frequent signature on `device`
    (other warps or stages may be asked for: they change neither the grid nor what it covers)."""
    from kinspect.core.errors import UsageError

    if constexprs or size or args:
        what = "-p" if constexprs else "--size" if size else "--arg"
        raise UsageError(f"{what} does not apply to a captured variant: bench replays the captured launch, whose "
                         f"grid was computed for its captured sizes and constexprs. Compare block sizes with "
                         f"`kinspect diff VARIANT -p NAME=V1,V2`, or bench the kernel with your own arguments "
                         f"(kinspect bench file.py:kernel --arg ...)")
    from kinspect import backends
    from kinspect.bench.prepared import Launch
    from kinspect.compile import jit_function
    from kinspect.compile.replayed import kernel
    from kinspect.replay.args import FILL_NOTE, values
    from kinspect.replay.spec import how, load

    spec = load(folder, launch)
    example = spec.origin == "example"
    if not spec.grid or any(int(g) <= 0 for g in spec.grid):
        raise KinspectError(f"the captured launch of '{spec.kernel}' has the grid {tuple(spec.grid)}, which launches "
                            f"no program (a capture records (0, 0, 0) where it could not work out the grid of an "
                            f"Inductor static launch): there is nothing to run")
    fn = jit_function(kernel(spec))
    vals = values(spec.args, spec.signature, spec.attributes, device)
    allowed = backends.for_target(_backend(device)).launch_options
    options = {k: v for k, v in spec.options.items() if k in allowed}
    options.update({k: v for k, v in (("num_warps", num_warps), ("num_stages", num_stages)) if v is not None})
    if bytes_moved is None and example:     # what the file's formulas gave for this example when it was compiled
        from kinspect.files.store import read_record
        from kinspect.replay.spec import example_rates

        bytes_moved, kept_flops = example_rates(read_record(Path(spec.variant)))
        flops = flops if flops is not None else kept_flops
    estimated = bytes_moved is None
    method = ""
    if estimated and spec.variant:
        from kinspect.analysis.traffic import launch_traffic, method_text
        from kinspect.files.store import read_record

        t = launch_traffic(read_record(Path(spec.variant)), spec.args, tuple(spec.grid))
        bytes_moved, method = t.bytes or None, f"{t.describe()}: {method_text(t.method)}"
    if bytes_moved is None and estimated:
        bytes_moved, method = vals.tensor_bytes or None, "each tensor argument's elements read or written once"
    if example:
        notes = [f"replays the example launch `kinspect dump` compiled the variant for: {spec.describe()}"]
    else:
        notes = [f"replays the captured launch {spec.calls:,} of the variant's {spec.total_calls:,} launches had: "
                 f"{spec.describe()}"]
    notes += [f"kernel {how(spec)}", FILL_NOTE]
    if vals.integer_tensors:
        notes.append(f"integer tensors (zeros): {', '.join(vals.integer_tensors)}: a kernel that reads them as sizes "
                     f"or offsets does less work than it did in the program")
    return Launch(label=spec.kernel, fn=fn, args=vals.args, constexprs=vals.constexprs, grid=tuple(spec.grid),
                  options=options, dtype=_dtype(spec), size=_size(spec), bytes_moved=bytes_moved, flops=flops,
                  notes=tuple(notes),
                  estimate=BYTES_NOTE.format(bytes=_human(bytes_moved), method=method) if estimated and bytes_moved
                  else "")


def _backend(device) -> str:
    """The backend the launch compiles for: the active driver's, else (under the interpreter, where
    options are ignored) the device's kind."""
    try:
        from triton.runtime import driver

        return str(driver.active.get_current_target().backend)
    except Exception:
        pass
    kind = getattr(device, "type", str(device)).split(":")[0]
    if kind == "cuda":
        try:
            import torch

            return "hip" if torch.version.hip else "cuda"
        except Exception:
            return "cuda"
    return kind


def _dtype(spec) -> str:
    return next((a.dtype for a in spec.args if a.kind == "tensor"), "-")


def _size(spec) -> str:
    """The tensors' shapes: `32x128x256, 256x32`."""
    shapes = ["x".join(map(str, a.shape)) or "scalar" for a in spec.args if a.kind == "tensor"]
    text = ", ".join(dict.fromkeys(shapes))
    return text if len(text) <= 60 else text[:57] + "..."


def _human(n: int | None) -> str:
    if not n:
        return "0 B"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return str(n)

