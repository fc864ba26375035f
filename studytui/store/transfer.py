"""The JSON transfer: `export_json` (a complete, re-importable backup) and `import_json` (merging
one back in), with the export format's name and version and the validation of every field.

`Store.export_json` and `Store.import_json` call these; they read and write through the store's
connection (`connection.py`) and its row helpers. Both go through sqlite-utils (`schema.utils_db`:
`rows_where`, `insert_all`, `upsert_all`), imported only when they run; a damaged file (opened with
salvage=True) is read by plain SQL instead.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from studytui.core.errors import UsageError
from studytui.store import schema
from studytui.store.attempts import Attempt, parse_attempts
from studytui.store.model import (
    DEFAULT_STATE,
    STATES,
    EntryProgress,
    check_note,
    check_text,
    merge_notes,
    merge_progress,
    normalize_time,
)
from studytui.store.rows import _ENTRY_COLUMNS, _check_id, _dumps, _event_data, _loads, _progress

if TYPE_CHECKING:
    from studytui.store.store import Store

EXPORT_FORMAT = "studytui-progress"
EXPORT_VERSION = 1



# Here, not in store/model.py: only an import builds one, and a dataclass costs every command that
# imports the model a millisecond of generated code (issue 27).
@dataclass
class ImportReport:
    """What `import_json` changed. `orphans`: imported ids that the guide does not know."""

    source: str = "import"
    entries_added: int = 0
    states_updated: int = 0
    notes_updated: int = 0
    notes_conflicted: list[str] = field(default_factory=list)
    section_notes_updated: int = 0
    events_added: int = 0
    orphans: list[str] = field(default_factory=list)
    attempts_added: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "entries_added": self.entries_added,
            "states_updated": self.states_updated,
            "notes_updated": self.notes_updated,
            "notes_conflicted": list(self.notes_conflicted),
            "section_notes_updated": self.section_notes_updated,
            "events_added": self.events_added,
            "orphans": list(self.orphans),
            "attempts_added": self.attempts_added,
        }


def _rows(store: Store, conn: sqlite3.Connection, table: str, columns: str, order: str,
          key: Callable[[tuple[Any, ...]], Any], db: Any = None) -> list[tuple[Any, ...]]:
    """All rows of `columns` of `table` in `order` (sqlite-utils' rows_where over `db`). In a
    damaged file, every row that can still be read, by plain SQL: forwards up to the damage,
    then backwards from the end."""
    sql = f"SELECT {columns} FROM {table} ORDER BY {order}"
    if not store.damaged:
        if not db[table].exists():
            if store._older_schema:
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


def export_json(store: Store) -> dict[str, Any]:
    """`Store.export_json`: a complete, re-importable backup, read in one transaction."""
    with store._reading() as conn:
        entries: list[dict[str, Any]] = []
        sections: list[dict[str, Any]] = []
        ui: dict[str, Any] = {}
        events: list[dict[str, Any]] = []
        attempts: list[dict[str, Any]] = []
        last_viewed = None
        if conn is not None:
            db = None if store.damaged else schema.utils_db(conn)
            # One read transaction so the backup is a consistent snapshot.
            conn.execute("BEGIN")
            try:
                rows = _rows(store, conn, "entries", f"id, {_ENTRY_COLUMNS}", "id", lambda r: r[0], db)
                entries = [_progress(r[1:]).to_dict() for r in sorted(rows)]
                sections = [
                    {"section_id": s, "note": n, "updated_at": u}
                    for s, n, u in sorted(_rows(
                        store, conn, "section_notes", "section_id, note, updated_at", "section_id", lambda r: r[0], db,
                    ))
                ]
                ui = {
                    k: _loads(v, v)
                    for k, v in sorted(_rows(store, conn, "ui_state", "key, value", "key", lambda r: r[0], db))
                }
                rows = _rows(store, conn, "events", "id, at, kind, entry_id, section_id, data", "id", lambda r: r[0], db)
                events = [
                    {"at": a, "kind": k, "entry_id": e, "section_id": s, "data": _event_data(d)}
                    for _, a, k, e, s, d in sorted(rows, key=lambda r: (str(r[1]), r[0]))
                ]
                try:
                    row = conn.execute("SELECT value FROM meta WHERE key = 'last_viewed'").fetchone()
                except sqlite3.DatabaseError:
                    if not store.damaged:
                        raise
                    row = None
                last_viewed = row[0] if row else None
                rows = _rows(
                    store, conn, "attempts", "id, at, problem_id, seed, answer, correct, relative_error", "id", lambda r: r[0], db,
                )
                attempts = [
                    Attempt(a, p, s, ans, bool(c), r).to_dict()
                    for _, a, p, s, ans, c, r in sorted(rows, key=lambda r: (str(r[1]), r[0]))
                ]
            finally:
                try:
                    conn.execute("COMMIT")
                except sqlite3.DatabaseError:
                    if not store.damaged:
                        raise
                    if conn.in_transaction:  # a read that hit the damage leaves an error to clear
                        conn.execute("ROLLBACK")
    out = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "schema_version": schema.SCHEMA_VERSION,
        "exported_at": store._clock(),
        "last_viewed": last_viewed,
        "entries": entries,
        "section_notes": sections,
        "ui": ui,
        "events": events,
        "attempts": attempts,
    }
    if store.damaged:
        out["damaged"] = store.damaged
    return out


def import_json(
    store: Store, data: Any, known_ids: Iterable[str], source: str = "import",
    note_bases: Mapping[str, str] | None = None,
) -> ImportReport:
    """`Store.import_json`: merge an export into `store` in one transaction (all or nothing)."""
    parsed = _parse_export(data)
    known = set(known_ids)
    report = ImportReport(source=source)
    incoming_history = _incoming_note_texts(parsed.events)
    with store._writing() as conn:
        db = schema.utils_db(conn)  # the merge's writes: upsert_all / insert_all, in this transaction
        put: list[EntryProgress] = []  # entry ids are unique in an export (_parse_export), so written at the end
        for incoming in parsed.entries:
            local = store._get(conn, incoming.entry_id)
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
                        store._logged_texts(conn, "entry_id", incoming.entry_id, "note") | {local.note},
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
                    store._logged_texts(conn, "section_id", section_id, "section_note") | {local_note},
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
        store._log(conn, "import", store._clock(), data={"source": source, **summary})
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

    def objects(key: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """Each object of the list `key`, with where it is ("entries[3]")."""
        value = data.get(key, [])
        if not isinstance(value, list):
            raise UsageError(f"'{key}' must be a list")
        for i, raw in enumerate(value):
            where = f"{key}[{i}]"
            if not isinstance(raw, dict):
                raise UsageError(f"{where} must be an object")
            yield where, raw

    def opt_text(obj: dict[str, Any], key: str, where: str) -> str | None:
        value = obj.get(key)
        return None if value is None else check_text(value, f"{where}.{key}")

    def opt_note(obj: dict[str, Any], where: str) -> str:
        value = obj.get("note")
        return "" if value is None else check_note(value, f"{where}.note", tail="")

    ids: set[str] = set()
    for where, raw in objects("entries"):
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
    for where, raw in objects("section_notes"):
        out.section_notes.append(
            (
                _check_id(raw.get("section_id"), f"{where}.section_id"),
                opt_note(raw, where),
                normalize_time(raw.get("updated_at"), f"{where}.updated_at"),
            )
        )
    for where, raw in objects("events"):
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
