"""Bytes per call of hand-written Triton kernels from their index expressions (kinspect.analysis.traffic
with kinspect.analysis.launch_domain): each kernel here is compiled offline for real (its stored source
and signature are what a capture stores) and given a launch record; each count is checked against a
count by hand of the elements the launch touches, in 32-byte sectors."""

import dataclasses
import textwrap

import pytest

from kinspect.analysis.traffic import INDEX, TENSORS, traffic
from kinspect.core.model import ArgSpec, Launches, LaunchSignature

pytest.importorskip("numpy")

KERNELS = '''
import triton
import triton.language as tl


@triton.jit
def rms_norm(X, W, Y, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    tl.store(Y + cols, x * rstd * w, mask=mask)


@triton.jit
def vec_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def embedding(ids_ptr, table_ptr, out_ptr, D, BLOCK: tl.constexpr):
    tok = tl.program_id(0)
    row = tl.load(ids_ptr + tok)
    cols = tl.arange(0, BLOCK)
    tl.store(out_ptr + tok * D + cols, tl.load(table_ptr + row * D + cols, mask=cols < D), mask=cols < D)


@triton.jit
def scan_until(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = 0
    total = 0.0
    while i < n:
        total += tl.sum(tl.load(x_ptr + i + tl.arange(0, BLOCK), mask=i + tl.arange(0, BLOCK) < n), axis=0)
        i += BLOCK
    tl.store(out_ptr, total)


@triton.jit
def _copy_rows(src, dst, offs, m):
    tl.store(dst + offs, tl.load(src + offs, mask=m), mask=m)


@triton.jit
def tile_transpose(x_ptr, y_ptr, n, T: tl.constexpr):
    i = tl.arange(0, T)
    tile = tl.load(x_ptr + i[:, None] * n + i[None, :])
    tl.store(y_ptr + i[None, :] * T + i[:, None], tile)


@triton.jit
def via_helper(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    _copy_rows(x_ptr, y_ptr, offs, offs < n)


kinspect_examples = {
    "tile_transpose": {"args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}, "constexprs": {"T": 32}},
    "via_helper": {"args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}, "constexprs": {"BLOCK": 256}},
    "rms_norm": {"args": {"X": "*fp16", "W": "*fp16", "Y": "*fp16", "stride": "i32", "N": "i32", "eps": "fp32"},
                 "constexprs": {"BLOCK": 4096}},
    "vec_add": {"args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                "constexprs": {"BLOCK": 1024}},
    "matmul": {"args": {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                        "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32",
                        "stride_cm": "i32", "stride_cn": "i32"},
               "constexprs": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}},
    "embedding": {"args": {"ids_ptr": "*i64", "table_ptr": "*fp32", "out_ptr": "*fp32", "D": "i32"},
                  "constexprs": {"BLOCK": 128}},
    "scan_until": {"args": {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, "constexprs": {"BLOCK": 256}},
}
'''


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """compiled(name) -> the stored Variant of a kernel above, compiled offline for cuda:90."""
    from kinspect import api

    tmp = tmp_path_factory.mktemp("handwritten")
    (tmp / "hand_kernels.py").write_text(textwrap.dedent(KERNELS))
    done = {}

    def get(name):
        if name not in done:
            done[name] = api.dump(f"{tmp / 'hand_kernels.py'}:{name}", target="cuda:90", out_dir=tmp / name).variant
        return done[name]

    return get


def tensor(name, shape, dtype):
    strides, step = [], 1
    for n in reversed(shape):
        strides.insert(0, step)
        step *= n
    return ArgSpec(name, "tensor", shape=tuple(shape), strides=tuple(strides), dtype=dtype, device="cuda:0")


def launched(v, grid, *args):
    consts = tuple(ArgSpec(n, "int", x) for n, x in v.constexprs.items() if isinstance(x, int))
    sig = LaunchSignature(grid=grid, args=(*args, *consts), calls=5)
    return dataclasses.replace(v, launches=Launches(calls=5, signatures=(sig,)))


def pointers(t) -> dict:
    return {p.name: (p.read, p.written, p.how) for p in t.pointers}


def test_a_row_of_2816_in_a_block_of_4096_reads_2816(compiled):
    rows, n = 64, 2816
    v = launched(compiled("rms_norm"), (rows, 1, 1), tensor("X", (rows, n), "float16"), tensor("W", (n,), "float16"),
                 tensor("Y", (rows, n), "float16"), ArgSpec("stride", "int", n), ArgSpec("N", "int", n),
                 ArgSpec("eps", "float", 1e-6))
    t = traffic(v)
    assert t.method == INDEX and not t.upper_bound and not t.sampled, t
    # rows of 2,816 fp16 are 5,632 bytes, 176 sectors each: the masked tail of the block (1,280 lanes) reads
    # nothing; the weight is one row shared by every program
    assert pointers(t) == {"X": (rows * n * 2, 0, "exact"), "W": (n * 2, 0, "exact"), "Y": (0, rows * n * 2, "exact")}
    assert t.bytes < rows * 4096 * 2 * 2


def test_a_vector_add_with_a_tail_reads_the_tail_once(compiled):
    n = 1000 * 1024 + 40                   # the last program's block has 40 lanes in range
    grid = (-(-n // 1024), 1, 1)
    v = launched(compiled("vec_add"), grid, tensor("x_ptr", (n,), "float32"), tensor("y_ptr", (n,), "float32"),
                 tensor("out_ptr", (n,), "float32"), ArgSpec("n", "int", n))
    t = traffic(v)
    assert t.method == INDEX and not t.upper_bound
    assert pointers(t) == {"x_ptr": (n * 4, 0, "exact"), "y_ptr": (n * 4, 0, "exact"), "out_ptr": (0, n * 4, "exact")}


def test_a_tiled_matmul_with_a_k_loop_touches_each_operand_once(compiled):
    m, n, k = 192, 256, 200               # K is no multiple of BLOCK_K: the last step is masked
    v = launched(compiled("matmul"), ((m // 64) * (n // 64), 1, 1), tensor("a_ptr", (m, k), "float16"),
                 tensor("b_ptr", (k, n), "float16"), tensor("c_ptr", (m, n), "float16"),
                 *(ArgSpec(name, "int", x) for name, x in (("M", m), ("N", n), ("K", k), ("stride_am", k),
                                                           ("stride_ak", 1), ("stride_bk", n), ("stride_bn", 1),
                                                           ("stride_cm", n), ("stride_cn", 1))))
    t = traffic(v)
    assert t.method == INDEX and not t.upper_bound, t
    # every program reads its row block of A and column block of B over the whole of K (the union over the
    # launch is each operand once: what DRAM must move at least; a tile's re-reads hit the L2)
    assert pointers(t) == {"a_ptr": (m * k * 2, 0, "exact"), "b_ptr": (k * n * 2, 0, "exact"),
                           "c_ptr": (0, m * n * 2, "exact")}


def test_a_transposed_operand_is_counted_through_its_strides(compiled):
    m, n, k = 128, 128, 128
    v = launched(compiled("matmul"), (4, 1, 1), tensor("a_ptr", (m, k), "float16"),
                 ArgSpec("b_ptr", "tensor", shape=(k, n), strides=(1, k), dtype="float16", device="cuda:0"),
                 tensor("c_ptr", (m, n), "float16"),
                 *(ArgSpec(name, "int", x) for name, x in (("M", m), ("N", n), ("K", k), ("stride_am", k),
                                                           ("stride_ak", 1), ("stride_bk", 1), ("stride_bn", k),
                                                           ("stride_cm", n), ("stride_cn", 1))))
    t = traffic(v)
    assert pointers(t) == {"a_ptr": (m * k * 2, 0, "exact"), "b_ptr": (k * n * 2, 0, "exact"),
                           "c_ptr": (0, m * n * 2, "exact")}


def test_a_row_read_through_a_loaded_index_counts_its_whole_table_and_says_why(compiled):
    tokens, vocab, d = 32, 5000, 100
    v = launched(compiled("embedding"), (tokens, 1, 1), tensor("ids_ptr", (tokens,), "int64"),
                 tensor("table_ptr", (vocab, d), "float32"), tensor("out_ptr", (tokens, d), "float32"),
                 ArgSpec("D", "int", d))
    t = traffic(v)
    assert t.method == INDEX and t.upper_bound
    assert pointers(t) == {"ids_ptr": (tokens * 8, 0, "exact"), "table_ptr": (vocab * d * 4, 0, "whole tensor"),
                           "out_ptr": (0, tokens * d * 4, "exact")}
    assert "table_ptr: counted as its whole tensor (its index is read from memory (a gather))" in t.notes


def test_a_while_loop_falls_back_to_tensor_sizes_with_the_reason(compiled):
    n = 10_000
    v = launched(compiled("scan_until"), (1, 1, 1), tensor("x_ptr", (n,), "float32"), tensor("out_ptr", (1,), "float32"),
                 ArgSpec("n", "int", n))
    t = traffic(v)
    assert t.method == TENSORS and t.upper_bound and t.bytes == n * 4 + 4
    assert t.notes == ("index expressions not evaluated: a while loop around a load or store",)


def test_a_launch_without_its_grid_falls_back_and_says_so(compiled):
    v = launched(compiled("vec_add"), (), tensor("x_ptr", (64,), "float32"), tensor("y_ptr", (64,), "float32"),
                 tensor("out_ptr", (64,), "float32"), ArgSpec("n", "int", 64))
    t = traffic(v)
    assert t.method == TENSORS and t.notes == ("index expressions not evaluated: the launch's grid was not recorded",)



def test_a_captured_hand_written_kernel_gets_its_index_expression_bytes(interpreted_capture, tmp_path, monkeypatch):
    """The launch records a real `kinspect capture --interpret` kept (grid, scalars, strides), not ones made here;
    the program view's speed rows (kinspect.analysis.sol) read the same traffic() where the capture timed them."""
    from kinspect.files.store import read_records

    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(tmp_path / "cache"))
    store, _, _ = interpreted_capture
    found = {(v.kernel, v.launches.top().grid): v for v in read_records(store) if v.launches is not None}
    # softmax_rows over 7 rows of 100 float32 in a block of 128 (stride 100): 700 contiguous elements read and
    # written, 2,800 bytes each way, 88 sectors; the 28 masked lanes of each block move nothing
    t = traffic(found["softmax_rows", (7, 1, 1)])
    assert t.method == INDEX and not t.upper_bound
    assert pointers(t) == {"x_ptr": (88 * 32, 0, "exact"), "y_ptr": (0, 88 * 32, "exact")}
    # row_sum (BLOCK=64) loops twice over each row of 100 (the second step masked) and writes one float per row;
    # over a view of 4 rows of 250 it reads 1,000 elements, counted from a sector boundary (a record keeps no
    # address): 125 sectors
    assert pointers(traffic(found["row_sum", (7, 1, 1)])) == {"x_ptr": (88 * 32, 0, "exact"),
                                                              "out_ptr": (0, 32, "exact")}
    assert pointers(traffic(found["row_sum", (4, 1, 1)]))["x_ptr"] == (125 * 32, 0, "exact")
    # the autotuned add_kernel (BLOCK=64 over 777: 13 programs, the last with 9 lanes in range)
    assert pointers(traffic(found["add_kernel", (13, 1, 1)]))["a_ptr"] == (-(-777 * 4 // 32) * 32, 0, "exact")


def test_one_arange_broadcast_both_ways_covers_a_square_tile(compiled):
    n = 100                                # a 32x32 tile of a 100-wide matrix: 32 rows of 128 bytes
    v = launched(compiled("tile_transpose"), (1, 1, 1), tensor("x_ptr", (n, n), "float32"),
                 tensor("y_ptr", (32, 32), "float32"), ArgSpec("n", "int", n))
    t = traffic(v)
    # rows start 400 bytes apart (12.5 sectors): each 128-byte row spans 4 or 5 sectors, 5 where it starts mid-sector
    starts = [r * n * 4 for r in range(32)]
    sectors = sum((s + 127) // 32 - s // 32 + 1 for s in starts)
    assert pointers(t) == {"x_ptr": (sectors * 32, 0, "exact"), "y_ptr": (0, 32 * 32 * 4, "exact")}


def test_a_pointer_handed_to_a_helper_is_counted_whole_and_says_why(compiled):
    n = 10_000
    v = launched(compiled("via_helper"), (40, 1, 1), tensor("x_ptr", (n,), "float32"), tensor("y_ptr", (n,), "float32"),
                 ArgSpec("n", "int", n))
    t = traffic(v)
    assert t.method == TENSORS and t.bytes == 2 * n * 4
    assert t.notes == ("index expressions not evaluated: x_ptr: it is handed to the helper _copy_rows(), whose loads "
                       "and stores are not read here; y_ptr: it is handed to the helper _copy_rows(), whose loads and "
                       "stores are not read here",)
