"""A sparse-attention index kernel written the way FastVideo writes its block maps' conversion (every
load one element: a loop over a row's blocks reading one int8 flag each through a local base pointer,
a count stored at the end), for benchmarks/verdicts_vs_ir.py. A kernel with no tensor at all: its
TTGIR has no layout. Written here, not copied."""

import triton
import triton.language as tl


@triton.jit
def block_map_to_index_kernel(
    map_ptr, index_ptr, count_ptr,
    map_b_stride, map_h_stride, map_q_stride, map_kv_stride,
    index_b_stride, index_h_stride, index_q_stride, index_kv_stride,
    count_b_stride, count_h_stride, count_q_stride,
    num_kv_blocks,
):
    b, h, q = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    row_map = map_ptr + b * map_b_stride + h * map_h_stride + q * map_q_stride
    row_index = index_ptr + b * index_b_stride + h * index_h_stride + q * index_q_stride
    found = 0
    for kv in tl.range(num_kv_blocks):
        flag = tl.load(row_map + kv * map_kv_stride)
        if flag:
            tl.store(row_index + found * index_kv_stride, kv)
            found += 1
    tl.store(count_ptr + b * count_b_stride + h * count_h_stride + q * count_q_stride, found)


_maps = {"map_ptr": "*i8", "index_ptr": "*i32", "count_ptr": "*i32", "map_b_stride": "i32:8192",
         "map_h_stride": "i32:1024", "map_q_stride": "i32:32", "map_kv_stride": "i32:1",
         "index_b_stride": "i32:8192", "index_h_stride": "i32:1024", "index_q_stride": "i32:32",
         "index_kv_stride": "i32:1", "count_b_stride": "i32:256", "count_h_stride": "i32:32",
         "count_q_stride": "i32:1", "num_kv_blocks": "i32:32"}

kinspect_examples = {
    "block_map_to_index_kernel": {"args": _maps, "grid": (2, 8, 32)},
}
