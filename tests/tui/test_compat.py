"""studytui.tui.compat wraps every private Textual attribute studytui uses: one test each, so a
Textual upgrade that changes one fails here by name. Also: nothing else touches them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.app import App
from textual.binding import Binding
from textual.widgets import Tree

from studytui.tui import compat

ROOT = Path(__file__).resolve().parents[2]
PRIVATE = re.compile(r"\._(driver|filters|bindings|tree_lines|compositor|notifications|label)\b|def _on_[a-z]+\(")


def test_no_private_textual_attribute_outside_the_compat_module():
    offenders = []
    for folder in ("studytui", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name in ("compat.py", "test_compat.py"):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if PRIVATE.search(line) and "self._label" not in line:
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


class _Bare(App[None]):
    BINDINGS = [Binding("x", "bell", "Bell", id="bell")]

    def compose(self):
        tree: Tree[str] = Tree("root", id="tree")
        tree.root.add("a").add_leaf("b")
        yield tree


async def test_write_to_terminal_reaches_the_driver():
    app = _Bare()
    written: list[str] = []
    async with app.run_test() as pilot:
        await pilot.pause()
        driver = app._driver
        original = driver.write
        driver.write = written.append  # type: ignore[method-assign]
        try:
            assert compat.write_to_terminal(app, "\x1b]52;c;eA==\x07")
        finally:
            driver.write = original  # type: ignore[method-assign]
    assert written == ["\x1b]52;c;eA==\x07"]


def test_no_color_filter_replaces_monochrome(monkeypatch):
    from textual.filter import Monochrome, NoColor

    monkeypatch.setenv("NO_COLOR", "1")
    app = _Bare()
    assert any(isinstance(f, Monochrome) for f in compat.line_filters(app))
    compat.use_no_color_filter(app)
    kinds = [type(f) for f in compat.line_filters(app)]
    assert NoColor in kinds and Monochrome not in kinds


async def test_key_bindings_are_the_nodes_own_and_mutable():
    app = _Bare()
    async with app.run_test():
        keys = compat.key_bindings(app)
        assert [b.id for b in keys["x"]] == ["bell"]
        keys["y"] = [Binding("y", "bell", "Bell 2")]
        assert "y" in compat.key_bindings(app)


async def test_keys_bound_here_is_the_chain_a_key_is_looked_up_in():
    from textual.screen import ModalScreen

    class Dialog(ModalScreen[None]):
        BINDINGS = [Binding("z", "dismiss", "Close")]

    app = _Bare()
    async with app.run_test() as pilot:
        assert "x" in compat.keys_bound_here(app.screen)  # the app's own binding
        app.push_screen(Dialog())
        await pilot.pause()
        bound = compat.keys_bound_here(app.screen)
        assert "z" in bound and "x" not in bound  # a modal hides the app's own keys too


def test_key_was_stopped_follows_event_stop():
    from textual import events

    key = events.Key("a", "a")
    assert not compat.key_was_stopped(key)
    key.stop()
    assert compat.key_was_stopped(key)


async def test_lay_out_tree_gives_an_expanded_node_a_line():
    app = _Bare()
    async with app.run_test() as pilot:
        tree = app.query_one(Tree)
        tree.root.expand()
        node = tree.root.children[0]
        node.expand()
        compat.lay_out_tree(tree)
        tree.move_cursor(node.children[0])
        assert tree.cursor_node is node.children[0]
        await pilot.pause()


async def test_screen_lines_and_notifications_for_tests():
    app = _Bare()
    async with app.run_test(size=(40, 10)) as pilot:
        app.notify("hello there")
        await pilot.pause()
        assert len(compat.screen_lines(app)) == 10
        assert [n.message for n in compat.notifications(app)] == ["hello there"]


async def test_pilot_idle_slice_is_what_textual_waits_on(monkeypatch):
    import textual._wait as wait

    slept: list[float] = []

    async def record(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(wait, "sleep", record)
    before = (wait.SLEEP_GRANULARITY, wait.SLEEP_IDLE)
    try:
        compat.set_pilot_idle_slice(0.004)
        assert (wait.SLEEP_GRANULARITY, wait.SLEEP_IDLE) == (0.004, 0.004 / 20)
        await wait.wait_for_idle(0, max_sleep=0)  # what Pilot awaits after each key
        assert slept and set(slept) == {0.004}
    finally:
        wait.SLEEP_GRANULARITY, wait.SLEEP_IDLE = before


async def test_headless_frames_are_skipped_but_what_a_test_reads_is_rendered():
    # tests/tui/conftest.py calls skip_headless_frames(): a headless top screen no longer renders
    # each frame (nobody reads it), yet the screen text, a mouse click on a Tree and a second call
    # all work as in a terminal.
    from textual.screen import Screen

    compat.skip_headless_frames()
    patched = Screen._compositor_refresh
    compat.skip_headless_frames()  # idempotent: never wrapped twice
    assert Screen._compositor_refresh is patched and getattr(patched, "_studytui_skips_headless", False)
    app = _Bare()
    async with app.run_test(size=(40, 10)) as pilot:
        tree = app.query_one(Tree)
        tree.root.expand()
        await pilot.pause()
        text = "\n".join(strip.text for strip in compat.screen_lines(app))
        assert str(tree.root.label) in text
        await pilot.click(Tree, offset=(2, 1))  # reads the rendered line under the pointer
        await pilot.pause()
        assert tree.cursor_line == 1


class _Themed(App[None]):
    """Theme colours, an ANSI colour (through the truecolor filter) and the dark/light classes."""

    CSS = """
    Static { color: ansi_red; background: $panel; }
    App.-light-mode Static { text-style: bold; }
    """

    def compose(self):
        from textual.widgets import Static

        yield Static("themed")


@pytest.mark.parametrize("name", ["textual-light", "ansi-dark", "textual-dark"])
async def test_start_in_theme_leaves_the_app_as_setting_its_theme_does(name: str):
    """Before the app runs, start_in_theme(app, name) gives what `app.theme = name` gives once it
    runs (classes, CSS variables, the filters, so the same screen), with no re-parse scheduled."""
    from textual.css.stylesheet import Stylesheet

    early = _Themed()
    compat.start_in_theme(early, name)
    late = _Themed()
    reparsed: list[str] = []
    original = Stylesheet.reparse
    Stylesheet.reparse = lambda self: (reparsed.append("x"), original(self))[1]  # type: ignore[method-assign]
    try:
        async with early.run_test(size=(30, 4)) as pilot:
            await pilot.pause()
            early_reparses = len(reparsed)
            seen_early = (early.theme, set(early.classes), early.get_css_variables(), early.export_screenshot())
            early_filters = [(type(f).__name__, getattr(f, "_terminal_theme", None)) for f in early._filters]
    finally:
        Stylesheet.reparse = original  # type: ignore[method-assign]
    async with late.run_test(size=(30, 4)) as pilot:
        late.theme = name
        await pilot.pause()
        await pilot.pause()
        seen_late = (late.theme, set(late.classes), late.get_css_variables(), late.export_screenshot())
        late_filters = [(type(f).__name__, getattr(f, "_terminal_theme", None)) for f in late._filters]
    assert early_reparses == 0
    assert seen_early[:3] == seen_late[:3]
    assert early_filters == late_filters
    assert seen_early[3] == seen_late[3]
