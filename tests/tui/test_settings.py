"""Themes, NO_COLOR, key remapping (keys.yaml) and how the app is launched."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from studytui.core.errors import UsageError
from studytui.tui.app import STUDY_THEMES
from studytui.tui.compat import line_filters, notifications
from studytui.tui.keymap import load_keymap, parse_keymap
from studytui.tui.launch import binding_ids, launch
from studytui.tui.registry import build_registry
from studytui.tui.screens.main import MainScreen

from .support import wait_for_palette


def current_id(app):
    screen = app.screen
    assert isinstance(screen, MainScreen)
    return screen.current_entry.id if screen.current_entry else None


async def test_t_cycles_dark_light_ansi_and_is_remembered(make_app, store):
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.theme == "textual-dark"
        seen = []
        for _ in STUDY_THEMES:
            await pilot.press("t")
            await pilot.pause()
            seen.append(app.theme)
        assert seen == ["textual-light", "ansi-dark", "studytui-high-contrast", "textual-dark"]
        await pilot.press("t", "t")  # leave it on the ANSI theme
        await pilot.pause()
    assert store.get_ui("theme") == "ansi-dark"
    app2 = make_app()
    async with app2.run_test() as pilot:
        await pilot.pause()
        assert app2.theme == "ansi-dark"
        assert app2.current_theme.ansi  # drawn with the terminal's own palette


async def test_palette_theme_command_is_remembered(make_app, store):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+p", *"Theme: light")
        assert await wait_for_palette(pilot, app, "Theme: light")
        await pilot.press("enter")
        await pilot.pause()
        assert app.theme == "textual-light"
    assert store.get_ui("theme") == "textual-light"


async def test_theme_toast_and_palette_use_the_readmes_names(make_app):
    """`t` says "Theme: light", not "Theme: textual-light" (issue 23); so does the palette."""
    from studytui.tui.commands import StudyCommands

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        shown = []
        for _ in STUDY_THEMES:
            await pilot.press("t")
            await pilot.pause()
            shown.append(str(notifications(app)[-1].message))
        assert shown == ["Theme: light", "Theme: ANSI", "Theme: high contrast", "Theme: dark"]
        provider = StudyCommands(app.screen)
        titles = [hit.text async for hit in provider.discover()]
        themes = [t for t in titles if t.startswith("Theme")]
        assert themes == ["Theme: dark", "Theme: light", "Theme: ANSI", "Theme: high contrast"]  # not Textual's picker


async def test_unknown_saved_theme_falls_back(make_app, store):
    store.set_ui("theme", "no-such-theme")
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.theme == "textual-dark"


async def test_no_color_is_honoured(make_app, store, monkeypatch):
    store.set_ui("theme", "textual-light")  # a saved colour theme does not override NO_COLOR
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.no_color
        assert [type(f).__name__ for f in line_filters(app) if type(f).__name__ in ("Monochrome", "NoColor")] == ["NoColor"]
        assert app.theme == "ansi-dark"
        await pilot.press("t")
        await pilot.pause()
        assert app.theme == "ansi-dark"
    assert store.get_ui("theme") == "textual-light"


async def test_keymap_remaps_by_binding_id(make_app):
    app = make_app(keymap={"next": "j", "previous": "k"})
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.press("j", "j")
        await pilot.pause()
        assert current_id(app) == "inference-arithmetic"
        await pilot.press("k")
        await pilot.pause()
        assert current_id(app) == "cuda-basics"
        await pilot.press("question_mark")
        await pilot.pause()
        help_text = str(app.screen.query_one("#help-table").content)
        assert any(line.split()[0] == "j" and line.split()[-1] == "next" for line in help_text.splitlines() if line.strip())


async def test_registered_screen_keys_can_be_remapped(make_app):
    app = make_app(keymap={"glossary": "G"})
    async with app.run_test() as pilot:
        await pilot.press("G")
        await pilot.pause()
        from studytui.tui.screens.glossary import GlossaryScreen

        assert isinstance(app.screen, GlossaryScreen)


def test_keys_yaml_is_validated(tmp_path: Path):
    ids = binding_ids(build_registry())
    assert {"next", "previous", "next-pending", "mark-done", "open-source", "copy-url", "search", "glossary",
            "policy", "help", "quit", "theme", "edit-note", "edit-note-external"} <= set(ids)
    assert load_keymap(tmp_path, ids) == {}
    (tmp_path / "keys.yaml").write_text("next: j\nsearch: [slash, f]\n")
    assert load_keymap(tmp_path, ids) == {"next": "j", "search": "slash,f"}
    (tmp_path / "keys.yaml").write_text("nxt: j\n")
    with pytest.raises(UsageError, match="unknown binding id 'nxt'"):
        load_keymap(tmp_path, ids)
    warnings: list[str] = []
    (tmp_path / "keys.yaml").write_text("nxt: j\nprevious: k\n")
    assert load_keymap(tmp_path, ids, warnings) == {"previous": "k"}  # the rest still applies
    assert len(warnings) == 1 and "unknown binding id 'nxt'" in warnings[0] and "did you mean 'next'" in warnings[0]
    (tmp_path / "keys.yaml").write_text("next: [j\n")
    with pytest.raises(UsageError, match=r"keys.yaml:\d+: not valid YAML"):
        load_keymap(tmp_path, ids)
    with pytest.raises(UsageError, match="must be a key name"):
        parse_keymap({"next": 3}, ids, "keys.yaml")
    with pytest.raises(UsageError, match="expected a mapping"):
        parse_keymap(["next"], ids, "keys.yaml")


def test_launch_without_a_terminal_is_one_line(capsys):
    code = launch(argparse.Namespace(data_dir=None, content=None))
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs an interactive terminal" in err


def test_registry_does_not_hide_a_missing_plugin_and_rejects_duplicates():
    # Every screen module ships with the package: a missing one is a packaging error, not skipped.
    with pytest.raises(ModuleNotFoundError):
        build_registry(plugin_modules=("studytui.tui.screens.not_there",))
    registry = build_registry(plugin_modules=())
    assert set(registry.screens) == {"glossary", "policy"}
    with pytest.raises(ValueError):
        registry.add_screen(registry.screens["glossary"])


def test_synthetic_guide_switch_is_validated(monkeypatch):
    from studytui.tui.launch import SYNTHETIC_ENV, _guide

    monkeypatch.setenv(SYNTHETIC_ENV, "800")
    guide = _guide(argparse.Namespace(content=None))
    assert len(guide.entries) == 800
    monkeypatch.setenv(SYNTHETIC_ENV, "lots")
    with pytest.raises(UsageError, match="must be a number"):
        _guide(argparse.Namespace(content=None))


def test_an_unknown_id_warns_and_a_stolen_key_is_reported_not_applied(tmp_path: Path):
    from studytui.tui.keymap import conflicts
    from studytui.tui.launch import binding_keys, checked_keymap

    registry = build_registry()
    (tmp_path / "keys.yaml").write_text("nxt: j\nnext: d\nprevious: k\nhelp: /\n")
    keymap, warnings = checked_keymap(tmp_path, registry)
    assert keymap == {"previous": "k"}  # next keeps n, mark-done keeps d, search keeps /
    assert any("'nxt'" in w for w in warnings)
    assert any("'next: d'" in w and "'mark-done'" in w for w in warnings)
    assert any("'help: /'" in w and "'search'" in w for w in warnings)
    # Swapping two keys is fine: each action gives its key up.
    kept, clashes = conflicts({"next": "d", "mark-done": "n"}, binding_keys(registry))
    assert kept == {"next": "d", "mark-done": "n"} and clashes == []
