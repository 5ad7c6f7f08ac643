"""A variant's record keeps what used to go into one free `extra` dict as typed fields (the backend's name,
kinspect's compile request, the user's kernel file, what the loaded kernel reported, a retarget, a trace);
stores written before still load, their `extra` read into those fields, and a bad value in it is one line."""

import json
import shutil

import pytest

from kinspect.core.errors import KinspectError
from kinspect.core.model import Loaded, Retarget, UserRecord
from kinspect.files.store import read_record


@pytest.fixture()
def folder(real_variant, tmp_path):
    v = real_variant("softmax", "cuda:90")
    out = tmp_path / "v"
    shutil.copytree(v.path, out)
    return out


def test_a_new_record_has_the_fields_and_no_extra(folder):
    d = json.loads((folder / "record.json").read_text())
    assert "extra" not in d and len(d["request"]) == 32 and d["loaded"] is None and d["retarget"] is None
    v = read_record(folder)
    assert v.request == d["request"] and v.user is None and v.backend == "" and v.trace_event is None


def test_an_older_stores_extra_is_read_into_the_fields(folder):
    d = json.loads((folder / "record.json").read_text())
    old = {k: x for k, x in d.items() if k not in ("request", "user", "loaded", "retarget", "backend", "trace",
                                                   "trace_event")}
    old["extra"] = {"request": d["request"], "backend": "spine-triton", "user": {"kernel": "k.py:add"},
                    "loaded": {"registers": 40, "spills": 0, "max_threads": 128}, "retarget": "spacemit-x60",
                    "retargeted_from": "add", "cpu": "spacemit-x60", "features": "+v", "trace": "t.ndjson",
                    "trace_event": 7}
    (folder / "record.json").write_text(json.dumps(old))
    v = read_record(folder)
    assert v.request == d["request"] and v.backend == "spine-triton" and v.user == UserRecord(kernel="k.py:add")
    assert v.loaded == Loaded(40, 0, 128) and v.trace == "t.ndjson" and v.trace_event == 7
    assert v.retarget == Retarget(spec="spacemit-x60", source="add", cpu="spacemit-x60", features="+v")
    again = v.to_json()
    assert "extra" not in again and again["loaded"] == {"registers": 40, "spills": 0, "max_threads": 128}


@pytest.mark.parametrize("extra", [{"loaded": "40"}, {"loaded": {"spills": 0}}, {"user": [1]},
                                   {"trace_event": "seven"}])
def test_a_bad_value_in_an_older_extra_is_one_line(folder, extra):
    d = json.loads((folder / "record.json").read_text())
    d.pop("request")
    d["extra"] = extra
    (folder / "record.json").write_text(json.dumps(d))
    with pytest.raises(KinspectError, match=r"^variant v: record.json: "):
        read_record(folder)


def test_a_bad_field_is_refused_by_the_schema(folder):
    d = json.loads((folder / "record.json").read_text())
    (folder / "record.json").write_text(json.dumps({**d, "loaded": {"registers": "many", "spills": 0}}))
    with pytest.raises(KinspectError, match="loaded"):
        read_record(folder)


def test_a_user_kernels_record_round_trips_typed_and_keeps_its_json_shape():
    """Variant.user is a typed record (kinspect.core.model.UserRecord); its JSON is the plain shape stores
    have kept (the --from call under "from", assumed values with their text), and a record from before it
    was typed (assumed values as text only) still gives its guesses."""
    from kinspect.analysis.assumed import guesses
    from kinspect.core.model import AssumedValue, Variant

    d = {"kernel": "/p/k.py:k", "args": ["n=i32:1024"], "constexprs": {"BLOCK": "64"}, "config": 1,
         "loaded": "definitions only", "declared": False, "launch": "a call of rms_norm",
         "autotune": {"config": {"index": 1, "kwargs": {"BLOCK": 64}, "options": {"num_warps": 4},
                                 "pre_hook": None, "text": "BLOCK: 64, num_warps: 4"},
                      "configs": 3, "kept": [0, 1], "heuristics": {"EVEN": True}, "key": {"n": 1024}, "notes": ["x"]},
         "assumed": [{"name": "x_ptr", "spec": "*bf16", "why": "the wrapper's cast", "kind": "input",
                      "constexpr": False, "text": "x_ptr=*bf16  (the wrapper's cast; set with --from)"}],
         "example": {"args": [], "grid": [4, 1, 1]}, "launch_index": 0, "from": "rms_norm(x, w, 1e-6)"}
    u = UserRecord.from_json(d)
    assert u.autotune.config.index == 1 and u.autotune.kept == (0, 1) and u.called == "rms_norm(x, w, 1e-6)"
    assert u.assumed == (AssumedValue("x_ptr", "*bf16", "the wrapper's cast", "input", False,
                                      "x_ptr=*bf16  (the wrapper's cast; set with --from)"),)
    assert u.to_json() == {**d, "args": ("n=i32:1024",), "autotune": {**d["autotune"], "kept": (0, 1),
                                                                     "notes": ("x",)},
                           "assumed": (d["assumed"][0],)}
    assert UserRecord.from_json(u.to_json()) == u
    old = UserRecord.from_json({"kernel": "k.py:k", "assumed": ["BLOCK=64  (a power of two; set with -p)"]})
    v = Variant.__new__(Variant)
    object.__setattr__(v, "user", old)
    assert [(g.name, g.spec) for g in guesses(v)] == [("BLOCK", "64")]
    assert "from" not in old.to_json() and "launch_index" not in old.to_json()


@pytest.mark.parametrize("user", [{"autotune": 5}, {"autotune": {"config": [1]}}, {"constexprs": [1]},
                                  {"assumed": "x"}, {"example": [1]}, {"autotune": {"notes": {"a": 1}}},
                                  {"autotune": {"config": {"index": "x"}}}])
def test_a_user_record_of_the_wrong_kind_is_the_records_problem(folder, user):
    """What a store's record.json holds under "user" is data: a wrong kind is one line naming the
    variant and its record, never a traceback (kinspect reads the typed record now)."""
    d = json.loads((folder / "record.json").read_text())
    (folder / "record.json").write_text(json.dumps({**d, "user": user}))
    with pytest.raises(KinspectError, match=r"record\.json"):
        read_record(folder)


def test_the_stored_records_schema_is_made_from_the_variant_dataclass(monkeypatch):
    """The record's shape is declared once: which keys record.json has, and which are required, come
    from Variant's fields; a field without a spec (or a spec for no field) stops the import."""
    import dataclasses

    from kinspect.core.model import Variant
    from kinspect.files import schema

    saved = {f.name for f in dataclasses.fields(Variant)} - set(Variant.UNSAVED)
    assert set(schema.RECORD.required) | set(schema.RECORD.optional) == saved | {"record_version", "extra"}
    no_default = {f.name for f in dataclasses.fields(Variant)
                  if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    assert set(schema.RECORD.required) == no_default | {"record_version"}
    monkeypatch.setitem(schema.RECORD_FIELDS, "gpu_model", schema.Str())
    with pytest.raises(ImportError, match="gpu_model"):
        schema._record_spec()
