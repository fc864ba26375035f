"""Every timer and signal handler of the study app is safe at every moment of a widget's life (issue 23).

A clean clone once failed with `NoMatches: No nodes match 'NoteEditor'`: the app's once-a-second
look for other processes' changes asked the note panel for its text before the panel's editor
existed. Timers and signals fire whenever they like; these tests fire each of them before the
main screen is mounted, at every step while it mounts, with another process writing meanwhile,
and after the app (and so every widget) is gone.
"""

from __future__ import annotations

from studytui.store import open_store
from studytui.study.session import Change


def fire_everything(app, main=None, panel=None, other_store=None, entry_id="roofline") -> None:
    """Every callback a timer or a signal can run, called now."""
    if other_store is not None:
        other_store.append_note(entry_id, "from another process\n")
    app.check_external()  # the interval timer and on_app_focus
    app.sync_draft()  # before every save
    app.flush_note()
    app.publish(Change.of(entry_id, note=True))  # the study-changed signal
    app.publish(Change(frozenset({entry_id}), frozenset({entry_id}), external=True))
    app._remember_theme(app.current_theme)  # the theme-changed signal
    if main is not None:
        main.on_study_changed(Change.of(entry_id, note=True))
        main.save_last_viewed()  # its timer
        main.sync_position()
        main.update_status()
        _ = main.current_entry
    if panel is not None:
        panel.sync_draft()
        panel.show()  # the detail pane's replayed show_entry, as a served tab closes after its first frame
        panel.refresh_preview()
        panel.draft_changed()
        panel._autosave()  # the autosave timers
        panel.cancel_timer()
        _ = panel.editing


async def test_timers_and_signals_before_during_and_after_mount(make_app, data_dir):
    other = open_store(data_dir)  # a second process writing the same store
    app = make_app(settled=False)
    panels, mains = [], []
    async with app.run_test(size=(100, 30)) as pilot:
        fire_everything(app, other_store=other)  # before the main screen exists
        for _ in range(200):  # every step while it mounts, until the note panel is whole
            main = app.main_screen
            detail = main.query("#detail").first() if main is not None else None
            panel = None
            if detail is not None:
                found = main.query("#note-panel")
                panel = found.first() if found else None
            fire_everything(app, main, panel, other)
            if panel is not None and main not in mains:
                mains.append(main)
                panels.append(panel)
            if main is not None and main.detail.ready:
                break
            await pilot.pause()
        assert app.main_screen is not None and app.main_screen.detail.ready
        main = app.main_screen
        panel = main.detail.note_panel
        fire_everything(app, main, panel, other)
        await pilot.press("e")  # editing: the editor shown, typing, timers pending
        await pilot.press(*"abc")
        fire_everything(app, main, panel, other)
        await pilot.pause()
        assert "abc" in app.session.note_text("roofline")
    # After unmount: the app has exited and every widget is gone (Textual runs no more timers or
    # signal handlers then; a callback still queued somewhere must not fail either).
    for old_main, old_panel in zip([*mains, main], [*panels, panel]):
        fire_everything(app, None, old_panel, other)
        old_main.on_study_changed(Change.of("roofline", note=True))
    other.close()
    store = open_store(data_dir)
    try:
        note = store.get_note("roofline")
        assert "abc" in note and "from another process" in note  # nothing typed was lost
    finally:
        store.close()


async def test_a_removed_note_panel_no_longer_answers_for_the_draft(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.main_screen.detail.note_panel
        assert app.sync_draft == panel.sync_draft
        await panel.remove()
        await pilot.pause()
        assert app.sync_draft != panel.sync_draft
        fire_everything(app, app.main_screen, panel)
