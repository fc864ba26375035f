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
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from textual.screen import Screen

    from studytui.tui.host import StudyHost

# The plug-in screen modules; each exposes `register(registry)`. `build_registry` imports every
# one: a missing module raises rather than leaving its key unbound.
PLUGIN_MODULES = ("studytui.tui.calc", "studytui.tui.practice", "studytui.tui.plan", "studytui.tui.profile")


class _Record:
    """A read-only record, as a frozen dataclass is (fields set once, compared and hashed by
    value), written out by hand: a dataclass generates and compiles its methods when its class is
    created, a millisecond each before the app's first frame."""

    __slots__: tuple[str, ...] = ()
    _fields: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only (cannot delete {name!r})")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{name}={getattr(self, name)!r}' for name in self._fields)})"


class ScreenSpec(_Record):
    """A screen the app can open by key, from the palette, or from code (`app.open_screen(id)`)."""

    __slots__ = _fields = ("id", "title", "factory", "key", "description", "footer")
    id: str  # stable: the binding id users remap in keys.yaml, and the palette id
    title: str  # shown in the palette, the help screen and the footer
    factory: Callable[..., Screen[Any]]  # factory(host, **params) -> a new screen (host: a StudyHost)
    key: str | None  # default key; None: palette only
    description: str
    footer: bool  # show the key in the footer

    def __init__(self, id: str, title: str, factory: Callable[..., Screen[Any]], key: str | None = None,
                 description: str = "", footer: bool = False) -> None:
        for name, value in zip(self._fields, (id, title, factory, key, description, footer)):
            object.__setattr__(self, name, value)


class PaletteCommand(_Record):
    """One extra command-palette entry. Read-only properties, so a subclass may compute its title
    and help when the palette lists them (studytui.tui.calc.CalculatorCommand)."""

    __slots__ = ("_title", "_help", "_run")
    _fields = ("title", "help", "run")
    _title: str
    _help: str
    _run: Callable[[StudyHost], Any]

    def __init__(self, title: str, help: str, run: Callable[[StudyHost], Any]) -> None:
        object.__setattr__(self, "_title", title)
        object.__setattr__(self, "_help", help)
        object.__setattr__(self, "_run", run)

    @property
    def title(self) -> str:
        return self._title

    @property
    def help(self) -> str:
        return self._help

    @property
    def run(self) -> Callable[[StudyHost], Any]:
        return self._run


class Registry:
    """Screens by id (in registration order) and extra palette commands."""

    def __init__(self, screens: dict[str, ScreenSpec] | None = None, commands: list[PaletteCommand] | None = None,
                 ready_hooks: list[Callable[[StudyHost], Any]] | None = None) -> None:
        self.screens: dict[str, ScreenSpec] = {} if screens is None else screens
        self.commands: list[PaletteCommand] = [] if commands is None else commands
        # Called with the app once the main screen's first frame is on the terminal (lazy loading).
        self.ready_hooks: list[Callable[[StudyHost], Any]] = [] if ready_hooks is None else ready_hooks

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
