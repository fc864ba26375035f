"""Keys that arrive together act on the screen the keys before them left (issue 23).

A terminal read (tmux, SSH, a busy machine, the browser through `serve`) often holds several keys.
Textual hands each key to whatever has focus *when the App takes it from its queue*, and the App
takes a whole read before any widget has acted on the first key. So in `/volkov` the letters went
to the guide tree, not to the search box the `/` was about to open; after Enter in the search box,
`nd` were typed into the closing box; and a key forwarded to a screen before it had mounted (and
focused its field) reached no field at all.

The rule here: a key belongs to the screen that is current when it is acted on. When a key comes
back to the App from a widget whose screen is no longer current (a dialog opened or closed
meanwhile), or from a screen that has since focused a field, it is not acted on there: it is sent
again, in order, to what has focus now. Text fields (studytui.tui.widgets.inputs) do the same for
the keys they would otherwise consume. Keys that arrive while re-sent keys are still queued wait
behind them, so the order typed is the order applied. A key re-sent too many times (screens
changing faster than it can land) is refused with a notice, never applied elsewhere.
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual import events
from textual.screen import Screen

TARGET = "_studytui_target"  # what had focus when the App forwarded the key
HOPS = "_studytui_hops"  # how often the key was re-sent
SERIAL = "_studytui_serial"  # arrival order
MAX_HOPS = 6
SETTLE_WAIT = 0.5  # seconds a field waits, at most, for the keys before it
MAX_UNSETTLED = 256


def focus_now(widget: Any) -> None:
    """Give `widget` focus at once. (`Widget.focus` defers to the App's queue, behind keys that
    are already waiting: those would still be judged by the old focus.)"""
    try:
        widget.screen.set_focus(widget)
    except Exception:  # NoScreen: not on a screen (any more)
        pass


def screen_of(node: Any) -> Screen[Any] | None:
    if isinstance(node, Screen):
        return node
    try:
        return node.screen
    except Exception:  # NoScreen: removed from the DOM since
        return None


class KeyRouting:
    """Mixin for the App (before `App` in the bases)."""

    _keys_resent = 0
    _key_serial = 0
    _keys_unsettled: dict[int, asyncio.Event] | None = None

    async def on_event(self, event: events.Event) -> None:
        app: Any = self
        if isinstance(event, events.Key) and not event.is_forwarded:
            if getattr(event, HOPS, 0):
                self._keys_resent = max(0, self._keys_resent - 1)
            elif self._keys_resent:
                # Re-sent keys are still queued: this newer one goes behind them.
                self.resend_key(event)
                return
            setattr(event, TARGET, app.focused or app.screen)
            self._track(event)
            await super().on_event(event)  # type: ignore[misc]
            if not event.is_forwarded:
                self.key_settled(event)  # a priority binding took it here
            return
        await super().on_event(event)  # type: ignore[misc]

    # --- keys in flight -----------------------------------------------------------------------
    # A text field acts on a key as soon as it is in the field's queue; a key before it may still
    # be on its way up to the App (Tab, `/`, Enter) and move focus or change the screen. A field
    # therefore waits until every earlier key has settled: come back to the App and run its
    # binding there, or been taken by a field (or a screen) on the way.
    def _track(self, event: events.Key) -> int:
        if self._keys_unsettled is None:
            self._keys_unsettled = {}
        if len(self._keys_unsettled) > MAX_UNSETTLED:  # taken silently by some widget: forget the oldest
            for number in sorted(self._keys_unsettled)[: len(self._keys_unsettled) - MAX_UNSETTLED]:
                self._keys_unsettled.pop(number).set()
        self._key_serial += 1
        setattr(event, SERIAL, self._key_serial)
        done = asyncio.Event()
        done.since = asyncio.get_running_loop().time()  # type: ignore[attr-defined]
        self._keys_unsettled[self._key_serial] = done
        return self._key_serial

    def key_settled(self, event: events.Key) -> None:
        """`event` has been acted on (or taken): later keys need not wait for it."""
        serial = getattr(event, SERIAL, None)
        if serial is not None and self._keys_unsettled:
            done = self._keys_unsettled.pop(serial, None)
            if done is not None:
                done.set()

    async def earlier_keys_settled(self, event: events.Key) -> None:
        """Wait (briefly, at most SETTLE_WAIT seconds in all) until every key that arrived before
        `event` has settled. A key that vanished on the way (taken by a widget that says
        nothing) only costs that wait."""
        serial = getattr(event, SERIAL, None)
        if serial is None or not self._keys_unsettled:
            return
        # A key that has not settled within SETTLE_WAIT was taken by a widget that says nothing
        # (the command palette's own field): forget it, so it never delays what is typed later.
        now = asyncio.get_running_loop().time()
        for number, done in list(self._keys_unsettled.items()):
            if now - getattr(done, "since", now) > SETTLE_WAIT:
                self._keys_unsettled.pop(number).set()
        earlier = [done for number, done in self._keys_unsettled.items() if number < serial]
        if not earlier:
            return
        try:
            await asyncio.wait_for(asyncio.gather(*(done.wait() for done in earlier)), SETTLE_WAIT)
        except asyncio.TimeoutError:
            for number in [n for n in self._keys_unsettled if n < serial]:
                self._keys_unsettled.pop(number).set()

    def key_is_stale(self, event: events.Key) -> bool:
        """True when `event` came back from a screen that is no longer where keys go."""
        app: Any = self
        target = getattr(event, TARGET, None)
        if target is None:
            return False
        current: Screen[Any] = app.screen
        if screen_of(target) is not current:
            return True
        if target is current:
            # Forwarded to the screen itself before it had focused anything (still mounting).
            return current.focused is not None
        # Focus moved on (Tab, `e` opening the note editor) after the key was forwarded.
        return current.focused is not None and current.focused is not target

    def resend_key(self, event: events.Key) -> None:
        """Send `event` again, behind the keys already re-sent."""
        app: Any = self
        hops = getattr(event, HOPS, 0) + 1
        if hops > MAX_HOPS:
            self.key_settled(event)
            shown = event.character if event.character and event.character.isprintable() else event.key
            app.notify(f"{shown} not applied: the screen changed before it could be.", severity="warning", timeout=4)
            return
        self.key_settled(event)  # its copy is tracked afresh
        again = events.Key(event.key, event.character)
        setattr(again, HOPS, hops)
        self._keys_resent += 1
        app.post_message(again)

    # The widget the last Tab / shift+Tab focused: a form field focused that way selects its
    # text, so typing replaces it (as in every form); a click only places the cursor.
    keyboard_focused: Any = None

    def action_focus_next(self) -> None:
        super().action_focus_next()  # type: ignore[misc]
        self.keyboard_focused = self.focused  # type: ignore[attr-defined]

    def action_focus_previous(self) -> None:
        super().action_focus_previous()  # type: ignore[misc]
        self.keyboard_focused = self.focused  # type: ignore[attr-defined]

    def focused_by_keyboard(self, widget: object) -> bool:
        """True (once) when the last Tab / shift+Tab focused `widget`: a form field then selects its text."""
        if self.keyboard_focused is None or self.keyboard_focused is not widget:
            return False
        self.keyboard_focused = None
        return True

    async def on_key(self, event: events.Key) -> None:
        # Reached when a key has come back up to the App, before its bindings are looked up.
        if self.key_is_stale(event):
            event.stop()
            event.prevent_default()  # not App's own handler: no binding runs on the wrong screen
            self.resend_key(event)
            return
        # Settled once App's own handler has run the key's binding (call_next: right after it).
        self.call_next(self.key_settled, event)  # type: ignore[attr-defined]

