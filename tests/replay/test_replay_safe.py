"""A received store never makes kinspect import a file it names (issue 39, item 2).

A store of two variants of a user kernel (`kinspect dump file.py:k -p BLOCK=128`, then 256), its
kernel file removed, its records edited to name a marker-writing `evil.py`: one inside the store,
one outside it. Every command that could run a stored variant again (diff's timing of saved
variants, bench, bench --interpret, repro, a sweep of a captured variant) must leave the markers
unwritten, and the legitimate path still runs the kernel from the source text the store holds.

Timing needs a GPU; here diff's timer is replaced by one that makes the very Launch a GPU would time
(kinspect.bench.runtime.variant_launch) and launches it through Triton's real JIT path on a driver
that compiles and does not run (tests/dryrun.py). tests/gpu/test_replay_safe_live.py does it on a GPU.
"""

from __future__ import annotations

import json
import shutil
import textwrap

import pytest

from tests.helpers import KERNEL_LINE, one_error_line, PlantedStore as Planted, run_raising as run, STORE_NAMED_KERNEL as KERNEL


@pytest.fixture(scope="session")
def dumped(tmp_path_factory):
    """A store of k at BLOCK=128 and 256, compiled from a file that is then removed."""
    root = tmp_path_factory.mktemp("replaysafe")
    src = root / "kern.py"
    src.write_text(KERNEL)
    store = root / "store"
    for block in (128, 256):
        r = run("dump", f"{src}:k", "-p", f"BLOCK={block}", "-t", "cuda:90", "--store", store)
        assert r.exit_code == 0, r.output
    src.unlink()
    return store


@pytest.fixture
def planted(dumped, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "store"
    shutil.copytree(dumped, store)
    p = Planted(store, tmp_path)
    assert Planted.evil_text(p.markers[0]).splitlines()[KERNEL_LINE - 1] == "@triton.jit"     # the captured line
    yield p
    p.untouched()


def test_the_planted_file_would_pass_the_importability_check(planted):
    """The attack is real: evil.py holds the captured kernel at its captured line and only defines
    things at its top level, so the old `plan` imported it (and repro scripts still may)."""
    from kinspect.files.store import read_record
    from kinspect.replay.spec import importable

    v = read_record(planted.folders()[0])
    assert importable(v.source) == (True, "")


def test_diff_times_saved_user_variants_from_the_store_without_importing(planted, monkeypatch):
    from kinspect.bench import runtime
    from kinspect.bench.stats import Runtime
    from tests.dryrun import dry_run

    launches = []

    def device_timer(size, own=()):
        def timer(v):
            launch = runtime.variant_launch(v, size, own, device="cpu")
            with dry_run("cuda:90") as driver:
                launch()
            launches.append((launch, driver.launched[-1].grid))
            return Runtime(median_ms=1.0, p20_ms=1.0, p80_ms=1.0)
        return timer

    monkeypatch.setattr(runtime, "device_timer", device_timer)
    r = run("diff", planted.store, "--pair", "1,2", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert all(row["runtime"] for row in d["variants"]), d["notes"]
    assert [g for _, g in launches] == [(32, 1, 1), (16, 1, 1)]
    for launch, _ in launches:
        assert launch.bytes_moved == 2 * 4096 * 4 and launch.constexprs["BLOCK"] in (128, 256)
        assert "rebuilt from the source captured with it" in launch.notes[0]


def test_a_stored_autotuned_variant_does_not_run_its_files_autotuner(planted):
    from kinspect.bench.runtime import autotuner_pick
    from kinspect.files.store import read_record

    folder = planted.folders()[0]
    planted.edit(folder, lambda d: d["user"].update(autotune={"configs": 2, "config": {"index": 0}}))
    pick = autotuner_pick(read_record(folder), device="cpu")
    assert "kinspect does not import a file a store names" in pick["skipped"]


def test_bench_names_one_of_several_variants_as_its_hint_says(planted):
    r = run("bench", "k", "--interpret", "--store", planted.store)
    hint = one_error_line(r, "'k' matches 2 variants")
    assert "-p BLOCK=256 (#2)" in hint
    r = run("bench", "k", "-p", "BLOCK=256", "--interpret", "--store", planted.store)
    assert r.exit_code == 0, r.output
    assert "grid (16, 1, 1)" in r.output
    r = run("bench", "k", "-p", "BLOCK=64", "--interpret", "--store", planted.store)
    one_error_line(r, "-p BLOCK=64 does not apply", "no variant of 'k' the store holds has it")
    r = run("bench", "k", "-p", "BLOCK=256", "--store", planted.store)     # no GPU here: its hints name it so too
    one_error_line(r, "no device here", "kinspect bench k -p BLOCK=256 --store", "--interpret")


def test_a_record_without_its_captured_source_says_what_it_lacks(planted):
    """No source.json: the record's text alone does not define SCALE; kinspect names it and the file
    the user may time it from, and imports nothing."""
    folder = planted.folders()[0]
    (folder / "source.json").unlink()
    r = run("bench", "k", "-p", "BLOCK=128", "--interpret", "--store", planted.store)
    line = one_error_line(r, "SCALE", "does not import")
    assert f"kinspect bench {planted.evil[0]}:k" in line


def test_a_captured_variant_is_swept_and_repro_written_without_importing(planted):
    """A variant with launch records and no captured source, its record naming evil.py: a sweep
    recompiles it from the record's text, and repro writes a script, importing nothing."""
    folder = planted.folders()[1]
    (folder / "source.json").unlink()

    def captured(d):
        d["source"]["text"] = d["source"]["text"].replace("* SCALE", "* 2.0")
        example = d["user"].pop("example")
        d["launches"] = {"calls": 3, "signatures": [{"grid": example["grid"], "args": example["args"], "calls": 3}]}

    planted.edit(folder, captured)
    r = run("diff", folder, "-p", "BLOCK=64,128", "--no-bench", "-j", "1", "-t", "cuda:90",
            "--store", planted.tmp / "swept")
    assert r.exit_code == 0, r.output
    r = run("repro", folder, "-o", planted.tmp / "r.py", "--embed")
    assert r.exit_code == 0, r.output
    assert "embeds the source text in its record" in r.output


def test_rebuilding_from_text_names_every_global_it_lacks():
    from kinspect.replay import source

    text = textwrap.dedent('''\
        @triton.jit
        def k(x, N: tl.constexpr):
            helper(x)
            tl.store(x, SCALE * tl.load(x) + OFFSET)
        ''')
    fn = source.rebuild_text("k", text, "/nowhere/k.py", 1, imports=source.TRITON_IMPORTS)
    assert source.unbound(fn, text) == ["OFFSET", "SCALE", "helper"]


def test_only_a_file_named_on_the_command_line_is_loaded_again(planted):
    """The rule diff's timer and the autotuner's pick follow: a record's kernel file is loaded only where the
    user typed that very kernel (kinspect.compile.loader.absolute of it) on this command line."""
    from kinspect.bench.runtime import named_by_user
    from kinspect.files.store import read_record

    v = read_record(planted.folders()[0])
    assert not named_by_user(v, ())
    assert not named_by_user(v, {f"{planted.evil[1]}:k"})
    assert named_by_user(v, {f"{planted.evil[0]}:k"})
