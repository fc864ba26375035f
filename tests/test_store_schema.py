"""Issue 27: sqlite-utils makes the schema and moves the data; the first run and every read do not load it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from studytui.core.errors import StoreError
from studytui.store import open_store
from studytui.store.schema import MIGRATIONS, SCHEMA_VERSION, create_latest, create_v1, utils_db
from studytui.store.store import Store


def _master(conn: sqlite3.Connection) -> list[tuple[str, str, str, str]]:
    return sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL"), key=lambda r: r[1])


def test_a_new_store_is_created_exactly_as_the_sqlite_utils_migrations_leave_it() -> None:
    """`create_latest` (the first run, in one step) against MIGRATIONS 1..latest, both through
    sqlite-utils."""
    fresh = sqlite3.connect(":memory:", isolation_level=None)
    create_latest(fresh)
    migrated = sqlite3.connect(":memory:", isolation_level=None)
    migrated.execute("BEGIN")
    for version in range(1, SCHEMA_VERSION + 1):
        MIGRATIONS[version](migrated)
    migrated.execute("COMMIT")
    assert _master(fresh) == _master(migrated)
    assert {name for kind, name, _, _ in _master(fresh) if kind == "table"} == {
        "entries", "section_notes", "events", "ui_state", "meta", "attempts"}


def _modules_after(code: str, *args: str) -> list[str]:
    script = code + "; print(sorted(m for m in sys.modules if m.split('.')[0] in ('sqlite_utils', 'click')))"
    out = subprocess.run([sys.executable, "-c", "import sys; " + script, *args], capture_output=True, text=True, check=True)
    return eval(out.stdout.strip().splitlines()[-1])  # noqa: S307 - our own subprocess's list of names


def test_reads_and_everyday_writes_of_an_existing_store_never_load_sqlite_utils(tmp_path: Path) -> None:
    with open_store(tmp_path) as s:
        s.set_note("a", "words")
    code = ("from studytui.store import open_store; s = open_store(sys.argv[1]); s.states(); s.set_state('a', 'done'); "
            "s.set_note('a', 'more'); s.note_history('a'); s.record_attempt('p', 1, '2', True); s.attempts(); s.close()")
    assert _modules_after(code, str(tmp_path)) == []


def test_migrating_an_older_store_goes_through_sqlite_utils_and_keeps_everything(tmp_path: Path) -> None:
    old = Store(tmp_path / "studytui.db", migrations={1: create_v1})
    old.set_state("a", "done")
    old.set_note("a", "kept through the upgrade")
    old.close()
    code = "from studytui.store import open_store; s = open_store(sys.argv[1]); print(s.states()['a'].note); s.close()"
    assert "sqlite_utils" in _modules_after(code, str(tmp_path))
    with open_store(tmp_path) as s:
        assert s.states()["a"].note == "kept through the upgrade" and s.backup_path is None  # (made by the first open)
    assert list(tmp_path.glob("studytui.db.backup-v1-*"))
    conn = sqlite3.connect(tmp_path / "studytui.db")
    fresh = sqlite3.connect(":memory:")
    create_latest(fresh)
    assert _master(conn) == _master(fresh)  # the upgraded file has the new store's schema
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def _with_store(tmp_path: Path) -> Path:
    with open_store(tmp_path) as s:
        s.set_state("a", "done")
        s.set_section_note("sec", "a section note")
    return tmp_path / "studytui.db"


def test_transform_does_what_alter_table_cannot_inside_the_migration_transaction(tmp_path: Path) -> None:
    db = _with_store(tmp_path)

    def new_default(conn: sqlite3.Connection) -> None:  # a column default: ALTER TABLE cannot change one
        utils_db(conn)["section_notes"].transform(defaults={"updated_at": "never"})

    s = Store(db, migrations={**MIGRATIONS, SCHEMA_VERSION + 1: new_default})
    assert s.backup_path is not None and s.get_section_note("sec") == "a section note"
    s.close()
    conn = sqlite3.connect(db)
    default = {r[1]: r[4] for r in conn.execute("PRAGMA table_info(section_notes)")}["updated_at"]
    assert default == "'never'" and conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
    conn.close()


def test_a_failing_sqlite_utils_migration_rolls_back_whole(tmp_path: Path) -> None:
    db = _with_store(tmp_path)

    def half_then_fail(conn: sqlite3.Connection) -> None:
        u = utils_db(conn)
        u["entries"].add_column("tags", str, not_null_default="")
        u["section_notes"].transform(rename={"note": "text"})
        raise RuntimeError("boom")

    with pytest.raises(StoreError, match="rolled back"):
        Store(db, migrations={**MIGRATIONS, SCHEMA_VERSION + 1: half_then_fail})
    conn = sqlite3.connect(db)
    assert "tags" not in {r[1] for r in conn.execute("PRAGMA table_info(entries)")}
    assert "note" in {r[1] for r in conn.execute("PRAGMA table_info(section_notes)")}
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
    with open_store(tmp_path) as s:
        assert s.states()["a"].state == "done" and s.get_section_note("sec") == "a section note"


def test_export_and_import_go_through_sqlite_utils_without_a_probe_table(tmp_path: Path) -> None:
    src, dst = tmp_path / "a", tmp_path / "b"
    with open_store(src) as s:
        s.set_state("x", "done")
        s.set_note("x", "from a")
        s.set_section_note("sec", "section words")
        s.record_attempt("p", 3, "42", True)
        s.set_ui("theme", "light")
        data = s.export_json()
    assert [e["entry_id"] for e in data["entries"]] == ["x"] and len(data["attempts"]) == 1
    with open_store(dst) as t:
        t.set_state("y", "learning")
        statements: list[str] = []
        t.states()
        assert t._conn is not None
        t._conn.set_trace_callback(statements.append)
        report = t.import_json(data, {"x", "y"}, source="a.json")
        again = t.import_json(data, {"x", "y"}, source="a.json")
        t._conn.set_trace_callback(None)
        assert report.entries_added == 1 and report.attempts_added == 1 and report.events_added == len(data["events"])
        assert again.entries_added == 0 and again.attempts_added == 0 and again.events_added == 0
        assert t.states()["x"].note == "from a" and t.get_section_note("sec") == "section words"
        assert t.get_ui("theme") == "light" and len(t.attempts()) == 1
    # sqlite-utils would create, fill and drop a probe table in the learner's file: never.
    assert not [q for q in statements if q.lower().startswith("create table")]
    assert any('INSERT' in q and '"entries"' in q for q in statements)  # written by sqlite-utils' upsert_all
