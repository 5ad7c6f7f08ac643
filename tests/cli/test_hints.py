"""Every command line kinspect suggests runs as printed (issue 43): in the scenarios below (a captured
program's store with two variants of one kernel, no GPU here), each `kinspect ...` a message names and
each way of naming one of several variants is run with the store and values it names, and must do
what it says: run, and pick the variant the message meant."""

import re
import shlex
import shutil

import pytest

from tests.helpers import run

# `kinspect bench add_kernel --store /tmp/s --interpret`: a command in backquotes inside a message
HINT_RE = re.compile(r"`kinspect ([^`]+)`")
# -p BLOCK=64 (#1); cuda-90_BLOCK-64_w4_s3_08f7e629 (#3): one way to name one of several variants
NAMING_RE = re.compile(r"(?:^|; )((?:-p \S+ ?)+|\S+) \(#(\d+)\)")


def hints(text: str) -> list[list[str]]:
    return [shlex.split(m) for m in HINT_RE.findall(text)]


def test_hint_regexes_read_their_examples():
    assert hints("x `kinspect bench add_kernel --store '/tmp/a b' --interpret` y") == [
        ["bench", "add_kernel", "--store", "/tmp/a b", "--interpret"]]
    assert NAMING_RE.findall("-p BLOCK=64 (#1); cuda-90_BLOCK-64_w4_s3_08f7e629 (#3)") == [
        ("-p BLOCK=64", "1"), ("cuda-90_BLOCK-64_w4_s3_08f7e629", "3")]


@pytest.fixture
def store(interpreted_capture, tmp_path, monkeypatch):
    """A copy of the captured program's store; the working folder is a fresh one (repro writes there)."""
    captured, _, _ = interpreted_capture
    copy = tmp_path / "cap"
    shutil.copytree(captured, copy)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return copy


def _no_gpu():
    import torch

    if torch.cuda.is_available():
        pytest.skip("the no-device hints are printed where no GPU is")


def test_a_variant_never_launched_is_not_offered_to_replay(store):
    r = run("bench", "add_kernel", "-p", "BLOCK=128", "--store", store)
    assert r.exit_code == 2 and "the program never launched it" in r.output and not hints(r.output), r.output


@pytest.mark.parametrize("args", [["bench", "add_kernel"], ["bench", "add_kernel", "-p", "BLOCK=64"],
                                  ["bench", "ROW"], ["tune", "softmax_rows"]])
def test_every_suggested_command_runs_as_printed(store, args):
    _no_gpu()
    # ROW: the ls row of row_sum's aligned launch (other tests add variants to the captured store before the copy)
    listing = run("ls", store).output.splitlines()
    row = next(line.split()[0] for line in listing if " row_sum " in line and "(x_ptr aligned)" in line)
    r = run(*[row if a == "ROW" else a for a in args], "--store", store)
    assert r.exit_code == 2, r.output
    found = hints(r.output)
    assert found and all(f"--store {store}" in shlex.join(h) for h in found), r.output
    for h in found:
        done = run(*h)
        assert done.exit_code == 0, (h, done.output)
        if h[0] == "repro":
            assert (store.parent / "work" / "repro.py").is_file()


def test_each_way_offered_to_name_one_of_several_variants_names_it(store):
    r = run("show", "add_kernel", "--store", store, "--stage", "ttir")
    assert r.exit_code == 2 and "matches 2 variants" in r.output, r.output
    offered = NAMING_RE.findall(r.output.rsplit(f"{store}: ", 1)[-1])
    assert len(offered) == 2, r.output
    listing = run("ls", store).output.splitlines()
    for naming, number in offered:
        folder = next(line.split()[-1] for line in listing if line.split()[:1] == [number])
        ttir = next((store / "add_kernel" / folder).glob("*.ttir")).read_text()
        by_values = ["add_kernel", *naming.split()] if naming.startswith("-p ") else [naming]
        for args in (by_values, [number]):
            shown = run("show", *args, "--store", store, "--stage", "ttir")
            assert shown.exit_code == 0, (args, shown.output)
            assert shown.output.strip() == ttir.strip(), (args, folder)
