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
from textual.widgets import Input

from studytui.tui.compat import key_bindings


class InOrderBindings:
    """Mixin for a text widget: its own key bindings run in its own queue, in order with the
    text typed and pasted around them (see the module docstring)."""

    async def on_key(self, event: events.Key) -> None:
        for binding in key_bindings(self).get(event.key, ()):  # type: ignore[arg-type]
            if binding.priority:
                continue  # the App has already offered this key to priority bindings
            if await self.app.run_action(binding.action, self):  # type: ignore[attr-defined]
                event.stop()
                event.prevent_default()
                return
        # Not one of ours: the widget's own handler (typed text) runs next, as Textual dispatches it.


class OrderedInput(InOrderBindings, Input):
    """`Input` that runs its own key bindings in order with typed and pasted text."""
