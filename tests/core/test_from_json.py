"""A stored record is read back by its dataclass's fields (kinspect.core.records.from_json), as its schema is
made from them: a field added to Variant, or to a record it holds, is read with no reader written for it,
and what does not fit is one error naming where."""

import dataclasses
import json
from pathlib import Path
from typing import Any, Literal

import pytest

from kinspect.core import records
from kinspect.core.model import ArgSpec, Launches, UserRecord, Variant, arg_from_json, launches_from_json
from kinspect.files.store import read_record


def _records(store: Path) -> list[Path]:
    return sorted(store.rglob("record.json"))


def test_a_captured_stores_records_round_trip(transformer):
    """The fixture store is an older one (each record keeps the free `extra` dict, empty): it reads, and
    each variant read back from its own JSON is the same variant."""
    paths = _records(transformer)
    assert paths and all("extra" in json.loads(p.read_text()) for p in paths)
    for p in paths:
        v = read_record(p.parent)
        assert v.launches is not None and v.launches.signatures
        again = Variant.from_json(json.loads(json.dumps(v.to_json())), path=v.path)
        assert again == v and again.problems == v.problems == ()


def test_a_record_with_every_kind_of_field_round_trips(transformer):
    from kinspect.core.model import (AssumedValue, CallSite, GpuTime, Loaded, ProcessLaunches, Retarget,
                                     UserConfig, UserTuning)

    v = read_record(_records(transformer)[0].parent)
    sig = dataclasses.replace(v.launches.signatures[0], rank=1, site=CallSite("train.py", 12, "step"),
                              args=(ArgSpec("BLOCK", "int", value=64), ArgSpec("k", "other", value=(1, (2, 3))),
                                    ArgSpec("d", "tensordesc", value=(64, 64), shape=(128, 64), strides=(64, 1))))
    v = dataclasses.replace(
        v, launches=dataclasses.replace(v.launches, signatures=(sig,), gpu=GpuTime(3, 1.5, (0.5, 0.5, 0.5)),
                                        processes=(ProcessLaunches(7, 1, "h", 3, 1.5, 3, 1.7e9, 40),),
                                        tuning_calls=2, tuning_ms=0.25),
        loaded=Loaded(40, 0, 128), retarget=Retarget("x60", "add", "spacemit-x60", "+v"), trace="t.ndjson",
        trace_event=7, backend="spine_triton", request="r" * 32,
        user=UserRecord(kernel="k.py:add", args=("n=i32:8",), config=1, autotune=UserTuning(
            config=UserConfig(1, "BLOCK: 64", {"BLOCK": 64}), configs=3, kept=(0, 1)),
            assumed=(AssumedValue("x", "*fp32", "why", "input"),), called="add(x)"))
    assert Variant.from_json(json.loads(json.dumps(v.to_json())), path=v.path) == v


def test_an_older_stores_extra_still_reads(transformer):
    """record_version 1, its backend, user record, loaded figures and retarget in `extra`."""
    from kinspect.core.model import Loaded, Retarget

    d = json.loads(_records(transformer)[0].read_text())
    d.pop("launches")
    d.update(record_version=1, extra={"backend": "spine_triton", "user": {"kernel": "k.py:add"},
                                      "loaded": {"registers": 40, "spills": 0}, "retarget": "x60",
                                      "retargeted_from": "add", "trace_event": 7})
    v = Variant.from_json(d)
    assert v.backend == "spine_triton" and v.user == UserRecord(kernel="k.py:add") and v.trace_event == 7
    assert v.loaded == Loaded(40, 0, 0) and v.retarget == Retarget("x60", "add") and v.launches is None


@pytest.mark.parametrize("change, error, where", [
    (lambda d: d["launches"]["signatures"][0].update(grid=5), TypeError, "launches.signatures[0].grid: not a list"),
    (lambda d: d["launches"]["signatures"][0]["args"][0].update(shape=[4, "4"]), TypeError,
     "launches.signatures[0].args[0].shape[1]: not a whole number"),
    (lambda d: d["launches"].pop("calls"), ValueError, "launches.calls: missing"),
    (lambda d: d["times"].update(stages=[["ttir", 1, 2]]), TypeError, "times.stages[0]: not a list of 2"),
    (lambda d: d["target"].update(gpu="h100"), ValueError, "target: 'gpu' is no field of Target"),
    (lambda d: d.update(signature={"x": 3}), TypeError, "signature['x']: not a string"),
    (lambda d: d.update(cache_hit=1), TypeError, "cache_hit: not true or false"),
    (lambda d: d["launches"].update(other_calls=True), TypeError, "launches.other_calls: not a whole number"),
    (lambda d: d.update(user=[1]), TypeError, "user: not an object"),
    (lambda d: d.pop("hash"), ValueError, "hash: missing"),
])
def test_a_value_that_does_not_fit_names_where(transformer, change, error, where):
    d = json.loads(_records(transformer)[0].read_text())
    change(d)
    with pytest.raises(error) as e:
        Variant.from_json(d)
    assert str(e.value) == where


def test_a_field_added_to_the_record_is_read_with_no_reader_change(transformer):
    """What the issue asked for: a new field is a change in one place. Variant with one more field (and
    Launches with one more, held in it) reads it from the same from_json."""
    More = dataclasses.make_dataclass("More", [("peak_ms", float, 0.0)], bases=(Launches,), frozen=True)
    Bigger = dataclasses.make_dataclass("Bigger", [("gpu_model", str, ""), ("more", More | None, None)],
                                        bases=(Variant,), frozen=True)
    d = json.loads(_records(transformer)[0].read_text())
    v = Bigger.from_json({**d, "gpu_model": "H100", "more": {**d["launches"], "peak_ms": 2}})
    assert v.gpu_model == "H100" and v.more.peak_ms == 2.0 and type(v.more.peak_ms) is float
    assert v.more.signatures == v.launches.signatures
    assert Bigger.from_json(d).gpu_model == "" and Bigger.from_json(d).more is None      # older: its default


def test_launch_arguments_stay_hashable():
    """A launch signature is counted in dicts: a list value comes back a tuple, an object a tuple of pairs."""
    a = arg_from_json({"name": "k", "kind": "other", "value": [1, [2, 3], {"a": [4]}]})
    assert a.value == (1, (2, 3), (("a", (4,)),)) and hash(a)
    assert arg_from_json({"name": "x", "kind": "tensor", "shape": [2, 3], "strides": [3, 1]}).shape == (2, 3)
    assert launches_from_json(None) is None and launches_from_json({}) is None
    assert launches_from_json({"calls": 3, "grids": [[[2, 1, 1], 3]]}).grids == (((2, 1, 1), 3),)


@dataclasses.dataclass(frozen=True)
class _Inner:
    n: int
    scale: float = 1.0


@dataclasses.dataclass(frozen=True)
class _Outer:
    inner: _Inner
    pair: tuple[str, int] = ("", 0)
    items: list[_Inner] = dataclasses.field(default_factory=list)
    by_name: dict[str, _Inner] = dataclasses.field(default_factory=dict)
    maybe: _Inner | None = None
    free: Any = None
    how: Literal["fast", "slow"] = "fast"
    tree: "_Outer | None" = None


def test_the_reader_by_type_hints():
    o = records.from_json(_Outer, {"inner": {"n": 1, "scale": 2}, "pair": ["a", 1], "items": [{"n": 2}],
                                   "by_name": {"x": {"n": 3}}, "maybe": {}, "free": [1, {"a": 2}], "how": "slow",
                                   "tree": {"inner": {"n": 4}}})
    assert o == _Outer(_Inner(1, 2.0), ("a", 1), [_Inner(2)], {"x": _Inner(3)}, None, [1, {"a": 2}], "slow",
                       _Outer(_Inner(4)))
    assert records.from_json(_Outer, records.to_json(o)) == o
    assert records.from_json(tuple[int, ...], [1, 2]) == (1, 2)
    for data, error, message in [
        ({"inner": {"n": True}}, TypeError, "inner.n: not a whole number"),
        ({"inner": {"n": 1, "scale": "2"}}, TypeError, "inner.scale: not a number"),
        ({"inner": {"n": 1}, "items": [{"n": 1}, {}]}, ValueError, "items[1].n: missing"),
        ({"inner": {"n": 1}, "by_name": {"a\n": {"n": "1"}}}, TypeError, "by_name['a\\n'].n: not a whole number"),
        ({"inner": {"n": 1}, "how": "medium"}, ValueError, "how: not one of 'fast', 'slow'"),
        ({"inner": {"n": 1}, "tree": {"inner": []}}, TypeError, "tree.inner: not an object"),
        ({}, ValueError, "inner: missing"),
        ([], TypeError, "not an object"),
    ]:
        with pytest.raises(error) as e:
            records.from_json(_Outer, data)
        assert str(e.value) == message


def test_a_record_that_reads_itself_is_read_by_its_own_from_json():
    """UserRecord's JSON is not its fields (`called` is kept under "from"): where it is held, its own
    from_json reads it, and its errors are its own."""
    @dataclasses.dataclass(frozen=True)
    class Holds:
        user: UserRecord | None = None

    assert records.from_json(Holds, {"user": {"kernel": "k.py:k", "from": "k(x)"}}).user.called == "k(x)"
    assert records.from_json(Holds, {"user": {}}).user is None
    with pytest.raises(TypeError, match="user.autotune: not an object"):
        records.from_json(Holds, {"user": {"autotune": 5}})


# -- side files, read by their records' fields -------------------------------------------------------

def test_autotune_decisions_are_read_by_their_fields_and_a_file_may_leave_the_key_out(tmp_path):
    from kinspect.core.model import AutotuneDecision, ConfigTiming, TunedConfig
    from kinspect.files.store import read_autotune, write_autotune

    best = TunedConfig({"BLOCK": 64}, {"num_warps": 4})
    d = AutotuneDecision(kernel="mm", key=(1024, "torch.float16"), key_names=("N", "dtype"), best=best,
                         timings=(ConfigTiming(best, (0.1, 0.09, 0.12)), ConfigTiming(TunedConfig({"BLOCK": 128}),
                                                                                       failed=True)),
                         how="cache", bench_s=1.5, configs=2, pid=7, rank=1, host="h")
    write_autotune(tmp_path / "a", "mm", [d], host="h", pid=7)
    assert read_autotune(tmp_path / "a") == [d]
    # what the file's spec lets a file leave out (kinspect.files.schema.DECISION) reads as before
    (tmp_path / "b" / "mm").mkdir(parents=True)
    (tmp_path / "b" / "mm" / "autotune.json").write_text(json.dumps(
        [{"kernel": "mm", "best": {}, "timings": [{"config": {"options": {"num_warps": 8}}, "ms": [1]}]}]))
    timing = ConfigTiming(TunedConfig({}, {"num_warps": 8}), (1.0,))
    assert read_autotune(tmp_path / "b") == [AutotuneDecision(kernel="mm", key=(), key_names=(), best=TunedConfig({}),
                                                              timings=(timing,))]
    (tmp_path / "b" / "mm" / "autotune.json").write_text(json.dumps(
        [{"kernel": "mm", "best": {}, "timings": [{"config": {}, "ms": ["fast"]}]}]))
    problems: list = []
    assert read_autotune(tmp_path / "b", problems) == []
    assert problems == ["kernel mm: autotune.json: [0].timings[0].ms[0] is a string, expected a number; not read"]


def test_a_replay_spec_and_a_kernel_source_are_read_by_their_fields(tmp_path):
    from kinspect.core.errors import KinspectError
    from kinspect.core.model import SourceRef
    from kinspect.replay.source import KernelSource
    from kinspect.replay.spec import ReplaySpec, load, read_source

    helper = KernelSource("h", "k.py", 9, "@triton.jit\ndef h(x):\n    return x\n")
    source = KernelSource("k", "k.py", 1, "@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n    pass\n",
                          imports=(("tl", "triton.language"),), constants=(("C", {"constexpr": 8}),),
                          helpers=(("h", helper),), unresolved=("obj (a Foo)",))
    spec = ReplaySpec(kernel="k", target="cuda:90", args=(ArgSpec("x_ptr", "tensor", shape=(4, 8), strides=(8, 1),
                                                                  dtype="float32", device="cuda:0"),
                                                          ArgSpec("BLOCK", "int", value=8)),
                      grid=(4, 1, 1), signature={"x_ptr": "*fp32", "BLOCK": "constexpr"},
                      attributes={"x_ptr": {"tt.divisibility": 16}}, options={"num_warps": 4}, source=source,
                      ref=SourceRef("k.py", 1, "def k"), variant="v", calls=2, total_calls=5, origin="capture")
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec.to_json()))
    assert load(path) == spec
    # a spec with only what its file's spec requires (kinspect.files.schema.REPLAY_SPEC) reads as before
    path.write_text(json.dumps({k: v for k, v in spec.to_json().items()
                                if k in ("kernel", "target", "args", "grid", "signature")}))
    assert load(path) == ReplaySpec(kernel="k", target="cuda:90", args=spec.args, grid=(4, 1, 1),
                                    signature=spec.signature)
    path.write_text(json.dumps({**spec.to_json(), "grid": [4, "1"]}))
    with pytest.raises(KinspectError) as e:
        load(path)
    assert str(e.value) == f"'{path}' is not a replay spec: spec.json: grid[1] is a string, expected a whole number"

    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "source.json").write_text(json.dumps(source.to_json()))
    assert read_source(tmp_path / "v") == source
    bad = source.to_json()
    bad["helpers"][0][1]["line"] = "nine"
    (tmp_path / "v" / "source.json").write_text(json.dumps(bad))
    with pytest.raises(KinspectError, match=r"^variant v: source.json: helpers\[0\]\[1\].line is a string, expected a "
                                             r"whole number; it cannot be replayed from its captured source$"):
        read_source(tmp_path / "v")


def test_counters_are_read_by_their_fields(tmp_path):
    from kinspect.core.errors import KinspectWarning
    from kinspect.files import counters
    from kinspect.files.counters import Counters

    c = Counters("k", 3, duration_ns=2e5, dram_read=4e7, dram_write=1e7, l2_write_sectors=1e5, l2_size=62_914_560,
                 stalls=(("long_scoreboard", 2.5), ("wait", 1.0)), how="ncu ...", ncu_version="2025.3",
                 measured="2026-11-25", notes=("one",))
    counters.write(tmp_path, c)
    assert counters.read(tmp_path) == c
    # a file from before kinspect kept the L2's writes and size, the stalls and notes: their defaults
    (tmp_path / counters.FILE).write_text(json.dumps({"version": 1, "kernel": "k", "launches": 3, "dram_read": 4,
                                                      "dram_write": None}))
    assert counters.read(tmp_path) == Counters("k", 3, dram_read=4.0)
    # a value of the wrong kind, or a key that is no field: one warning, and no counters
    for wrong in ({"dram_read": "lots"}, {"stalls": [["wait"]]}, {"sm_busy": 0.5}):
        (tmp_path / counters.FILE).write_text(json.dumps({"version": 1, "kernel": "k", "launches": 3, **wrong}))
        with pytest.warns(KinspectWarning, match=r"not of the shape kinspect writes \((Type|Value)Error\); not read$"):
            assert counters.read(tmp_path) is None
