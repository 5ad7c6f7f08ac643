"""Frozen dataclasses as JSON, the JSON Schema of that JSON, and the records again from it, from the one
declaration.

    to_json(record)          # the fields in order: nested records, lists, tuples, dicts, None
    schema(Record)           # the JSON Schema (2020-12) of what to_json makes of a Record
    problems(value, schema)  # where a value breaks a schema (the subset `schema` writes)
    from_json(Record, data)  # a Record from its JSON (what to_json or dataclasses.asdict made)

A field whose metadata says `flatten` has its record's fields merged into its parent's object (one
declaration of shared names, e.g. the figures every command prints); `doc` becomes its description and
`const` the one value it may take; `read` a function that makes the field's value from its JSON in
place of its type (ArgSpec.value: a JSON value made hashable).
The schema is made from the field types, so the JSON and its schema cannot drift apart. jsonschema is
not a dependency: `problems` checks the subset written here (type, properties, required,
additionalProperties, items, anyOf, const, enum).

from_json reads by the same types, so a new field is read with no reader written for it: a field missing
from the data takes its default, a list the tuple or list its hint says, an int a float where one is
wanted (never a bool an int), an empty object a record that may be none (Variant.to_json saves no user
record as {}). A record class that declares its own `from_json` is read by it (its JSON is not its
fields: UserRecord keeps `called` under "from"). What does not fit is a TypeError (a value of the
wrong kind) or a ValueError (a required field missing, a key that is no field), naming where:
`launches.signatures[0].grid: not a list`. Data from a file is checked against its spec first
(kinspect.files.schema); this is what keeps a bad value that got past it from becoming a wrong record.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any


def doc(text: str, **kwargs) -> Any:
    """A dataclass field with a description for the schema (`dataclasses.field` keywords otherwise)."""
    return dataclasses.field(metadata={"doc": text, **kwargs.pop("metadata", {})}, **kwargs)


def flat(**kwargs) -> Any:
    """A field whose record's fields are merged into its parent's JSON object."""
    return dataclasses.field(metadata={"flatten": True}, **kwargs)


def to_json(x: Any) -> Any:
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        out = {}
        for f in dataclasses.fields(x):
            value = to_json(getattr(x, f.name))
            if f.metadata.get("flatten"):
                out.update(value)
            else:
                out[f.name] = value
        return out
    if isinstance(x, (list, tuple)):
        return [to_json(v) for v in x]
    if isinstance(x, dict):
        return {str(k): to_json(v) for k, v in x.items()}
    return x


_SCALARS = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null"}


def schema(tp: Any) -> dict:
    """The JSON Schema of to_json's output for a value of type `tp` (a dataclass, or a type hint)."""
    if dataclasses.is_dataclass(tp):
        props, required = _properties(tp)
        out = {"type": "object", "properties": props, "required": required, "additionalProperties": False}
        if tp.__doc__ and not tp.__doc__.startswith(tp.__name__ + "("):
            out = {"title": tp.__name__, "description": " ".join(tp.__doc__.split()), **out}
        return out
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    if tp in (Any, object):
        return {}
    if tp is dict:
        return {"type": "object"}
    if tp in (list, tuple):
        return {"type": "array"}
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        parts = [schema(a) for a in args]
        types_ = [p["type"] for p in parts if set(p) == {"type"} and isinstance(p["type"], str)]
        if len(types_) == len(parts):
            return {"type": types_}
        return {"anyOf": parts}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (list, tuple):
        items = args[0] if args and (origin is list or (len(args) == 2 and args[1] is Ellipsis)) else Any
        return {"type": "array", "items": schema(items)}
    if origin is dict:
        return {"type": "object", "additionalProperties": schema(args[1]) if len(args) == 2 else {}}
    raise TypeError(f"no JSON Schema for {tp!r}")


def _properties(cls) -> tuple[dict, list]:
    hints = typing.get_type_hints(cls)
    props, required = {}, []
    for f in dataclasses.fields(cls):
        if f.metadata.get("flatten"):
            inner, req = _properties(hints[f.name])
            props.update(inner)
            required += req
            continue
        s = schema(hints[f.name])
        if f.metadata.get("doc"):
            s = {"description": f.metadata["doc"], **s}
        if "const" in f.metadata:
            s = {**s, "const": f.metadata["const"]}
        props[f.name] = s
        required.append(f.name)
    return props, required


def problems(value: Any, s: dict, where: str = "$") -> list[str]:
    """Where `value` breaks the schema `s`, one line each ([] when it conforms)."""
    out = []
    if "anyOf" in s:
        if all(problems(value, part, where) for part in s["anyOf"]):
            out.append(f"{where}: matches none of {len(s['anyOf'])} alternatives")
        return out
    if "const" in s and value != s["const"]:
        out.append(f"{where}: {value!r} is not {s['const']!r}")
    if "enum" in s and value not in s["enum"]:
        out.append(f"{where}: {value!r} is not one of {s['enum']}")
    if "type" in s:
        wanted = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(_is(value, t) for t in wanted):
            return out + [f"{where}: {type(value).__name__} where {'/'.join(wanted)} was expected"]
    if isinstance(value, dict):
        props = s.get("properties", {})
        out += [f"{where}: no key {k!r}" for k in s.get("required", ()) if k not in value]
        extra = s.get("additionalProperties", True)
        for k, v in value.items():
            if k in props:
                out += problems(v, props[k], f"{where}.{k}")
            elif extra is False:
                out.append(f"{where}: key {k!r} is not in the schema")
            elif isinstance(extra, dict):
                out += problems(v, extra, f"{where}.{k}")
    if isinstance(value, list) and "items" in s:
        for i, v in enumerate(value):
            out += problems(v, s["items"], f"{where}[{i}]")
    return out


def _is(value: Any, t: str) -> bool:
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, {"string": str, "boolean": bool, "null": type(None), "object": dict,
                              "array": list}[t])


# -- back from JSON ---------------------------------------------------------------------------------

def from_json(tp: Any, data: Any) -> Any:
    """A value of type `tp` (a dataclass, or a type hint) from `data`, parsed JSON. A dataclass is read
    by its fields even where it declares its own `from_json` (which may call this)."""
    try:
        return (_record(tp) if dataclasses.is_dataclass(tp) else _reader(tp))(data)
    except _Unfit as e:
        raise e.kind(f"{e.where()}: {e.what}" if e.path else e.what) from None


class _Unfit(Exception):
    """Where reading failed, its path filled in on the way out (no path is built for data that fits)."""

    def __init__(self, kind: type, what: str, path: list | None = None):
        self.kind, self.what, self.path = kind, what, path or []

    def where(self) -> str:
        out = ""
        for p in self.path:
            out += f"[{p}]" if isinstance(p, int) else p if p.startswith("[") else f".{p}" if out else p
        return out


_READERS: dict = {}


def _reader(tp: Any):
    """The function that reads a value of type `tp`, made once per type."""
    try:
        return _READERS[tp]
    except KeyError:
        pass
    if dataclasses.is_dataclass(tp) and "from_json" in vars(tp):
        own = tp.from_json

        def fn(x):
            if not isinstance(x, dict):
                raise _Unfit(TypeError, "not an object")
            return own(x)
    elif dataclasses.is_dataclass(tp):
        fn = _record(tp)
    else:
        fn = _plain(tp)
    _READERS[tp] = fn
    return fn


_KINDS = {int: "a whole number", float: "a number", str: "a string", bool: "true or false", type(None): "null"}


def _plain(tp: Any):
    if tp in (Any, object):
        return lambda x: x
    if tp is bool:
        return _checked(lambda x: type(x) is bool, tp)
    if tp is int:
        return _checked(lambda x: isinstance(x, int) and not isinstance(x, bool), tp)
    if tp is str:
        return _checked(lambda x: isinstance(x, str), tp)
    if tp is type(None):
        return _checked(lambda x: x is None, tp)
    if tp is float:
        def number(x):
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                raise _Unfit(TypeError, "not a number")
            return float(x)
        return number
    if tp in (list, tuple):
        return _sequence(tp, None)
    if tp is dict:
        return _mapping(None)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1 or len(args) != 2:
            raise TypeError(f"records.from_json reads X | None, not {tp!r}")
        inner, record = _reader(rest[0]), dataclasses.is_dataclass(rest[0])

        def maybe(x):
            return None if x is None or record and x == {} else inner(x)
        return maybe
    if origin is typing.Literal:
        def one_of(x):
            if x not in args:
                raise _Unfit(ValueError, f"not one of {', '.join(map(repr, args))}")
            return x
        return one_of
    if origin is list:
        return _sequence(list, _reader(args[0]) if args else None)
    if origin is tuple:
        if not args or len(args) == 2 and args[1] is Ellipsis:
            return _sequence(tuple, _reader(args[0]) if args and args[0] is not Any else None)
        return _fixed([_reader(a) for a in args])
    if origin is dict:
        if args and args[0] is not str:
            raise TypeError(f"records.from_json reads objects of string keys, not {tp!r}")
        return _mapping(_reader(args[1]) if args and args[1] is not Any else None)
    raise TypeError(f"records.from_json reads no {tp!r}")


def _checked(test, tp):
    what = f"not {_KINDS[tp]}"

    def fn(x):
        if not test(x):
            raise _Unfit(TypeError, what)
        return x
    return fn


def _sequence(kind: type, item):
    def fn(x):
        if not isinstance(x, (list, tuple)):
            raise _Unfit(TypeError, "not a list")
        if item is None:
            return kind(x)
        return kind(_each((item, v) for v in x))
    return fn


def _fixed(items: list):
    def fn(x):
        if not isinstance(x, (list, tuple)) or len(x) != len(items):
            raise _Unfit(TypeError, f"not a list of {len(items)}")
        return tuple(_each(zip(items, x)))
    return fn


def _each(pairs) -> list:
    """Each (reader, value) read in turn; a failure's path gets the item's index."""
    out, i = [], 0
    try:
        for i, (read, v) in enumerate(pairs):
            out.append(read(v))
    except _Unfit as e:
        e.path.insert(0, i)
        raise
    return out


def _mapping(value):
    def fn(x):
        if not isinstance(x, dict):
            raise _Unfit(TypeError, "not an object")
        k = None
        try:
            for k in x:
                if not isinstance(k, str):
                    raise _Unfit(TypeError, "a key that is not a string")
            return dict(x) if value is None else {k: value(v) for k, v in x.items()}
        except _Unfit as e:
            e.path.insert(0, f"[{_key(k)}]")
            raise
    return fn


def _key(k) -> str:
    """A key from the data, as a path shows it: quoted, escaped, short (it may be anything)."""
    text = ascii(str(k))
    return text if len(text) <= 40 else text[:37] + "..."


_RECORDS: dict = {}


def _record(cls):
    """The reader of a dataclass by its fields, made once per class; the hints are looked up at its first
    read (a record may hold itself, and its module may not be done when the reader is asked for)."""
    if cls in _RECORDS:
        return _RECORDS[cls]
    fields = None

    def prepare():
        hints = typing.get_type_hints(cls)
        out = []
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            if f.metadata.get("flatten"):
                raise TypeError(f"records.from_json reads no flattened field ({cls.__name__}.{f.name})")
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            out.append((f.name, f.metadata.get("read") or _reader(hints[f.name]), required,
                        f.metadata.get("const", _NONE)))
        return out

    def record(x):
        nonlocal fields
        if fields is None:
            fields = prepare()
        if not isinstance(x, dict):
            raise _Unfit(TypeError, "not an object")
        given, name = {}, None
        try:
            for name, read, required, const in fields:
                if name in x:
                    given[name] = read(x[name])
                    if const is not _NONE and given[name] != const:
                        raise _Unfit(ValueError, f"not {const!r}")
                elif required:
                    raise _Unfit(ValueError, "missing")
        except _Unfit as e:
            e.path.insert(0, name)
            raise
        if len(given) != len(x):
            known = {f[0] for f in fields}
            raise _Unfit(ValueError, f"{_key(next(k for k in x if k not in known))} is no field of {cls.__name__}")
        return cls(**given)
    _RECORDS[cls] = record
    return record


_NONE = object()
