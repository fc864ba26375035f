"""The study session without a terminal: state transitions, note saving, refused writes, and
changes made by another process (a second Store on the same file plays the CLI)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from studytui.core.errors import StoreError
from studytui.store import open_store
from studytui.study.session import NotesNotSaved, StudySession
from tests.tui.support import build_guide


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def store(data: Path):
    s = open_store(data)
    s.set_ui("created", True)  # the file exists, as it does once the app has run
    yield s
    s.close()


@pytest.fixture
def cli(data: Path, store):
    """Another process writing the same database (the command line, a second app)."""
    other = open_store(data)
    yield other
    other.close()


@pytest.fixture
def session(store) -> StudySession:
    return StudySession(build_guide(), store)


def test_marks_update_progress_and_summary(session, store):
    change = session.set_state("roofline", "done")
    assert change.entries == {"roofline"} and not change.notes
    assert session.state_of("roofline") == "done" and store.progress("roofline").state == "done"
    assert session.summary.done == 1


def test_opening_moves_pending_to_learning(session, store):
    session.mark_opened("roofline")
    assert store.progress("roofline").state == "learning"
    assert session.last_opened("roofline") is not None


def test_opening_never_lowers_a_state_set_elsewhere(session, cli, store):
    assert session.state_of("roofline") == "pending"  # what the app read at start
    cli.set_state("roofline", "done")
    change = session.mark_opened("roofline")
    assert store.progress("roofline").state == "done"
    assert session.state_of("roofline") == "done" and change.external
    assert session.summary.done == 1


def test_check_external_is_empty_until_someone_else_writes(session, cli, store):
    assert not session.check_external()
    store.set_state("cuda-basics", "done")  # our own connection: not "external"
    session.set_state("stream-k", "skipped")
    assert not session.check_external()
    cli.set_note("stream-k", "from the CLI")
    change = session.check_external()
    assert change.external and change.notes == {"stream-k"}
    assert session.note_text("stream-k") == "from the CLI"


def test_a_clean_draft_follows_the_store(session, cli):
    session.switch_note("roofline")
    cli.set_note("roofline", "written elsewhere")
    session.check_external()
    assert session.draft.text == "written elsewhere" and not session.draft.dirty


def test_the_issue_11_repro_keeps_both_notes_and_the_state(session, cli, store):
    store.set_note("roofline", "v1")
    session.reload()
    session.switch_note("roofline")  # the app shows v1
    cli.set_note("roofline", "from the CLI")
    cli.set_state("roofline", "done")
    session.update_draft("v1 + typed")  # the learner edits the old text
    change = session.flush()
    stored = store.get_note("roofline")
    assert "v1 + typed" in stored and "from the CLI" in stored  # nothing overwritten
    assert stored.index("v1 + typed") < stored.index("from the CLI")
    assert "conflicting note kept" in stored
    assert change.conflicts and change.conflicts[0].theirs == "from the CLI"
    assert session.draft.text == stored and not session.draft.dirty
    session.mark_opened("roofline")  # `o` afterwards
    assert store.progress("roofline").state == "done"


def test_a_dirty_draft_is_saved_with_both_versions_as_soon_as_the_change_is_seen(session, cli, store):
    session.switch_note("roofline")
    session.update_draft("mine")
    cli.set_note("roofline", "theirs")
    change = session.check_external()
    assert change.conflicts
    assert "mine" in store.get_note("roofline") and "theirs" in store.get_note("roofline")


def test_an_append_elsewhere_that_we_already_contain_is_no_conflict(session, cli, store):
    store.set_note("roofline", "v1")
    session.reload()
    session.switch_note("roofline")
    cli.set_note("roofline", "v1")  # the same text again: no change
    session.update_draft("v1 and more")
    change = session.flush()
    assert not change.conflicts and store.get_note("roofline") == "v1 and more"


def test_the_same_edit_made_twice_is_no_conflict(session, cli, store):
    session.switch_note("roofline")
    cli.set_note("roofline", "same words")
    session.update_draft("same words")
    change = session.flush()
    assert not change.conflicts and store.get_note("roofline") == "same words"
    assert not session.draft.dirty


def test_switching_saves_the_draft(session, store):
    session.switch_note("roofline")
    session.update_draft("first")
    session.switch_note("stream-k")
    assert store.get_note("roofline") == "first"
    assert session.draft.entry_id == "stream-k" and session.draft.text == ""


def test_append_saves_the_typed_text_first(session, store):
    session.switch_note("roofline")
    session.update_draft("typed")
    session.append_note("roofline", "| calc |")
    assert store.get_note("roofline") == "typed\n| calc |"
    assert session.draft.text == "typed\n| calc |" and not session.draft.dirty


def test_external_editor_save_keeps_both_when_the_note_changed_meanwhile(session, cli, store):
    store.set_note("roofline", "before")
    session.reload()
    before = session.note_text("roofline")
    cli.set_note("roofline", "changed while the editor was open")
    change = session.save_note("roofline", "before, edited in $EDITOR", base=before)
    stored = store.get_note("roofline")
    assert "edited in $EDITOR" in stored and "changed while the editor was open" in stored
    assert change.conflicts


class RefusingStore:
    """A store whose note and state writes fail like a locked or read-only database."""

    def __init__(self, store):
        self._store = store
        self.refuse = True

    def __getattr__(self, name):
        return getattr(self._store, name)

    def _refuse(self):
        raise StoreError("progress.db stayed locked by another studytui process")

    def replace_note(self, entry_id, expected, text):
        if self.refuse:
            self._refuse()
        return self._store.replace_note(entry_id, expected, text)

    def set_state(self, entry_id, state):
        if self.refuse:
            self._refuse()
        return self._store.set_state(entry_id, state)


def test_a_refused_note_is_kept_set_aside_and_retried(store):
    refusing = RefusingStore(store)
    session = StudySession(build_guide(), refusing)
    session.switch_note("roofline")
    session.update_draft("precious")
    with pytest.raises(NotesNotSaved):
        session.flush()
    assert session.draft.dirty and session.draft.text == "precious"
    session.switch_note("stream-k")  # still refused: set aside, not lost
    assert session.unsaved_notes == {"roofline": "precious"}
    assert session.note_text("roofline") == "precious"
    session.switch_note("roofline")  # shown again, the unsaved version
    assert session.draft.text == "precious"
    refusing.refuse = False
    session.flush()
    assert store.get_note("roofline") == "precious" and not session.has_unsaved


def test_a_refused_mark_changes_nothing(store):
    session = StudySession(build_guide(), RefusingStore(store))
    with pytest.raises(StoreError):
        session.set_state("roofline", "done")
    assert session.state_of("roofline") == "pending"


def test_after_the_end_an_unsavable_note_goes_to_a_file(store, data):
    refusing = RefusingStore(store)
    session = StudySession(build_guide(), refusing)
    session.switch_note("stream-k")
    session.update_draft("set aside earlier")
    with pytest.raises(NotesNotSaved):
        session.switch_note("roofline") or session.flush()
    session.update_draft("do not lose me")
    err = io.StringIO()
    path = session.save_what_is_left(data, err)
    assert path is not None and str(path) in err.getvalue()
    assert "do not lose me" in path.read_text() and "set aside earlier" in path.read_text()
    refusing.refuse = False
    assert session.save_what_is_left(data, err) is None
    assert store.get_note("roofline") == "do not lose me"
    assert store.get_note("stream-k") == "set aside earlier"


def test_next_entry_uses_current_progress(session, cli):
    assert session.next_entry(None).id == "roofline"
    cli.set_state("roofline", "done")
    session.check_external()
    assert session.next_entry(None).id == "cuda-basics"


def test_history_lists_every_version_newest_first_and_restores_one(session, cli, store):
    session.switch_note("roofline")
    for text in ("first", "second", "third"):
        session.update_draft(text)
        session.flush()
    cli.set_note("roofline", "from the CLI")
    history = session.note_history("roofline")
    assert [v.text for v in history] == ["from the CLI", "third", "second", "first"]
    assert history[0].current and not any(v.current for v in history[1:])
    assert all(v.at for v in history)
    change = session.restore_note("roofline", history[3])
    assert store.get_note("roofline") == "first" and "roofline" in change.notes
    assert session.draft.text == "first"
    # The replaced version is still in the history: restoring is never a loss.
    assert [v.text for v in session.note_history("roofline")][:2] == ["first", "from the CLI"]


# -- one-shot writes, as the command line makes them ----------------------------------------


def test_a_command_write_replaces_the_note_it_read(session, cli, store):
    cli.set_note("roofline", "old")
    change = session.write_note("roofline", "new")
    assert store.get_note("roofline") == "new" and "roofline" in change.notes and not change.conflicts


def test_a_command_write_keeps_both_when_the_note_changed_after_it_read(session, cli, store):
    old = session.note_text("roofline")
    cli.set_note("roofline", "written by the app meanwhile")
    change = session.write_note("roofline", "from the editor", base=old)
    note = store.get_note("roofline")
    assert "written by the app meanwhile" in note and "from the editor" in note
    assert "--- studytui: conflicting note" in note
    assert [c.entry_id for c in change.conflicts] == ["roofline"]


def test_a_refused_command_write_raises_the_stores_error_and_keeps_nothing_behind(store):
    session = StudySession(build_guide(), RefusingStore(store))
    with pytest.raises(StoreError) as info:
        session.write_note("roofline", "words")
    assert not isinstance(info.value, NotesNotSaved)  # the caller still holds the text and says so
    assert not session.has_unsaved and store.get_note("roofline") == ""


def test_restore_by_number_and_a_restore_that_changes_nothing(session, store):
    for text in ("one", "two"):
        session.write_note("roofline", text)
    assert session.restore_note("roofline", 1) and store.get_note("roofline") == "one"
    assert not session.restore_note("roofline", 1)  # already the note: nothing to publish


def test_a_section_note_edited_while_changed_elsewhere_keeps_both(session, cli, store):
    cli.set_section_note("start-here", "v1")
    assert session.write_section_note("start-here", "v1 and mine", base="v1") is False
    cli.set_section_note("start-here", "theirs")
    assert session.write_section_note("start-here", "mine", base="v1 and mine") is True
    note = store.get_section_note("start-here")
    assert "theirs" in note and "mine" in note and "--- studytui: conflicting note" in note


def test_continue_follows_the_learners_position(session, cli):
    assert session.continue_entry().id == "roofline"
    cli.mark_opened("cuda-basics")
    cli.set_state("cuda-basics", "done")
    session.check_external()
    assert session.continue_entry().id == "inference-arithmetic"


# -- rescue files (issue 24): private, in the data directory, never half-written -------------


def _refused_session(store):
    refusing = RefusingStore(store)
    session = StudySession(build_guide(), refusing)
    session.switch_note("roofline")
    session.update_draft("do not lose me")
    return session


def test_a_rescue_file_is_private_unpredictable_and_in_the_data_directory(store, data, monkeypatch):
    import stat

    monkeypatch.setenv("XDG_STATE_HOME", str(data.parent / "state"))
    err = io.StringIO()
    first = _refused_session(store).save_what_is_left(data, err)
    second = _refused_session(store).save_what_is_left(data, io.StringIO())
    assert first is not None and second is not None and first != second  # a random part in the name
    assert first.parent == data and first.name.startswith("unsaved-notes-") and first.suffix == ".md"
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    assert "do not lose me" in first.read_text() and str(first) in err.getvalue() and "readable only by you" in err.getvalue()


def test_a_full_disk_leaves_no_empty_file_and_uses_the_state_directory(store, data, monkeypatch):
    import errno

    import studytui.study.session as session_module

    state = data.parent / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    real = session_module._write_all
    calls = []

    def full_then_fine(fd, payload):
        calls.append(fd)
        if len(calls) == 1:  # the data directory's disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, payload)

    monkeypatch.setattr(session_module, "_write_all", full_then_fine)
    err = io.StringIO()
    path = _refused_session(store).save_what_is_left(data, err)
    assert not list(data.glob("unsaved-notes-*"))  # no 0-byte leftover where the write failed
    assert path is not None and path.parent == state / "studytui" and "do not lose me" in path.read_text()
    assert str(path) in err.getvalue()


def test_when_no_folder_takes_the_rescue_file_the_text_is_printed(store, data, monkeypatch):
    import errno

    import studytui.study.session as session_module

    monkeypatch.setenv("XDG_STATE_HOME", str(data.parent / "state"))

    def full(fd, payload):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(session_module, "_write_all", full)
    err = io.StringIO()
    assert _refused_session(store).save_what_is_left(data, err) is None
    assert "do not lose me" in err.getvalue() and "No space left on device" in err.getvalue()
    assert not list(data.glob("unsaved-notes-*")) and not list((data.parent / "state").rglob("unsaved-notes-*"))
