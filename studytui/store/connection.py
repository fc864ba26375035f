"""The store's file and its SQLite connection: everything below the reads and writes.

Owns the file's permissions (a private data directory and database), opening and checking the
file (is it SQLite, is it studytui's, is it damaged, is it newer; migrating an older one), the
read and write connection, the transaction every write runs in, and the plain-language errors
that SQLite's are turned into. `store.Store` builds the learner's reads and writes on top.

Durability rules, and why:
- every write method is one `BEGIN IMMEDIATE ... COMMIT` transaction, committed before it
  returns: an acknowledged write is on disk (WAL + synchronous=FULL fsyncs the log on commit);
- IMMEDIATE takes the write lock up front, so a second process waits (busy_timeout) instead of
  failing with "database is locked" when a read transaction tries to upgrade;
- a damaged file is never written to, replaced or deleted: it is left where it is and the error
  names it, so the learner (or a backup tool) still has every byte.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping, TypeVar

from studytui.core.errors import StoreError
from studytui.store import schema

DB_NAME = "studytui.db"
BUSY_TIMEOUT_MS = 5000
SQLITE_MAGIC = b"SQLite format 3\x00"
# SQLite's primary result codes (sqlite3 names them only from Python 3.11, as it does
# `sqlite_errorcode`: before that no error carries a code and these are never matched).
_SQLITE_IOERR = 10
_SQLITE_FULL = 13

# Notes are private: the data directory studytui creates is 0700, the database (and the -wal and
# -shm files SQLite gives the same mode, and migration backups) 0600, whatever the umask.
DIR_MODE = 0o700
FILE_MODE = 0o600
SIDE_FILES = ("-wal", "-shm", "-journal")


def _owned(st: os.stat_result) -> bool:
    getuid = getattr(os, "getuid", None)  # no owners to check on Windows (and no mode bits to set)
    return getuid is not None and st.st_uid == getuid()


def make_private_dir(directory: Path) -> None:
    """Create `directory` (and missing parents) with the leaf 0700. A directory that already
    exists is the learner's: its mode is left alone (`studytui where` warns when others can read it)."""
    if directory.is_dir():
        return
    os.makedirs(directory, mode=DIR_MODE, exist_ok=True)
    # makedirs' mode is filtered by the umask (and a race may have made it elsewhere): set it.
    try:
        st = os.stat(directory)
        if _owned(st) and stat.S_IMODE(st.st_mode) != DIR_MODE:
            os.chmod(directory, DIR_MODE)
    except OSError:
        pass


def create_private_file(path: Path) -> None:
    """Create `path` empty and 0600 unless it exists: SQLite then opens it as a new database
    (an empty file is one), and its -wal/-shm files take the same mode."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, FILE_MODE)
    except FileExistsError:
        return  # another process created it first: tightened like any existing file
    os.close(fd)


def tighten(path: Path) -> None:
    """Take group and other permission bits off `path` and its SQLite side files when this user
    owns them (a database created by an older studytui under umask 022 was -rw-r--r--)."""
    for candidate in (path, *(path.with_name(path.name + suffix) for suffix in SIDE_FILES)):
        try:
            st = os.stat(candidate, follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or not _owned(st) or not st.st_mode & 0o077:
                continue
            os.chmod(candidate, stat.S_IMODE(st.st_mode) & ~0o077)
        except OSError:
            continue  # gone, or on a read-only medium: nothing to do


def _not_writable_reason(path: Path) -> str | None:
    """Why the database cannot be written, or None. os.access also sees read-only mounts."""
    directory = path.parent
    if path.exists():
        if not os.access(path, os.W_OK):
            return "the file is read-only"
    elif not directory.exists():
        return None  # created on the first write
    if not os.access(directory, os.W_OK):
        return "its directory is read-only"
    return None


_Self = TypeVar("_Self", bound="StoreConnection")


class StoreConnection:
    """The database file and its one connection, opened on first use; `store.Store` is the one
    subclass (its docstring says what `read_only`, `damaged` and `salvage` mean)."""

    def __init__(
        self, path: Path, migrations: Mapping[int, schema.Migration] | None = None, salvage: bool = False
    ) -> None:
        self.path = Path(path)
        self._migrations = migrations
        self._salvage = salvage
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self.backup_path: Path | None = None  # set when opening migrated the file
        self._older_schema = False  # a read-only or damaged file left at an older schema version
        self.damaged: str | None = None
        self.read_only_reason: str | None = _not_writable_reason(self.path)
        if self.path.exists():
            self._connect()

    @property
    def read_only(self) -> bool:
        return self.read_only_reason is not None

    def _check_file(self) -> None:
        if not self.path.exists():
            return  # about to be created by the first write
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a directory, not a database file; it was left untouched")
        if not self.path.is_file():  # a FIFO would block the open below forever; a device is no database
            raise StoreError(f"{self.path} is not a regular file, so not a database; it was left untouched")
        try:
            with open(self.path, "rb") as f:
                header = f.read(len(SQLITE_MAGIC))
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        if header and header != SQLITE_MAGIC:
            raise StoreError(
                f"{self.path} is not a SQLite database; it was left untouched "
                "(move it aside or restore a backup, then run studytui again)"
            )

    def _open_connection(self) -> sqlite3.Connection:
        options: dict[str, Any] = {
            "timeout": BUSY_TIMEOUT_MS / 1000,
            "isolation_level": None,  # we issue BEGIN/COMMIT ourselves
            "check_same_thread": False,
        }
        if not self.read_only:
            conn: sqlite3.Connection = sqlite3.connect(str(self.path), **options)
            return conn
        uri = self.path.resolve().as_uri()
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, **options)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError:
            conn.close()
        # A WAL database in a directory nobody can write: SQLite cannot create its shared-memory
        # file there, so read the file as immutable (no writer can exist on a read-only medium).
        conn = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, **options)
        return conn

    def _connect(self) -> sqlite3.Connection:
        self._check_file()
        tighten(self.path)  # before SQLite opens it (and creates -wal/-shm with its mode)
        self.read_only_reason = _not_writable_reason(self.path)
        try:
            conn = self._open_connection()
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if not self.read_only:
                conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            # Cheap proof the file is a readable database (a text file with a forged header).
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            stamped = self._check_identity(conn)
            version = schema.user_version(conn)
            latest = max(self._migrations) if self._migrations else schema.SCHEMA_VERSION
            if version > latest:
                raise StoreError(
                    f"{self.path} was written by a newer studytui (schema version {version}, this one "
                    f"reads up to {latest}); it was left untouched - upgrade studytui to use it"
                )
            if version > 0 or schema.table_names(conn):
                self._check_integrity(conn)  # before any migration: a damaged file is never migrated
            self._older_schema = version < latest
            if version < latest and (self.damaged or self.read_only):
                pass  # read the file as it is: tables a newer schema adds read as empty
            elif version < latest:
                try:
                    self.backup_path = schema.migrate(conn, self.path, self._migrations)
                except schema.MigrationFailed as exc:
                    raise StoreError(
                        f"could not upgrade {self.path} from schema version {exc.from_version} to "
                        f"{exc.to_version} ({exc.cause}); it was rolled back and left as it was"
                    ) from None
            elif not stamped:
                self._stamp(conn)
        except StoreError:
            conn.close()
            raise
        except sqlite3.Error as exc:
            conn.close()
            raise self._error(exc) from None
        self._conn = conn
        return conn

    def _check_identity(self, conn: sqlite3.Connection) -> bool:
        """Refuse a SQLite file that is not ours before anything is written to it. True if stamped."""
        app_id = schema.application_id(conn)
        if app_id == schema.APPLICATION_ID:
            return True
        tables = schema.table_names(conn)
        if app_id == 0:
            if not tables:
                return False  # empty file: the first write creates our schema
            if self._migrations is not None and schema.user_version(conn) == 0:
                return False  # a test's own migrations from a hand-made legacy layout
            if schema.user_version(conn) >= 1 and schema.looks_like_studytui(conn):
                return False  # from before the stamp: recognised by its tables, stamped below
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise StoreError(
            f"{self.path} is not a studytui database (another program's SQLite file"
            + (f" with tables {shown}" if tables else "")
            + f", application id {app_id}); it was left untouched - move it aside or use another --data-dir"
        )

    def _check_integrity(self, conn: sqlite3.Connection) -> None:
        """SQLite's quick_check (every page and b-tree, no index cross-check): partial damage
        shows here, before any write could go into a damaged file."""
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
            problem = None if rows == [("ok",)] else "; ".join(str(r[0]) for r in rows[:2])
        except sqlite3.OperationalError:
            raise  # locked, busy, I/O: not a finding about the file's contents
        except sqlite3.DatabaseError as exc:
            problem = str(exc)
        if problem is None:
            return
        problem = " ".join(problem.split())[:200]
        if not self._salvage:
            raise StoreError(
                f"{self.path} is damaged ({problem}); it was left untouched - save what can still be "
                "read with 'studytui export FILE', then move it aside or restore a backup"
            )
        self.damaged = problem

    def _stamp(self, conn: sqlite3.Connection) -> None:
        if self.read_only or self.damaged:
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
            if schema.application_id(conn) == 0:
                conn.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
            conn.execute("COMMIT")
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")  # not essential: stamped on a later open

    def _error(self, exc: sqlite3.Error) -> StoreError:
        message = str(exc)
        lowered = message.lower()
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF  # primary code of an extended one
        if "locked" in lowered or "busy" in lowered:
            return StoreError(
                f"{self.path} stayed locked by another studytui process for over "
                f"{BUSY_TIMEOUT_MS // 1000} s; nothing was changed - try again"
            )
        if code == _SQLITE_FULL or "disk is full" in lowered:
            return StoreError(
                f"the disk holding {self.path} is full: this change was not saved, and nothing saved "
                "before was lost - free some space and try again"
            )
        if code == _SQLITE_IOERR or "disk i/o error" in lowered:
            return StoreError(f"cannot read or write {self.path} ({message}); nothing was changed - try again")
        if isinstance(exc, sqlite3.OperationalError) and ("unable to open" in lowered or "readonly" in lowered):
            return StoreError(f"cannot write {self.path} ({message}); check the data directory's permissions")
        return StoreError(
            f"{self.path} is damaged or not a studytui database ({message}); it was left untouched "
            "(save what can still be read with 'studytui export FILE', then restore a backup or move it aside)"
        )

    def _refuse_write(self) -> None:
        if self.read_only:
            raise StoreError(
                f"{self.path} is read-only ({self.read_only_reason}): nothing was changed - reading and "
                "'studytui export' still work"
            )
        if self.damaged:
            raise StoreError(
                f"{self.path} is damaged ({self.damaged}); nothing was written to it - save what can "
                "still be read with 'studytui export FILE'"
            )

    def _read_conn(self) -> sqlite3.Connection | None:
        if self._conn is None:
            if not self.path.exists():
                return None  # nothing recorded yet; reading must not create the file
            self._connect()
        return self._conn

    def _write_conn(self) -> sqlite3.Connection:
        self._refuse_write()
        if self._conn is None:
            if not self.path.exists():
                try:
                    make_private_dir(self.path.parent)
                except OSError as exc:
                    raise StoreError(f"cannot create data directory {self.path.parent}: {exc.strerror or exc}") from None
                try:
                    create_private_file(self.path)  # 0600 before SQLite writes a byte into it
                except OSError as exc:
                    raise StoreError(f"cannot create {self.path}: {exc.strerror or exc}") from None
            self._connect()
        assert self._conn is not None
        return self._conn

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection | None]:
        with self._lock:
            try:
                yield self._read_conn()
            except sqlite3.Error as exc:
                raise self._error(exc) from None

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One transaction, committed before the caller's write method returns."""
        with self._lock:
            conn = self._write_conn()
            self._refuse_write()  # opening may have found the file read-only or damaged
            try:
                conn.execute("BEGIN IMMEDIATE")
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                if isinstance(exc, sqlite3.Error):
                    raise self._error(exc) from None
                raise

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __del__(self) -> None:
        # A sqlite3 connection sits in a reference cycle (its statement cache) and would stay open
        # until the garbage collector runs; a store dropped without close() closes it now, so no
        # stale connection lingers beside a new one in the same process.
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
