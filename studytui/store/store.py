"""The progress store: one SQLite file holding states, notes, UI state and an event log.

Durability rules, and why:
- every write method is one `BEGIN IMMEDIATE ... COMMIT` transaction, committed before it
  returns: an acknowledged write is on disk (WAL + synchronous=FULL fsyncs the log on commit);
- IMMEDIATE takes the write lock up front, so a second process waits (busy_timeout) instead of
  failing with "database is locked" when a read transaction tries to upgrade;
- a damaged file is never written to, replaced or deleted: it is left where it is and the error
  names it, so the learner (or a backup tool) still has every byte.

Reads and everyday writes use the standard library's sqlite3 alone, and so does creating a new
database (`schema.py` holds the statements). Migrating an older file, `export_json` and
`import_json` go through sqlite-utils (`schema.utils_db`: `rows_where`, `insert_all`,
`upsert_all`), imported only when they run.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from studytui.core.errors import StoreError, UsageError
from studytui.store import schema
from studytui.store.attempts import Attempt, check_attempt, parse_attempts
from studytui.store.model import (
    DEFAULT_STATE,
    STATES,
    EntryProgress,
    ImportReport,
    NoteVersion,
    check_note,
    check_state,
    check_text,
    merge_notes,
    merge_progress,
    normalize_time,
    now_iso,
)

DB_NAME = "studytui.db"
EXPORT_FORMAT = "studytui-progress"
EXPORT_VERSION = 1
BUSY_TIMEOUT_MS = 5000
SQLITE_MAGIC = b"SQLite format 3\x00"
# SQLite's primary result codes (sqlite3 names them only from Python 3.11, as it does
# `sqlite_errorcode`: before that no error carries a code and these are never matched).
_SQLITE_IOERR = 10
_SQLITE_FULL = 13
_ENTRY_COLUMNS = "entry_id, state, state_changed_at, last_opened_at, note, note_updated_at"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)


def _progress(row: tuple[Any, ...]) -> EntryProgress:
    """A stored row; a state that is not one of ours (a hand-edited file) reads as pending."""
    p = EntryProgress(*row)
    return p if p.state in STATES else p._replace(state=DEFAULT_STATE)


def _loads(raw: Any, default: Any = None) -> Any:
    try:
        return json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        return default


def _event_data(raw: Any) -> dict[str, Any]:
    """An event's payload; unreadable JSON (a hand-edited file) is kept as text, never an error."""
    value = _loads(raw, _UNREADABLE)
    if isinstance(value, dict):
        return value
    return {"unreadable": raw if isinstance(raw, str) else repr(raw)}


_UNREADABLE = object()


def _check_id(entry_id: Any, what: str = "entry id") -> str:
    if not isinstance(entry_id, str) or not entry_id.strip():
        raise UsageError(f"{what} must be a non-empty string, not {entry_id!r}")
    return check_text(entry_id, what)


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


class Store:
    """Use `open_store()`. Safe to share between threads (calls are serialised by a lock).

    `read_only`: the file or its directory cannot be written (a read-only mount, a copy on a
    read-only medium); everything can be read, every write raises StoreError saying so.
    `salvage=True` (for `export`) opens a file that fails SQLite's quick integrity check instead of
    refusing it: `damaged` then holds the finding, writes are refused and reads return what can
    still be read.
    """

    def __init__(
        self, path: Path, migrations: Mapping[int, schema.Migration] | None = None, salvage: bool = False
    ) -> None:
        self.path = Path(path)
        self._migrations = migrations
        self._salvage = salvage
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._clock: Callable[[], str] = now_iso
        self.backup_path: Path | None = None  # set when opening migrated the file
        self._older_schema = False  # a read-only or damaged file left at an older schema version
        self.damaged: str | None = None
        self.read_only_reason: str | None = _not_writable_reason(self.path)
        if self.path.exists():
            self._connect()

    @property
    def read_only(self) -> bool:
        return self.read_only_reason is not None

    # -- connection -------------------------------------------------------------------------

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

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers ----------------------------------------------------------------------------

    def _log(
        self,
        conn: sqlite3.Connection,
        kind: str,
        at: str,
        entry_id: str | None = None,
        section_id: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        conn.execute(
            "INSERT INTO events (at, kind, entry_id, section_id, data) VALUES (?, ?, ?, ?, ?)",
            (at, kind, entry_id, section_id, _dumps(dict(data or {}))),
        )

    def _get(self, conn: sqlite3.Connection, entry_id: str) -> EntryProgress | None:
        row = conn.execute(f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE entry_id = ?", (entry_id,)).fetchone()
        return _progress(row) if row else None

    def _put(self, conn: sqlite3.Connection, p: EntryProgress) -> None:
        conn.execute(
            f"INSERT INTO entries ({_ENTRY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(entry_id) DO UPDATE SET state = excluded.state, "
            "state_changed_at = excluded.state_changed_at, last_opened_at = excluded.last_opened_at, "
            "note = excluded.note, note_updated_at = excluded.note_updated_at",
            (p.entry_id, p.state, p.state_changed_at, p.last_opened_at, p.note, p.note_updated_at),
        )

    # -- reading ----------------------------------------------------------------------------

    def states(self) -> dict[str, EntryProgress]:
        """Every entry the store knows (including orphans), keyed by stored id. One query."""
        with self._reading() as conn:
            if conn is None:
                return {}
            rows = conn.execute(f"SELECT {_ENTRY_COLUMNS} FROM entries ORDER BY id").fetchall()
        return {row[0]: _progress(row) for row in rows}

    def progress(self, entry_id: str) -> EntryProgress:
        with self._reading() as conn:
            found = self._get(conn, entry_id) if conn is not None else None
        return found or EntryProgress(entry_id)

    def get_note(self, entry_id: str) -> str:
        return self.progress(entry_id).note

    def get_section_note(self, section_id: str) -> str:
        with self._reading() as conn:
            if conn is None:
                return ""
            row = conn.execute("SELECT note FROM section_notes WHERE section_id = ?", (section_id,)).fetchone()
        return row[0] if row else ""

    def section_notes(self) -> dict[str, str]:
        with self._reading() as conn:
            if conn is None:
                return {}
            rows = conn.execute("SELECT section_id, note FROM section_notes ORDER BY section_id").fetchall()
        return {sid: note for sid, note in rows}

    def _meta(self, key: str) -> str | None:
        with self._reading() as conn:
            if conn is None:
                return None
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def last_viewed(self) -> str | None:
        return self._meta("last_viewed")

    def get_ui(self, key: str, default: Any = None) -> Any:
        with self._reading() as conn:
            if conn is None:
                return default
            row = conn.execute("SELECT value FROM ui_state WHERE key = ?", (key,)).fetchone()
        return _loads(row[0], default) if row else default

    def events(self, entry_id: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """The event log, oldest first; with `limit`, the newest `limit` events (still oldest first)."""
        params: list[Any]
        where, params = ("WHERE entry_id = ?", [entry_id]) if entry_id is not None else ("", [])
        sql = f"SELECT id, at, kind, entry_id, section_id, data FROM events {where} ORDER BY at DESC, id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        with self._reading() as conn:
            if conn is None:
                return []
            rows = conn.execute(sql, params).fetchall()
        return [
            {"id": r[0], "at": r[1], "kind": r[2], "entry_id": r[3], "section_id": r[4], "data": _event_data(r[5])}
            for r in reversed(rows)
        ]

    # -- writing ----------------------------------------------------------------------------

    def set_state(self, entry_id: str, state: str) -> None:
        _check_id(entry_id)
        check_state(state)
        with self._writing() as conn:
            current = self._get(conn, entry_id)
            if current is not None and current.state == state:
                return
            at = self._clock()
            base = current or EntryProgress(entry_id)
            self._put(conn, _replace(base, state=state, state_changed_at=at))
            self._log(conn, "state", at, entry_id, data={"state": state, "from": base.state})

    def mark_opened(self, entry_id: str) -> None:
        _check_id(entry_id)
        with self._writing() as conn:
            at = self._clock()
            base = self._get(conn, entry_id) or EntryProgress(entry_id)
            self._put(conn, _replace(base, last_opened_at=at))
            self._log(conn, "open", at, entry_id)

    def set_note(self, entry_id: str, text: str) -> None:
        _check_id(entry_id)
        check_note(text)
        with self._writing() as conn:
            self._write_note(conn, entry_id, lambda old: text)

    def append_note(self, entry_id: str, text: str) -> None:
        """Add `text` at the end of the note, on a new line if the note does not end with one."""
        _check_id(entry_id)
        check_text(text)
        with self._writing() as conn:
            self._write_note(conn, entry_id, lambda old: old + ("\n" if old and not old.endswith("\n") else "") + text)

    def replace_note(self, entry_id: str, expected: str, text: str) -> tuple[bool, EntryProgress]:
        """Compare-and-set for editors: write `text` only if the stored note is still `expected`
        (what the editor started from). One transaction. Returns (written, stored progress now);
        when another process changed the note meanwhile, nothing is written and the caller
        decides how to keep both."""
        _check_id(entry_id)
        check_note(text)
        with self._writing() as conn:
            current = self._get(conn, entry_id) or EntryProgress(entry_id)
            if current.note != expected and current.note != text:
                return False, current
            self._write_note(conn, entry_id, lambda old: text)
            return True, self._get(conn, entry_id) or EntryProgress(entry_id)

    def data_version(self) -> int | None:
        """A number that changes when another connection (the CLI, a second app) commits to
        the database; our own writes leave it alone. None while there is no database file.
        Cheap (no table is read): the app polls it to notice changes made elsewhere."""
        with self._reading() as conn:
            if conn is None:
                return None
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

    def _write_note(
        self, conn: sqlite3.Connection, entry_id: str, change: Callable[[str], str], extra: Mapping[str, Any] | None = None
    ) -> bool:
        base = self._get(conn, entry_id) or EntryProgress(entry_id)
        new = change(base.note)
        if new == base.note:
            return False
        check_note(new)  # every note write (set, append, restore): at most NOTE_LIMIT; rolled back if not
        at = self._clock()
        if base.note and self._last_logged_note(conn, entry_id) != base.note:
            # The text being replaced came from a merge (import, renamed entry) and is not in the
            # log yet: log it first, so `history` can always bring it back.
            self._log(conn, "note", base.note_updated_at or at, entry_id, data={"text": base.note})
        self._put(conn, _replace(base, note=new, note_updated_at=at))
        # The full text goes into the log: an overwritten note can always be recovered.
        self._log(conn, "note", at, entry_id, data={"text": new, **(extra or {})})
        return True

    def _logged_texts(self, conn: sqlite3.Connection, column: str, key: str, kind: str) -> set[str]:
        """Every text the event log holds for one entry's note (column "entry_id", kind "note")
        or one section's note ("section_id", "section_note")."""
        assert column in ("entry_id", "section_id")
        rows = conn.execute(f"SELECT data FROM events WHERE {column} = ? AND kind = ?", (key, kind)).fetchall()
        texts = (_event_data(raw).get("text") for (raw,) in rows)
        return {t for t in texts if isinstance(t, str)}

    def _last_logged_note(self, conn: sqlite3.Connection, entry_id: str) -> str | None:
        row = conn.execute(
            "SELECT data FROM events WHERE entry_id = ? AND kind = 'note' ORDER BY at DESC, id DESC LIMIT 1",
            (entry_id,),
        ).fetchone()
        return None if row is None else _event_data(row[0]).get("text")

    def _note_history(self, conn: sqlite3.Connection, entry_id: str) -> list[NoteVersion]:
        rows = conn.execute(
            "SELECT at, data FROM events WHERE entry_id = ? AND kind = 'note' ORDER BY at, id", (entry_id,)
        ).fetchall()
        versions: list[tuple[str | None, str, int | None]] = []
        for at, raw in rows:
            data = _event_data(raw)
            text = data.get("text")
            if isinstance(text, str):
                restored = data.get("restored_from")
                versions.append((at, text, restored if isinstance(restored, int) and not isinstance(restored, bool) else None))
        current = self._get(conn, entry_id)
        if current is not None and current.note and (not versions or versions[-1][1] != current.note):
            versions.append((current.note_updated_at, current.note, None))  # merged in, not logged yet
        now = current.note if current is not None else ""
        last = len(versions)
        return [
            NoteVersion(i, at, text, restored, current=(i == last and text == now))
            for i, (at, text, restored) in enumerate(versions, start=1)
        ]

    def note_history(self, entry_id: str) -> list[NoteVersion]:
        """Every saved version of an entry's note, oldest first, numbered from 1 (the event log)."""
        _check_id(entry_id)
        with self._reading() as conn:
            if conn is None:
                return []
            return self._note_history(conn, entry_id)

    def restore_note(self, entry_id: str, number: int) -> bool:
        """Make version `number` of the note current again, as a new version (nothing is removed).
        Returns False when the note already holds that text. UsageError for an unknown number."""
        _check_id(entry_id)
        with self._writing() as conn:
            versions = self._note_history(conn, entry_id)
            if not 1 <= number <= len(versions):
                span = f"versions 1-{len(versions)}" if versions else "no saved versions"
                raise UsageError(f"the note on '{entry_id}' has no version {number} ({span})")
            return self._write_note(conn, entry_id, lambda old: versions[number - 1].text, {"restored_from": number})

    def set_section_note(self, section_id: str, text: str) -> None:
        _check_id(section_id, "section id")
        check_note(text, "the section note")
        with self._writing() as conn:
            row = conn.execute("SELECT note FROM section_notes WHERE section_id = ?", (section_id,)).fetchone()
            if row is not None and row[0] == text:
                return
            at = self._clock()
            conn.execute(
                "INSERT INTO section_notes (section_id, note, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(section_id) DO UPDATE SET note = excluded.note, updated_at = excluded.updated_at",
                (section_id, text, at),
            )
            self._log(conn, "section_note", at, section_id=section_id, data={"text": text})

    def set_last_viewed(self, entry_id: str) -> None:
        _check_id(entry_id)
        with self._writing() as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('last_viewed', ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (entry_id,),
            )

    def set_ui(self, key: str, value: Any) -> None:
        _check_id(key, "UI key")
        try:
            encoded = _dumps(value)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"UI state '{key}' is not JSON-serialisable: {exc}") from None
        with self._writing() as conn:
            conn.execute(
                "INSERT INTO ui_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, encoded),
            )

    def follow_aliases(self, alias_map: Mapping[str, str]) -> list[tuple[str, str]]:
        """Move progress recorded under old ids onto the entries that now carry them as aliases.

        `alias_map` is {old_id: current_id} (see `studytui.study.flow.alias_map`). When both ids
        have progress they are merged (newer state wins, notes both kept). One transaction;
        nothing is written when no stored id is an alias. Returns the (old, new) pairs moved.
        """
        if self.read_only or self.damaged:
            return []  # readers map aliases themselves (study.canonical_states); nothing to move here
        stored = self.states()
        moves = [(old, new) for old, new in alias_map.items() if old in stored and old != new]
        if not moves:
            return []
        with self._writing() as conn:
            at = self._clock()
            for old, new in moves:
                old_p = self._get(conn, old)
                if old_p is None:
                    continue
                new_p = self._get(conn, new)
                if new_p is None:
                    conn.execute("UPDATE entries SET entry_id = ? WHERE entry_id = ?", (new, old))
                else:
                    merged = merge_progress(new_p, _replace(old_p, entry_id=new), f"its old id '{old}'").progress
                    conn.execute("DELETE FROM entries WHERE entry_id = ?", (old,))
                    self._put(conn, merged)
                conn.execute("UPDATE events SET entry_id = ? WHERE entry_id = ?", (new, old))
                conn.execute("UPDATE meta SET value = ? WHERE key = 'last_viewed' AND value = ?", (new, old))
                self._log(conn, "rename", at, new, data={"from": old})
        return moves

    # -- practice attempts (schema v2) -------------------------------------------------------

    def record_attempt(self, problem_id: str, seed: int, answer: str, correct: bool, relative_error: float | None = None) -> Attempt:
        """Record one graded answer; returns it with its time."""
        fields = check_attempt(problem_id, seed, answer, correct, relative_error)
        with self._writing() as conn:
            attempt = Attempt(self._clock(), *fields)
            conn.execute(
                "INSERT OR IGNORE INTO attempts (at, problem_id, seed, answer, correct, relative_error) VALUES (?, ?, ?, ?, ?, ?)",
                (attempt.at, attempt.problem_id, attempt.seed, attempt.answer, int(attempt.correct), attempt.relative_error),
            )
        return attempt

    def attempts(self, problem_id: str | None = None) -> list[Attempt]:
        """Recorded attempts, oldest first (all problems, or one)."""
        where, params = ("WHERE problem_id = ?", (problem_id,)) if problem_id is not None else ("", ())
        with self._reading() as conn:
            if conn is None:
                return []
            if self._older_schema and "attempts" not in schema.table_names(conn):
                return []  # a read-only file from before practice
            rows = conn.execute(
                f"SELECT at, problem_id, seed, answer, correct, relative_error FROM attempts {where} ORDER BY at, id", params
            ).fetchall()
        return [Attempt(a, p, s, ans, bool(c), r) for a, p, s, ans, c, r in rows]

    # -- export / import --------------------------------------------------------------------

    def _rows(self, conn: sqlite3.Connection, table: str, columns: str, order: str,
              key: Callable[[tuple[Any, ...]], Any], db: Any = None) -> list[tuple[Any, ...]]:
        """All rows of `columns` of `table` in `order` (sqlite-utils' rows_where over `db`). In a
        damaged file, every row that can still be read, by plain SQL: forwards up to the damage,
        then backwards from the end."""
        sql = f"SELECT {columns} FROM {table} ORDER BY {order}"
        if not self.damaged:
            if not db[table].exists():
                if self._older_schema:
                    return []  # a table a newer schema adds (attempts, in a version 1 file)
                raise sqlite3.OperationalError(f"no such table: {table}")
            names = [c.strip() for c in columns.split(",")]
            return [tuple(row[n] for n in names) for row in db[table].rows_where(select=columns, order_by=order)]
        rows: dict[Any, tuple[Any, ...]] = {}
        for order in ("", " DESC"):
            try:
                for row in conn.execute(sql + order):
                    rows.setdefault(key(row), row)
            except sqlite3.DatabaseError:
                continue
        return list(rows.values())

    def export_json(self) -> dict[str, Any]:
        """A complete, re-importable backup: states, times, notes, section notes, UI, events.

        From a damaged file (opened with salvage=True) it holds what could still be read, and
        "damaged" says what SQLite found.
        """
        with self._reading() as conn:
            entries: list[dict[str, Any]] = []
            sections: list[dict[str, Any]] = []
            ui: dict[str, Any] = {}
            events: list[dict[str, Any]] = []
            attempts: list[dict[str, Any]] = []
            last_viewed = None
            if conn is not None:
                db = None if self.damaged else schema.utils_db(conn)
                # One read transaction so the backup is a consistent snapshot.
                conn.execute("BEGIN")
                try:
                    rows = self._rows(conn, "entries", f"id, {_ENTRY_COLUMNS}", "id", lambda r: r[0], db)
                    entries = [_progress(r[1:]).to_dict() for r in sorted(rows)]
                    sections = [
                        {"section_id": s, "note": n, "updated_at": u}
                        for s, n, u in sorted(self._rows(
                            conn, "section_notes", "section_id, note, updated_at", "section_id", lambda r: r[0], db,
                        ))
                    ]
                    ui = {
                        k: _loads(v, v)
                        for k, v in sorted(self._rows(conn, "ui_state", "key, value", "key", lambda r: r[0], db))
                    }
                    rows = self._rows(conn, "events", "id, at, kind, entry_id, section_id, data", "id", lambda r: r[0], db)
                    events = [
                        {"at": a, "kind": k, "entry_id": e, "section_id": s, "data": _event_data(d)}
                        for _, a, k, e, s, d in sorted(rows, key=lambda r: (str(r[1]), r[0]))
                    ]
                    try:
                        row = conn.execute("SELECT value FROM meta WHERE key = 'last_viewed'").fetchone()
                    except sqlite3.DatabaseError:
                        if not self.damaged:
                            raise
                        row = None
                    last_viewed = row[0] if row else None
                    rows = self._rows(
                        conn, "attempts", "id, at, problem_id, seed, answer, correct, relative_error", "id", lambda r: r[0], db,
                    )
                    attempts = [
                        Attempt(a, p, s, ans, bool(c), r).to_dict()
                        for _, a, p, s, ans, c, r in sorted(rows, key=lambda r: (str(r[1]), r[0]))
                    ]
                finally:
                    try:
                        conn.execute("COMMIT")
                    except sqlite3.DatabaseError:
                        if not self.damaged:
                            raise
                        if conn.in_transaction:  # a read that hit the damage leaves an error to clear
                            conn.execute("ROLLBACK")
        out = {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "schema_version": schema.SCHEMA_VERSION,
            "exported_at": self._clock(),
            "last_viewed": last_viewed,
            "entries": entries,
            "section_notes": sections,
            "ui": ui,
            "events": events,
            "attempts": attempts,
        }
        if self.damaged:
            out["damaged"] = self.damaged
        return out

    def import_json(
        self, data: Any, known_ids: Iterable[str], source: str = "import",
        note_bases: Mapping[str, str] | None = None,
    ) -> ImportReport:
        """Merge an export into this store in one transaction (all or nothing).

        Per entry the newer change wins; notes are never dropped (see `merge_notes`): two notes
        that both changed are merged three-way against the newest version both stores' histories
        hold (the export carries its event log), or against `note_bases[entry_id]` when the
        caller knows it (a vault knows the text it exported); with no common version, two-way.
        Events are added unless already present; ids not in `known_ids` are kept and reported as
        orphans. Invalid data raises UsageError before anything is written.
        """
        parsed = _parse_export(data)
        known = set(known_ids)
        report = ImportReport(source=source)
        incoming_history = _incoming_note_texts(parsed.events)
        with self._writing() as conn:
            db = schema.utils_db(conn)  # the merge's writes: upsert_all / insert_all, in this transaction
            put: list[EntryProgress] = []  # entry ids are unique in an export (_parse_export), so written at the end
            for incoming in parsed.entries:
                local = self._get(conn, incoming.entry_id)
                if incoming.entry_id not in known:
                    report.orphans.append(incoming.entry_id)
                if local is None:
                    put.append(incoming)
                    report.entries_added += 1
                    continue
                base = None
                if local.note != incoming.note and local.note and incoming.note:
                    if note_bases is not None and incoming.entry_id in note_bases:
                        base = note_bases[incoming.entry_id]
                    else:
                        base = _common_version(
                            self._logged_texts(conn, "entry_id", incoming.entry_id, "note") | {local.note},
                            [*incoming_history.get(("note", incoming.entry_id), []), incoming.note],
                        )
                merged = merge_progress(local, incoming, source, note_base=base)
                if merged.progress.note != local.note:
                    # Two notes merged (both kept around a marker) may pass the limit each is within.
                    check_note(merged.progress.note, f"the note on '{incoming.entry_id}', merged with the imported one,", tail="")
                if merged.progress != local:
                    put.append(merged.progress)
                report.states_updated += merged.state_changed
                report.notes_updated += merged.note_changed
                if merged.note_conflicted:
                    report.notes_conflicted.append(incoming.entry_id)
            db["entries"].upsert_all((p._asdict() for p in put), pk="entry_id")
            for section_id, note, updated_at in parsed.section_notes:
                row = conn.execute(
                    "SELECT note, updated_at FROM section_notes WHERE section_id = ?", (section_id,)
                ).fetchone()
                local_note, local_at = row if row else ("", None)
                base = None
                if local_note and note and local_note != note:
                    base = _common_version(
                        self._logged_texts(conn, "section_id", section_id, "section_note") | {local_note},
                        [*incoming_history.get(("section_note", section_id), []), note],
                    )
                text, _ = merge_notes(local_note, local_at, note, updated_at, source, base=base)
                if text != local_note and text != note:
                    check_note(text, f"the note on section '{section_id}', merged with the imported one,", tail="")
                if row is None or text != local_note:
                    at = max(filter(None, (local_at, updated_at)), default=None) if row else updated_at
                    # One at a time: a section listed twice merges the second into the first.
                    db["section_notes"].upsert({"section_id": section_id, "note": text, "updated_at": at}, pk="section_id")
                    report.section_notes_updated += 1
            seen = {
                (a, k, e, s, d)
                for a, k, e, s, d in conn.execute("SELECT at, kind, entry_id, section_id, data FROM events")
            }
            new_events = []
            for key in parsed.events:
                if key not in seen:
                    seen.add(key)
                    new_events.append(dict(zip(("at", "kind", "entry_id", "section_id", "data"), key)))
            db["events"].insert_all(new_events)
            report.events_added += len(new_events)
            db["ui_state"].insert_all(({"key": k, "value": _dumps(v)} for k, v in parsed.ui.items()), ignore=True)
            before = conn.total_changes
            db["attempts"].insert_all(
                ({"at": a.at, "problem_id": a.problem_id, "seed": a.seed, "answer": a.answer, "correct": int(a.correct),
                  "relative_error": a.relative_error} for a in parsed.attempts),
                ignore=True,  # the natural key (attempts_key): an attempt already here is not added twice
            )
            report.attempts_added += conn.total_changes - before
            if parsed.last_viewed is not None:
                db["meta"].insert({"key": "last_viewed", "value": parsed.last_viewed}, ignore=True)
            summary = report.to_dict()
            summary.pop("source")
            self._log(conn, "import", self._clock(), data={"source": source, **summary})
        return report


def _incoming_note_texts(events: list[tuple[str, str, str | None, str | None, str]]) -> dict[tuple[str, str], list[str]]:
    """The note and section-note versions in an export's event log, oldest first, keyed by
    (kind, entry or section id)."""
    out: dict[tuple[str, str], list[tuple[str, int, str]]] = {}
    for i, (at, kind, entry_id, section_id, encoded) in enumerate(events):
        key = entry_id if kind == "note" else section_id if kind == "section_note" else None
        if key is None:
            continue
        text = _event_data(encoded).get("text")
        if isinstance(text, str):
            out.setdefault((kind, key), []).append((at, i, text))
    return {k: [t for _, _, t in sorted(v)] for k, v in out.items()}


def _common_version(local_texts: set[str], incoming_versions: list[str]) -> str | None:
    """The newest of the incoming versions (oldest first) that the local store has held too:
    the text both sides last shared, for a three-way merge. None when they share none."""
    for text in reversed(incoming_versions):
        if text in local_texts:
            return text
    return None


def _replace(p: EntryProgress, **changes: Any) -> EntryProgress:
    return p._replace(**changes)


class _ParsedExport:
    def __init__(self) -> None:
        self.entries: list[EntryProgress] = []
        self.section_notes: list[tuple[str, str, str | None]] = []
        self.events: list[tuple[str, str, str | None, str | None, str]] = []
        self.ui: dict[str, Any] = {}
        self.last_viewed: str | None = None
        self.attempts: list[Attempt] = []


def _parse_export(data: Any) -> _ParsedExport:
    """Validate every field of an export before anything is written. UsageError names the field."""
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise UsageError(f"not a studytui progress export (expected \"format\": \"{EXPORT_FORMAT}\")")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version > EXPORT_VERSION or version < 1:
        raise UsageError(f"unsupported export version {version!r} (this studytui reads version {EXPORT_VERSION})")
    out = _ParsedExport()

    def items(key: str) -> list[Any]:
        value = data.get(key, [])
        if not isinstance(value, list):
            raise UsageError(f"'{key}' must be a list")
        return value

    def opt_text(obj: dict[str, Any], key: str, where: str) -> str | None:
        value = obj.get(key)
        return None if value is None else check_text(value, f"{where}.{key}")

    def opt_note(obj: dict[str, Any], where: str) -> str:
        value = obj.get("note")
        return "" if value is None else check_note(value, f"{where}.note", tail="")

    ids: set[str] = set()
    for i, raw in enumerate(items("entries")):
        where = f"entries[{i}]"
        if not isinstance(raw, dict):
            raise UsageError(f"{where} must be an object")
        entry_id = _check_id(raw.get("entry_id"), f"{where}.entry_id")
        if entry_id in ids:
            raise UsageError(f"{where}: entry '{entry_id}' appears twice")
        ids.add(entry_id)
        state = raw.get("state", DEFAULT_STATE)
        if state not in STATES:
            raise UsageError(f"{where}.state: unknown state {state!r} (one of {', '.join(STATES)})")
        out.entries.append(
            EntryProgress(
                entry_id=entry_id,
                state=state,
                state_changed_at=normalize_time(raw.get("state_changed_at"), f"{where}.state_changed_at"),
                last_opened_at=normalize_time(raw.get("last_opened_at"), f"{where}.last_opened_at"),
                note=opt_note(raw, where),
                note_updated_at=normalize_time(raw.get("note_updated_at"), f"{where}.note_updated_at"),
            )
        )
    for i, raw in enumerate(items("section_notes")):
        where = f"section_notes[{i}]"
        if not isinstance(raw, dict):
            raise UsageError(f"{where} must be an object")
        out.section_notes.append(
            (
                _check_id(raw.get("section_id"), f"{where}.section_id"),
                opt_note(raw, where),
                normalize_time(raw.get("updated_at"), f"{where}.updated_at"),
            )
        )
    for i, raw in enumerate(items("events")):
        where = f"events[{i}]"
        if not isinstance(raw, dict):
            raise UsageError(f"{where} must be an object")
        at = normalize_time(raw.get("at"), f"{where}.at")
        if at is None:
            raise UsageError(f"{where}.at is missing")
        kind = raw.get("kind")
        if not isinstance(kind, str) or not kind:
            raise UsageError(f"{where}.kind must be a non-empty string")
        payload = raw.get("data", {})
        if not isinstance(payload, dict):
            raise UsageError(f"{where}.data must be an object")
        try:
            encoded = _dumps(payload)
            encoded.encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError) as exc:
            raise UsageError(f"{where}.data is not valid JSON text: {exc}") from None
        out.events.append(
            (at, check_text(kind, f"{where}.kind"), opt_text(raw, "entry_id", where), opt_text(raw, "section_id", where), encoded)
        )
    ui = data.get("ui", {})
    if not isinstance(ui, dict):
        raise UsageError("'ui' must be an object")
    for key, value in ui.items():
        try:
            _dumps(value).encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError) as exc:
            raise UsageError(f"ui.{key} is not valid JSON text: {exc}") from None
    out.ui = dict(ui)
    last = data.get("last_viewed")
    out.last_viewed = None if last is None else _check_id(last, "last_viewed")
    out.attempts = parse_attempts(data.get("attempts"))
    return out
