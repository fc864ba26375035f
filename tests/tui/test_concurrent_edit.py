"""The app and the command line writing the same store (issue 11's repro).

The command line runs as a real process, so its writes come through another SQLite connection
exactly as they do for a learner with the app open in one terminal and a shell in another.
"""

from __future__ import annotations

import subprocess
import sys

from studytui.tui.compat import notifications
from studytui.tui.screens.main import MainScreen
from studytui.tui.widgets.note_panel import NoteEditor

from .support import screen_text

ENTRY = "flashattention"  # in the test guide and in the real one the command line loads


def cli(data_dir, *args: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "studytui.cli", "--data-dir", str(data_dir), *args],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


async def test_cli_writes_while_the_app_edits_keep_both_and_the_state(make_app, store, data_dir):
    store.set_note(ENTRY, "v1")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.jump_to(ENTRY)
        await pilot.pause()
        assert "v1" in screen_text(app)
        await pilot.press("e")
        await pilot.pause()
        editor = app.screen.query_one(NoteEditor)
        assert editor.has_focus
        await pilot.press(*" + typed")  # not saved yet
        # Meanwhile, in another shell:
        cli(data_dir, "note", ENTRY, "--text", "from the CLI")
        cli(data_dir, "mark", ENTRY, "done")
        await pilot.press("escape")  # leaving the editor saves
        await pilot.pause()
        stored = store.get_note(ENTRY)
        assert "from the CLI" in stored and "v1 + typed" in stored  # both kept
        assert any("a clash kept twice" in (n.title or "") for n in notifications(app))
        assert store.progress(ENTRY).state == "done"
        assert isinstance(app.screen, MainScreen)
        await pilot.press("o")  # opening the source must not lower done to learning
        await pilot.pause()
        assert store.progress(ENTRY).state == "done"
        assert "● FlashAttention" in screen_text(app)  # the row shows the CLI's state


async def test_a_note_changed_elsewhere_reaches_an_open_editor_that_has_no_typing(make_app, store, data_dir):
    store.set_note(ENTRY, "v1")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.jump_to(ENTRY)
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        cli(data_dir, "note", ENTRY, "--text", "from the CLI")
        app.check_external()  # as the timer or regaining focus does
        await pilot.pause()
        editor = app.screen.query_one(NoteEditor)
        assert editor.text == "from the CLI"
        await pilot.press(*" and more", "escape")  # typing goes on at the end
        await pilot.pause()
        assert store.get_note(ENTRY) == "from the CLI and more"


async def test_the_app_shows_what_the_cli_wrote_without_a_keypress(make_app, store, data_dir):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.jump_to(ENTRY)
        await pilot.pause()
        cli(data_dir, "note", ENTRY, "--text", "noted in a shell")
        cli(data_dir, "mark", ENTRY, "skipped")
        for _ in range(40):  # the app looks every second
            await pilot.pause(0.1)
            if "noted in a shell" in screen_text(app):
                break
        text = screen_text(app)
        assert "noted in a shell" in text
        assert "⊘ FlashAttention" in text
