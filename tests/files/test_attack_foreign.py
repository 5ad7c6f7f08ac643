"""benchmarks/attack_foreign.py in CI: hostile TRITON_KERNEL_DUMP folders, Triton cache entries, traces
and stores, each made from a real compile here (tests/trace_maker.py, then `kinspect dump`) with one
change, read by every reading command (ls, vec-report, vec-report --lines, show --stage ptx/ttir/sass,
report -o, diff --no-bench, repro) in a child process under the user's TRITON_KERNEL_DUMP /
TRITON_DUMP_DIR / TRITON_CACHE_DIR. Each case asserts: exit 0 or 2, no traceback, no byte of the
secret outside the folder in any output or in the HTML report (its gzipped stage blobs included), no
raw terminal escape, every command within its time limit, the process under its memory cap, inputs
byte-identical, nothing written into the user's dump or cache folders.

CI runs a sample of the benchmark's cases, every kind of attack on at least one surface; the
benchmark runs them all."""

import dataclasses
import importlib.util
import sys

import pytest
from tests.helpers import ROOT

pytestmark = pytest.mark.slow       # subprocesses or many compiles: -m 'not slow' leaves it out

if "attack_foreign" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("attack_foreign", ROOT / "benchmarks" / "attack_foreign.py")
    sys.modules["attack_foreign"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["attack_foreign"])
attack = sys.modules["attack_foreign"]

CI = {
    "TRITON_KERNEL_DUMP folders": ("ptx is a FIFO", "ptx is a sparse 4 GB file", "ptx is a character device (/dev/zero)",
                                   "ttir is binary", "ptx is a directory", "whole entry links out",
                                   "ptx holds terminal escapes"),
    "Triton cache entries": ("ptx links out", "extra entry links out", "ptx is a dangling link",
                             'metadata num_warps = "4x"', "metadata num_warps = [4]", "metadata shared = NaN",
                             "metadata is a FIFO", "__grp__ is a FIFO", "10,000 entries"),
    "traces": ("TensorDescriptor argument (tritonparse 0.6.0)", "gzip bomb (6 GiB inflated, one line)",
               "launch grid = true", "metadata num_warps = Infinity", "python_source of 2 million lines",
               "a trace file is a FIFO", "a trace file links out", "stage holds terminal escapes"),
    "stores": ("ptx missing", "ptx is a dangling link", "ttir is a character device (/dev/zero)", "sass is a FIFO"),
}
# a 10,000-entry cache: listed in CI (the analysing commands over it run in the benchmark)
COMMANDS = {"10,000 entries": ("ls",)}


def _cases():
    chosen = []
    for case in attack.all_cases():
        if case.name in CI.get(case.surface, ()):
            chosen.append(dataclasses.replace(case, commands=COMMANDS.get(case.name, case.commands),
                                              time_limit=min(case.time_limit, 45.0)))
    return chosen


CASES = _cases()


def test_the_sample_covers_every_surface():
    assert sum(len(v) for v in CI.values()) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.surface}: {c.name}" for c in CASES])
def test_hostile_input_is_read_cleanly(case, foreign_seed):
    result = attack.run_case(case, foreign_seed)
    assert not result.failures, "\n".join(result.failures)
    assert result.peak_rss < attack.MEMORY_LIMIT
