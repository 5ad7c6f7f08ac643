"""Frozen dataclasses as JSON, and the JSON Schema of that JSON, from the one declaration.

    to_json(record)          # the fields in order: nested records, lists, tuples, dicts, None
    schema(Record)           # the JSON Schema (2020-12) of what to_json makes of a Record
    problems(value, schema)  # where a value breaks a schema (the subset `schema` writes)

A field whose metadata says `flatten` has its record's fields merged into its parent's object (one
declaration of shared names, e.g. the figures every command prints); `doc` becomes its description and
`const` the one value it may take.
The schema is made from the field types, so the JSON and its schema cannot drift apart. jsonschema is
not a dependency: `problems` checks the subset written here (type, properties, required,
additionalProperties, items, anyOf, const, enum).
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
