"""Issue 25: the app's `E` uses the command line's editor round trip and policy
(studytui.core.fileio.edit_in_editor): $VISUAL, else $EDITOR, and with neither a notice naming
both; no editor is guessed."""

from __future__ import annotations

from pathlib import Path

from studytui.tui.compat import notifications


async def test_with_no_editor_set_the_app_says_how_to_set_one_and_runs_nothing(make_app, store):
    app = make_app(environ={"DISPLAY": ":0", "HOME": "/home/learner"})
    ran: list[list[str]] = []
    app.run_editor = lambda argv: ran.append(argv) or 0  # type: ignore[method-assign]
    store.set_note("roofline", "kept")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("E")
        await pilot.pause()
        shown = [n.message for n in notifications(app)]
    assert ran == []  # no vi fallback
    assert any("no editor set: export VISUAL or EDITOR" in m and "press e" in m for m in shown), shown
    assert store.get_note("roofline") == "kept"


async def test_visual_wins_over_editor_and_the_file_is_cleaned_up(make_app, store):
    app = make_app(environ={"DISPLAY": ":0", "VISUAL": "visual-editor", "EDITOR": "other"})
    seen: list[list[str]] = []

    def editor(argv: list[str]) -> int:
        seen.append(argv)
        Path(argv[-1]).write_text("from VISUAL", encoding="utf-8")
        return 0

    app.run_editor = editor  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("E")
        await pilot.pause()
    assert seen and seen[0][0] == "visual-editor"
    assert store.get_note("roofline") == "from VISUAL"
    assert not Path(seen[0][-1]).exists()  # the temporary file went once the note was saved
