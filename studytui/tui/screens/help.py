"""`?`: every key, with the binding id to use in keys.yaml."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from studytui.tui.format import STATE_GLYPHS
from studytui.tui.screens.refuse import RefusesStudyKeys

# Keys that are not bindings of ours: they come with the widgets.
BUILT_IN_KEYS = (
    ("↑ ↓ / mouse", "Move through the guide; click to select"),
    ("Enter", "Open or close a section or subsection"),
    ("Tab", "Move between the guide and the entry pane (scroll it with the arrows)"),
    ("ctrl+p", "Command palette: entries, sections, Continue, glossary, themes"),
    ("Esc", "Close a dialog or leave the note editor (the note is saved)"),
)


def display_key(key: str) -> str:
    names = {"slash": "/", "question_mark": "?", "escape": "Esc", "enter": "Enter", "f1": "F1"}
    return ", ".join(names.get(k.strip(), k.strip()) for k in key.split(","))


def _wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return lines


class HelpScreen(RefusesStudyKeys, ModalScreen[None]):
    """Lists the rows given by StudyApp.key_rows() plus the widgets' own keys."""

    BINDINGS = [
        Binding("escape,q,question_mark,f1", "close", "Close", id="help-close"),
    ]

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def _table(self) -> Content:
        width = max([len(display_key(k)) for k, _, _ in self.rows] + [len(k) for k, _ in BUILT_IN_KEYS]) + 2
        id_width = max(len(binding_id) for _, _, binding_id in self.rows) + 2
        # The "does" column is as wide as the dialog allows and wraps under itself.
        box = min(int(self.app.size.width * 0.9), 100) - 6 if self.app.size.width else 94
        what_width = max(20, box - width - id_width)
        lines: list[Content] = [Content.styled("Key".ljust(width) + "Does".ljust(what_width + 2) + "Id (keys.yaml)", "dim")]
        for key, what, binding_id in self.rows:
            for i, part in enumerate(_wrap(what, what_width)):
                if i == 0:
                    lines.append(
                        Content.styled(display_key(key).ljust(width), "bold")
                        + Content(part.ljust(what_width + 2))
                        + Content.styled(binding_id, "dim")
                    )
                else:  # a long description continues under itself, never at column 0
                    lines.append(Content(" " * width + part))
        lines.append(Content(""))
        for key, what in BUILT_IN_KEYS:
            lines.append(Content.styled(key.ljust(width), "bold") + Content(what))
        lines.append(Content(""))
        legend = "   ".join(f"{glyph} {state}" for state, glyph in STATE_GLYPHS.items())
        lines.append(Content("States: " + legend))
        lines.append(
            Content.styled(
                "Remap any key by id in keys.yaml in the data directory, e.g.  next: j", "dim"
            )
        )
        return Content("\n").join(lines)

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static("Keys", classes="dialog-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(self._table(), id="help-table")
            yield Static("Esc closes", classes="dialog-hint")

    def action_close(self) -> None:
        """Esc: the one close action every screen has."""
        self.dismiss(None)
