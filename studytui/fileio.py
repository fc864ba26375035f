"""Reading files the learner gives us, with a ceiling on their size.

A 200 MB "export" must not take gigabytes of memory, and a file that grows while it is read must
not get past the check: the size is checked by stat before reading, and the read itself stops
one byte past the limit. No Textual, no Rich here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from studytui.errors import UsageError

MIB = 1024 * 1024
# The most studytui reads of one file of each kind. Module constants, so tests can lower them.
JSON_IMPORT_LIMIT = 64 * MIB  # `studytui import FILE.json` (a full export of a large guide is a few MB)
YAML_LIMIT = 8 * MIB  # any YAML file: content, keys.yaml, hardware files, measured profiles (~100 KB)
# (A README for `guide diff` has its own check, studytui.guide.readme.MAX_README_BYTES.)


class TooLargeError(UsageError):
    """A file over the size studytui reads for its kind: one line, exit 2, nothing read."""


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


def read_bounded(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """The bytes of `path`, refused with one line (TooLargeError, exit 2) when larger than `limit`.

    OSError propagates, so callers keep their own "cannot read" messages."""
    path = Path(path)
    with open(path, "rb") as handle:
        try:
            size = os.fstat(handle.fileno()).st_size
        except OSError:
            size = 0
        if size > limit:
            raise too_large(path, limit, what)
        # limit + 1: a file that grew since the stat (or a device with no size) is still caught.
        return read_stream_bounded(handle, limit, what, str(path))


def read_text_bounded(path: str | os.PathLike[str], limit: int, what: str) -> str:
    """`read_bounded` decoded as UTF-8 (UnicodeDecodeError propagates, as from Path.read_text);
    line endings translated the way Path.read_text does."""
    text = read_bounded(path, limit, what).decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
