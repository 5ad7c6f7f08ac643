"""The report's program view draws each timed kernel under the device's measured roofs (issue 43): an SVG
drawn offline with the figures beside it as a table, every kernel of the Kernels table once, at the
GB/s and % of copy the program view computes."""

import json
import re
import shutil
from html import unescape

import pytest

from kinspect.files.ceilings import CEILINGS_VERSION, FILE
from tests.helpers import run

pytest.importorskip("matplotlib")

# The H100's ceilings as measured on the lent H100 (shared/DESIGN.md, 2026-11-27): the store was captured there
H100 = {"version": CEILINGS_VERSION, "device": "NVIDIA H100 80GB HBM3", "copy_gbps": 3003.0,
        "matmul_tflops": {"bfloat16": 702.0}, "measured": "2026-11-27", "method": "shared/DESIGN.md", "launch_floor_us": None}


def _figure(html: str) -> str:
    start = html.index('<figure class="plot" data-plot="program-roofline"')
    return html[start:html.index("</figure>", start)]


def _table(figure: str) -> list[list[str]]:
    rows = re.findall(r"<tr>(.*?)</tr>", figure, re.S)
    return [[unescape(c) for c in re.findall(r"<t[dh]>(.*?)</t[dh]>", r, re.S)] for r in rows]


@pytest.fixture(scope="module")
def pages(transformer, tmp_path_factory):  # noqa: F811
    """The report of the captured program with the device's ceilings in its store, and without."""
    root = tmp_path_factory.mktemp("roofline")
    with_roofs = root / "tf"
    shutil.copytree(transformer, with_roofs)
    (with_roofs / FILE).write_text(json.dumps(H100))
    out = {}
    for name, store in (("roofs", with_roofs), ("bare", transformer)):
        r = run("report", store, "-o", root / f"{name}.html")
        assert r.exit_code == 0, r.output
        assert "program-roofline" in r.output
        out[name] = (root / f"{name}.html").read_text()
    vec = run("vec-report", with_roofs, "--json")
    assert vec.exit_code == 0, vec.output
    return out, json.loads(vec.stdout)


def test_each_timed_kernel_is_a_point_under_the_measured_roofs(pages):
    html, program = pages[0]["roofs"], pages[1]
    figure = _figure(html)
    assert "<svg" in figure and 'role="img"' in figure
    assert 'href="http' not in figure and "src=" not in figure           # offline: nothing fetched to draw it
    assert "copy 3,003 GB/s" in unescape(figure) and "bfloat16 matmul 702 TFLOP/s" in unescape(figure)
    head, *rows = _table(figure)
    assert head == ["#", "kernel", "GB/s", "% of copy", "FLOP/byte", "TFLOP/s", "% of peak", "bound by"]
    kernels = [k["kernel"] for k in program["kernels"]]
    assert [r[1] for r in rows] == [k for k in kernels if k in {r[1] for r in rows}]
    speeds = {k["kernel"]: k for k in program["kernels"]}
    timed = [k for k in kernels if speeds[k]["gb_per_s"] and speeds[k]["bytes_per_call"]]
    assert len(rows) == len(timed) >= 20
    for n, name, gbps, pct, *_ in rows:
        s = speeds[name]      # the JSON rounds to 0.1: the page's whole numbers agree within one
        assert abs(float(gbps.replace(",", "")) - s["gb_per_s"]) <= 1, (name, gbps, s["gb_per_s"])
        if s["pct_of_bandwidth"] is None:
            assert pct == "-", (name, pct)
        else:
            assert abs(float(pct.rstrip("%")) - s["pct_of_bandwidth"]) <= 1, (name, pct, s["pct_of_bandwidth"])
        assert int(n) == kernels.index(name) + 1        # numbered as in the Kernels table
    # a point per kernel in the bandwidth panel (none of these kernels has tl.dot: no FLOP count to place)
    assert "0 with tl.dot" in unescape(figure) and f"{len(rows)} without a FLOP count" in unescape(figure)


def test_without_ceilings_it_says_why_no_roofs_are_drawn(pages):
    figure = unescape(_figure(pages[0]["bare"]))
    assert "no roofs drawn: no device ceilings" in figure
    assert "copy 3,003 GB/s" not in figure
