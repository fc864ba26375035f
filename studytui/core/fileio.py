"""Files the learner gives us and files we write for them: reading with a ceiling on the size,
the one policy for replacing a file atomically (`replace_file`, `write_atomically`), and the one
editor round trip (`edit_in_editor`) the command line and the app share.

A 200 MB "export" must not take gigabytes of memory, and a file that grows while it is read must
not get past the check: the size is checked by stat before reading, and the read itself stops
one byte past the limit. Only regular files are read: a FIFO (which would block for ever, waiting
for a writer), a device (/dev/zero, also through a symlink), a socket or a directory is refused
with one line. The file is opened with O_NONBLOCK, so opening a FIFO does not block, and checked
with fstat on the descriptor it was opened as (no window for a swap between check and read).
No Textual, no Rich here.

Writing and the editor: see the sections below.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import BinaryIO, Callable, Mapping

from studytui.core.errors import StudyError, UsageError
from studytui.core.tuples import Tuple

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


# -- writing: one atomic-replace policy -----------------------------------------------------
#
# Every file studytui writes over (a JSON or Markdown export, an Anki deck, each file of a
# vault) is replaced the same way: the new bytes go to a temporary file in the same folder,
# which is fsynced, then renamed over the old name; the folder is fsynced after the rename. A
# crash leaves the old file or the new one, complete, never an empty or half-written file, and
# once the command reports success the new file is on disk. (The vault renames many files
# into one folder and fsyncs each folder once, after its last file: the same guarantee.)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class NotCreatedError(OSError):
    """`replace_file` could not even create its temporary file: nothing was written."""


def replace_file(dir_fd: int, name: str, data: bytes, mode: int | None = None, new_mode: int = 0o600,
                 sync_folder: bool = True) -> None:
    """Replace `name` in the folder open as `dir_fd` with `data`, by the policy above.

    `mode`: the permissions to give the new file (those of the file it replaces); None for a new
    file, created with `new_mode` (the umask applies). The temporary file is created with
    O_EXCL|O_NOFOLLOW, so nothing swapped in under its name is followed. `sync_folder=False`
    leaves the folder's fsync to the caller (`sync_folder(dir_fd)` after its last file). Any
    failure removes the temporary file and leaves the old one as it was; OSError propagates
    (NotCreatedError when the temporary file could not be created)."""
    import secrets

    tmp = f".{name[:100]}.{secrets.token_hex(6)}.studytui-tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                     0o600 if mode is not None else new_mode, dir_fd=dir_fd)
    except OSError as exc:
        raise NotCreatedError(exc.errno, exc.strerror, exc.filename) from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            if mode is not None:
                os.fchmod(f.fileno(), mode)  # the replaced file's permissions, not the temporary 0600
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
    if sync_folder:
        fsync_folder(dir_fd)


def fsync_folder(dir_fd: int) -> None:
    """Make the renames into the folder open as `dir_fd` durable. Best effort: some file
    systems refuse fsync on a folder, and the files themselves are already on disk."""
    try:
        os.fsync(dir_fd)
    except OSError:
        pass


def open_folder(path: str | os.PathLike[str]) -> int:
    """A descriptor of the folder `path` for `replace_file` (OSError propagates)."""
    return os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)


def write_atomically(path: Path, data: bytes) -> Path:
    """Replace the file at `path` with `data` by the one policy above (`replace_file`). Through
    a symlink its target is replaced; a new file is private (0600), a replaced one keeps its
    mode. Returns the file written (a symlink's target)."""
    target, mode = export_target(path)
    directory = target.parent
    if not directory.is_dir():
        raise UsageError(f"cannot write {path}: directory {directory} does not exist")
    try:
        dir_fd = open_folder(directory)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}; nothing was written") from None
    try:
        replace_file(dir_fd, target.name, data, mode)
    except NotCreatedError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}; nothing was written") from None
    except OSError as exc:
        raise UsageError(
            f"cannot write {path}: {exc.strerror or exc}; nothing was written and any old file there is unchanged"
        ) from None
    finally:
        os.close(dir_fd)
    return target


# -- the editor round trip ------------------------------------------------------------------
#
# `studytui note ID --edit` and the app's `E` both go through `edit_in_editor`, with one policy:
# the editor is $VISUAL, else $EDITOR (the first set to something other than blanks); with
# neither set nothing is guessed (a learner who never chose vi is not dropped into it) and the
# refusal says how to set one. The text goes to a private temporary file (0600) and comes back
# byte for byte; a result studytui could not save (too large, not UTF-8) stays in that file,
# and the message names it.

NO_EDITOR = "no editor set: export VISUAL or EDITOR"


class EditedText(Tuple):
    """What the editor left: `text`, still kept in the temporary file `path` until the caller
    has saved it (then `discard()`); a refused save names `path`, so nothing typed is lost."""

    text: str
    path: Path

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)


def editor_command(environ: Mapping[str, str] | None = None, hint: str = "") -> str:
    """The learner's editor: $VISUAL, else $EDITOR. Neither: UsageError, NO_EDITOR + `hint`."""
    environ = os.environ if environ is None else environ
    for name in ("VISUAL", "EDITOR"):
        value = environ.get(name)
        if value and value.strip():
            return value
    raise UsageError(NO_EDITOR + hint)


def shown_size(size: int, limit: int) -> str:
    """A size over `limit` as a person reads it: '9.5 MiB', '700 KiB', or the bytes where the
    rounded figure would read as the limit itself ('8,388,620 bytes', not '8.0 MiB')."""
    text = f"{size / MIB:.1f} MiB" if size >= MIB else f"{size / 1024:.0f} KiB"
    if size > limit and text == f"{limit / MIB:.1f} MiB":
        return f"{size:,} bytes"
    return text


def edit_in_editor(initial: str, name: str, *, limit: int, environ: Mapping[str, str] | None = None,
                   run: Callable[[list[str]], int] | None = None, hint: str = "", what: str = "note") -> EditedText:
    """Run the learner's editor (`editor_command`) on `initial` in a temporary file named after
    `name`; the text it saved. `run` starts the editor and returns its exit status (default
    subprocess.call; the app hands the terminal over first). Refusals are one line: UsageError
    (no editor; the file removed, replaced or over `limit` bytes) or StudyError (the editor did
    not start or failed; the result is not UTF-8)."""
    import shlex
    import subprocess
    import tempfile

    editor = editor_command(environ, hint)
    run = subprocess.call if run is None else run
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name[:40]) or what
    fd, temp = tempfile.mkstemp(prefix="studytui-note-", suffix=f"-{safe}.md")
    path = Path(temp)
    unchanged = f"the {what} was not changed"
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(initial.encode("utf-8"))
    except OSError as exc:  # a full temporary folder: the half-written copy of the note goes, and the message names it
        path.unlink(missing_ok=True)
        raise StudyError(f"cannot write the temporary file {path} for the editor ({exc.strerror or exc}); {unchanged}") from None
    try:
        status = run([*shlex.split(editor), str(path)])
    except Exception as exc:  # not found, not executable, unbalanced quotes, no terminal to hand over
        path.unlink(missing_ok=True)
        raise StudyError(f"cannot run editor {editor!r} ({exc}); {unchanged}") from None
    if status != 0:
        path.unlink(missing_ok=True)
        raise StudyError(f"editor {editor!r} exited with status {status}; {unchanged}")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise UsageError(f"editor {editor!r} removed the temporary file; {unchanged}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"editor {editor!r} replaced the temporary file {path} with something that is not a file; {unchanged}")
    if st.st_size > limit:
        raise UsageError(
            f"the edited {what} is {shown_size(st.st_size, limit)}, more than the {size_text(limit)} a {what} can hold; "
            f"nothing saved, your text is kept in {path}"
        )
    try:
        return EditedText(path.read_bytes().decode("utf-8"), path)  # bytes as saved: no newline translation
    except UnicodeDecodeError:
        raise StudyError(f"the edited {what} is not valid UTF-8; nothing saved, your text is kept in {path}") from None
    except OSError as exc:
        raise UsageError(f"cannot read the edited {what} {path} ({exc.strerror or exc}); {unchanged}") from None
