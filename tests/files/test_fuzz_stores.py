"""benchmarks/fuzz_stores.py in CI: a real capture (conftest.interpreted_capture) mutated in its
structure (types, ranges, sizes, keys, paths out of the store, code and escapes in names, links,
files cut short), read as kinspect's commands read it, on fewer inputs than the benchmark runs:
no exception but kinspect's own one-line errors, no secret from outside the store in any output,
every repro script written parses and holds no code but the kernel's own."""

import importlib.util
import sys

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.slow       # subprocesses or many compiles: -m 'not slow' leaves it out

_spec = importlib.util.spec_from_file_location("fuzz_stores", ROOT / "benchmarks" / "fuzz_stores.py")
fuzz = importlib.util.module_from_spec(_spec)
sys.modules["fuzz_stores"] = fuzz
_spec.loader.exec_module(fuzz)

INPUTS = 250        # about 30 s here


def test_structure_mutated_stores_read_cleanly(interpreted_capture, tmp_path, monkeypatch):
    store, _, _ = interpreted_capture
    monkeypatch.chdir(tmp_path)      # where injected code would leave its marker
    stats = fuzz.fuzz(store, INPUTS, seed=27)
    assert not stats.failures, "\n\n".join(f"input {i}: {'; '.join(done)}\n{what}" for i, done, what in stats.failures[:3])
    assert stats.inputs == INPUTS and sum(stats.mutations.values()) >= INPUTS
    assert {"retype", "drop", "code", "path", "link"} <= set(stats.mutations)
    assert stats.located > INPUTS // 2 and stats.scripts > INPUTS, stats     # they reached the readers and scripts
    assert not (tmp_path / "MARKER").exists()


def test_script_is_data_catches_code_at_the_top_level():
    """The check the fuzzer puts repro scripts through would see code the store slipped in."""
    import pytest

    fuzz.script_is_data('"""doc"""\nimport torch\nGRID = (1,)\nX = float("nan")\ndef k():\n    pass\n')
    for bad in ('"""doc"""\nX = __import__("os").system("x")\n', '"""doc"""\nprint(1)\n',
                '"""doc"""\nfor i in range(3):\n    pass\n', '"""doc"""\n"""not a docstring"""\nimport os\nos.getcwd()\n'):
        with pytest.raises(fuzz.Failure):
            fuzz.script_is_data(bad)
