"""Bytes per call from a kernel's index expressions (kinspect.analysis.traffic), checked against
Nsight Compute's DRAM counters of the same program (the GPT-2 capture on an H200), against Inductor's
own per-kernel byte counts (tiling_scores, in its kernels' metadata), and on kernels written here in
Inductor's style for each thing the evaluator models: slices, broadcasts, scalar loads, gathers,
in-place updates, dynamic shapes, reduction loops, block pointers, data-dependent masks."""

import json

import pytest

from kinspect.analysis.kernel_ast import lone_load_lines, parse
from kinspect.analysis.traffic import INDEX, TENSORS, estimate, traffic
from kinspect.files.counters import Counters, by_kernel, parse_csv
from kinspect.core.model import ArgSpec, Launches, LaunchSignature, SourceRef, Target, Variant
from kinspect.files.store import read_records

pytest.importorskip("numpy")

DECORATOR = """@triton_heuristics.pointwise(
    size_hints={{'x': 8192}},
    filename=__file__,
    triton_meta={{'signature': {signature}, 'device': DeviceProperties(type='cuda', index=0, cc=90, major=9), 'constants': {{}}, 'configs': [{{(0,): [['tt.divisibility', 16]]}}]}},
    inductor_meta={{'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': '{name}', 'mutated_arg_names': {mutated}, 'no_x_dim': False}},
    min_elem_per_thread=0
)
@triton.jit
"""


def kernel(name: str, body: str, args: list[ArgSpec], *, mutated=(), inductor=True, grid=(8, 1, 1)) -> Variant:
    """A captured-looking variant: its source text (in Inductor's style) and one recorded launch."""
    types = {"float32": "*fp32", "int64": "*i64", "bfloat16": "*bf16", "bool": "*i1"}
    signature = {a.name: types[a.dtype] if a.kind == "tensor" else "i32" for a in args}
    signature["XBLOCK"] = "constexpr"
    params = ", ".join([*(a.name for a in args), "XBLOCK : tl.constexpr"])
    head = DECORATOR.format(signature=signature, name=name, mutated=list(mutated)) if inductor else "@triton.jit\n"
    text = f"{head}def {name}({params}):\n{body}"
    launch = LaunchSignature(grid=grid, args=(*args, ArgSpec("XBLOCK", "int", 1024)), calls=3)
    return Variant(kernel=name, hash=f"{abs(hash(text)):064x}"[:64], target=Target("cuda", "90", 32), offline=False,
                   signature=signature, constexprs={"XBLOCK": 1024}, attributes={}, options={"num_warps": 4},
                   stages=(), times=None, cache_hit=False, triton_version="3.6.0",
                   source=SourceRef("/tmp/ind/ab/cabc.py", 10, text), origin="capture",
                   launches=Launches(calls=3, signatures=(launch,)))


def tensor(name, shape, dtype="float32"):
    strides, step = [], 1
    for n in reversed(shape):
        strides.insert(0, step)
        step *= n
    return ArgSpec(name, "tensor", shape=tuple(shape), strides=tuple(strides), dtype=dtype, device="cuda:0")


def estimated(v: Variant):
    return estimate(v, parse(v), v.launches.top().args)


def pointers(t) -> dict:
    return {p.name: (p.read, p.written, p.how) for p in t.pointers}


SLICE_BROADCAST_SCALAR = """    xnumel = 4096
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = (xindex % 64)
    x1 = xindex // 64
    tmp0 = tl.load(in_ptr0 + (128 + x0 + 192*x1), xmask)
    tmp1 = tl.load(in_ptr1 + (x0), xmask, eviction_policy='evict_last')
    tmp2 = tl.load(in_ptr2 + (0))
    tmp3 = tl.broadcast_to(tmp2, [XBLOCK])
    tmp4 = tmp0 + tmp1
    tmp5 = tmp4 * tmp3
    tl.store(out_ptr0 + (x0 + 64*x1), tmp5, xmask)
"""


def test_slice_broadcast_and_scalar_loads_count_what_they_touch():
    v = kernel("triton_poi_fused_add_mul_slice_0", SLICE_BROADCAST_SCALAR,
               [tensor("in_ptr0", (64, 192)), tensor("in_ptr1", (64,)), tensor("in_ptr2", ()),
                tensor("out_ptr0", (64, 64)), ArgSpec("xnumel", "int", 4096)])
    t = estimated(v)
    assert t.method == INDEX and not t.upper_bound and not t.sampled
    assert pointers(t) == {"in_ptr0": (64 * 64 * 4, 0, "exact"),        # the last third of each row
                           "in_ptr1": (64 * 4, 0, "exact"),             # one row, broadcast over the others
                           "in_ptr2": (32, 0, "scalar"),                # one sector
                           "out_ptr0": (0, 64 * 64 * 4, "exact")}
    sizes = estimate(kernel("plain", SLICE_BROADCAST_SCALAR, list(v.launches.top().args)[:-1], inductor=False),
                     None, v.launches.top().args)
    assert sizes.method == TENSORS and sizes.upper_bound
    assert sizes.bytes == 64 * 192 * 4 + 64 * 4 + 4 + 64 * 64 * 4


def test_scalar_and_one_element_loads_are_no_narrow_load_lines():
    v = kernel("triton_poi_fused_add_mul_slice_0", SLICE_BROADCAST_SCALAR,
               [tensor("in_ptr0", (64, 192)), tensor("in_ptr1", (64,)), tensor("in_ptr2", ()),
                tensor("out_ptr0", (64, 64)), ArgSpec("xnumel", "int", 4096)])
    line = next(i for i, s in enumerate(v.source.text.splitlines()) if "in_ptr2 + (0)" in s) + v.source.line
    assert lone_load_lines(v) == {line}


GATHER = """    xnumel = 8192
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x1 = xindex // 64
    x0 = (xindex % 64)
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + (x1), None, eviction_policy='evict_last')
    tmp1 = tl.full([XBLOCK], 1000, tl.int32)
    tmp2 = tmp0 + tmp1
    tmp3 = tmp0 < 0
    tmp4 = tl.where(tmp3, tmp2, tmp0)
    tl.device_assert((0 <= tmp4) & (tmp4 < 1000), "index out of bounds: 0 <= tmp4 < 1000")
    tmp6 = tl.load(in_ptr1 + (x0 + 64*tmp4), None)
    tl.store(out_ptr0 + (x2), tmp6, None)
    tl.atomic_add(out_ptr1 + (x0 + 64*tmp4), tmp6, None, sem='relaxed')
"""


def test_a_gather_by_loaded_indices_is_bounded_by_one_row_per_index():
    v = kernel("triton_poi_fused_embedding_1", GATHER,
               [tensor("in_ptr0", (128,), "int64"), tensor("in_ptr1", (1000, 64)), tensor("out_ptr0", (128, 64)),
                tensor("out_ptr1", (1000, 64)), ArgSpec("xnumel", "int", 8192)])
    t = estimated(v)
    assert t.upper_bound
    assert pointers(t) == {"in_ptr0": (128 * 8, 0, "exact"),
                           "in_ptr1": (128 * 64 * 4, 0, "indirect"),        # 128 tokens, a row each, at most
                           "out_ptr0": (0, 128 * 64 * 4, "exact"),
                           "out_ptr1": (128 * 64 * 4, 128 * 64 * 4, "indirect")}   # an atomic reads and writes
    assert any("upper bound" in n for n in t.notes)


def test_an_in_place_update_reads_and_writes_and_numels_come_from_the_launch():
    body = """    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = (xindex % ks0)
    x1 = xindex // ks0
    tmp0 = tl.load(in_out_ptr0 + (x0 + ks0*x1), xmask)
    tmp1 = tl.load(in_ptr0 + (x0), xmask)
    tmp2 = tmp0 + tmp1
    tl.store(in_out_ptr0 + (x0 + ks0*x1), tmp2, xmask)
"""
    v = kernel("triton_poi_fused_add_2", body, [tensor("in_out_ptr0", (300, 40)), tensor("in_ptr0", (40,)),
                                                ArgSpec("ks0", "int", 40), ArgSpec("xnumel", "int", 12000)],
               mutated=["in_out_ptr0"])
    t = estimated(v)
    assert pointers(t) == {"in_out_ptr0": (48000, 48000, "exact"), "in_ptr0": (160, 0, "exact")}


def test_a_reduction_loop_reads_each_row_once():
    body = """    xnumel = 32
    r0_numel = 1000
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = xindex
    _tmp2 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + 1000*x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp3 = _tmp2 + tmp1
        _tmp2 = tl.where(r0_mask & xmask, tmp3, _tmp2)
    tmp2 = tl.sum(_tmp2, 1)[:, None]
    tl.store(out_ptr0 + (x0), tmp2, xmask)
"""
    v = kernel("triton_red_fused_sum_3", body, [tensor("in_ptr0", (32, 1000)), tensor("out_ptr0", (32,)),
                                                ArgSpec("xnumel", "int", 32), ArgSpec("r0_numel", "int", 1000)])
    assert pointers(estimated(v)) == {"in_ptr0": (128000, 0, "exact"), "out_ptr0": (0, 128, "exact")}


def test_a_mask_read_from_memory_is_taken_as_all_true_and_a_block_pointer_as_its_tensor():
    body = """    xnumel = 4096
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), None)
    tmp1 = tl.load(in_ptr1 + (x0), tmp0)
    block_ptr0 = tl.make_block_ptr(in_ptr2, shape=[4096], strides=[1], block_shape=[XBLOCK], order=[0], offsets=[xoffset])
    tmp2 = tl.load(block_ptr0, boundary_check=[0])
    tl.store(out_ptr0 + (x0), tmp1 + tmp2, None)
"""
    v = kernel("triton_poi_fused_where_4", body, [tensor("in_ptr0", (4096,), "bool"), tensor("in_ptr1", (4096,)),
                                                  tensor("in_ptr2", (8192,)), tensor("out_ptr0", (4096,)),
                                                  ArgSpec("xnumel", "int", 4096)])
    t = estimated(v)
    got = pointers(t)
    assert got["in_ptr1"] == (16384, 0, "masked by data")
    assert got["in_ptr2"] == (32768, 0, "whole tensor")
    assert t.upper_bound and any("in_ptr2: counted as its whole tensor" in n for n in t.notes)


def test_a_domain_too_large_to_count_whole_is_sampled_and_says_so():
    body = """    xnumel = 67108864
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    x0 = (xindex % 8192)
    x1 = xindex // 8192
    tmp0 = x0 + x1
    tmp1 = tl.full([XBLOCK], 8192, tl.int32)
    tmp2 = tmp0 < tmp1
    tmp3 = tl.load(in_ptr0 + (x0 + 8192*x1), tmp2, other=0.0)
    tl.store(out_ptr0 + (x0 + 8192*x1), tmp3, None)
"""
    v = kernel("triton_poi_fused_triangle_5", body, [tensor("in_ptr0", (8192, 8192)), tensor("out_ptr0", (8192, 8192)),
                                                     ArgSpec("xnumel", "int", 67108864)])
    t = estimated(v)
    assert t.sampled and any("sample" in n for n in t.notes)
    triangle = 8192 * 8193 // 2 * 4
    assert abs(pointers(t)["in_ptr0"][0] - triangle) / triangle < 0.05
    assert pointers(t)["out_ptr0"] == (0, 8192 * 8192 * 4, "sampled"), "its rows sampled too, and scaled"


def test_estimates_are_cached_and_combine_launch_signatures(tmp_path, monkeypatch):
    import dataclasses

    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(tmp_path))
    body = SLICE_BROADCAST_SCALAR
    v = kernel("triton_poi_fused_add_mul_slice_0", body,
               [tensor("in_ptr0", (64, 192)), tensor("in_ptr1", (64,)), tensor("in_ptr2", ()),
                tensor("out_ptr0", (64, 64)), ArgSpec("xnumel", "int", 4096)])
    first = traffic(v)
    assert list(tmp_path.glob("traffic/*/*.json")), "written to kinspect's cache"
    assert traffic(v) == first
    other = dataclasses.replace(v.launches.top(), calls=1, pid=7)
    two = dataclasses.replace(v, launches=dataclasses.replace(v.launches, signatures=(v.launches.top(), other)))
    assert traffic(two).bytes == first.bytes, "the same arguments from another process are one signature"


# -- real programs -------------------------------------------------------------------------------------

def test_the_estimate_matches_inductors_own_byte_counts_on_the_transformer_capture(transformer):
    """Inductor's tiling_scores count reads once and writes twice, per buffer, from its own IR."""
    checked = 0
    for v in read_records(transformer):
        k = parse(v)
        scores = k.inductor_meta.get("tiling_scores")
        t = traffic(v)
        assert t.method == INDEX, (v.kernel, t.notes)
        if scores:
            assert abs(sum(scores.values()) - (t.bytes_read + 2 * t.bytes_written)) <= 4096, v.kernel
            checked += 1
    assert checked == 22


def test_the_estimate_is_within_1_5x_of_ncu_for_the_top_10_gpt2_kernels(gpt2):
    """ncu's DRAM bytes, with writes still held in L2 at the kernel's end counted (Counters.dram_bytes)."""
    import gzip

    groups = by_kernel(parse_csv(gzip.open(gpt2 / "ncu.csv.gz", "rt").read()))
    timed = sorted((v for v in read_records(gpt2 / "gpt2") if v.launches and v.launches.gpu),
                   key=lambda v: -v.launches.gpu.total_ms)[:10]
    ratios = {}
    for v in timed:
        c = Counters.from_rows(groups[(v.kernel, tuple(v.launches.top().grid))])
        ratios[v.kernel] = traffic(v).bytes / c.dram_bytes
    assert all(1 / 1.5 <= r <= 1.5 for r in ratios.values()), json.dumps(ratios, indent=1)
    # the slice-reading cat kernel the tensor sizes over-count: 31.5 MB read, as ncu measured
    cat = next(v for v in timed if "cat_clone_transpose_view_12" in v.kernel)
    assert abs(traffic(cat).bytes_read - 31.46e6) < 0.05e6


def test_gpt2_gathers_are_bounded_and_everything_else_exact(gpt2):
    hows = {}
    for v in read_records(gpt2 / "gpt2"):
        t = traffic(v)
        if t is not None:
            hows[v.kernel] = t.describe()
    assert set(hows.values()) == {"index expressions", "index expressions (an upper bound)"}
    bounded = sorted(k for k, h in hows.items() if "upper bound" in h)
    assert all("embedding" in k or "nll_loss" in k for k in bounded), bounded
