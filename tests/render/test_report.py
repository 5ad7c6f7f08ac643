"""kinspect report: one offline HTML file, on real compiler output, checked as text and in a real
browser (headless Chromium over the DevTools protocol; those tests skip when it is absent)."""

from __future__ import annotations

import hashlib
import html
import re
import struct
from pathlib import Path

import pytest

from tests import browser
from tests.helpers import run

CHROMIUM = pytest.mark.skipif(browser.find() is None, reason="no chromium on PATH (apt-get install chromium)")

EVIL = '''import triton
import triton.language as tl


@triton.jit
def evil_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # </script><script>document.title = "pwned"</script><img src=x onerror="document.title='pwned'">
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x * 2, mask=offs < n)  # <b>&amp;</b>
'''


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """The issue's command: a BLOCK_SIZE sweep of the forum kernel, compiled offline for cuda:90."""
    d = tmp_path_factory.mktemp("report")
    r = run("report", "fused_mm_softmax", "-p", "BLOCK_SIZE=32,64,128", "-t", "cuda:90", "--no-bench",
            "-o", d / "r.html", "--store", d / "store")
    assert r.exit_code == 0, r.output
    return d


@pytest.fixture(scope="module")
def evil(tmp_path_factory):
    d = tmp_path_factory.mktemp("evil")
    (d / "evil.py").write_text(EVIL)
    r = run("report", f"{d}/evil.py:evil_kernel", "--arg", "x_ptr=*fp32", "--arg", "n=i32:100", "-p", "BLOCK=128",
            "-t", "cuda:90", "-o", d / "evil.html", "--store", d / "store")
    assert r.exit_code == 0, r.output
    return d / "evil.html"


def test_the_file_is_whole_small_and_offline(sweep):
    text = (sweep / "r.html").read_text()
    assert (sweep / "r.html").stat().st_size < 5 * 2**20
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    # nothing to fetch: no src/href to anything, no url() in CSS; the CSP forbids fetching at all
    assert not re.search(r"""\b(src|href)\s*=\s*["']?(https?:|//|file:)""", text, re.I)
    assert not re.search(r"url\((?!#)", text)  # only the SVG's own clip paths
    assert "default-src 'none'" in html.unescape(text)
    assert [p.name for p in sweep.iterdir() if p.name.startswith(".")] == []  # no temporary left behind


def test_every_stage_and_the_plot_are_in_it(sweep):
    text = (sweep / "r.html").read_text()
    for i in range(3):
        assert f'id="variant-{i}"' in text
        for stage in ("ttir", "ttgir", "llir", "ptx", "sass"):
            assert re.search(rf'id="variant-{i}".*?data-code="{stage}"', text, re.S)
    assert 'data-plot="sweep"' in text and "<svg" in text
    assert "BLOCK_SIZE=128" in text and "hgmma" in text


def test_the_html_and_the_terminal_show_the_same_registers(sweep):
    """The report's resource cards, diff's table and its JSON read one record per variant
    (kinspect.analysis.summary.VariantMetrics): they cannot disagree on a variant's registers."""
    import json

    r = run("diff", sweep / "store", "--table", "--json", "--no-bench")
    assert r.exit_code == 0, r.output
    table = [v["registers"] for v in json.loads(r.stdout)["variants"]]
    text = (sweep / "r.html").read_text()
    cards = [int(n) for n in re.findall(r"<dt>registers</dt><dd>(\d+) \(", text)]
    assert len(table) == 3 and all(isinstance(n, int) and n > 0 for n in table)
    assert cards == table
    shown = run("diff", sweep / "store", "--table", "--no-bench")
    assert shown.exit_code == 0, shown.output
    for i, n in enumerate(table, 1):       # the terminal's table: row number, label, then regs
        assert re.search(rf"^\s*{i}\s+\S.*?\s{n}\s", shown.output, re.M), shown.output


def test_same_input_same_bytes(sweep, tmp_path):
    """Saved variants give a byte-identical file: no dates, fixed gzip headers, fixed SVG ids."""
    for name in ("a.html", "b.html"):
        assert run("report", sweep / "store", "--no-bench", "-o", tmp_path / name).exit_code == 0
    a, b = (tmp_path / "a.html").read_bytes(), (tmp_path / "b.html").read_bytes()
    assert hashlib.sha256(a).digest() == hashlib.sha256(b).digest()


def test_line_mapping_agrees_with_the_ptx_loc_directives(sweep):
    """Every PTX line the report links to kernel line L sits under a `.loc F L` directive of the
    kernel's file (read here with a regex, not kinspect's parser); most instructions are linked."""
    from kinspect import api
    from kinspect.render.code import stage

    v = [x for x in api.list_variants(sweep / "store").variants if x.constexprs["BLOCK_SIZE"] == 64][0]
    code = stage(v, v.stage("ptx"))
    text = Path(v.path, v.stage("ptx").file).read_text().splitlines()
    files = dict(re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', "\n".join(text), re.M))
    mine = {k for k, f in files.items() if f.endswith("fused_mm_softmax.py")}
    current, checked, outer = None, 0, {}
    for n, line in enumerate(text):
        m = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:.*inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?", line)
        if m:
            here = (m[1], int(m[2]), int(m[3]))
            if m[4]:  # inlined: the call site, itself perhaps inlined where seen before
                site = (m[4], int(m[5]), int(m[6]))
                outer[here] = outer.get(site, site)
            current = outer.get(here, here) if m[4] else here
            continue
        if code.source_lines[n]:
            assert current is not None and current[0] in mine and current[1] == code.source_lines[n], (n, line)
            checked += 1
    assert checked > 500
    assert set(code.source_lines) - {0} == {16, 22, 23, 24, 25, 26, 27, 28, 29}


def test_untrusted_text_is_escaped(evil):
    text = evil.read_text()
    assert 'document.title = "pwned"' not in text and "onerror=\"document.title" not in text
    assert "<img" not in text and "<b>&amp;" not in text
    # our own scripts only: the data, the gzipped stages and the page's script
    assert len(re.findall(r"<script\b", text)) == text.count('type="application/octet-stream"') + 2
    # the source is still there, escaped, inside the gzipped blobs: unpack and look
    import base64
    import gzip
    import json

    blobs = [json.loads(gzip.decompress(base64.b64decode(b)))
             for b in re.findall(r'type="application/octet-stream" id="blob-\w+">([^<]*)<', text)]
    python = [b for b in blobs if any("evil_kernel" in x for x in b["lines"])]
    assert python and any("&lt;/script&gt;&lt;script&gt;" in x for b in python for x in b["lines"])


def test_repr_html_is_a_sandboxed_frame(sweep):
    from kinspect import api

    report = api.report([str(sweep / "store")], bench=False)
    frame = report._repr_html_()
    assert frame.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts"' in frame
    srcdoc = re.match(r'<iframe srcdoc="([^"]*)"', frame)[1]
    assert "<" not in srcdoc and html.unescape(srcdoc) == report.html


def test_one_variant_is_a_report_too(sweep, tmp_path):
    from kinspect import api

    v = api.list_variants(sweep / "store").variants[0]
    r = run("report", v.path, "--no-bench", "-o", tmp_path / "one.html")
    assert r.exit_code == 0, r.output
    text = (tmp_path / "one.html").read_text()
    assert "nothing swept to plot" in text and 'id="variant-0"' in text and 'id="variant-1"' not in text


def test_variant_and_metric_choose_what_is_shown(sweep, tmp_path):
    r = run("report", sweep / "store", "--no-bench", "--variant", "128", "--metric", "registers",
            "--metric", "shared", "-o", tmp_path / "x.html")
    assert r.exit_code == 0, r.output
    text = (tmp_path / "x.html").read_text()
    shown = re.findall(r'<section class="variant" id="variant-(\d)"(?! hidden)', text)
    assert shown == ["2"]
    assert "registers per thread, shared memory (KiB) against BLOCK_SIZE" in text


@pytest.mark.parametrize("args, words", [
    (["--metric", "speed"], "--metric 'speed' is not one kinspect plots"),
    (["--variant", "96"], "--variant: '96' matches no variant"),
    (["-o", "{missing}/r.html"], "does not exist"),
    (["-o", "{tmp}"], "is a folder"),
    (["-o", "{cache}/r.html"], "which kinspect only reads"),
])
def test_bad_input_is_one_line_and_nothing_written(sweep, tmp_path, monkeypatch, args, words):
    cache = tmp_path / "triton-cache"
    cache.mkdir()
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    args = [a.format(missing=tmp_path / "nope", tmp=tmp_path, cache=cache) for a in args]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    out = args if "-o" in args else args + ["-o", str(tmp_path / "r.html")]
    r = run("report", sweep / "store", "--no-bench", *out)
    assert r.exit_code == 2, r.output
    # progress lines come first where the report ran 2 s before the mistake showed (--variant 96)
    lines = [x for x in r.output.strip().splitlines() if not x.startswith("kinspect: ")]
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in r.output
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_unknown_kernel_is_one_line(tmp_path):
    r = run("report", "fused_mm_softmx", "-o", tmp_path / "r.html", "--store", tmp_path / "s")
    assert r.exit_code == 2 and "fused_mm_softmax" in r.output and not (tmp_path / "r.html").exists()


def test_sweep_plot_is_deterministic_svg(sweep):
    from kinspect import api
    from kinspect.diff.compare import compare
    from kinspect.render.plots import sweep as plot

    rows = compare([str(sweep / "store")], text=False).rows
    a, b = plot(rows), plot(rows)
    assert a.svg == b.svg and a.svg.startswith("<svg") and "<?xml" not in a.svg
    assert "BLOCK_SIZE" in a.svg and "registers per thread" in a.svg
    del api


# -- in a real browser ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def page(sweep):
    with browser.Browser.start() as b:
        p = b.open((sweep / "r.html").as_uri())
        p.wait_for("document.body.dataset.ready === '1'")
        yield p


def _lines(page, variant: int, code: str, cls: str = "") -> int:
    return page.evaluate(f"document.querySelectorAll('#variant-{variant} pre[data-code=\"{code}\"] .ln{cls}').length")


@CHROMIUM
def test_browser_loads_it_offline_without_errors(page, sweep):
    assert page.errors == []
    assert page.requests == [(sweep / "r.html").as_uri()]
    assert page.evaluate("document.querySelectorAll('figure[data-plot=sweep] svg').length") == 1
    assert page.evaluate("document.querySelector('figure[data-plot=sweep] svg').getBBox().width") > 100


@CHROMIUM
def test_browser_shows_highlighted_ptx_then_sass(page):
    assert _lines(page, 0, "ptx") > 500
    assert page.evaluate("document.querySelectorAll('#variant-0 pre[data-code=ptx] .tx span').length") > 1000
    page.evaluate("document.querySelector('#variant-0 .tabs button[data-stage=sass]').click()")
    page.wait_for("document.querySelectorAll('#variant-0 pre[data-code=sass] .tx span').length > 500")
    assert page.evaluate("document.querySelector('#variant-0 pre[data-code=ptx]').hidden")


@CHROMIUM
def test_browser_links_source_lines_both_ways(page):
    # the tl.dot line (24) produced the tensor-core instructions
    page.evaluate("document.querySelector('#variant-0 pre[data-code=python] .ln[data-src=\"24\"]').click()")
    page.wait_for("document.querySelectorAll('#variant-0 pre[data-code=sass] .ln.hit').length > 0")
    hits = page.evaluate("[...document.querySelectorAll('#variant-0 pre[data-code=sass] .ln.hit .tx')]"
                         ".map(e => e.textContent).join('\\n')")
    assert "HMMA" in hits
    tab = page.evaluate("document.querySelector('#variant-0 .tabs button[data-stage=ptx] .n').textContent")
    assert int(tab) > 0
    # the reverse: a SASS line picks its source line
    line = page.evaluate("(() => { const l = document.querySelector('#variant-0 pre[data-code=sass] "
                         ".ln.mapped[data-src=\"27\"]'); l.click(); return Number(l.dataset.src); })()")
    page.wait_for(f"document.querySelector('#variant-0 pre[data-code=python] .ln.sel')?.dataset.src === '{line}'")


@CHROMIUM
def test_browser_switches_variant_from_the_table(page, sweep):
    page.evaluate("document.querySelector('table.metrics tbody tr[data-variant=\"2\"]').click()")
    page.wait_for("!document.getElementById('variant-2').hidden && "
                  "document.querySelectorAll('#variant-2 pre[data-code=ptx] .ln').length > 1000")
    assert page.evaluate("document.getElementById('variant-0').hidden")
    shot = page.screenshot(sweep / "report.png")
    width, height = struct.unpack(">II", shot.read_bytes()[16:24])
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and width >= 1000 and height >= 800
    assert page.errors == []


@CHROMIUM
def test_browser_runs_no_injected_script(evil):
    with browser.Browser.start() as b:
        p = b.open(evil.as_uri())
        p.wait_for("document.body.dataset.ready === '1'")
        p.evaluate("document.querySelector('#variant-0 pre[data-code=python] .ln[data-src=\"10\"]').click()")
        assert p.evaluate("document.title") == "kinspect report: evil_kernel"
        assert p.evaluate("document.querySelectorAll('img').length") == 0
        assert "</script><script>" in p.evaluate(
            "document.querySelector('#variant-0 pre[data-code=python]').textContent")
        assert p.errors == []
