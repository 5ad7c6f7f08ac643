"""On a GPU host, Triton's driver initialisation can build cuda_utils into the Triton cache dir when
kinspect resolves the target: the user's cache must stay byte-identical anyway (opt-in, `-m gpu`)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_bad_input import tree_digest

SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


@pytest.fixture(scope="module")
def users_cache(tmp_path_factory) -> Path:
    """A Triton cache as the user's program left it: one real compile (made once, copied for each test)."""
    cache = tmp_path_factory.mktemp("users") / "triton-cache"
    subprocess.run([sys.executable, "-c",
                    "import triton, triton.language as tl\n"
                    "from triton.backends.compiler import GPUTarget\nfrom triton.compiler import ASTSource\n"
                    "from tests.test_capture import _double\n"
                    f"triton.compile(ASTSource(_double, {SIG!r}, constexprs={{'BLOCK': 64}}), "
                    "target=GPUTarget('cuda', 90, 32))\n"],
                   check=True, env={**os.environ, "TRITON_CACHE_DIR": str(cache)}, cwd=Path(__file__).parents[2])
    return cache


@pytest.mark.parametrize("argv", [["dump", "softmax"], ["vec-report", "softmax"],
                                  ["bench", "softmax", "--no-reference", "--rep", "20"]],
                         ids=["dump", "vec-report", "bench"])
def test_a_fresh_process_leaves_the_users_triton_cache_alone(argv, tmp_path, users_cache):
    cache = tmp_path / "users-triton-cache"
    shutil.copytree(users_cache, cache)
    before = tree_digest(cache)
    proc = subprocess.run([sys.executable, "-m", "kinspect", *argv, "--store", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TRITON_CACHE_DIR": str(cache),
                               "KINSPECT_CACHE_DIR": str(tmp_path / "kinspect-cache")})
    assert proc.returncode == 0, proc.stderr
    assert tree_digest(cache) == before, sorted(p.name for p in cache.rglob("*"))
