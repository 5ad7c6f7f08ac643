"""`kinspect diff STORE_A STORE_B` on a GPU: one program captured twice with `--time`, one of its kernels
changed in between (made slower: the same loads and stores, with a chain of sin/cos between them); the
diff ranks that kernel first, beyond both runs' spreads, and the unchanged kernel as matched and the same code."""

import json
import subprocess
import sys

KERNELS_A = '''\
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, v * 2.0, mask=mask)


@triton.jit
def add(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
'''

# the changed kernel: 64 transcendental steps per element turn a copy-bound kernel into a compute-bound one
KERNELS_B = KERNELS_A.replace("    tl.store(y_ptr + offs, v * 2.0, mask=mask)",
                              "    for _ in range(64):\n        v = tl.sin(v) + tl.cos(v)\n"
                              "    tl.store(y_ptr + offs, v * 2.0, mask=mask)")

PROGRAM = '''\
import torch
import triton

from kern import add, scale

n = 1 << 24
x = torch.randn(n, device="cuda")
y, z = torch.empty_like(x), torch.empty_like(x)
grid = (triton.cdiv(n, 1024),)
for _ in range(20):
    scale[grid](x, y, n, BLOCK=1024)
    add[grid](x, y, z, n, BLOCK=1024)
torch.cuda.synchronize()
print("program ok")
'''


def _capture(root, kernels: str):
    root.mkdir()
    (root / "kern.py").write_text(kernels)
    (root / "prog.py").write_text(PROGRAM)
    store = root / "store"
    proc = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(store), "--time", "--",
                           sys.executable, str(root / "prog.py")], cwd=root, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0 and "program ok" in proc.stdout, proc.stderr[-3000:]
    return store


def test_the_changed_kernel_is_found_first(tmp_path):
    a, b = _capture(tmp_path / "a", KERNELS_A), _capture(tmp_path / "b", KERNELS_B)
    r = subprocess.run([sys.executable, "-m", "kinspect", "diff", str(a), str(b), "--json"], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    d = json.loads(r.stdout)
    assert d["a"]["device"] and "not recorded" not in d["a"]["device"], d["a"]       # run.json names the GPU
    assert d["a"]["steps"] == 20 and d["a"]["steps_from"].startswith("guessed")
    first, second = d["kernels"][0], d["kernels"][1]
    assert first["kernel"].startswith("scale") and first["match"] == "function and specialization (source changed)"
    assert first["lost_ms_per_step"] > 0 and first["per_call_change"] > 0.5 and first["beyond_spread"] is True
    assert first["a"]["calls"] == first["b"]["calls"] == 20
    assert second["kernel"].startswith("add") and second["match"] == "function, specialization and source"
    assert d["pair"]["kernel"] == first["kernel"] and d["pair"]["first_differing_stage"] == "ttir"
    assert "beyond both runs' spreads" in d["story"]
    text = subprocess.run([sys.executable, "-m", "kinspect", "diff", str(a), str(b), "--table"], capture_output=True,
                          text=True, timeout=600)
    print(text.stdout)
    print(d["story"])
