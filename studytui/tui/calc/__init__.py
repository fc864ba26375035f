"""Calculators in the study app: `c` opens them, the command palette lists each one.

`register(registry)` is what the app's screen registry calls. It imports nothing heavy: the
screens, the calc package and textual-plotext load when a calculator is first opened, so the
app's first paint does not pay for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studytui.calc.form_values import CALCULATOR_TITLES  # titles live in the form layer (cheap import)

if TYPE_CHECKING:
    from textual.screen import Screen

    from studytui.tui.registry import Registry

SCREEN_ID = "calculators"


def open_calculators(app: Any, **params: Any) -> Screen[Any]:
    """Screen factory: params may name `calc` (with `args`, `label`) or ask for the `hub`."""
    from studytui.tui.calc.screens import launch_for

    return launch_for(app, **params)


def _opener(name: str) -> Any:
    def run(app: Any) -> None:
        app.open_screen(SCREEN_ID, calc=name)

    return run


def register(registry: Registry) -> None:
    from studytui.tui.registry import PaletteCommand, ScreenSpec

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
    for name, title in CALCULATOR_TITLES:
        registry.add_command(
            PaletteCommand(title=f"Calculator: {title}", help=f"Open the {title} calculator", run=_opener(name))
        )
