"""GB/s with or without device ceilings (issue 39, item 4), on the GPT-2 capture from an H200 (a store
made before kinspect kept device.json): GB/s need only bytes and GPU time, so the program table shows
them with no ceiling at all; a % of bandwidth only where a ceiling is known: the store's, one measured
on this machine, or the datasheet figure of the GPU the user names, labelled as such."""

import json
import shutil
from pathlib import Path

import pytest

from kinspect.files import ceilings
from tests.helpers import run

CAT = "triton_poi_fused__unsafe_view_add_cat_clone_transpose_view_12"


@pytest.fixture()
def store(gpt2, tmp_path, monkeypatch) -> Path:   # noqa: F811
    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(tmp_path / "cache"))    # nothing measured on this machine
    out = tmp_path / "gpt2"
    shutil.copytree(gpt2 / "gpt2", out)
    assert ceilings.read(out) is None
    return out


def table_head(output: str) -> list[str]:
    lines = output.splitlines()
    return lines[next(i for i, x in enumerate(lines) if x.lstrip().startswith("#  kernel"))].split()


def test_a_store_without_ceilings_shows_bytes_and_gbps_and_no_percentage(store):
    r = run("vec-report", store, "--top", "0", env={"COLUMNS": "220"})
    assert r.exit_code == 0, r.output
    head = table_head(r.output)
    assert "GB/s" in head and "bytes/call" in head and "%bw" not in head and "%spec" not in head
    assert "GB/s without a % of bandwidth" in r.output and "--device NAME" in r.output
    d = json.loads(run("vec-report", store, "--json").output)
    cat = next(k for k in d["kernels"] if k["kernel"] == CAT)
    assert cat["gb_per_s"] > 0 and cat["pct_of_bandwidth"] is None and cat["pct_of_bandwidth_of"] is None
    row = next(x for x in r.output.splitlines() if "add_cat_cl…_12" in x)
    assert f"{cat['gb_per_s']:,.0f}" in row and "50.3 MB" in row


def test_a_named_device_gives_its_datasheet_figure_said_so(store):
    d = json.loads(run("vec-report", store, "--json", "--device", "H200").output)
    cat = next(k for k in d["kernels"] if k["kernel"] == CAT)
    assert cat["pct_of_bandwidth"] == pytest.approx(100 * cat["gb_per_s"] / 4800, abs=0.1)
    assert "datasheet 4,800 GB/s (not measured)" in cat["pct_of_bandwidth_of"]
    assert "datasheet" in d["speed_of_light"]["ceilings_note"]
    r = run("vec-report", store, "--top", "0", "--device", "NVIDIA H200", env={"COLUMNS": "220"})
    assert "%spec" in table_head(r.output) and "H200's datasheet 4,800 GB/s" in r.output
    r = run("vec-report", store, "--device", "Voodoo 5")
    assert r.exit_code == 2 and "no datasheet figure" in r.output and "H100 SXM" in r.output


def test_a_measurement_of_this_machine_is_used_only_for_its_own_device(store, tmp_path):
    device = tmp_path / "cache" / "device"
    device.mkdir(parents=True)
    (device / "copy-h100.json").write_text(json.dumps({"device": "NVIDIA H100 80GB HBM3", "gbps": 3003.0,
                                                       "measured": "2026-11-27", "method": "torch copy_"}))
    d = json.loads(run("vec-report", store, "--json").output)
    assert "NVIDIA H100 80GB HBM3: copy 3,003 GB/s" in d["speed_of_light"]["ceilings_note"]
    d = json.loads(run("vec-report", store, "--json", "--device", "H200").output)      # the capture's GPU
    assert "H200's datasheet" in d["speed_of_light"]["ceilings_note"]
    d = json.loads(run("vec-report", store, "--json", "--device", "H100 SXM").output)
    assert "copy 3,003 GB/s" in d["speed_of_light"]["ceilings_note"]


@pytest.mark.parametrize("name, sheet", [("NVIDIA H100 80GB HBM3", "H100 SXM"), ("NVIDIA H100 PCIe", "H100 PCIe"),
                                         ("NVIDIA H200", "H200"), ("NVIDIA A100-SXM4-80GB", "A100 80GB"),
                                         ("NVIDIA A100-SXM4-40GB", "A100 40GB"), ("NVIDIA GH200 480GB", "GH200 (96 GB HBM3)"),
                                         ("AMD Instinct MI300X", "MI300X"), ("NVIDIA L4", "L4")])
def test_datasheet_names_as_torch_gives_them(name, sheet):
    assert ceilings.datasheet(name).device == sheet


def test_a_name_the_datasheet_table_cannot_tell_apart_gets_none():
    assert ceilings.datasheet("NVIDIA GH200") is None and ceilings.datasheet("Tesla T4") is None
