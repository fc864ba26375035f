"""The key footer, rebuilt only when the keys it shows change."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import Footer

if TYPE_CHECKING:
    from textual.screen import Screen


# Keys that type a character Textual does not name (textual.keys.key_to_character gives None for
# them), so a focused text field does not hide their bindings the way it hides `n` or `?`.
UNNAMED_CHARACTERS = {"slash": "/", "plus": "+", "minus": "-", "at": "@", "backslash": "\\", "underscore": "_"}


def _action_name(action: str) -> str:
    return action.split("(", 1)[0].rpartition(".")[2]


def typed_by_focus(screen: "Screen[Any]", action: str) -> bool:
    """True when every key bound to `action` on `screen` types a character into the focused
    widget (the note editor, a text field): there the binding cannot act, so the footer should
    not offer it. The user's keys.yaml is honoured (a remapped key is the one that counts)."""
    from textual.keys import key_to_character

    from studytui.tui.compat import key_bindings
    from studytui.tui.host import host_of

    focused = screen.focused
    if focused is None:
        return False
    host = host_of(screen.app)
    keymap = host.user_keymap if host is not None else {}
    keys: list[str] = []
    for key, bindings in key_bindings(screen).items():
        for binding in bindings:
            if _action_name(binding.action) == action:
                remapped = keymap.get(binding.id or "")
                keys += [k.strip() for k in remapped.split(",")] if remapped else [key]
    if not keys:
        return False
    for key in keys:
        character = key_to_character(key) or UNNAMED_CHARACTERS.get(key)
        if character is None or not character.isprintable() or not focused.check_consume_key(key, character):
            return False
    return True


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
