"""benchmarks/fuzz_foreign.py in CI: a real compile's Triton cache entry, TRITON_KERNEL_DUMP folder and
tritonparse trace mutated in their structure (metadata and events of other types and ranges, stage
files turned into links out, FIFOs, directories, binary; entries linked out; traces gzipped, cut,
given garbage lines) and read as kinspect's commands read them, on fewer inputs than the benchmark."""

import importlib.util
import sys
from tests.helpers import ROOT
import pytest

pytestmark = pytest.mark.slow       # subprocesses or many compiles: -m 'not slow' leaves it out

_spec = importlib.util.spec_from_file_location("fuzz_foreign", ROOT / "benchmarks" / "fuzz_foreign.py")
fuzz = importlib.util.module_from_spec(_spec)
sys.modules["fuzz_foreign"] = fuzz
_spec.loader.exec_module(fuzz)

INPUTS = 300


def test_structure_mutated_foreign_inputs_read_cleanly(foreign_seed, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stats = fuzz.fuzz(foreign_seed, INPUTS, seed=39)
    assert not stats.failures, "\n\n".join(f"input {i} ({k}): {'; '.join(d)}\n{w}" for i, k, d, w in stats.failures[:3])
    assert stats.inputs == INPUTS and set(stats.kinds) == {"cache", "dump", "trace"}
    assert {"retype", "fifo", "link", "entry", "ttgir"} <= set(stats.mutations), stats.mutations
    assert stats.located > INPUTS // 3, stats      # the mutations reached the readers
