"""The one way kinspect opens a file it did not write: a stage of a Triton cache entry, a dump folder,
a store someone sent, a trace, a stage file named on the command line.

What such a file is cannot be trusted: it may be a FIFO (opening it waits for a writer forever), a
character device (`/dev/zero` never ends), a directory, a sparse file of terabytes, a link to a file
anywhere, binary where text is due. So a foreign file is opened without blocking and without
following a last link it should not, checked on the open descriptor (no window between the check and
the read): a regular file, at most `limit()` bytes (KINSPECT_MAX_STAGE_BYTES, 256 MB by default: the
largest real stages are tens of MB). What is refused raises `Refused`, one line naming the file and
why; readers leave that one file out, say so, and read the rest.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

from kinspect.core.errors import KinspectError

LIMIT_ENV = "KINSPECT_MAX_STAGE_BYTES"
DEFAULT_LIMIT = 256 << 20
BINARY_PROBE = 8192         # a NUL in a text file's first bytes means it is not text


class Refused(KinspectError):
    """A foreign file kinspect does not read: not a regular file, too big, or binary where text is due."""


def limit() -> int:
    """The most bytes kinspect reads of one foreign stage or metadata file (KINSPECT_MAX_STAGE_BYTES)."""
    raw = os.environ.get(LIMIT_ENV, "")
    try:
        value = int(float(raw)) if raw else DEFAULT_LIMIT
    except ValueError:
        value = DEFAULT_LIMIT
    return value if value > 0 else DEFAULT_LIMIT


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a link"
    return "not a regular file"


def _shown(path) -> str:
    text = str(path)
    return ascii(text if len(text) <= 160 else "..." + text[-160:])


def check(path, *, max_bytes: int | None = None, st: os.stat_result | None = None) -> os.stat_result:
    """The stat of `path` (links followed) when it is a regular file of at most `max_bytes`
    (default `limit()`); Refused otherwise. Never opens it."""
    cap = limit() if max_bytes is None else max_bytes
    try:
        st = st or os.stat(path)
    except FileNotFoundError:
        why = "a dangling link" if os.path.islink(path) else "missing"
        raise Refused(f"{_shown(path)}: {why}") from None
    except OSError as e:
        raise Refused(f"{_shown(path)}: cannot be looked at ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise Refused(f"{_shown(path)}: {kind_of(st.st_mode)}, not a file")
    if st.st_size > cap:
        raise Refused(f"{_shown(path)}: {st.st_size:,} bytes, over the {cap:,}-byte cap for one file "
                      f"(raise it with {LIMIT_ENV})")
    return st


def open_binary(path, *, max_bytes: int | None = None):
    """`path` opened for reading bytes, when check() passes on the opened descriptor: a FIFO is
    opened without waiting for a writer, and refused."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        why = "a dangling link" if os.path.islink(path) else "missing"
        raise Refused(f"{_shown(path)}: {why}") from None
    except OSError as e:
        raise Refused(f"{_shown(path)}: cannot be opened ({e.strerror})") from None
    try:
        check(path, max_bytes=max_bytes, st=os.fstat(fd))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def open_text(path, *, max_bytes: int | None = None, newline: str | None = None, binary_ok: bool = False):
    """`path` opened as UTF-8 text (undecodable bytes replaced), checked as open_binary does, and
    refused when binary (a NUL in its first bytes) unless `binary_ok`."""
    f = open_binary(path, max_bytes=max_bytes)
    try:
        if not binary_ok and b"\0" in f.peek(BINARY_PROBE)[:BINARY_PROBE]:
            raise Refused(f"{_shown(path)}: binary, where text is due")
    except BaseException:
        f.close()
        raise
    return io.TextIOWrapper(f, encoding="utf-8", errors="replace", newline=newline)


def vet(path, *, binary: bool = False) -> os.stat_result:
    """The stat of a stage file kinspect will read: a regular file under the cap and, for a text stage,
    not binary; Refused otherwise. Readers vet a folder's stages as they list it, so a refused stage
    is named once and left out, and the rest is read."""
    if binary:
        return check(path)
    with open_text(path) as f:
        return os.fstat(f.fileno())


def read_text(path, *, max_bytes: int | None = None) -> str:
    with open_text(path, max_bytes=max_bytes) as f:
        return f.read()


def read_bytes(path, *, max_bytes: int | None = None) -> bytes:
    with open_binary(path, max_bytes=max_bytes) as f:
        return f.read()


def is_binary(path) -> bool:
    with open_binary(path) as f:
        return b"\0" in f.read(BINARY_PROBE)


def head(path, n: int, *, max_bytes: int | None = None) -> list[str]:
    """The first `n` lines of a text file (Refused as open_text is)."""
    with open_text(path, max_bytes=max_bytes) as f:
        return [line for _, line in zip(range(n), f)]


def inside(root: Path, entry: Path) -> bool:
    """Whether `entry` (a name in `root`, maybe a link) resolves inside `root`'s real path."""
    top = os.path.realpath(root)
    real = os.path.realpath(entry)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)
