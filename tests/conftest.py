"""Shared test fixtures: real compiler output, compiled offline on this CPU-only machine."""

import functools
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
CPU_FIXTURES = FIXTURES / "cpu"


# -- real captured programs (tests/fixtures/capture, PROVENANCE.md there), unpacked once a session ----------

def _extract(name: str, out: Path) -> Path:
    import tarfile

    with tarfile.open(FIXTURES / "capture" / name) as tar:
        tar.extractall(out, filter="data")
    return out


@pytest.fixture(scope="session")
def gpt2(tmp_path_factory) -> Path:
    """The GPT-2 training step captured on an H200: gpt2/ (the store), output_code/ (Inductor's wrapper
    modules, at their /tmp/ind paths below it) and ncu.csv.gz (Nsight Compute's counters of its launches)."""
    return _extract("gpt2_h200.tgz", tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="session")
def transformer(tmp_path_factory) -> Path:
    """The TransformerEncoderLayer captured on an H100: the store."""
    return _extract("transformer_h100.tgz", tmp_path_factory.mktemp("transformer")) / "tf"


@pytest.fixture
def private_triton_cache(tmp_path):
    """Triton's cache in the test's own folder for the length of the test (knobs.cache.scope)."""
    from triton import knobs

    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path / "triton-cache")
        yield Path(knobs.cache.dir)


@pytest.fixture
def fresh_triton_cache(tmp_path):
    """A fresh Triton cache, and no kernel of _double in memory: each test's capture sees its compiles
    (a kernel compiled before a capture began is launched with no arguments to read)."""
    from triton import knobs

    from kinspect.compile.driver import fresh_binders
    from tests.jit_kernels import _double

    with knobs.cache.scope(), fresh_binders(_double):
        knobs.cache.dir = str(tmp_path / "triton-cache")
        yield


@functools.lru_cache(maxsize=None)
def _compile(kernel: str, target: str, constexprs: tuple):
    """Compile a shipped kernel offline through kinspect itself; returns the stored Variant."""
    import tempfile

    from kinspect import api

    out = tempfile.mkdtemp(prefix="kinspect-test-")
    return api.dump(kernel, target=target, constexprs=dict(constexprs), out_dir=out).variant


@pytest.fixture(scope="session")
def real_variant():
    """real_variant("fused_mm_softmax", "cuda:90", BLOCK_SIZE=64) -> kinspect.core.model.Variant."""

    def get(kernel: str, target: str, **constexprs):
        return _compile(kernel, target, tuple(sorted(constexprs.items())))

    return get


@pytest.fixture(scope="session")
def real_stage(real_variant):
    """real_stage("fused_mm_softmax", "cuda:90", "sass", BLOCK_SIZE=64) -> the stage's text."""

    def get(kernel: str, target: str, stage: str, **constexprs) -> str:
        v = real_variant(kernel, target, **constexprs)
        s = v.stage(stage)
        assert s is not None, f"{kernel} on {target} has no stage {stage}: {[x.name for x in v.stages]}"
        return Path(v.path, s.file).read_text()

    return get


@pytest.fixture(scope="session")
def nvidia_tool():
    """Path of a tool the triton wheel ships (cuobjdump, nvdisasm, ptxas)."""
    import importlib.util

    spec = importlib.util.find_spec("triton")
    bin_dir = Path(spec.origin).parent / "backends" / "nvidia" / "bin"

    def get(name: str) -> str:
        path = bin_dir / name
        if not path.exists():
            pytest.skip(f"{name} not shipped by this triton wheel")
        return str(path)

    return get


@pytest.fixture(autouse=True, scope="session")
def _kinspect_cache(tmp_path_factory):
    """Keep kinspect's own cache (derived and retargeted stages) out of the home folder."""
    import os

    old = os.environ.get("KINSPECT_CACHE_DIR")
    os.environ["KINSPECT_CACHE_DIR"] = str(tmp_path_factory.mktemp("kinspect-cache"))
    yield
    if old is None:
        os.environ.pop("KINSPECT_CACHE_DIR", None)
    else:
        os.environ["KINSPECT_CACHE_DIR"] = old


# -- one program captured under the interpreter (tests/replay/test_replay.py, tests/files/test_hostile_stores.py) ------

CAPTURED_KERNELS = '''\
"""Kernels as a project keeps them: a module of definitions."""
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def _exp(x):
    return tl.exp2(x * LOG2E)


@triton.jit
def softmax_rows(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    e = _exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=2), triton.Config({"BLOCK": 128}, num_warps=4)],
                 key=["n"])
@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(c_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)
'''

CAPTURED_PROGRAM = '''\
import torch
import triton
import triton.language as tl

from kernels_mod import add_kernel, softmax_rows


@triton.jit
def row_sum(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


x = torch.randn(7, 100)
y = torch.empty_like(x)
softmax_rows[(7,)](x, y, 100, x.stride(0), BLOCK=128)
assert torch.allclose(y, torch.softmax(x, 1), atol=1e-5)

s = torch.empty(7)
for _ in range(2):
    row_sum[(7,)](x, s, 100, x.stride(0), BLOCK=64)
assert torch.allclose(s, x.sum(1), atol=1e-4)
flat = torch.randn(1001)
view = flat[1:].view(4, 250)          # starts 4 bytes past an aligned address
row_sum[(4,)](view, s, 250, 250, BLOCK=64)
assert torch.allclose(s[:4], view.sum(1), atol=1e-4)

a, b = torch.randn(777), torch.randn(777)
c = torch.empty(777)
add_kernel[lambda meta: (triton.cdiv(777, meta["BLOCK"]),)](a, b, c, 777)
assert torch.allclose(c, a + b)
print("program ok")
'''


@pytest.fixture(scope="session")
def interpreted_capture(tmp_path_factory):
    """CAPTURED_PROGRAM (kernels in a module of definitions and in the script itself: a helper and a
    constexpr global, a loop, masks, a misaligned view, an autotuned kernel) captured by `kinspect
    capture --interpret -t cuda:90`: (store, program folder, capture --json). Tests that change the
    store work on a copy, or expect other tests' additions."""
    import json
    import sys

    from click.testing import CliRunner

    from kinspect.cli import main

    root = tmp_path_factory.mktemp("interp")
    (root / "kernels_mod.py").write_text(CAPTURED_KERNELS)
    (root / "prog.py").write_text(CAPTURED_PROGRAM)
    store = root / "store"
    r = CliRunner().invoke(main, ["capture", "--interpret", "-t", "cuda:90", "--store", str(store), "--json", "--",
                                  sys.executable, str(root / "prog.py")])
    assert r.exit_code == 0, r.output
    assert "kinspect: 5 variant(s) compiled for cuda:90" in r.output and "5 interpreted launch(es)" in r.output
    assert "autotuned add_kernel [n=777 (float32)]: took BLOCK=64; num_warps=2" in r.output
    return store, root, json.loads(r.stdout)        # --json: stdout is the JSON alone (the program's went to stderr)


# -- one real compile in every foreign form (tests/files/test_attack_foreign.py, tests/files/test_fuzz_foreign.py) -----

@pytest.fixture(scope="session")
def foreign_seed(tmp_path_factory):
    """benchmarks/attack_foreign.py's seed: a Triton cache entry, TRITON_KERNEL_DUMP folder, tritonparse traces
    (plain, gzip, parsed) and a kinspect store of one real compile of kernels/softmax.py for cuda:90."""
    import importlib.util
    import sys

    name = "attack_foreign"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).parent.parent / "benchmarks" / f"{name}.py")
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name].make_seed(tmp_path_factory.mktemp("foreign-seed") / "seed")
