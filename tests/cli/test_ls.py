"""`kinspect ls`: stores, Triton caches and dump folders, strictly read-only."""

import shutil

import pytest
from click.testing import CliRunner

from kinspect.cli import main
from tests.helpers import tree_digest


@pytest.fixture(scope="module")
def triton_cache(tmp_path_factory):
    """A real Triton cache with a cuda:90 and a hip:gfx942 kernel, filled by triton.compile."""
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from tests.jit_kernels import _double

    cache = tmp_path_factory.mktemp("triton-cache")
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    with knobs.cache.scope():
        knobs.cache.dir = str(cache)
        for t in (GPUTarget("cuda", 90, 32), GPUTarget("hip", "gfx942", 64)):
            triton.compile(ASTSource(_double, sig, constexprs={"BLOCK": 64}), target=t)
    return cache


def test_ls_triton_cache_is_read_only(triton_cache):
    before = tree_digest(triton_cache)
    r = CliRunner().invoke(main, ["ls", str(triton_cache)])
    assert r.exit_code == 0, r.output
    assert "(Triton cache): 2 variant(s)" in r.output
    assert "cuda:90" in r.output and "hip:gfx942" in r.output
    assert tree_digest(triton_cache) == before


def test_ls_dump_folder_warns_about_mixed_targets(triton_cache, tmp_path):
    """TRITON_KERNEL_DUMP keys folders by source hash only: two targets land in one folder."""
    dump = tmp_path / "dump" / "SRCHASH"
    dump.mkdir(parents=True)
    for folder in triton_cache.iterdir():
        for f in folder.glob("_double.*"):
            if f.suffix != ".json":
                shutil.copy(f, dump / f.name)
    before = tree_digest(tmp_path / "dump")
    r = CliRunner().invoke(main, ["ls", str(tmp_path / "dump")])
    assert r.exit_code == 0, r.output
    assert "(Triton dump): 1 variant(s)" in r.output and "overwrite each other" in r.output
    assert tree_digest(tmp_path / "dump") == before


def test_ls_store(tmp_path):
    runner = CliRunner()
    assert runner.invoke(main, ["dump", "add", "--store", str(tmp_path)]).exit_code == 0
    r = runner.invoke(main, ["ls", str(tmp_path)])
    assert "(kinspect store): 1 variant(s)" in r.output and "BLOCK_SIZE=1024" in r.output


def test_ls_kernels():
    r = CliRunner().invoke(main, ["ls", "--kernels"])
    for name in ("add", "square", "gelu", "softmax", "softmax_one_row", "fused_mm_softmax", "matmul"):
        assert f"  {name} " in r.output


def test_ls_missing_folder(tmp_path):
    r = CliRunner().invoke(main, ["ls", str(tmp_path / "nope")])
    assert r.exit_code == 2 and r.output.startswith("error: no such file or folder")


def test_ls_corrupt_metadata_is_a_warning(triton_cache, tmp_path):
    copy = tmp_path / "cache"
    shutil.copytree(triton_cache, copy)
    next(copy.glob("*/_double.json")).write_text("{ truncated")
    r = CliRunner().invoke(main, ["ls", str(copy)])
    assert r.exit_code == 0 and "1 variant(s)" in r.output and "unreadable metadata" in r.output
