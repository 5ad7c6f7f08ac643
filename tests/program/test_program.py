"""The program view: a captured program's kernels ranked in one table (vec-report and report), on a
real capture of a torch.compile'd TransformerEncoderLayer made on an H100 (tests/fixtures/capture),
and on kernels compiled here without GPU times."""

import json
import re
import shutil
import tarfile
from pathlib import Path

import pytest

from kinspect.analysis import summary as summary_mod
from kinspect.analysis.summary import display_name, kernel_rows, summaries
from kinspect.files.store import read_records
from tests import browser
from tests.conftest import FIXTURES
from tests.helpers import run

CAPTURE = FIXTURES / "capture" / "transformer_h100.tgz"
CHROMIUM = pytest.mark.skipif(browser.find() is None, reason="no chromium on PATH (apt-get install chromium)")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("capture")
    with tarfile.open(CAPTURE) as tar:
        tar.extractall(out, filter="data")
    return out / "tf"


@pytest.fixture(scope="module")
def profile(store) -> dict:
    """Each kernel's GPU time as the capture recorded it, read straight from the records."""
    return {v.kernel: v.launches.gpu.total_ms for v in read_records(store)}


def test_vec_report_opens_with_every_kernel_ranked_by_gpu_time(store, profile):
    r = run("vec-report", store)
    assert r.exit_code == 0, r.output
    first = r.output.splitlines()[:45]
    assert first[0].startswith(f"{store}: 22 kernels, 22 variants, 567 launches")
    rows = [ln for ln in first if re.match(r"^\s+\d+\s+triton_", ln)]
    assert len(rows) == 22, "\n".join(first)
    names = [ln.split()[1] for ln in rows]
    assert sorted(names) == sorted(display_name(k) for k in profile)
    assert not any(".py" in ln for ln in first), "no Inductor file names"
    assert all(len(n) <= 44 for n in names)
    ms = [float(ln.split()[5]) for ln in rows]
    assert ms == sorted(ms, reverse=True) and ms[0] == round(max(profile.values()), 3)
    assert "narrow loads (moderate): 1, 4, 6, 13; try:" in r.output
    assert r.output.count("\n  verdicts:") == 3, "details of the top 3 follow"


def test_json_carries_the_table(store, profile):
    r = run("vec-report", store, "--json")
    d = json.loads(r.stdout)
    assert [k["kernel"] for k in d["kernels"]] == sorted(profile, key=lambda k: -profile[k])
    assert abs(sum(k["gpu_share"] for k in d["kernels"]) - 1) < 1e-9
    top = d["kernels"][0]
    assert top["calls"] == 21 and top["top_finding"]["kind"] == "narrow_loads" and top["top_finding"]["advice"]
    assert len(d["variants"]) == 3 and d["variants"][0]["kernel"] == top["kernel"]


def test_details_of_chosen_kernels(store):
    r = run("vec-report", store, "-k", "sum_8", "-k", "clone_permute")
    assert r.exit_code == 0 and r.output.count("\n  verdicts:") == 2
    assert "triton_red_fused_sum_8  cuda:90" in r.output
    assert run("vec-report", store, "--all").output.count("\n  verdicts:") == 22
    bad = run("vec-report", store, "-k", "no_such_kernel")
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and bad.output.startswith("error: no kernel matches")


def test_summaries_are_cached_until_a_stage_changes(store, tmp_path, monkeypatch):
    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(tmp_path / "cache"))
    copy = tmp_path / "tf"
    shutil.copytree(store, copy)
    variants = list(read_records(copy))
    cold = summaries(variants, jobs=2)          # in worker processes
    serial = summaries(variants, jobs=1)        # from the cache: the same rows
    assert cold == serial

    def fail(v, report=None):
        raise AssertionError(f"{v.kernel} analysed again")

    monkeypatch.setattr(summary_mod, "summarize", fail)
    assert summaries(variants) == cold
    changed = Path(variants[0].path, variants[0].stage("sass").file)
    changed.write_text(changed.read_text() + "\n")
    with pytest.raises(AssertionError, match="analysed again"):
        summaries(variants)


def test_kernels_without_gpu_time_rank_by_their_worst_finding(tmp_path, real_variant):
    """Three kernels compiled here, no launches: the one with a major finding comes first."""
    for name, consts in (("add", {}), ("softmax", {}), ("fused_mm_softmax", {"BLOCK_SIZE": 128})):
        v = real_variant(name, "cuda:90", **consts)
        shutil.copytree(v.path, tmp_path / "s" / name / Path(v.path).name)
    rows = kernel_rows(summaries(list(read_records(tmp_path / "s"))))
    assert rows[0].kernel == "fused_mm_softmax_kernel" and rows[0].top.kind == "low_occupancy"
    assert all(r.gpu_ms is None and r.calls is None for r in rows)
    r = run("vec-report", tmp_path / "s")
    assert "ranked by their worst finding (no GPU time captured: kinspect capture --time)" in r.output
    assert "calls" not in r.output.splitlines()[1], "no launch columns without launches"


def test_display_names():
    long = "triton_per_fused__unsafe_view_add_clone_select_backward_squeeze_sum_transpose_unsqueeze_10"
    assert display_name(long) == "triton_per_fused__unsafe_view_add_clone…_10"
    assert display_name("triton_red_fused_sum_8") == "triton_red_fused_sum_8"
    assert len(display_name("x" * 80)) == 44


@pytest.fixture(scope="module")
def page_file(store, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "program.html"
    r = run("report", store, "-o", out)
    assert r.exit_code == 0, r.output
    assert "plots: time-share, jit" in r.output and "UserWarning" not in r.output
    return out


def test_report_program_page(page_file, profile):
    text = page_file.read_text()
    assert '<section id="program">' in text and 'data-plot="sweep"' not in text
    assert 'data-plot="time-share"' in text and 'data-plot="jit"' in text
    top = max(profile, key=profile.get)
    first_row = re.search(r'<table class="metrics program">.*?<tbody><tr[^>]*>(.*?)</tr>', text, re.S)[1]
    assert f'title="{top}"' in first_row
    assert not re.search(r"Variant \d+: [a-z0-9]{40,}\.py", text), "variant titles name kernels, not files"


@CHROMIUM
def test_program_page_in_a_browser(page_file, profile):
    top = max(profile, key=profile.get)
    with browser.Browser.start(width=1400, height=1800) as b:
        p = b.open(page_file.as_uri())
        p.wait_for("document.body.dataset.ready === '1'")
        assert p.errors == [] and p.requests == [page_file.as_uri()]
        width = p.evaluate("[document.querySelector('#program').scrollWidth, "
                           "document.querySelector('#program').clientWidth, document.documentElement.scrollWidth]")
        assert width[0] <= width[1] and width[2] <= 1400, width
        assert p.evaluate("document.querySelector('table.program tbody tr td.k').title") == top
        shot = p.screenshot(page_file.with_suffix(".png"))
        assert shot.stat().st_size > 20_000
        # sort by calls, then show the row's variant
        p.evaluate("[...document.querySelectorAll('table.program th')].find(h => h.textContent === 'calls').click()")
        assert p.evaluate("document.querySelector('table.program tbody tr td:nth-child(4)').textContent") == "126"
        p.evaluate("document.querySelector('table.program tbody tr').click()")
        p.wait_for("[...document.querySelectorAll('section.variant')].filter(s => !s.hidden).length === 1")
        shown = p.evaluate("[...document.querySelectorAll('section.variant')].find(s => !s.hidden).querySelector('h2')"
                           ".textContent")
        assert "native_layer_norm_backward_2" in shown
