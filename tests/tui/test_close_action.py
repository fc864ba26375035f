"""Every screen closes with Esc through one action name, `close` (remappable by its binding id)."""

from __future__ import annotations

import importlib
import pkgutil

from textual.binding import Binding
from textual.screen import Screen

import studytui.tui as tui_package


def _screen_classes() -> list[type[Screen]]:
    found: list[type[Screen]] = []
    for module in pkgutil.walk_packages(tui_package.__path__, "studytui.tui."):
        loaded = importlib.import_module(module.name)
        for value in vars(loaded).values():
            if isinstance(value, type) and issubclass(value, Screen) and value.__module__ == loaded.__name__:
                found.append(value)
    return found


def test_every_screen_closes_with_the_same_action():
    from studytui.tui.screens.main import MainScreen

    classes = _screen_classes()
    assert len(classes) >= 10  # the walk found the screens
    offenders = []
    for cls in classes:
        if cls is MainScreen:
            continue  # Esc there goes back to the guide; the app itself quits with q
        for binding in cls.BINDINGS:
            if isinstance(binding, Binding) and "escape" in binding.key.split(","):
                if binding.action != "close" or not hasattr(cls, "action_close"):
                    offenders.append(f"{cls.__module__}.{cls.__name__}: escape -> {binding.action}")
    assert offenders == []
