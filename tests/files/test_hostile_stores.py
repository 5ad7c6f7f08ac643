"""Stores edited by an attacker, made from a real capture (conftest.interpreted_capture: `kinspect
capture --interpret -t cuda:90` of a real-style program), as people send each other captures and
attach reports to issues.

Every case copies the store, edits it as a hostile sender would, and runs the commands that read it.
Whatever the case, the same things hold (checked by `cli` and the `world` fixture's teardown):
no traceback; no byte of a secret file outside the store in any output (stdout, stderr, an HTML
report); no raw control character from the store on the terminal; injected code never runs (its
marker file is never created, also when the repro scripts written are run under TRITON_INTERPRET);
every script written parses; nothing outside the store is written.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from kinspect.cli import main
from tests.helpers import ROOT


@dataclass
class World:
    store: Path
    secret: Path        # a file outside the store; its token must never be shown
    token: str
    marker: Path        # injected code would create it
    tmp: Path
    outputs: list

    # Python that creates the marker (in the working folder, the test's) when run
    inject = "__import__('pathlib').Path('MARKER').touch()"

    def variant(self, kernel: str, i: int = 0) -> Path:
        return sorted((self.store / kernel).glob("cuda-*"))[i]

    def edit(self, path: Path, change) -> None:
        d = json.loads(path.read_text())
        change(d)
        path.write_text(json.dumps(d))


@pytest.fixture
def world(interpreted_capture, tmp_path, monkeypatch):
    store, _, _ = interpreted_capture
    monkeypatch.chdir(tmp_path)
    copy = tmp_path / "store"
    shutil.copytree(store, copy, symlinks=True)
    for extra in copy.glob("*/cuda-*"):       # what other tests compiled into the shared store
        if not (extra / "source.json").exists():
            shutil.rmtree(extra)
    token = f"KINSPECT-SECRET-{uuid.uuid4().hex}"
    (tmp_path / "outside").mkdir()
    secret = tmp_path / "outside" / "secret.txt"
    secret.write_text(f"{token}\n")
    w = World(copy, secret, token, tmp_path / "MARKER", tmp_path, [])
    yield w
    assert not w.marker.exists(), "code from the store ran"
    assert secret.read_text() == f"{token}\n", "a file outside the store was written"
    assert sorted(p.name for p in secret.parent.iterdir()) == ["secret.txt"], "something was written outside"
    for text in w.outputs:
        assert w.token not in text


def cli(w: World, *args, code=(0,), line: str | None = None):
    """Run a command; its output has no traceback, no secret, no raw control character."""
    r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)
    out = r.output
    w.outputs.append(out)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in out, out
    assert w.token not in out
    assert not any(c in out for c in "\x1b\x07\x9b\u202e"), repr(out)
    assert r.exit_code in code, (r.exit_code, out)
    if line is not None:
        found = [ln for ln in out.splitlines() if line in ln]
        assert found, (line, out)
    return r


def report(w: World, *items):
    """`kinspect report` of items; the HTML (its gzipped stage blobs unpacked) holds no secret."""
    import base64
    import gzip
    import re

    html = w.tmp / f"r{len(w.outputs)}.html"
    r = cli(w, "report", *items, "-o", html, "--no-bench")
    if html.exists():
        text = html.read_text()
        blobs = re.findall(r'id="blob-[0-9a-f]+">([A-Za-z0-9+/=]+)<', text)
        assert blobs
        w.outputs += [text] + [gzip.decompress(base64.b64decode(b)).decode() for b in blobs]
    return r


def repro(w: World, name: str, *extra, code=(0,), line=None):
    """`kinspect repro`; a script written parses and is kept for running; none is written on error."""
    out = w.tmp / f"repro{len(w.outputs)}.py"
    r = cli(w, "repro", name, "--store", w.store, "-o", out, *extra, code=code, line=line)
    if r.exit_code == 0:
        ast.parse(out.read_text())
    else:
        assert not out.exists() and not list(w.tmp.glob(f".{out.name}*")), "nothing half-written"
    return out if r.exit_code == 0 else None


def run_scripts(w: World, *scripts: Path) -> str:
    """Run repro scripts under TRITON_INTERPRET in one child process (one torch import)."""
    each = "import runpy, sys\nfor p in sys.argv[1:]: runpy.run_path(p, run_name='__main__')"
    proc = subprocess.run([sys.executable, "-c", each, *map(str, scripts)], capture_output=True, text=True,
                          timeout=300, cwd=w.tmp, env={**os.environ, "TRITON_INTERPRET": "1"})
    w.outputs += [proc.stdout, proc.stderr]
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def stage(w: World, variant: Path, name: str) -> dict:
    d = json.loads((variant / "record.json").read_text())
    return next(s for s in d["stages"] if s["name"] == name)


def point_stage(w: World, variant: Path, name: str, file: str) -> None:
    def change(d):
        next(s for s in d["stages"] if s["name"] == name)["file"] = file
    w.edit(variant / "record.json", change)


# -- 1. containment: paths from a store stay in it ----------------------------------------------------

@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink", "symlinked-dir"])
def test_a_stage_file_outside_the_variant_folder_is_not_read(world, how):
    w = world
    v = w.variant("row_sum")
    if how == "absolute":
        point_stage(w, v, "ptx", str(w.secret))
    elif how == "dotdot":
        point_stage(w, v, "ptx", "../../../outside/secret.txt")
    elif how == "symlink":
        (v / stage(w, v, "ptx")["file"]).unlink()
        (v / stage(w, v, "ptx")["file"]).symlink_to(w.secret)
    else:
        (v / "sub").symlink_to(w.secret.parent)
        point_stage(w, v, "ptx", "sub/secret.txt")
    one = cli(w, "show", v, "--stage", "ptx", code=(2,), line=f"variant {v.name}: stage ptx:")
    assert len(one.output.strip().splitlines()) == 1 and "not read" in one.output
    cli(w, "show", v, "--stage", "ttir")                       # the rest of the variant works
    ls = cli(w, "ls", w.store, line=f"warning: variant {v.name}: stage ptx:")
    assert "5 variant(s)" in ls.output
    vec = cli(w, "vec-report", w.store, "--all", line="stage ptx:")
    assert any(line.lstrip().startswith(("! stage ptx:", "- stage ptx:")) for line in vec.output.splitlines()), vec.output
    cli(w, "diff", v, w.variant("row_sum", 1), "--stage", "ptx", "--no-bench", code=(0, 2))
    report(w, v)


def test_a_variant_folder_that_links_out_of_the_store_is_skipped(world):
    w = world
    elsewhere = w.tmp / "outside-variant"
    shutil.copytree(w.variant("row_sum"), elsewhere)
    point_stage(w, elsewhere, "ptx", "secret.txt")
    shutil.copy(w.secret, elsewhere / "secret.txt")
    (w.store / "row_sum" / "cuda-90_BLOCK-64_w4_s3_00000000").symlink_to(elsewhere)
    ls = cli(w, "ls", w.store, line="its folder is a link out of the store")
    assert "5 variant(s)" in ls.output
    cli(w, "vec-report", w.store)
    shutil.rmtree(elsewhere)


def test_record_and_side_files_that_link_out_are_not_read(world):
    """record.json, source.json, a launch file and autotune.json as links to JSON outside the store."""
    w = world
    outside = w.secret.parent / "record.json"
    outside.write_text((w.variant("row_sum") / "record.json").read_text().replace('"row_sum"', f'"{w.token}"'))
    (w.variant("row_sum") / "record.json").unlink()
    (w.variant("row_sum") / "record.json").symlink_to(outside)
    (w.variant("softmax_rows") / "source.json").unlink()
    (w.variant("softmax_rows") / "source.json").symlink_to(outside)
    (w.variant("row_sum", 1) / "launches-h-1.json").symlink_to(outside)
    (w.store / "add_kernel" / "autotune.json").unlink()
    (w.store / "add_kernel" / "autotune.json").symlink_to(outside)
    cli(w, "ls", w.store, line="file 'record.json' is a link to a file outside the variant folder; skipped")
    cli(w, "vec-report", w.store, "--all")
    cli(w, "repro", "softmax_rows", "--store", w.store, "-o", w.tmp / "r.py", "--embed", code=(0, 2))
    cli(w, "repro", w.variant("row_sum", 1), "-o", w.tmp / "r2.py", line="launches-h-1.json")
    outside.unlink()


def test_writes_never_follow_links_planted_in_a_store(world):
    """The store's lock, a launch lock and a kernel folder as links out: writing into the store (a
    recompile of a captured variant with -o the store) writes nothing outside it."""
    w = world
    (w.store / ".kinspect.lock").unlink(missing_ok=True)
    (w.store / ".kinspect.lock").symlink_to(w.secret)
    r = cli(w, "diff", w.variant("row_sum"), "-p", "BLOCK=32", "--store", w.store, "--no-bench", "--table",
            code=(2,), line="lock file")
    assert len(r.output.strip().splitlines()) == 1
    (w.store / ".kinspect.lock").unlink()
    (w.store / "add").symlink_to(w.secret.parent, target_is_directory=True)
    cli(w, "dump", "add", "--store", w.store, code=(2,), line="is a link out of the store")


def test_a_triton_cache_entry_with_a_link_out_is_read_without_it(world, real_variant):
    w = world
    v = real_variant("add", "cuda:90")
    entry = w.tmp / "cache" / "ABCDEF"
    entry.mkdir(parents=True)
    for s in v.stages:
        shutil.copy(Path(v.path, s.file), entry / s.file)
    (entry / "add_kernel.json").write_text(json.dumps({"target": {"backend": "cuda", "arch": 90, "warp_size": 32},
                                                       "name": "add_kernel", "hash": "ABCDEF"}))
    (entry / "__grp__add_kernel.json").write_text(json.dumps({"child_paths": {}}))
    (entry / "add_kernel.ptx").unlink()
    (entry / "add_kernel.ptx").symlink_to(w.secret)
    cli(w, "ls", entry.parent, line="stage ptx: file 'add_kernel.ptx' is a link")
    cli(w, "show", "ABCDEF", "--store", entry.parent, "--stage", "ptx", code=(2,), line="not read")
    cli(w, "show", "ABCDEF", "--store", entry.parent, "--stage", "ttir")
    cli(w, "vec-report", entry.parent)


# -- 2. repro scripts carry data, never code -----------------------------------------------------------

def _source(w: World, kernel: str, change, i: int = 0) -> Path:
    v = w.variant(kernel, i)
    w.edit(v / "source.json", change)
    return v


@pytest.mark.parametrize("field", ["kernel", "import-name", "import-ref", "helper-name", "constant-name"])
def test_names_from_a_store_that_are_not_python_names_write_no_script(world, field):
    w = world
    bad = f"x; {w.inject}  # {{{w.inject}}}"      # one line: a record's names hold no line break (schema)

    def change(d):
        if field == "kernel":
            d["name"] = bad
        elif field == "import-name":
            d["imports"].append([bad, "os"])
        elif field == "import-ref":
            d["imports"].append(["np", f"os;{w.inject}"])
        elif field == "helper-name":
            d["helpers"][0][1]["name"] = bad
        else:
            d["helpers"][0][1]["constants"].append([bad, 1])

    v = _source(w, "softmax_rows", change)
    if field == "kernel":
        w.edit(v / "record.json", lambda d: d.update(kernel=bad))
    # without --embed the kernel is imported from its module (source.json is not used), unless its
    # own name is the bad one
    repro(w, v.name, "--interpret", code=(2,) if field == "kernel" else (0,), line="Python name"
          if field == "kernel" else "imports the kernel from")
    for extra in (("--embed",), ("--embed", "--interpret")):
        repro(w, v.name, *extra, code=(2,), line="is not a Python name")
    cli(w, "bench", v, "--interpret", code=(2,), line="Python name")


@pytest.mark.parametrize("text", [
    "import os\n{inject}\n@triton.jit\ndef row_sum(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):\n    pass\n",
    "@triton.jit\ndef row_sum(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr=({inject}, 64)[1]):\n    pass\n",
    "@triton.jit(do_not_specialize=[{inject}])\ndef row_sum(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):\n"
    "    pass\n",
    "@triton.jit\ndef row_sum(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):\n    pass\n{inject}\n",
    "@triton.jit\ndef row_sum(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr) -> {inject}:\n    pass\n",
    "def row_sum(: not python\n",
    "@triton.jit\ndef other(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):\n    pass\n",
], ids=["statement-before", "default", "decorator-args", "statement-after", "annotation", "not-python", "wrong-name"])
def test_a_kernel_source_that_is_more_than_its_definition_is_refused(world, text):
    w = world
    v = w.variant("row_sum")
    w.edit(v / "source.json", lambda d: d.update(text=text.format(inject=w.inject)))
    for extra in ((), ("--interpret",)):
        repro(w, v.name, *extra, code=(2,), line="the captured source")
    cli(w, "bench", v, "--interpret", code=(2,), line="the captured source")
    cli(w, "diff", v, "-p", "BLOCK=32", "--store", w.tmp / "out", "--no-bench", "--table", code=(2,))


def test_a_decorator_bound_to_something_else_than_triton_is_refused(world):
    """`@jit` where the store binds `jit` to atexit.register would run the kernel's body at exit."""
    w = world
    v = w.variant("row_sum")

    def change(d):
        d["text"] = d["text"].replace("@triton.jit", "@jit")
        d["imports"].append(["jit", "atexit:register"])

    w.edit(v / "source.json", change)
    repro(w, v.name, code=(2,), line="which is not Triton's")
    cli(w, "bench", v, "--interpret", code=(2,), line="not Triton's")


def test_a_module_a_store_names_is_not_imported_on_its_word(world, monkeypatch, tmp_path):
    """An installed module named by source.json's imports runs its code when imported: kinspect imports
    only Triton, torch, numpy, math, what this process imported already, or a package the user allows."""
    w = world
    lib = tmp_path / "lib"
    lib.mkdir()
    marker = tmp_path / "imported"
    (lib / "kinspect_planted_mod.py").write_text(f"open({str(marker)!r}, 'w').close()\nVALUE = 1\n")
    monkeypatch.syspath_prepend(str(lib))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(lib), os.environ.get("PYTHONPATH")])))
    v = w.variant("row_sum")
    w.edit(v / "source.json", lambda d: d["imports"].append(["planted", "kinspect_planted_mod"]))
    cli(w, "bench", v, "--interpret", code=(2,), line="which kinspect does not import on a record's word")
    assert not marker.exists()
    monkeypatch.setenv("KINSPECT_ALLOW_IMPORTS", "kinspect_planted_mod")
    cli(w, "bench", v, "--interpret")
    assert marker.exists()


def test_values_from_a_store_enter_a_script_as_literals(world):
    """A constant, a str argument and a float argument holding code, quotes, braces and newlines,
    a NaN constant: the script parses, runs under the interpreter, and runs none of it."""
    w = world
    nasty = f"\"\"\"'; {w.inject} #{{{w.inject}}}\n{w.inject}"
    v = w.variant("softmax_rows")

    def source(d):
        d["helpers"][0][1]["constants"] += [["NOTE", nasty], ["NAN", {"float": "nan"}],
                                            ["PAIR", {"tuple": [1, {"constexpr": 2}]}]]

    w.edit(v / "source.json", source)
    script = repro(w, v.name, "--embed", "--interpret")
    text = script.read_text()
    assert "NAN = float('nan')" in text and repr(nasty) in text
    assert "# softmax_rows: source from the store, " in text
    out = run_scripts(w, script)
    assert "ok: softmax_rows ran once on cpu" in out


def test_launch_values_of_the_wrong_kind_write_no_script(world):
    w = world
    v = w.variant("row_sum")

    def change(d):
        args = d["launches"]["signatures"][0]["args"]
        next(a for a in args if a["name"] == "n_cols")["value"] = f"1); {w.inject}; (1"

    w.edit(v / "record.json", change)
    repro(w, str(v), code=(2,), line="recorded as int with a value that is not one")

    def dtype(d):
        d["launches"]["signatures"][0]["args"][0]["dtype"] = f"float32', {w.inject}, '"

    v2 = w.variant("row_sum", 1)
    w.edit(v2 / "record.json", dtype)
    repro(w, str(v2), code=(2,), line="not a torch dtype")


def test_a_launch_that_does_not_match_the_kernels_parameters_writes_no_script(world):
    w = world
    v = w.variant("row_sum")

    def change(d):
        d["launches"]["signatures"][0]["args"][2]["name"] = "not_a_parameter"

    w.edit(v / "record.json", change)
    repro(w, v.name, "--embed", code=(2,), line="which its source does not take")


def test_description_and_paths_cannot_close_the_docstring(world):
    """The variant path, the captured file and the Triton version are data in the script's text."""
    w = world
    v = w.variant("row_sum")
    odd = f'x"""; {w.inject}; """'
    w.edit(v / "record.json", lambda d: d.update(triton_version=odd[:120]))
    w.edit(v / "source.json", lambda d: d.update(file=f"/tmp/{odd}.py"))
    script = repro(w, v.name, "--interpret")
    assert ast.get_docstring(ast.parse(script.read_text())).startswith("One captured launch of row_sum")
    assert "ok: row_sum ran once on cpu" in run_scripts(w, script)


# -- 3. records are checked against their schema ---------------------------------------------------------

@pytest.mark.parametrize("case", [
    (": times.stages[0][1] is a list", lambda d: d["times"]["stages"][0].__setitem__(1, [1, 2])),
    (": stages[0].name is a list", lambda d: d["stages"][0].__setitem__("name", ["ttir"])),
    (": target.backend is an object", lambda d: d["target"].__setitem__("backend", {"x": 1})),
    (": launches.signatures[0].args[0].name is an object",
     lambda d: d["launches"]["signatures"][0]["args"][0].__setitem__("name", {"a": 1})),
    (": launches.calls is -5", lambda d: d["launches"].__setitem__("calls", -5)),
    (": record_version is 99", lambda d: d.__setitem__("record_version", 99)),
    (": constexprs.BLOCK[0][0][0][0][0][0][0][0] is nested too deeply", lambda d: d["constexprs"].__setitem__("BLOCK", [[[[[[[[[[1]]]]]]]]]])),
    (" has an unknown key 'evil'", lambda d: d.__setitem__("evil", 1)),
    (": kernel holds a line break", lambda d: d.__setitem__("kernel", "row_sum\nfake_kernel  cuda:90")),
    (": notes has 100,000 items", lambda d: d.__setitem__("notes", ["x"] * 100_000)),
], ids=lambda c: c[0].strip(": ") if isinstance(c, tuple) else None)
def test_a_record_of_the_wrong_shape_skips_its_variant_with_one_line(world, case):
    needle, change = case
    w = world
    v = w.variant("row_sum")
    w.edit(v / "record.json", change)
    ls = cli(w, "ls", w.store, line=f"variant row_sum/{v.name}: record.json{needle}")
    assert "4 variant(s)" in ls.output
    cli(w, "vec-report", w.store, line="skipped")
    cli(w, "show", v, "--stage", "ptx", code=(2,), line="record.json")
    cli(w, "repro", v, "-o", w.tmp / "r.py", code=(2,), line="record.json")


def test_a_launch_file_autotune_file_and_source_of_the_wrong_shape_are_one_line_each(world):
    w = world
    v = w.variant("row_sum", 1)
    (v / "launches-h-1.json").write_text(json.dumps({"launches": {"calls": "many"}}))
    (w.store / "add_kernel" / "autotune.json").write_text(json.dumps([{"kernel": ["x"], "best": {}}]))
    w.edit(w.variant("softmax_rows") / "source.json", lambda d: d.update(line="thirteen"))
    cli(w, "ls", w.store, line="launches-h-1.json: launches.calls is a string, expected a whole number")
    cli(w, "repro", "softmax_rows", "--store", w.store, "-o", w.tmp / "r.py", "--embed", code=(2,),
        line="source.json: line is a string")
    from kinspect.files.store import read_autotune

    problems: list = []
    assert read_autotune(w.store, problems) == [] and "kernel is a list" in problems[0]


def test_a_pending_interpreted_capture_of_the_wrong_shape_or_hostile_is_one_line(world):
    """`.kinspect-interpret` files a store carries: one that is not one is said; one whose kernel
    source holds code is compiled by nobody (its compile error is the line), and nothing runs."""
    w = world
    pending = w.store / ".kinspect-interpret"
    pending.mkdir()
    (pending / "h-1.json").write_text(json.dumps({"host": "h", "pid": 1, "specs": [{"spec": {"kernel": 3}}]}))
    spec = {"kernel": "k", "target": "cuda:90", "grid": [1, 1, 1], "signature": {"x": "i32"},
            "args": [{"name": "x", "kind": "int", "value": 1}],
            "source": {"name": "k", "file": "k.py", "line": 1,
                       "text": f"{w.inject}\n@triton.jit\ndef k(x):\n    pass\n"}}
    (pending / "h-2.json").write_text(json.dumps({"host": "h", "pid": 2, "specs": [{"spec": spec}]}))
    cli(w, "ls", w.store, line="kinspect capture --resume")
    r = cli(w, "capture", "--resume", w.store, code=(0,))
    assert "h-1.json: specs[0].spec lacks" in r.output and "was not compiled" in r.output
    assert not pending.exists()


# -- 4. what the terminal is sent -------------------------------------------------------------------------

def test_control_characters_from_a_store_are_shown_escaped(world):
    w = world
    v = w.variant("row_sum")
    evil = "row\x1b]0;pwned\x07\x1b[2J\x9b31m\u202esum"

    def change(d):
        d["kernel"] = evil
        d["notes"] = [f"see \x1b[31mred\x1b[0m\nfake line"]

    w.edit(v / "record.json", change)
    shown = "row\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202esum"
    for args in (("ls", w.store), ("vec-report", w.store, "--all"), ("vec-report", v)):
        assert shown in cli(w, *args).output
    assert "see \\x1b[31mred\\x1b[0m\\x0afake line" in cli(w, "vec-report", v).output     # a note: one line
    cli(w, "diff", v, w.variant("row_sum", 1), "--no-bench")
    # a stage shown on a terminal: escaped (into a pipe it goes as it is, as the file is)
    import pty

    (v / stage(w, v, "ptx")["file"]).write_text("\x1b]0;title\x07// ptx \x1b[2J\n")
    kinspect = Path(sys.executable).parent / "kinspect"
    main_fd, tty = pty.openpty()
    proc = subprocess.run([str(kinspect), "show", str(v), "--stage", "ptx"], stdout=tty, stderr=tty, timeout=120,
                          env={**os.environ, "NO_COLOR": "1"})
    os.close(tty)
    shown = os.read(main_fd, 65536).decode()
    os.close(main_fd)
    assert proc.returncode == 0 and "\\x1b]0;title\\x07// ptx \\x1b[2J" in shown and "\x1b" not in shown, repr(shown)


def test_a_store_path_that_is_not_utf8_works(world):
    w = world
    odd = Path(os.fsdecode(str(w.tmp).encode() + b"/st\xff\x9bre"))
    shutil.move(str(w.store), odd)
    cli(w, "ls", odd)
    cli(w, "vec-report", odd)
    cli(w, "show", sorted(odd.glob("row_sum/cuda-*"))[0], "--stage", "ttir")
    report(w, odd)
    script = repro(w, sorted(odd.glob("row_sum/cuda-*"))[0].as_posix(), "--interpret")
    assert "ok: row_sum ran once" in run_scripts(w, script)


# -- 5. folders and values ---------------------------------------------------------------------------------

def test_a_folder_with_nothing_readable_exits_2(world):
    w = world
    empty = w.tmp / "empty"
    empty.mkdir()
    for command in ("vec-report", "ls", "report"):
        cli(w, command, empty, *(("-o", w.tmp / "x.html") if command == "report" else ()), code=(2,),
            line="is an empty folder")


def test_stores_are_not_written_into_a_triton_cache_or_dump_folder(world, monkeypatch):
    w = world
    cache, dump = w.tmp / "triton-cache", w.tmp / "triton-dump"
    (cache / "ABC").mkdir(parents=True)
    dump.mkdir()
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    monkeypatch.setenv("TRITON_DUMP_DIR", str(dump))
    cli(w, "dump", "add", "--store", cache / "ABC" / "out", code=(2,), line="which kinspect only reads")
    cli(w, "dump", "add", "--store", dump, code=(2,), line="which kinspect only reads")
    cli(w, "capture", "--store", cache, "--", sys.executable, "-c", "pass", code=(2,), line="which kinspect only reads")
    cli(w, "repro", w.variant("row_sum"), "-o", cache / "ABC" / "r.py", code=(2,), line="which kinspect only reads")
    assert list(cache.rglob("*")) == [cache / "ABC"] and list(dump.iterdir()) == []


@pytest.mark.parametrize("argv, needle", [
    (["dump", "add", "-p", "BLOCK_SIZE=abc"], "takes a whole number for BLOCK_SIZE"),
    (["dump", "add", "-p", "BLOCK_SIZE=0"], "cannot make its example arguments"),
    (["dump", "softmax", "-p", "BLOCK_N=abc"], "cannot make its example arguments"),
    (["dump", "tests/data/user_kernels.py:good_kernel", "--arg", "x_ptr=*fp32:99999999999999999999"],
     "more than any tensor"),
    (["dump", "tests/data/user_kernels.py:good_kernel", "--arg", "x_ptr=*fp32:100000x100000x100"],
     "cannot make a tensor"),
])
def test_every_option_value_error_is_one_line(world, argv, needle, monkeypatch):
    monkeypatch.chdir(ROOT)
    r = cli(world, *argv, "--store", world.tmp / "out", code=(2,), line=needle)
    assert len(r.output.strip().splitlines()) == 1
