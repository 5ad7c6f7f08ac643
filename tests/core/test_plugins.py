"""Backends and ISAs from other distributions: each is one module (tests/toy_backend.py, tests/toy_isa.py)
and one registration, an entry point in an installed distribution's metadata, found as Triton finds its
backends. Nothing in kinspect names them, and the commands use them end to end."""

import json

import pytest

from kinspect import backends, isa
from kinspect.core.errors import KinspectError, NotFound
from kinspect.files.store import read_records
from tests.helpers import run_ok


@pytest.fixture
def install(tmp_path, monkeypatch):
    """install(group, "name = module:attr"): a distribution on sys.path whose metadata names the entry
    point (its .dist-info, as pip leaves it); the registries look again, and again after the test."""
    site = tmp_path / "site"

    def put(group: str, line: str, dist: str = "kinspect_toy") -> None:
        info = site / f"{dist}-0.1.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
        with open(info / "entry_points.txt", "a") as f:
            f.write(f"[{group}]\n{line}\n")
        monkeypatch.syspath_prepend(str(site))
        backends.reload()
        isa.REGISTRY.reload()

    yield put
    monkeypatch.undo()
    backends.reload()
    isa.REGISTRY.reload()


def test_a_gpu_backend_from_an_entry_point_dumps_and_reports(install, tmp_path, nvidia_tool):
    nvidia_tool("nvdisasm")
    from tests import toy_backend

    install("kinspect.backends", "toy = tests.toy_backend:BACKEND")
    assert "toy:90" in run_ok("targets").output
    store = tmp_path / "store"
    out = run_ok("dump", "fused_mm_softmax", "-t", "toy:90", "-p", "BLOCK_SIZE=64", "--store", store).output
    assert "backend toy" in out and "(nvdisasm for the toy backend)" in out, out   # its own deriver made the SASS
    [v] = read_records(store)
    assert backends.of(v) is toy_backend.BACKEND and v.backend == "toy"
    assert [s.name for s in v.stages if s.derived_by] == ["sass"]

    [rep] = json.loads(run_ok("vec-report", store, "--json").output)
    assert rep["backend"] == "toy" and rep["isa"] == "sass" and rep["matrix_instructions"] > 0
    assert any(x["text"].endswith("toy matrix units used") for x in rep["verdicts"]), rep["verdicts"]
    # occupancy under the toy SM's limits, not an H100's
    registers, warps = rep["registers"], v.options["num_warps"]
    shared = v.options["shared"]
    toy = toy_backend.TOY_SM.occupancy(warps, registers=registers, shared=shared)
    cuda = backends.get("cuda").limits["90"].occupancy(warps, registers=registers, shared=shared)
    assert (rep["occupancy_active_warps"], rep["occupancy_max_warps"], rep["occupancy_limiter"]) == \
        (toy.active_warps, 16, toy.limiter)
    assert (toy.active_warps, toy.max_warps) != (cuda.active_warps, cuda.max_warps)
    assert "toy SASS" in {s.title for s in toy_backend.BACKEND.stages + (toy_backend.BACKEND.derivers[0].stage,)}


def test_backend_registry_fails_loudly(install):
    with pytest.raises(RuntimeError, match="backend 'cuda' registered twice"):
        install("kinspect.backends", "again = tests.toy_backend:CUDA_AGAIN")


def test_backend_registry_names_what_it_knows():
    with pytest.raises(NotFound, match=r"unknown backend 'cudaa'; did you mean 'cuda'\?.*known: cuda, hip"):
        backends.get("cudaa")


def test_an_entry_point_that_does_not_load_is_an_error(install):
    with pytest.raises(KinspectError, match="cannot load kinspect.backends entry point 'gone = tests.no_such_module"):
        install("kinspect.backends", "gone = tests.no_such_module:BACKEND")


ZX = """\
kern:
\tzvload v1, (z1)        ; the inputs
\tzvload v2, (z2)
\tzvmul v4, v1, v2
\tzvfma v3, v1, v2
\tzvstore v3, (z3)
\tzfadd z4, z4, z5
\tret
"""


def test_an_isa_from_an_entry_point_is_read_shown_and_diffed(install, tmp_path):
    from pygments.lexers import TextLexer

    from kinspect.render.lexers import lexer_for
    from tests import toy_isa

    install("kinspect.isas", "zx = tests.toy_isa:SPEC")
    assert isa.get("zx") is toy_isa.SPEC
    a = tmp_path / "one.s"
    a.write_text(ZX)
    [rep] = json.loads(run_ok("vec-report", a, "--json").output)
    # told by its telltale, parsed by its parser, judged with the names its spec gives
    assert rep["isa"] == "zx" and rep["target"] == "cpu:zx64", rep
    assert (rep["instructions"], rep["vector_instructions"]) == (7, 5)
    texts = [x["text"] for x in rep["verdicts"]]
    assert any("ZV used" in t for t in texts) and any("fused multiply-adds (zvfma)" in t for t in texts), texts
    assert not isinstance(lexer_for("zx"), TextLexer) and type(lexer_for("zx")).__name__ == "ZxLexer"
    assert "zvfma v3, v1, v2" in run_ok("show", a, "--stage", "asm").output
    # a diff picks its assembly and strips its comments
    b = tmp_path / "two.s"
    b.write_text(ZX.replace("        ; the inputs", "").replace("zvmul", "zvfma"))
    out = run_ok("diff", a, b, "--no-bench").output
    shown = out.split("\nasm: ", 1)[1]
    assert "changed lines: 4 raw, 2 normalized" in shown and "- zvmul v4, v1, v2" in shown, out
    assert "the inputs" not in shown


def test_isa_registry_fails_loudly():
    with pytest.raises(NotFound, match="unknown dialect 'zxx'"):
        isa.get("zxx")
    from kinspect.isa import Isa

    with pytest.raises(RuntimeError, match="dialect 'riscv' registered twice"):
        isa.register(Isa(name="riscv", title="another RISC-V", parser="kinspect.ir.riscv"))
