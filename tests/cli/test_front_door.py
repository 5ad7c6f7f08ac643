"""What a newcomer meets first (issue 30): mistakes found before any work, one spelling of the
store, variants named by values or ls numbers, inputs that are not stores each said as what they
are, and Triton's tutorials captured under the interpreter as they are written."""

import subprocess
import sys
import tarfile

import pytest

from kinspect import kernels

from tests.helpers import one_error_line, ROOT, run, TESTS

DATA = TESTS / "data"


def test_declared_kernels_are_the_registry():
    """The ast reading of the kernel modules (no torch) says what importing them registers."""
    assert kernels.declared() == {name: tuple(kernels.get(name).constexprs) for name in kernels.names()}


# Each of these used to be found after seconds of compiling (issue 30's list); now before torch is imported.
MISTAKES = [
    (["diff", "softmax", "-p", "BLOCK_SIZE=256,512"], "did you mean 'BLOCK_N'"),
    (["dump", "softmax", "--stage", "sas"], "did you mean 'sass'"),
    (["diff", "softmax", "-p", "BLOCK_N=32", "64"], "'64' is a value, not a kernel"),
    (["report", "fused_mm_softmax", "-p", "BLOCK=32,64"], "did you mean 'BLOCK_SIZE'"),
    (["dump", "softmax", "-t", "cuda:91"], "a cuda arch is a compute capability Triton compiles for"),
    (["dump", "nosuchkernel"], "kernel 'nosuchkernel' not found"),
    (["vec-report", "nosuch/dir"], "no such file or folder: 'nosuch/dir'"),
    (["dump", f"{DATA}/user_kernels.py:goo_kernel"], "did you mean 'good_kernel'"),
    (["dump", f"{DATA}/user_kernels.py:good_kernel", "-p", "BLOK=64"], "has no parameter BLOK"),
]


@pytest.mark.parametrize("args, needle", MISTAKES)
def test_mistakes_are_one_line_before_torch_is_imported(tmp_path, args, needle):
    code = ("import sys\nfrom kinspect.cli import main\n"
            "try:\n    main(sys.argv[1:], prog_name='kinspect')\n"
            "except SystemExit as e:\n    print('torch' in sys.modules, 'triton' in sys.modules, e.code, file=sys.stderr)")
    p = subprocess.run([sys.executable, "-c", code, *args, "--store", str(tmp_path / "s")], capture_output=True,
                       text=True, cwd=ROOT, timeout=120)
    lines = p.stderr.strip().splitlines()
    assert lines[-1] == "False False 2", p.stderr
    assert len(lines) == 2 and lines[0].startswith("error: ") and needle in lines[0], p.stderr
    assert not (tmp_path / "s").exists()


def test_paths_that_are_not_stores_each_say_what_they_are(tmp_path):
    one_error_line(run("vec-report", tmp_path / "missing"), "no such file or folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    one_error_line(run("vec-report", empty), "is an empty folder")
    archives = tmp_path / "archives"
    archives.mkdir()
    with tarfile.open(archives / "store.tgz", "w:gz") as t:
        t.add(DATA / "user_kernels.py", arcname="x/user_kernels.py")
    one_error_line(run("vec-report", archives), "holds archives (store.tgz)", "tar xf")
    one_error_line(run("vec-report", archives / "store.tgz"), "is an archive; unpack it", "tar xf")
    one_error_line(run("ls", empty), "is an empty folder")


def test_the_store_is_one_option_everywhere_and_o_still_works_with_a_warning(tmp_path):
    for command in ("dump", "diff", "vec-report", "show", "bench", "capture", "report", "repro"):
        r = run(command, "--help")
        assert "-s, --store DIR" in r.output, command
    r = run("dump", "add", "-o", tmp_path / "old", "--stage", "ttir")
    assert r.exit_code == 0, r.output
    assert "warning: -o" in r.output and "write --store" in r.output
    assert (tmp_path / "old" / "add").is_dir()
    r = run("dump", "add", "--store", tmp_path / "a", "-o", tmp_path / "b")
    assert r.exit_code == 2 and "give the store once" in r.output


def test_variants_by_values_or_ls_number_in_natural_order(tmp_path):
    for bs in (128, 32):
        assert run("dump", "fused_mm_softmax", "-p", f"BLOCK_SIZE={bs}", "--store", tmp_path).exit_code == 0
    listing = run("ls", tmp_path).output.splitlines()
    assert "BLOCK_SIZE=32;" in listing[2] and listing[2].split()[0] == "1"
    assert "BLOCK_SIZE=128;" in listing[3] and listing[3].split()[0] == "2"
    r = run("show", "fused_mm_softmax", "--stage", "ttir", "--store", tmp_path)
    one_error_line(r, "matches 2 variants", "-p BLOCK_SIZE=32 (#1); -p BLOCK_SIZE=128 (#2)")
    by_value = run("show", "fused_mm_softmax", "-p", "BLOCK_SIZE=128", "--stage", "ttir", "--store", tmp_path)
    assert by_value.exit_code == 0 and "tensor<128x128xf32>" in by_value.output
    by_number = run("show", "2", "--stage", "ttir", "--store", tmp_path)
    assert by_number.output == by_value.output
    one_error_line(run("show", "fused_mm_softmax", "-p", "BLOCK_SIZE=64", "--stage", "ttir", "--store", tmp_path),
              "no variant 'fused_mm_softmax' with -p BLOCK_SIZE=64")


def test_a_sweep_reuses_what_the_store_holds(tmp_path):
    """report after diff (the README's order) shows the variants diff stored, not a second compile."""
    args = ("add", "-p", "BLOCK_SIZE=256,512", "--store", tmp_path / "s", "-j", "1")
    assert run("diff", *args, "--table").exit_code == 0
    records = sorted((tmp_path / "s").rglob("record.json"))
    before = [(p, p.read_bytes(), p.stat().st_mtime_ns) for p in records]
    r = run("report", *args, "-o", tmp_path / "r.html", "--no-bench")
    assert r.exit_code == 0, r.output
    assert [(p, p.read_bytes(), p.stat().st_mtime_ns) for p in records] == before
    assert len(list((tmp_path / "s").rglob("record.json"))) == 2


def test_tutorial_code_runs_as_written_under_capture_interpret(tmp_path):
    """Triton's tutorials open with DEVICE = driver.active.get_active_torch_device() and size grids by
    the device's properties: with no GPU here the interpreted program gets the CPU and the target's."""
    store = tmp_path / "s"
    p = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--interpret", "--store", str(store), "--",
                        sys.executable, str(ROOT / "samples" / "tutorials" / "fused_softmax.py")],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "cuda:90: 132 SMs, 232448 bytes of shared memory; softmax matches torch" in \
        p.stdout.replace("GPUTarget(backend='cuda', arch=90, warp_size=32)", "cuda:90")
    assert "1 variant(s) compiled for cuda:90" in p.stderr and "softmax_kernel" in p.stderr
    assert "Warning" not in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert "kinspect: compiling 1/1" in p.stderr      # not a terminal: plain progress lines
