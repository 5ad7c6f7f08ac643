"""On a GPU host, Triton's driver initialisation can build cuda_utils into the Triton cache dir when
kinspect resolves the target: the user's cache must stay byte-identical anyway (opt-in, `-m gpu`)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gpu.conftest import beside_first, beside_result, kinspect_side_by_side
from tests.helpers import tree_digest

SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


def users_cache(tmp_path_factory) -> Path:
    """A Triton cache as the user's program left it: one real compile (made once, copied for each test)."""
    cache = tmp_path_factory.mktemp("users") / "triton-cache"
    subprocess.run([sys.executable, "-c",
                    "import triton, triton.language as tl\n"
                    "from triton.backends.compiler import GPUTarget\nfrom triton.compiler import ASTSource\n"
                    "from tests.jit_kernels import _double\n"
                    f"triton.compile(ASTSource(_double, {SIG!r}, constexprs={{'BLOCK': 64}}), "
                    "target=GPUTarget('cuda', 90, 32))\n"],
                   check=True, env={**os.environ, "TRITON_CACHE_DIR": str(cache)}, cwd=Path(__file__).parents[2])
    return cache


COMMANDS = {"dump": ["dump", "softmax"], "vec-report": ["vec-report", "softmax"],
            "bench": ["bench", "softmax", "--no-reference", "--rep", "20"]}


@beside_first
def run_commands(tmp_path_factory) -> dict:
    """{command: (exit code, stderr, the user's cache, its digest before)}: each command in a fresh process
    with a copy of the user's cache and an empty kinspect cache of its own, the three side by side."""
    users = users_cache(tmp_path_factory)
    commands, caches = {}, {}
    for name, argv in COMMANDS.items():
        tmp = tmp_path_factory.mktemp(name)
        cache = tmp / "users-triton-cache"
        shutil.copytree(users, cache)
        caches[name] = (cache, tree_digest(cache))
        commands[name] = ([*argv, "--store", tmp / "out"], {**os.environ, "TRITON_CACHE_DIR": str(cache),
                                                           "KINSPECT_CACHE_DIR": str(tmp / "kinspect-cache")})
    done = kinspect_side_by_side(commands, timeout=600)
    return {name: (r.returncode, r.stderr, *caches[name]) for name, r in done.items()}


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict:
    return beside_result(run_commands, tmp_path_factory)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_fresh_process_leaves_the_users_triton_cache_alone(name, ran):
    code, stderr, cache, before = ran[name]
    assert code == 0, stderr
    assert tree_digest(cache) == before, sorted(p.name for p in cache.rglob("*"))
