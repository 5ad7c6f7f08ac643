"""Fuzz kinspect's readers of what it did not write: Triton cache entries (their metadata JSON), dump
folders (stage files, TTGIR module attributes) and tritonparse traces (compilation and launch events),
mutated in their structure as a hostile sender or a broken disk could.

    python benchmarks/fuzz_foreign.py [--seed-dir DIR] [--n 10000] [--seed 0] [--show 5]

The seed is one real compile (benchmarks/attack_foreign.py make_seed: kernels/softmax.py's
softmax_kernel for cuda:90 with TRITON_KERNEL_DUMP, TRITON_CACHE_DIR and tritonparse on). Each input
copies one of its cache, dump folder or trace and applies 1-4 mutations: the JSON mutations of
benchmarks/fuzz_stores.py (values of another type or range, keys dropped or added, lists swollen,
paths out, code and escapes in strings) on the cache metadata or on one event of the trace, and file
mutations (a stage or entry as a link out to a secret, a FIFO, a directory, binary, cut short,
emptied; the trace gzipped, cut, or given garbage lines; TTGIR attributes of odd values).

Then kinspect reads it as its commands do: the listing (kinspect.files.sources.discover), every
stage's text, and every 10th input `ls`, `vec-report` and `show` through the CLI. A failure is an
exception other than kinspect's one-line errors, a command exiting other than 0 or 2 or printing a
traceback, output holding the secret planted outside or a raw control character, or an input read
for more than 20 s (a FIFO waited on). tests/files/test_fuzz_foreign.py runs the same on fewer inputs in CI.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
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

HERE = Path(__file__).resolve().parent


def _load(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


stores = _load("fuzz_stores")
attack = _load("attack_foreign")
SECRET = stores.SECRET
Failure = stores.Failure
INPUT_SECONDS = 20         # of CPU per input; an input that uses none for 15 s (a FIFO waited on) is hung


@dataclass
class Stats:
    inputs: int = 0
    kinds: Counter = field(default_factory=Counter)
    mutations: Counter = field(default_factory=Counter)
    located: int = 0
    failures: list = field(default_factory=list)
    seconds: float = 0.0


# -- mutations ------------------------------------------------------------------------------------------

def _json_mutation(rng: random.Random, doc, secret: Path) -> tuple[object, str]:
    pool = stores._leaves(doc)[:200]
    f = rng.choices([f for f, _ in stores.MUTATIONS], [w for _, w in stores.MUTATIONS])[0]
    what = f(rng, doc, pool)
    return doc, what


def _dumps(rng, doc, secret: Path) -> str:
    text = json.dumps(doc, ensure_ascii=rng.random() < 0.5).replace('"/SECRET"', json.dumps(str(secret)))
    return re.sub(r'"__DEEP_(\d+)__"', lambda m: "[" * int(m[1]) + "1" + "]" * int(m[1]), text)


def _stage_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and not p.name.endswith(".json"))


def file_mutation(rng: random.Random, root: Path, secret: Path) -> str:
    files = _stage_files(root)
    if not files:
        return "file (nothing)"
    victim = rng.choice(files)
    pick = rng.randrange(8)
    victim.unlink()
    if pick == 0:
        victim.symlink_to(secret)
        return "link out"
    if pick == 1:
        os.mkfifo(victim)
        return "fifo"
    if pick == 2:
        victim.mkdir()
        return "directory"
    if pick == 3:
        victim.write_bytes(bytes(rng.randrange(256) for _ in range(4096)) + b"\0")
        return "binary"
    if pick == 4:
        victim.write_text("")
        return "empty"
    if pick == 5:
        victim.symlink_to(victim.name + ".gone")
        return "dangling"
    if pick == 6:
        victim.write_text(f"\x1b]0;t\x07\x1b[2J {SECRET[:4]}\n")
        return "escapes"
    victim.write_text(rng.choice(stores.STRINGS) * rng.choice((1, 100)), errors="surrogateescape")
    return "junk text"


def entry_out(rng: random.Random, root: Path, secret_dir: Path) -> str:
    entries = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()]
    if not entries:
        return "entry (nothing)"
    victim = rng.choice(entries)
    away = secret_dir / f"entry-{rng.randrange(1 << 30)}"
    shutil.copytree(victim, away, symlinks=True, ignore=lambda d, names: [n for n in names if not Path(d, n).is_file()])
    for p in away.iterdir():
        if p.suffix in (".ptx", ".ttir", ".ttgir", ".llir", ".sass") and p.is_file() and not p.is_symlink():
            p.write_text(f"// {SECRET}\n" + p.read_text(errors="replace"))
    shutil.rmtree(victim)
    victim.symlink_to(away, target_is_directory=True)
    return "entry link out"


TTGIR_ATTR = re.compile(r'("?ttg\.(?:num-warps|num-ctas|shared|target|threads-per-warp)"?\s*=\s*)([^,}]+)')


def ttgir_mutation(rng: random.Random, root: Path) -> str:
    files = [p for p in root.rglob("*.ttgir") if p.is_file() and not p.is_symlink()]
    if not files:
        return "ttgir (nothing)"
    p = files[0]
    values = ('-1 : i32', '99999999999999999999 : i32', '"x"', '"cuda:\\x1b[2J"', '4 : i64', '"hip:"', '""',
              '0 : i32', '"cuda:90:1"', '1e999')
    p.write_text(TTGIR_ATTR.sub(lambda m: m[1] + rng.choice(values), p.read_text(errors="replace")))
    return "ttgir attributes"


def mutate_cache(rng, root: Path, secret: Path) -> list[str]:
    done = []
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        if r < 0.55:
            metas = [p for p in root.rglob("*.json") if p.is_file() and not p.is_symlink()]
            if not metas:
                continue
            path = rng.choice(metas)
            try:
                doc = json.loads(path.read_text())
            except (ValueError, OSError, RecursionError):
                continue
            doc, what = _json_mutation(rng, doc, secret)
            path.write_text(_dumps(rng, doc, secret), encoding="utf-8", errors="surrogateescape")
            done.append(f"{path.name[:30]}: {what}")
        elif r < 0.85:
            done.append(file_mutation(rng, root, secret))
        elif r < 0.95:
            done.append(entry_out(rng, root, secret.parent))
        else:
            done.append(stores.cut_short(rng, root, secret))
    return done


def mutate_dump(rng, root: Path, secret: Path) -> list[str]:
    done = []
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        if r < 0.6:
            done.append(file_mutation(rng, root, secret))
        elif r < 0.85:
            done.append(ttgir_mutation(rng, root))
        else:
            done.append(entry_out(rng, root, secret.parent))
    return done


def mutate_trace(rng, root: Path, secret: Path) -> list[str]:
    path = next(root.glob("*.ndjson"))
    events = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    done = []
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(events))
        events[i], what = _json_mutation(rng, events[i], secret)
        done.append(f"event {events[i].get('event_type', '?') if isinstance(events[i], dict) else '?'}: {what}")
    lines = [_dumps(rng, e, secret) for e in events]
    r = rng.random()
    if r < 0.1:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(("{", "[]", "null", "\x00\x01", '{"event_type": 1}')))
        done.append("garbage line")
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
    if r > 0.9:
        data = data[:rng.randrange(len(data))]
        done.append("cut")
    if rng.random() < 0.2:
        data = gzip.compress(data, mtime=0)
        if rng.random() < 0.3:
            data = data[:rng.randrange(len(data))]
            done.append("gzip cut")
        path.unlink()
        path = path.with_name("trace.bin.ndjson")
        done.append("gzip")
    path.write_bytes(data)
    return done


# -- reading --------------------------------------------------------------------------------------------

def read_all(root: Path, rng: random.Random, deep: bool) -> set[str]:
    import warnings

    from click.testing import CliRunner

    from kinspect import api
    from kinspect.cli import main
    from kinspect.core.errors import KinspectError, KinspectWarning
    from kinspect.files import sources

    said: set[str] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KinspectWarning)
        try:
            listing = sources.discover(root)
        except KinspectError as e:
            return {str(e)}
        said |= set(listing.warnings)
        for v in listing.variants:
            said |= set(v.problems) | set(v.notes)
            for s in v.stages:
                try:
                    if not s.binary and SECRET in api.stage_text(v, s.name):
                        raise Failure(f"stage {s.name}: the secret from outside was read")
                except KinspectError as e:
                    said.add(str(e))
    if deep:
        runner = CliRunner()
        stage = rng.choice(("ptx", "ttir", "sass", "ttgir", "llir"))
        for argv in (["ls", str(root)], ["vec-report", str(root)], ["show", str(root), "--stage", stage]):
            r = runner.invoke(main, argv)
            if r.exception is not None and not isinstance(r.exception, SystemExit):
                raise Failure(f"{argv[0]}: " + "".join(traceback.format_exception(r.exception))[-1500:])
            if r.exit_code not in (0, 2):
                raise Failure(f"{argv[0]} exited {r.exit_code}: {r.output[-300:]}")
            stores.check_output(r.output, argv[0])
    return said


def fuzz(seed_dir: Path, n: int, seed: int, progress=None, deep_every: int = 10) -> Stats:
    from kinspect.core.errors import KinspectError

    stats = Stats()
    rng = random.Random(seed)
    t0 = time.perf_counter()
    forms = {"cache": mutate_cache, "dump": mutate_dump, "trace": mutate_trace}

    with tempfile.TemporaryDirectory(prefix="kinspect-fuzz-foreign-") as tmp:
        tmp = Path(tmp)
        outside = tmp / "outside"
        outside.mkdir()
        secret = outside / "secret.txt"
        secret.write_text(SECRET + "\n")
        plain = {}
        for kind in forms:
            base = tmp / "base" / kind
            if kind == "trace":
                base.mkdir(parents=True)
                shutil.copy(next((seed_dir / "trace-none").glob("*.ndjson")), base / "trace.ndjson")
            else:
                shutil.copytree(seed_dir / kind, base)
            plain[kind] = read_all(base, random.Random(0), deep=False)
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
        for i in range(n):
            kind = rng.choice(list(forms))
            work = tmp / "w"
            if work.exists():
                _remove(work)
            shutil.copytree(tmp / "base" / kind, work, symlinks=True)
            done = forms[kind](rng, work, secret)
            stats.inputs += 1
            stats.kinds[kind] += 1
            stats.mutations.update(d.split(": ", 1)[-1].split(" ", 1)[0] for d in done)
            try:
                with attack.Watchdog(cpu=INPUT_SECONDS):
                    stats.located += bool(read_all(work, rng, deep=i % deep_every == 0) - plain[kind])
            except KinspectError:
                stats.located += 1
            except attack.Late as e:
                stats.failures.append((i, kind, done, f"reading it: {e.why}"))
            except (Failure, Exception, RecursionError) as e:
                what = str(e) if isinstance(e, Failure) else "".join(traceback.format_exception(e))[-2000:]
                stats.failures.append((i, kind, done, what))
            if secret.read_text() != SECRET + "\n":
                stats.failures.append((i, kind, done, "the secret outside was written"))
                secret.write_text(SECRET + "\n")
            for p in outside.glob("entry-*"):
                shutil.rmtree(p)
            if kind == "trace":        # each input's stages copied into kinspect's cache: not kept
                from kinspect.core.cache import cache_dir

                shutil.rmtree(cache_dir() / "traces", ignore_errors=True)
            if progress and (i + 1) % 250 == 0:
                progress(f"  {i + 1}/{n} inputs, {len(stats.failures)} failure(s)")
    stats.seconds = time.perf_counter() - t0
    return stats


def _remove(path: Path) -> None:
    for p in sorted(path.rglob("*"), key=lambda p: -len(p.parts)):
        if p.is_symlink() or not p.is_dir():
            p.unlink()
        else:
            p.rmdir()
    path.rmdir()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed-dir", type=Path, default=Path(tempfile.gettempdir()) / "kinspect-attack-seed")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=5)
    a = ap.parse_args(argv)
    seed_dir = attack.make_seed(a.seed_dir)
    os.environ.setdefault("KINSPECT_CACHE_DIR", tempfile.mkdtemp(prefix="kinspect-fuzz-cache-"))
    stats = fuzz(seed_dir, a.n, a.seed, progress=lambda s: print(s, file=sys.stderr))
    print(f"inputs: {stats.inputs:,} ({', '.join(f'{k} {v:,}' for k, v in stats.kinds.most_common())}); mutations: "
          f"{sum(stats.mutations.values()):,} ({', '.join(f'{k} {v:,}' for k, v in stats.mutations.most_common(12))}); "
          f"inputs kinspect said were wrong: {stats.located:,}; failures: {len(stats.failures)}; {stats.seconds:.0f} s")
    by_kind = Counter(k for _, k, _, _ in stats.failures)
    print(f"failures by form: {dict(by_kind)}")
    for i, kind, done, what in stats.failures[:a.show]:
        print(f"\n== input {i} ({kind}): {'; '.join(done)}\n{what}")
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
