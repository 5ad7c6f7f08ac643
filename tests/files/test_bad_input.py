"""The bad-input table: each case gets one line that says what was wrong and what to do, exit code 2,
no traceback, and nothing half-written (the output folder as it was, the input folders untouched).

One row per case of issue 9. Rows run through click's CliRunner, except where a second process
or the process's own memory is the point.
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kinspect.cli import main
from tests.helpers import ROOT, sections, TESTS, tree_digest

DATA = TESTS / "data"
X86_DUMP = TESTS / "fixtures" / "cpu" / "triton-cpu-x86-avx512" / "dot_4x16_16x4_torch.float32.asm"


def one_line(output: str, code: int, needles) -> str:
    """The single `error: ...` line of a failed command, checked."""
    assert code == 2, output
    assert "Traceback" not in output, output
    lines = [ln for ln in output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


# -- inputs the rows need, made from real Triton output ----------------------------------------------

@pytest.fixture(scope="module")
def triton_cache(tmp_path_factory):
    """A real Triton cache holding one cuda:90 kernel (triton.compile into a private cache dir)."""
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from tests.jit_kernels import _double

    cache = tmp_path_factory.mktemp("cache") / "triton-cache"
    with knobs.cache.scope():
        knobs.cache.dir = str(cache)
        triton.compile(ASTSource(_double, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                                 constexprs={"BLOCK": 64}), target=GPUTarget("cuda", 90, 32))
    return cache


def _cache_copy(triton_cache, tmp_path, damage) -> Path:
    copy = tmp_path / "cache"
    shutil.copytree(triton_cache, copy)
    damage(copy)
    return copy


def truncated_cubin(cache: Path) -> None:
    cubin = next(cache.rglob("*.cubin"))
    cubin.write_bytes(cubin.read_bytes()[:cubin.stat().st_size // 2])


def corrupt_metadata(cache: Path) -> None:
    next(cache.rglob("_double.json")).write_text('{"hash": "abc", "target": {"backend": "cu')


def junk_ptx(path: Path, real_ptx: str) -> None:
    """Real PTX, then binary junk past the first 8 KB (where a header check would not see it)."""
    with open(path, "wb") as f:
        while f.tell() < 20_000:
            f.write(real_ptx.encode())
        f.write(b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\n")


# row: (id, argv (built from the tmp folder and fixtures), needles in the line, input folder to check)
def _rows():
    cubin = "cubin truncated or corrupt"
    return [
        ("unknown kernel", lambda t, c: ["dump", "fused_mm_sofmax"], ["kernel 'fused_mm_sofmax' not found",
                                                                        "did you mean 'fused_mm_softmax'"]),
        ("bad -p", lambda t, c: ["dump", "add", "-p", "BLOCK_SIZE"], ["-p 'BLOCK_SIZE' is not NAME=VALUE",
                                                                      "e.g. -p BLOCK_SIZE=64"]),
        ("bad -p name", lambda t, c: ["dump", "add", "-p", "BLOCK=4"], ["no constexpr 'BLOCK'", "BLOCK_SIZE"]),
        ("bad --arg", lambda t, c: ["dump", f"{DATA}/user_kernels.py:good_kernel", "--arg", "x_ptr=*fp33"],
         ["unknown type 'fp33'"]),
        ("kernel compile error", lambda t, c: ["dump", f"{DATA}/user_kernels.py:bad_kernel", "--arg", "x_ptr=*fp32",
                                               "--arg", "n=i32", "-p", "BLOCK=64"],
         ["failed to compile", "user_kernels.py:", "y_ptr is not defined"]),
        ("no device for bench", lambda t, c: ["bench", "softmax"], ["no device here", "--interpret", "kinspect dump"]),
        ("truncated cubin", lambda t, c: ["show", str(_cache_copy(c, t, truncated_cubin)), "--stage", "sass"],
         ["no sass for", "invalid ELF", cubin]),
        ("corrupt metadata json", lambda t, c: ["vec-report", str(_cache_copy(c, t, corrupt_metadata))],
         ["could be read", "unreadable metadata _double.json", "recompile"]),
        ("corrupt record.json", lambda t, c: ["ls", str(_store_with_bad_record(t))],
         ["could be read: variant add/cuda-90_w4_s3_deadbeef: record.json: not JSON", "remove that folder"]),
        ("binary junk in a .ptx", lambda t, c: ["vec-report", str(_junk_file(t, c))],
         ["junk.ptx: line ", "binary data, not PTX text", "pass the .ptx stage"]),
        ("binary file as .ptx", lambda t, c: ["vec-report", str(_cubin_as_ptx(t, c))],
         ["is binary, not .ptx text", "nvdisasm"]),
        ("empty file", lambda t, c: ["vec-report", str(_empty(t))], ["is empty (0 bytes)", "complete stage file"]),
        ("unwritable output folder", lambda t, c: ["dump", "add", "--store", str(_file(t) / "out")],
         ["cannot write to", "choose another folder with --store"]),
    ]


def _store_with_bad_record(tmp: Path) -> Path:
    folder = tmp / "store" / "add" / "cuda-90_w4_s3_deadbeef"
    folder.mkdir(parents=True)
    (folder / "record.json").write_text('{"kernel": "add", "target": ')
    return tmp / "store"


def _junk_file(tmp: Path, cache: Path) -> Path:
    junk_ptx(tmp / "junk.ptx", next(cache.rglob("*.ptx")).read_text())
    return tmp / "junk.ptx"


def _cubin_as_ptx(tmp: Path, cache: Path) -> Path:
    shutil.copy(next(cache.rglob("*.cubin")), tmp / "kernel.ptx")
    return tmp / "kernel.ptx"


def _empty(tmp: Path) -> Path:
    (tmp / "empty.ptx").write_text("")
    return tmp / "empty.ptx"


def _file(tmp: Path) -> Path:
    (tmp / "a-file").write_text("")
    return tmp / "a-file"


ROWS = _rows()


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input_row(row, tmp_path, triton_cache, monkeypatch):
    _, argv, needles = row
    monkeypatch.chdir(tmp_path)
    inputs = tmp_path / "in"
    inputs.mkdir()
    args = argv(inputs, triton_cache)
    out = tmp_path / "out"
    if "--store" not in args and "-o" not in args:
        args += ["--store", str(out)] if args[0] in ("dump", "bench", "show", "vec-report") else []
    before_in, before_out, before_cache = tree_digest(inputs), tree_digest(out), tree_digest(triton_cache)
    r = CliRunner().invoke(main, args)
    one_line(r.output, r.exit_code, needles)
    assert tree_digest(out) == before_out, "nothing half-written in the output folder"
    assert tree_digest(inputs) == before_in and tree_digest(triton_cache) == before_cache
    assert not (tmp_path / "kinspect-out").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions (the row above fails for root too)")
def test_read_only_output_folder(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        r = CliRunner().invoke(main, ["dump", "add", "--store", str(ro / "out")])
        one_line(r.output, r.exit_code, ["cannot write to", "--store"])
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o700)


def test_store_written_by_a_second_kinspect_process(tmp_path):
    """The first process holds the store's lock while its command runs; the second gets one line
    naming it, and writes nothing."""
    store = tmp_path / "store"
    started = tmp_path / "started"
    holder = subprocess.Popen(
        [sys.executable, "-m", "kinspect", "capture", "--store", str(store), "--", sys.executable, "-c",
         f"import pathlib, time; pathlib.Path({str(started)!r}).touch(); time.sleep(60)"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 60
        while not started.exists() and time.time() < deadline:
            time.sleep(0.1)
        assert started.exists(), holder.stderr.read().decode() if holder.poll() is not None else "not started"
        before = tree_digest(store)
        second = subprocess.run([sys.executable, "-m", "kinspect", "dump", "add", "--store", str(store)],
                                capture_output=True, text=True, timeout=300)
        line = one_line(second.stdout + second.stderr, second.returncode,
                        ["being written by another kinspect process", f"pid {holder.pid}", "kinspect capture",
                         "wait for it to finish or choose another folder with --store"])
        assert tree_digest(store) == before, line
    finally:
        holder.kill()
        holder.wait(timeout=30)
    # once the holder is gone the lock is free again (the kernel drops a dead process's flock)
    r = CliRunner().invoke(main, ["dump", "add", "--store", str(store)])
    assert r.exit_code == 0, r.output


def test_capture_inside_a_program_does_not_fail_on_a_busy_store(tmp_path):
    """kinspect.capture() in several processes of one program (ranks) into one store: the ones
    that find it locked record anyway (each variant is written atomically); a command errs."""
    import kinspect
    from kinspect.core.errors import KinspectError
    from kinspect.files.store import Store

    store = tmp_path / "store"
    code = (f"import kinspect, time\nwith kinspect.capture({str(store)!r}):\n"
            f"    open({str(tmp_path / 'held')!r}, 'w').close(); time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.time() + 60
        while not (tmp_path / "held").exists() and time.time() < deadline:
            time.sleep(0.1)
        with kinspect.capture(store) as rec:      # another rank: no error
            assert rec.store.root == store
        with pytest.raises(KinspectError, match=f"pid {holder.pid}"):
            with Store(store).lock():             # a kinspect command: one line naming the holder
                pass
    finally:
        holder.kill()
        holder.wait(timeout=30)


def test_the_lock_is_shared_with_the_holders_children(tmp_path):
    """`kinspect capture` records from the program it runs (a child) while it holds the lock."""
    script = tmp_path / "k.py"
    script.write_text((ROOT / "samples" / "aot_compile.py").read_text())
    proc = subprocess.run([sys.executable, "-m", "kinspect", "capture", "--store", str(tmp_path / "out"), "--",
                           sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0 and "could not record" not in proc.stderr, proc.stderr
    assert "2 variant(s) recorded" in proc.stderr or "3 variant(s) recorded" in proc.stderr


def _peak_rss_mb(*argv, cwd) -> tuple[int, int, str]:
    """(exit code, peak RSS in MB, stderr) of `python -m kinspect ARGV`, stdout thrown away.
    Measured in a fresh wrapper process whose only child is kinspect."""
    wrapper = ("import resource, subprocess, sys\n"
               "p = subprocess.run([sys.executable, '-m', 'kinspect', *sys.argv[1:]], stdout=subprocess.DEVNULL,"
               " stderr=subprocess.PIPE, text=True)\n"
               "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)\n"
               "print(p.stderr, file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", wrapper, *argv], capture_output=True, text=True, timeout=600, cwd=cwd)
    code, mb = proc.stdout.split()
    return int(code), int(mb), proc.stderr


def test_a_100_mb_listing_is_shown_in_bounded_memory(tmp_path):
    """`show` streams a stage of any size: a 100 MB x86 listing (real triton-cpu assembly, repeated)
    costs the same memory as a small one. vec-report streams too (its parsers take line iterators;
    benchmarks/big_listing.py measures it at 100 MB, tests/render/test_vec_report.py at 20 MB)."""
    asm = sections(X86_DUMP)["ASM"]
    small, big, mid = tmp_path / "small.s", tmp_path / "big.s", tmp_path / "mid.s"
    small.write_text(asm)
    for path, size in ((big, 100_000_000), (mid, 10_000_000)):
        with open(path, "w") as f:
            while f.tell() < size:
                f.write(asm)
    code, base_mb, err = _peak_rss_mb("show", str(small), "--stage", "asm", cwd=tmp_path)
    assert code == 0, err
    code, big_mb, err = _peak_rss_mb("show", str(big), "--stage", "asm", cwd=tmp_path)
    assert code == 0, err
    assert big_mb - base_mb < 50, (base_mb, big_mb)   # 100 MB shown: growth well under half its size
    # --lines parses the stage first (about 1 MB/s for x86 here): 10 MB, which took 10x its size before
    code, mid_mb, err = _peak_rss_mb("show", str(mid), "--stage", "asm", "--lines", cwd=tmp_path)
    assert code == 0, err
    assert mid_mb - base_mb < 10, (base_mb, mid_mb)
