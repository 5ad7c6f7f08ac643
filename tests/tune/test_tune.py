"""kinspect tune on the real GPT-2 capture (H200, torch 2.11's Inductor kernels): everything but the timing.

The timer is the one seam: `FakeRunner` answers check/time in place of the GPU Replayer, so what is tested
here is what kinspect does around the measurements (candidates, grids, compiles, pruning, choice, store,
views), on real captured launches and real cuda:90 compiles.
"""

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kinspect.bench.stats import summarize
from kinspect.bench.timing import Timing
from kinspect.cli import main
from kinspect.core.errors import KinspectError
from kinspect.replay.spec import from_variant
from kinspect.files.store import read_record, read_records
from kinspect.tune import heuristic, inductor
from kinspect.tune.result import Trial, TrialCode
from kinspect.tune.search import prune
from kinspect.tune.space import Candidate, Knobs, from_findings, neighbours
from tests.helpers import ROOT, TESTS

POI = "triton_poi_fused_add_mul_pow_tanh_view_7"                  # pointwise, XBLOCK=1024 w4
RED = "triton_red_fused_native_layer_norm_native_layer_norm_backward_view_11"   # looped reduction, spills
PER = "triton_per_fused_add_native_dropout_native_layer_norm_view_8"           # persistent reduction
SOFTMAX = "triton_red_fused__log_softmax__to_copy_prepare_softmax_online_view_0"  # INNER reduction


def _variant(root: Path, kernel: str):
    return read_record(next((root / "gpt2" / kernel).iterdir()))


def _knobs(root, kernel):
    v = _variant(root, kernel)
    spec = from_variant(v)
    return Knobs.of(spec, heuristic.read(spec.ref.text)), v


class FakeRunner:
    """Checks and times by rule, so a test knows the answer: XBLOCK=512 gives a wrong output; the time
    falls with XBLOCK (a made-up model, for the search logic only)."""

    def __init__(self, spec=None):
        self.checked = []

    def check(self, c, grid, original, original_grid):
        self.checked.append((c.label(), grid))
        wrong = dict(c.constexprs).get("XBLOCK") == 512
        return (not wrong, "fake: XBLOCK=512 is wrong" if wrong else "fake: same")

    def time(self, c, grid):
        ms = 0.1 / (1 + dict(c.constexprs).get("XBLOCK", 1) / 1024) + 0.001 * c.num_warps
        return Timing(wall=summarize([ms * 0.99, ms, ms * 1.01]), tool="fake")


def test_heuristic_read_every_captured_kernel(gpt2):
    kinds = {}
    for folder in sorted((gpt2 / "gpt2").glob("*/*/")):
        v = read_record(folder)
        h = heuristic.read(v.source.text)
        assert h is not None and h.grid_type == "Grid1D" and h.sm_count == 132
        kinds[h.kind] = kinds.get(h.kind, 0) + 1
    assert set(kinds) == {"pointwise", "reduction", "persistent_reduction"}


def test_heuristic_never_runs_the_decorator():
    text = "@triton_heuristics.pointwise(size_hints={'x': __import__('os').system('true')})\n@triton.jit\ndef k(): pass"
    with pytest.raises(KinspectError, match="does not evaluate"):
        heuristic.read(text)
    assert heuristic.read("@triton.jit\ndef k(): pass") is None


def test_grid_rule_gives_the_captured_grid_and_follows_the_block(gpt2):
    for folder in sorted((gpt2 / "gpt2").glob("*/*/")):
        v = read_record(folder)
        if not (v.launches and v.launches.signatures):
            continue
        spec = from_variant(v)
        k = Knobs.of(spec, heuristic.read(spec.ref.text))
        assert k.grid(k.original) == tuple(spec.grid) + (1,) * (3 - len(spec.grid)), v.kernel
        assert k.limits, f"{v.kernel}: {k.notes}"
    k, v = _knobs(gpt2, POI)
    xnumel = next(a.value for a in from_variant(v).args if a.name == "xnumel")
    half = Candidate(constexprs=(("XBLOCK", 512),), num_warps=4, num_stages=1)
    assert k.grid(half) == (-(-xnumel // 512), 1, 1) == (2 * k.captured_grid[0], 1, 1)


def test_candidates_come_from_the_findings(gpt2):
    k, _ = _knobs(gpt2, RED)
    assert k.original.label() == "R0_BLOCK=32 XBLOCK=16 w4 s1"
    spills = from_findings(k, ["spills"])
    assert {c.label() for c in spills} == {"R0_BLOCK=16 XBLOCK=16 w4 s1", "R0_BLOCK=32 XBLOCK=8 w4 s1",
                                           "R0_BLOCK=32 XBLOCK=16 w8 s1"}     # smaller tiles, more warps
    assert all(c.why == "spills" for c in spills)
    # narrow loads in an INNER reduction: a longer block along the contiguous axis (R0_BLOCK)
    k2, _ = _knobs(gpt2, SOFTMAX)
    assert [c.label() for c in from_findings(k2, ["narrow_loads"])][0] == "R0_BLOCK=4096 XBLOCK=1 w16 s1"
    # a persistent reduction's R0_BLOCK is the whole row: not a knob
    k3, _ = _knobs(gpt2, PER)
    assert set(k3.limits) == {"XBLOCK"}
    # widening: one step of every knob, within Inductor's limits, never one seen
    more = neighbours(k, k.original, {k.original.key()})
    assert all(not k.valid(c) for c in more) and k.original.key() not in {c.key() for c in more}
    assert k.valid(Candidate((("R0_BLOCK", 8192), ("XBLOCK", 16)), 4, 1))     # R0_BLOCK over 4096


def test_inductor_and_max_autotune_configs(gpt2):
    k, _ = _knobs(gpt2, "triton_per_fused_sum_view_9")
    own = inductor.configs(k.heuristic, k, max_autotune=False)
    mx = inductor.configs(k.heuristic, k, max_autotune=True)
    assert len(mx) > len(own) >= 1
    assert {c.origin for c in mx} == {"max_autotune"} and all(dict(c.constexprs).keys() == {"XBLOCK"} for c in mx)


def test_lookup_key_is_inductors(gpt2):
    """Our key for torch._inductor.config.autotune_lookup_table equals torch's own on the kernel's JIT source."""
    th = pytest.importorskip("torch._inductor.runtime.triton_heuristics")
    if not hasattr(th, "generate_lookup_hash_from_source_code"):
        pytest.skip("this torch has no autotune lookup table")
    from kinspect.compile import jit_function
    from kinspect.compile.replayed import kernel

    v = _variant(gpt2, POI)
    spec = from_variant(v)
    h = heuristic.read(spec.ref.text)
    jit = jit_function(kernel(spec))
    assert heuristic.lookup_key(spec.ref.text, h.size_hints) == \
        th.generate_lookup_hash_from_source_code(str(h.size_hints), jit.src)


def test_prune_from_the_code():
    assert "does not fit" in prune(TrialCode(occupancy=0, occupancy_limiter="registers"), TrialCode())
    assert "spills 8" in prune(TrialCode(spills=8, occupancy=0.5), TrialCode(spills=0))
    assert prune(TrialCode(spills=0, occupancy=0.5), TrialCode(spills=0)) == ""


@pytest.fixture()
def store(gpt2, tmp_path):
    shutil.copytree(gpt2 / "gpt2", tmp_path / "gpt2")
    return tmp_path / "gpt2"


def test_tune_end_to_end_with_a_fake_timer(store):
    """Real cuda:90 compiles of the candidates, pruned from their code; the fake timer's choice; wrong
    ones listed with why and never chosen; the result stored and read back, shown by the views."""
    from kinspect import api
    from kinspect.render.tune import render, table_row

    lines = []
    runners = []

    def runner_for(spec):
        runners.append(FakeRunner(spec))
        return runners[-1]

    found = api.tune(POI, out_dir=store, trials=3, runner_for=runner_for, progress=lines.append)
    r, o = found.result, found.outcome
    assert found.kernel == POI and not found.error
    origins = {t.candidate.origin for t in r.trials}
    assert {"original", "inductor", "max_autotune", "kinspect"} <= origins
    assert r.trials_of("kinspect") <= 3
    wrong = [t for t in r.trials if t.status == "wrong"]
    assert wrong and all(dict(t.candidate.constexprs)["XBLOCK"] == 512 and "is wrong" in t.why for t in wrong)
    assert o.winner.status == "timed" and dict(o.winner.candidate.constexprs)["XBLOCK"] != 512
    assert o.winner.candidate.origin == "kinspect"         # the fake makes larger XBLOCK faster
    # the grid each candidate ran with follows its XBLOCK
    for label, grid in runners[0].checked:
        xb = int(label.split("XBLOCK=")[1].split()[0])
        assert grid[0] == -(-12582912 // xb) or grid[0] * xb >= 12582912
    timed = [t for t in r.trials if t.status == "timed"]
    assert all(t.code.instructions for t in timed)       # figures of the real compiled code
    assert (Path(next((store / POI).iterdir())) / "tune.json").is_file()
    again = api.tuned(read_record(next((store / POI).iterdir())))
    assert again.result.to_json() == r.to_json()
    text = render(r, o)
    assert "winner:" in text and "max_autotune's configs" in text and "wrong: fake: XBLOCK=512 is wrong" in text
    assert table_row(r, o)["kinspect_trials"] == r.trials_of("kinspect")
    assert lines[0].startswith(f"tuning {POI}")
    assert "autotune_lookup_table[" in o.apply and "triton.Config({'XBLOCK': " in o.apply


def test_pruned_from_real_compiled_code(store):
    """A candidate whose compiled cuda:90 code spills where the original did not is pruned before timing."""
    from kinspect.tune import search

    k, v = _knobs(store.parent, POI)
    s = search.setup(v)
    big = Candidate((("XBLOCK", 4096),), 1, 1, why="test", origin="kinspect")
    compiled = search._compile(s, [k.original, big], lambda jobs: search._sweep(jobs, 2),
                               store / search.TUNE_DIR)
    orig, runs = search._before_device(s, k.original, compiled[k.original.key()], None)
    assert runs and orig.status == "timed"        # the original always runs
    t, runs = search._before_device(s, big, compiled[big.key()], orig)
    assert orig.code.registers and t.code.registers >= orig.code.registers
    expected = prune(t.code, orig.code)
    assert (t.status == "pruned") == bool(expected) == (not runs)
    if expected:
        assert t.why == expected


def test_trial_round_trip_refuses_bad_status():
    t = Trial(Candidate((("XBLOCK", 8),), 4, 1), "timed", median_ms=1.0, p20_ms=0.9, p80_ms=1.1, runs=3)
    assert Trial.from_json(t.to_json()) == t
    bad = {**t.to_json(), "status": "great"}
    with pytest.raises(KinspectError):
        Trial.from_json(bad)


def test_a_stored_tune_reads_back_by_its_fields_and_a_malformed_one_is_one_clear_error(tmp_path):
    import json

    from kinspect.tune.result import RESULT_FILE, Baseline, TuneResult, read, write

    t = Trial(Candidate((("XBLOCK", 8),), 4, 1, why="spills"), "timed", grid=(64, 1, 1), median_ms=1.0, p20_ms=0.9,
              p80_ms=1.1, runs=3, code=TrialCode(registers=32, vector_instructions=4), findings=("spills",),
              gpu="GPU 1", baseline=Baseline(1.2, 1.1, 1.3))
    r = TuneResult("k", "v", "cuda:90", ("spills",), (t, Trial(Candidate((), 8, 2), "pruned", why="spills")),
                   seconds=2.5, budget="--trials 2", notes=("n",), torch="2.11")
    write(tmp_path, r)
    assert read(tmp_path) == r
    d = r.to_json()
    d["trials"][0]["median_ms"] = "fast"
    (tmp_path / RESULT_FILE).write_text(json.dumps(d))
    with pytest.raises(KinspectError) as e:
        read(tmp_path)
    assert str(e.value) == (f"{tmp_path / RESULT_FILE}: not a tune result kinspect can read (TypeError: median_ms: "
                            f"not a number)")


def test_gpus_and_cluster_apply_to_tune_and_counters_only(store):
    def one_line(*args):
        r = CliRunner().invoke(main, ["vec-report", str(store), "--store", str(store), *args])
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
        return r.output

    assert "--gpus and --cluster say where --tune and --counters run" in one_line("--gpus", "2")
    assert "leave --cluster to --tune" in one_line("--cluster", "ray", "--counters")
    variant = next(p for p in store.glob("*/*") if (p / "record.json").is_file())
    r = CliRunner().invoke(main, ["vec-report", str(variant), "--gpus", "2"])
    assert r.exit_code == 2 and "one variant: kinspect tune VARIANT --gpus N" in r.output


def test_no_device_is_one_line(store):
    r = CliRunner().invoke(main, ["tune", POI, "--store", str(store)])
    assert r.exit_code == 2 and "no GPU here to tune" in r.output and len(r.output.strip().splitlines()) == 1
    r = CliRunner().invoke(main, ["vec-report", str(store), "--tune", "2", "--store", str(store)])
    assert r.exit_code == 2 and "no GPU here" in r.output
    r = CliRunner().invoke(main, ["tune", "no_such_kernel", "--store", str(store)])
    assert r.exit_code == 2 and "no variant" in r.output


def test_a_user_kernels_autotune_configs_and_grid_rule(interpreted_capture):
    """An autotuned user kernel captured (interpreted, compiled for cuda:90): its own configs as the capture
    recorded them are what Triton's autotuner is compared by; its grid follows BLOCK by the rule guessed
    from the captured values (said in a note); a kernel whose grid is its rows keeps its grid."""
    from kinspect.tune.search import autotune_configs

    store, _, _ = interpreted_capture
    by = {}
    for v in read_records(store):
        if v.launches and v.launches.signatures:
            by[v.kernel] = v
    add = by["add_kernel"]
    spec = from_variant(add)
    k = Knobs.of(spec, heuristic.read(spec.ref.text or ""))
    assert k.heuristic is None and k.original.constexprs == (("BLOCK", 64),)
    assert k.grid(k.original) == (13, 1, 1) and k.grid(Candidate((("BLOCK", 128),), 4, 3)) == (7, 1, 1)
    assert any("guessed as cdiv(n, BLOCK)" in n for n in k.notes)
    configs = autotune_configs(add, k, spec)
    assert [(c.label(), c.origin) for c in configs] == [("BLOCK=64 w2 s3", "autotune"), ("BLOCK=128 w4 s3", "autotune")]
    sm = by["softmax_rows"]
    spec = from_variant(sm)
    k = Knobs.of(spec, None)
    assert k.grid_axes == (None, None, None) or all(a is None for a in k.grid_axes)
    assert k.grid(Candidate((("BLOCK", 256),), 4, 3)) == (7, 1, 1)


def test_candidates_never_compile_through_a_link_out_of_the_store(store, tmp_path):
    from kinspect import api

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (store / ".kinspect-tune").symlink_to(outside)
    with pytest.raises(KinspectError, match="link out of the store"):
        api.tune(POI, out_dir=store, trials=1, runner_for=FakeRunner)
    assert not any(outside.iterdir())


def test_the_autotuners_configs_are_not_pruned_for_spills():
    assert prune(TrialCode(spills=8, occupancy=0.5), TrialCode(spills=0), spills_too=False) == ""
    assert "does not fit" in prune(TrialCode(occupancy=0), TrialCode(), spills_too=False)


def test_report_and_vec_report_show_a_stored_tune(store, tmp_path):
    from kinspect.tune.result import TuneResult, write

    folder = next((store / POI).iterdir())
    o = Trial(Candidate((("XBLOCK", 1024),), 4, 1, origin="original"), "timed", median_ms=0.1, p20_ms=0.099,
              p80_ms=0.101, runs=100, code=TrialCode(registers=20))
    w = Trial(Candidate((("XBLOCK", 2048),), 8, 1, why="widening"), "timed", median_ms=0.09, p20_ms=0.089,
              p80_ms=0.091, runs=100, code=TrialCode(registers=24))
    write(folder, TuneResult(POI, folder.name, "cuda:90", (), (o, w), budget="--trials 3"))
    r = CliRunner().invoke(main, ["vec-report", str(folder)])
    assert r.exit_code == 0 and "tuned (2 candidates, --trials 3)" in r.output
    assert "winner: XBLOCK=2048 w8 s1: 1.11x" in r.output and "autotune_lookup_table[" in r.output
    html = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["report", str(folder), "--no-bench", "-o", str(html)])
    assert r.exit_code == 0, r.output
    assert "<h3>Tune</h3>" in html.read_text() and "XBLOCK=2048 w8 s1" in html.read_text()
    (folder / "tune.json").write_text('{"version": 1, "kernel": "k"}')
    r = CliRunner().invoke(main, ["vec-report", str(folder)])
    assert r.exit_code == 2 and "not a tune result" in r.output


def test_a_tune_where_nothing_ran_never_says_the_programs_config_was_fastest():
    """On the H200 four of five GPT-2 kernels could not be replayed (every trial failed) and the table
    said 'the program's config was the fastest'."""
    from kinspect.render.tune import table_row
    from kinspect.tune.outcome import outcome
    from kinspect.tune.result import TuneResult

    failed = "run: TypeError: dynamic_func() missing 1 required positional argument: 'XBLOCK'"
    r = TuneResult("k", "v", "cuda:90", ("narrow_loads",),
                   (Trial(Candidate((), 4, 1, origin="original"), "failed", why=failed),
                    Trial(Candidate((), 8, 1, origin="kinspect"), "failed", why="compile: " + failed)))
    row = table_row(r, outcome(r))
    assert "could not be replayed" in row["reason"] and "XBLOCK" in row["reason"]
    assert "fastest" not in row["reason"]


H200_TUNE = TESTS / "fixtures" / "tune" / "gpt2_h200_tune.json"


def _h200_tunes():
    import json

    from kinspect.tune.result import TuneResult

    return [TuneResult.from_json(t) for t in json.loads(H200_TUNE.read_text())["tune"]]


def test_trials_to_match_max_autotunes_pick_on_the_h200_tunes():
    """The H200 tune of GPT-2's top 5 kernels (stored before widening steps named their start): how many of
    kinspect's trials, in the order they ran, it took to reach max_autotune's pick's median; 0 where what the
    program ran already did (twice max_autotune picked the program's own config); a match inside the timings'
    spread says so."""
    from kinspect.render.tune import summary, table_row
    from kinspect.tune.outcome import outcome

    rows = [table_row(r, outcome(r)) for r in _h200_tunes()]
    assert [r["kinspect_trials_to_match"] for r in rows] == [0, 1, 0, 0, 4]
    assert [r["kinspect_trials"] for r in rows] == [6] * 5
    assert [r["max_autotune_trials"] for r in rows] == [5, 5, 2, 1, 6]
    assert [r["match"] for r in rows] == [
        "the same config as its pick", "1.00x ± 0.00, as fast within the timings' spread, not measurably faster",
        "the same config as its pick", "1.10x ± 0.03, faster beyond the timings' spread",
        "1.20x ± 0.05, faster beyond the timings' spread"]
    layer_norm = _h200_tunes()[4]
    assert summary(layer_norm, outcome(layer_norm))[-1] == (
        "kinspect reached max_autotune's pick's time after 4 of its 6 trials (max_autotune times 6): "
        "R0_BLOCK=64 XBLOCK=16 w4 s1, 1.20x ± 0.05, faster beyond the timings' spread")
    # a tune stored before kinspect named which candidate a widening step started from still reads, and says so
    assert rows[4]["reason"].startswith("found by widening from the best candidate so far (this tune was stored "
                                        "before kinspect named which); registers 48 -> 80")


def test_trials_to_match_counts_what_ran_and_none_when_never_reached():
    from kinspect.tune.outcome import outcome
    from kinspect.tune.result import TuneResult

    def timed(ms, **c):
        return Trial(Candidate(**c), "timed", median_ms=ms, p20_ms=ms * 0.99, p80_ms=ms * 1.01, runs=10)

    orig = timed(1.0, constexprs=(("XBLOCK", 8),), num_warps=4, num_stages=1, origin="original")
    mx = timed(0.8, constexprs=(("XBLOCK", 64),), num_warps=4, num_stages=1, origin="max_autotune")
    pruned = Trial(Candidate((("XBLOCK", 16),), 4, 1), "pruned", why="spills")
    wrong = Trial(Candidate((("XBLOCK", 32),), 4, 1), "wrong", why="WRONG")
    slow = timed(0.9, constexprs=(("XBLOCK", 128),), num_warps=4, num_stages=1)
    fast = timed(0.79, constexprs=(("XBLOCK", 256),), num_warps=4, num_stages=1)
    r = TuneResult("k", "v", "cuda:90", (), (orig, mx, pruned, wrong, slow, fast))
    o = outcome(r)
    assert (o.to_match, o.match) == (3, fast)        # the pruned one cost no device time; the wrong one did
    again = TuneResult.from_json(r.to_json())        # read back from a store
    assert outcome(again).to_match == 3
    never = TuneResult("k", "v", "cuda:90", (), (orig, mx, pruned, wrong, slow))
    assert outcome(never).to_match is None
    assert TuneResult("k", "v", "cuda:90", (), (orig, slow)).trials_to_reach(0.5) is None


class Recorded:
    """A runner and a compiler that answer what the H200 measured and compiled for each config of a stored
    tune (its code figures, findings, check line and times); a config it never tried is an error."""

    def __init__(self, tune):
        self.by = {t.candidate.label(): t for t in tune.trials}

    def check(self, c, grid, original, original_grid):
        return True, self.by[c.label()].why

    def time(self, c, grid):
        from types import SimpleNamespace

        t = self.by[c.label()]
        return SimpleNamespace(wall=SimpleNamespace(median=t.median_ms, p20=t.p20_ms, p80=t.p80_ms, n=t.runs))

    def compile(self, jobs):
        from types import SimpleNamespace

        out = []
        for j in jobs:
            t = self.by[Candidate(tuple(sorted(j.constexprs)), j.num_warps, j.num_stages).label()]
            out.append(SimpleNamespace(error="", metrics={**t.code.to_json(), "findings": [{"kind": k} for k in t.findings]}))
        return out


def test_the_h200_layer_norm_tune_searched_again_names_what_each_widening_step_started_from(store):
    """The search run again on the captured layer-norm backward kernel, answered by what the H200 measured:
    it tries the same configs in the same order, and its winner's reason traces the widening step to the
    spills finding's candidate it started from."""
    from kinspect.render.tune import table_row
    from kinspect.tune import search
    from kinspect.tune.outcome import outcome

    h200 = _h200_tunes()[4]
    assert h200.kernel == RED
    rec = Recorded(h200)
    r = search.tune(_variant(store.parent, RED), runner=rec, trials=6, compiler=rec.compile)
    assert [(t.candidate.origin, t.candidate.label()) for t in r.trials] == \
        [(t.candidate.origin, t.candidate.label()) for t in h200.trials]
    widened = [t.candidate.why for t in r.trials if t.candidate.why.startswith("widening")]
    assert widened == ["widening from R0_BLOCK=16 XBLOCK=16 w4 s1 (spills)"] * 3
    o = outcome(r)
    assert o.winner.candidate.label() == "R0_BLOCK=32 XBLOCK=32 w4 s1" and o.to_match == 4
    assert table_row(r, o)["reason"].startswith(
        "found by widening from the spills candidate R0_BLOCK=16 XBLOCK=16 w4 s1; registers 48 -> 80")


def test_a_chain_of_widening_steps_is_traced_to_the_finding_that_began_it():
    from kinspect.tune.outcome import fixed
    from kinspect.tune.space import short_why, widening

    def t(c, findings=("narrow_loads",)):
        return Trial(c, "timed", median_ms=1.0, p20_ms=1.0, p80_ms=1.0, findings=findings)

    orig = Candidate((("XBLOCK", 8),), 4, 1, why="what the program ran", origin="original")
    a = Candidate((("XBLOCK", 16),), 4, 1, why="narrow_loads")
    b = Candidate((("XBLOCK", 16),), 8, 1, why=widening(a))
    c = Candidate((("XBLOCK", 32),), 8, 1, why=widening(b))
    assert c.why == "widening from XBLOCK=16 w8 s1 (narrow_loads)"
    trials = tuple(t(x) for x in (orig, a, b, c))
    assert fixed(trials[0], trials[3], trials) == ("found by widening from XBLOCK=16 w8 s1, itself widened from the "
                                                   "narrow_loads candidate XBLOCK=16 w4 s1; narrow_loads still "
                                                   "reported in its code")
    assert short_why(c.why, 40) == "widening from XBLOCK=16 w8 s1" and short_why("spills", 4) == "spil"
    d = Candidate((("XBLOCK", 8),), 8, 1, why=widening(orig))
    assert d.why == "widening from XBLOCK=8 w4 s1 (what the program ran)"
    assert fixed(trials[0], t(d, ()), trials + (t(d, ()),)) == ("found by widening from what the program ran "
                                                                "(XBLOCK=8 w4 s1); findings gone from its code: "
                                                                "narrow_loads")


def test_the_tune_table_renders_from_vec_reports_json_alone():
    """benchmarks/tune_table.py --json: the H200 table without its store (which stays on the GPU machine)."""
    import re
    import subprocess
    import sys

    script = ROOT / "benchmarks" / "tune_table.py"
    out = subprocess.run([sys.executable, str(script), "--json", str(H200_TUNE)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = [ln for ln in out.stdout.splitlines() if ln.startswith("triton_")]
    # after kinspect's winner (... w8 s1), its µs and n: the 'to match' column
    assert [re.search(r" s\d+ +[\d.]+ +\d+ +(\S+) ", ln).group(1) for ln in rows] == ["0", "1", "0", "0", "4"]
    goals = [ln for ln in out.stdout.splitlines() if ln.startswith("goal (")]
    assert len(goals) == 5 and all("trials to reach it: fewer" in g for g in goals)
    assert "max_autotune has a single config, so fewer can only mean 0" in goals[3]
    assert "as fast within the timings' spread, not measurably faster" in goals[1]
    bad = subprocess.run([sys.executable, str(script), "--json", str(script)], capture_output=True, text=True)
    assert bad.returncode == 2 and "not vec-report --tune --json's output" in bad.stderr


class TwoGpus:
    """An executor of two GPUs (kinspect.core.executor's interface) whose GPU 1 runs everything 1.5x
    slower than GPU 0; each trial job is answered by `Recorded` (what the H200 measured), scaled by the
    GPU that got it, with the original's time on that GPU as a worker measures it. Items alternate
    between the GPUs, the first batch's first on GPU 1 (the original's own trial is not on GPU 0)."""

    name = "local"
    gpus = [0, 1]
    SLOWER = {0: 1.0, 1: 1.5}

    def __init__(self, recorded):
        self.recorded = recorded
        self.calls = []

    def map(self, fn, items, *, gpu=False, pin=None, progress=None):
        from kinspect.core.executor import Gpu, Result

        assert fn == "kinspect.tune.run:trial_job" and gpu
        self.calls.append((len(items), dict(pin or {})))
        out = []
        def on(g, c):
            w = self.recorded.time(c, ()).wall
            f = self.SLOWER[g]
            return {"n": w.n, "median": w.median * f, "p20": w.p20 * f, "p80": w.p80 * f, "mean": w.median * f,
                    "cv": 0.01}

        for i, (path, cand, grid, original, original_grid) in enumerate(items):
            g = (i + 1) % 2
            c, o = Candidate.from_json(cand), Candidate.from_json(original)
            ok, line = self.recorded.check(c, tuple(grid), o, tuple(original_grid))
            out.append(Result({"ok": ok, "line": line, "error": "", "wall": on(g, c), "baseline": on(g, o)}, None,
                              Gpu(g, "fake H200", f"GPU-{g}")))
        return out


def test_a_tune_on_two_gpus_compares_each_trial_with_the_original_on_its_own_gpu(store):
    """The layer-norm tune again, its trials spread over two GPUs, one 1.5x slower (the original's own trial on
    it): every trial on the other GPU carries the original's time there, and the search tries the same
    configs and picks the same winner at the same speedups as on one GPU."""
    import json

    from kinspect.core.records import problems
    from kinspect.render import json as records
    from kinspect.render.tune import render
    from kinspect.tune import search
    from kinspect.tune.outcome import Tuned, outcome
    from kinspect.tune.run import OnEveryGpu

    h200 = _h200_tunes()[4]
    rec = Recorded(h200)
    v = _variant(store.parent, RED)
    one = search.tune(v, runner=rec, trials=6, compiler=rec.compile)
    ex = TwoGpus(rec)
    two = search.tune(v, runner=OnEveryGpu(v.path, ex), trials=6, compiler=rec.compile)
    assert [t.candidate.label() for t in two.trials] == [t.candidate.label() for t in one.trials]
    assert len(ex.calls) > 1 and all(pin == {} for _, pin in ex.calls)    # nothing pinned: any placement will do
    orig = two.original
    assert orig.gpu.startswith("GPU 1") and orig.baseline is None
    home = [t for t in two.trials if t.gpu.startswith("GPU 1")]
    away = [t for t in two.trials if t.gpu.startswith("GPU 0")]
    assert away and all(t.baseline is None for t in home)
    assert all(t.baseline.median_ms == pytest.approx(orig.median_ms / 1.5) for t in away if t.status == "timed")
    o1, o2 = outcome(one), outcome(two)
    assert o2.winner.candidate.label() == o1.winner.candidate.label() == "R0_BLOCK=32 XBLOCK=32 w4 s1"
    for a, b in zip(one.trials, two.trials):
        if a.status == "timed":
            assert two.vs_original(b) == pytest.approx(one.vs_original(a))
    assert o2.speedup.ratio == pytest.approx(o1.speedup.ratio) and o2.to_match == o1.to_match
    text = render(two, o2)
    assert "GPU" in text.splitlines()[2] and "timed on 2 GPUs, the original config on each" in text
    back = type(two).from_json(json.loads(json.dumps(two.to_json())))     # stored and read back
    assert back.trials == two.trials and outcome(back).winner == o2.winner
    found = problems(json.loads(records.dumps(records.tune_json(Tuned(two.kernel, result=two, outcome=o2)))),
                     json.loads(CliRunner().invoke(main, ["schema", "tune"]).output))
    assert not found, found[:5]


def test_a_tune_through_real_gpu_workers_without_a_gpu_fails_each_trial_with_the_reason(store):
    """The fan-out's plumbing through real worker processes (kinspect.core.executor.LocalExecutor, two workers
    pinned to GPUs 0 and 1 that this machine lacks): each trial job is resolved and run in a worker, whose
    replay cannot be made here; every trial that ran says why, none is timed, nothing is made up."""
    from kinspect.core.executor import LocalExecutor
    from kinspect.tune import search
    from kinspect.tune.outcome import outcome
    from kinspect.tune.run import OnEveryGpu

    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the replay would run")
    rec = Recorded(_h200_tunes()[4])
    v = _variant(store.parent, RED)
    with LocalExecutor(gpus=[0, 1]) as ex:
        r = search.tune(v, runner=OnEveryGpu(v.path, ex), trials=2, compiler=rec.compile)
    ran = [t for t in r.trials if t.ran]
    assert ran and all(t.status == "failed" and t.why.startswith("run: ") for t in ran)
    assert not [t for t in r.trials if t.status == "timed"]
    assert {t.gpu.split(" ")[1] for t in ran} <= {"0", "1"} and all(t.gpu.startswith("GPU ") for t in ran)
    assert outcome(r).winner is None
