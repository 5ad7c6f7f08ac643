"""A received store never makes kinspect import a file it names, on a GPU (issue 39, item 2).

Two variants of a user kernel dumped for the device (BLOCK=128 and 256, its example 16M floats), its
file removed, its records edited to name a marker-writing evil.py, one inside the store and one outside
(tests/helpers.py PlantedStore: a file that passes the old importability check). `kinspect diff STORE
--pair 1,2` times both saved variants and `kinspect bench k -p BLOCK=256 --store STORE` benches one,
each from the source and example launch the store holds: no marker is written, and the times and GB/s
are there."""

import json
import shutil

import pytest
from click.testing import CliRunner

from kinspect.cli import main
from tests.helpers import PlantedStore, store_named_kernel

N = 1 << 24


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = tmp_path_factory.mktemp("replaysafe-gpu")
    src = root / "kern.py"
    src.write_text(store_named_kernel(N))
    store = root / "store"
    for block in (128, 256):
        r = run("dump", f"{src}:k", "-p", f"BLOCK={block}", "--store", store)
        assert r.exit_code == 0, r.output
    src.unlink()
    p = PlantedStore(store, root)
    yield p
    p.untouched()
    shutil.rmtree(root, ignore_errors=True)


def test_diff_of_the_planted_store_times_both_variants_and_imports_nothing(planted):
    r = run("diff", planted.store, "--pair", "1,2", "--json")
    assert r.exit_code == 0, r.output
    planted.untouched()
    d = json.loads(r.output)
    assert not [n for n in d["notes"] if "not timed" in n], d["notes"]
    for row in d["variants"]:
        t = row["runtime"]
        assert t is not None and t["median_ms"] > 0 and t["gb_per_s"] > 100, row
    print("diff:", [(row["constexprs"], row["runtime"]["median_ms"], round(row["runtime"]["gb_per_s"]))
                    for row in d["variants"]])


def test_bench_of_the_planted_store_runs_the_stored_source_and_imports_nothing(planted):
    r = run("bench", "k", "-p", "BLOCK=256", "--store", planted.store, "--json")
    assert r.exit_code == 0, r.output
    planted.untouched()
    d = json.loads(r.output)
    assert d["constexprs"]["BLOCK"] == 256 and d["throughput"]["gb_per_s"] > 100
    assert any("replays the example launch" in n for n in d["notes"])
    assert any("rebuilt from the source captured with it" in n for n in d["notes"])
    print("bench:", d["steady"]["ms"], round(d["throughput"]["gb_per_s"]))
