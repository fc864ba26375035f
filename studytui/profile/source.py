"""Opening a profile the learner gives us: one regular file, read as a stream, never whole.

An Nsight Compute export of 10,000 kernels is hundreds of megabytes and a profiler trace of a
training step can be larger still, so nothing here reads a file into memory: the readers get a
text stream and keep only what they need from each row or event.

Every refusal is a `ProfileError` (one line, exit status 2) that names the file and says why:

- not a regular file (a FIFO, a device, a directory): `studytui.core.fileio.open_regular`;
- larger than `PROFILE_LIMIT` on disk, by stat, before anything is read;
- gzip-compressed data that inflates past `PROFILE_LIMIT`, or more than `GZIP_RATIO_LIMIT` times
  its compressed size (a "gzip bomb"), stopped as soon as it gets there;
- binary data (a NUL byte, bytes that are not UTF-8 or UTF-16 text);
- text that grows past the limit while it is read (the count is kept while streaming).
"""

from __future__ import annotations

import codecs
import io
import os
from pathlib import Path
from typing import BinaryIO

from studytui.core import fileio
from studytui.core.errors import UsageError
from studytui.core.text import one_line

MIB = 1024 * 1024
GIB = 1024 * MIB
# The most bytes of profile data read from one file (after decompression). Module constants, so
# tests can lower them. Below the limit a file is streamed: memory does not grow with its size.
PROFILE_LIMIT = 2 * GIB
# A real Chrome trace or ncu export compresses 5-30x; past this ratio (once this much has been inflated) the
# data is a gzip bomb, not a trace.
GZIP_RATIO_LIMIT = 200
GZIP_RATIO_AFTER = 16 * MIB
CHUNK = MIB
SNIFF = 64 * 1024  # how much is looked at to tell the formats apart
GZIP_MAGIC = b"\x1f\x8b"


class ProfileError(UsageError):
    """A profile file studytui will not read, or cannot make sense of: one line, exit 2."""


def shown(path: str | os.PathLike[str]) -> str:
    """The path as it goes into a one-line message (control characters escaped, long paths cut)."""
    text = one_line(os.fspath(path))
    return text if len(text) <= 120 else text[:58] + "..." + text[-58:]


class _Counted(io.RawIOBase):
    """A binary stream that counts what it hands out and stops past `limit` bytes (and, for
    inflated data, past GZIP_RATIO_LIMIT times what was read from disk)."""

    def __init__(self, inner: BinaryIO, name: str, limit: int, compressed: BinaryIO | None = None):
        super().__init__()
        self._inner = inner
        self._name = name
        self._limit = limit
        self._compressed = compressed
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        data = self._inner.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self.count += n
        if self.count > self._limit:
            what = "its decompressed data" if self._compressed is not None else "it"
            raise ProfileError(f"{self._name}: {what} is larger than {fileio.size_text(self._limit)}, the most studytui reads; stopped")
        if self._compressed is not None and self.count > GZIP_RATIO_AFTER:
            packed = max(1, self._compressed.tell())
            if self.count > GZIP_RATIO_LIMIT * packed:
                raise ProfileError(
                    f"{self._name}: gzip data that inflates more than {GZIP_RATIO_LIMIT} times (a gzip bomb, not a profile); stopped"
                )
        return n


class Opened:
    """A profile opened for streaming: `head` (the first bytes, decompressed) tells the formats
    apart; `text()` gives the whole content as a text stream, once."""

    def __init__(self, path: Path, raw: BinaryIO, size: int):
        self.path = path
        self.name = shown(path)
        self.size = size
        self._raw = raw
        self.compressed = False
        stream: BinaryIO = raw
        magic = raw.read(2)
        raw.seek(0)
        if magic == GZIP_MAGIC:
            import gzip

            self.compressed = True
            stream = gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[assignment]
        self._counted = _Counted(stream, self.name, PROFILE_LIMIT, raw if self.compressed else None)
        self._buffered = io.BufferedReader(self._counted, buffer_size=CHUNK)
        try:
            self.head = self._buffered.peek(SNIFF)[:SNIFF]
        except (OSError, EOFError, ValueError) as exc:  # gzip.BadGzipFile is an OSError
            raise ProfileError(f"{self.name}: gzip data that cannot be decompressed ({_reason(exc)}); not read") from None
        self.encoding = _encoding(self.head)
        if self.encoding is None:
            raise ProfileError(f"{self.name}: binary data, not an Nsight Compute CSV export or a profiler trace; not read")

    @property
    def bytes_read(self) -> int:
        return self._counted.count

    def text(self) -> io.TextIOWrapper:
        """The content as text, decoded as it is read (UTF-8, or UTF-16 with its byte-order mark:
        PowerShell's `>` writes ncu's CSV that way)."""
        return io.TextIOWrapper(self._buffered, encoding=self.encoding, errors="strict", newline="")

    def head_text(self) -> str:
        """The first bytes decoded (a character cut at the end is dropped)."""
        assert self.encoding is not None
        decoder = codecs.getincrementaldecoder(self.encoding)(errors="replace")
        return decoder.decode(self.head, final=False)

    def close(self) -> None:
        try:
            self._buffered.close()
        finally:
            self._raw.close()

    def __enter__(self) -> "Opened":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _reason(exc: BaseException) -> str:
    return one_line(str(exc) or exc.__class__.__name__)[:80]


def _encoding(head: bytes) -> str | None:
    """The text encoding of a file starting with `head`, or None for binary data."""
    if head.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
        body = head[len(codecs.BOM_UTF8):]
    elif head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding, body = "utf-16", None
    else:
        encoding, body = "utf-8", head
    if body is None:
        try:
            decoded = codecs.getincrementaldecoder("utf-16")().decode(head[: len(head) // 2 * 2], final=False)
        except UnicodeDecodeError:
            return None
        return None if "\x00" in decoded else encoding
    if b"\x00" in body:
        return None
    try:
        codecs.getincrementaldecoder("utf-8")().decode(body, final=False)
    except UnicodeDecodeError:
        return None
    return encoding


def open_profile(path: str | os.PathLike[str]) -> Opened:
    """`path` opened for streaming, or ProfileError naming why not (missing, not a regular file,
    too large, binary, bad gzip)."""
    p = Path(path)
    name = shown(p)
    try:
        raw = fileio.open_regular(p)
    except FileNotFoundError:
        raise ProfileError(f"{name}: no such file") from None
    except fileio.NotRegularFileError:
        raise ProfileError(f"{name}: not a regular file (a directory, FIFO or device); not read") from None
    except PermissionError:
        raise ProfileError(f"{name}: permission denied") from None
    except OSError as exc:
        raise ProfileError(f"{name}: cannot open ({exc.strerror or exc.__class__.__name__})") from None
    try:
        size = os.fstat(raw.fileno()).st_size
        if size > PROFILE_LIMIT:
            raise ProfileError(f"{name}: larger than {fileio.size_text(PROFILE_LIMIT)}, the most studytui reads; not read")
        if size == 0:
            raise ProfileError(f"{name}: empty file, not an Nsight Compute CSV export or a profiler trace")
        return Opened(p, raw, size)
    except BaseException:
        raw.close()
        raise
