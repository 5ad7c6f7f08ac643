"""The fuzzer's targets on fewer inputs, in CI: every reader of untrusted input either reads a
mutated real stage or raises a KinspectError (never another exception, never a hang).

benchmarks/fuzz_parsers.py runs the same targets on 10,000 inputs each. The regression tests at
the end pin the crashes the fuzzer found.
"""

import importlib.util
import io
import signal
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kinspect import ir
from kinspect.core.errors import KinspectError
from tests.helpers import ROOT

_spec = importlib.util.spec_from_file_location("fuzz_parsers", ROOT / "benchmarks" / "fuzz_parsers.py")
fuzz = importlib.util.module_from_spec(_spec)
sys.modules["fuzz_parsers"] = fuzz
_spec.loader.exec_module(fuzz)
fuzz._ALLOWED = (KinspectError,)

# huge lines cost MBs of parsing each: the full fuzzer has them, CI keeps to the cheap mutations
MUTATIONS = [f for f, _ in fuzz.MUTATIONS if f is not fuzz.huge_line]
SEED_KERNELS = (("fused_mm_softmax", "cuda:90", {"BLOCK_SIZE": 64}), ("add", "cuda:90", {}),
                ("softmax", "hip:gfx942", {}))


@pytest.fixture(scope="module")
def seeds(real_variant):
    return fuzz.collect_seeds([real_variant(k, t, **c) for k, t, c in SEED_KERNELS])


def _inputs(target: str, seeds: dict):
    pool = seeds[target]
    step = st.tuples(st.sampled_from(MUTATIONS), st.integers(0, 2**32))
    mutated = st.builds(lambda seed, steps: fuzz.apply(seed, steps, pool), st.sampled_from(pool),
                        st.lists(step, min_size=1, max_size=3))
    return st.one_of(mutated, st.binary(max_size=2000), st.text(max_size=2000).map(str.encode))


@pytest.mark.parametrize("target", list(fuzz.TARGETS))
def test_mutated_real_input_never_crashes(target, seeds, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"fuzz-{target}")
    counter = iter(range(10**9))

    @settings(max_examples=200, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(_inputs(target, seeds))
    def check(data):
        outcome, seconds, exc = fuzz.fuzz_one(target, data, next(counter), tmp, timeout=20)
        if exc is not None:
            raise exc
        assert seconds < 20

    check()


def test_unmutated_seeds_read_without_error(seeds, tmp_path):
    """The fuzzer's seeds are real stages and records: each one reads cleanly, no located error."""
    for target in fuzz.TARGETS:
        for i, data in enumerate(seeds[target]):
            outcome, _, exc = fuzz.fuzz_one(target, data, i, tmp_path, timeout=0)
            assert outcome is None, (target, i, exc)


# -- crashes the fuzzer found -----------------------------------------------------------------------

def _timed(text: str, dialect: str = "mlir"):
    """The instructions parsed (a load's MemoryOp record, which follows it, is left out) and the seconds."""
    from kinspect.ir.records import MemoryOp

    start = time.perf_counter()
    records = [r for r in ir.parse(dialect, text) if not isinstance(r, MemoryOp)]
    return records, time.perf_counter() - start


def test_mlir_deeply_nested_loc_is_unknown_not_a_recursion_error():
    """`#loc = loc(loc(loc(...)))` thousands deep raised RecursionError from _loc_expr."""
    text = "#loc = loc(" + "loc(" * 5000 + '"k.py":3:1' + ")" * 5001 + "\n  tt.return loc(#loc)\n"
    [ret], _ = _timed(text)
    assert ret.mnemonic == "tt.return" and ret.loc is None


def test_mlir_many_loc_openers_on_one_line_is_linear():
    """A line of 20,000 nested `loc(` took quadratic time in _split_loc (30 s at 100 KB)."""
    line = "  %0 = tt.load %a " + "loc(" * 20000 + ")" * 20000
    records, seconds = _timed(line + "\n")
    assert [r.mnemonic for r in records] == ["tt.load"]
    assert seconds < 2, seconds


def test_mlir_loc_split_keeps_quoted_parens_and_escapes():
    text = ('  %0 = tt.load %a loc("a\\"(.py":1:2)\n'
            '  %1 = tt.load %a loc("b\\\\":3:4)\n'
            '  %2 = tt.load %a loc(callsite("x"("a.py":1:2) at "k.py":7:1))\n')
    records, _ = _timed(text)
    assert [(r.loc.file, r.loc.line) for r in records] == [('a"(.py', 1), ("b\\", 3), ("k.py", 7)]


def test_ptx_cp_async_size_with_leading_zeros():
    """`int("016", 0)` raised ValueError on a cp.async size with a leading zero (fuzzer, PTX)."""
    line = "\tcp.async.cg.shared.global [ %r116 + 0 ], [ %rd65 + 0 ], {}, %r118;\n"
    for size in ("016", "16", "0x10"):
        [ins] = ir.parse("ptx", line.format(size))
        assert ins.width == 128, size


def test_metadata_with_an_unreadable_target_is_a_warning(tmp_path):
    """A metadata json whose target is {"backend": "cuda", "arch": 90, "warp_size": "x"} raised
    ValueError out of `ls` (found reading the target code after the fuzzer's metadata findings)."""
    import json

    from kinspect.files.sources import discover

    folder = tmp_path / "cache" / "HASH"
    folder.mkdir(parents=True)
    (folder / "__grp__k.json").write_text("{}")
    (folder / "k.ptx").write_text(".target sm_90a\n")
    (folder / "k.json").write_text(json.dumps({"target": {"backend": "cuda", "arch": 90, "warp_size": "x"}}))
    listing = discover(tmp_path / "cache")
    assert listing.variants == [] and "names no readable target" in listing.warnings[0]


def test_cpu_asm_line_of_many_labels_is_linear():
    """`Ltmp0:Ltmp0:...` (1.4 MB on one line) took 21 s: each label was sliced off the line."""
    text = "\t.text\nk:\n" + "Ltmp0:" * 200_000 + " ret\n"
    start = time.perf_counter()
    records = list(ir.parse("aarch64", text))
    assert time.perf_counter() - start < 5
    assert [r.mnemonic for r in records if hasattr(r, "mnemonic")] == ["ret"]


def test_sass_resource_usage_long_capital_run_is_linear():
    """A 1 MB line of capital letters hung parse_resource_usage (_USAGE_FIELD from every position)."""
    from kinspect.ir.sass import parse_resource_usage

    start = time.perf_counter()
    found = list(parse_resource_usage(" Function k:\n" + "O" * 200_000 + " REG:40\n"))
    assert time.perf_counter() - start < 2
    assert [(r.name, r.value) for r in found] == [("registers", 40)]


def test_elf_section_table_offset_past_any_file(tmp_path, seeds):
    """A cubin whose e_shoff is 2**63 or more made seek() raise ValueError (fuzzer, ELF reader)."""
    import struct

    from kinspect.isa.elf import text_bytes

    cubin = seeds["elf"][0]
    assert text_bytes(_write(tmp_path / "ok.cubin", cubin)) > 0
    for shoff in (2**63, 2**64 - 1, len(cubin)):
        bad = cubin[:0x28] + struct.pack("<Q", shoff) + cubin[0x30:]
        assert text_bytes(_write(tmp_path / "bad.cubin", bad)) is None


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("branch", ["j", "tail", "beqz", "jal"])
def test_riscv_branch_without_its_operand(branch):
    """A truncated `j` (no target) raised IndexError in the RISC-V decoder (fuzzer)."""
    [ins] = [r for r in ir.parse("riscv", f"\t.text\nk:\n\t{branch}\n") if hasattr(r, "mnemonic")]
    assert ins.mnemonic == branch


def test_fuzz_one_reports_a_hang_as_a_crash(monkeypatch):
    """The harness itself: an input that runs past the timeout is counted, not waited for."""
    monkeypatch.setitem(fuzz.TARGETS, "slow", lambda data, i, tmp: time.sleep(5))
    outcome, seconds, exc = fuzz.fuzz_one("slow", b"", 0, Path("."), timeout=0.2)
    assert outcome.startswith("Hang") and seconds < 2
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_binary_line_is_a_located_error_in_every_dialect():
    for dialect in fuzz.DIALECTS:
        with pytest.raises(KinspectError, match=r"line 2: binary data"):
            list(ir.parse(dialect, io.StringIO("ok\n\x7fELF\x00\x00\x01\n", newline="")))
