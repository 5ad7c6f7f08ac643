"""Load and dot verdicts drawn from the compiler's IR (issue 38), on real compiles of kernels written
in the styles of public projects (tests/ir_cases): one-element loads known by their scalar pointer
type (`p + a + 1`, through a local pointer, inside a row loop), a narrow load's cause from its layout
(the RMSNorm at BLOCK_N=64 and 4 warps: one element per thread), async copies (LDGSTS at sm80), dots
of inlined helpers through their callsite locations, and each load on its own line."""

import dataclasses
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from kinspect.analysis import analyse, stage_metrics
from kinspect.analysis.load_facts import load_lines
from kinspect.cli import main
from kinspect.ir import mlir
from kinspect.ir.records import MemoryOp
from tests.helpers import TESTS

CASES = TESTS / "ir_cases"


def line_of(file: str, text: str) -> int:
    return next(n for n, line in enumerate((CASES / file).read_text().splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """{name: variant}, each compiled once, offline."""
    from kinspect import api

    out = tmp_path_factory.mktemp("ir_verdicts")
    found = {}

    def get(name, spec, target="cuda:90", **kw):
        if name not in found:
            found[name] = api.dump(str(CASES / spec), target=target, out_dir=out, **kw).variant
        return found[name]
    return get


def by_line(report) -> dict[int, list]:
    out = {}
    for v in report.verdicts:
        if v.line is not None:
            out.setdefault(v.line, []).append(v)
    return out


def test_scalar_loads_p_plus_a_plus_1_and_a_local_pointer_are_one_element(compiled):
    v = compiled("gg90", "sglang_style.py:grouped_gemm_kernel")
    lines = by_line(analyse(v))
    for text in ("m_start = tl.load(seg_indptr + expert_id)", "m_end = tl.load(seg_indptr + expert_id + 1)",
                 "weight_id = tl.load(weight_indices + expert_id)"):
        [verdict] = [x for x in lines[line_of("sglang_style.py", text)] if "load" in x.text]
        assert "loads one element (a scalar pointer in the TTGIR)" in verdict.text and verdict.kind is None


def test_a_scalar_load_in_a_row_loop_is_no_narrow_load(compiled):
    v = compiled("bwd90", "attorch_style.py:rms_norm_backward_rows_kernel")
    report = analyse(v)
    line = line_of("attorch_style.py", "rstd = tl.load(rstd_base)")
    [verdict] = by_line(report)[line]
    assert "one element" in verdict.text and verdict.kind is None
    assert not [x for x in report.verdicts if x.kind == "narrow_loads"], [x.text for x in report.verdicts]


def test_loads_in_sglangs_style_with_p_plus_a_minus_b_and_a_spin_load(compiled):
    """`tl.load(p + a - b)`, loads through rebound pointers in a loop, and a volatile spin-load whose
    verdict is on its own (`while`) line, not on the `pass` line after it."""
    v = compiled("post90", "sglang_style.py:post_reorder_kernel")
    report = analyse(v)
    lines = by_line(report)
    spin = line_of("sglang_style.py", "while tl.load(flags_ptr + src_idx, volatile=True)")
    assert "one element" in lines[spin][0].text
    assert spin + 1 not in lines
    for text in ("first = tl.load(reorder_ids_ptr + src_idx - start_expert)",
                 "dst_idx = tl.load(src2dst_ptr + src_idx * topk + idx)"):
        assert "one element" in lines[line_of("sglang_style.py", text)][0].text
    row = lines[line_of("sglang_style.py", "row = tl.load(down_output_ptr")][0]
    assert "512 elements over 128 threads: 4 elements per thread" in row.text
    assert "BLOCK_SIZE >= 1024 at num_warps=4 gives 16-byte loads" in row.text


def test_the_dots_of_an_inlined_helper_are_not_folded_away(compiled):
    v = compiled("gg90", "sglang_style.py:grouped_gemm_kernel")
    report = analyse(v)
    texts = [x.text for x in report.verdicts]
    assert not [t for t in texts if "folded" in t], texts
    call = line_of("sglang_style.py", "acc = _segment_tile(")
    dot = line_of("sglang_style.py", "acc += tl.dot(a, b)")
    [matrix] = [x for x in by_line(report)[call] if "HGMMA" in x.text]
    assert f"(inlined helper, line {dot} acc += tl.dot(a, b))" in matrix.text
    copies = [x for x in by_line(report)[call] if "async copies" in x.text]
    assert copies and "128-bit" in copies[0].text


@pytest.mark.parametrize("stages", [3, 1])
def test_each_load_of_an_inlined_helper_has_its_own_verdict(compiled, stages):
    # one call of the helper loads 128-bit tiles (q, do) and one fp32 per row (m, delta): pipelined
    # (num_stages=3) they are async copies whose widths the TTGIR gives, else plain loads whose widths
    # the LLVM IR places at the helper's own lines through its inlinedAt chain; never one verdict of both
    v = compiled(f"bwd{stages}", "attn_bwd_style.py:attn_bwd_dkdv", num_stages=stages)
    call = line_of("attn_bwd_style.py", "dk, dv = _dkdv_step(")
    loads = [x for x in by_line(analyse(v))[call] if "load" in x.text or "async copies" in x.text]
    helper = {int(re.search(r"inlined helper, line (\d+)", x.text)[1]): x for x in loads}
    wide = [line_of("attn_bwd_style.py", t) for t in ("q = tl.load(", "do = tl.load(")]
    rows = [line_of("attn_bwd_style.py", t) for t in ("m = tl.load(", "delta = tl.load(")]
    assert sorted(helper) == sorted(wide + rows), [x.text for x in loads]
    for n in wide:
        assert helper[n].text.endswith("are 128-bit"), helper[n].text
    # the helper's own line is quoted, as the kernel's is
    assert f"(inlined helper, line {rows[0]} m = tl.load(M + offs_m))" in helper[rows[0]].text
    for n in rows:
        assert "32 elements over 128 threads: one element per thread" in helper[n].text
        assert "128-bit" not in helper[n].text
    if stages == 3:
        assert all("async copies" in helper[n].text and "not vectorized" in helper[n].text for n in rows)


def test_a_helpers_one_element_loads_and_its_row_loads_at_one_call_are_told_apart(compiled):
    # recsys libraries' jagged kernels: the kernel calls its helper once; the helper reads each
    # sequence's bounds (one element each) and then its rows
    v = compiled("jag90", "jagged_style.py:concat_jagged_kernel")
    call = line_of("jagged_style.py", "    _concat_rows(OffsetsA")
    loads = {int(re.search(r"inlined helper, line (\d+)", x.text)[1]): x.text for x in by_line(analyse(v))[call]
             if "load" in x.text}
    for text in ("start_a = tl.load(", "end_a = tl.load(", "start_b = tl.load(", "end_b = tl.load("):
        assert "loads one element (a scalar pointer in the TTGIR)" in loads[line_of("jagged_style.py", text)]
    rows = [n for n in loads if "one element (a scalar" not in loads[n]]
    assert sorted(rows) == sorted(line_of("jagged_style.py", t) for t in ("row = tl.load(ValuesA", "row = tl.load(ValuesB"))
    assert all("256 elements over 128 threads: 2 elements per thread" in loads[n] for n in rows)


def test_the_callsite_frames_are_kept_on_the_ttgir_locations(compiled):
    v = compiled("gg90", "sglang_style.py:grouped_gemm_kernel")
    text = Path(v.path, v.stage("ttgir").file).read_text()
    ops = [r for r in mlir.parse(text) if isinstance(r, MemoryOp)]
    copies = [op for op in ops if op.asynchronous]
    call = line_of("sglang_style.py", "acc = _segment_tile(")
    loads = {line_of("sglang_style.py", "a = tl.load(a_ptrs)"), line_of("sglang_style.py", "b = tl.load(b_ptrs)")}
    assert copies and {op.loc.line for op in copies} == {call}
    assert {ln for op in copies for _, ln in op.loc.inlined} == loads
    assert all(op.contiguity == 8 and op.elem_bits == 16 and not op.scalar for op in copies)
    assert {op.args[0] for op in copies} == {"a", "b"}
    scalars = [op for op in ops if op.scalar]
    assert len(scalars) == 3 and {op.elem_bits for op in scalars} == {64}


def test_the_rmsnorm_at_block_64_says_one_element_per_thread(tmp_path):
    """The issue's case: 64 elements over 128 threads, not "a contiguous 16-byte aligned last dimension"."""
    r = CliRunner().invoke(main, ["vec-report", f"{CASES / 'user_rmsnorm.py'}:rmsnorm_kernel", "-t", "cuda:90",
                                  "-p", "BLOCK_N=64", "--num-warps", "4", "--store", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    [rep] = json.loads(r.stdout)
    narrow = [v["text"] for v in rep["verdicts"] if "not vectorized" in v["text"]]
    assert len(narrow) == 3, rep["verdicts"]
    for text in narrow:
        assert "64 elements over 128 threads: one element per thread" in text
    r = CliRunner().invoke(main, ["vec-report", f"{CASES / 'user_rmsnorm.py'}:rmsnorm_kernel", "-t", "cuda:90",
                                  "-p", "BLOCK_N=64", "--num-warps", "4", "--store", str(tmp_path)])
    assert "BLOCK_N >= 512 at num_warps=4 gives 16-byte loads" in r.output
    assert "a contiguous, 16-byte aligned last dimension" not in r.output


def test_the_rmsnorm_at_its_real_block_loads_128_bits(compiled):
    v = compiled("rms1024", "user_rmsnorm.py:rmsnorm_kernel", constexprs={"BLOCK_N": 1024})
    report = analyse(v)
    loads = [x for x in report.verdicts if "loads" in x.text]
    assert len(loads) == 3 and all(x.text.endswith("loads are 128-bit") for x in loads), [x.text for x in loads]


def test_32_bit_async_copies_at_sm80_get_the_narrow_load_verdict(compiled):
    v = compiled("mm80", "torchao_style.py:scaled_mm_kernel", target="cuda:80")
    assert v.options.get("num_stages", 3) > 1
    sass = Path(v.path, v.stage("sass").file).read_text()
    ldgsts = [m[1].split(".") for m in re.finditer(r"\bLDGSTS((?:\.\w+)*)", sass)]   # LDGSTS.E.LTC128B: 4 bytes
    assert ldgsts and not [mods for mods in ldgsts if "64" in mods or "128" in mods]
    lines = by_line(analyse(v))
    for text, strides in (("a = tl.load(a_ptrs", "stride_am, stride_ak"), ("b = tl.load(b_ptrs", "stride_bk, stride_bn")):
        [verdict] = lines[line_of("torchao_style.py", text)]
        assert verdict.kind == "narrow_loads" and "async copies (cp.async) are 32-bit: not vectorized" in verdict.text
        assert f"runtime values ({strides})" in verdict.text and "unit stride" in verdict.what_to_try
    scale = lines[line_of("torchao_style.py", "a_scale = tl.load(a_scale_ptr")][0]
    assert "64 elements over 128 threads: one element per thread" in scale.text


def test_without_a_ttgir_the_python_reading_is_labelled(compiled):
    v = compiled("bwd90", "attorch_style.py:rms_norm_backward_rows_kernel")
    bare = dataclasses.replace(v, stages=tuple(s for s in v.stages if s.name not in ("ttgir", "ttir", "source")))
    texts = [x.text for x in analyse(bare).verdicts if "load" in x.text]
    assert texts and all("128-bit" in t or "no TTGIR here" in t for t in texts), texts


def test_load_lines_key_each_load_by_its_own_location(compiled):
    v = compiled("post90", "sglang_style.py:post_reorder_kernel")
    m = stage_metrics(v, v.stage("ttgir"))
    lines = {line for _, line, _ in load_lines(m, lambda f: f.endswith("sglang_style.py"))}
    expected = {line_of("sglang_style.py", t) for t in (
        "while tl.load(flags_ptr", "first = tl.load(", "dst_idx = tl.load(src2dst_ptr + src_idx", "weight = tl.load(",
        "row = tl.load(")}
    assert lines == expected


def test_a_gathered_load_knows_the_arguments_its_index_was_loaded_from(compiled):
    v = compiled("post90", "sglang_style.py:post_reorder_kernel")
    text = Path(v.path, v.stage("ttgir").file).read_text()
    row = line_of("sglang_style.py", "row = tl.load(down_output_ptr")
    [op] = [r for r in mlir.parse(text) if isinstance(r, MemoryOp) and r.loc.line == row]
    assert op.args == ("down_output_ptr", "hidden_size") and op.loaded_from == ("src2dst_ptr", "topk")
    assert op.mask_args == ("hidden_size",) and op.shape == (512,) and op.elem_bits == 16


def test_a_kernel_of_scalar_loads_only_is_read_from_its_ttgir(compiled):
    # its TTGIR has no layout at all: its loads were read from the Python source, which took the flag
    # read through a local base pointer for a narrow tensor load
    v = compiled("map90", "fastvideo_style.py:block_map_to_index_kernel")
    [verdict] = [x for x in by_line(analyse(v))[line_of("fastvideo_style.py", "flag = tl.load(")] if "load" in x.text]
    assert "loads one element (a scalar pointer in the TTGIR): nothing to vectorize" in verdict.text
    assert verdict.kind is None
