"""Notes: in-app editor with debounced autosave, saves on leave/switch/quit/crash, literal markup."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from studytui.store import open_store
from studytui.tui.compat import notifications, screen_lines
from studytui.tui.screens.main import MainScreen
from studytui.tui.widgets import note_panel
from studytui.tui.widgets.note_panel import AUTOSAVE_DELAY, NoteEditor, NotePanel, note_preview_markdown

from .support import screen_text, wait_until


async def start_editing(app, pilot) -> NoteEditor:
    await pilot.pause()
    await pilot.press("e")  # acted on once the note panel is mounted (just after the first frame)
    assert await wait_until(pilot, lambda: any(editor.has_focus for editor in app.screen.query(NoteEditor)))
    return app.screen.query_one(NoteEditor)


async def test_autosave_waits_for_a_quiet_second(make_app, store, monkeypatch):
    monkeypatch.setattr(note_panel, "AUTOSAVE_MAX_DELAY", 60.0)  # the debounce alone
    app = make_app()
    async with app.run_test() as pilot:
        await start_editing(app, pilot)
        await pilot.press(*"tiling")
        await pilot.pause(AUTOSAVE_DELAY * 0.4)
        await pilot.press(*" helps")  # typing again restarts the wait
        await pilot.pause(AUTOSAVE_DELAY * 0.7)
        assert store.get_note("roofline") == ""  # not before a quiet second
        await pilot.pause(AUTOSAVE_DELAY * 0.6)
        assert store.get_note("roofline") == "tiling helps"  # at most ~1 s after typing stopped
        # The preview follows the saved text.
        assert "tiling helps" in screen_text(app)


async def test_steady_typing_is_saved_at_least_every_max_delay(make_app, store, monkeypatch):
    # Typing never pauses for a quiet second, yet the note reaches the store within the max
    # delay: closing the terminal mid-sentence loses at most that much.
    monkeypatch.setattr(note_panel, "AUTOSAVE_MAX_DELAY", 0.6)
    app = make_app()
    async with app.run_test() as pilot:
        await start_editing(app, pilot)
        saved_while_typing = []
        for word in ("one ", "two ", "three ", "four ", "five "):
            await pilot.press(*word)
            await pilot.pause(0.25)
            saved_while_typing.append(store.get_note("roofline"))
        assert any(saved_while_typing)
        assert "two" in saved_while_typing[-1]  # it keeps saving while typing goes on


async def test_sighup_while_typing_saves_the_note(make_app, store):
    app = make_app()
    async with app.run_test() as pilot:
        await start_editing(app, pilot)
        await pilot.press(*"typed just before the window closed")
        os.kill(os.getpid(), signal.SIGHUP)  # the terminal went away
        await pilot.pause()
    assert store.get_note("roofline") == "typed just before the window closed"
    assert app.return_code == 128 + signal.SIGHUP
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL  # handed back at exit


async def test_leaving_the_editor_saves_at_once(make_app, store):
    app = make_app()
    async with app.run_test() as pilot:
        editor = await start_editing(app, pilot)
        await pilot.press(*"read twice")
        await pilot.press("escape")
        await pilot.pause()
        assert store.get_note("roofline") == "read twice"
        assert not editor.display
        assert isinstance(app.screen, MainScreen) and app.screen.tree.has_focus


async def test_switching_entries_saves_the_note(make_app, store):
    app = make_app()
    async with app.run_test() as pilot:
        await start_editing(app, pilot)
        await pilot.press(*"first")
        app.jump_to("stream-k")  # e.g. from the palette, while typing
        await pilot.pause()
        assert store.get_note("roofline") == "first"
        assert store.get_note("stream-k") == ""


async def test_quit_saves_the_pending_note(make_app, store):
    app = make_app()
    async with app.run_test() as pilot:
        await start_editing(app, pilot)
        await pilot.press(*"last words")
        await pilot.press("ctrl+q")  # q would type a letter; ctrl+q quits from anywhere
        await pilot.pause()
    assert store.get_note("roofline") == "last words"


async def test_a_crash_in_a_handler_still_saves_the_note(make_app, store):
    app = make_app()

    def boom() -> None:
        raise RuntimeError("handler failed")

    with pytest.raises(RuntimeError):
        async with app.run_test() as pilot:
            await start_editing(app, pilot)
            await pilot.press(*"unsaved thought")
            app.call_later(boom)
            await pilot.pause()
            await pilot.pause()
    assert store.get_note("roofline") == "unsaved thought"


async def test_notes_survive_a_restart(make_app, data_dir):
    app = make_app()
    async with app.run_test() as pilot:
        await start_editing(app, pilot)
        await pilot.press(*"kept")
        await pilot.press("escape", "q")
    store2 = open_store(data_dir)
    app2 = make_app(store=store2)
    async with app2.run_test() as pilot:
        assert await wait_until(pilot, lambda: "kept" in screen_text(app2))
    store2.close()


@pytest.mark.parametrize(
    "note, shown",
    [
        ("[bold]x[/bold] and [link=https://evil.example]y[/link]", "[bold]x[/bold] and [link=https://evil.example]y[/link]"),
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("<b>bold</b> and <div>block</div>", "<b>bold</b> and <div>block</div>"),
    ],
)
async def test_markup_in_notes_is_shown_literally(make_app, store, note, shown):
    store.set_note("roofline", note)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_until(pilot, lambda: shown in screen_text(app))


def test_preview_text_makes_control_characters_visible():
    assert note_preview_markdown("a\x1b[2Jb\x07") == "a\\x1b[2Jb\\x07"
    assert note_preview_markdown("tab\tand\nnewline") == "tab\tand\nnewline"
    assert "No note yet" in note_preview_markdown("   ")


async def test_E_edits_the_note_in_external_editor(make_app, store):
    app = make_app(environ={"DISPLAY": ":0", "EDITOR": "myeditor --wait"})
    seen: list[list[str]] = []

    def fake_editor(argv: list[str]) -> int:
        seen.append(argv)
        path = Path(argv[-1])
        path.write_text(path.read_text() + "written in $EDITOR\n")
        return 0

    app.run_editor = fake_editor  # type: ignore[method-assign]
    store.set_note("roofline", "before\n")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("E")
        await pilot.pause()
        assert seen and seen[0][:2] == ["myeditor", "--wait"] and seen[0][-1].endswith("roofline.md")
        assert store.get_note("roofline") == "before\nwritten in $EDITOR\n"
        assert "written in $EDITOR" in screen_text(app)


async def test_E_keeps_both_when_the_note_changed_while_the_editor_was_open(make_app, store, data_dir):
    app = make_app(environ={"DISPLAY": ":0", "EDITOR": "myeditor"})
    store.set_note("roofline", "before")
    other = open_store(data_dir)  # the command line, meanwhile

    def slow_editor(argv: list[str]) -> int:
        other.set_note("roofline", "written from the CLI while the editor was open")
        path = Path(argv[-1])
        path.write_text(path.read_text() + " and edited in $EDITOR")
        return 0

    app.run_editor = slow_editor  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("E")
        await pilot.pause()
        stored = store.get_note("roofline")
        assert "before and edited in $EDITOR" in stored
        assert "written from the CLI while the editor was open" in stored
        assert any(n.title == "Merged; a clash kept twice" for n in notifications(app))
    other.close()


def test_a_huge_note_is_previewed_in_part_and_says_how_to_see_all():
    text = ("line of a very long imported note\n" * 1_400_000)  # about 47 MB
    shown = note_preview_markdown(text)
    assert len(shown) < note_panel.PREVIEW_LIMIT + 500
    assert f"of {len(text):,} characters" in shown and "**E**" in shown and "studytui note ID" in shown


async def test_a_huge_note_does_not_freeze_the_app(make_app, store, monkeypatch):
    import time

    # A note from before the 8 MiB limit on note writes (NOTE_LIMIT): still opened, never frozen on.
    monkeypatch.setattr("studytui.store.model.NOTE_LIMIT", 64 * 1024 * 1024)
    store.set_note("stream-k", "x" * 44_000_000)
    monkeypatch.undo()
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        start = time.monotonic()
        app.jump_to("stream-k")
        def previewed() -> bool:
            found = app.screen.query("#note-preview")
            return bool(found) and "Preview: the first" in found.first().source

        assert await wait_until(pilot, previewed, timeout=30)
        await pilot.pause()
        assert time.monotonic() - start < 15  # was about 70 s; well under 1 s on an idle machine
        await pilot.press("e")  # too large for the in-app editor: says so, stays in the guide
        await pilot.pause()
        assert not app.screen.query_one(NotePanel).editing


async def test_E_keeps_the_note_when_the_editor_fails(make_app, store):
    app = make_app(environ={"DISPLAY": ":0", "EDITOR": "broken"})
    app.run_editor = lambda argv: 1  # type: ignore[method-assign]
    store.set_note("roofline", "safe")
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("E")
        await pilot.pause()
    assert store.get_note("roofline") == "safe"


async def test_e_on_a_section_row_asks_for_an_entry(make_app, store):
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("up")  # the Start here section row
        await pilot.press("e")
        await pilot.pause()
        assert not app.screen.query_one(NotePanel).editing


class RefusingStore:
    """Wraps a store; note and state writes fail like a locked or read-only database."""

    def __init__(self, store):
        self._store = store
        self.refuse = True

    def __getattr__(self, name):
        return getattr(self._store, name)

    def set_note(self, entry_id, text):
        if self.refuse:
            from studytui.core.errors import StoreError

            raise StoreError("progress.db stayed locked by another studytui process")
        return self._store.set_note(entry_id, text)

    def replace_note(self, entry_id, expected, text):
        self.set_note(entry_id, text)  # refused the same way
        return self._store.replace_note(entry_id, expected, text)

    set_state = set_note  # same failure for marks


async def test_a_refused_save_keeps_the_note_and_retries(make_app, store):
    refusing = RefusingStore(store)
    app = make_app(store=refusing)
    async with app.run_test() as pilot:
        await start_editing(app, pilot)
        await pilot.press(*"precious", "escape")
        await pilot.pause()
        assert app.draft.dirty and app.draft.text == "precious"  # kept, not dropped
        assert any("Note not saved" in (n.title or "") for n in notifications(app))
        app.jump_to("stream-k")  # still refused: set aside, not lost
        await pilot.pause()
        app.jump_to("roofline")
        await pilot.pause()
        assert "precious" in screen_text(app)  # shown again, unsaved version
        refusing.refuse = False
        app.jump_to("stream-k")  # the next flush retries
        await pilot.pause()
    assert store.get_note("roofline") == "precious"


def test_after_exit_the_launcher_hands_what_is_left_to_the_session(make_app, store, data_dir, capsys):
    # The rules are tested in tests/test_session.py; here only the launcher's wiring.
    from studytui.tui.launch import save_what_is_left

    refusing = RefusingStore(store)
    app = make_app(store=refusing)
    app.session.switch_note("roofline")
    app.session.update_draft("do not lose me")
    path = save_what_is_left(app, data_dir)
    assert path is not None and "do not lose me" in path.read_text()
    assert str(path) in capsys.readouterr().err
    refusing.refuse = False
    assert save_what_is_left(app, data_dir) is None
    assert store.get_note("roofline") == "do not lose me"


async def test_a_refused_mark_is_reported_not_crashing(make_app, store):
    app = make_app(store=RefusingStore(store))
    async with app.run_test() as pilot:
        await pilot.press("d")
        await pilot.pause()
        assert app.state_of("roofline") == "pending"
        assert any("Not saved" in (n.title or "") for n in notifications(app))
    assert store.progress("roofline").state == "pending"


async def test_the_editor_never_sends_control_characters_to_the_terminal(make_app, store):
    note = "a\x1b]0;pwned\x07b\x1b[2Jc\x9b31m"
    store.set_note("roofline", note)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        editor = await start_editing(app, pilot)
        assert editor.text == note  # the text keeps its bytes
        segments = [seg.text for strip in screen_lines(app) for seg in strip]
        assert not any(ch in text for text in segments for ch in ("\x1b", "\x9b"))
        assert "a␛]0;pwned" in screen_text(app)  # shown as control pictures
        await pilot.press("escape")
    assert store.get_note("roofline") == note  # unchanged by showing it


def test_control_pictures_keep_one_cell_per_character():
    from studytui.tui.format import control_pictures

    assert control_pictures("a\x1bb\x00\x7f\x9b\tok\n") == "a␛b␀␡\ufffd\tok\n"


async def test_h_lists_the_note_versions_and_restores_one(make_app, store):
    from studytui.tui.screens.history import HistoryScreen

    for text in ("first thoughts", "second thoughts", "third thoughts"):
        store.set_note("roofline", text)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("h")
        assert await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        text = screen_text(app)
        assert "third thoughts" in text and "first thoughts" in text and "now" in text
        await pilot.press("down", "down", "enter")  # the oldest version
        assert await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert store.get_note("roofline") == "first thoughts"
        assert await wait_until(pilot, lambda: "first thoughts" in screen_text(app))
        await pilot.press("h")  # the version replaced is still there
        assert await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        assert "third thoughts" in screen_text(app)
        await pilot.press("escape")
    assert store.get_note("roofline") == "first thoughts"


async def test_the_editor_opened_at_once_at_80x24_is_in_view(make_app):
    """`e` pressed while the entry's details are still arriving: the editor ends up in view (it
    was scrolled to before its first layout and stayed below the fold, focused but unseen)."""
    from studytui.guide.loader import load_guide

    app = make_app(guide=load_guide(), settled=False)  # the real guide: its summaries fill an 80x24 pane
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("e")
        editor = app.screen.query_one(NoteEditor)
        pane = app.screen.query_one("#detail")

        def in_view() -> bool:
            return editor.has_focus and editor.region.height > 0 and pane.region.contains_region(editor.region)

        assert await wait_until(pilot, in_view), (editor.region, pane.region, pane.scroll_y)
        await pilot.press(*"typed")
        assert "typed" in screen_text(app)


async def test_actions_asked_for_before_the_note_panel_is_mounted_run_once_it_is():
    """The note panel is mounted after the first frame; `e` pressed before that is kept, not
    dropped, and runs (in order) once the panel is there."""
    from textual.app import App

    from studytui.study.session import NoteDraft
    from studytui.tui.widgets.detail_pane import DetailPane

    ran: list[str] = []

    class Host(App[None]):
        def compose(self):
            yield DetailPane(NoteDraft(), lambda: None, cursor_blink=False, id="detail")

    app = Host()
    async with app.run_test() as pilot:
        pane = app.query_one(DetailPane)
        assert not pane.ready
        pane.when_ready(lambda: ran.append("first"))
        pane.when_ready(lambda: ran.append("second"))
        await pilot.pause()
        assert ran == []
        await pane.mount_rest()
        assert pane.ready and ran == ["first", "second"]
        pane.when_ready(lambda: ran.append("now"))  # once mounted: at once
        assert ran == ["first", "second", "now"]
