"""The program view's speed of light, provenance and counters as `vec-report` gives them, on the GPT-2
capture from an H200: JSON rows with bytes per call, GB/s, % of bandwidth, ideal and headroom time; the
ceilings the store keeps (or the fallback, said); `--counters` end to end with a stand-in `ncu` that
plays back the real counters ncu measured for that program (the replay itself runs on the GPU:
tests/gpu/test_counters_live.py); findings that speak to Inductor's users; the counters beside them."""

import gzip
import json
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from kinspect.files import ceilings, provenance
from kinspect.analysis.pairing import pair
from kinspect.core.errors import KinspectError, KinspectWarning
from kinspect.files.counters import Counters, by_kernel, parse_csv
from kinspect.files.provenance import Origin, parse_output_code
from kinspect.files.store import read_records
from tests.helpers import H200, TESTS
from tests.helpers import run

CAT = "triton_poi_fused__unsafe_view_add_cat_clone_transpose_view_12"


@pytest.fixture()
def store(gpt2, tmp_path, monkeypatch) -> Path:
    """A fresh copy of the GPT-2 store (tests write into it), with an empty kinspect cache."""
    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "gpt2"
    shutil.copytree(gpt2 / "gpt2", out)
    return out


def kernels(output: str) -> dict:
    return {k["kernel"]: k for k in json.loads(output)["kernels"]}


def test_json_rows_carry_the_speed_of_light_against_the_stores_ceilings(store):
    r = run("vec-report", store, "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert "no device ceilings" in d["speed_of_light"]["ceilings_note"]
    cat = kernels(r.stdout)[CAT]
    assert cat["bytes_per_call"] == 50_331_648 and cat["bytes_method"] == "index expressions"
    assert cat["gb_per_s"] > 0 and cat["pct_of_bandwidth"] is None and cat["headroom_ms"] is None

    ceilings.write(store, H200)
    r = run("vec-report", store, "--json")
    d = json.loads(r.stdout)
    rows = kernels(r.stdout)
    cat = rows[CAT]
    assert cat["pct_of_bandwidth"] == pytest.approx(100 * cat["gb_per_s"] / 4249.0, abs=0.1)
    timed = next(v for v in read_records(store) if v.kernel == CAT).launches.gpu.calls    # 23 of its 24 calls
    assert cat["ideal_ms"] == pytest.approx(timed * 50_331_648 / 4249e9 * 1e3, rel=1e-3)
    assert cat["headroom_ms"] == pytest.approx(cat["gpu_ms"] - cat["ideal_ms"], abs=1e-3)
    sol = d["speed_of_light"]
    assert sol["ceilings"]["copy_gbps"] == 4249.0 and "measured by the capture" in sol["ceilings_note"]
    head = [rows[k]["headroom_ms"] for k in sol["ranked_by_headroom"]]
    known = [h for h in head if h is not None]
    assert head[:len(known)] == known == sorted(known, reverse=True), "kernels with no ideal time come last"
    assert sol["headroom_ms"] == pytest.approx(sum(known), abs=1e-3)
    assert all(r["pct_of_bandwidth"] is None or r["pct_of_bandwidth"] <= 100 for r in rows.values())


def test_json_rows_carry_provenance_where_the_capture_kept_it(store, gpt2):
    v = next(v for v in read_records(store) if v.kernel == CAT)
    origin = next(o for p in (gpt2 / "output_code").rglob("*.py") for o in parse_output_code(p.read_text())
                  if o.kernel_path == v.source.file)
    provenance.write(v.path, origin)
    rows = kernels(run("vec-report", store, "--json").stdout)
    assert rows[CAT]["provenance"]["status"] == "recorded"
    assert "aten.cat" in rows[CAT]["provenance"]["origin"]["aten"]
    other = next(k for k in rows if k != CAT)
    assert rows[other]["provenance"]["status"] == "not recorded"


def test_findings_leave_out_one_element_loads_and_speak_to_inductors_users(store):
    rows = kernels(run("vec-report", store, "--json").stdout)
    per_row = rows["triton_per_fused_add_native_dropout_backward_native_layer_norm_native_layer_norm_backward_view_10"]
    assert "narrow_loads" not in per_row["finding_kinds"], "its 32-bit loads read one value per row, XBLOCK=1"
    top = rows[CAT]["top_finding"]
    assert top["kind"] == "narrow_loads" and "16-bit" in top["text"]
    assert ".contiguous()" in top["advice"] and "tl.multiple_of" not in top["advice"]
    flagged = sum("narrow_loads" in r["finding_kinds"] for r in rows.values())
    assert flagged == 7, "10 of the 37 carried it before: 3 for loads of one value per row (XBLOCK=1)"


def test_hand_written_kernels_keep_the_kernel_authors_advice(real_variant):
    from kinspect.analysis import analyse

    v = real_variant("fused_mm_softmax", "cuda:90", BLOCK_SIZE=128)
    found = [x for x in analyse(v).verdicts if x.kind]
    assert any(x.kind == "low_occupancy" for x in found)
    assert all("Inductor" not in x.what_to_try and "torch._inductor" not in x.what_to_try for x in found)


# -- counters -------------------------------------------------------------------------------------------

FAKE_NCU = r'''#!{python}
"""Stands in for Nsight Compute: plays back the counters the real ncu measured for the GPT-2 program."""
import gzip, json, os, sys
from pathlib import Path
args = sys.argv[1:]
if "--version" in args:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2025.3.1.0 (build 36398880)")
elif "--import" in args:
    sys.stdout.write(gzip.open(os.environ["FAKE_NCU_CSV"], "rt").read())
elif os.environ.get("FAKE_NCU_PERM"):
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters")
    sys.exit(1)
else:
    Path(args[args.index("--export") + 1] + ".ncu-rep").write_text("report")
    folders = args[args.index("kinspect.bench.ncu") + 1:]
    if os.environ.get("FAKE_NCU_LOG"):
        with open(os.environ["FAKE_NCU_LOG"], "a") as log:
            log.write(os.environ.get("CUDA_VISIBLE_DEVICES", "-") + " " + str(len(folders)) + "\n")
    for i, folder in enumerate(folders):
        d = json.loads(Path(folder, "record.json").read_text())
        top = max(d["launches"]["signatures"], key=lambda s: s["calls"])
        print(f"kinspect-ncu {{i}} ok {{','.join(map(str, top['grid']))}} - {{d['kernel']}}")
'''


@pytest.fixture()
def fake_ncu(tmp_path, gpt2) -> dict:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ncu = bin_dir / "ncu"
    ncu.write_text(FAKE_NCU.format(python=sys.executable))
    ncu.chmod(ncu.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "FAKE_NCU_CSV": str(gpt2 / "ncu.csv.gz")}


def test_counters_measure_the_top_kernels_by_headroom_and_sit_beside_the_findings(store, fake_ncu, monkeypatch):
    for k, v in fake_ncu.items():
        monkeypatch.setenv(k, v)
    ceilings.write(store, H200)
    r = run("vec-report", store, "--counters", "4", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    rows = kernels(r.stdout)
    measured = [k for k in d["speed_of_light"]["ranked_by_headroom"] if rows[k]["counters"]]
    assert len(measured) == 4 and all(rows[k]["bytes_method"].startswith("measured") for k in measured)
    cat = rows[CAT]["counters"]
    assert cat["ncu_version"] == "2025.3.1.0" and cat["l1_over_dram"] == pytest.approx(6.6, abs=0.05)
    narrow = [p for p in cat["findings"] if p["kind"] == "narrow_loads"]
    assert narrow and all(p["verdict"] == "confirms" for p in narrow)
    assert narrow[0]["measured"].startswith("16-bit loads → 6.6x the bytes requested that DRAM moved")
    assert cat["estimate"]["bytes"] == 50_331_648
    assert rows[CAT]["bytes_per_call"] == pytest.approx(cat["dram_bytes"])
    folder = Path(next(v.path for v in read_records(store) if v.kernel == CAT))
    assert (folder / "counters.json").is_file(), "the measurement is kept with the variant"

    text = run("vec-report", store, "--counters", "4", "--top", "0")
    assert text.exit_code == 0, text.output
    assert "counters (Nsight Compute 2025.3.1.0" in text.output
    assert "✓ line 38" in text.output and "16-bit loads → 6.6x" in text.output
    assert "measured 50.4 MB (used from now on), estimated 50.3 MB (index expressions): 1.00x" in text.output


def test_without_ncu_or_its_permission_counters_say_so_in_one_line(store, fake_ncu, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    r = run("vec-report", store, "--counters")
    assert r.exit_code == 2 and "`ncu` is not on PATH" in r.output and len(r.output.strip().splitlines()) == 1
    for k, v in fake_ncu.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("FAKE_NCU_PERM", "1")
    r = run("vec-report", store, "--counters")
    assert r.exit_code == 2 and "ERR_NVGPUCTRPERM" in r.output and "NVreg_RestrictProfilingToAdminUsers=0" in r.output


def test_counters_split_over_the_gpus_of_an_executor_are_those_of_one_run(store, fake_ncu, monkeypatch, tmp_path):
    """--counters on several GPUs: the folders split over a local executor's GPU workers, each running ncu pinned
    to its GPU (CUDA_VISIBLE_DEVICES, as the fake ncu logs it), give the counters one ncu run gives."""
    from kinspect.bench.ncu import measure, measure_on
    from kinspect.core.executor import LocalExecutor

    for k, v in fake_ncu.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("FAKE_NCU_LOG", str(tmp_path / "ncu.log"))
    folders = sorted({v.path for v in read_records(store)})[:5]
    one = measure(folders)
    (tmp_path / "ncu.log").unlink()
    with LocalExecutor(gpus=[0, 1]) as ex:
        two = measure_on(folders, ex)
    assert sorted((tmp_path / "ncu.log").read_text().split("\n")) == ["", "0 3", "1 2"]
    assert set(two) == set(folders) and all(isinstance(c, Counters) for c in two.values())
    for f in folders:
        a, b = two[f].to_json(), one[f].to_json()
        assert {k: (a[k], b[k]) for k in a if a[k] != b[k] and k != "how"} == {}   # how: that run's kernel names
        assert a["how"].endswith("python -m kinspect.bench.ncu FOLDER...") and two[f].kernel in a["how"]
    monkeypatch.setenv("FAKE_NCU_PERM", "1")            # what every GPU meets is the one line measure() gives
    with LocalExecutor(gpus=[0, 1]) as ex, pytest.raises(KinspectError, match="ERR_NVGPUCTRPERM"):
        measure_on(folders, ex)


def test_a_kernel_at_the_copy_bandwidth_has_its_findings_demoted(gpt2):
    rows = by_kernel(parse_csv(gzip.open(gpt2 / "ncu.csv.gz", "rt").read()))
    c = Counters.from_rows(rows[("triton_poi_fused_mm_t_view_0", (201056, 1, 1))])
    finding = type("F", (), {"kind": "narrow_loads", "text": "line 28 loads are 16-bit: not vectorized"})
    [p] = pair([finding], c, 4249.0)
    assert p.demoted and "94% of the copy bandwidth: nothing to gain inside it" in p.text
    [p] = pair([finding], c, 10_000.0)
    assert p.verdict == "confirms" and "8.2x" in p.text


def test_record_ceilings_without_a_gpu_says_why(tmp_path):
    from kinspect import api

    line = api.record_ceilings(tmp_path)
    assert line.startswith("device ceilings not measured") and not (tmp_path / ceilings.FILE).exists()


def test_origin_files_that_are_not_sound_are_not_read(tmp_path):
    provenance.write(tmp_path, Origin("k", "/x.py"))
    data = json.loads((tmp_path / provenance.FILE).read_text())
    data["call_sites"] = "not a list"
    (tmp_path / provenance.FILE).write_text(json.dumps(data))
    with pytest.warns(KinspectWarning, match="not of the shape kinspect writes"):
        assert provenance.read(tmp_path) is None


OTHERS = TESTS / "fixtures" / "capture" / "gpt2_h200_other_kernels.json"


def test_the_terminal_table_ranks_by_headroom_and_says_what_it_used(store, gpt2):
    """What to fix first: kernels by headroom with GB/s, % of bandwidth, ideal and where they came from; the
    header gives the Triton kernels' share of all the GPU time, the largest others, the ceilings and floor."""
    from kinspect.files import gpu_time

    r = run("vec-report", store, "--top", "0")
    assert r.exit_code == 0, r.output
    assert "ranked by GPU time" in r.output and "no device ceilings" in r.output
    assert "share of Triton kernels in all GPU time is unknown" in r.output

    ceilings.write(store, H200)
    others = json.loads(OTHERS.read_text())
    gpu_time.write_others(store, others["kernels"], others["method"])
    origins = {o.kernel_path: o for p in (gpt2 / "output_code").rglob("*.py") for o in parse_output_code(p.read_text())}
    for v in read_records(store):
        if v.source.file in origins:
            provenance.write(v.path, origins[v.source.file])
    r = run("vec-report", store, "--top", "0", env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert "ranked by headroom" in lines[0]
    assert lines[1].startswith("  program: GPU 12.184 ms")
    assert "Triton kernels: 14.9% of the GPU time" in lines[2] and "cutlass::Kernel2<" in lines[2]
    assert "before kinspect recorded the window" in lines[2], "an older store: the window is not known"
    assert "ceilings of NVIDIA H200: copy 4,249 GB/s" in lines[3]
    assert "shortest launch this capture timed" in lines[4]
    head = next(i for i, x in enumerate(lines) if x.lstrip().startswith("#  kernel"))
    for column in ("GPU ms", "GB/s", "%bw", "ideal", "headroom", "where"):
        assert column in lines[head]
    gpu_time.write_others(store, others["kernels"], others["method"], "from the first observed Triton launch to the end")
    lines = run("vec-report", store, "--top", "0", env={"COLUMNS": "200"}).output.splitlines()
    assert "of the GPU time the profiler saw from the first observed Triton launch to the end, their autotuning " \
           "included; the largest others: " in lines[2]
    d = json.loads(run("vec-report", store, "--json").output)
    assert d["speed_of_light"]["share_window"] == "from the first observed Triton launch to the end"
    rows = kernels(run("vec-report", store, "--json").output)
    order = d["speed_of_light"]["ranked_by_headroom"]
    assert [k["kernel"] for k in d["kernels"]][:len(order)] == order, "JSON rows in the table's order"
    first = lines[head + 1]
    top = rows[order[0]]
    assert f"{top['headroom_ms']:.3f}" in first and f"{top['gb_per_s']:,.0f}" in first
    assert "nll_loss_backward" in first and "narrow loads (line 72)" in first
    norm = next(x for x in lines if "triton_per_fused_add_native_layer_norm_na…_4" in x)
    assert "0.069ᴸ" in norm, "108 launches at the 0.64 µs floor, not 3 µs of bytes"


def test_headroom_is_never_negative_and_an_upper_bound_the_kernel_beat_gives_no_ideal():
    """An embedding backward's bytes are its tensors' sizes (indices are indirect): a kernel that runs in
    less time than those bytes take at copy bandwidth gives no ideal time from them, nor does an exact
    estimate faster than DRAM allows when no L2 ceiling is known; with one, a kernel whose bytes fit in the
    L2 is held to the L2's bandwidth (its inputs were just written), never shown above 100%."""
    from kinspect.analysis.sol import _figures, program_speed

    h200 = ceilings.Ceilings(device="NVIDIA H200", copy_gbps=4000.0)
    # 1 GB per call, 1 call, in 0.1 ms: 10,000 GB/s, more than the device moves
    bound = _figures("emb_bwd", 0.1, 1, 1e9, "tensor sizes", True, None, "", h200, ())
    assert bound.ideal_ms is None and bound.headroom_ms is None and bound.pct_of_bandwidth is None
    assert any("upper bound" in n and "above the DRAM copy bandwidth" in n for n in bound.notes)
    exact = _figures("reuse", 0.1, 1, 1e9, "index expressions", False, None, "", h200, ())
    assert exact.ideal_ms is None and exact.pct_of_bandwidth is None
    assert any("no L2 ceiling" in n for n in exact.notes)
    with_l2 = ceilings.Ceilings(device="NVIDIA H200", copy_gbps=4000.0, l2_gbps=10_000.0, l2_bytes=50 << 20)
    # 40 MB in 8 µs: 5,000 GB/s, above DRAM, within the L2's 10,000
    fed = _figures("fed", 0.008, 1, 40e6, "index expressions", False, None, "", with_l2, ())
    assert fed.bandwidth_ceiling == "L2" and fed.pct_of_bandwidth == pytest.approx(50.0)
    assert fed.ideal_ms == pytest.approx(0.004) and fed.headroom_ms == pytest.approx(0.004)
    assert any("came from the L2" in n for n in fed.notes)
    # 1 GB does not fit in 50 MB of L2: the ceiling mixes both, and 10,000 GB/s is above it
    big = _figures("big", 0.1, 1, 1e9, "index expressions", False, None, "", with_l2, ())
    assert big.ideal_ms is None and big.pct_of_bandwidth is None
    assert any("byte estimate is too high" in n for n in big.notes)
    slow = _figures("slow", 1.0, 1, 1e9, "index expressions", False, None, "", h200, ())
    assert slow.headroom_ms == pytest.approx(0.75) and slow.bandwidth_ceiling == "DRAM"
    assert program_speed([bound, exact, slow]).headroom_ms == pytest.approx(0.75)
