"""Never lose a word: damaged files, schema versions, migrations, kill -9, concurrent writers."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studytui.core.errors import StoreError
from studytui.store import connection, open_store
from studytui.store.schema import MIGRATIONS, SCHEMA_VERSION, create_v1
from studytui.store.store import Store


def _filled_db(data: Path, n: int = 300) -> Path:
    s = open_store(data)
    for i in range(n):
        s.set_state(f"entry-{i}", "done")
        s.set_note(f"entry-{i}", f"note {i} " + "words " * 40)
    s.close()  # the last connection checkpoints the WAL into the main file
    assert not (data / "studytui.db-wal").exists()
    return data / "studytui.db"


def _assert_one_line_naming(exc: StoreError, path: Path) -> None:
    message = str(exc)
    assert str(path) in message and "\n" not in message


def _damaged_cases(tmp_path: Path) -> dict[str, bytes]:
    db = _filled_db(tmp_path / "source")
    good = db.read_bytes()
    rng = random.Random(7)
    return {
        "random bytes": bytes(rng.randrange(256) for _ in range(8192)),
        "text file": b"these are my notes, not a database\n" * 20,
        "short file": b"SQLite",
        "truncated database": good[: len(good) // 3],
        "header then garbage": good[:100] + bytes(rng.randrange(256) for _ in range(len(good) - 100)),
    }


@pytest.mark.parametrize(
    "case", ["random bytes", "text file", "short file", "truncated database", "header then garbage"]
)
def test_damaged_file_gives_one_line_naming_it_and_is_left_untouched(tmp_path: Path, case: str) -> None:
    content = _damaged_cases(tmp_path)[case]
    data = tmp_path / "data"
    data.mkdir()
    db = data / "studytui.db"
    db.write_bytes(content)
    with pytest.raises(StoreError) as info:
        s = open_store(data)
        # Damage deep inside the file may only show when those pages are read.
        s.states()
        s.export_json()
        s.set_note("x", "y")
    _assert_one_line_naming(info.value, db)
    assert "left untouched" in str(info.value)
    assert db.read_bytes() == content  # never overwritten, never "repaired"
    assert not list(data.glob("*.corrupt*")) and not list(data.glob("*.backup*"))


def test_truncated_database_is_reported_when_opening(tmp_path: Path) -> None:
    db = _filled_db(tmp_path / "data")
    db.write_bytes(db.read_bytes()[:4096 * 3])
    with pytest.raises(StoreError):
        open_store(tmp_path / "data")


def test_directory_in_place_of_the_database(tmp_path: Path) -> None:
    (tmp_path / "studytui.db").mkdir()
    with pytest.raises(StoreError) as info:
        open_store(tmp_path)
    _assert_one_line_naming(info.value, tmp_path / "studytui.db")


def test_newer_schema_version_is_refused_and_left_untouched(tmp_path: Path) -> None:
    db = _filled_db(tmp_path, n=3)
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    with pytest.raises(StoreError) as info:
        open_store(tmp_path)
    _assert_one_line_naming(info.value, db)
    assert "newer studytui" in str(info.value) and "upgrade" in str(info.value)
    assert db.read_bytes() == before


def test_a_fresh_database_needs_no_backup(tmp_path: Path) -> None:
    s = open_store(tmp_path)
    s.set_state("a", "done")
    assert s.backup_path is None and list(tmp_path.glob("*.backup-*")) == []
    s.close()


def _add_tags_column(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE entries ADD COLUMN tags TEXT NOT NULL DEFAULT ''")


def test_migration_backs_up_first_then_upgrades(tmp_path: Path) -> None:
    _filled_db(tmp_path, n=5)
    s = Store(tmp_path / "studytui.db", migrations={**MIGRATIONS, SCHEMA_VERSION + 1: _add_tags_column})
    assert s.backup_path is not None and s.backup_path.name.startswith(f"studytui.db.backup-v{SCHEMA_VERSION}-")
    assert s.states()["entry-3"].note.startswith("note 3")
    s.close()
    backup = sqlite3.connect(s.backup_path)
    assert backup.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert backup.execute("SELECT count(*) FROM entries").fetchone()[0] == 5
    assert backup.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    backup.close()
    main = sqlite3.connect(tmp_path / "studytui.db")
    assert main.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
    assert "tags" in [r[1] for r in main.execute("PRAGMA table_info(entries)")]
    main.close()


def test_failed_migration_rolls_back_completely(tmp_path: Path) -> None:
    _filled_db(tmp_path, n=5)

    def half_done_then_fail(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x)")
        conn.execute("DELETE FROM entries")
        raise RuntimeError("boom")

    with pytest.raises(StoreError) as info:
        Store(tmp_path / "studytui.db", migrations={**MIGRATIONS, SCHEMA_VERSION + 1: half_done_then_fail})
    assert "rolled back" in str(info.value) and "boom" in str(info.value)
    conn = sqlite3.connect(tmp_path / "studytui.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM entries").fetchone()[0] == 5
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'half_done'").fetchone() is None
    conn.close()
    assert open_store(tmp_path).states()["entry-4"].state == "done"  # still usable at v1


def test_fake_v0_to_v1_migration_of_an_old_layout(tmp_path: Path) -> None:
    """A database from before versioning (user_version 0 with data) is backed up, then converted."""
    db = tmp_path / "studytui.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE legacy_progress (entry_id TEXT, state TEXT)")
    conn.execute("INSERT INTO legacy_progress VALUES ('a', 'done'), ('b', 'skipped')")
    conn.commit()
    conn.close()

    def from_legacy(c: sqlite3.Connection) -> None:
        create_v1(c)
        c.execute(
            "INSERT INTO entries (entry_id, state, state_changed_at) "
            "SELECT entry_id, state, '2020-01-01T00:00:00.000000+00:00' FROM legacy_progress"
        )
        c.execute("DROP TABLE legacy_progress")

    s = Store(db, migrations={1: from_legacy})
    assert {k: v.state for k, v in s.states().items()} == {"a": "done", "b": "skipped"}
    assert s.backup_path is not None and s.backup_path.name.startswith("studytui.db.backup-v0-")
    s.close()
    old = sqlite3.connect(s.backup_path)
    assert old.execute("SELECT count(*) FROM legacy_progress").fetchone()[0] == 2
    old.close()


def test_a_held_lock_gives_a_clear_message_and_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 150)
    s = open_store(tmp_path)
    s.set_state("a", "learning")
    blocker = sqlite3.connect(s.path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError, match="locked by another studytui process"):
            s.set_state("a", "done")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert s.progress("a").state == "learning"
    s.set_state("a", "done")  # and the store still works afterwards
    s.close()


# -- kill -9 fault injection ----------------------------------------------------------------

WRITER = r"""
import os, sys
from studytui.store import open_store
data, fd, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.write(fd, b"ready\n")
store = open_store(data)
i = start
while True:
    kind = i % 3
    if kind == 0:
        store.set_note(f"note-{i % 7}", f"version {i}")
    elif kind == 1:
        store.append_note("journal", f"line {i}")
    else:
        store.set_state(f"entry-{i}", ("learning", "done", "skipped")[(i // 3) % 3])
    os.write(fd, f"{i}\n".encode())  # reported only after the write method returned
    i += 1
"""


def _run_writer_and_kill(data: Path, start: int, delay: float, after_a_write: bool = False) -> list[int]:
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(data), str(write_fd), str(start)], pass_fds=(write_fd,))
    os.close(write_fd)
    # Time the kill from the moment the interpreter has started: on a loaded machine, start-up
    # alone can outlast every delay and the writer would never write. `after_a_write`: from its
    # first acknowledged write instead, so the round kills mid-writes however slow the machine.
    first = os.read(read_fd, 6)
    if after_a_write:
        while first.count(b"\n") < 2:
            chunk = os.read(read_fd, 65536)
            if not chunk:
                break
            first += chunk
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    chunks = [first]
    while chunk := os.read(read_fd, 65536):
        chunks.append(chunk)
    os.close(read_fd)
    return [int(x) for x in b"".join(chunks).decode().split() if x != "ready"]


# 30 kill -9 rounds in all, in three independent stores, so parallel test workers share them.
@pytest.mark.parametrize("part", range(3))
def test_kill_9_never_corrupts_or_loses_an_acknowledged_write(tmp_path: Path, part: int) -> None:
    rng = random.Random(20261129 + part)
    data = tmp_path / "data"
    acknowledged: list[int] = []
    for round_no in range(10):
        # Short delays kill during start-up and schema creation too; longer ones mid-write.
        delay = rng.choice([0.0, 0.03, 0.08]) + rng.uniform(0.0, 0.25)
        # Every other round from the writer's first acknowledged write: those rounds write under any
        # load (a loaded machine once left all ten rounds killed before a write).
        acknowledged += _run_writer_and_kill(data, round_no * 1_000_000, delay, after_a_write=round_no % 2 == 1)
        if (data / "studytui.db").exists():
            conn = sqlite3.connect(data / "studytui.db")
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok", f"round {round_no}"
            conn.close()
    # At least the write each "after a write" round waited for (usually dozens more).
    assert len(acknowledged) >= 5, "the writer barely ran; the test proves nothing"

    store = open_store(data)
    states = store.states()
    journal = store.get_note("journal").splitlines()
    journal_index = {line: n for n, line in enumerate(journal)}
    latest_note: dict[str, int] = {}
    for i in acknowledged:
        kind = i % 3
        if kind == 0:
            latest_note[f"note-{i % 7}"] = i
        elif kind == 1:
            assert f"line {i}" in journal_index, f"acknowledged append {i} lost"
        else:
            assert f"entry-{i}" in states, f"acknowledged state {i} lost"
    # Appends keep their order; an overwritten note holds the last acknowledged version or a
    # later one that committed just before the kill (committed but not yet reported).
    lines = [journal_index[f"line {i}"] for i in acknowledged if i % 3 == 1]
    assert lines == sorted(lines)
    for key, i in latest_note.items():
        assert int(states[key].note.split()[1]) >= i
    store.close()
    conn = sqlite3.connect(data / "studytui.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


# -- two processes writing at once ----------------------------------------------------------

CONCURRENT = r"""
import sys
from studytui.store import open_store
data, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = open_store(data)
for i in range(n):
    store.append_note("shared", f"{name} {i}")
    store.set_state(f"{name}-{i}", "done")
    store.states()
    store.set_ui(f"{name}-pos", i)
print("finished", name)
"""


def test_two_processes_write_at_once_without_lock_errors(tmp_path: Path) -> None:
    data = tmp_path / "data"
    open_store(data).set_note("seed", "exists before both start")  # both race on an existing DB
    n = 120
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT, str(data), name, str(n)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for name in ("tui", "shell")
    ]
    results = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err
        assert "locked" not in err and "finished" in out
    store = open_store(data)
    shared = store.get_note("shared").splitlines()
    for name in ("tui", "shell"):
        mine = [line for line in shared if line.startswith(name + " ")]
        assert mine == [f"{name} {i}" for i in range(n)]
        assert all(store.progress(f"{name}-{i}").state == "done" for i in range(n))
        assert store.get_ui(f"{name}-pos") == n - 1
    conn = sqlite3.connect(store.path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_two_processes_creating_the_database_at_once(tmp_path: Path) -> None:
    data = tmp_path / "fresh"
    procs = [
        subprocess.Popen([sys.executable, "-c", CONCURRENT, str(data), name, "5"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for name in ("a", "b")
    ]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    assert len(open_store(data).get_note("shared").splitlines()) == 10
