"""Fuzz kinspect's store readers with stores mutated in their structure, as someone who sends a store
could: JSON values of another type, out of range or huge, keys taken out or added, lists swollen,
strings that are paths out of the store, code, quotes or terminal escapes, stage files that are
links out of the store, files cut short.

    python benchmarks/fuzz_stores.py [--store DIR] [--n 2000] [--seed 0] [--save DIR] [--show 5]

The seed is a real capture: `--store` (a store `kinspect capture` wrote), else one made here by
`kinspect capture --interpret -t cuda:90` of a small program (a kernel with a helper and a constexpr
global, an autotuned kernel). Its JSON files (records, kernel sources, autotune decisions, and a
launch file and a pending interpreted capture made from its records) are what is mutated.

Each input is a copy of the store with 1-4 mutations; then kinspect reads it as its commands do:
`ls` and `show` (CliRunner), every stage's text, the analysis of a variant, the replay spec and the
repro script of each captured variant, the autotune decisions, the pending capture. A failure is an
exception other than a KinspectError (kinspect's one-line errors), a command that exits other than
0 or 2 or prints a traceback, output holding the secret planted outside the store or a raw control
character, a repro script that does not parse or holds code outside the kernel's own definitions.
Prints the inputs, the mutations by kind, the failures (with the input's mutations) and exits 1 when
any failed. tests/files/test_fuzz_stores.py runs the same on fewer inputs in CI.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import random
import re
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

PROGRAM = '''\
import torch
import triton
import triton.language as tl

SCALE = tl.constexpr(2.0)


@triton.jit
def _twice(x):
    return x * SCALE


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, _twice(tl.load(x_ptr + offs, mask=m)), mask=m)


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def add(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(c_ptr + offs, tl.load(a_ptr + offs, mask=m) + tl.load(b_ptr + offs, mask=m), mask=m)


x = torch.randn(300)
y = torch.empty_like(x)
scale[(5,)](x, y, 300, BLOCK=64)
scale[(3,)](x[1:], y[1:], 299, BLOCK=128)
add[lambda meta: (triton.cdiv(300, meta["BLOCK"]),)](x, x, y, 300)
'''

SECRET = "KINSPECT-FUZZ-SECRET-9f1c2e"
# strings a hostile store would try: paths out of it, code, quotes, terminal escapes, odd text
STRINGS = ("", "x" * 5000, "/etc/passwd", "../../../secret.txt", "a/../../secret.txt", "sub/../../secret.txt",
           "{__import__('os').system('touch MARKER')}", "x;\nimport os\nos.system('touch MARKER')", '"""', "'''",
           "\\", "\x1b]0;t\x07\x1b[2J", "\u202e", "row\nfake", "float32", "int", "tensor", "cuda", "ptx", "1e999",
           "nan", "constexpr", "triton.language", "os:system", "atexit:register", "\x00", "é", "\udcff")
NUMBERS = (0, -1, 1, 2**31, 2**63, 2**64, -2**63 - 1, 10**30, 1.5, -0.0, 1e308, math.nan, math.inf, -math.inf)


def other_value(rng: random.Random, old, pool: list):
    """A value of another kind than `old` (or the same kind, odd): what a hostile record holds."""
    pick = rng.randrange(10)
    if pick == 0:
        return None
    if pick == 1:
        return rng.choice((True, False))
    if pick == 2:
        return rng.choice(NUMBERS)
    if pick == 3:
        return rng.choice(STRINGS)
    if pick == 4:
        return [] if rng.random() < 0.5 else [old] * rng.choice((1, 2, 5000))
    if pick == 5:
        return {} if rng.random() < 0.5 else {rng.choice(STRINGS[:12]) or "k": old}
    if pick == 6:
        return f"__DEEP_{rng.choice((10, 100, 5000))}__"     # nested lists, spelled out when written
    if pick == 7 and pool:
        return rng.choice(pool)            # a value from elsewhere in the store
    if pick == 8 and isinstance(old, (int, float)) and not isinstance(old, bool):
        return rng.choice(NUMBERS)
    return rng.choice(STRINGS)


def _nodes(value, path=()):
    """(container, key, path) of every value inside `value`."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield value, k, path + (k,)
            yield from _nodes(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield value, i, path + (i,)
            yield from _nodes(v, path + (i,))


def _leaves(value) -> list:
    return [c[k] for c, k, _ in _nodes(value) if not isinstance(c[k], (dict, list))]


# -- structural mutations of one JSON document: each returns what it did, in words ---------------------

def retype(rng, doc, pool):
    nodes = list(_nodes(doc))
    if not nodes:
        return "retype (empty)"
    c, k, path = rng.choice(nodes)
    c[k] = other_value(rng, c[k], pool)
    return f"retype {_where(path)}"


def drop(rng, doc, pool):
    nodes = [n for n in _nodes(doc) if isinstance(n[0], dict)]
    if not nodes:
        return "drop (nothing)"
    c, k, path = rng.choice(nodes)
    del c[k]
    return f"drop {_where(path)}"


def add_key(rng, doc, pool):
    dicts = [doc] * isinstance(doc, dict) + [c[k] for c, k, _ in _nodes(doc) if isinstance(c[k], dict)]
    if not dicts:
        return "add (nothing)"
    rng.choice(dicts)[rng.choice(("evil", "__class__", "path", "problems", "record_version"))] = \
        other_value(rng, None, pool)
    return "add key"


def _expanded_size(obj, memo: dict) -> int:
    """About the length of json.dumps(obj), shared objects counted each time they appear, in time of the
    number of distinct objects (json.dumps of a swollen-twice list would not fit in memory)."""
    if id(obj) in memo:
        return memo[id(obj)]
    if isinstance(obj, dict):
        n = 2 + sum(len(str(k)) + 4 + _expanded_size(v, memo) for k, v in obj.items())
    elif isinstance(obj, list):
        n = 2 + sum(_expanded_size(x, memo) + 1 for x in obj)
    else:
        n = len(str(obj)) + 2
    memo[id(obj)] = n
    return n


def swell(rng, doc, pool):
    lists = [c[k] for c, k, _ in _nodes(doc) if isinstance(c[k], list) and c[k]]
    if not lists:
        return "swell (nothing)"
    target = rng.choice(lists)
    before = len(target)
    target.extend(target[:1] * rng.choice((10, 5000, 100_000)))
    # the copies are one object: a list swollen inside a list swollen before multiplies, and a document of
    # many GB would take the fuzzer itself past this machine's memory before kinspect read a byte of it
    if _expanded_size(doc, {}) > 64 << 20:
        del target[before:]
        return "swell (past 64 MB: left as it was)"
    return "swell list"


def path_out(rng, doc, pool):
    """A stage file, a source file or a variant path pointing out of the store."""
    spots = [(c, k, p) for c, k, p in _nodes(doc) if k in ("file", "variant", "path")]
    if not spots:
        return "path (nothing)"
    c, k, path = rng.choice(spots)
    c[k] = rng.choice(("/SECRET", "../../../../outside/secret.txt", "../../../outside/secret.txt",
                       "x/../../../../../outside/secret.txt", "./../../../../outside/secret.txt"))
    return f"path out {_where(path)}"


def code_in_name(rng, doc, pool):
    """Code, quotes or escapes in a name, a text or a value."""
    spots = [(c, k, p) for c, k, p in _nodes(doc) if isinstance(c[k], str)]
    if not spots:
        return "code (nothing)"
    c, k, path = rng.choice(spots)
    c[k] = rng.choice(STRINGS[5:])
    return f"code in {_where(path)}"


def _where(path) -> str:
    return ".".join("[]" if isinstance(p, int) else str(p) for p in path)[:60]


MUTATIONS = ((retype, 10), (drop, 4), (add_key, 2), (swell, 1), (path_out, 3), (code_in_name, 6))


# -- file-level mutations of the copied store ---------------------------------------------------------

def link_out(rng, store: Path, secret: Path) -> str:
    """A stage file, a side file or a folder as a link out of the store."""
    files = [p for p in store.rglob("*") if p.is_file() and not p.name.startswith(".")]
    victim = rng.choice(files)
    victim.unlink()
    victim.symlink_to(secret)
    return f"link {victim.parent.name[:20]}/{victim.name} out"


def cut_short(rng, store: Path, secret: Path) -> str:
    files = [p for p in store.rglob("*.json") if p.is_file() and not p.is_symlink()]   # not through a link
    if not files:
        return "cut (nothing)"
    victim = rng.choice(files)
    data = victim.read_bytes()
    victim.write_bytes(data[:rng.randrange(len(data) + 1)])
    return f"cut {victim.name}"


FILE_MUTATIONS = ((link_out, 2), (cut_short, 1))
DOCUMENTS = ("record.json", "source.json", "autotune.json", "launches-h-1.json", "h-1.json")


# -- the seed -----------------------------------------------------------------------------------------

def make_store(work: Path) -> Path:
    """A real capture of PROGRAM under the interpreter, compiled for cuda:90."""
    import subprocess

    (work / "prog.py").write_text(PROGRAM)
    store = work / "store"
    kinspect = Path(sys.executable).parent / "kinspect"
    r = subprocess.run([str(kinspect), "capture", "--interpret", "-t", "cuda:90", "--store", str(store), "--",
                        sys.executable, str(work / "prog.py")], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"the seed capture failed:\n{r.stderr[-3000:]}")
    return store


def prepare(store: Path, into: Path) -> Path:
    """A copy of `store` with the side files kinspect reads added from its own records: a launch file
    beside a variant and a pending interpreted capture (so their readers are fuzzed too)."""
    from kinspect.replay.spec import from_variant
    from kinspect.files.store import INTERPRET_PENDING, read_records

    seed = into / "seed"
    shutil.copytree(store, seed, symlinks=True)
    specs = []
    for v in read_records(seed):
        if v.launches is not None:
            (Path(v.path) / "launches-h-1.json").write_text(json.dumps({"launches": json.loads(
                (Path(v.path) / "record.json").read_text())["launches"]}))
            try:
                specs.append({"spec": from_variant(v).to_json(), "trial": False})
            except Exception:
                pass
    (seed / INTERPRET_PENDING).mkdir(exist_ok=True)
    (seed / INTERPRET_PENDING / "h-1.json").write_text(json.dumps({"host": "h", "pid": 1, "specs": specs}))
    return seed


# -- one input ------------------------------------------------------------------------------------------

class Failure(Exception):
    pass


@dataclass
class Stats:
    inputs: int = 0
    mutations: Counter = field(default_factory=Counter)
    located: int = 0            # inputs where kinspect said what was wrong (an error or warning the seed has not)
    scripts: int = 0            # repro scripts written and checked
    failures: list = field(default_factory=list)
    seconds: float = 0.0


def mutate_store(rng: random.Random, seed: Path, work: Path, secret: Path) -> tuple[Path, list[str]]:
    store = work / "store"
    if store.exists():
        shutil.rmtree(store)
    shutil.copytree(seed, store, symlinks=True)
    docs = sorted(p for p in store.rglob("*.json") if p.name in DOCUMENTS)
    done = []
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.15:
            f = rng.choices([f for f, _ in FILE_MUTATIONS], [w for _, w in FILE_MUTATIONS])[0]
            done.append(f(rng, store, secret))
            continue
        mine = [p for p in docs if p.is_file() and not p.is_symlink()]     # never write through a link
        if not mine:
            continue
        path = rng.choice(mine)
        try:
            doc = json.loads(path.read_text())
        except (ValueError, OSError, RecursionError):     # cut short or nested deep by an earlier mutation
            continue
        pool = _leaves(doc)[:200]
        f = rng.choices([f for f, _ in MUTATIONS], [w for _, w in MUTATIONS])[0]
        what = f(rng, doc, pool)
        text = json.dumps(doc, ensure_ascii=rng.random() < 0.5).replace('"/SECRET"', json.dumps(str(secret)))
        text = re.sub(r'"__DEEP_(\d+)__"', lambda m: "[" * int(m[1]) + "1" + "]" * int(m[1]), text)
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        done.append(f"{path.relative_to(store).as_posix()[:50]}: {what}")
    return store, done


def check_output(text: str, where: str) -> None:
    if SECRET in text:
        raise Failure(f"{where}: the secret from outside the store is in the output")
    if "Traceback" in text:
        raise Failure(f"{where}: a traceback:\n{text[-1500:]}")
    if any(c in text for c in "\x1b\x07\x9b\u202e"):
        raise Failure(f"{where}: a raw control character reached the output: {text[:300]!r}")


def script_is_data(text: str) -> None:
    """A repro script parses, and holds no code but its template and the kernel's own definitions:
    every statement at the top level is an import, a definition, an assignment of a literal, a name
    or one of the calls the template makes, the docstring or the __main__ guard."""
    tree = ast.parse(text)
    allowed_calls = {"float", "_load", "triton.language.constexpr", "triton.language.core.dtype",
                     "importlib.import_module"}
    for i, node in enumerate(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef)):
            continue
        if isinstance(node, ast.Expr) and i == 0 and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.If) and ast.unparse(node.test) == "__name__ == '__main__'":
            continue
        if isinstance(node, ast.Assign):
            if ast.unparse(node) == 'os.environ["TRITON_INTERPRET"] = "1"'.replace('"', "'"):
                continue
            for call in (n for n in ast.walk(node.value) if isinstance(n, ast.Call)):
                name = ast.unparse(call.func)
                if name not in allowed_calls and not name.startswith("importlib.import_module("):
                    raise Failure(f"the script calls {name} at its top level: {ast.unparse(node)[:200]}")
            continue
        raise Failure(f"the script has a top-level {type(node).__name__}: {ast.unparse(node)[:200]}")


def read_all(store: Path, rng: random.Random, stats: Stats, deep: bool) -> set[str]:
    """Read the store as kinspect's commands do; what kinspect said (its errors and warnings, with
    the store's folder taken out)."""
    import warnings

    from click.testing import CliRunner

    from kinspect import api

    from kinspect.files import sources
    from kinspect.cli import main
    from kinspect.core.errors import KinspectError, KinspectWarning
    from kinspect.replay import script
    from kinspect.replay.spec import from_variant
    from kinspect.program.pending import _pending
    from kinspect.files.store import INTERPRET_PENDING, read_autotune

    said: set[str] = set()
    runner = CliRunner()
    r = runner.invoke(main, ["ls", str(store)])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise Failure("ls: " + "".join(traceback.format_exception(r.exception))[-1500:])
    check_output(r.output, "ls")
    if r.exit_code not in (0, 2):
        raise Failure(f"ls exited {r.exit_code}")
    said |= set(r.output.replace(str(store), "S").splitlines()) if r.exit_code == 2 else {
        ln.replace(str(store), "S") for ln in r.output.splitlines() if "warning:" in ln}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KinspectWarning)
        try:
            listing = sources.discover(store)
        except KinspectError as e:
            return said | {str(e).replace(str(store), "S")}
        said |= {w.replace(str(store), "S") for w in listing.warnings}
        for v in listing.variants:
            for s in v.stages:
                try:
                    if not s.binary and SECRET in api.stage_text(v, s.name):
                        raise Failure(f"stage {s.name}: the secret from outside the store was read")
                except KinspectError as e:
                    said.add(str(e))
            try:
                spec = from_variant(v)
                text, _ = script.script(spec, embed=rng.random() < 0.5, interpret=True)
                script_is_data(text)
                stats.scripts += 1
            except KinspectError as e:
                said.add(str(e))
        if listing.variants and deep:
            from kinspect.analysis import analyse
            from kinspect.render.report import vec_report

            v = rng.choice(listing.variants)
            check_output(_cleaned(vec_report(analyse(v))), "vec-report")
            r = runner.invoke(main, ["show", v.path, "--stage", rng.choice([s.name for s in v.stages] or ["ptx"])])
            if r.exception is not None and not isinstance(r.exception, SystemExit):
                raise Failure("show: " + "".join(traceback.format_exception(r.exception))[-1500:])
            if SECRET in r.output or "Traceback" in r.output:
                raise Failure(f"show: {r.output[-500:]}")
        problems: list = []
        read_autotune(store, problems)
        said |= set(problems)
        if (store / INTERPRET_PENDING).is_dir():
            said |= set(_pending(store / INTERPRET_PENDING)[2])
    return said


def _cleaned(text: str) -> str:
    from kinspect.render.terminal import clean

    return clean(text, lines=True)


def fuzz(seed_store: Path, n: int, seed: int, save: Path | None = None, progress=None, deep_every: int = 10) -> Stats:
    from kinspect.core.errors import KinspectError

    stats = Stats()
    rng = random.Random(seed)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kinspect-fuzz-stores-") as tmp:
        tmp = Path(tmp)
        outside = tmp / "outside"
        outside.mkdir()
        secret = outside / "secret.txt"
        secret.write_text(SECRET + "\n")
        base = prepare(seed_store, tmp)
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
        plain = read_all(base, random.Random(seed), Stats(), deep=False)     # what the seed itself says
        for i in range(n):
            work = tmp / "w"
            work.mkdir(exist_ok=True)
            store, done = mutate_store(rng, base, work, secret)
            stats.inputs += 1
            stats.mutations.update(d.split(": ", 1)[-1].split(" ", 1)[0] for d in done)
            try:
                stats.located += bool(read_all(store, rng, stats, deep=i % deep_every == 0) - plain)
            except KinspectError:
                stats.located += 1
            except (Failure, Exception, RecursionError) as e:
                what = str(e) if isinstance(e, Failure) else "".join(traceback.format_exception(e))[-2000:]
                stats.failures.append((i, done, what))
                if save:
                    save.mkdir(parents=True, exist_ok=True)
                    shutil.copytree(store, save / f"failure-{i}", symlinks=True)
            if secret.read_text() != SECRET + "\n" or sorted(p.name for p in outside.iterdir()) != ["secret.txt"]:
                stats.failures.append((i, done, "a file outside the store was written"))
                secret.write_text(SECRET + "\n")
            if (Path.cwd() / "MARKER").exists():
                stats.failures.append((i, done, "injected code ran (MARKER made)"))
            if progress and (i + 1) % 100 == 0:
                progress(f"  {i + 1}/{n} inputs, {len(stats.failures)} failure(s)")
    stats.seconds = time.perf_counter() - t0
    return stats


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, default=None, help="a store a capture wrote (default: capture one here)")
    ap.add_argument("--n", type=int, default=2000, help="inputs (default 2000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", type=Path, default=None, help="copy each failing store here")
    ap.add_argument("--show", type=int, default=5, help="failures printed in full")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kinspect-fuzz-seed-") as work:
        store = a.store or make_store(Path(work))
        stats = fuzz(store, a.n, a.seed, a.save, progress=lambda s: print(s, file=sys.stderr))
    print(f"inputs: {stats.inputs:,}; structure-aware mutations: {sum(stats.mutations.values()):,} "
          f"({', '.join(f'{k} {v:,}' for k, v in stats.mutations.most_common())}); repro scripts checked: "
          f"{stats.scripts:,}; inputs kinspect said were wrong: {stats.located:,}; failures: {len(stats.failures)}; "
          f"{stats.seconds:.0f} s")
    for i, done, what in stats.failures[:a.show]:
        print(f"\n== input {i}: {'; '.join(done)}\n{what}")
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
