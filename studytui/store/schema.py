"""Schema versions and migrations.

The version lives in `PRAGMA user_version`. Migration N takes a database at version N-1 to N.
Before migrating a database that already holds data, the whole file is copied (SQLite's online
backup, so the WAL is included) to `NAME.backup-vOLD-TIMESTAMP`; then every pending migration and
the version bump run in one transaction, so a crash or an error leaves the old version intact.

The schema is made by sqlite-utils (`Table.create`, `create_index`, `enable_fts`; `add_column` and
`transform()` for the changes SQLite's ALTER TABLE cannot make), imported only on the paths that
change it: creating a new store (`create_latest`, the first run) and migrating an older one; see
`utils_db`. Opening an existing store, reads and everyday writes use `sqlite3` alone.
"""

from __future__ import annotations

import os
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

Migration = Callable[[sqlite3.Connection], None]

# remove_diacritics 2 (SQLite >= 3.27) also folds diacritics on composed letters; older SQLite gets 1.
FTS_TOKENIZER = "porter unicode61 remove_diacritics " + ("2" if sqlite3.sqlite_version_info >= (3, 27) else "1")


# Each table as sqlite-utils creates it: (name, columns with their Python types, keyword arguments
# of `Table.create`). Version 1's and the newest schema are made from these; tests compare what
# they make with the SQL recorded from a version-1 store and with what the migrations leave.
_V1_TABLES: tuple[tuple[str, dict[str, type], dict[str, Any]], ...] = (
    ("entries",
     {"id": int, "entry_id": str, "state": str, "state_changed_at": str, "last_opened_at": str, "note": str,
      "note_updated_at": str},
     {"pk": "id", "not_null": {"entry_id", "state", "note"}, "defaults": {"state": "pending", "note": ""}}),
    ("section_notes", {"section_id": str, "note": str, "updated_at": str},
     {"pk": "section_id", "not_null": {"note"}, "defaults": {"note": ""}}),
    ("events", {"id": int, "at": str, "kind": str, "entry_id": str, "section_id": str, "data": str},
     {"pk": "id", "not_null": {"at", "kind", "data"}, "defaults": {"data": "{}"}}),
    ("ui_state", {"key": str, "value": str}, {"pk": "key", "not_null": {"value"}}),
    ("meta", {"key": str, "value": str}, {"pk": "key"}),
)
_V1_INDEXES = (("entries", ["entry_id"], True), ("events", ["entry_id"], False))


def _create_v1_tables(db: Any) -> None:
    for name, columns, options in _V1_TABLES:
        db[name].create(columns, **options)
    for table, indexed, unique in _V1_INDEXES:
        db[table].create_index(indexed, unique=unique)


def create_v1(conn: sqlite3.Connection) -> None:
    """Version 1: progress, notes (with a full-text index over them, dropped again in v3), events,
    the app's state and the store's own facts."""
    db = utils_db(conn)
    _create_v1_tables(db)
    db["entries"].enable_fts(["note"], tokenize=FTS_TOKENIZER, create_triggers=True)


def utils_db(conn: sqlite3.Connection) -> Any:
    """sqlite-utils over `conn`, inside the transaction `migrate` holds (its own writes nest as
    savepoints, so a failed migration still rolls back whole). Imported here, when a migration
    or an export/import runs: loading it takes longer than the rest of the store."""
    import sqlite_utils

    db = sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)
    # Whether this SQLite has INSERT ... ON CONFLICT (3.24, 2018): sqlite-utils would find out by
    # creating, filling and dropping a probe table in the learner's database.
    db._supports_on_conflict = sqlite3.sqlite_version_info >= (3, 24, 0)
    return db


def create_v2(conn: sqlite3.Connection) -> None:
    """Practice attempts (additive: nothing in v1 changes). Each row is one graded answer; the
    review schedule is replayed from these rows, so merging two stores merges schedules too."""
    _create_attempts(utils_db(conn))


def _create_attempts(db: Any) -> None:
    attempts = db["attempts"]
    attempts.create(
        {"id": int, "at": str, "problem_id": str, "seed": int, "answer": str, "correct": int, "relative_error": float},
        pk="id", not_null={"at", "problem_id", "seed", "answer", "correct"},
    )
    # The natural key: an attempt imported twice (or from two devices' exports) is stored once.
    attempts.create_index(["problem_id", "at", "seed", "answer"], index_name="attempts_key", unique=True)


def drop_note_index_v3(conn: sqlite3.Connection) -> None:
    """Drop the full-text index over notes that v1 created (its table, shadow tables and
    triggers): search builds its own index over entries and notes in memory, so this one was
    maintained on every write for nothing."""
    utils_db(conn)["entries"].disable_fts()


MIGRATIONS: dict[int, Migration] = {1: create_v1, 2: create_v2, 3: drop_note_index_v3}
SCHEMA_VERSION = max(MIGRATIONS)

def create_latest(conn: sqlite3.Connection) -> None:
    """A new, empty database at SCHEMA_VERSION in one step, through sqlite-utils: what MIGRATIONS
    1 to SCHEMA_VERSION leave (tests/test_store_schema.py runs the migrations and compares
    sqlite_master). Only the first run of a learner's store loads sqlite-utils for this; opening
    the file afterwards, reading and everyday writes use `sqlite3` alone. A new migration adds
    its change here too."""
    db = utils_db(conn)
    _create_v1_tables(db)  # v1 without the note index, which v3 drops
    _create_attempts(db)


# Stamped in the file header (`PRAGMA application_id`, "STTY") so a foreign SQLite file that happens
# to be named studytui.db is recognised and never migrated. Not part of the schema version: older
# studytui files are recognised by their tables and stamped when first opened for writing.
APPLICATION_ID = 0x53545459
STUDYTUI_TABLES = {
    "entries": {"entry_id", "state", "note", "state_changed_at", "last_opened_at", "note_updated_at"},
    "section_notes": {"section_id", "note", "updated_at"},
    "events": {"at", "kind", "entry_id", "section_id", "data"},
    "ui_state": {"key", "value"},
    "meta": {"key", "value"},
}


def application_id(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA application_id").fetchone()[0])


def table_names(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def looks_like_studytui(conn: sqlite3.Connection) -> bool:
    """True when the file holds studytui's tables with their columns (a file from before the stamp)."""
    tables = table_names(conn)
    for name, columns in STUDYTUI_TABLES.items():
        if name not in tables:
            return False
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({name})")}
        if not columns <= have:
            return False
    return True


class MigrationFailed(Exception):
    """A migration raised; the database was rolled back to `from_version`."""

    def __init__(self, from_version: int, to_version: int, cause: BaseException):
        self.from_version, self.to_version, self.cause = from_version, to_version, cause
        super().__init__(f"migration {from_version}->{to_version} failed: {cause}")


def ensure_wal(conn: sqlite3.Connection, timeout_s: float = 5.0) -> None:
    """Switch the file to WAL (a no-op once it is). SQLite answers "database is locked" at once,
    without its busy handler, when another process opens the file at the same moment - so retry."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            mode = None
        if mode == "wal" or time.monotonic() > deadline:
            return  # if still not WAL, the migration below still runs safely (rollback journal)
        time.sleep(0.005)


def user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _has_tables(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None


def backup_copy(db_path: Path, version: int) -> Path:
    """Copy the database (WAL included) next to it; fsync so the copy survives a crash too.

    Called while the migrating connection holds the write lock: a second, read-only connection
    does the copy (a connection cannot back itself up mid-transaction), and since nobody can
    write meanwhile, the copy is exactly what the migration starts from.
    """
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    target = db_path.with_name(f"{db_path.name}.backup-v{version}-{stamp}")
    # Created 0600 before SQLite writes into it: a backup holds every note, like the database.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        os.close(os.open(target, flags, 0o600))
    except OSError as exc:  # as SQLite would have failed to create it
        raise sqlite3.OperationalError(f"unable to open backup file {target}: {exc.strerror or exc}") from None
    source = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True)
    dest = sqlite3.connect(str(target))
    try:
        source.backup(dest)
    finally:
        dest.close()
        source.close()
    fd = os.open(target, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return target


def migrate(
    conn: sqlite3.Connection,
    db_path: Path,
    migrations: Mapping[int, Migration] | None = None,
) -> Path | None:
    """Bring the database to the newest version. Returns the backup path, if one was made.

    `conn` must be in autocommit mode (isolation_level=None). Concurrent processes are safe: the
    version is re-read under the write lock, so only one of them migrates.
    """
    migrations = MIGRATIONS if migrations is None else migrations
    target = max(migrations)
    if user_version(conn) >= target:
        return None
    # WAL must be switched on outside a transaction; it is stored in the file from then on.
    ensure_wal(conn)
    conn.execute("BEGIN IMMEDIATE")
    backup: Path | None = None
    current = user_version(conn)
    try:
        if current >= target:
            conn.execute("COMMIT")
            return None
        fresh = current == 0 and not _has_tables(conn)
        if not fresh:
            backup = backup_copy(db_path, current)
        if fresh and migrations is MIGRATIONS:
            try:
                create_latest(conn)  # the first run: no migration to replay, nothing to import
            except Exception as exc:
                raise MigrationFailed(current, target, exc) from exc
        else:
            for version in range(current + 1, target + 1):
                try:
                    migrations[version](conn)
                except Exception as exc:
                    raise MigrationFailed(current, version, exc) from exc
        conn.execute(f"PRAGMA user_version = {int(target)}")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    ensure_wal(conn)  # in case a concurrent opener kept it from switching above
    return backup
