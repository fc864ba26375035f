"""Messages built from paths, notes or content are shown as typed: no markup, no control
sequences (a data directory named with `[/]` used to crash the app on the first write error)."""

from __future__ import annotations

from studytui.core.errors import StoreError
from studytui.tui.compat import notifications

from .support import wait_until


class RefusingStore:
    def __init__(self, store, message):
        self._store = store
        self.message = message

    def __getattr__(self, name):
        return getattr(self._store, name)

    def set_state(self, entry_id, state):
        raise StoreError(self.message)


async def test_a_store_error_with_markup_and_escapes_in_the_path_is_shown_literally(make_app, store):
    message = "cannot write /data/[/]\x1b]0;pwned\x07[bold]x/progress.db (readonly)"
    app = make_app(store=RefusingStore(store, message))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("d")  # the first write: refused
        assert await wait_until(pilot, lambda: any("cannot write" in str(n.message) for n in notifications(app)))
        shown = [str(n.message) for n in notifications(app) if "cannot write" in str(n.message)][0]
        assert "[/]" in shown and "[bold]" in shown and "\x1b" not in shown and "\\x1b]0;pwned" in shown
        assert app.is_running  # no MarkupError
        refused = [n for n in notifications(app) if "cannot write" in str(n.message)][0]
        assert refused.markup is False  # shown as typed, never parsed as markup
