"""What kinspect's own JSON files may hold, as data, and the one function that checks a file against it.

A store travels (people send captures, attach reports): every JSON file read from one is checked
here before a record is built from it, so a wrong type, an absurd number or a huge list is one
located line ("times.stages[0][1] is a list, expected a whole number") and never a traceback deep
in an analysis. The specs below are the files' shapes; `check(spec, value, where)` raises Invalid.

Messages name where and what kind of value was found, never the value itself (a record may have
been made out of another file's content) beyond numbers, which say nothing about a file.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field

from kinspect.core.errors import KinspectError
from kinspect.core.model import Variant

BIG = 2**63 - 1          # the largest count or size a record may hold (int64, as Triton's own)
TEXT = 16 << 20          # a source text
LINE = 4096              # a name, a path, a version, a note
# What starts a new line on a terminal: a record's one-line strings hold none (a note with one
# would show as a line kinspect did not write)
_BREAK = re.compile("[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


class Invalid(KinspectError):
    """A file does not have the shape its spec says; the message says where and what was found."""


# -- spec nodes -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Int:
    lo: int = 0
    hi: int = BIG


@dataclass(frozen=True)
class Num:
    """A finite number (an int or a float)."""
    lo: float = -math.inf
    hi: float = math.inf


@dataclass(frozen=True)
class Str:
    """A string of at most `max` characters; one line (a name, a path, a note) unless `lines`."""
    max: int = LINE
    lines: bool = False


@dataclass(frozen=True)
class Bool:
    pass


@dataclass(frozen=True)
class OneOf:
    """One of these strings."""
    values: tuple[str, ...]


@dataclass(frozen=True)
class Json:
    """Any JSON value (a constexpr's value, an option), bounded in depth and size."""
    depth: int = 8
    items: int = 4096


@dataclass(frozen=True)
class Maybe:
    """The spec's value or null."""
    spec: object


@dataclass(frozen=True)
class List:
    item: object
    max: int = 4096
    min: int = 0


@dataclass(frozen=True)
class Tuple:
    """A list of exactly these items (JSON has no tuples)."""
    items: tuple


@dataclass(frozen=True)
class Map:
    """An object of string keys (at most `key` characters) to `value`s."""
    value: object
    max: int = 4096
    key: int = 256


@dataclass(frozen=True)
class Obj:
    """An object with these keys (`required` must be there, `optional` may); no others."""
    required: dict
    optional: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Ref:
    """A spec by name in SPECS (for a recursive shape: a kernel source's helpers)."""
    name: str


# -- the check --------------------------------------------------------------------------------------

def check(spec, value, where: str = "") -> None:
    """Raise Invalid when `value` (parsed JSON) does not fit `spec`; `where` starts the path."""
    try:
        _validator(spec)(value, 0)
    except _Bad as e:
        path = where
        for part in reversed(e.parts):
            if isinstance(part, int):
                path += f"[{part}]"
            else:
                key = part if part.isidentifier() else _short(part)
                path = f"{path}.{key}" if path else key
        raise Invalid(f"{path or 'the file'} {e.what}") from None


class _Bad(Exception):
    """What is wrong (`what`, the words after the path) and where: the keys from the bad value up
    (each container adds its own as the error passes; the path is made only when there is one)."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what
        self.parts: list = []


_VALIDATORS: dict[int, object] = {}


def _validator(spec):
    """The function that checks a value against `spec`: made once per spec node (records are read
    by the thousand), each a closure over its node's fields."""
    found = _VALIDATORS.get(id(spec))
    if found is None:
        found = _VALIDATORS[id(spec)] = _make(spec)
    return found


def _make(spec):
    kind = type(spec)
    if kind is Ref:
        return lambda value, depth: _validator(SPECS[spec.name])(value, depth + 1)
    if kind is Maybe:
        inner = _validator(spec.spec)

        def maybe(value, depth):
            if value is not None:
                inner(value, depth)
        return maybe
    if kind is Int:
        def whole(value, depth):
            if type(value) is not int:
                _wrong(value, "a whole number")
            if not spec.lo <= value <= spec.hi:
                raise _Bad(f"is {value}, expected a whole number from {spec.lo:,} to {spec.hi:,}")
        return whole
    if kind is Num:
        def number(value, depth):
            if type(value) not in (int, float):
                _wrong(value, "a number")
            if not math.isfinite(value) or not spec.lo <= value <= spec.hi:
                raise _Bad(f"is {value}, expected a finite number"
                           + (f" from {spec.lo:g} to {spec.hi:g}" if math.isfinite(value) else ""))
        return number
    if kind is Str:
        def string(value, depth):
            if type(value) is not str:
                _wrong(value, "a string")
            if len(value) > spec.max:
                raise _Bad(f"is a string of {len(value):,} characters, expected at most {spec.max:,}")
            if not spec.lines and _BREAK.search(value):
                raise _Bad("holds a line break, expected one line")
        return string
    if kind is Bool:
        def boolean(value, depth):
            if type(value) is not bool:
                _wrong(value, "true or false")
        return boolean
    if kind is OneOf:
        def one_of(value, depth):
            if type(value) is not str:
                _wrong(value, "a string")
            if value not in spec.values:
                raise _Bad(f"is {_short(value)}, expected one of {', '.join(spec.values)}")
        return one_of
    if kind is Json:
        return lambda value, depth: _json(value, spec.depth, [spec.items])
    if kind is List:
        item = _validator(spec.item)

        def items(value, depth):
            if type(value) is not list:
                _wrong(value, "a list")
            if not spec.min <= len(value) <= spec.max:
                raise _Bad(f"has {len(value):,} items, expected {spec.min:,} to {spec.max:,}")
            _nested(depth)
            for i, x in enumerate(value):
                try:
                    item(x, depth + 1)
                except _Bad as e:
                    e.parts.append(i)
                    raise
        return items
    if kind is Tuple:
        checks = [_validator(s) for s in spec.items]

        def fixed(value, depth):
            if type(value) is not list:
                _wrong(value, f"a list of {len(checks)}")
            if len(value) != len(checks):
                raise _Bad(f"has {len(value):,} items, expected {len(checks)}")
            _nested(depth)
            for i, (f, x) in enumerate(zip(checks, value)):
                try:
                    f(x, depth + 1)
                except _Bad as e:
                    e.parts.append(i)
                    raise
        return fixed
    if kind is Map:
        item = _validator(spec.value)

        def mapping(value, depth):
            if type(value) is not dict:
                _wrong(value, "an object")
            if len(value) > spec.max:
                raise _Bad(f"has {len(value):,} keys, expected at most {spec.max:,}")
            _nested(depth)
            for k, x in value.items():
                if len(k) > spec.key or _BREAK.search(k):
                    raise _Bad(f"has a key of {len(k):,} characters or more than one line, expected one line of at "
                               f"most {spec.key}")
                try:
                    item(x, depth + 1)
                except _Bad as e:
                    e.parts.append(k)
                    raise
        return mapping
    if kind is Obj:
        fields = {k: _validator(s) for k, s in {**spec.optional, **spec.required}.items()}

        def obj(value, depth):
            if type(value) is not dict:
                _wrong(value, "an object")
            missing = [k for k in spec.required if k not in value]
            if missing:
                raise _Bad(f"lacks {', '.join(missing[:3])}")
            _nested(depth)
            for k, x in value.items():
                f = fields.get(k)
                if f is None:
                    raise _Bad(f"has an unknown key {_short(k)}")
                try:
                    f(x, depth + 1)
                except _Bad as e:       # the path is made on the way out, only for an error
                    e.parts.append(k)
                    raise
        return obj
    raise TypeError(f"not a spec: {spec!r}")


def _nested(depth: int) -> None:
    if depth > 64:
        raise _Bad("is nested too deeply")


def _json(value, depth: int, budget: list) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        raise _Bad("holds too many values")
    if value is None or type(value) in (bool, int, str):
        if type(value) is str and len(value) > LINE:
            raise _Bad(f"is a string of {len(value):,} characters, expected at most {LINE:,}")
        return
    if type(value) is float:      # inf and nan too: a launch passes float("-inf") as a mask's fill, say
        return
    if depth <= 0:
        raise _Bad("is nested too deeply")
    for key, item in enumerate(value) if type(value) is list else value.items():
        try:
            _json(item, depth - 1, budget)
        except _Bad as e:
            e.parts.append(key)
            raise


_KINDS = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a whole number",
          float: "a number", type(None): "null"}


def _wrong(value, expected: str):
    raise _Bad(f"is {_KINDS.get(type(value), type(value).__name__)}, expected {expected}")


def _short(text: str, n: int = 40) -> str:
    """A key or enum value from the file, quoted and escaped (control characters shown, not sent)."""
    return ascii(text if len(text) <= n else text[:n] + "...")


# -- the files ----------------------------------------------------------------------------------------

COUNT = Int()
NAME = Str(256)
GRID = List(Int(0, 2**31 - 1), max=3, min=1)
PID = Int(0, 2**31 - 1)

TARGET = Obj({"backend": NAME, "arch": NAME}, {"warp_size": Int(0, 4096)})
STAGE = Obj({"name": NAME, "file": Str(), "bytes": COUNT, "lines": Maybe(COUNT), "dialect": NAME},
            {"binary": Bool(), "derived_by": Maybe(Str()), "section": Maybe(NAME)})
TIMES = Obj({"ir_initialization_us": COUNT, "stages": List(Tuple((NAME, COUNT)), 256), "store_results_us": COUNT},
            {"startup_us": COUNT})
SOURCE_REF = Obj({"file": Str(), "line": Int(0, 2**31 - 1)}, {"text": Str(TEXT, lines=True)})
ARG_KINDS = ("tensor", "int", "float", "bool", "none", "str", "tensordesc", "dtype", "other")
ARG = Obj({"name": NAME, "kind": OneOf(ARG_KINDS)},
          {"value": Json(4, 64), "shape": List(Int(), 64), "strides": List(Int(-BIG, BIG), 64), "dtype": Str(64),
           "device": Str(64)})
CALL_SITE = Obj({"file": Str(4096), "line": Int(0, 2**31 - 1)}, {"function": Str(1024)})
SIGNATURE = Obj({"grid": GRID, "args": List(ARG, 1024), "calls": COUNT},
                {"pid": PID, "rank": Maybe(Int(0, 2**31 - 1)), "site": Maybe(CALL_SITE)})
PROCESS = Obj({"pid": PID, "rank": Maybe(Int(0, 2**31 - 1)), "host": NAME, "calls": COUNT},
              {"gpu_ms": Maybe(Num(0)), "timed": COUNT, "first_at": Maybe(Num(0)),
               "launches_before": Maybe(COUNT)})
GPU_TIME = Obj({"calls": COUNT, "total_ms": Num(0)}, {"samples_ms": List(Num(0), 4096)})
ATTRIBUTES = Map(Map(Json(4, 64), 64), 1024)     # parameter -> {"tt.divisibility": 16, "constant": 1, ...}
LAUNCHES = Obj({"calls": COUNT},
               {"grids": List(Tuple((GRID, COUNT)), 1024), "signatures": List(SIGNATURE, 1024), "other_calls": COUNT,
                "processes": List(PROCESS, 4096), "gpu": Maybe(GPU_TIME), "tuning_calls": COUNT,
                "tuning_ms": Num(0)})
# Each field of the stored record (kinspect.core.model.Variant) and what its JSON may hold. Which
# are required comes from the dataclass itself (a field without a default), and a field there with
# no spec here (or a spec for no field) stops the import: the record's shape has one declaration.
RECORD_FIELDS = {
    "kernel": Str(1024), "hash": NAME, "target": TARGET, "offline": Bool(), "signature": Map(Str(64), 1024),
    "constexprs": Map(Json(), 1024), "attributes": ATTRIBUTES, "options": Map(Json(), 256),
    "stages": List(STAGE, 1024), "times": Maybe(TIMES), "cache_hit": Bool(), "triton_version": Str(128),
    "source": Maybe(SOURCE_REF), "origin": Str(128), "created": Str(64), "notes": List(Str(lines=True), 1024),
    "name": Str(1024), "launches": Maybe(LAUNCHES), "backend": Str(128), "request": Str(128),
    "user": Map(Json(), 256), "loaded": Maybe(Obj({"registers": COUNT, "spills": COUNT}, {"max_threads": COUNT})),
    "retarget": Maybe(Obj({"spec": Str(1024), "source": Str(1024)}, {"cpu": Str(128), "features": Str(1024)})),
    "trace": Str(), "trace_event": Maybe(COUNT)}


def _record_spec() -> Obj:
    saved = [f for f in dataclasses.fields(Variant) if f.name not in Variant.UNSAVED]
    if {f.name for f in saved} != set(RECORD_FIELDS):
        raise ImportError(f"kinspect.files.schema.RECORD_FIELDS and Variant's fields differ: "
                          f"{sorted({f.name for f in saved} ^ set(RECORD_FIELDS))}")
    required = {f.name for f in saved if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    return Obj({**{k: v for k, v in RECORD_FIELDS.items() if k in required}, "record_version": Int(1, 2)},
               {**{k: v for k, v in RECORD_FIELDS.items() if k not in required},
                "extra": Map(Json(), 256)})      # stores before those fields kept them in this one free map


RECORD = _record_spec()
LAUNCH_FILE = Obj({"launches": Maybe(LAUNCHES)})
# extra.user.example of a user kernel's variant: the launch it was compiled for, as data (kinspect.compile.user)
USER_EXAMPLE = Obj({"args": List(ARG, 1024)},
                   {"grid": GRID, "bytes": Maybe(COUNT), "flops": Maybe(COUNT), "unkept": List(Str(), 16)})

CONFIG = Obj({}, {"kwargs": Map(Json(4, 64), 256), "options": Map(Json(4, 64), 256)})
DECISION = Obj({"kernel": Str(1024), "best": CONFIG},
               {"key": List(Json(4, 64), 256), "key_names": List(NAME, 256),
                "timings": List(Obj({"config": CONFIG}, {"ms": List(Num(), 16), "failed": Bool()}), 4096),
                "how": NAME, "bench_s": Maybe(Num(0)), "configs": COUNT, "pid": PID,
                "rank": Maybe(Int(0, 2**31 - 1)), "host": NAME})
AUTOTUNE = List(DECISION, 65536)

KERNEL_SOURCE = Obj({"name": NAME, "file": Str(), "line": Int(0, 2**31 - 1), "text": Str(TEXT, lines=True)},
                    {"imports": List(Tuple((NAME, Str(1024))), 1024), "constants": List(Tuple((NAME, Json())), 1024),
                     "helpers": List(Tuple((NAME, Ref("kernel source"))), 256), "unresolved": List(Str(), 1024)})
REPLAY_SPEC = Obj({"kernel": Str(1024), "target": NAME, "args": List(ARG, 1024), "grid": GRID,
                   "signature": Map(Str(64), 1024)},
                  {"attributes": ATTRIBUTES, "options": Map(Json(), 256), "source": Maybe(KERNEL_SOURCE),
                   "ref": Maybe(SOURCE_REF), "variant": Str(), "calls": COUNT, "total_calls": COUNT, "origin": Str(128)})
PENDING = Obj({"host": NAME, "pid": PID, "specs": List(Obj({"spec": REPLAY_SPEC},
                                                          {"trial": Bool(), "launches": Maybe(LAUNCHES)}), 65536)},
              {"target": NAME, "errors": List(Str(lines=True), 1024)})
SUMMARY = Obj({}, {"launches": COUNT, "tuning": COUNT, "hook_ms": Num(0), "unattributed": Map(COUNT, 65536),
                   "per_launch_us": Num(0), "observed": Map(COUNT, 16, LINE), "static_launcher": Str(),
                   "environment": Map(Str(256), 16),
                   "timing": Maybe(Obj({"method": Str(), "ms": Num(0)},
                                       {"failed": Str(), "coverage": Str(), "window": Str(),
                                        "other_kernels": Map(Obj({"calls": COUNT, "ms": Num(0)}), 65536, LINE),
                                        "tuning_other_kernels": Map(Obj({"calls": COUNT, "ms": Num(0)}), 65536,
                                                                    LINE)}))})

SPECS = {"kernel source": KERNEL_SOURCE}
