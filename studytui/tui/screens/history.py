"""`h`: the saved versions of the selected entry's note, newest first, with a way back.

Every version comes from the event log (studytui.study.session.StudySession.note_history). Restoring
makes an old version the note again; the version it replaces stays in the list, so a restore can
itself be undone.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from studytui.store.model import NoteVersion
from studytui.tui.format import short_timestamp, visible_controls
from studytui.tui.screens.refuse import RefusesStudyKeys

PREVIEW_CHARS = 20_000  # of a version shown here; the whole text is restored


def version_label(version: NoteVersion) -> Content:
    first = next((line.strip() for line in version.text.splitlines() if line.strip()), "(empty)")
    when = short_timestamp(version.at) if version.at else "time unknown"
    tag = "  now" if version.current else ""
    return Content.styled(when, "bold") + Content(f"  {len(version.text):,} chars{tag}  ") + Content.styled(
        visible_controls(first[:60]), "dim"
    )


def version_preview(version: NoteVersion) -> Content:
    text = version.text
    shown = visible_controls(text[:PREVIEW_CHARS])
    if len(text) > PREVIEW_CHARS:
        shown += f"\n\n[... {len(text) - PREVIEW_CHARS:,} more characters, restored in full]"
    return Content(shown or "(empty note)")


class HistoryScreen(RefusesStudyKeys, ModalScreen[NoteVersion | None]):
    """Pick a version; Enter restores it, Esc closes."""

    BINDINGS = [
        Binding("escape", "close", "Close", id="history-close"),
        Binding("r", "restore", "Restore", id="history-restore"),
    ]

    def __init__(self, title: str, versions: list[NoteVersion]) -> None:
        super().__init__()
        self.entry_title = title
        self.versions = versions

    def compose(self) -> ComposeResult:
        with Vertical(id="history-box", classes="dialog"):
            yield Static(Content(f"Note history: {self.entry_title}"), classes="dialog-title")
            with Horizontal(id="history-body"):
                yield OptionList(
                    *[Option(version_label(v), id=str(i)) for i, v in enumerate(self.versions)], id="history-list"
                )
                with VerticalScroll(id="history-preview-scroll"):
                    yield Static(id="history-preview", markup=False)
            yield Static("Enter/r: restore (the current version stays listed)  ·  Esc: close", classes="dialog-hint")

    def on_mount(self) -> None:
        listing = self.query_one(OptionList)
        listing.focus()
        if self.versions:
            listing.highlighted = 0
            self._show(0)

    def _show(self, index: int) -> None:
        self.query_one("#history-preview", Static).update(version_preview(self.versions[index]))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id is not None:
            self._show(int(event.option.id))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_restore()

    def action_restore(self) -> None:
        index = self.query_one(OptionList).highlighted
        if index is None or not self.versions:
            return
        version = self.versions[index]
        if version.current:
            self.notify("That is the note as it is now.", timeout=3)
            return
        self.dismiss(version)

    def action_close(self) -> None:
        self.dismiss(None)
