"""Startup order: the first frame reaches the terminal before deferred work, and garbage
collection, paused for a faster start, always comes back on."""

from __future__ import annotations

import argparse
import gc
import sys

import studytui.tui.launch as tui_launch

from .support import screen_text, wait_until


async def test_after_first_frame_callbacks_run_once(make_app):
    app = make_app()
    calls: list[str] = []
    app.after_first_frame.append(lambda: calls.append(screen_text(app)))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert len(calls) == 1
        assert "Start here" in calls[0]  # the guide was on screen when the callback ran
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()
        assert len(calls) == 1


def _pretend_terminal(monkeypatch):
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)


def test_launch_turns_garbage_collection_back_on(monkeypatch):
    _pretend_terminal(monkeypatch)
    seen: list[bool] = []

    def fake_launch(args, resume_gc):
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(tui_launch, "_launch", fake_launch)
    assert gc.isenabled()
    assert tui_launch.launch(argparse.Namespace(data_dir=None, content=None)) == 0
    assert seen == [False] and gc.isenabled()


def test_launch_turns_garbage_collection_back_on_after_a_failure(monkeypatch):
    _pretend_terminal(monkeypatch)

    def failing_launch(args, resume_gc):
        raise RuntimeError("boom")

    monkeypatch.setattr(tui_launch, "_launch", failing_launch)
    try:
        tui_launch.launch(argparse.Namespace(data_dir=None, content=None))
    except RuntimeError:
        pass
    assert gc.isenabled()


# --- what the first frame does not pay for (issue 27) -------------------------------------------
async def test_the_main_screen_is_pushed_once_startup_is_over(make_app):
    """Over Textual's default screen, as a pushed screen: made the app's default screen instead,
    its footer never showed its keys in a browser tab through `studytui serve`
    (tests/test_serve.py::test_the_printed_url_works waits for them)."""
    from studytui.tui.screens.main import MainScreen

    app = make_app()
    async with app.run_test(size=(120, 40)):
        assert len(app.screen_stack) == 2
        assert isinstance(app.screen, MainScreen) and app.screen is app.main_screen


async def test_a_saved_theme_is_parsed_once_not_again_before_the_first_frame(make_app, store, monkeypatch):
    """A learner's saved theme is the theme the stylesheet is first parsed in: setting it once
    running made Textual re-parse every rule and restyle before the first frame."""
    from textual.css.stylesheet import Stylesheet

    store.set_ui("theme", "textual-light")
    reparses: list[bool] = []
    original = Stylesheet.reparse

    def counted(self):
        reparses.append(True)
        return original(self)

    monkeypatch.setattr(Stylesheet, "reparse", counted)
    app = make_app(settled=False)
    shown: list[int] = []
    app.after_first_frame.append(lambda: shown.append(len(reparses)))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_until(pilot, lambda: bool(shown) and app.main_screen.detail.ready)
        assert shown == [0]
        assert app.theme == "textual-light" and app.current_theme.dark is False
        assert "-light-mode" in app.classes and "-dark-mode" not in app.classes
        assert store.get_ui("theme") == "textual-light"  # not written back as a change


async def test_dialog_rules_wait_for_the_first_frame(make_app):
    """dialogs.tcss is not parsed for the first frame; it is there, parsed, right after it."""
    app = make_app(settled=False)
    path = str(app.DIALOG_CSS_PATH)
    seen: list[bool] = []
    original = app.first_frame_shown

    def first_frame_shown() -> None:
        seen.append(app.stylesheet.has_source(path))
        original()
        seen.append(app.stylesheet.has_source(path))

    app.first_frame_shown = first_frame_shown  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_until(pilot, lambda: bool(seen) and app.main_screen.detail.ready)
        assert seen == [False, True]
        assert any("#help-box" in rule.selector_names for rule in app.stylesheet.rules)


async def test_a_screen_pushed_before_the_dialog_rules_are_added_is_styled_by_them(make_app):
    """A key typed at start (`?`) can open a dialog before the first-frame callbacks run: the
    push adds the dialogs' rules first, so the dialog looks as it always does."""
    from studytui.tui.screens.help import HelpScreen

    app = make_app(settled=False)
    app.first_frame_shown = lambda: None  # type: ignore[method-assign]  # only the push can add them now
    async with app.run_test(size=(120, 40)) as pilot:
        assert not app.stylesheet.has_source(str(app.DIALOG_CSS_PATH))
        app.action_help()
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.query_one("#help-box")
        assert box.styles.max_width is not None and box.styles.max_width.value == 100  # dialogs.tcss
        assert box.styles.border.top[0] == "round"
        assert app.screen.styles.align == ("center", "middle")


async def test_the_footer_is_composed_with_the_main_screen(make_app):
    """The footer is there in the first frame (mounted after it, it never showed its keys in a
    browser tab through `studytui serve`), and its keys follow on its line."""
    app = make_app(settled=False)
    seen: list[int] = []

    def at_first_frame() -> None:
        main = app.main_screen
        assert main is not None
        seen.append(len(main.query("Footer")))

    app.after_first_frame.append(at_first_frame)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_until(pilot, lambda: app.main_screen is not None and app.main_screen.detail.ready)
        assert seen == [1]
        assert await wait_until(pilot, lambda: "q Quit" in screen_text(app).splitlines()[-1])


async def test_a_dialog_opened_and_closed_at_start_leaves_one_follow_up(make_app):
    """`?` and Esc typed before the first frame is followed up resume the main screen twice:
    the work after the first frame (footer, entry body, ready hooks) still runs once."""
    from textual import events

    app = make_app(settled=False)
    hooks: list[bool] = []
    app.registry.ready_hooks.append(lambda host: hooks.append(True))
    async with app.run_test(size=(120, 40)) as pilot:
        app.post_message(events.Key("question_mark", "?"))
        app.post_message(events.Key("escape", None))
        assert await wait_until(pilot, lambda: app.main_screen is not None and app.main_screen.detail.ready)
        await pilot.pause()
        await pilot.pause()
        assert app.screen is app.main_screen
        assert hooks == [True]
        assert len(app.screen.query("Footer")) == 1 and len(app.screen.query("#note-panel")) == 1
