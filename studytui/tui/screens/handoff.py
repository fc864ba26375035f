"""The hand-off dialog: shown instead of starting a browser when none can be used here."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content, Span
from textual.screen import ModalScreen
from textual.style import Style
from textual.widgets import Button, Static


class HandoffDialog(ModalScreen[None]):
    """The URL as a terminal hyperlink and as plain text; it has already been copied (OSC 52)."""

    BINDINGS = [
        Binding("escape,enter", "close", "Close", id="handoff-close"),
        Binding("y", "copy", "Copy again", id="handoff-copy"),
    ]

    def __init__(self, url: str, title: str, reason: str) -> None:
        super().__init__()
        self.url = url
        self.title_text = title
        self.reason = reason

    def compose(self) -> ComposeResult:
        with Vertical(id="handoff-box"):
            yield Static("Open this source in your browser", classes="dialog-title")
            yield Static(Content(self.title_text), id="handoff-title")
            link = Content(self.url, [Span(0, len(self.url), Style(link=self.url, underline=True))])
            yield Static(link, id="handoff-link")
            yield Static(Content(f"Plain text: {self.url}"), id="handoff-plain")
            yield Static(
                Content(
                    f"No browser was started: {self.reason}. The URL was copied to your clipboard "
                    "(OSC 52); if your terminal does not support that, select the plain text above."
                ),
                id="handoff-reason",
            )
            with Horizontal(id="handoff-buttons"):
                yield Button("Copy again (y)", id="handoff-copy")
                yield Button("Close (Esc)", id="handoff-close", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#handoff-close", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "handoff-copy":
            self.action_copy()
        else:
            self.dismiss()

    def action_copy(self) -> None:
        from studytui.tui.app import StudyApp

        app = self.app
        if isinstance(app, StudyApp):
            app.copy_text(self.url)
        self.notify("Copied again.", timeout=2)

    def action_close(self) -> None:
        """Esc: the one close action every screen has."""
        self.dismiss(None)
