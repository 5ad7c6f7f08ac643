"""One JSON contract: `kinspect schema COMMAND` prints the JSON Schema of COMMAND's --json, made from the
records the JSON itself is made of (kinspect.render.json), and every command's real --json output conforms
to it: vec-report of a compiled kernel and of captured programs (interpreted here, and the GPT-2 step
captured on an H200 with its device ceilings and a kernel's counters), diff of a captured store, bench
--interpret, capture --interpret, and tune from the tunes the H200 measured. Each carries kinspect_json."""

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from kinspect import api
from kinspect.core.errors import KinspectError
from kinspect.core.records import problems, schema, to_json
from kinspect.files import ceilings, counters, gpu_time
from kinspect.files.ceilings import Ceilings
from kinspect.files.counters import Counters
from kinspect.files.store import read_records
from kinspect.render import json as records
from tests.helpers import TESTS, run, run_ok

H200_TUNE = TESTS / "fixtures" / "tune" / "gpt2_h200_tune.json"


def conforms(command: str, out: str):
    """The JSON `command` printed, checked against `kinspect schema command`; returned parsed."""
    d = json.loads(out)
    found = problems(d, json.loads(run_ok("schema", command).stdout))
    assert not found, found[:10]
    for obj in d if isinstance(d, list) else [d]:
        assert obj["kinspect_json"] == records.VERSION
    return d


def test_schema_prints_each_commands_schema_and_refuses_others_in_one_line():
    every = json.loads(run_ok("schema").stdout)
    assert every["kinspect_json"] == records.VERSION
    assert set(every["commands"]) == {"vec-report", "diff", "bench", "capture", "tune"}
    assert every["commands"]["diff"] == json.loads(run_ok("schema", "diff").stdout) == api.json_schema("diff")
    r = run("schema", "vec-reprt")
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "did you mean 'vec-report'" in r.output
    # one name per figure: the figures a variant carries are declared once and read the same in every command
    names = {f.name for f in dataclasses.fields(records.Figures)}
    for command in ("vec-report", "diff", "bench"):
        text = run_ok("schema", command).stdout
        assert all(f'"{n}"' in text for n in names), command
        assert '"vector"' not in text and '"gbps"' not in text and '"jit_us"' not in text


def test_the_validator_finds_what_breaks_a_schema():
    s = schema(records.Finding)
    good = to_json(records.Finding(kind="narrow_loads", severity=2, text="t", advice="a", line=None))
    assert problems(good, s) == []
    assert problems({**good, "severity": "2"}, s) == ["$.severity: str where integer was expected"]
    assert problems({**good, "severity": True}, s), "a bool is no integer"
    assert problems({k: v for k, v in good.items() if k != "kind"}, s) == ["$: no key 'kind'"]
    assert problems({**good, "vector": 1}, s) == ["$: key 'vector' is not in the schema"]
    assert problems([good, {**good, "line": "x"}], {"type": "array", "items": s}) == \
        ["$[1].line: str where integer/null was expected"]
    assert "$.kinspect_json: 2 is not 1" in problems({"kinspect_json": 2}, schema(records.Tune))


def test_vec_report_of_a_compiled_kernel(tmp_path):
    d = conforms("vec-report", run_ok("vec-report", "softmax", "-t", "cuda:90", "--store", tmp_path, "--json").stdout)
    [v] = d
    assert v["isa"] == "sass" and v["vector_instructions"] > 0 and 0 < v["occupancy"] <= 1
    assert v["occupancy_limiter"] and v["occupancy_max_warps"] >= v["occupancy_active_warps"] > 0


def test_vec_report_diff_and_capture_of_an_interpreted_program(interpreted_capture, tmp_path):
    store, _, captured = interpreted_capture
    d = conforms("capture", json.dumps(captured))       # the line `capture --json` printed
    assert d["interpret"] == "cuda:90" and len(d["variants"]) == 5 and d["timing"] is None
    d = conforms("vec-report", run_ok("vec-report", store, "--all", "--json").stdout)
    assert len(d["kernels"]) >= 2 and len(d["variants"]) == len(d["kernels"])
    assert all(k["provenance"]["status"] == "own source" for k in d["kernels"])
    d = conforms("diff", run_ok("diff", store, "--no-bench", "--table", "--json").stdout)
    # every variant of the store, the capture's 5 and any a test sharing the fixture added before this one ran
    stored = {Path(v.path).name for v in read_records(store)}
    assert {r["variant"] for r in d["variants"]} == stored and len(stored) >= 5
    assert all(r["jit_ms"] is None or r["jit_ms"] >= 0 for r in d["variants"])
    d = conforms("diff", run_ok("diff", store, store, "--json").stdout)     # the same run twice: a program diff
    assert d["a"]["kind"] == "kinspect store" and len(d["kernels"]) >= 2 and not any(k["deltas"] for k in d["kernels"])


def test_the_h200_programs_json_with_ceilings_and_counters(gpt2, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(tmp_path / "cache"))
    store = tmp_path / "gpt2"
    shutil.copytree(gpt2 / "gpt2", store)
    ceilings.write(store, Ceilings("NVIDIA H200", 4249.0, {"bfloat16": 685.0, "float32": 362.0}, "2026-11-25"))
    gpu_time.write_others(store, {"sm90_xmma_gemm_bf16": {"calls": 4, "ms": 12.0}}, "profiler", "the whole run")
    v = max((x for x in read_records(store) if x.launches and x.launches.gpu), key=lambda x: x.launches.gpu.total_ms)
    counters.write(v.path, Counters(kernel=v.kernel, launches=3, duration_ns=2e5, dram_read=4e7, dram_write=1e7,
                                    l1_load=9e7, occupancy_pct=35.0, stalls=(("long_scoreboard", 2.5),),
                                    ncu_version="2025.3.1.0", notes=("a note",)))
    d = conforms("vec-report", run_ok("vec-report", store, "--top", "1", "--json").stdout)
    sol = d["speed_of_light"]
    assert sol["headroom_ms"] > 0 and sol["triton_share_of_gpu_time"] and sol["largest_other_kernels"]
    row = next(k for k in d["kernels"] if k["kernel"] == v.kernel)
    assert row["counters"]["ncu_version"] == "2025.3.1.0" and row["counters"]["findings"]
    assert row["bytes_method"].startswith("measured") and row["pct_of_bandwidth"] is not None


def test_bench_interpret_json(tmp_path):
    d = conforms("bench", run_ok("bench", "softmax", "--interpret", "--size", "4x64", "--store", tmp_path,
                              "--json").stdout)
    assert d["check"]["ok"] and d["grid"]


def test_tune_json_of_the_h200_tunes():
    """`tune --json` and vec-report --tune's entries, made from the tunes the H200 measured (the fixture is
    vec-report --tune --json's output of kinspect_json 0, which the readers still take)."""
    from kinspect.tune.outcome import Tuned, outcome
    from kinspect.tune.result import TuneResult

    tuned = []
    for t in json.loads(H200_TUNE.read_text())["tune"]:
        r = TuneResult.from_json(t)
        tuned.append(Tuned(r.kernel, r, outcome(r)))
    tuned.append(Tuned("k", error="no variant of it was launched with its arguments recorded"))
    for t in tuned:
        d = conforms("tune", records.dumps(records.tune_json(t)))
        assert d["error"] is None if t.result is not None else d["trials"] == []
        again = TuneResult.from_json(d) if t.result is not None else None
        assert again is None or again == t.result, "what tune --json prints reads back as the tune it was"
    timed = [x for t in tuned[:-1] for x in records.tune_json(t).trials if x.status == "timed"]
    assert timed and all(x.code.vector_instructions is not None for x in timed)
    with pytest.raises(KinspectError):
        TuneResult.from_json({**to_json(records.tune_json(tuned[0])), "kinspect_json": 2})


def test_bench_json_is_made_of_its_records(tmp_path):
    """bench times on a device (tests/gpu/test_bench_live.py checks its real --json against the schema); here
    its JSON is made from a BenchResult of a real compiled variant, with stand-in timings."""
    from kinspect.analysis.summary import summaries
    from kinspect.bench.check import Check
    from kinspect.bench.first_call import FirstCall, FirstCalls
    from kinspect.bench.measure import BenchResult, Throughput
    from kinspect.bench.reference import RefTiming
    from kinspect.bench.stats import summarize
    from kinspect.bench.timing import Timing

    run_ok("dump", "softmax", "-t", "cuda:90", "--store", tmp_path)
    [v] = read_records(tmp_path)
    timing = Timing(wall=summarize([0.1, 0.11, 0.12]), tool="do_bench")
    result = BenchResult(
        label="softmax", target_note="cuda:90", size="4096x1024", dtype="float32", variant=v,
        first=FirstCalls(FirstCall(900.0, False, v.times), FirstCall(1.0, True, v.times), v), in_user_cache=False,
        steady=timing, throughput=Throughput(gbps=3000.0, copy={"gbps": 4000.0}), metrics=summaries([v])[0],
        references=(RefTiming("torch", timing, 1.2),), check=Check(1e-7, 1.0, 1e-5, "float32", "torch reference"),
        method={"device": "stand-in"})
    d = conforms("bench", records.dumps(records.bench(result)))
    assert d["throughput"]["pct_of_bandwidth"] == 75.0 and d["asm"]["jit_ms"] > 0
    assert d["asm"]["jit_ms_by_stage"] and d["asm"]["vector_instructions"] > 0
