"""`kinspect diff` of two runs of a program: two captures of one program (two versions of its kernel file,
two Tritons), kernels matched across them (renumbered Inductor kernels by their origin), ranked, with the
stage diffs and the story of one; and one kernel compiled by two Tritons (--python)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CAPTURED_KERNELS, CAPTURED_PROGRAM
from tests.helpers import kinspect_path, one_error_line, other_triton, ROOT, run, TESTS

pytestmark = pytest.mark.slow       # subprocesses or many compiles: -m 'not slow' leaves it out

# softmax_rows written another way: the max and the sum first, the exponentials again for the store
OLD_SOFTMAX = ("    e = _exp(x - tl.max(x, axis=0))\n"
               "    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)")
NEW_SOFTMAX = ("    m = tl.max(x, axis=0)\n"
               "    s = tl.sum(_exp(x - m), axis=0)\n"
               "    tl.store(y_ptr + row * stride + cols, _exp(x - m) / s, mask=mask)")


def capture(root: Path, kernels: str, python: str = sys.executable, env: dict | None = None) -> Path:
    """CAPTURED_PROGRAM with `kernels` as its kernel module, captured under the interpreter for cuda:90 by
    `python`'s kinspect (its Triton); the store."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "kernels_mod.py").write_text(kernels)
    (root / "prog.py").write_text(CAPTURED_PROGRAM)
    store = root / "store"
    proc = subprocess.run([python, "-m", "kinspect", "capture", "--interpret", "-t", "cuda:90", "--store", str(store),
                           "--", python, str(root / "prog.py")], cwd=root, capture_output=True, text=True,
                          timeout=900, env=env)
    assert proc.returncode == 0 and "program ok" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-3000:]
    return store


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory) -> tuple[Path, Path]:
    """The captured program (conftest's CAPTURED_PROGRAM) as A, and as B the same program with softmax_rows
    rewritten. A is a capture of its own: other tests compile into the shared capture's store."""
    assert OLD_SOFTMAX in CAPTURED_KERNELS
    return (capture(tmp_path_factory.mktemp("version-a"), CAPTURED_KERNELS),
            capture(tmp_path_factory.mktemp("version-b"), CAPTURED_KERNELS.replace(OLD_SOFTMAX, NEW_SOFTMAX)))


def test_two_versions_of_a_kernel_file_the_changed_kernel_first(two_versions):
    import torch
    import triton

    a, b = two_versions
    r = run("diff", a, b, "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["a"]["triton"] == [triton.__version__] and d["b"]["torch"] == torch.__version__
    assert d["a"]["kind"] == "kinspect store" and d["a"]["steps_from"].startswith("not known")
    first = d["kernels"][0]
    assert first["kernel"] == "softmax_rows" and first["match"] == "function and specialization (source changed)"
    assert first["a"]["calls"] == first["b"]["calls"] == 1 and first["a"]["path"] != first["b"]["path"]
    # every kernel B launched is matched: the rest of the program did not change
    rest = [k for k in d["kernels"][1:] if k["b"] is not None]
    assert len(rest) == 4 and all(k["match"] == "function, specialization and source" for k in rest), rest
    assert all(k["a"] is not None and not k["deltas"] for k in rest)
    assert {k["kernel"] for k in rest} == {"row_sum x_ptr aligned", "row_sum x_ptr unaligned",
                                           "add_kernel BLOCK=64 w=2", "add_kernel BLOCK=128 w=4"}
    pair = d["pair"]
    assert pair["kernel"] == "softmax_rows" and pair["first_differing_stage"] == "ttir"
    assert pair["stages"][0] == {"stage": "ttir", "identical": False,
                                 "normalized_changed_lines": pair["first_stage_diff"]["normalized_changed_lines"]}
    assert pair["isa_diff"]["stage"] == "sass"
    added = [x for h in pair["first_stage_diff"]["hunks"] for run_ in h["runs"] if run_["tag"] == "+"
             for x in run_["lines"]]
    assert sum("\"tt.reduce\"(" in x for x in added) == 2, added     # the max and the sum, now both before the store
    assert d["story"].startswith("softmax_rows (matched by function and specialization (source changed)):")
    assert "The TTIR is the first stage that differs" in d["story"]


def test_two_runs_in_the_terminal(two_versions):
    a, b = two_versions
    r = run("diff", a, b)
    assert r.exit_code == 0, r.output
    out = r.output
    assert out.startswith(f"A: {a}  [kinspect store,") and f"\nB: {b}  [kinspect store, 5 variants]" in out
    assert "ranked by GPU time lost per step (neither run was timed: changed kernels first)" in out
    table = out.split("ranked by GPU time", 1)[1].splitlines()
    assert table[1].split()[:3] == ["#", "kernel", "match"] and table[2].split()[:2] == ["1", "softmax_rows"]
    assert "softmax_rows: stages after normalization: ttir ≠" in out and "\nttir (first differing stage):" in out
    assert "\nsass (machine code):" in out
    # --pair names another kernel; --table leaves the stages out
    other = run("diff", a, b, "--pair", "add_kernel BLOCK=64 w=2")
    assert other.exit_code == 0 and "add_kernel BLOCK=64 w=2: stages after normalization" in other.output
    assert "Every stage both runs kept" in other.output, other.output
    assert "stages after normalization" not in run("diff", a, b, "--table").output


def test_bad_requests_of_a_run_diff_are_one_line(two_versions, tmp_path):
    a, b = two_versions
    one_error_line(run("diff", a, b, "--pair", "nosuchkernel"), "--pair: no kernel 'nosuchkernel'")
    one_error_line(run("diff", a, b, "--steps", "0"), "--steps '0'")
    one_error_line(run("diff", a, b, "--stage", "ptx"), "--stage")
    one_error_line(run("diff", "add", "--steps", "3"), "--steps applies to a diff of two runs")


def test_a_store_and_itself_with_steps(two_versions):
    a, b = two_versions
    d = json.loads(run("diff", b, b, "--json", "--steps", "2,2").output)
    assert d["a"]["steps"] == d["b"]["steps"] == 2 and d["a"]["steps_from"] == "--steps"
    assert all(k["match"] == "function, specialization and source" and not k["deltas"] for k in d["kernels"])
    assert d["pair"]["first_differing_stage"] is None and "is identical after normalization" in d["story"]


def test_two_tritons_capture_the_same_program(two_versions, tmp_path):
    """The program captured by this Triton and by the second venv's (Triton 3.6), from this checkout's kinspect."""
    import os

    import triton

    python, version = other_triton()
    a, _ = two_versions
    env = {**os.environ, "PYTHONPATH": kinspect_path(tmp_path)}
    older = capture(tmp_path / "t36", CAPTURED_KERNELS, python=python, env=env)
    info = json.loads((older / "run.json").read_text())
    assert info["triton"] == version
    d = json.loads(run("diff", older, a, "--json").output)
    assert d["a"]["triton"] == [version] and d["b"]["triton"] == [triton.__version__]
    softmax = next(k for k in d["kernels"] if k["kernel"] == "softmax_rows")
    assert softmax["match"] == "function, specialization and source"
    assert f"Triton {version} → {triton.__version__}" in softmax["config_changed"]
    assert softmax["a"]["triton_version"] == version and softmax["b"]["triton_version"] == triton.__version__
    print(json.dumps({k["kernel"]: {"match": k["match"], "deltas": k["deltas"]} for k in d["kernels"]}, indent=1))
    print(d["story"])


def test_one_kernel_under_two_tritons(tmp_path):
    import triton

    python, version = other_triton()
    r = run("diff", "add", "--python", python, "-t", "cuda:90", "-p", "BLOCK_SIZE=1024", "--store", tmp_path, "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["a"]["path"] == python and d["a"]["triton"] == [version] and d["b"]["triton"] == [triton.__version__]
    [k] = d["kernels"]
    assert k["a"]["triton_version"] == version and k["b"]["triton_version"] == triton.__version__
    assert k["a"]["constexprs"] == k["b"]["constexprs"] == {"BLOCK_SIZE": 1024}
    assert [s["stage"] for s in d["pair"]["stages"]] == ["ttir", "ttgir", "llir", "ptx", "sass"]
    first = d["pair"]["first_differing_stage"]
    assert first is None or d["pair"]["first_stage_diff"] or first == "sass"
    assert d["story"].startswith("add_kernel") and "compiled offline" in d["story"]
    print(d["story"])


BLOCK_POINTERS = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def copy_tile(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, shape=(n,), strides=(1,), offsets=(pid * BLOCK,), block_shape=(BLOCK,),
                            order=(0,))
    dst = tl.make_block_ptr(y_ptr, shape=(n,), strides=(1,), offsets=(pid * BLOCK,), block_shape=(BLOCK,),
                            order=(0,))
    tl.store(dst, tl.load(src, boundary_check=(0,)), boundary_check=(0,))


if __name__ == "__main__":
    x = torch.randn(4096, device="cuda")
    y = torch.empty_like(x)
    copy_tile[(4,)](x, y, 4096, BLOCK=1024)
'''


def test_a_triton_that_cannot_compile_the_kernel_is_named_with_its_error(tmp_path):
    import triton

    python, version = other_triton()
    if triton.__version__ < "3.9":
        pytest.skip(f"Triton {triton.__version__} still has block pointers")
    (tmp_path / "bp.py").write_text(BLOCK_POINTERS)
    r = run("diff", f"{tmp_path / 'bp.py'}:copy_tile", "--python", python, "-t", "cuda:90", "--store", tmp_path / "s")
    line = one_error_line(r, f"Triton {triton.__version__} (this kinspect's Python) cannot compile",
                          "Block pointers have been removed")
    assert f"Triton {version}" not in line       # the older one compiled it
    one_error_line(run("diff", "add", "--python", tmp_path / "nopython"), "no such interpreter")
    one_error_line(run("diff", "add", "--python", sys.executable, "-p", "BLOCK_SIZE=32,64"), "one value per -p")


# -- renumbered Inductor kernels -------------------------------------------------------------------------

RENAMED = "triton_poi_fused_add_mul_pow_tanh_view_7"          # renumbered, code unchanged
CHANGED = "triton_poi_fused_mm_t_view_0"                      # renumbered and its code changed, 1.5x slower
GONE = "triton_per_fused_embedding_dense_backward_sum_19"


def _with_origins(src: Path, store: Path, output_code: Path) -> None:
    """A copy of a captured store with each variant's provenance.json, as the capture writes it from
    Inductor's output code (kinspect.files.provenance)."""
    from kinspect.files import provenance
    from kinspect.files.store import read_records

    shutil.copytree(src, store)
    origins = {}
    for p in output_code.rglob("*.py"):
        origins.update({o.kernel_path: o for o in provenance.parse_output_code(p.read_text())})
    for v in read_records(store):
        if v.source and v.source.file in origins:
            provenance.write(v.path, origins[v.source.file])


def _rename(store: Path, kernel: str, new: str, *, code=None, slower: float = 1.0) -> None:
    """What a second compile of the model makes of one kernel: another number in its name (folder, record,
    source, provenance), with `code(source) -> source` changed, its launches `slower` times as long."""
    [folder] = [p for p in (store / kernel).iterdir() if p.is_dir()]
    record = json.loads((folder / "record.json").read_text())
    text = record["source"]["text"].replace(kernel, new)
    record["kernel"], record["source"]["text"] = new, code(text) if code else text
    gpu = record["launches"]["gpu"]
    gpu["samples_ms"] = [x * slower for x in gpu["samples_ms"]]
    gpu["total_ms"] *= slower
    (folder / "record.json").write_text(json.dumps(record))
    origin = json.loads((folder / "provenance.json").read_text())
    origin["kernel"] = new
    (folder / "provenance.json").write_text(json.dumps(origin))
    (store / kernel).rename(store / new)


def test_renumbered_inductor_kernels_are_matched_by_source_and_by_origin(gpt2, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _with_origins(gpt2 / "gpt2", a, gpt2 / "output_code")
    shutil.copytree(a, b)
    _rename(b, RENAMED, RENAMED[:-1] + "9")
    _rename(b, CHANGED, CHANGED[:-1] + "4", code=lambda s: s.replace("xmask = ", "xmask = xindex >= 0\n    xmask = "),
            slower=1.5)
    shutil.rmtree(b / GONE)
    r = run("diff", a, b, "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    by = {k["kernel"]: k for k in d["kernels"]}
    assert by[RENAMED[:-1] + "9"]["match"] == "source (renamed)" and not by[RENAMED[:-1] + "9"]["deltas"]
    changed = by[CHANGED[:-1] + "4"]
    assert changed["match"].startswith("origin (renamed)") and changed["a"]["kernel"] == CHANGED
    assert by[GONE]["match"] == "gone" and by[GONE]["b"] is None and by[GONE]["lost_ms_per_step"] < 0
    # the slower kernel first, its change beyond both spreads, the time it loses per step as the records say
    first = d["kernels"][0]
    assert first["kernel"] == CHANGED[:-1] + "4" and first["beyond_spread"] is True
    assert first["per_call_change"] == pytest.approx(0.5, abs=1e-3)
    steps = d["a"]["steps"]
    assert d["a"]["steps_from"].startswith("guessed") and steps == d["b"]["steps"] > 1
    assert first["lost_ms_per_step"] == pytest.approx(first["a"]["gpu_ms"] * 0.5 / steps, rel=1e-3)
    assert d["pair"]["kernel"] == first["kernel"] and d["pair"]["first_differing_stage"] is None  # only the source
    assert "+50%, beyond both runs' spreads" in d["story"] and "ms lost per step" in d["story"]
    # every other kernel is the same kernel under the same name
    rest = [k for k in d["kernels"] if k["kernel"] not in (RENAMED[:-1] + "9", CHANGED[:-1] + "4", GONE)]
    assert rest and all(k["match"] == "name and source" and k["lost_ms_per_step"] == 0 for k in rest)
    out = run("diff", a, b, "--table").output
    assert f"was {CHANGED} (origin (renamed)" in out and "lost ms/step" in out
    # the same in the report: one page, no script
    r = run("report", a, b, "-o", tmp_path / "r.html")
    assert r.exit_code == 0 and "37 kernels of two runs" in r.output, r.output
    page = (tmp_path / "r.html").read_text()
    assert "origin (renamed)" in page and "+50%, beyond both runs&#x27; spreads" in page and "<script" not in page


def test_a_trace_is_a_run(tmp_path, two_versions):
    """A tritonparse trace (tests/trace_maker.py: one compile and one launch of the shipped softmax kernel) is
    one run: against itself every kernel matches; against a store its kernel is gone and the store's are new."""
    import os

    out = tmp_path / "made"
    subprocess.run([sys.executable, str(TESTS / "trace_maker.py"), str(out),
                    f"{ROOT / 'kernels' / 'softmax.py'}:softmax_kernel", "cuda:90", "none"],
                   check=True, capture_output=True, timeout=600, env=dict(os.environ))
    [trace] = (out / "trace-none").glob("*.ndjson")
    d = json.loads(run("diff", trace, trace, "--json").output)
    assert d["a"]["kind"] == "trace" and [k["match"] for k in d["kernels"]] == ["function, specialization and source"]
    assert d["kernels"][0]["a"]["calls"] == 1
    d = json.loads(run("diff", trace, two_versions[1], "--json", "--table").output)
    assert {k["match"] for k in d["kernels"]} == {"gone", "new"} and d["pair"] is None
    gone = next(k for k in d["kernels"] if k["match"] == "gone")
    assert gone["kernel"] == "softmax_kernel" and gone["b"] is None and gone["a"]["calls"] == 1
