"""Attack kinspect with what it reads but did not write: TRITON_KERNEL_DUMP folders, Triton cache
entries, tritonparse traces and kinspect stores, each made from a REAL compile here and then changed
as a hostile sender (or an unlucky file system) would, one change per case.

    python benchmarks/attack_foreign.py [--seed DIR] [--only SUBSTR] [--jobs 2] [--json]

The seed (`tests/trace_maker.py`: one real compile of kernels/softmax.py:softmax_kernel for cuda:90
with TRITON_KERNEL_DUMP, TRITON_CACHE_DIR and tritonparse's logging on, then `kinspect dump` of it
into a store) is made once into --seed (kept, reused next time).

Each case runs, in one child process of its own, every reading command on its hostile input: `ls`,
`vec-report`, `vec-report --lines`, `show --stage ptx/ttir/sass`, `report -o`, `diff --no-bench`
(against a clean copy), `repro`. A command fails the case when it

- exits other than 0 or 2, or prints a traceback;
- prints (or writes into its HTML report, gzipped stage blobs included) the secret that lies in
  files outside the hostile folder, or a raw terminal escape;
- runs past TIME_LIMIT seconds, or the process grows past MEMORY_LIMIT of resident memory;
- changes the input (every file's type, size and content, links' targets), writes anything beside
  the secret, or writes into the folders TRITON_DUMP_DIR / TRITON_CACHE_DIR point at (set in the
  child's environment, with TRITON_KERNEL_DUMP=1, as a user's shell may have them).

Prints the case table (surface | tried | failed) and each failure; exits 1 when any failed.
tests/files/test_attack_foreign.py runs the same cases in CI.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
TIME_LIMIT = 60.0                 # seconds of CPU per command (the machine may be shared: wall time says little)
IDLE_LIMIT = 15.0                 # seconds without CPU use nor a child process: waiting on a FIFO, hung
WALL_LIMIT = 600.0                # seconds per command whatever else
MEMORY_LIMIT = 1024 << 20         # resident bytes of a case's process
TOKEN = "KINSPECTSECRET" + "7f3a9c"  # in every file outside the hostile folder; never in an output
ESCAPE = "\x1b]0;pwned\x07\x1b[2J"    # a terminal escape a hostile stage carries
KERNEL = f"{ROOT}/kernels/softmax.py:softmax_kernel"
COMMANDS = ("ls", "vec-report", "vec-report --lines", "show --stage ptx", "show --stage ttir",
            "show --stage sass", "report", "diff --no-bench", "repro")


# -- the seed: one real compile -------------------------------------------------------------------------

def make_seed(seed: Path) -> Path:
    """seed/{cache,dump,trace-none,trace-gzip,parsed,store}: a real compile's every foreign form."""
    if (seed / "store").is_dir() and (seed / "cache").is_dir():
        return seed
    shutil.rmtree(seed, ignore_errors=True)
    seed.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, str(ROOT / "tests" / "trace_maker.py"), str(seed), KERNEL, "cuda:90", "none",
                    "gzip"], check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    env.pop("TRITON_KERNEL_DUMP", None)
    subprocess.run([sys.executable, "-m", "kinspect", "dump", KERNEL, "-t", "cuda:90", "--store", str(seed / "store")],
                   check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    return seed


# -- cases ------------------------------------------------------------------------------------------------

@dataclass
class Case:
    surface: str
    name: str
    build: Callable[["World"], Path]     # makes the hostile input under world.tmp; returns what commands read
    commands: tuple = COMMANDS
    time_limit: float = TIME_LIMIT


@dataclass
class World:
    seed: Path
    tmp: Path
    outside: Path = field(init=False)

    def __post_init__(self):
        self.outside = self.tmp / "outside"
        self.outside.mkdir()
        (self.outside / "secret.txt").write_text(f"{TOKEN}\n")

    def copy(self, what: str) -> Path:
        dest = self.tmp / "in" / what
        shutil.copytree(self.seed / what, dest, symlinks=True)
        return dest

    def entry(self, root: Path) -> Path:
        """The one kernel folder of a copied cache / dump / store."""
        found = [p.parent for p in root.rglob("*.ptx")]
        return found[0]

    def stage(self, root: Path, ext: str) -> Path:
        return next(self.entry(root).glob(f"*.{ext}"))

    def secret_copy(self, folder: Path) -> Path:
        """A copy of `folder` outside, every text file carrying the secret."""
        dest = self.outside / folder.name
        shutil.copytree(folder, dest)
        for p in dest.rglob("*"):
            if p.is_file() and p.suffix in (".ptx", ".ttir", ".ttgir", ".llir", ".sass", ".source"):
                p.write_text(f"// {TOKEN}\n" + p.read_text())
        return dest

    def secret_file(self, name: str, like: Path) -> Path:
        dest = self.outside / name
        dest.write_text(f"// {TOKEN}\n" + like.read_text())
        return dest


def _replace(path: Path, make) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
    make(path)


def _fifo(p: Path) -> None:
    os.mkfifo(p)


def _sparse(p: Path) -> None:
    with open(p, "wb") as f:
        f.truncate((4 << 30) + 4096)


def _chardev(p: Path) -> None:
    """A character device like /dev/zero (root can make one; else a link to it)."""
    try:
        os.mknod(p, 0o644 | stat.S_IFCHR, os.makedev(1, 5))
    except PermissionError:
        os.symlink("/dev/zero", p)


def _binary(p: Path) -> None:
    p.write_bytes(bytes(range(256)) * 64 + b"\0" * 1024)


def _dangling(p: Path) -> None:
    os.symlink(p.name + ".gone", p)


def _stage_cases(surface: str, what: str) -> list[Case]:
    """The stage-file attacks, on one layout (cache, dump or store)."""
    cases = []

    def on(ext, make, label):
        def build(w: World) -> Path:
            root = w.copy(what)
            _replace(w.stage(root, ext), make)
            return root
        cases.append(Case(surface, f"{ext} {label}", build))

    def link_out(w: World, ext: str) -> Path:
        root = w.copy(what)
        target = w.stage(root, ext)
        secret = w.secret_file(f"secret.{ext}", target)
        target.unlink()
        target.symlink_to(secret)
        return root

    for ext in ("ptx", "ttir"):
        on(ext, _fifo, "is a FIFO")
        on(ext, _dangling, "is a dangling link")
        on(ext, lambda p: p.mkdir(), "is a directory")
        on(ext, _binary, "is binary")
        on(ext, _sparse, "is a sparse 4 GB file")
        on(ext, _chardev, "is a character device (/dev/zero)")
    on("sass" if what != "cache" else "cubin", _fifo, "is a FIFO")
    on("ptx", lambda p: p.write_text(p.read_text() if False else f"// {ESCAPE}\n.version 8.0\n"), "holds terminal escapes")
    for ext in ("ptx", "ttir"):
        cases.append(Case(surface, f"{ext} links out", lambda w, ext=ext: link_out(w, ext)))

    def entry_out(w: World) -> Path:
        root = w.copy(what)
        entry = w.entry(root)
        away = w.secret_copy(entry)
        shutil.rmtree(entry)
        entry.symlink_to(away, target_is_directory=True)
        return root
    cases.append(Case(surface, "whole entry links out", entry_out))

    def parent_out(w: World) -> Path:       # the group folder of a store, or a cache named through a link
        root = w.copy(what)
        entry = w.entry(root)
        away = w.secret_copy(entry)
        os.symlink(away, root / "zz-linked", target_is_directory=True)
        return root
    cases.append(Case(surface, "extra entry links out", parent_out))
    return cases


def _metadata_cases() -> list[Case]:
    cases = []

    def meta(label, change):
        def build(w: World) -> Path:
            root = w.copy("cache")
            path = next(p for p in w.entry(root).glob("*.json") if not p.name.startswith("__grp__"))
            d = json.loads(path.read_text())
            change(d)
            path.write_text(json.dumps(d))
            return root
        cases.append(Case("Triton cache entries", f"metadata {label}", build))

    def setter(key, value):
        return lambda d: d.__setitem__(key, value)

    for key, value in (("num_warps", "4x"), ("num_warps", [4]), ("num_warps", -3), ("num_warps", 1e300),
                       ("num_stages", {"a": 1}), ("shared", "big"), ("shared", float("inf")),
                       ("shared", float("nan")), ("shared", -1), ("name", ["softmax_kernel"]),
                       ("hash", {"x": 1}), ("target", {"backend": "cuda", "arch": [90], "warp_size": "32"}),
                       ("target", {"backend": "cuda", "arch": 90, "warp_size": float("inf")}),
                       ("target", "cuda:90"), ("triton_version", 3.9), ("cluster_dims", "x"),
                       ("num_ctas", True), ("maxnreg", "255"), ("tmem_size", float("-inf"))):
        meta(f"{key} = {json.dumps(value)[:40]}", setter(key, value))

    def fifo_meta(w: World) -> Path:
        root = w.copy("cache")
        _replace(next(p for p in w.entry(root).glob("*.json") if not p.name.startswith("__grp__")), _fifo)
        return root
    cases.append(Case("Triton cache entries", "metadata is a FIFO", fifo_meta))

    def fifo_grp(w: World) -> Path:
        root = w.copy("cache")
        _replace(next(w.entry(root).glob("__grp__*.json")), _fifo)
        return root
    cases.append(Case("Triton cache entries", "__grp__ is a FIFO", fifo_grp))

    def meta_out(w: World) -> Path:
        root = w.copy("cache")
        path = next(p for p in w.entry(root).glob("*.json") if not p.name.startswith("__grp__"))
        secret = w.outside / "meta.json"
        d = json.loads(path.read_text())
        d["name"] = TOKEN
        secret.write_text(json.dumps(d))
        path.unlink()
        path.symlink_to(secret)
        return root
    cases.append(Case("Triton cache entries", "metadata links out", meta_out))

    def many(w: World) -> Path:
        """10,000 entries (hard links of one real entry's files, each entry its own hash folder)."""
        root = w.tmp / "in" / "cache"
        root.mkdir(parents=True)
        entry = w.entry(w.seed / "cache")
        for i in range(10_000):
            d = root / f"{i:052d}"
            d.mkdir()
            for p in entry.iterdir():
                os.link(p, d / p.name)
        return root
    cases.append(Case("Triton cache entries", "10,000 entries", many,
                      commands=("ls", "vec-report", "report", "diff --no-bench"), time_limit=30.0))
    return cases


def _trace_lines(w: World) -> list[dict]:
    return [json.loads(x) for x in next((w.seed / "trace-none").glob("*.ndjson")).read_text().splitlines() if x]


def _trace_case(label: str, change: Callable[[list[dict]], list], raw: Callable[[Path], None] | None = None,
                commands=COMMANDS, time_limit=TIME_LIMIT) -> Case:
    def build(w: World) -> Path:
        root = w.tmp / "in" / "trace"
        root.mkdir(parents=True)
        events = change(_trace_lines(w))
        path = root / "trace.ndjson"
        path.write_text("".join(json.dumps(e) + "\n" for e in events))
        if raw is not None:
            raw(path)
        return root
    return Case("traces", label, build, commands=commands, time_limit=time_limit)


def _compilation(events):
    return next(e for e in events if e.get("event_type") == "compilation")


def _launch(events):
    return next(e for e in events if e.get("event_type") == "launch")


def _trace_cases() -> list[Case]:
    cases = []

    def meta(key, value):
        def change(events):
            _compilation(events)["payload"]["metadata"][key] = value
            return events
        return change

    for key, value in (("num_warps", float("inf")), ("num_warps", "four"), ("num_warps", [4]),
                       ("shared", float("nan")), ("shared", "x"), ("num_stages", -1e308),
                       ("target", {"backend": "cuda", "arch": 90, "warp_size": float("inf")}),
                       ("target", {"backend": ["cuda"], "arch": {"a": 1}, "warp_size": "w"}),
                       ("hash", [1, 2]), ("name", {"x": 1}), ("times", {"lowering_stages": [["ttir", "x"]]}),
                       ("src_constants", {"(1,)": [1, 2]}), ("src_attrs", {"(0,)": "x"})):
        cases.append(_trace_case(f"metadata {key} = {json.dumps(value)[:40]}", meta(key, value)))

    def launch(key, value):
        def change(events):
            _launch(events)[key] = value
            return events
        return change

    for key, value in (("grid", True), ("grid", [1e400 if False else 10**30, "x"]), ("pid", "x"),
                       ("extracted_args", [1, 2]), ("compilation_metadata", {"hash": [1]}),
                       ("extracted_args", {"a": {"type": "tensor", "shape": "x", "stride": [True]}}),
                       ("extracted_args", {"a": {"type": "int", "value": [1, [2]]}})):
        cases.append(_trace_case(f"launch {key} = {json.dumps(value)[:40]}", launch(key, value)))

    def tensordesc(events):
        _launch(events)["extracted_args"]["desc"] = {
            "type": "TensorDescriptor", "base": {"type": "tensor", "shape": [128, 128], "dtype": "torch.float16",
                                                 "device": "cuda:0", "stride": [128, 1]},
            "block_shape": [64, 64], "shape": [128, 128], "strides": [128, 1], "padding": "zero"}
        return events
    cases.append(_trace_case("TensorDescriptor argument (tritonparse 0.6.0)", tensordesc))

    def escapes(events):
        content = _compilation(events)["payload"]["file_content"]
        for k in content:
            if k.endswith(".ptx"):
                content[k] = f"// {ESCAPE}\n" + content[k]
        return events
    cases.append(_trace_case("stage holds terminal escapes", escapes))

    def huge_source(events):
        src = _compilation(events)["payload"]["python_source"]
        src["code"] = src["code"] + "\n" + "x = 1\n" * 2_000_000
        return events
    cases.append(_trace_case("python_source of 2 million lines", huge_source))

    def paths(events):
        content = _compilation(events)["payload"]["file_content"]
        content["../../outside/secret.txt"] = "x"
        content["/etc/passwd.ptx"] = "x"
        _compilation(events)["payload"]["python_source"]["file_path"] = "../outside/secret.txt"
        return events
    cases.append(_trace_case("file names are paths out", paths))

    def bomb(kind: str):
        def raw(path: Path) -> None:
            """A first line that never ends: 1 MiB members repeated, inflating to 6 GiB."""
            head = path.read_bytes().split(b"\n")[0]
            start = head[: head.index(b'"file_content": {') + len(b'"file_content": {')] + b'"k.ptx": "'
            if kind == "gzip":
                block = gzip.compress(b"A" * (1 << 20), compresslevel=9, mtime=0)
                first = gzip.compress(start, mtime=0)
            else:
                import zstandard

                block = zstandard.ZstdCompressor(level=19).compress(b"A" * (1 << 20))
                first = zstandard.ZstdCompressor().compress(start)
            with open(path.with_name("trace.bin.ndjson"), "wb") as f:
                f.write(first)
                for _ in range(6 << 10):
                    f.write(block)
            path.unlink()
        return raw
    cases.append(_trace_case("gzip bomb (6 GiB inflated, one line)", lambda e: e, bomb("gzip")))
    cases.append(_trace_case("zstd bomb (6 GiB inflated, one line)", lambda e: e, bomb("zstd")))

    def many_lines_bomb(path: Path) -> None:
        """Many small events inflating to 3 GiB: the total is capped, not only a line."""
        line = (json.dumps({"event_type": "noise", "pad": "A" * 4000}) + "\n").encode() * 256
        block = gzip.compress(line, compresslevel=9, mtime=0)
        with open(path.with_name("trace.bin.ndjson"), "wb") as f:
            f.write(gzip.compress(path.read_bytes(), mtime=0))
            for _ in range(3 << 10):
                f.write(block)
        path.unlink()
    cases.append(_trace_case("gzip of 3 GiB of small events", lambda e: e, many_lines_bomb))

    def big_stage(events):
        content = _compilation(events)["payload"]["file_content"]
        k = next(k for k in content if k.endswith(".llir"))
        content[k] = "; " + "A" * (300 << 20)
        return events
    cases.append(_trace_case("a 300 MB stage in the trace", big_stage))

    def fifo_trace(w: World) -> Path:
        root = w.tmp / "in" / "trace"
        root.mkdir(parents=True)
        shutil.copy(next((w.seed / "trace-none").glob("*.ndjson")), root / "a.ndjson")
        os.mkfifo(root / "b.ndjson")
        return root
    cases.append(Case("traces", "a trace file is a FIFO", fifo_trace))

    def link_trace(w: World) -> Path:
        root = w.tmp / "in" / "trace"
        root.mkdir(parents=True)
        events = _trace_lines(w)
        for k, v in _compilation(events)["payload"]["file_content"].items():
            _compilation(events)["payload"]["file_content"][k] = f"// {TOKEN}\n" + v
        (w.outside / "x.ndjson").write_text("".join(json.dumps(e) + "\n" for e in events))
        (root / "x.ndjson").symlink_to(w.outside / "x.ndjson")
        return root
    cases.append(Case("traces", "a trace file links out", link_trace))
    return cases


def _store_cases() -> list[Case]:
    cases = _stage_cases("stores", "store")

    def missing(w: World) -> Path:
        root = w.copy("store")
        w.stage(root, "ptx").unlink()
        return root
    cases.append(Case("stores", "ptx missing", missing))
    return cases


def _env_case() -> Case:
    """kinspect's own compile with the user's dump and cache settings in the environment."""
    def build(w: World) -> Path:
        return w.copy("store")
    return Case("own compiles", "TRITON_KERNEL_DUMP/TRITON_CACHE_DIR set", build,
                commands=("dump -t cuda:80", "vec-report softmax", "diff softmax -t cuda:80,cuda:90 --no-bench"))


def all_cases() -> list[Case]:
    return (_stage_cases("TRITON_KERNEL_DUMP folders", "dump") + _stage_cases("Triton cache entries", "cache")
            + _metadata_cases() + _trace_cases() + _store_cases() + [_env_case()])


# -- running a case: a child process runs every command in-process ---------------------------------------

def _argv(command: str, target: Path, clean: Path, tmp: Path) -> list[str]:
    words = command.split()
    if words[0] == "show":
        return ["show", str(target), *words[1:]]
    if words[0] == "report":
        return ["report", str(target), "-o", str(tmp / "out" / "report.html")]
    if words[0] == "diff" and len(words) == 2:
        return ["diff", "--no-bench", str(target), str(clean)]
    if words[0] == "repro":
        return ["repro", str(target), "-o", str(tmp / "out" / "repro.py")]
    if words[0] == "dump":
        return ["dump", KERNEL, *words[1:], "-o", str(tmp / "out" / "store")]
    if command.startswith("vec-report softmax"):
        return ["vec-report", KERNEL, "-t", "cuda:90"]
    if command.startswith("diff softmax"):
        return ["diff", KERNEL, *words[2:]]
    return [*words, str(target)]


class Late(BaseException):
    """A command past its limit: `why` says which."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


def _has_children() -> bool:
    try:
        return any(Path(f"/proc/self/task/{t}/children").read_text().strip() for t in os.listdir("/proc/self/task"))
    except OSError:
        return False


class Watchdog:
    """Limits on the code run in its block: `cpu` seconds of CPU (SIGPROF), `wall` seconds, and `idle`
    seconds with no CPU used and no child process running (waiting on a FIFO: hung, on a loaded
    machine as on an idle one). Each raises Late in the main thread."""

    def __init__(self, cpu: float, idle: float = IDLE_LIMIT, wall: float = WALL_LIMIT):
        self.cpu, self.idle, self.wall = cpu, idle, wall

    def __enter__(self):
        import signal
        import threading

        self.why = ""
        self.stop = threading.Event()

        def late(signum, frame):
            raise Late(self.why or f"past {self.cpu:.0f} s of CPU")

        self.previous = {s: signal.signal(s, late) for s in (signal.SIGPROF, signal.SIGUSR1)}
        signal.setitimer(signal.ITIMER_PROF, self.cpu)
        main = threading.main_thread().ident
        t0 = time.monotonic()

        tid = threading.main_thread().native_id

        def ticks() -> int:
            """The main thread's CPU time in clock ticks (this thread's own polling does not count)."""
            try:
                fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
                return int(fields[11]) + int(fields[12])
            except (OSError, IndexError, ValueError):
                return -1

        def watch():
            last, since = ticks(), time.monotonic()
            while not self.stop.wait(0.5):
                now = ticks()
                if now != last or _has_children():
                    last, since = now, time.monotonic()
                elif time.monotonic() - since > self.idle:
                    self.why = f"hung: no CPU used for {self.idle:.0f} s"
                    signal.pthread_kill(main, signal.SIGUSR1)
                    return
                if time.monotonic() - t0 > self.wall:
                    self.why = f"past {self.wall:.0f} s"
                    signal.pthread_kill(main, signal.SIGUSR1)
                    return

        self.thread = threading.Thread(target=watch, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        import signal

        self.stop.set()
        signal.setitimer(signal.ITIMER_PROF, 0)
        self.thread.join()
        for s, h in self.previous.items():
            signal.signal(s, h)


def child(spec: dict) -> None:
    """Run the commands of one case in this process; print one JSON line per command."""
    from click.testing import CliRunner

    from kinspect.cli import main

    for command in spec["commands"]:
        argv = _argv(command, Path(spec["target"]), Path(spec["clean"]), Path(spec["tmp"]))
        t0 = time.monotonic()
        cpu0 = time.process_time()
        try:
            with Watchdog(spec["time_limit"]):
                r = CliRunner().invoke(main, argv, catch_exceptions=True)
            code, out = r.exit_code, r.output
            exc = r.exception if not isinstance(r.exception, SystemExit) else None
            if isinstance(exc, Late):
                code, out, exc = f"timeout: {exc.why}", out, None
        except Late as e:
            code, out, exc = f"timeout: {e.why}", "", None
        print(json.dumps({"command": command, "code": code, "output": out[-20000:], "cpu": round(time.process_time() - cpu0, 2),
                          "exception": repr(exc) if exc is not None else None,
                          "seconds": round(time.monotonic() - t0, 2)}), flush=True)


def snapshot(root: Path) -> dict:
    """Every path under root (links not followed): type, size, content digest (regular files under 64 MB)."""
    out = {}
    if not root.exists() and not root.is_symlink():
        return out
    paths = [root] + [Path(d, n) for d, dirs, files in os.walk(root) for n in dirs + files]
    for p in paths:
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            out[str(p)] = ("link", os.readlink(p))
        elif stat.S_ISREG(st.st_mode):
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if st.st_size < (64 << 20) else st.st_mtime_ns
            out[str(p)] = ("file", st.st_size, digest)
        else:
            out[str(p)] = (stat.S_IFMT(st.st_mode),)
    return out


def _html_texts(html: str) -> list[str]:
    """The report's text and its gzipped stage blobs, decoded."""
    texts = [html]
    for blob in re.findall(r"H4sI[A-Za-z0-9+/=]+", html):
        try:
            texts.append(gzip.decompress(base64.b64decode(blob)).decode("utf-8", "replace"))
        except (OSError, ValueError, EOFError):
            pass
    return texts


@dataclass
class Result:
    case: Case
    failures: list[str]
    seconds: float
    peak_rss: int


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) << 10
    except OSError:
        pass
    return 0


def run_case(case: Case, seed: Path) -> Result:
    tmp = Path(tempfile.mkdtemp(prefix="attack-"))
    failures: list[str] = []
    t0 = time.monotonic()
    peak = 0
    try:
        w = World(seed, tmp)
        target = case.build(w)
        clean = tmp / "clean"
        shutil.copytree(seed / "store", clean)
        (tmp / "out").mkdir()
        user_dump, user_cache, kcache = tmp / "user-dump", tmp / "user-cache", tmp / "kcache"
        for d in (user_dump, user_cache):
            d.mkdir()
        before = snapshot(tmp / "in"), snapshot(w.outside)
        env = {**os.environ, "TRITON_KERNEL_DUMP": "1", "TRITON_DUMP_DIR": str(user_dump),
               "TRITON_CACHE_DIR": str(user_cache), "KINSPECT_CACHE_DIR": str(kcache), "PYTHONPATH": str(ROOT),
               "COLUMNS": "200"}
        spec = {"commands": list(case.commands), "target": str(target), "clean": str(clean), "tmp": str(tmp),
                "time_limit": case.time_limit}
        proc = subprocess.Popen([sys.executable, __file__, "--child", json.dumps(spec)], cwd=tmp / "out", env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        import threading

        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
        reader.start()
        limit = (WALL_LIMIT + 30) * len(case.commands)
        why = None
        while proc.poll() is None:
            peak = max(peak, _rss(proc.pid))
            if peak > MEMORY_LIMIT:
                why = f"memory past {MEMORY_LIMIT >> 20} MiB"
            elif time.monotonic() - t0 > limit:
                why = f"still running after {limit:.0f} s"
            if why:
                proc.kill()
                proc.wait()
                break
            time.sleep(0.05)
        reader.join(5)
        done = []
        for line in lines:
            if line.startswith("{\"command\""):
                done.append(json.loads(line))
        for r in done:
            c = r["command"]
            if str(r["code"]).startswith("timeout"):
                failures.append(f"{c}: {r['code'][len('timeout: '):]}")
            elif r["code"] not in (0, 2):
                failures.append(f"{c}: exit {r['code']} {r['exception'] or ''} {r['output'][-300:]!r}")
            if r["exception"] or "Traceback" in r["output"]:
                failures.append(f"{c}: traceback {r['exception'] or r['output'][-600:]}")
            if TOKEN in r["output"]:
                failures.append(f"{c}: printed the outside secret")
            if "\x1b]0;pwned" in r["output"] or "\x1b[2J" in r["output"]:
                failures.append(f"{c}: printed a raw terminal escape from the input")
        if len(done) < len(case.commands):
            left = [c for c in case.commands if c not in {r["command"] for r in done}]
            failures.append(f"{left[0]}: {why or 'the process died'} "
                            f"({''.join(x for x in lines if not x.startswith('{')).strip()[-300:]!r})")
        html = tmp / "out" / "report.html"
        if html.is_file() and any(TOKEN in t for t in _html_texts(html.read_text(errors="replace"))):
            failures.append("report: the HTML holds the outside secret")
        if (snapshot(tmp / "in"), snapshot(w.outside)) != before:
            failures.append("the input or the outside folder changed")
        for d in (user_dump, user_cache):
            if any(d.iterdir()):
                failures.append(f"wrote into the user's {d.name}: {sorted(p.name for p in d.iterdir())[:4]}")
    except Exception as e:  # noqa: BLE001  (a case that cannot be built is a failure of the harness: say it)
        failures.append(f"harness: {type(e).__name__}: {e}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Result(case, failures, time.monotonic() - t0, peak)


def table(results: list[Result]) -> str:
    rows: dict[str, list[int]] = {}
    for r in results:
        row = rows.setdefault(r.case.surface, [0, 0, 0])
        row[0] += len(r.case.commands)
        row[1] += len({f.split(":")[0] for f in r.failures})
        row[2] += 1
    lines = ["| surface | cases | command runs | failed runs |", "|---|---|---|---|"]
    lines += [f"| {s} | {n} | {tried} | {failed} |" for s, (tried, failed, n) in rows.items()]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", default=str(Path(tempfile.gettempdir()) / "kinspect-attack-seed"))
    ap.add_argument("--only", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--time", type=float, default=TIME_LIMIT, help="seconds a command may take")
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        child(json.loads(args.child))
        return 0
    seed = make_seed(Path(args.seed))
    cases = [c for c in all_cases() if args.only in f"{c.surface}: {c.name}"]
    for c in cases:
        c.time_limit = min(c.time_limit, args.time)
    results = []
    with ThreadPoolExecutor(args.jobs) as pool:
        for future in as_completed([pool.submit(run_case, c, seed) for c in cases]):
            r = future.result()
            results.append(r)
            mark = "FAIL" if r.failures else "ok  "
            print(f"{mark} {r.case.surface}: {r.case.name}  ({r.seconds:.1f} s, peak {r.peak_rss >> 20} MiB)", flush=True)
            for f in r.failures:
                print(f"       {f[:400]}", flush=True)
    results.sort(key=lambda r: cases.index(r.case))
    print()
    print(table(results))
    return 1 if any(r.failures for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
