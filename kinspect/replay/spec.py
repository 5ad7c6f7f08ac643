"""What a replay runs: one captured launch of one variant, in plain values.

A ReplaySpec comes from a captured variant's record (its most frequent launch signature, its
specialization and options) or from a spec file `kinspect capture --interpret` leaves for its
compile workers, or from the example a user kernel's variant was compiled with (`from_example`).
`kinspect.compile.replayed.kernel(spec)` gets the kernel back from the source text the store holds
(`plan(spec)` says which), never by importing a file a record names; `values(spec, device)` makes its
arguments (kinspect.replay.args).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kinspect import backends

from kinspect.files import schema
from kinspect.core import records
from kinspect.core.errors import KinspectError, NotFound, warn
from kinspect.core.model import SCALAR_KINDS, ArgSpec, SourceRef, Variant, arg_from_json, grid3
from kinspect.replay.source import KernelSource
from kinspect.files.store import load_json

from kinspect.files.store import SOURCE as SOURCE_FILE     # a variant's captured KernelSource, beside its record.json

@dataclass(frozen=True)
class ReplaySpec:
    kernel: str
    target: str                              # what it was compiled for: "cuda:90"
    args: tuple[ArgSpec, ...]                # every parameter as launched, constexprs included
    grid: tuple[int, ...]
    signature: dict[str, str]                # parameter -> Triton type ("constexpr" for constexprs)
    attributes: dict[str, Any] = field(default_factory=dict)   # parameter -> specialization attributes (alignment)
    options: dict[str, Any] = field(default_factory=dict)
    source: KernelSource | None = None       # the kernel with its namespace, when captured
    ref: SourceRef | None = None             # the record's source: file, first line, text
    variant: str = ""                        # the captured variant's folder
    calls: int = 0                           # launches with these arguments
    total_calls: int = 0                     # all launches of the variant
    origin: str = ""                         # the origin its compiled variant records ("capture --interpret")

    def to_json(self) -> dict:
        import dataclasses

        return {"kernel": self.kernel, "target": self.target, "args": [dataclasses.asdict(a) for a in self.args],
                "grid": list(self.grid), "signature": self.signature, "attributes": self.attributes,
                "options": self.options, "source": self.source.to_json() if self.source else None,
                "ref": dataclasses.asdict(self.ref) if self.ref else None, "variant": self.variant,
                "calls": self.calls, "total_calls": self.total_calls, "origin": self.origin}

    def describe(self) -> str:
        """The launch in one line: `in_ptr0 float32[32x128x256], xnumel=8192, XBLOCK=16; grid (512, 1, 1)`."""
        parts = [f"{a.name} {a.describe()}" if a.kind in ("tensor", "tensordesc") else f"{a.name}={a.value!r}"
                 for a in self.args]
        return f"{', '.join(parts)}; grid {tuple(self.grid)}"

    def counted(self) -> str:
        """Which launch this is, in words: `12 of 40 captured launches`, or the example a user kernel's
        variant was compiled with."""
        if self.origin == "example":
            return "the example launch `kinspect dump` compiled it for"
        return f"{self.calls:,} of {self.total_calls:,} captured launches"

    def constexpr_names(self) -> list[str]:
        return [n for n, t in self.signature.items() if t == "constexpr"]


def from_variant(v: Variant, launch: int = 1) -> ReplaySpec:
    """The spec of a captured variant's `launch`-th most frequent argument signature (1: the top)."""
    la = v.launches
    label = v.name or v.kernel
    if v.origin == "trace":
        raise KinspectError(f"'{label}' comes from a trace: kinspect neither runs the source a trace carries nor "
                            f"opens the files it names, so it does not replay its launches; capture the program "
                            f"with `kinspect capture -- python PROGRAM` and replay from that store")
    if la is not None and not la.signatures and la.tuning_calls:
        raise KinspectError(f"'{label}' was only launched by an autotuner benchmarking its configs ({la.tuning_calls:,} "
                            f"launches), never by the program: replay one of the kernel's variants the program ran")
    if la is None or not la.signatures:
        raise KinspectError(f"'{label}' has no launch records: the program never launched it (an autotuner's "
                            f"config compiled beside the one it took), or it was not captured from a program (kinspect "
                            f"capture records launches); replay needs a launch")
    ranked = sorted(la.signatures, key=lambda s: -s.calls)
    if not 1 <= launch <= len(ranked):
        raise KinspectError(f"'{label}' has {len(ranked)} recorded argument signature(s); "
                            f"--launch takes 1..{len(ranked)}")
    sig = ranked[launch - 1]
    for line in (p for p in v.problems if not p.startswith("stage ")):   # a launch file left out
        warn(f"variant {label}: {line}")
    # what its backend's launches pass back (the rest of record.options is derived: shared memory, arch)
    names = backends.of(v).launch_options
    options = {k: v.options[k] for k in names if v.options.get(k) is not None}
    return ReplaySpec(kernel=v.kernel, target=str(v.target), args=with_constexprs(v, sig.args), grid=tuple(sig.grid),
                      signature=dict(v.signature), attributes=dict(v.attributes), options=options,
                      source=read_source(Path(v.path)) if v.path else None, ref=v.source, variant=v.path,
                      calls=sig.calls, total_calls=la.calls)


def from_example(v: Variant) -> ReplaySpec:
    """The spec of the example a user kernel's variant was compiled with, as `kinspect dump file.py:k`
    recorded it (extra.user.example: kinspect.compile.user.UserKernel.example): what times a stored
    variant again without importing the file its record names."""
    label = v.name or v.kernel
    raw = v.user.example if v.user is not None else None
    yours = own_file_hint(v)
    if raw is None:
        raise KinspectError(f"'{label}' keeps no example launch (stored by an older kinspect){yours}")
    try:
        schema.check(schema.USER_EXAMPLE, raw, "extra.user.example")
    except schema.Invalid as e:
        raise KinspectError(f"variant {label}: {e}; it cannot be replayed from its record") from None
    if "grid" not in raw:
        why = "; ".join(raw.get("unkept", ())) or "its grid was not recorded"
        raise KinspectError(f"'{label}' keeps no grid for its example launch ({shown(why)}){yours}")
    args = tuple(arg_from_json(a) for a in raw["args"])
    names = backends.of(v).launch_options
    options = {k: v.options[k] for k in names if v.options.get(k) is not None}
    return ReplaySpec(kernel=v.kernel, target=str(v.target), args=with_constexprs(v, args), grid=grid3(raw["grid"]),
                      signature=dict(v.signature), attributes=dict(v.attributes), options=options,
                      source=read_source(Path(v.path)) if v.path else None, ref=v.source, variant=v.path,
                      origin="example")


def of_variant(v: Variant, launch: int = 1) -> ReplaySpec:
    """The spec of a variant's `launch`-th most frequent captured launch (from_variant), or of the
    example launch a user kernel's variant was compiled with where nothing was captured (from_example)."""
    la = v.launches
    if has_example(v) and (la is None or not la.signatures and not la.tuning_calls):
        if launch != 1:
            raise KinspectError(f"'{v.name or v.kernel}' keeps one example launch (it was not captured from a "
                                f"program); --launch takes 1")
        return from_example(v)
    return from_variant(v, launch)


def has_example(v: Variant) -> bool:
    """A user kernel's variant `kinspect dump` compiled, with the example launch it recorded."""
    return v.user is not None and v.user.example is not None


def example_rates(v: Variant) -> tuple[int | None, int | None]:
    """(bytes, FLOPs) the file's formulas gave for a user kernel's recorded example (from_example)."""
    raw = (v.user.example if v.user is not None else None) or {}
    return raw.get("bytes"), raw.get("flops")


def own_file_hint(v: Variant) -> str:
    """What the user may run on their own copy of the kernel's file: kinspect loads a file only
    where the user names it on the command line, never where a store names it."""
    text = v.user.kernel if v.user is not None else ""
    kernel = shown(v.kernel)
    if not text:
        return (f"; kinspect does not import the files a store names: time it from your own file with "
                f"`kinspect bench FILE.py:{kernel}`")
    return (f"; kinspect does not import the files a store names: if {shown(text)} is your own file, time it from "
            f"there with `kinspect bench {shown(text)}`")


def shown(text: str, n: int = 200) -> str:
    """Text from a store, as one printable line: control characters escaped, long text cut."""
    text = str(text)
    text = text if len(text) <= n else text[:n] + "..."
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def with_constexprs(v: Variant, args: tuple[ArgSpec, ...]) -> tuple[ArgSpec, ...]:
    """The launch's arguments with the variant's constexprs where the launch did not pass them:
    Inductor's static launcher takes the runtime arguments only (its constexprs are in the cubin), so
    a launch it made records none of XBLOCK, R0_BLOCK...; the record has them. In signature order."""
    have = {a.name: a for a in args}
    out = []
    for name, kind in v.signature.items():
        if name in have:
            out.append(have.pop(name))
        elif kind == "constexpr" and name in v.constexprs:
            out.append(_constant(name, v.constexprs[name]))
    return tuple(out) + tuple(have.values())


def _constant(name: str, value) -> ArgSpec:
    kind = SCALAR_KINDS.get(type(value), "other")      # as a launch would have recorded it
    return ArgSpec(name=name, kind=kind, value=value if kind != "other" else repr(value))


def read_source(folder: Path) -> KernelSource | None:
    """The kernel source captured beside a variant (checked: kinspect.files.schema.KERNEL_SOURCE), or None."""
    folder = Path(folder)
    try:
        return records.from_json(KernelSource, load_json(folder, SOURCE_FILE, schema.KERNEL_SOURCE))
    except NotFound:
        return None
    except (KinspectError, TypeError, ValueError) as e:     # the last two: what the schema let through
        raise KinspectError(f"variant {folder.name}: {e}; it cannot be replayed from its captured source") from None


def load(path: str | Path, launch: int = 1) -> ReplaySpec:
    """A spec from a variant folder (its record: a captured launch, else the example a user kernel
    was compiled with) or a spec file (.json, checked: kinspect.files.schema.REPLAY_SPEC)."""
    p = Path(path)
    if p.is_dir():
        from kinspect.files.store import read_record

        return of_variant(read_record(p), launch)
    try:
        return records.from_json(ReplaySpec, load_json(p.parent, p.name, schema.REPLAY_SPEC))
    except NotFound:
        raise NotFound(f"no replay spec '{p}'") from None
    except (KinspectError, TypeError, ValueError) as e:     # the last two: what the schema let through
        raise KinspectError(f"'{p}' is not a replay spec: {e}") from None


# -- the kernel -----------------------------------------------------------------------------------------

def generated(ref: SourceRef | None) -> bool:
    """Source text Inductor generated: its kernels carry a triton_heuristics decorator, and the
    module they sit in (lost with Inductor's cache, or unimportable without a GPU) is not needed."""
    return ref is not None and "@triton_heuristics." in ref.text


@dataclass(frozen=True)
class Plan:
    """Where a replay gets the kernel: "source" (the KernelSource captured with it) or "text" (the
    record's source text, with the imports Triton-generated modules have); `why` says it in words.
    Never the file a record names: a store is data, and importing a file runs its code."""

    mode: str
    why: str


def plan(spec: ReplaySpec) -> Plan:
    ref = spec.ref
    if spec.source is not None:
        return Plan("source", f"rebuilt from the source captured with it ({shown(spec.source.file)}:{spec.source.line})")
    if ref is None or not ref.text:
        raise KinspectError(f"the record of '{shown(spec.kernel)}' holds no source text to replay it from (kinspect "
                            f"does not import the file a record names{': ' + shown(ref.file) if ref and ref.file else ''}"
                            f"); name your own file yourself: kinspect bench FILE.py:{shown(spec.kernel)}")
    if generated(ref):
        return Plan("text", f"rebuilt from the source text in its record (Inductor-generated: {shown(ref.file)})")
    return Plan("text", f"rebuilt from the source text in its record ({shown(ref.file)}), with triton and tl only")


def importable(ref: SourceRef) -> tuple[bool, str]:
    """Whether importing the kernel's file gives the captured kernel and runs nothing else: the file
    exists, still holds the captured text at the captured line, and its top level only defines
    things (imports, functions, classes, assignments, a __main__ guard), so importing it does not
    run the program it belongs to. Only a repro script, which the user reads and runs, imports it;
    kinspect itself never does. The file is read only where it is a regular file of a source's size."""
    path = Path(ref.file)
    try:
        if not path.is_file() or path.stat().st_size > MAX_SOURCE_FILE:
            return False, f"its file is gone: {ref.file}"
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return False, f"its file is gone: {ref.file}"
    lines = text.splitlines(keepends=True)
    captured = ref.text.splitlines(keepends=True)
    if ref.text and lines[ref.line - 1:ref.line - 1 + len(captured)] != captured:
        return False, f"{ref.file} changed since the capture"
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False, f"{ref.file} does not parse any more"
    runs = _runs_something(tree.body)
    if runs is not None:
        return False, f"{ref.file} is a script (line {runs} runs code when imported)"
    return True, ""


MAX_SOURCE_FILE = 16 << 20     # a kernel's file larger than this is not read to decide whether to import it


_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
                ast.AnnAssign, ast.Pass)


def _runs_something(body) -> int | None:
    """The line of the first top-level statement that is not a definition, or None."""
    for node in body:
        if isinstance(node, _DEFINITIONS):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):   # a docstring
            continue
        if isinstance(node, ast.If) and _is_main_guard(node.test):
            continue
        if isinstance(node, ast.If):
            inner = _runs_something(node.body) or _runs_something(node.orelse)
        elif isinstance(node, ast.Try):
            inner = _runs_something(node.body) or _runs_something(node.orelse) or \
                _runs_something(node.finalbody) or next((x for h in node.handlers if (x := _runs_something(h.body))),
                                                        None)
        else:
            return node.lineno
        if inner is not None:
            return inner
    return None


def _is_main_guard(test) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators))


def how(spec: ReplaySpec) -> str:
    """Where `kernel(spec)` gets the kernel from, in words."""
    return plan(spec).why
