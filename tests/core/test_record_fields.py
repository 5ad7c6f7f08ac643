"""A variant's record keeps what used to go into one free `extra` dict as typed fields (the backend's name,
kinspect's compile request, the user's kernel file, what the loaded kernel reported, a retarget, a trace);
stores written before still load, their `extra` read into those fields, and a bad value in it is one line."""

import json
import shutil

import pytest

from kinspect.core.errors import KinspectError
from kinspect.core.model import Loaded, Retarget
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
    assert v.request == d["request"] and v.user == {} and v.backend == "" and v.trace_event is None


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
    assert v.request == d["request"] and v.backend == "spine-triton" and v.user == {"kernel": "k.py:add"}
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
