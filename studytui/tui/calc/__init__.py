"""Calculators in the study app: `c` opens them, the command palette lists each one.

`register(registry)` is what the app's screen registry calls. It imports nothing heavy: the
screens, the calculators (studytui.calc.registry lists them) and textual-plotext load when a
calculator is first opened, and a calculator's title, which the palette shows, is read from its
module the first time the palette lists it, so the app's first paint does not pay for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studytui.tui.registry import PaletteCommand

if TYPE_CHECKING:
    from textual.screen import Screen

    from studytui.tui.host import StudyHost
    from studytui.tui.registry import Registry

SCREEN_ID = "calculators"


def open_calculators(app: Any, **params: Any) -> Screen[Any]:
    """Screen factory: params may name `calc` (with `args`, `label`) or ask for the `hub`."""
    from studytui.tui.calc.screens import launch_for

    return launch_for(app, **params)


class CalculatorCommand(PaletteCommand):
    """"Calculator: <title>" in the palette. The title is the calculator's own (its spec), read
    when the palette first lists it: registering imports no calculator."""

    name: str

    def __init__(self, name: str) -> None:
        # PaletteCommand is read-only (registry._Record): its fields are set through object.
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "_run", _opener(name))

    @property
    def title(self) -> str:
        return f"Calculator: {self._calc_title()}"

    @property
    def help(self) -> str:
        return f"Open the {self._calc_title()} calculator"

    def _calc_title(self) -> str:
        from studytui.calc.registry import spec

        return spec(self.name).title


def _opener(name: str) -> Any:
    def run(app: StudyHost) -> None:
        app.open_screen(SCREEN_ID, calc=name)

    return run


def register(registry: Registry) -> None:
    from studytui.calc.registry import names
    from studytui.tui.registry import ScreenSpec

    registry.add_screen(
        ScreenSpec(
            id=SCREEN_ID,
            title="Calculators",
            key="c",
            description="On an entry with a try-it link: that calculator, prefilled; elsewhere: all calculators",
            factory=open_calculators,
            footer=True,
        )
    )
    registry.add_command(
        PaletteCommand(
            title="Calculators: all",
            help="The list of calculators (roofline, GEMM, transformer, collective, ...)",
            run=lambda app: app.open_screen(SCREEN_ID, hub=True),
        )
    )
    for name in names():
        registry.add_command(CalculatorCommand(name))
