"""The screen/command registry: how later screens (calculators) plug in without editing the app."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from studytui.tui.app import StudyApp
from studytui.tui.commands import StudyCommands
from studytui.tui.registry import PaletteCommand, Registry, ScreenSpec, build_registry
from studytui.tui.screens.main import MainScreen

from .support import wait_for_palette


class DemoScreen(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, preset: str = "none") -> None:
        super().__init__()
        self.preset = preset

    def compose(self) -> ComposeResult:
        yield Static(f"demo screen, preset {self.preset}")


def demo_registry() -> Registry:
    registry = build_registry(plugin_modules=())
    registry.add_screen(
        ScreenSpec(id="demo", title="Demo", key="z", description="A registered screen",
                   factory=lambda app, **params: DemoScreen(**params))
    )
    registry.add_command(
        PaletteCommand(title="Demo: preset roofline", help="Open the demo with a preset",
                       run=lambda app: app.open_screen("demo", preset="roofline"))
    )
    return registry


async def test_a_registered_screen_gets_its_key_help_row_and_palette_entry(make_app):
    app = make_app(registry=demo_registry())
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("z")
        await pilot.pause()
        assert isinstance(app.screen, DemoScreen) and app.screen.preset == "none"
        await pilot.press("escape")
        await pilot.pause()
        assert ("z", "Demo", "demo") in app.key_rows()
        provider = StudyCommands(app.screen)
        titles = [hit.text async for hit in provider.discover()]
        assert "Demo" in titles and "Demo: preset roofline" in titles
        await pilot.press("ctrl+p", *"Demo: preset roofline")
        assert await wait_for_palette(pilot, app, "preset roofline")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DemoScreen) and app.screen.preset == "roofline"


async def test_registered_keys_do_not_leak_between_apps(make_app, store):
    app = make_app(registry=demo_registry())
    async with app.run_test() as pilot:
        await pilot.pause()
    plain = make_app(registry=build_registry(plugin_modules=()))
    async with plain.run_test() as pilot:
        await pilot.press("z")
        await pilot.pause()
        assert isinstance(plain.screen, MainScreen)


def test_registered_keys_do_not_clash_with_built_in_keys():
    built_in = {b.key for b in [*MainScreen.BINDINGS, *StudyApp.BINDINGS] if isinstance(b, Binding)}
    built_in |= {"question_mark", "slash", "ctrl+p", "ctrl+q", "tab", "up", "down", "enter", "escape"}
    registry = build_registry()  # includes any plugin screen that exists (calculators)
    keys = [spec.key for spec in registry.screens.values() if spec.key]
    assert len(keys) == len(set(keys))
    assert not set(keys) & built_in, set(keys) & built_in


async def test_the_app_starts_with_the_full_registry(make_app):
    registry = build_registry()  # with whatever optional screens exist
    app = make_app(registry=registry)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        ids = {binding_id for _, _, binding_id in app.key_rows()}
        assert set(registry.screens) <= ids


def test_registry_records_are_read_only_values():
    """ScreenSpec and PaletteCommand behave as the frozen dataclasses they replaced (cheaper to
    define before the first frame): set once, equal and hashed by value, repr by field."""
    import pytest

    def factory(app, **params):
        return DemoScreen()

    spec = ScreenSpec(id="demo", title="Demo", factory=factory, key="z")
    assert (spec.key, spec.description, spec.footer) == ("z", "", False)
    assert spec == ScreenSpec("demo", "Demo", factory, "z") and hash(spec) == hash(ScreenSpec("demo", "Demo", factory, "z"))
    assert spec != ScreenSpec("demo", "Demo", factory, "y")
    assert repr(spec).startswith("ScreenSpec(id='demo', title='Demo', factory=")
    with pytest.raises(AttributeError):
        spec.key = "x"  # type: ignore[misc]
    command = PaletteCommand(title="T", help="H", run=print)
    assert command == PaletteCommand("T", "H", print) and command != spec
    with pytest.raises(AttributeError):
        command.title = "U"  # type: ignore[misc]
    registry = Registry()
    registry.add_screen(spec)
    with pytest.raises(ValueError):
        registry.add_screen(spec)
    assert Registry().screens == {} and Registry().commands == [] and Registry().ready_hooks == []
