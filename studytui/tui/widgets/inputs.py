"""A text field whose keystrokes always land in the order they were typed.

Why: in Textual an `Input` inserts printable characters in its own message queue, but its
editing keys (backspace, delete, arrows, home/end) are bindings, and a focused widget's
non-priority bindings are only looked up once the key event has bubbled through the message
queue of every ancestor up to the App. When an ancestor is busy - a calculator screen
recomputing on `Input.Changed`, the search screen ranking the guide - a burst such as
`End BSpace×6 0.77` reaches the field as `0.77` typed *before* the six backspaces have run, and
the field ends up `0.` (the learner's `2 ms` became `2`). A bracketed paste after backspaces
overtakes them the same way.

The fix is to resolve the field's own bindings where its characters are handled: in its own
queue, in arrival order. Priority bindings were already tried by the App before the key was
forwarded here, and the focused widget's bindings come first in Textual's lookup anyway, so
which action a key runs does not change - only when it runs.
"""

from __future__ import annotations

from textual import events
from textual.reactive import reactive
from textual.widgets import Input
from textual.widgets.input import Selection

from studytui.tui.compat import key_bindings, key_was_stopped
from studytui.tui.keyroute import KeyRouting


class InOrderBindings:
    """Mixin for a text widget: its own key bindings run in its own queue, in order with the
    text typed and pasted around them (see the module docstring)."""

    async def on_key(self, event: events.Key) -> None:
        app = self.app  # type: ignore[attr-defined]
        routing = app if isinstance(app, KeyRouting) else None  # the study app (studytui.tui.keyroute)
        if routing is not None:
            # A key before this one may still be moving focus (Tab) or changing the screen (`/`,
            # Enter): wait for it, then judge where this key belongs.
            await routing.earlier_keys_settled(event)
            self.call_next(self._taken, event)  # type: ignore[attr-defined]
        screen = self.screen  # type: ignore[attr-defined]
        if routing is not None and (not screen.is_current or screen.focused is not self):
            # Sent here before another screen opened, this one closed or focus moved on: it
            # belongs to what has focus now (studytui.tui.keyroute), not to this field.
            event.stop()
            event.prevent_default()
            routing.resend_key(event)
            return
        for binding in key_bindings(self).get(event.key, ()):  # type: ignore[arg-type]
            if binding.priority:
                continue  # the App has already offered this key to priority bindings
            if await self.app.run_action(binding.action, self):  # type: ignore[attr-defined]
                event.stop()
                event.prevent_default()
                return
        # Not one of ours: the widget's own handler (typed text) runs next, as Textual dispatches it.

    def _taken(self, event: events.Key) -> None:
        # Right after the key was handled here: typed text stops it (it never reaches the App),
        # so it has settled; a key that goes on up settles when the App has run its binding.
        app = self.app  # type: ignore[attr-defined]
        if key_was_stopped(event) and isinstance(app, KeyRouting):
            app.key_settled(event)


class OrderedInput(InOrderBindings, Input):
    """`Input` that runs its own key bindings in order with typed and pasted text."""


class FieldInput(OrderedInput):
    """A form field: reached with Tab (or shift+Tab) its text is selected, so what is typed
    replaces it; focused by a click or by the app, the cursor just goes where it was put.

    Compact (one line, no border) from its first moment: created with the class, and compact by
    default, Input's constructor does not take the class away and add it back (each change of
    class restyles the field, not even mounted yet: twice per field every time a calculator
    screen opens)."""

    compact = reactive(True, toggle_class="-textual-compact")

    def on_focus(self, event: events.Focus) -> None:
        app = self.app
        if not event.from_app_focus and isinstance(app, KeyRouting) and app.focused_by_keyboard(self):
            # All of it selected, the cursor at its start: a value as wide as the field (a tile
            # at 80 columns) stays in view from its first character, not scrolled by one.
            self.selection = Selection(len(self.value), 0)
