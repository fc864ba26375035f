"""Where screens and command-palette commands are registered.

The study app builds its key bindings, help screen and command palette from a `Registry`, so a
new screen is one module and no edit to the app:

    # studytui/tui/calc/__init__.py (the calculators)
    from studytui.tui.registry import PaletteCommand, Registry, ScreenSpec

    def register(registry: Registry) -> None:
        registry.add_screen(ScreenSpec(id="calculators", title="Calculators", key="c",
                                       description="Roofline, KV cache and other cost models",
                                       factory=lambda host, **params: CalculatorScreen(**params)))
        registry.add_command(PaletteCommand(title="Calculator: roofline", help="...",
                                            run=lambda host: host.open_screen("calculators", calc="roofline")))

Every module listed in PLUGIN_MODULES is imported by `build_registry`; one that is missing raises
(ImportError: it ships with the package, so that is a packaging error, never hidden), the same
rule as the CLI's command modules.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from textual.screen import Screen

    from studytui.tui.host import StudyHost

# The plug-in screen modules; each exposes `register(registry)`. `build_registry` imports every
# one: a missing module raises rather than leaving its key unbound.
PLUGIN_MODULES = ("studytui.tui.calc", "studytui.tui.practice", "studytui.tui.plan", "studytui.tui.profile")


@dataclass(frozen=True)
class ScreenSpec:
    """A screen the app can open by key, from the palette, or from code (`app.open_screen(id)`)."""

    id: str  # stable: the binding id users remap in keys.yaml, and the palette id
    title: str  # shown in the palette, the help screen and the footer
    factory: Callable[..., Screen[Any]]  # factory(host, **params) -> a new screen (host: a StudyHost)
    key: str | None = None  # default key; None: palette only
    description: str = ""
    footer: bool = False  # show the key in the footer


@dataclass(frozen=True)
class PaletteCommand:
    """One extra command-palette entry."""

    title: str
    help: str
    run: Callable[[StudyHost], Any]


@dataclass
class Registry:
    """Screens by id (in registration order) and extra palette commands."""

    screens: dict[str, ScreenSpec] = field(default_factory=dict)
    commands: list[PaletteCommand] = field(default_factory=list)
    # Called with the app once the main screen's first frame is on the terminal (lazy loading).
    ready_hooks: list[Callable[[StudyHost], Any]] = field(default_factory=list)

    def add_screen(self, spec: ScreenSpec) -> None:
        if spec.id in self.screens:
            raise ValueError(f"screen id already registered: {spec.id}")
        self.screens[spec.id] = spec

    def add_command(self, command: PaletteCommand) -> None:
        self.commands.append(command)


def _builtin_screens(registry: Registry) -> None:
    # Imported lazily: building the registry must not import every screen before first paint.
    def glossary(app: StudyHost, **params: Any) -> Screen[Any]:
        from studytui.tui.screens.glossary import GlossaryScreen

        return GlossaryScreen(app.guide, **params)

    def policy(app: StudyHost, **params: Any) -> Screen[Any]:
        from studytui.tui.screens.policy import PolicyScreen

        return PolicyScreen(app.guide)

    registry.add_screen(
        ScreenSpec(
            id="glossary",
            title="Glossary",
            key="g",
            description="Terms used across the guide",
            factory=glossary,
        )
    )
    registry.add_screen(
        ScreenSpec(
            id="policy",
            title="Source policy",
            key="i",
            description="What counts as a source; what a claim must state",
            factory=policy,
        )
    )


def build_registry(plugin_modules: tuple[str, ...] = PLUGIN_MODULES) -> Registry:
    registry = Registry()
    _builtin_screens(registry)
    for name in plugin_modules:
        # Every screen module ships with the package: a missing one is a packaging error.
        importlib.import_module(name).register(registry)
    return registry
