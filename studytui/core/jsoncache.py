"""Values built from files, kept between runs as JSON in the user cache directory (issue 27).

Parsing YAML costs more than the rest of a command: the guide, the practice problems, the
hardware catalog and the model presets are each read on most runs. Whatever a loader builds from
its files can be kept here as plain JSON values and read back while nothing it was built from has
changed. The cache holds only what the content files say, never a learner's data: deleting it at
any time costs one slower run. `studytui/guide/cache.py` keeps the guide with these same
primitives; `get` / `put` keep any other JSON value under a name.

A kept value is never trusted blindly. It is used only when every one of these holds; otherwise
the caller builds it from its files again and `put` writes it anew:

- the file is a regular file (not a link, not a FIFO) owned by this user, writable by nobody else,
  and at most MAX_BYTES long;
- its header names this FORMAT, this studytui version and the same name, and the same stamps
  (filestate.content_stamp: mtime, ctime, size, inode) for every file the value was built from
  and for the code that builds it (so a developer's edit of a loader counts as a change too);
- the BLAKE2b digest of the payload matches the header's (a truncated or corrupted file fails).

Only plain JSON values are kept: mappings with text keys, lists, text, integers, finite floats,
booleans and null. `put` refuses (returns False) a value that would not come back exactly as it
went in, type for type, so a reader gets the very value its loader built. Callers still check
what they read as they would check what they parsed: nothing read from the cache is executed or
unpickled, and a value of the wrong shape is the caller's signal to build again.

A value is written only when no file it was built from changed in the last RACY_S seconds: a
stamp taken so soon after a change might not see a second change within the file system's
timestamp granularity. Writing is best effort: a read-only or full cache directory only means the
next run builds again.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from studytui import __version__
from studytui.core.filestate import FullStamp, content_stamp

FORMAT = 2  # 2: the digest is BLAKE2b (1: SHA-256)
MAX_BYTES = 32 * 1024 * 1024
RACY_S = 2.0
SUBDIR = "values"

Stamps = list[tuple[str, FullStamp | None]]


class Invalid(Exception):
    """A cache file is not one this code wrote for these files: build again."""


def digest_hex(data: bytes) -> str:
    """BLAKE2b (32 bytes) of `data`, in hex: a cache file's header holds it of the payload, and
    names become file names through it. CPython's own module (`_blake2`, as `random` uses), not
    hashlib, which loads OpenSSL first (a few milliseconds on every command); BLAKE2b rather than
    SHA-256 (CPython's own is slow): a third of the time on the 150-170 KB a command reads."""
    try:
        from _blake2 import blake2b  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        from hashlib import blake2b
    return str(blake2b(data, digest_size=32).hexdigest())


def stamps_of(paths: Iterable[str | os.PathLike[str]]) -> Stamps:
    """Each path (as text) with its content stamp (None for a file that cannot be stamped)."""
    return [(os.fspath(p), content_stamp(p)) for p in paths]


def code_stamps(names: Sequence[str]) -> Stamps:
    """The stamps of this package's own modules `names` ("guide/loader.py", ...)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return stamps_of(os.path.join(package, name) for name in names)


def unchanged(stamps: Stamps) -> bool:
    """True when every (path, stamp) still has that stamp (a file that cannot be stamped never matches)."""
    return all(stamp is not None and content_stamp(path) == stamp for path, stamp in stamps)


def racy(stamps: Stamps, taken_at: float) -> bool:
    """True when a file was changed within RACY_S seconds of when its stamp was taken (or could
    not be stamped): a second change that soon may leave the stamp as it was."""
    limit = int((taken_at - RACY_S) * 1e9)
    return any(stamp is None or max(stamp[0], stamp[1]) > limit for _, stamp in stamps)


def parse_stamps(rows: Any) -> Stamps:
    """A header's [[path, mtime_ns, ctime_ns, size, inode], ...] as Stamps (Invalid if malformed)."""
    if type(rows) is not list or not rows:
        raise Invalid("stamps")
    out: Stamps = []
    for row in rows:
        if type(row) is not list or len(row) != 5 or type(row[0]) is not str or any(type(v) is not int for v in row[1:]):
            raise Invalid("stamps")
        out.append((row[0], (row[1], row[2], row[3], row[4])))
    return out


def stamp_rows(stamps: Stamps) -> list[list[Any]]:
    return [[path, *stamp] for path, stamp in stamps if stamp is not None]


def read_private(path: Path) -> bytes | None:
    """The file's bytes if it is a regular file of ours that nobody else can write, else None."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES or st.st_mode & 0o022:
            return None
        getuid = getattr(os, "getuid", None)
        if getuid is not None and st.st_uid != getuid():
            return None
        chunks = []
        left = MAX_BYTES + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= MAX_BYTES else None
    finally:
        os.close(fd)


def write_private(path: Path, raw: bytes) -> None:
    """Atomically replace `path` with `raw`, 0600 in a 0700 directory (no fsync: a cache)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(tmp, flags, 0o600)
    except FileExistsError:
        os.unlink(tmp)  # left by a process of ours with this pid that died mid-write
        fd = os.open(tmp, flags, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def header_and_payload(raw: bytes) -> tuple[dict[str, Any], bytes]:
    """A cache file's header (checked: format, version, digest) and its payload's bytes."""
    head, sep, payload = raw.partition(b"\n")
    if not sep:
        raise Invalid("no payload")
    header = json.loads(head)
    if not isinstance(header, dict):
        raise Invalid("header")
    if header.get("format") != FORMAT or header.get("studytui") != __version__:
        raise Invalid("another format or version")
    if header.get("bytes") != len(payload) or header.get("blake2b") != digest_hex(payload):
        raise Invalid("digest")
    return header, payload


def framed(header: dict[str, Any], payload: bytes) -> bytes:
    """`header` (with the format, version and the payload's length and digest added) and `payload`."""
    full = {"format": FORMAT, "studytui": __version__, **header, "bytes": len(payload), "blake2b": digest_hex(payload)}
    return json.dumps(full, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n" + payload


# -- any JSON value under a name -----------------------------------------------------------------


def value_file(name: str) -> Path:
    from studytui.core.paths import cache_dir

    return cache_dir() / SUBDIR / f"{digest_hex(name.encode('utf-8', 'surrogatepass'))[:24]}.json"


def get(name: str, code: Sequence[str], files: Sequence[str] | None = None) -> tuple[Any, Stamps] | None:
    """The value kept under `name` and the stamps of the files it was built from, when none of
    them nor the code files `code` changed since (and, given `files`, it was built from exactly
    those, in that order); else None (never raises)."""
    try:
        raw = read_private(value_file(name))
        if raw is None:
            return None
        header, payload = header_and_payload(raw)
        if header.get("name") != name:
            raise Invalid("another name")
        stamped, kept_code = parse_stamps(header.get("files")), parse_stamps(header.get("code"))
        if files is not None and [path for path, _ in stamped] != list(files):
            raise Invalid("built from other files")
        if kept_code != code_stamps(code) or not unchanged(stamped):
            raise Invalid("changed")
        return json.loads(payload), stamped
    except (Invalid, OSError, ValueError, TypeError, RecursionError, UnicodeError):
        return None


def put(name: str, value: Any, stamps: Stamps, code: Sequence[str], taken_at: float) -> bool:
    """Keep `value`, built from the files in `stamps` (stamped at `taken_at`, before they were
    read); False when it was not written: a file changed too recently, the value is not plain
    JSON that comes back exactly, or the cache directory cannot be written."""
    code_now = code_stamps(code)
    if not stamps or racy(stamps + code_now, taken_at):
        return False
    try:
        payload = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        if not same(json.loads(payload), value):
            return False
        raw = framed({"name": name, "files": stamp_rows(stamps), "code": stamp_rows(code_now)}, payload)
        write_private(value_file(name), raw)
    except (TypeError, ValueError, RecursionError, OSError, UnicodeError):
        return False
    return True


def now() -> float:
    """The time to pass to `put` as `taken_at`: take it before stamping and reading the files."""
    return time.time()


def same(a: Any, b: Any) -> bool:
    """True when `a` and `b` are equal plain values of the same types all the way down (1, 1.0 and
    True are three different values here; a tuple is not a list)."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(type(k) is str and same(v, b[k]) for k, v in a.items())
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) in (str, int, bool) or a is None:
        return bool(a == b)
    if type(a) is float:
        return bool(a == b) and a == a
    return False
