"""Study keys typed while a dialog or another screen is up are refused visibly, never lost silently.

Keys arrive in bursts: `h d` read at once opens the history and then finds `d` (mark done) on a
screen that has no such key. Applying it to the entry underneath would act on something the
learner cannot see; dropping it without a word leaves them believing it was done. So a key the
main screen would act on, typed where nothing answers it, gets a one-line notice instead.
"""

from __future__ import annotations

from typing import Any

from textual import events

from studytui.tui.compat import key_bindings, keys_bound_here
from studytui.tui.host import host_of
from studytui.tui.keyroute import KeyRouting


class RefusesStudyKeys:
    """Mixin for screens pushed over the main screen that do not take the study keys."""

    def on_key(self, event: events.Key) -> None:
        screen: Any = self  # a Screen: the mixin comes before it in the screen's bases
        app = screen.app
        host = host_of(app)
        main = host.main_screen if host is not None else None
        if main is None or main is screen or not screen.is_current:
            return
        if event.key in keys_bound_here(screen):
            return  # something on this screen (or the app) answers it
        bindings = key_bindings(main).get(event.key)
        if not bindings:
            return
        what = bindings[0].description or bindings[0].action
        shown = event.character if event.character and event.character.isprintable() else event.key
        screen.notify(f"{shown} ({what}) not applied: this screen is open; Esc goes back first.", severity="warning", timeout=3)
        event.stop()
        if isinstance(app, KeyRouting):
            app.key_settled(event)
