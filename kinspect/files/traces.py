"""Read traces other tools wrote: tritonparse's and Triton's own structured logging.

Both write NDJSON, one event per line: a `compilation` event carries a kernel's metadata, the text
of its stages (`payload.file_content`, `{"k.ttir": "...", "k.sass": "..."}`), the Python source of
its function and Triton's compile times; tritonparse adds `launch` events (grid, the launch's
arguments, the compiled kernel's metadata). Forms read here, by content, not by name:

- tritonparse's raw trace (`tritonparse.structured_logging.init(folder)`): `*.ndjson`, or with
  compression `*.bin.ndjson` of concatenated gzip members or zstd frames;
- any such file gzipped (`.ndjson.gz`) or zstd-compressed;
- tritonparse's parsed output (`tritonparse.parse`): a folder of `*_mapped.ndjson.gz` files, the
  same events with more added (launch_diff, ir_analysis, ... are skipped);
- Triton's upstream `triton/tools/structured_logging.py` (not shipped by Triton 3.6 or 3.9), whose
  compilation events have the same shape;
- a folder of such files.

Every compilation event is one variant (events of one compile hash are one variant: a cache hit
logs the compile again). The trace is never written, and nothing is written beside it: each
variant's stage files are written into kinspect's cache (kinspect.core.cache), keyed by the trace's
path, size and time, and read from there next time. Paths inside a trace (its `file_path` table,
the source's `file_path`, the stack) are data: none names a file kinspect opens. A binary stage
(the cubin) is not in a trace, so what needs it (SASS derived from it, registers from cuobjdump)
is only there when the trace carries it (tritonparse writes `.sass` with `enable_sass_dump`).

Bad lines (not JSON, an event that is not an object) and a file cut off mid-way each give one
warning naming the file (and line) and what was wrong; the rest is read.
"""

from __future__ import annotations

import ast
import gzip
import json
import re
import shutil
import sys
import tempfile
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from kinspect.core.model import (ArgSpec, CompileTimes, Launches, LaunchSignature, ProcessLaunches, SourceRef, grid3,
                            launches_from_json)

READER_VERSION = 2          # bump when what is extracted from an event changes: the cache is keyed on it
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# tritonparse: dedicated_log_triton_trace_<user>_rank_none_pid_1_host_x_.ndjson, .bin.ndjson, _mapped.ndjson.gz
TRACE_NAME_RE = re.compile(r"\.(?:ndjson|jsonl)(?:\.gz|\.zst|\.zstd)?$")
# tritonparse's placeholder for a stage it could not record: "<file too large: 123 bytes>", "<nvdisasm failed: ...>"
PLACEHOLDER_RE = re.compile(r"^<[^\n]{0,2000}>\s*$")
MAX_BAD_LINES = 3           # bad lines named one by one; the rest are counted
MAX_SIGNATURES = 4096       # distinct launch signatures tracked per variant (the rest are counted)
# Past this, the kernel's Python source is not parsed for its parameter names (a kernel is KBs; ast.parse
# of a few MB takes hundreds of MB)
MAX_SOURCE_CHARS = 1 << 20
# The most a trace file inflates to before reading stops (KINSPECT_MAX_TRACE_BYTES): a gzip or zstd
# bomb of a few MB would otherwise hold the machine for minutes. A line (one event, every stage of a
# kernel in it) is held to the stage cap (kinspect.files.foreign.limit).
TRACE_LIMIT_ENV = "KINSPECT_MAX_TRACE_BYTES"
DEFAULT_TRACE_LIMIT = 2 << 30
READ_CHUNK = 8192         # read with read1: a cut-off gzip gives every line it inflated before its EOFError


@dataclass(frozen=True)
class Entry:
    """One compiled variant of a trace, its stages written into kinspect's cache folder `folder`."""

    folder: str
    kernel: str
    files: dict                 # file name in `folder` -> stage name
    metadata: dict              # the event's Triton metadata, as the trace has it
    source: SourceRef | None
    times: CompileTimes | None
    launches: Launches | None
    notes: tuple[str, ...]
    event: int                  # the event's line number in its file
    file: str = ""              # the trace file the event is in

    def to_json(self) -> dict:
        import dataclasses

        d = dataclasses.asdict(self)
        d["folder"] = Path(self.folder).name
        return d

    @classmethod
    def from_json(cls, d: dict, root: Path, shared: "Shared | None" = None) -> "Entry":
        """An entry as the index keeps it; `shared` gives the entries of one trace one copy of what they
        repeat (metadata strings, argument lists)."""
        times, source = d.get("times"), d.get("source")
        shared = shared or Shared()
        return cls(folder=str(root / d["folder"]), kernel=d["kernel"], files=dict(d["files"]),
                   metadata=_jsonable(d["metadata"]), source=SourceRef(**source) if source else None,
                   times=CompileTimes(times["ir_initialization_us"], tuple(tuple(x) for x in times["stages"]),
                                      times["store_results_us"], times.get("startup_us", 0)) if times else None,
                   launches=shared.launches(launches_from_json(d.get("launches"))), notes=tuple(d["notes"]),
                   event=int(d["event"]),
                   file=str(d.get("file", "")))


class Shared:
    """One object for each distinct argument list met in a trace's launches (a program launches its kernels
    with the same few again and again): its variants hold what is distinct, not a copy per launch event.
    (Metadata strings are interned by _jsonable.)"""

    def __init__(self):
        self.seen: dict[tuple, tuple] = {}

    def args(self, args: tuple) -> tuple:
        key = tuple((a, type(a.value)) for a in args)      # 1 and 1.0 (and True) stay apart
        return self.seen.setdefault(key, args)

    def launches(self, launches: Launches | None) -> Launches | None:
        if launches is None:
            return None
        import dataclasses

        return dataclasses.replace(launches, signatures=tuple(dataclasses.replace(s, args=self.args(s.args))
                                                              for s in launches.signatures))


# -- what is a trace -------------------------------------------------------------------------------

def trace_files(path: Path) -> list[Path]:
    """The trace files a path names: itself, or the trace files of a folder (tritonparse's parsed
    output: its `*_mapped.ndjson.gz` only, the raw files it was made from being elsewhere)."""
    path = Path(path)
    if path.is_file():
        return [path] if _looks_like_trace(path) else []
    if not path.is_dir():
        return []
    # a file of the folder that is a link out of it, a FIFO or a device is no trace of it
    files = sorted(p for p in path.iterdir() if TRACE_NAME_RE.search(p.name) and _regular_inside(path, p))
    mapped = [p for p in files if p.name.endswith("_mapped.ndjson.gz")]
    return mapped or [p for p in files if _looks_like_trace(p)]


def _regular_inside(folder: Path, p: Path) -> bool:
    import stat

    from kinspect.files.foreign import inside

    try:
        return stat.S_ISREG(p.stat().st_mode) and (not p.is_symlink() or inside(folder, p))
    except OSError:
        return False


def is_trace(path: Path) -> bool:
    return bool(trace_files(path))


def _looks_like_trace(path: Path) -> bool:
    """A trace file by its start: compressed (gzip or zstd) with a trace's name, or text whose first
    line is a JSON object naming an `event_type`."""
    from kinspect.files import foreign

    try:
        with foreign.open_binary(path, max_bytes=1 << 62) as f:
            head = f.read(4096)
    except (OSError, foreign.Refused):
        return False
    if head[:2] == GZIP_MAGIC or head[:4] == ZSTD_MAGIC:
        return TRACE_NAME_RE.search(path.name) is not None
    return head.lstrip().startswith(b"{") and b'"event_type"' in head


# -- reading ---------------------------------------------------------------------------------------

def read(path: Path) -> tuple[list[Entry], list[str]]:
    """The variants of a trace (a file or a folder of them) and the warnings met reading it. Read
    once: the result is kept in kinspect's cache, keyed by the files' paths, sizes and times."""
    from kinspect.core.cache import cache_dir, file_key, key_of

    files = trace_files(path)
    # whether zstd can be read is part of the key: a trace read without it is read again once it is there
    key = key_of("trace", str(READER_VERSION), str(_zstd_readable()), *(file_key(p) for p in files))
    root = cache_dir() / "traces" / key
    index = root / "index.json"
    if index.is_file():
        try:
            data = json.loads(index.read_text())
            shared = Shared()
            return [Entry.from_json(d, root, shared) for d in data["entries"]], list(data["warnings"])
        except (OSError, ValueError, KeyError, TypeError):
            pass                      # a damaged cache entry: read the trace again
    tmp = _fresh_folder(root)
    try:
        reading = _Reading(tmp)
        for p in files:
            reading.file(p)
        entries, warnings = _write_index(tmp / "index.json", reading, root), reading.warnings
    except OSError as e:          # writing the stages into the cache: the trace itself is only read
        shutil.rmtree(tmp, ignore_errors=True)
        from kinspect.core.errors import KinspectError

        raise KinspectError(f"cannot write kinspect's cache at '{tmp.parent}': {e.strerror}; set "
                            f"KINSPECT_CACHE_DIR to a writable folder with room") from None
    except BaseException:         # Ctrl-C, a bug: no half-made entry is left in the cache
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _move_into_place(tmp, root)
    return entries, warnings


def _write_index(index: Path, reading: "_Reading", root: Path) -> list[Entry]:
    """Write the index one entry at a time and give the entries as a later read gives them (from
    their JSON, in `root`): a trace of thousands of variants never has them all as JSON at once."""
    out = []
    with open(index, "w", encoding="utf-8") as f:
        f.write('{"entries": [')
        for n, e in enumerate(reading.entries()):
            d = json.loads(json.dumps(e.to_json(), default=str))
            f.write((", " if n else "") + json.dumps(d))
            out.append(Entry.from_json(d, root, reading.shared))
        f.write('], "warnings": ' + json.dumps(reading.warnings, default=str) + "}")
    return out


def _fresh_folder(root: Path) -> Path:
    from kinspect.core.errors import KinspectError
    from kinspect.core.modes import as_umask

    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        fresh = Path(tempfile.mkdtemp(prefix=f".tmp-{root.name}-", dir=root.parent))
        as_umask(fresh)
        return fresh
    except OSError as e:
        raise KinspectError(f"cannot write kinspect's cache at '{root.parent}': {e.strerror}; set "
                            f"KINSPECT_CACHE_DIR to a writable folder") from None


def _move_into_place(tmp: Path, root: Path) -> Path:
    if root.exists() and not (root / "index.json").is_file():
        shutil.rmtree(root, ignore_errors=True)      # a damaged earlier entry
    try:
        tmp.rename(root)
    except OSError:                                  # another process read the same trace first
        shutil.rmtree(tmp, ignore_errors=True)
    return root


class _Variant:
    """What the events of one compile hash add up to while the file is read."""

    def __init__(self, folder: Path, kernel: str, files: dict, metadata: dict, source, times, notes, event: int,
                 file: Path):
        self.folder, self.kernel, self.files, self.metadata = folder, kernel, files, metadata
        self.source, self.times, self.notes, self.event, self.file = source, times, notes, event, file
        self.calls = 0
        self.grids: Counter = Counter()
        self.signatures: Counter = Counter()
        self.other = 0
        self.processes: Counter = Counter()

    def launch(self, grid: tuple, args: tuple, pid: int, rank: int | None = None) -> None:
        self.calls += 1
        self.grids[grid] += 1
        key = (grid, args, pid, rank)
        if key in self.signatures or len(self.signatures) < MAX_SIGNATURES:
            self.signatures[key] += 1
        else:
            self.other += 1
        self.processes[(pid, rank)] += 1

    def entry(self) -> Entry:
        from kinspect.files.launches import GRIDS, SIGNATURES

        launches = None
        if self.calls:
            ranked = self.signatures.most_common()
            kept, dropped = ranked[:SIGNATURES], ranked[SIGNATURES:]
            launches = Launches(
                calls=self.calls, grids=tuple(self.grids.most_common(GRIDS)),
                signatures=tuple(LaunchSignature(grid=g, args=a, calls=n, pid=pid, rank=rank)
                                 for (g, a, pid, rank), n in kept),
                other_calls=self.other + sum(n for _, n in dropped),
                processes=tuple(ProcessLaunches(pid=pid, rank=rank, host="", calls=n)
                                for (pid, rank), n in sorted(self.processes.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0))))
        return Entry(folder=str(self.folder), kernel=self.kernel, files=self.files, metadata=self.metadata,
                     source=self.source, times=self.times, launches=launches, notes=tuple(self.notes),
                     event=self.event, file=str(self.file))


# tritonparse names a rank's trace ..._rank_<N>_pid_...; `rank_none` outside a distributed program
RANK_IN_NAME_RE = re.compile(r"_rank_(\d+)_")


def trace_rank(path: Path) -> int | None:
    """The rank a tritonparse trace file was written by, from its name (None: not distributed)."""
    m = RANK_IN_NAME_RE.search(path.name)
    return int(m.group(1)) if m else None


class _Reading:
    """The variants of one or more trace files (a rank's or process's each), by compile hash: a
    variant compiled in several processes is one, its launches added up."""

    def __init__(self, out: Path):
        self.out = out
        self.by_hash: dict[str, _Variant] = {}
        self.pending: list[tuple[str, tuple, tuple, int]] = []   # launches met before their compilation
        self.warnings: list[str] = []
        self.made = 0
        self.shared = Shared()

    def file(self, path: Path) -> None:
        bad = 0
        rank = trace_rank(path)
        for n, event in _events(path, self.warnings):
            if not isinstance(event, dict):
                bad += 1
                if bad <= MAX_BAD_LINES:
                    self.warnings.append(f"{path}:{n}: not an event (a JSON {type(event).__name__}, not an object); "
                                         f"skipped")
                continue
            kind = event.get("event_type")
            if kind == "compilation":
                self.compilation(event, n, path)
            elif kind == "launch" and (launch := _launch(event)) is not None:
                launch = (launch[0], launch[1], self.shared.args(launch[2]), launch[3], rank)
                found = self.by_hash.get(launch[0])
                if found is not None:
                    found.launch(*launch[1:])
                elif len(self.pending) < MAX_SIGNATURES * 16:
                    self.pending.append(launch)
        if bad > MAX_BAD_LINES:
            self.warnings.append(f"{path}: {bad - MAX_BAD_LINES} more lines that are not events; skipped")

    def compilation(self, event: dict, n: int, path: Path) -> None:
        payload = event.get("payload")
        if not isinstance(payload, dict):
            self.warnings.append(f"{path}:{n}: a compilation event without its payload; skipped")
            return
        metadata = payload.get("metadata") if isinstance(payload.get("metadata"), dict) else {}
        hash_ = str(metadata.get("hash") or f"{path.name}:{n}")
        if hash_ in self.by_hash:           # the same compile logged again (a cache hit, another rank)
            return
        self.by_hash[hash_] = _compilation(payload, metadata, n, path, self.out, self.made)
        self.made += 1

    def entries(self) -> Iterator[Entry]:
        """Each variant's entry, in the order met; what made it is let go as it is given."""
        for hash_, *launch in self.pending:
            if hash_ in self.by_hash:
                self.by_hash[hash_].launch(*launch)
        self.pending = []
        while self.by_hash:
            yield self.by_hash.pop(next(iter(self.by_hash))).entry()


def _events(path: Path, warnings: list[str]) -> Iterator[tuple[int, object]]:
    """(line number, decoded JSON) of each line of a trace file; a line that is not JSON, or a file
    that ends early, gives one warning."""
    n = 0
    from kinspect.files import foreign

    try:
        with _open_binary(path) as f:
            for n, line in _lines(f, path, warnings):
                if not line.strip():
                    continue
                try:
                    yield n, json.loads(line)
                except (ValueError, RecursionError) as e:
                    why = "cut off (the file ends inside it)" if not line.endswith(b"\n") else \
                        f"not JSON ({type(e).__name__}: {str(e)[:80]})"
                    warnings.append(f"{path}:{n}: {why}; skipped")
    except foreign.Refused as e:
        warnings.append(f"{e}; not read")
    except (EOFError, gzip.BadGzipFile, OSError, UnicodeDecodeError) as e:
        warnings.append(f"{path}: cut off or damaged after line {n} ({type(e).__name__}: {str(e)[:80]}); "
                        f"the lines before it were read")
    except _ZstdMissing as e:
        warnings.append(f"{path}: {e}")


class _ZstdMissing(Exception):
    pass


def trace_limit() -> int:
    import os

    try:
        value = int(float(os.environ.get(TRACE_LIMIT_ENV) or DEFAULT_TRACE_LIMIT))
    except ValueError:
        value = DEFAULT_TRACE_LIMIT
    return value if value > 0 else DEFAULT_TRACE_LIMIT


def _lines(f, path: Path, warnings: list[str]) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of each line of a binary stream, read in chunks: a line longer than
    the stage cap is skipped as it streams by (never held whole), and reading stops, with one
    warning, once the stream has given trace_limit() bytes."""
    from kinspect.files.foreign import LIMIT_ENV, limit

    longest, total_cap = limit() + (1 << 20), trace_limit()
    n, total, parts, size, skipping = 0, 0, [], 0, False
    # read1: one read of the stream underneath per chunk, so the lines decoded before a gzip file that is
    # cut off are given before its EOFError (read() fills the whole chunk first and loses them with it)
    read = getattr(f, "read1", f.read)
    while True:
        chunk = read(READ_CHUNK)
        if not chunk:
            break
        total += len(chunk)
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                rest = chunk[start:]
                if not skipping:
                    parts.append(rest)
                    size += len(rest)
                    if size > longest:
                        parts, size, skipping = [], 0, True
                break
            n += 1
            if skipping:
                warnings.append(f"{path}:{n}: a line of more than {longest:,} bytes (a stage over the {limit():,}-byte "
                                f"cap; raise it with {LIMIT_ENV}); skipped")
                skipping = False
            else:
                parts.append(chunk[start:end + 1])
                yield n, b"".join(parts)
            parts, size = [], 0
            start = end + 1
        if total > total_cap:
            warnings.append(f"{path}: inflates past {total_cap:,} bytes (raise the cap with {TRACE_LIMIT_ENV}); "
                            f"read up to line {n}")
            return
    if skipping:
        warnings.append(f"{path}:{n + 1}: a line of more than {longest:,} bytes; skipped")
    elif parts:
        yield n + 1, b"".join(parts)


def _open_binary(path: Path):
    """The trace's bytes, decompressed as they are read."""
    from kinspect.files import foreign

    f = foreign.open_binary(path, max_bytes=1 << 62)   # a FIFO or device is refused; the size is capped inflated
    magic = f.peek(4)[:4]
    if magic[:2] == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=f, mode="rb")
    if magic == ZSTD_MAGIC:
        f.close()
        return _zstd_reader(path)
    return f


def _zstd_readable() -> bool:
    import importlib.util

    try:
        return any(importlib.util.find_spec(m) is not None for m in ("zstandard", "compression.zstd"))
    except (ImportError, ValueError):
        return False


def _zstd_reader(path: Path):
    """A binary stream of a zstd file of one or more frames (tritonparse writes one frame per event)."""
    try:
        import zstandard
    except ImportError:
        try:
            from compression import zstd     # Python 3.14
        except ImportError:
            raise _ZstdMissing("zstd-compressed, and no zstd module is installed here: pip install zstandard "
                               "(or decompress it: zstd -d)") from None
        return zstd.open(path, "rb")
    return zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), read_across_frames=True, closefd=True)


# -- one compilation event -------------------------------------------------------------------------

def _compilation(payload: dict, metadata: dict, n: int, path: Path, out: Path, index: int) -> _Variant:
    content = payload.get("file_content") if isinstance(payload.get("file_content"), dict) else {}
    kernel = str(metadata.get("name") or _kernel_of(content) or f"kernel{index}")
    folder = out / f"{index:05d}-{_file_safe(kernel)[:60]}"
    folder.mkdir()
    files, notes = {}, []
    from kinspect.files.foreign import LIMIT_ENV, limit

    for fname, text in content.items():
        stage = _stage_of(str(fname))
        if stage is None or not isinstance(text, str) or not text:
            continue
        if len(text) > limit():
            notes.append(f"stage {stage}: {len(text):,} characters, over the {limit():,}-byte cap for one stage "
                         f"(raise it with {LIMIT_ENV}); not read")
            continue
        if PLACEHOLDER_RE.match(text):
            notes.append(f"the trace holds no {stage}: its writer recorded {text.strip()[:160]}")
            continue
        name = f"{_file_safe(kernel)[:100]}.{stage}"
        if name not in files:
            data = text.encode("utf-8", errors="replace")    # a lone surrogate (a JSON "\udcff") is no character
            if data != text.encode("utf-8", errors="surrogatepass"):
                notes.append(f"stage {stage}: characters that are not Unicode (lone surrogates) read as '?'")
            (folder / name).write_bytes(data)
            files[name] = stage
    if "target" not in metadata:
        notes.append("the trace's metadata names no target")
    return _Variant(folder, kernel, files, _jsonable(metadata), _source(payload.get("python_source")),
                    _times(metadata.get("times")), notes, n, path)


def _file_safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", name).strip("-.") or "kernel"


def _stage_of(fname: str) -> str | None:
    """`k.ttgir` -> "ttgir"; None for names that are no plain `<kernel>.<stage>` (a path, a dot file)."""
    if "/" in fname or "\\" in fname or fname.startswith("."):
        return None
    stem, dot, ext = fname.rpartition(".")
    if not dot or not stem or not re.fullmatch(r"[A-Za-z0-9_]+", ext):
        return None
    return ext


def _kernel_of(content: dict) -> str | None:
    stems = {str(f).rpartition(".")[0] for f in content if "." in str(f)}
    return sorted(stems)[0] if stems else None


def _jsonable(value, depth: int = 0):
    """A plain JSON copy of the event's metadata; its short strings interned, as every variant's metadata
    repeats the same keys and most of the same values (a trace of 20,000 compiles holds one copy of each)."""
    if depth > 20:
        return None
    if isinstance(value, str):
        return sys.intern(value) if len(value) <= 256 else value
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(x, depth + 1) for x in value]
    if isinstance(value, dict):
        return {sys.intern(str(k)) if len(str(k)) <= 256 else str(k): _jsonable(x, depth + 1) for k, x in value.items()}
    return str(value)


def _times(t) -> CompileTimes | None:
    """Triton's CompileTimes as the listener gives it: µs of IR initialisation, each lowering stage
    (`[["ttir", 3906], ...]`) and storing."""
    if not isinstance(t, dict):
        return None
    def us(x) -> int:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 <= x < 1e15:
            raise ValueError(x)
        return int(x)

    try:
        stages = tuple((str(name), us(v)) for name, v in t.get("lowering_stages") or ())
        return CompileTimes(us(t.get("ir_initialization") or 0), stages, us(t.get("store_results") or 0))
    except (TypeError, ValueError, OverflowError):
        return None


def _source(src) -> SourceRef | None:
    """The kernel's Python source as the trace carries it (its function, or the whole file with the
    function's range); the file path is kept as a name only."""
    if not isinstance(src, dict) or not isinstance(src.get("code"), str):
        return None
    def line(x) -> int:
        if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < 1 << 31:
            raise ValueError(x)
        return x

    try:
        code, start = src["code"], line(src.get("start_line") or 1)
        first, last = src.get("function_start_line"), src.get("function_end_line")
        if first and last:                  # the whole file: keep the function
            lines = code.splitlines()
            code, start = "\n".join(lines[line(first) - start: line(last) - start + 1]), line(first)
        if len(code) > MAX_SOURCE_CHARS:    # a kernel is KBs: what is past the cap is no kernel's (kept lines whole)
            code = code[:MAX_SOURCE_CHARS].rsplit("\n", 1)[0]
        path = src.get("file_path")
        return SourceRef(file=path[:1000] if isinstance(path, str) and path else "<trace>", line=start, text=code)
    except (TypeError, ValueError):
        return None


def parameters(source: SourceRef | None) -> list[tuple[str, bool]]:
    """(name, declared tl.constexpr) of the kernel's parameters, from the source text the trace
    carries (parsed, never run)."""
    if source is None or not source.text or len(source.text) > MAX_SOURCE_CHARS:
        return []
    try:
        tree = ast.parse(textwrap.dedent(source.text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    fn = next((node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return []
    return [(a.arg, a.annotation is not None and "constexpr" in ast.unparse(a.annotation))
            for a in fn.args.posonlyargs + fn.args.args]


# -- one launch event ------------------------------------------------------------------------------

def _launch(event: dict) -> tuple[str, tuple, tuple, int] | None:
    """(compile hash, grid, argument specs, pid) of a tritonparse launch event."""
    meta = event.get("compilation_metadata")
    if not isinstance(meta, dict) or not meta.get("hash"):
        return None
    grid, pid = event.get("grid") or [], event.get("pid") or 0
    if not isinstance(grid, list) or len(grid) > 3 or not all(_count(x) for x in grid) or not _count(pid) and pid != 0:
        return None
    if not isinstance(meta["hash"], str):
        return None
    grid = grid3(grid)     # as the driver launches it, as a capture records it
    args = event.get("extracted_args") if isinstance(event.get("extracted_args"), dict) else {}
    return meta["hash"], grid, tuple(_arg(str(k), v) for k, v in args.items()), pid


def _count(x) -> bool:
    """A positive int that fits a launch (a grid dimension, a pid + 1)."""
    return not isinstance(x, bool) and isinstance(x, int) and 0 < x < 1 << 63


def _arg(name: str, info) -> ArgSpec:
    """An argument as tritonparse records it; a field of the wrong type makes it an "other" (shown by
    its text, never used to make a tensor)."""
    try:
        return _checked_arg(name, info)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return ArgSpec(name, "other", value=str(info)[:200])


def _ints(xs) -> tuple[int, ...]:
    if not isinstance(xs, (list, tuple)) or len(xs) > 16:
        raise ValueError("not a short list of ints")
    if not all(not isinstance(x, bool) and isinstance(x, int) and abs(x) < 1 << 62 for x in xs):
        raise ValueError("not ints")
    return tuple(xs)


def _checked_arg(name: str, info) -> ArgSpec:
    if not isinstance(info, dict):
        return ArgSpec(name, "other", value=str(info)[:200])
    kind = info.get("type")
    ints = _ints
    if kind == "tensor":
        return ArgSpec(name, "tensor", shape=ints(info.get("shape") or ()), strides=ints(info.get("stride") or ()),
                       dtype=str(info.get("dtype", "")).removeprefix("torch."), device=str(info.get("device", "")))
    if kind == "TensorDescriptor":
        base = info.get("base") if isinstance(info.get("base"), dict) else {}
        return ArgSpec(name, "tensordesc", value=ints(info.get("block_shape") or ()),
                       shape=ints(info.get("shape") or ()), strides=ints(info.get("strides") or ()),
                       dtype=str(base.get("dtype", "")).removeprefix("torch."), device=str(base.get("device", "")))
    if kind in ("int", "float", "bool", "str"):
        value = info.get("value")
        return ArgSpec(name, kind, value=value if isinstance(value, (int, float, bool, str)) else str(value)[:200])
    if kind == "NoneType":
        return ArgSpec(name, "none")
    return ArgSpec(name, "other", value=str(info.get("repr", kind))[:200])
