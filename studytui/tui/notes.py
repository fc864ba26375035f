"""The note being edited, kept apart from the widget so it can always be flushed.

The editor widget copies its text here on every change; the app flushes it on a debounce timer,
on blur, on switching entries, on quit and once more after the event loop has ended (even when it
ended with an exception). No Textual here.
"""

from __future__ import annotations

from typing import Protocol


class NoteStore(Protocol):
    """What a draft needs from the store."""

    def set_note(self, entry_id: str, text: str) -> object: ...


class NoteDraft:
    """Unsaved text for one entry's note."""

    def __init__(self) -> None:
        self.entry_id: str | None = None
        self.text: str = ""
        self.dirty: bool = False

    def start(self, entry_id: str, text: str) -> None:
        """Begin editing `entry_id`, whose saved note is `text`. Call flush() first."""
        self.entry_id = entry_id
        self.text = text
        self.dirty = False

    def update(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self.dirty = True

    def flush(self, store: NoteStore) -> bool:
        """Write the text if it changed since the last save. True when something was written."""
        if not self.dirty or self.entry_id is None:
            return False
        store.set_note(self.entry_id, self.text)
        self.dirty = False
        return True
