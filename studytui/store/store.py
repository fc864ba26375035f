"""The progress store: one SQLite file holding states, notes, UI state, an event log and practice
attempts. `Store` holds the reads and writes learners use; `connection.py` holds the file, the
connection and the durability rules every write follows, `transfer.py` the JSON export and import.

Reads and everyday writes use the standard library's sqlite3 alone, and so does creating a new
database (`schema.py` holds the statements). Migrating an older file, `export_json` and
`import_json` go through sqlite-utils (`schema.utils_db`: `rows_where`, `insert_all`,
`upsert_all`), imported only when they run.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from studytui.core.errors import UsageError
from studytui.store import schema
from studytui.store.attempts import Attempt, check_attempt
from studytui.store.connection import StoreConnection
from studytui.store.model import (
    EntryProgress,
    NoteVersion,
    check_note,
    check_state,
    check_text,
    merge_progress,
    now_iso,
)

if TYPE_CHECKING:
    from studytui.store.transfer import ImportReport
from studytui.store.rows import _ENTRY_COLUMNS, _check_id, _dumps, _event_data, _loads, _progress


def _replace(p: EntryProgress, **changes: Any) -> EntryProgress:
    return p._replace(**changes)


class Store(StoreConnection):
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
        self._clock: Callable[[], str] = now_iso
        super().__init__(path, migrations, salvage)

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

    # -- export / import (transfer.py) ------------------------------------------------------

    def export_json(self) -> dict[str, Any]:
        """A complete, re-importable backup: states, times, notes, section notes, UI, events.

        From a damaged file (opened with salvage=True) it holds what could still be read, and
        "damaged" says what SQLite found.
        """
        from studytui.store import transfer

        return transfer.export_json(self)

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
        from studytui.store import transfer

        return transfer.import_json(self, data, known_ids, source, note_bases)
