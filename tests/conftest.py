"""Shared test fixtures: real compiler output, compiled offline on this CPU-only machine."""

import functools
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
CPU_FIXTURES = FIXTURES / "cpu"


@functools.lru_cache(maxsize=None)
def _compile(kernel: str, target: str, constexprs: tuple):
    """Compile a shipped kernel offline through kinspect itself; returns the stored Variant."""
    import tempfile

    from kinspect import api

    out = tempfile.mkdtemp(prefix="kinspect-test-")
    return api.dump(kernel, target=target, constexprs=dict(constexprs), out_dir=out).variant


@pytest.fixture(scope="session")
def real_variant():
    """real_variant("fused_mm_softmax", "cuda:90", BLOCK_SIZE=64) -> kinspect.model.Variant."""

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
