"""`o` and `y`: open the source locally, or show a dialog and copy over OSC 52. One test per branch."""

from __future__ import annotations

import base64

from studytui.tui.compat import notifications
from studytui.tui.screens.handoff import HandoffDialog
from studytui.tui.screens.main import MainScreen

from .support import DESKTOP_ENV, HEADLESS_LINUX_ENV, SSH_ENV, screen_text, wait_until

URL = "https://example.org/roofline"
OSC52 = "\x1b]52;c;" + base64.b64encode(URL.encode()).decode() + "\x07"
OSC52_TMUX = "\x1bPtmux;" + OSC52.replace("\x1b", "\x1b\x1b") + "\x1b\\"


def record(app):
    """Capture what the app would open or write to the terminal."""
    opened: list[str] = []
    written: list[str] = []
    app.open_url = lambda url, new_tab=True: opened.append(url)
    app.write_to_terminal = written.append
    return opened, written


async def test_local_browser_opens_url_and_pending_becomes_learning(make_app, store):
    app = make_app(environ=dict(DESKTOP_ENV), platform="linux")
    opened, written = record(app)
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        assert opened == [URL]
        assert written == []  # nothing copied, no dialog
        assert isinstance(app.screen, MainScreen)
        assert store.progress("roofline").state == "learning"
        assert store.progress("roofline").last_opened_at is not None
        assert "◐ learning" in screen_text(app)


async def test_macos_without_display_still_uses_the_browser(make_app):
    app = make_app(environ={"HOME": "/Users/x"}, platform="darwin")
    opened, _ = record(app)
    async with app.run_test() as pilot:
        await pilot.press("o")
        await pilot.pause()
        assert opened == [URL]


async def test_opening_keeps_a_done_entry_done(make_app, store):
    store.set_state("roofline", "done")
    app = make_app()
    record(app)
    async with app.run_test() as pilot:
        await pilot.press("o")
        await pilot.pause()
    assert store.progress("roofline").state == "done"


async def test_ssh_shows_dialog_and_copies_with_osc52(make_app, store):
    app = make_app(environ=dict(SSH_ENV), platform="linux")
    opened, written = record(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("o")
        await pilot.pause()
        assert opened == []  # never a browser over SSH
        assert isinstance(app.screen, HandoffDialog)
        assert written == [OSC52]
        text = screen_text(app)
        assert URL in text and "SSH session" in text
        # The link is a terminal hyperlink (OSC 8 is emitted for `link` styles).
        link = app.screen.query_one("#handoff-link")
        assert any(span.style.link == URL for span in link.visual._spans)  # type: ignore[attr-defined]
        await pilot.press("y")  # copy again from the dialog
        assert written == [OSC52, OSC52]
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
    assert store.progress("roofline").state == "learning"


async def test_linux_without_display_shows_dialog(make_app):
    app = make_app(environ=dict(HEADLESS_LINUX_ENV), platform="linux")
    opened, written = record(app)
    async with app.run_test() as pilot:
        await pilot.press("o")
        await pilot.pause()
        assert opened == []
        assert isinstance(app.screen, HandoffDialog)
        assert "no graphical display" in screen_text(app)
        assert written == [OSC52]


async def test_tmux_wraps_the_copy_sequence(make_app):
    app = make_app(environ={**SSH_ENV, "TMUX": "/tmp/tmux-0/default,1,0"}, platform="linux")
    _, written = record(app)
    async with app.run_test() as pilot:
        await pilot.press("o")
        await pilot.pause()
        assert written == [OSC52_TMUX]


async def test_y_copies_even_when_a_browser_is_available(make_app, store):
    app = make_app(environ=dict(DESKTOP_ENV))
    opened, written = record(app)
    async with app.run_test() as pilot:
        await pilot.press("y")
        await pilot.pause()
        assert written == [OSC52]
        assert opened == []
        assert isinstance(app.screen, MainScreen)
    assert store.progress("roofline").state == "pending"  # copying is not opening


async def test_y_inside_tmux_wraps(make_app):
    app = make_app(environ={**DESKTOP_ENV, "TMUX": "x"})
    _, written = record(app)
    async with app.run_test() as pilot:
        await pilot.press("y")
        await pilot.pause()
        assert written == [OSC52_TMUX]


async def test_entry_without_url_says_why(make_app, store):
    app = make_app()
    opened, written = record(app)
    async with app.run_test(size=(120, 40)) as pilot:
        app.jump_to("rubin-cpx")
        await pilot.pause()
        assert "No link: announced, no technical document yet" in screen_text(app)
        await pilot.press("o", "y")
        await pilot.pause()
        assert opened == [] and written == []
    assert store.progress("rubin-cpx").state == "pending"


async def test_clicking_the_url_uses_the_same_rules(make_app):
    app = make_app(environ=dict(SSH_ENV))
    opened, written = record(app)
    async with app.run_test(size=(120, 40)) as pilot:
        # The link is mounted just after the first frame: wait for it, then click it.
        assert await wait_until(
            pilot, lambda: bool(app.screen.query("#detail-url")) and app.screen.query_one("#detail-url").region.area > 0
        )
        await pilot.click("#detail-url")
        await pilot.pause()
        assert opened == [] and written == [OSC52]
        assert isinstance(app.screen, HandoffDialog)


HOSTILE_NOTE = (
    "[a](%66ile:///etc/passwd) [b](%6Aavascript:alert%281%29) [c](ssh://host/) [d](/etc/passwd) "
    "[e](https://example.org/ok)"
)


async def test_note_links_go_through_the_one_hand_off_policy(make_app, store):
    from textual.widgets import Markdown

    store.set_note("roofline", HOSTILE_NOTE)
    app = make_app()
    opened, written = record(app)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_until(pilot, lambda: bool(app.screen.query("#note-preview")))
        preview = app.screen.query_one("#note-preview", Markdown)
        for href in ("%66ile:///etc/passwd", "%6Aavascript:alert%281%29", "ssh://host/", "/etc/passwd"):
            preview.post_message(Markdown.LinkClicked(preview, href))
            await pilot.pause()
        assert opened == [] and written == []  # nothing reached the browser or the clipboard
        refused = [n for n in notifications(app) if n.title == "Link refused"]
        assert len(refused) == 4
        preview.post_message(Markdown.LinkClicked(preview, "https://example.org/ok"))
        await pilot.pause()
        assert opened == ["https://example.org/ok"]


async def test_a_hostile_entry_url_is_neither_opened_nor_copied(make_app, guide, store):
    from studytui.guide.model import Guide

    bad = guide.entries[0]._replace(url="%66ile:///etc/passwd")
    sections = list(guide.sections)
    first = sections[0]
    sub = first.subsections[0]
    sections[0] = first._replace(subsections=(sub._replace(entries=(bad, *sub.entries[1:])),))
    hostile = Guide(guide.title, guide.source_repo, guide.license, tuple(sections), guide.glossary, guide.policy, guide.content_dir)
    app = make_app(guide=hostile, environ=dict(SSH_ENV))
    opened, written = record(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert opened == [] and written == []
        assert isinstance(app.screen, MainScreen)  # no hand-off dialog either
    assert store.progress("roofline").state == "pending"


async def test_in_a_browser_tab_the_link_opens_in_the_learners_browser(make_app, monkeypatch):
    # studytui serve: the server may have no display, but the learner's browser is the terminal.
    app = make_app(environ=dict(HEADLESS_LINUX_ENV), platform="linux")
    monkeypatch.setattr(type(app), "is_web", property(lambda self: True))
    opened, written = record(app)
    async with app.run_test() as pilot:
        await pilot.press("o")
        await pilot.pause()
        assert opened == [URL] and written == []
        assert isinstance(app.screen, MainScreen)
