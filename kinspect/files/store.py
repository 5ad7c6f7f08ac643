"""kinspect's own output layout.

    <root>/<kernel>/<target>_<constexprs>_w<warps>_s<stages>_<hash8>/
        record.json         the Variant (versioned, see model.RECORD_VERSION)
        <name>.<stage>      one file per stage, as Triton named it
        launches-<host>-<pid>.json   launches one process of a captured program recorded, until they
                            are merged into record.json (readers merge them too)
        source.json         the kernel's source with its namespace (kinspect.replay.source), where
                            the capture recorded it: what replays it without the program's files
    <root>/<kernel>/autotune.json   triton.autotune's decisions for the kernel (config chosen per key,
                            the timings it chose by); autotune-<host>-<pid>.json per process until merged
    <root>/.kinspect-interpret/     what `kinspect capture --interpret` processes launched, until compiled

A variant is written into a hidden temporary folder beside its final place and renamed into
place, so a reader (or a second kinspect process) never sees half a variant. A kinspect process
that writes a store holds `<root>/.kinspect.lock` (flock) meanwhile: a second one is told which
process holds it instead of interleaving its variants (the holder's own children share the lock). Two variants differ
in Triton's hash whenever target, options, constexprs or specialization differ, so they never
share a folder.

A store is data from wherever it came from: every file read from it goes through `contained` (a
name from a record is a relative path that stays inside its variant folder, links followed) and
every JSON file through `load_json` (size, then kinspect.files.schema). A stage that breaks the rule is
left out of its Variant with a line in `Variant.problems`; a record that breaks its schema leaves
its variant out of the listing with a line saying why. Files are written through `write_atomic` (a
fresh temporary file renamed into place) and locks opened without following links, so a link
planted in a store never makes kinspect write outside it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Iterable, Mapping

from kinspect.files import foreign, schema
from kinspect.core.environ import patched
from kinspect.core.errors import KinspectError, NotFound
from kinspect.core.modes import as_umask, file_mode
from kinspect.core.model import Variant

DEFAULT_OUT = "kinspect-out"     # the store commands write to and read from when no folder is named

RECORD = "record.json"
SOURCE = "source.json"         # a variant's kernel source with its namespace (kinspect.replay.source)
LOCK = ".kinspect.lock"
LAUNCHES_GLOB = "launches-*.json"
LAUNCHES_LOCK = ".launches.lock"
AUTOTUNE = "autotune.json"
AUTOTUNE_GLOB = "autotune-*.json"
INTERPRET_PENDING = ".kinspect-interpret"
CAPTURE_SUMMARIES = ".kinspect-capture"     # per-process launch summaries of `kinspect capture`, read back and removed
MAX_RECORD_BYTES = 64 << 20   # a record is KBs; a bigger record.json is not read into memory
# Stores locked by this process or an ancestor (os.pathsep-separated): children it starts (diff
# workers, the program under `kinspect capture`) write under their parent's lock.
LOCK_ENV = "KINSPECT_STORE_LOCKS"
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def _safe(text: str) -> str:
    return _UNSAFE.sub("-", str(text)).strip("-") or "x"


# -- reading and writing inside a store ------------------------------------------------------------

class Outside(KinspectError):
    """A name from a store that leads out of the folder it belongs to."""


def contained(folder: Path, name: str, real_folder: str | None = None) -> Path:
    """`folder/name` when it stays inside `folder`: a relative path without `..` whose real path
    (links followed) is inside the folder's real path. Raises Outside saying why otherwise; a name
    that does not exist passes (opening it says so). `real_folder` is os.path.realpath(folder),
    when the caller checks many names of one folder."""
    _check_inside(str(folder), name, real_folder)
    return Path(folder, name)


def _check_inside(folder: str, name: str, real_folder: str | None) -> None:
    if not isinstance(name, str) or not name or "\0" in name:
        raise Outside("file name is empty or not text")
    if name.startswith("/"):
        raise Outside(f"file {_shown(name)} is an absolute path, outside the variant folder")
    parts = name.split("/")
    if ".." in parts:
        raise Outside(f"file {_shown(name)} climbs out of the variant folder with '..'")
    path = os.path.join(folder, name)
    try:
        if len(parts) == 1 and not os.path.islink(path):
            return               # a plain file or folder right in `folder`: inside by construction
    except (OSError, ValueError):
        raise Outside(f"file {_shown(name)} cannot be looked at") from None
    real = os.path.realpath(path)
    top = real_folder or os.path.realpath(folder)
    if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
        raise Outside(f"file {_shown(name)} is a link to {'a file' if os.path.exists(real) else 'a place'} "
                      f"outside the variant folder")


def _shown(name: str, n: int = 80) -> str:
    """A name from a store in a message: quoted, control characters escaped, cut to `n`."""
    return ascii(name if len(name) <= n else name[:n] + "...")


def load_json(folder: Path, name: str, spec, *, limit: int = MAX_RECORD_BYTES):
    """The JSON file `name` of a store folder, checked: inside the folder, at most `limit` bytes,
    and of the shape `spec` (kinspect.files.schema) says. Raises NotFound when it is not there, and a
    KinspectError `name: what is wrong` otherwise."""
    path = contained(folder, name)
    try:
        size = path.stat().st_size
        if size > limit:
            raise KinspectError(f"{name}: {size:,} bytes, too large (at most {limit:,})")
        with foreign.open_binary(path, max_bytes=limit) as f:     # a FIFO or device is refused, not waited on
            text = f.read().decode("utf-8")
    except FileNotFoundError:
        raise NotFound(f"{name}: not there") from None
    except foreign.Refused as e:
        raise KinspectError(f"{name}: {str(e).split(': ', 1)[-1]}") from None
    except UnicodeDecodeError:
        raise KinspectError(f"{name}: not UTF-8 text") from None
    except OSError as e:
        raise KinspectError(f"{name}: cannot be read ({e.strerror})") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise KinspectError(f"{name}: nested too deeply") from None
    except ValueError as e:
        raise KinspectError(f"{name}: not JSON ({str(e).split(':')[0]})") from None
    try:
        schema.check(spec, data)
    except schema.Invalid as e:
        what = str(e)
        raise schema.Invalid(f"{name} {what.removeprefix('the file ')}" if what.startswith("the file ")
                             else f"{name}: {what}") from None
    return data


def store_flag(store) -> str:
    """` --store DIR` for a command line kinspect suggests, so that it runs as printed; nothing for
    the default store (a relative path stays as the user typed it: the hint runs where they are)."""
    import shlex

    return "" if store is None or str(store) == DEFAULT_OUT else f" --store {shlex.quote(str(store))}"


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace `path` with `data`: written to a fresh temporary file beside it (never a name a store
    could hold a link at), then renamed into place, so readers see the old file or the new one."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:60]}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())      # mkstemp's 0600 would make every report and record owner-only
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _open_lock(path: Path) -> int:
    """A lock file's descriptor, never through a link (a store may hold one where its lock goes)."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as e:
        link = " (it is a link: remove it)" if os.path.islink(path) else ""
        raise KinspectError(f"cannot open the lock file '{path}': {e.strerror}{link}") from None


def variant_name(v: Variant) -> str:
    parts = [v.target.slug]
    parts += [f"{k}-{_safe(val)}" for k, val in sorted(v.constexprs.items())]
    parts += [f"w{v.options.get('num_warps', '')}", f"s{v.options.get('num_stages', '')}"]
    name = "_".join(_safe(p) for p in parts)
    if len(name) > 120:  # keep folder names readable and under filesystem limits
        name = name[:120].rstrip("_-")
    return f"{name}_{v.hash[:8]}"


class StoreBusy(KinspectError):
    """Another kinspect process holds the store's write lock."""


class Store:
    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    # -- writing ------------------------------------------------------------------------------

    def ensure_writable(self) -> Path:
        return self._prepare(".")

    def _prepare(self, group: str) -> Path:
        folder = self.root / _safe(group) if group != "." else self.root
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise KinspectError(f"cannot write to '{self.root}': {e.strerror}; "
                                f"choose another folder with --store") from None
        if folder != self.root:
            try:
                contained(self.root, folder.name)
            except Outside:
                raise KinspectError(f"'{folder}' is a link out of the store '{self.root}'; kinspect does not write "
                                    f"through it: remove the link or choose another folder with --store") from None
        if not os.access(folder, os.W_OK):
            raise KinspectError(f"cannot write to '{folder}': permission denied; choose another folder with --store")
        return folder

    @contextlib.contextmanager
    def lock(self, required: bool = True):
        """Hold the store for writing. A second kinspect process gets StoreBusy, naming the holder.
        Folders this made and left empty (the command failed) are removed again. With
        `required=False` (capture inside someone's program) an unwritable or busy folder is not an
        error here: nothing is locked, and each variant is still written atomically."""
        root = str(self.root.resolve())
        held = os.environ.get(LOCK_ENV, "")
        if root in held.split(os.pathsep):
            yield
            return
        missing = [p for p in (*reversed(self.root.absolute().parents), self.root.absolute()) if not p.exists()]
        try:
            folder = self.ensure_writable()
        except KinspectError:
            if required:
                raise
            yield
            return
        try:
            fd = _open_lock(folder / LOCK)
        except KinspectError as e:
            raise KinspectError(f"cannot write to '{folder}': {e}; choose another folder with --store") from None
        try:
            _flock(fd, root)
        except StoreBusy:
            os.close(fd)
            if required:
                raise
            yield                  # capture in several processes of one program (ranks): writes are atomic
            return
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n{_command()}\n".encode("utf-8", "surrogateescape"))
        try:
            with patched({LOCK_ENV: os.pathsep.join(p for p in (held, root) if p)}):
                yield
        finally:
            os.ftruncate(fd, 0)
            os.close(fd)           # releases the flock
            if missing and _only_lock(missing[0], folder / LOCK):
                shutil.rmtree(missing[0], ignore_errors=True)   # nothing half-written: as it was

    def exists(self, group: str, v: Variant) -> Path | None:
        path = self.root / _safe(group) / variant_name(v)
        return path if (path / RECORD).is_file() else None

    def write(self, group: str, v: Variant, files: Mapping[str, Path | bytes | str], *,
              replace: bool = True) -> Variant:
        """Write a variant and its stage files atomically; returns the Variant as stored.

        `files` maps a file name inside the variant folder to a path to copy or the content. The same
        variant stored already (same hash) is replaced, keeping the launches recorded for it; with
        `replace=False` (capture: several processes of one program record the same compile), or
        when the stored one was captured from a program (a replay that compiles the same variant
        again must not trade the program's compile times and origin for its own), the stored one
        stays and is returned.
        """
        folder = self._prepare(group)
        name = variant_name(v)
        final = folder / name
        if final.is_symlink():      # not a variant kinspect wrote: a link planted in the store
            final.unlink()
        if (final / RECORD).is_file() and (not replace or _captured(final)):
            return read_record(final)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{name[:40]}-", dir=folder))
        try:
            as_umask(tmp)           # renamed into place: the variant's folder, as shareable as the store
            for fname, content in files.items():
                dest = tmp / _safe(fname)
                if isinstance(content, Path):
                    _link_or_copy(content, dest)
                elif isinstance(content, bytes):
                    dest.write_bytes(content)
                else:
                    dest.write_text(content)
            stored = dataclasses.replace(v, name=name, path=str(final))
            data = stored.to_json()
            if replace:
                data["launches"] = _keep_launches(final, tmp)
            write_atomic(tmp / RECORD, json.dumps(data, indent=1, sort_keys=True, default=str))
            if replace:
                _move_into_place(tmp, final)
            elif not _move_if_absent(tmp, final):
                return read_record(final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return stored

    def update_record(self, v: Variant) -> None:
        """Rewrite a stored variant's record.json atomically (write beside it, then replace). Its
        launches stay as record.json has them: `v` may hold launch files merged in by read_record,
        which stay files until merge_launches takes them."""
        folder = Path(v.path)
        data = v.to_json()
        data["launches"] = _stored_launches(folder)
        write_atomic(folder / RECORD, json.dumps(data, indent=1, sort_keys=True, default=str))

    # -- reading ------------------------------------------------------------------------------

    def variants(self) -> list[Variant]:
        return list(read_records(self.root))


def _captured(folder: Path) -> bool:
    """Whether the record in `folder` was made by a capture of a program."""
    try:
        return str(load_json(folder, RECORD, schema.RECORD).get("origin", "")).startswith("capture")
    except KinspectError:
        return False


def _stored_launches(folder: Path):
    """The launches record.json in `folder` holds (as JSON), or None."""
    try:
        return load_json(folder, RECORD, schema.RECORD).get("launches")
    except KinspectError:
        return None


def _link_or_copy(src: Path, dest: Path) -> None:
    """A hard link where the filesystem allows (capture runs inside the user's compile: a link costs
    a fraction of a copy of a MB-sized LLVM IR), else a copy. Stage files are never written in
    place, by Triton (it replaces files) or by kinspect, so the link is as good as a copy."""
    try:
        os.link(src, dest)
    except OSError:
        shutil.copyfile(src, dest)


def _command() -> str:
    """What this process is, as the user typed it: `kinspect dump add --store out`, or the script."""
    argv = list(sys.argv)
    if argv and Path(argv[0]).name in ("kinspect", "__main__.py"):
        argv[0] = "kinspect"
    text = " ".join(argv)
    return text if len(text) <= 80 else text[:77] + "..."


def _only_lock(top: Path, lock: Path) -> bool:
    """Whether the folders made for the store hold nothing but its lock file."""
    files = [Path(d, f) for d, _, fs in os.walk(top) for f in fs]
    return files == [lock]


def _flock(fd: int, root: str) -> None:
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 600, 0).decode(errors="replace").split()
        pid = f"pid {holder[0]}" if holder and holder[0].isdigit() else "another process"
        what = " ".join(holder[1:4]) if len(holder) > 1 else "kinspect"
        raise StoreBusy(f"store '{root}' is being written by another kinspect process ({pid}: {what}); "
                            f"wait for it to finish or choose another folder with --store") from None


def _keep_launches(final: Path, tmp: Path):
    """The launches recorded for a variant about to be replaced: its record's, returned, and its
    per-process launch files, linked into the new folder."""
    if not (final / RECORD).is_file():
        return None
    for p in final.glob(LAUNCHES_GLOB):
        try:
            _link_or_copy(contained(final, p.name), tmp / p.name)
        except (OSError, Outside):
            pass
    return _stored_launches(final)


def _move_if_absent(tmp: Path, final: Path) -> bool:
    """Rename tmp to final unless final exists (then tmp is removed); whether tmp went into place."""
    try:
        os.rename(tmp, final)
        return True
    except OSError:
        if not final.exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)
        return False


def _move_into_place(tmp: Path, final: Path) -> None:
    """Rename tmp to final. A same-hash variant already there is the same compile: replace it by
    moving it aside first, so readers see either the old or the new folder, never a mix."""
    if final.exists():
        old = final.with_name(f".old-{final.name}-{os.getpid()}")
        try:
            os.rename(final, old)
        except FileNotFoundError:
            old = None  # another process moved it first
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.exists():
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # a concurrent writer won with the same content
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    else:
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.exists():
                raise
            shutil.rmtree(tmp, ignore_errors=True)


def read_record(folder: Path, label: str | None = None) -> Variant:
    """The variant stored in `folder`, with its pending launch files merged in. Its record is
    checked (kinspect.files.schema.RECORD): a wrong one raises a KinspectError `variant LABEL: record.json:
    what`. A stage whose file leads out of the folder, or a launch file that is not one, is left out
    and said in the variant's `problems`."""
    folder = Path(folder)
    label = label or folder.name
    try:
        variant = Variant.from_json(load_json(folder, RECORD, schema.RECORD), path=str(folder))
    except NotFound:
        raise NotFound(f"no {RECORD} in '{folder}'; is it a kinspect variant folder?") from None
    except KinspectError as e:
        raise KinspectError(f"variant {label}: {e}") from None
    except (ValueError, TypeError, KeyError) as e:    # what the schema lets through and the model refuses
        raise KinspectError(f"variant {label}: {RECORD}: {e}") from None
    stages, problems = [], []
    where = str(folder)
    real = os.path.realpath(where) if any("/" in s.file for s in variant.stages) else None
    for s in variant.stages:
        try:
            _check_inside(where, s.file, real)
            if not s.section or s.file not in {x.file for x in stages}:
                foreign.vet(os.path.join(where, s.file), binary=s.binary)
            stages.append(s)
        except Outside as e:
            problems.append(f"stage {s.name}: {e}; not read")
        except foreign.Refused as e:
            problems.append(f"stage {s.name}: {str(e).replace(where + '/', '')}; not read")
    pending, bad = _pending_launches(folder)
    problems += bad
    launches = variant.launches
    if pending:
        from kinspect.files.launches import merge

        launches = merge([launches, *pending.values()])
    if problems or pending:
        variant = dataclasses.replace(variant, stages=tuple(stages), launches=launches, problems=tuple(problems))
    return variant


def read_records(root: Path, problems: list | None = None) -> Iterable[Variant]:
    """Every variant under a store root, skipping temporary folders of writers in progress. A variant
    whose record cannot be read, or whose folder is a link out of the store, is skipped with a line
    in `problems` when a list is given (else its error is raised)."""
    root = Path(root)
    if (root / RECORD).is_file():
        yield read_record(root)
        return
    real = os.path.realpath(root)
    for group in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if (group / RECORD).is_file():
            found = _read_one(root, real, group, problems)
            if found is not None:
                yield found
            continue
        for folder in sorted(p for p in group.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if (folder / RECORD).is_file():
                found = _read_one(root, real, folder, problems)
                if found is not None:
                    yield found


def _read_one(root: Path, real_root: str, folder: Path, problems: list | None) -> Variant | None:
    label = folder.relative_to(root).as_posix()
    try:
        if os.path.islink(folder) or os.path.islink(folder.parent):     # else inside by construction
            contained(root, label, real_root)
        return read_record(folder, label)
    except Outside as e:
        error = KinspectError(f"variant {label}: its folder is a link out of the store ({e})")
    except KinspectError as e:
        error = e
    if problems is None:
        raise error
    problems.append(f"{error}; skipped")
    return None


def unfinished(root: Path) -> list[str]:
    """A line saying what a capture left to do in this store, with the command that finishes it:
    launches recorded under the interpreter and not compiled yet (an interrupted `capture
    --interpret`, or one whose program is still running)."""
    import shlex

    folder = Path(root) / INTERPRET_PENDING
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        return []
    return [f"a capture left {len(files)} process(es)' interpreted launches to compile here (interrupted, or "
            f"still running); finish it with: kinspect capture --resume {shlex.quote(str(root))}"]


def is_store(path: Path) -> bool:
    path = Path(path)
    if (path / RECORD).is_file():
        return True
    try:
        return any((g / RECORD).is_file() or any((f / RECORD).is_file() for f in g.iterdir() if f.is_dir())
                   for g in path.iterdir() if g.is_dir() and not g.name.startswith("."))
    except OSError:
        return False


# -- launch records ---------------------------------------------------------------------------------

def launches_path(folder: Path, host: str, pid: int) -> Path:
    return Path(folder) / f"launches-{_safe(host)}-{pid}.json"


def write_launches(folder: Path, launches, *, host: str, pid: int) -> None:
    """One process's launches of one variant (cumulative), replacing its earlier file atomically."""
    write_atomic(launches_path(folder, host, pid), json.dumps({"launches": dataclasses.asdict(launches)}, default=str))


def _pending_launches(folder: Path) -> tuple[dict[Path, object], list[str]]:
    """Launch files not merged into record.json yet, and a line for each one that is not a launch
    record (it is left out)."""
    from kinspect.core.model import launches_from_json

    found, problems = {}, []
    for p in sorted(Path(folder).glob(LAUNCHES_GLOB)):
        try:
            found[p] = launches_from_json(load_json(folder, p.name, schema.LAUNCH_FILE)["launches"])
        except NotFound:
            continue      # merged and removed meanwhile
        except KinspectError as e:
            problems.append(f"{e}; not read")
    return found, problems


def merge_launches(folder: Path, only: Path | None = None) -> None:
    """Merge a variant's launch files (or the one file `only`) into its record.json and remove them.
    Several processes may do this at once (ranks leaving their captures): a lock on the variant
    folder makes each read-merge-write whole. A record or launch file that is not one is left as
    it is (readers say why)."""
    import fcntl

    from kinspect.files.launches import merge

    folder = Path(folder)
    fd = _open_lock(folder / LAUNCHES_LOCK)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        pending, _ = _pending_launches(folder)
        if only is not None:
            pending = {p: x for p, x in pending.items() if p == only}
        if not pending:
            return
        data = load_json(folder, RECORD, schema.RECORD)
        variant = Variant.from_json(data, path=str(folder))
        merged = merge([variant.launches, *pending.values()])
        data["launches"] = dataclasses.asdict(merged) if merged else None
        data["record_version"] = max(int(data.get("record_version") or 1), 2)
        write_atomic(folder / RECORD, json.dumps(data, indent=1, sort_keys=True, default=str))
        for p in pending:
            p.unlink(missing_ok=True)
    finally:
        os.close(fd)


def find_variant_folder(root: Path, kernel: str, hash_hex: str) -> Path | None:
    """The folder of the variant with this compile hash, stored under its kernel's name (as capture
    stores it), or None."""
    group = Path(root) / _safe(kernel)
    for folder in sorted(group.glob(f"*_{hash_hex[:8]}")) if group.is_dir() else ():
        try:
            if load_json(folder, RECORD, schema.RECORD).get("hash") == hash_hex:
                return folder
        except KinspectError:
            continue
    return None


# -- autotuning decisions --------------------------------------------------------------------------
# A decision is about a kernel and a key, across its configs (each a variant of its own), so it is
# kept per kernel, beside the kernel's variant folders, not in one variant's record.

def kernel_folder(root: Path, kernel: str) -> Path:
    return Path(root) / _safe(kernel)


def write_autotune(root: Path, kernel: str, decisions, *, host: str, pid: int) -> Path:
    """One process's decisions for one kernel (cumulative), replacing its earlier file atomically."""
    folder = kernel_folder(root, kernel)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"autotune-{_safe(host)}-{pid}.json"
    write_atomic(path, json.dumps([d.to_json() for d in decisions], default=str))
    return path


def _decisions(path: Path, problems: list | None = None) -> list:
    """The decisions in one autotune file; one that is not an autotune record is left out (with a
    line in `problems`)."""
    from kinspect.core.model import AutotuneDecision

    try:
        return [AutotuneDecision.from_json(d) for d in load_json(path.parent, path.name, schema.AUTOTUNE)]
    except NotFound:
        return []
    except (KinspectError, TypeError, ValueError) as e:
        # TypeError, ValueError: a value the schema lets through and the record refuses (records.from_json)
        if problems is not None:
            where = "" if isinstance(e, KinspectError) else f"{path.name}: "
            problems.append(f"kernel {path.parent.name}: {where}{e}; not read")
        return []


def read_autotune(root: Path, problems: list | None = None) -> list:
    """Every autotuning decision recorded in a store (merged and per-process files), by kernel; a
    file that is not an autotune record is left out, with a line in `problems`."""
    root = Path(root)
    found = []
    if not root.is_dir():
        return found
    for group in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for path in [group / AUTOTUNE, *sorted(group.glob(AUTOTUNE_GLOB))]:
            if path.is_file():
                found += _decisions(path, problems)
    return found


def merge_autotune(root: Path, only_pid: int | None = None) -> list:
    """Merge per-process decision files (or only process `only_pid`'s) into each kernel's
    autotune.json and remove them; returns the decisions merged now."""
    import fcntl

    root = Path(root)
    merged = []
    if not root.is_dir():
        return merged
    for group in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        files = [p for p in sorted(group.glob(AUTOTUNE_GLOB))
                 if only_pid is None or p.stem.endswith(f"-{only_pid}")]
        if not files:
            continue
        fd = _open_lock(group / LAUNCHES_LOCK)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            kept = _decisions(group / AUTOTUNE)
            new = [d for p in files for d in _decisions(p)]
            write_atomic(group / AUTOTUNE, json.dumps([d.to_json() for d in kept + new], indent=1, default=str))
            for p in files:
                p.unlink(missing_ok=True)
            merged += new
        finally:
            os.close(fd)
    return merged
