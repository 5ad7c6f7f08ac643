"""The report's program roofline on a real capture (issue 43): a program with a tiled bf16 matmul (tl.dot)
and an elementwise kernel, captured with --time on the GPU; the matmul is a point on the roofline proper
(FLOP per byte against TFLOP/s, under the ceilings the capture measured), the add one under the copy roof."""

import re
import subprocess
import sys
from html import unescape

import pytest

PROGRAM = '''
import torch
import triton
import triton.language as tl


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16))


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


n = 4096
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
x = torch.randn(1 << 24, device="cuda")
out = torch.empty_like(x)
for _ in range(10):
    matmul[(n // 128, n // 128)](a, b, c, n, n, n, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=3)
    add[(triton.cdiv(x.numel(), 1024),)](x, x, out, x.numel(), BLOCK=1024)
torch.cuda.synchronize()
assert torch.allclose(c[:64, :64].float(), (a[:64].float() @ b[:, :64].float()), atol=1, rtol=0.05)
'''


@pytest.mark.gpu
def test_matmul_is_a_point_on_the_roofline_under_the_measured_peaks(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    store = tmp_path / "s"
    cap = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(store), "--time", "--",
                          sys.executable, str(tmp_path / "prog.py")], capture_output=True, text=True, timeout=600)
    assert cap.returncode == 0, cap.stderr[-3000:]
    page = tmp_path / "r.html"
    rep = subprocess.run([sys.executable, "-m", "kinspect", "report", str(store), "-o", str(page)],
                         capture_output=True, text=True, timeout=600)
    assert rep.returncode == 0 and "program-roofline" in rep.stdout, rep.stdout + rep.stderr[-3000:]
    html = page.read_text()
    start = html.index('<figure class="plot" data-plot="program-roofline"')
    figure = unescape(html[start:html.index("</figure>", start)])
    print(re.sub(r"<svg.*?</svg>", "", figure, flags=re.S)[:4000])
    assert "1 with tl.dot" in figure and "1 without a FLOP count" in figure
    assert "bfloat16 matmul" in figure and "roofs measured on" in figure
    rows = {cells[1]: cells for cells in (re.findall(r"<td>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", figure))
            if cells}
    mm = rows["matmul"]
    intensity, tflops, pct = float(mm[4].replace(",", "")), float(mm[5].replace(",", "")), float(mm[6].rstrip("%"))
    # 2*4096^3 FLOPs over at least the 3 * 32 MiB the operands and result take: at most ~1365 FLOP/byte
    assert 100 < intensity < 1400 and tflops > 50 and 5 < pct < 120, mm
    assert rows["add"][4] == "-" and float(rows["add"][2].replace(",", "")) > 500, rows["add"]
