"""The store under damage, a full disk, a read-only medium, a foreign file and hand edits."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from studytui.cli import main
from studytui.core.errors import StoreError
from studytui.guide import load_guide
from studytui.store import connection, open_store
from studytui.store import store as store_module
from studytui.store.schema import APPLICATION_ID, create_v1

GUIDE = load_guide()
FIRST, SECOND = GUIDE.entries[0].id, GUIDE.entries[1].id


def _filled(data: Path, n: int = 300) -> Path:
    s = open_store(data)
    for i in range(n):
        s.set_state(f"entry-{i}", "done")
        s.set_note(f"entry-{i}", f"note {i} " + "words " * 40)
    s.close()
    return data / "studytui.db"


def _damage_a_middle_page(db: Path) -> None:
    """Overwrite one leaf page in the middle of the entries table: the kind of partial damage the
    old guard (schema plus the last entries row) did not notice."""
    conn = sqlite3.connect(db)
    try:
        pages = [p for (p,) in conn.execute("SELECT pageno FROM dbstat WHERE name = 'entries' AND pagetype = 'leaf' ORDER BY pageno")]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat table")
    finally:
        conn.close()
    victim = pages[len(pages) // 2]
    with open(db, "r+b") as f:
        f.seek((victim - 1) * page_size)
        f.write(b"\xa5" * page_size)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT id FROM entries ORDER BY id DESC LIMIT 1").fetchone()  # the old guard passes
    conn.close()


def test_partial_damage_is_found_on_open_and_nothing_is_written(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    _damage_a_middle_page(db)
    before = db.read_bytes()
    with pytest.raises(StoreError) as info:
        s = open_store(tmp_path)
        s.set_note("entry-1", "a write into a damaged file")
    assert "damaged" in str(info.value) and "studytui export" in str(info.value) and "\n" not in str(info.value)
    salvage = open_store(tmp_path, salvage=True)
    assert salvage.damaged
    with pytest.raises(StoreError, match="damaged"):
        salvage.set_note("entry-1", "still no write")
    salvage.close()
    assert db.read_bytes() == before


def test_export_saves_what_can_still_be_read_from_a_damaged_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    db = _filled(data)
    _damage_a_middle_page(db)
    before = db.read_bytes()
    code = main(["--data-dir", str(data), "export", str(tmp_path / "rescue.json")])
    err = capsys.readouterr().err
    assert code == 1 and "damaged" in err and "could still be read" in err
    saved = json.loads((tmp_path / "rescue.json").read_text(encoding="utf-8"))
    ids = {e["entry_id"] for e in saved["entries"]}
    assert len(ids) >= 250 and "entry-0" in ids and "entry-299" in ids  # both sides of the damage
    assert saved["damaged"]
    assert db.read_bytes() == before
    # The rescued file imports into a fresh store.
    code = main(["--data-dir", str(tmp_path / "fresh"), "import", str(tmp_path / "rescue.json")])
    assert code == 0, capsys.readouterr().err
    assert open_store(tmp_path / "fresh").states()["entry-299"].note.startswith("note 299")


def test_disk_full_says_so_and_loses_nothing(tmp_path: Path) -> None:
    s = open_store(tmp_path)
    s.set_note("a", "saved before the disk filled up")
    conn = s._write_conn()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 1}")  # the file cannot grow: SQLITE_FULL
    with pytest.raises(StoreError) as info:
        s.set_note("a", "x" * 100_000)
    message = str(info.value)
    assert "full" in message and "nothing saved before was lost" in message and "damaged" not in message
    s.close()
    assert open_store(tmp_path).get_note("a") == "saved before the disk filled up"


def test_disk_full_through_the_cli_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def full(self, conn, kind, at, entry_id=None, section_id=None, data=None):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store_module.Store, "_log", full)
    code = main(["note", FIRST, "--text", "hello"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "is full" in err and "nothing saved before was lost" in err
    monkeypatch.undo()
    assert open_store().get_note(FIRST) == ""


# -- read-only data directory ---------------------------------------------------------------


def _seed(data: Path) -> None:
    s = open_store(data)
    s.set_note(FIRST, "readable note \x1b]0;title\x07")
    s.set_state(FIRST, "done")
    s.close()


def test_read_only_store_reads_and_refuses_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _seed(tmp_path)
    real_access = os.access
    monkeypatch.setattr(connection.os, "access", lambda p, mode, **kw: False if mode == os.W_OK else real_access(p, mode, **kw))
    before = (tmp_path / "studytui.db").read_bytes()
    s = open_store(tmp_path)
    assert s.read_only
    assert s.get_note(FIRST).startswith("readable note")
    assert s.export_json()["entries"]
    with pytest.raises(StoreError) as info:
        s.set_state(FIRST, "learning")
    assert "read-only" in str(info.value) and "nothing was changed" in str(info.value)
    assert s.follow_aliases({FIRST: SECOND}) == []  # nothing moved, nothing written
    s.close()
    assert (tmp_path / "studytui.db").read_bytes() == before


def _read_only_runner(probe: Path) -> list[str] | None:
    """How to make a directory really read-only here: [] when file modes are enough (an ordinary
    user), a mount namespace with a read-only bind mount where modes are not (root), else None."""
    probe.mkdir()
    os.chmod(probe, 0o555)
    try:
        (probe / "x").write_text("x")
    except PermissionError:
        return []
    finally:
        os.chmod(probe, 0o755)
    if shutil.which("unshare") is None:
        return None
    attempt = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return ["unshare", "-m"] if attempt.returncode == 0 else None


def test_read_only_data_directory_through_the_cli(tmp_path: Path) -> None:
    runner = _read_only_runner(tmp_path / "probe")
    if runner is None:
        pytest.skip("cannot make a read-only directory here")
    data = tmp_path / "data"
    _seed(data)
    before = {p.name: p.read_bytes() for p in data.iterdir()}
    commands = {
        "note": ["note", FIRST],
        "progress": ["progress", "--json"],
        "search": ["search", "readable"],
        "export": ["export", "-"],
        "open": ["open", FIRST],
        "mark": ["mark", FIRST, "learning"],
        "write note": ["note", FIRST, "--text", "changed"],
    }
    script = "import subprocess, sys, json\nout = {}\n"
    script += f"cmds = {commands!r}\n"
    script += (
        "for name, argv in cmds.items():\n"
        f"    p = subprocess.run([sys.executable, '-m', 'studytui.cli', '--data-dir', {str(data)!r}, *argv], capture_output=True, "
        "text=True)\n"
        "    out[name] = [p.returncode, p.stdout, p.stderr]\n"
        "print(json.dumps(out))\n"
    )
    if runner:
        shell = (
            f"mount --bind {data} {data} && mount -o remount,ro,bind {data} && "
            f"{sys.executable} -c \"$SCRIPT\""
        )
        argv = [*runner, "sh", "-c", shell]
    else:
        os.chmod(data / "studytui.db", 0o444)
        os.chmod(data, 0o555)
        argv = [sys.executable, "-c", script]
    proc = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "SCRIPT": script}, timeout=300)
    if not runner:
        os.chmod(data, 0o755)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    for name in ("note", "progress", "search", "export", "open"):
        code, out, err = results[name]
        assert code == 0, (name, err)
    assert GUIDE.entries[0].url in results["open"][1] and "read-only" in results["open"][2]
    assert results["note"][1].startswith("readable note")
    assert json.loads(results["progress"][1])["done"] == 1
    assert FIRST in results["search"][1]
    assert json.loads(results["export"][1])["entries"][0]["note"].startswith("readable note")
    for name in ("mark", "write note"):
        code, out, err = results[name]
        assert code == 1 and err.count("\n") == 1 and "read-only" in err and "Traceback" not in err, (name, err)
    assert {p.name: p.read_bytes() for p in data.iterdir()} == before


# -- a SQLite file that is not studytui's ---------------------------------------------------


@pytest.mark.parametrize("kind", ["foreign entries table", "other application id", "unrelated tables at version 3"])
def test_a_foreign_database_is_refused_and_never_modified(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "studytui.db"
    conn = sqlite3.connect(db)
    if kind == "foreign entries table":
        conn.execute("CREATE TABLE entries (title TEXT, amount REAL)")
        conn.execute("INSERT INTO entries VALUES ('rent', 1200)")
    elif kind == "other application id":
        conn.execute("PRAGMA application_id = 1234")
        create_v1(conn)
        conn.execute("PRAGMA user_version = 1")
    else:
        conn.execute("CREATE TABLE photos (path TEXT)")
        conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    for _ in range(3):  # run after run: never a backup copy, never a change
        with pytest.raises(StoreError) as info:
            s = open_store(tmp_path)
            s.set_note("a", "b")
        assert "not a studytui database" in str(info.value) and "left untouched" in str(info.value)
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["studytui.db"]


def test_an_existing_studytui_database_without_the_stamp_is_recognised_and_stamped(tmp_path: Path) -> None:
    db = tmp_path / "studytui.db"
    conn = sqlite3.connect(db, isolation_level=None)
    create_v1(conn)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO entries (entry_id, state, note) VALUES ('a', 'done', 'old note')")
    conn.close()
    s = open_store(tmp_path)
    assert s.get_note("a") == "old note"
    s.close()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()
    # At most the one backup a schema upgrade makes; opening again adds none.
    backups = list(tmp_path.glob("*.backup*"))
    assert len(backups) <= 1
    open_store(tmp_path).close()
    assert list(tmp_path.glob("*.backup*")) == backups


def test_a_new_database_is_stamped(tmp_path: Path) -> None:
    open_store(tmp_path).set_note("a", "b")
    conn = sqlite3.connect(tmp_path / "studytui.db")
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()


# -- hand-edited rows -----------------------------------------------------------------------


def test_invalid_event_json_and_unknown_state_do_not_block_reading_or_export(
    isolated_data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = open_store()
    s.set_note(FIRST, "first version")
    s.set_note(FIRST, "second version")
    s.set_state(SECOND, "done")
    s.set_ui("pane", {"width": 3})
    s.close()
    conn = sqlite3.connect(isolated_data_dir / "studytui.db")
    conn.execute("UPDATE events SET data = '{not json' WHERE id = 1")
    conn.execute("UPDATE ui_state SET value = '[broken'")
    conn.execute("UPDATE entries SET state = 'mastered' WHERE entry_id = ?", (SECOND,))
    conn.commit()
    conn.close()
    for argv in (["progress"], ["progress", "--json"], ["history", FIRST], ["note", FIRST], ["next", "--json"]):
        code = main(argv)
        _, err = capsys.readouterr()
        assert code == 0, (argv, err)
    code = main(["export", "-"])
    out, err = capsys.readouterr()
    assert code == 0, err
    exported = json.loads(out)
    assert {"unreadable": "{not json"} in [e["data"] for e in exported["events"]]
    assert {e["entry_id"]: e["state"] for e in exported["entries"]}[SECOND] == "pending"
    # The export is itself importable.
    s2 = open_store(isolated_data_dir / "copy")
    s2.import_json(exported, known_ids={FIRST, SECOND})
    assert s2.get_note(FIRST) == "second version"


def _v1_store(data: Path, n: int = 300) -> Path:
    """A database as studytui wrote it before schema version 2."""
    from studytui.store.store import Store

    data.mkdir(parents=True, exist_ok=True)
    s = Store(data / "studytui.db", migrations={1: create_v1})
    for i in range(n):
        s.set_note(f"entry-{i}", f"note {i} " + "words " * 40)
    s.close()
    return data / "studytui.db"


def test_a_damaged_file_at_an_older_schema_is_never_migrated(tmp_path: Path) -> None:
    db = _v1_store(tmp_path)
    _damage_a_middle_page(db)
    before = db.read_bytes()
    with pytest.raises(StoreError, match="damaged"):
        open_store(tmp_path)
    salvage = open_store(tmp_path, salvage=True)
    exported = salvage.export_json()
    salvage.close()
    assert len(exported["entries"]) >= 250 and exported["attempts"] == []
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["studytui.db"]  # no backup, no migration


def test_a_read_only_file_at_an_older_schema_is_read_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = _v1_store(tmp_path, n=3)
    before = db.read_bytes()
    real_access = os.access
    monkeypatch.setattr(connection.os, "access", lambda p, mode, **kw: False if mode == os.W_OK else real_access(p, mode, **kw))
    s = open_store(tmp_path)
    assert s.read_only and s.get_note("entry-2").startswith("note 2")
    assert s.attempts() == [] and s.export_json()["attempts"] == []
    with pytest.raises(StoreError, match="read-only"):
        s.set_note("entry-2", "x")
    s.close()
    assert db.read_bytes() == before
    # No migration, no backup (SQLite's -wal/-shm may appear: the directory is only pretend read-only).
    assert not list(tmp_path.glob("*.backup*"))
