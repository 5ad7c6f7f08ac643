"""Matrix instructions go to the line of the op that made them (kinspect.analysis.matrix_lines), on
real compiler output: a flash-attention loop (two tl.dot with softmax between them) for sm90 (HGMMA),
sm80 (HMMA) and gfx942 (MFMA), the shipped tiled matmul, Triton 3.6's and 3.9's dumps of a tiled
matmul, a dot folded away and a dot on FMA units."""

import json
from collections import Counter

import pytest

from kinspect.analysis import analyse
from kinspect.analysis.matrix_lines import place
from tests.corpus.manifest import HERE as CORPUS
from tests.helpers import ROOT, run_raising as run, TESTS

ATTENTION = f"{CORPUS / 'flash_attention.py'}:attn_fwd"
DOTS = {28: "qk = tl.dot(q, k)", 36: "acc = tl.dot(p.to(tl.float16), v, acc)"}
DATA = TESTS / "data"
VERSIONS = TESTS / "fixtures" / "versions"


@pytest.fixture(scope="module")
def attention(tmp_path_factory):
    """{target: the stored variant} of the flash-attention kernel."""
    from kinspect import api

    out = tmp_path_factory.mktemp("attention")
    return {t: api.dump(ATTENTION, target=t, out_dir=out).variant for t in ("cuda:90", "cuda:80", "hip:gfx942")}


def matrix_verdicts(report) -> dict[int, str]:
    return {v.line: v.text for v in report.verdicts if v.line and ("MMA" in v.text or "mfma" in v.text)}


@pytest.mark.parametrize("target, unit, each", [("cuda:90", "HGMMA", 4), ("cuda:80", "HMMA", 32),
                                                ("hip:gfx942", "v_mfma", None)])
def test_both_dots_of_an_attention_loop_carry_their_matrix_instructions(attention, target, unit, each):
    report = analyse(attention[target])
    found = matrix_verdicts(report)
    assert set(found) == set(DOTS), found             # no exp2, l_i or load line has any
    for line, code in DOTS.items():
        assert f"line {line} {code}" in found[line] and unit in found[line]
    on_lines = {line: sum(ls.matrix.values()) for (_, line), ls in report.isa.lines.items() if ls.matrix}
    assert set(on_lines) == set(DOTS) and sum(on_lines.values()) == report.isa.matrix_total
    if each:
        assert on_lines == {28: each, 36: each}


def test_the_sm90_sass_line_table_alone_would_put_hgmma_elsewhere(attention):
    """What the machine code's own line table says (the last resort): HGMMA on lines with no dot; the
    verdict says the instructions were placed by the PTX instead."""
    from kinspect.analysis import stage_metrics

    v = attention["cuda:90"]
    sass = stage_metrics(v, v.stage("sass"))
    own = place(sass, [], lambda f: True)
    assert "sass line table" in own.how and set(line for _, line in own.lines) - set(DOTS), own.lines
    moved = [x.text for x in analyse(v).verdicts if "placed by the PTX" in x.text]
    assert moved and "the sass line table, after scheduling, credits them to other lines" in moved[0]


@pytest.mark.parametrize("target", ["cuda:90", "cuda:80", "hip:gfx942"])
def test_the_dot_shapes_of_the_ttgir_give_the_same_places(attention, target):
    """Two independent ways agree: the IR's line table (PTX / LLVM IR) and the TTGIR's dot ops,
    each counted from its shape, warps and instruction shape."""
    report = analyse(attention[target])
    ir = list(report.stages.values())
    kernel_file = lambda f: f.endswith("flash_attention.py")   # noqa: E731
    from_ir = place(report.isa, [m for m in ir if m is not report.isa], kernel_file)
    from_dots = place(report.isa, [m for m in ir if m.stage == "ttgir"], kernel_file)
    assert "line table" in from_ir.how and "dot ops of the TTGIR" in from_dots.how
    assert from_ir.lines == from_dots.lines


def test_the_shipped_tiled_matmul_puts_every_hgmma_on_its_dot(tmp_path):
    r = run("vec-report", "fused_mm_softmax_tiled", "-t", "cuda:90", "--store", tmp_path, "--json")
    [rep] = json.loads(r.stdout)
    lines = {row["line"]: row["stages"]["sass"].get("matrix_by_unit") for row in rep["per_line"]
             if row["stages"].get("sass", {}).get("matrix_by_unit")}
    dot = next(n for n, text in enumerate((ROOT / "kernels" /
                                           "fused_mm_softmax_tiled.py").read_text().splitlines(), 1)
               if "acc = tl.dot(a, b, acc" in text)
    assert lines == {dot: {"hgmma": rep["matrix_instructions"]}}


@pytest.mark.parametrize("version", ["triton-3.6", "triton-3.9"])
def test_triton_dumps_of_both_versions_place_hgmma_on_the_dot(version):
    """A dump folder's SASS (Triton's format, no line markers) is placed through its PTX."""
    r = run("vec-report", VERSIONS / version / "cuda-90", "--json")
    assert r.exit_code == 0, r.output
    [rep] = json.loads(r.stdout)
    dot = next(n for n, text in enumerate((VERSIONS / "fixture_kernels.py").read_text().splitlines(), 1)
               if "acc = tl.dot(a, b, acc)" in text)
    hgmma = [v for v in rep["verdicts"] if "HGMMA" in v["text"]]
    assert [v["line"] for v in hgmma] == [dot] and rep["matrix_by_unit"]["hgmma"] > 0
    assert rep["isa_stage"]["name"] == "sass" and rep["instructions"] > 100


def test_a_dot_folded_away_is_said_to_make_nothing(tmp_path):
    r = run("vec-report", f"{DATA / 'dots.py'}:unused_dot_kernel", "-t", "cuda:90", "--store", tmp_path)
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if "unused = tl.dot" in x)
    assert "no instructions: the compiler folded this dot away before the TTGIR" in line
    assert "FMA" not in r.output


def test_a_dot_on_fma_units_is_said_so_from_its_layout(tmp_path):
    r = run("vec-report", f"{DATA / 'dots.py'}:ieee_dot_kernel", "-t", "cuda:90", "--store", tmp_path)
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if "p = tl.dot" in x)
    assert "the TTGIR gives this dot a #blocked layout, so it runs on FMA/vector units" in line


def test_matrix_counts_per_line_add_up(attention):
    for v in attention.values():
        report = analyse(v)
        per_line = Counter()
        for ls in report.isa.lines.values():
            per_line.update(ls.matrix)
        assert per_line == report.isa.matrix
