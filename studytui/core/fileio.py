"""Reading files the learner gives us, with a ceiling on their size.

A 200 MB "export" must not take gigabytes of memory, and a file that grows while it is read must
not get past the check: the size is checked by stat before reading, and the read itself stops
one byte past the limit. Only regular files are read: a FIFO (which would block for ever, waiting
for a writer), a device (/dev/zero, also through a symlink), a socket or a directory is refused
with one line. The file is opened with O_NONBLOCK, so opening a FIFO does not block, and checked
with fstat on the descriptor it was opened as (no window for a swap between check and read).
No Textual, no Rich here.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from studytui.core.errors import UsageError

MIB = 1024 * 1024
# The most studytui reads of one file of each kind. Module constants, so tests can lower them.
JSON_IMPORT_LIMIT = 64 * MIB  # `studytui import FILE.json` by default (see json_import_limit)
# The learner may raise the JSON import limit for one run (an export of long notes with their
# full history can be larger): STUDYTUI_IMPORT_LIMIT_MIB=N, a whole number of MiB.
IMPORT_LIMIT_ENV = "STUDYTUI_IMPORT_LIMIT_MIB"
MAX_IMPORT_LIMIT_MIB = 64 * 1024  # 64 GiB: past this a typo, not a backup
YAML_LIMIT = 8 * MIB  # any YAML file: content, keys.yaml, hardware files, measured profiles (~100 KB)
# (A README for `guide diff` has its own check, studytui.guide.readme.MAX_README_BYTES.)


class RefusedFileError(UsageError):
    """A file studytui will not read (too large, not a regular file): one line, exit 2, nothing read."""


class TooLargeError(RefusedFileError):
    """A file over the size studytui reads for its kind: one line, exit 2, nothing read."""


class NotRegularFileError(RefusedFileError):
    """A FIFO, device, socket or directory where a file was expected: one line, exit 2, nothing read."""


def not_regular(path: str | os.PathLike[str]) -> NotRegularFileError:
    return NotRegularFileError(f"{path}: not a regular file; not read")


def json_import_limit() -> int:
    """The most `studytui import FILE.json` reads: JSON_IMPORT_LIMIT, or STUDYTUI_IMPORT_LIMIT_MIB
    MiB when set (a whole number from 1 to MAX_IMPORT_LIMIT_MIB; anything else is a UsageError)."""
    raw = os.environ.get(IMPORT_LIMIT_ENV)
    if raw is None or not raw.strip():
        return JSON_IMPORT_LIMIT
    text = raw.strip()
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= MAX_IMPORT_LIMIT_MIB:
        shown = ascii(raw) if len(raw) <= 40 else ascii(raw[:40]) + "..."
        raise UsageError(
            f"{IMPORT_LIMIT_ENV} must be a whole number of MiB from 1 to {MAX_IMPORT_LIMIT_MIB}, not {shown}; nothing was changed"
        )
    return int(text) * MIB


def size_text(limit: int) -> str:
    """'64 MiB', '512 KiB', '100 bytes': the limit as a person reads it."""
    for unit, size in (("GiB", MIB * 1024), ("MiB", MIB), ("KiB", 1024)):
        if limit >= size and limit % size == 0:
            return f"{limit // size} {unit}"
    return f"{limit:,} bytes"


def too_large(path: str | os.PathLike[str], limit: int, what: str) -> TooLargeError:
    return TooLargeError(f"{path}: {what} is larger than {size_text(limit)}, the most studytui reads; not read")


def read_stream_bounded(stream: BinaryIO, limit: int, what: str, name: str) -> bytes:
    """At most `limit` bytes from an open binary stream (standard input); TooLargeError past it."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise too_large(name, limit, what)
    return data


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` opened for reading in binary, or NotRegularFileError when it is not a regular file.

    O_NONBLOCK: opening a FIFO with no writer returns at once instead of blocking; the check is
    made on the open descriptor (fstat), then O_NONBLOCK is cleared for an ordinary read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise not_regular(path) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(path)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """The bytes of `path`, refused with one line (TooLargeError, exit 2) when larger than `limit`,
    and (NotRegularFileError) when it is not a regular file: a FIFO, a device, a directory.

    OSError propagates, so callers keep their own "cannot read" messages."""
    path = Path(path)
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise too_large(path, limit, what)
        # limit + 1: a file that grew since the stat (or a device with no size) is still caught.
        return read_stream_bounded(handle, limit, what, str(path))


def read_text_bounded(path: str | os.PathLike[str], limit: int, what: str) -> str:
    """`read_bounded` decoded as UTF-8 (UnicodeDecodeError propagates, as from Path.read_text);
    line endings translated the way Path.read_text does."""
    text = read_bounded(path, limit, what).decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def export_target(path: Path) -> tuple[Path, int | None]:
    """Where an export to `path` really goes, and the mode of the file it replaces.

    Through a symlink to its target, so a link into a backup folder keeps pointing at the fresh
    copy; a FIFO, device, socket or directory is refused (replacing one would break whatever
    uses it, and writing into a FIFO could block for ever).
    """
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return target, None
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}; nothing was written") from None
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"cannot write {path}: it is a directory; nothing was written")
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device"
        raise UsageError(f"cannot write {path}: it is {kind}, not a regular file; nothing was written")
    return target, stat.S_IMODE(st.st_mode)


def write_atomically(path: Path, data: bytes) -> Path:
    """Temp file in the same directory, fsync, rename over: a crash leaves the old file or the new.
    Any failure removes the temp file. Returns the file written (a symlink's target)."""
    import tempfile

    target, mode = export_target(path)
    directory = target.parent
    if not directory.is_dir():
        raise UsageError(f"cannot write {path}: directory {directory} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".studytui-export.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}; nothing was written") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)  # the replaced file's permissions, not mkstemp's 0600
        os.replace(tmp, target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise UsageError(
                f"cannot write {path}: {exc.strerror or exc}; nothing was written and any old file there is unchanged"
            ) from None
        raise
    try:  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass
    return target
