"""One typed way for screens and widgets to reach the study app.

Calculator screens, the GPU picker and other optional screens depend only on `StudyHost`, a
small Protocol, so they also run inside a bare Textual app (tests, a future standalone
calculator) and need no `getattr` probing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from studytui.guide.model import Entry
    from studytui.store import Store


@runtime_checkable
class StudyHost(Protocol):
    """What an optional screen may ask of the app around it."""

    cursor_blink: bool

    @property
    def store(self) -> "Store": ...

    def append_note(self, entry_id: str, text: str) -> bool:
        """Append to an entry's note through the session (typing saved first); False if refused."""
        ...

    def current_entry(self) -> "Entry | None":
        """The entry selected on the main screen, if any."""
        ...


def host_of(app: Any) -> StudyHost | None:
    """The study app when `app` is one, else None (a bare app: no store, no notes)."""
    return app if isinstance(app, StudyHost) else None


def cursor_blink_of(app: Any) -> bool:
    host = host_of(app)
    return host.cursor_blink if host is not None else True


def store_of(app: Any) -> "Store | None":
    host = host_of(app)
    return host.store if host is not None else None


def data_dir_of(app: Any) -> Path | None:
    """The data directory the app's store lives in (user GPUs and profiles are found there)."""
    store = store_of(app)
    return Path(store.path).parent if store is not None else None
