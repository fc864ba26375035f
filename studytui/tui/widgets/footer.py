"""The key footer, rebuilt only when the keys it shows change."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import Footer

if TYPE_CHECKING:
    from textual.screen import Screen


def shown_bindings(screen: "Screen[Any]") -> tuple[Any, ...]:
    """What a footer on `screen` would show: each active binding with its enabled state and tooltip."""
    return tuple((binding, enabled, tooltip) for (_node, binding, enabled, tooltip) in screen.active_bindings.values())


class StudyFooter(Footer):
    """Textual's footer recomposes on every bindings signal: each focus change, each screen
    resume, each dynamic action refresh, tearing down and mounting a dozen keys even when they
    are the same keys. This one passes the signal on only when what it shows has changed."""

    _shown: tuple[Any, ...] | None = None

    def bindings_changed(self, screen: "Screen[Any]") -> None:
        shown = shown_bindings(screen)
        if shown == self._shown:
            return
        # Textual skips the rebuild while the app has no focus or the footer is elsewhere;
        # remember the keys only when it really rebuilds, so a later signal is not lost.
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self._shown = shown
        super().bindings_changed(screen)
