"""Keys sent in a burst land in the order they were typed (issue 12).

Textual resolves an Input's editing keys (backspace, arrows, End) as bindings only after the
key has bubbled up to the App, while typed characters are inserted at once; a busy screen let
characters overtake earlier backspaces (`End BSpace×6 0.77` left `0.`). These tests queue whole
bursts at once, as a terminal delivers them, on screens that do work on every keystroke.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import time

from textual import events

from studytui.tui.screens.search import SearchScreen
from studytui.tui.widgets.inputs import OrderedInput

from .test_calc_screens import calc_app, open_calc  # noqa: F401  (fixture)

CHARS = {"full_stop": ".", "space": " ", "minus": "-"}


def keys_for(text: str) -> list[str]:
    names = {v: k for k, v in CHARS.items()}
    return [names.get(c, c) for c in text]


def post_burst(app, keys: list[str]) -> None:
    """Queue every key before any is handled, as one read from the terminal does."""
    for key in keys:
        app.post_message(events.Key(key, CHARS.get(key, key if len(key) == 1 else None)))


async def settle(pilot, rounds: int = 4) -> None:
    for _ in range(rounds):
        await pilot.pause()


async def test_a_burst_after_backspaces_lands_in_order_in_a_calculator_field(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app, pilot, "specdec")
        control = screen.form.rows["alpha"].control
        assert isinstance(control, OrderedInput)
        control.focus()
        for attempt in range(10):
            control.value = "0.8"
            await settle(pilot)
            post_burst(app, ["end"] + ["backspace"] * 6 + keys_for("0.77"))
            await settle(pilot)
            assert control.value == "0.77", f"attempt {attempt}: {control.value!r}"
        assert screen.form.values()["alpha"] == "0.77"


async def test_a_paste_after_backspaces_lands_after_them(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app, pilot, "roofline")
        control = screen.form.rows["time"].control
        control.focus()
        for attempt in range(10):
            control.value = "2 ms"
            await settle(pilot)
            post_burst(app, ["end"] + ["backspace"] * 4)
            app.post_message(events.Paste("3 ms"))
            await settle(pilot)
            assert control.value == "3 ms", f"attempt {attempt}: {control.value!r}"


async def test_a_burst_in_the_search_box_lands_in_order(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, SearchScreen)
        box = app.screen.query_one("#search-input", OrderedInput)
        for attempt in range(10):
            box.value = "flash"
            await settle(pilot)
            post_burst(app, ["end"] + ["backspace"] * 5 + keys_for("stream-k"))
            await settle(pilot)
            assert box.value == "stream-k", f"attempt {attempt}: {box.value!r}"


# --- a real terminal ----------------------------------------------------------------------------
def test_bursts_land_in_order_in_a_real_terminal(tmp_path, tmux):
    """The issue's repro in tmux: the acceptance field, End, six BSpace, `0.77` at once, ten times."""
    session = f"studytui-burst-{os.getpid()}"
    script = "import sys; from studytui.cli import main; sys.exit(main(sys.argv[1:]))"
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-c", script, "--data-dir", str(tmp_path / "data")])

    def screen() -> str:
        return tmux("capture-pane", "-t", session, "-p")

    def wait_for(text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = screen()
            if text in shown:
                return shown
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared:\n{screen()}")

    def settled(check, timeout: float = 8.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if check():
                time.sleep(0.3)  # and it stays so (no late key changes it)
                return bool(check())
            time.sleep(0.1)
        return False

    tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", command)
    try:
        wait_for("Overall")
        tmux("send-keys", "-t", session, "C-p")
        time.sleep(0.5)
        tmux("send-keys", "-t", session, "-l", "Calculator: Speculative")
        time.sleep(1.0)
        tmux("send-keys", "-t", session, "Enter")
        wait_for("acceptance rate")
        landed = 0
        for attempt in range(10):
            value = ("0.77", "0.66")[attempt % 2]  # alternating, so the last burst's value never counts
            tmux("send-keys", "-t", session, "End")
            tmux("send-keys", "-t", session, *["BSpace"] * 6)
            tmux("send-keys", "-t", session, "-l", value)
            # Wait until the burst is handled (a loaded machine is slow); a reordered burst leaves
            # a different value that never turns into the right one.
            landed += settled(lambda: any(
                row.split("▕")[0].split() == ["acceptance", "rate", value] for row in screen().splitlines()
            ))
        assert landed == 10
        # The same in the `/` search box, which re-ranks the guide on every keystroke.
        tmux("send-keys", "-t", session, "Escape")
        time.sleep(0.8)
        tmux("send-keys", "-t", session, "/")
        wait_for("Search the guide")
        tmux("send-keys", "-t", session, "-l", "flash")
        time.sleep(0.5)
        landed = 0
        for attempt in range(10):
            word = ("stream-k", "kv-cache")[attempt % 2]
            tmux("send-keys", "-t", session, "End")
            tmux("send-keys", "-t", session, *["BSpace"] * 8)
            tmux("send-keys", "-t", session, "-l", word)
            landed += settled(lambda: any(re.search(rf"▊\s+{word}\s+▎", row) for row in screen().splitlines()))
        assert landed == 10
    finally:
        tmux("kill-session", "-t", session)


async def test_a_burst_after_backspaces_lands_in_order_in_the_note_editor(make_app):
    from studytui.tui.widgets.note_panel import NoteEditor

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("e")
        await settle(pilot)
        editor = app.screen.query_one(NoteEditor)
        for attempt in range(10):
            editor.load_text("2 ms")
            editor.move_cursor((0, 4))
            await settle(pilot)
            post_burst(app, ["backspace"] * 4 + keys_for("3 us"))
            await settle(pilot)
            assert editor.text == "3 us", f"attempt {attempt}: {editor.text!r}"
