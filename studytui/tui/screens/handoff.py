"""The hand-off dialog: shown instead of starting a browser when none can be used here."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, HorizontalScroll, Vertical
from textual.content import Content, Span
from textual.screen import ModalScreen
from textual.style import Style
from textual.widgets import Button, Static

from studytui.tui.host import host_of
from studytui.tui.screens.refuse import RefusesStudyKeys


class HandoffDialog(RefusesStudyKeys, ModalScreen[None]):
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

    DEFAULT_CSS = """
    HandoffDialog #handoff-link { text-wrap: nowrap; text-overflow: ellipsis; margin-top: 0; }
    HandoffDialog #handoff-plain-scroll { height: 2; scrollbar-size-horizontal: 1; background: $boost; }
    HandoffDialog #handoff-plain { width: auto; text-wrap: nowrap; margin-top: 0; }
    HandoffDialog .handoff-label { color: $text-muted; margin-top: 1; }
    HandoffDialog .dialog-title { margin-bottom: 0; }
    """

    def _entry_id(self) -> str | None:
        host = host_of(self.app)
        for entry in host.guide.entries if host is not None else ():
            if entry.url == self.url:
                return str(entry.id)
        return None

    def compose(self) -> ComposeResult:
        with Vertical(id="handoff-box"):
            # No browser was started, so the title does not say one was.
            yield Static("The source's link (no browser started here)", classes="dialog-title")
            yield Static(Content(self.title_text), id="handoff-title")
            yield Static("Click it, where your terminal supports links:", classes="handoff-label")
            link = Content(self.url, [Span(0, len(self.url), Style(link=self.url, underline=True))])
            yield Static(link, id="handoff-link")
            yield Static("Or select it: the whole URL on one line (scroll with ← →):", classes="handoff-label")
            with HorizontalScroll(id="handoff-plain-scroll"):
                yield Static(Content(self.url), id="handoff-plain")
            entry_id = self._entry_id()
            shell = f" In a shell, 'studytui open {entry_id}' prints it on one line." if entry_id else ""
            yield Static(
                Content(
                    f"No browser was started: {self.reason}. The URL was copied to your clipboard "
                    f"(OSC 52) where your terminal allows it.{shell}"
                ),
                id="handoff-reason",
            )
            with Horizontal(id="handoff-buttons"):
                yield Button("Copy again (y)", id="handoff-copy")
                yield Button("Close (Esc)", id="handoff-close", variant="primary")

    def on_mount(self) -> None:
        # The app stylesheet spaces these out for a short URL; here every row counts at 80x24.
        for selector in ("#handoff-link", "#handoff-plain", ".dialog-title"):
            for widget in self.query(selector):
                widget.styles.margin = (0, 0, 0, 0)
        self.query_one("#handoff-close", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "handoff-copy":
            self.action_copy()
        else:
            self.dismiss()

    def action_copy(self) -> None:
        host = host_of(self.app)
        if host is not None:
            host.copy_text(self.url)
        self.notify("Copied again.", timeout=2)

    def action_close(self) -> None:
        """Esc: the one close action every screen has."""
        self.dismiss(None)
