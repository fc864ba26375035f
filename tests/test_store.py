"""The store's API: lazy creation, states, notes verbatim, events, UI state, search, aliases."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studytui.core.errors import UsageError
from studytui.store import STATES, EntryProgress, open_store

# Any text SQLite can hold: everything but lone surrogates (which are not valid Unicode text).
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)
NASTY = [
    "[bold red]not bold[/bold red] [link=https://x]y[/link] [/]",
    "\x1b[31mred\x1b[0m \x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\",
    "$(rm -rf ~) `whoami` ; | && > /dev/null 'single' \"double\" \\back",
    "unicode: é ñ 中文 😀 \u200b zero-width, RTL \u202e txet",
    "nul\x00inside and trailing\x00",
    "crlf\r\nlines\rand\n\n\n",
    "",
    " ",
]


@pytest.fixture
def store(tmp_path: Path):
    s = open_store(tmp_path / "data")
    yield s
    s.close()


def test_opening_creates_nothing_until_the_first_write(tmp_path: Path) -> None:
    data = tmp_path / "not-yet"
    s = open_store(data)
    assert s.states() == {} and s.last_viewed() is None and s.events() == []
    assert s.get_ui("k", 7) == 7 and s.get_note("a") == "" and s.export_json()["entries"] == []
    assert not data.exists()
    s.set_state("a", "done")
    assert s.path == data / "studytui.db" and s.path.is_file()
    s.close()


def test_default_data_dir_comes_from_environment(isolated_data_dir: Path) -> None:
    s = open_store()
    s.set_note("x", "y")
    assert s.path == isolated_data_dir / "studytui.db"
    s.close()


def test_database_settings(store) -> None:
    store.set_state("a", "done")
    conn = sqlite3.connect(store.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    from studytui.store.schema import SCHEMA_VERSION

    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
    live = store._conn
    assert live.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert live.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    assert live.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_states_and_progress(store) -> None:
    assert store.progress("a") == EntryProgress("a")
    store.set_state("a", "learning")
    store.set_state("a", "done")
    store.mark_opened("b")
    states = store.states()
    assert set(states) == {"a", "b"}
    assert states["a"].state == "done" and states["a"].state_changed_at
    assert states["b"].state == "pending" and states["b"].last_opened_at
    assert store.progress("a") == states["a"]
    assert [e["data"]["state"] for e in store.events("a")] == ["learning", "done"]
    assert [e["kind"] for e in store.events("b")] == ["open"]


def test_setting_the_same_state_again_changes_nothing(store) -> None:
    store.set_state("a", "done")
    before = store.progress("a")
    store.set_state("a", "done")
    assert store.progress("a") == before and len(store.events("a")) == 1


@pytest.mark.parametrize("bad", ["finished", "DONE", "", "pending "])
def test_unknown_state_is_a_usage_error_and_writes_nothing(store, bad: str) -> None:
    with pytest.raises(UsageError, match="unknown state"):
        store.set_state("a", bad)
    assert store.states() == {}
    assert set(STATES) == {"pending", "learning", "done", "skipped"}


def test_bad_ids_and_undecodable_text_are_usage_errors(store) -> None:
    with pytest.raises(UsageError):
        store.set_state("", "done")
    with pytest.raises(UsageError, match="UTF-8"):
        store.set_note("a", "bytes from argv \udcff")
    with pytest.raises(UsageError):
        store.set_ui("k", object())
    assert store.states() == {}


@pytest.mark.parametrize("text", NASTY)
def test_notes_are_returned_verbatim(store, text: str) -> None:
    store.set_note("a", text)
    store.set_section_note("s", text)
    assert store.get_note("a") == text
    assert store.get_section_note("s") == text
    store.close()
    again = open_store(store.path.parent)
    assert again.get_note("a") == text and again.get_section_note("s") == text
    again.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT, more=TEXT)
def test_any_text_round_trips(store, text: str, more: str) -> None:
    store.set_note("p", text)
    assert store.get_note("p") == text
    store.append_note("p", more)
    joined = text + ("\n" if text and not text.endswith("\n") else "") + more
    assert store.get_note("p") == joined
    if joined != text:
        assert store.events("p")[-1]["data"]["text"] == joined


def test_append_adds_on_a_new_line(store) -> None:
    store.append_note("a", "first")
    store.append_note("a", "second")
    store.append_note("a", "third\n")
    store.append_note("a", "fourth")
    assert store.get_note("a") == "first\nsecond\nthird\nfourth"


def test_every_note_version_stays_in_the_event_log(store) -> None:
    store.set_note("a", "version one")
    store.set_note("a", "version two")
    store.set_note("a", "")
    texts = [e["data"]["text"] for e in store.events("a") if e["kind"] == "note"]
    assert texts == ["version one", "version two", ""]


def test_events_limit_gives_the_newest_oldest_first(store) -> None:
    for state in ("learning", "done", "skipped", "pending"):
        store.set_state("a", state)
    last_two = store.events(limit=2)
    assert [e["data"]["state"] for e in last_two] == ["skipped", "pending"]
    assert len(store.events()) == 4


def test_last_viewed_and_ui_state(store) -> None:
    store.set_last_viewed("a")
    store.set_last_viewed("b")
    assert store.last_viewed() == "b"
    store.set_ui("tree", {"expanded": ["s1", "s2"], "width": 30, "ok": True, "none": None})
    assert store.get_ui("tree") == {"expanded": ["s1", "s2"], "width": 30, "ok": True, "none": None}
    store.set_ui("tree", [1])
    assert store.get_ui("tree") == [1] and store.get_ui("missing", "d") == "d"


def test_follow_aliases_moves_and_merges(store) -> None:
    store.set_state("old-only", "done")
    store.set_note("old-only", "notes under the old id")
    store.set_state("both-old", "done")
    store.set_note("both-old", "old words")
    store.set_note("both-new", "new words")
    store.set_state("both-new", "learning")  # newer than the old id's state
    store.set_last_viewed("old-only")
    moves = store.follow_aliases({"old-only": "renamed", "both-old": "both-new", "absent": "x"})
    assert sorted(moves) == [("both-old", "both-new"), ("old-only", "renamed")]
    states = store.states()
    assert "old-only" not in states and "both-old" not in states
    assert states["renamed"].state == "done" and states["renamed"].note == "notes under the old id"
    assert states["both-new"].state == "learning"
    assert "old words" in states["both-new"].note and "new words" in states["both-new"].note
    assert store.last_viewed() == "renamed"
    assert {e["kind"] for e in store.events("renamed")} >= {"state", "note", "rename"}
    assert store.follow_aliases({"old-only": "renamed"}) == []  # nothing left to move


def test_threads_can_share_one_store(store) -> None:
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(25):
                store.append_note("shared", f"t{n}-{i}")
                store.states()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store.get_note("shared").splitlines()) == 100


def test_v3_drops_the_unused_note_index(tmp_path) -> None:
    # Search builds its own index in memory; the v1 full-text index was kept up on every write
    # for nothing. A store at the latest schema has neither its table nor its triggers.
    from studytui.store import open_store

    with open_store(tmp_path) as s:
        s.set_note("a", "words")
    conn = sqlite3.connect(tmp_path / "studytui.db")
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert not {n for n in names if n.startswith("entries_fts") or n in ("entries_ai", "entries_ad", "entries_au")}
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
    conn.close()


def test_version_1_is_created_exactly_as_sqlite_utils_created_it() -> None:
    """Stores made before and after studytui wrote its own statements hold the same schema."""
    import json

    from studytui.store.schema import FTS_TOKENIZER, create_v1

    recorded = json.loads((Path(__file__).parent / "data" / "schema-v1.json").read_text())["rows"]
    conn = sqlite3.connect(":memory:", isolation_level=None)
    create_v1(conn)
    made = [list(row) for row in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name")]
    # The tokenizer option follows the SQLite version (remove_diacritics 2 needs 3.27).
    expected = [[t, n, tbl, sql.replace("porter unicode61 remove_diacritics 2", FTS_TOKENIZER) if sql else sql]
                for t, n, tbl, sql in recorded]
    assert made == expected


def test_sqlite_utils_creates_a_new_store_and_is_not_loaded_again_once_it_exists(tmp_path: Path) -> None:
    """The first run makes the schema through sqlite-utils; every later run opens, reads and
    writes with sqlite3 alone (issue 27)."""
    import subprocess
    import sys

    code = (
        "import sys; from studytui.store import open_store; s = open_store(sys.argv[1]); "
        "s.set_state('roofline-paper', 'done'); s.close(); "
        "print(sorted(m for m in sys.modules if m in ('sqlite_utils', 'yaml')))"
    )
    first = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert first.stdout.strip() == "['sqlite_utils']"
    again = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert again.stdout.strip() == "[]"
