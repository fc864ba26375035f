"""The learner's note for the selected entry: a rendered preview and an in-app editor.

Autosave: every change restarts a timer; when typing stops for AUTOSAVE_DELAY seconds the
`flush` callback runs. Leaving the editor also flushes. The text itself lives in a NoteDraft the
app owns, so the app can flush it on entry switch, on quit and after a crash.
"""

from __future__ import annotations

from typing import Callable

from markdown_it import MarkdownIt
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Markdown, Static, TextArea

from studytui.tui.format import visible_controls
from studytui.tui.notes import NoteDraft
from studytui.tui.widgets.inputs import InOrderBindings

AUTOSAVE_DELAY = 1.0  # seconds of quiet after the last keystroke
EMPTY_NOTE_HINT = "*No note yet. Press **e** to write one (Markdown), or **E** for $EDITOR.*"


def literal_html_parser() -> MarkdownIt:
    """CommonMark (GFM-like) with raw HTML turned off, so tags in a note show as typed instead of
    being dropped by the renderer."""
    return MarkdownIt("gfm-like", {"html": False})


def note_preview_markdown(text: str) -> str:
    """The note as Markdown for the preview: control characters are made visible, nothing else
    changes. Textual's Markdown widget treats text as text, so console markup such as
    [bold] stays literal."""
    return visible_controls(text) if text.strip() else EMPTY_NOTE_HINT


class NoteEditor(InOrderBindings, TextArea):
    """A TextArea that reports when the learner leaves it."""

    BINDINGS = [Binding("escape", "leave", "Done editing", id="note-done")]

    class Left(Message):
        """The editor lost focus or the learner pressed Escape."""

    def action_leave(self) -> None:
        self.post_message(self.Left())

    def _on_blur(self, event: events.Blur) -> None:
        self.post_message(self.Left())


class NotePanel(Vertical):
    """Preview plus (while editing) the editor for one entry's note."""

    def __init__(
        self,
        draft: NoteDraft,
        flush: Callable[[], None],
        *,
        cursor_blink: bool = True,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.draft = draft
        self._flush = flush
        self._timer: Timer | None = None
        self._cursor_blink = cursor_blink

    def compose(self) -> ComposeResult:
        yield Static("Note", classes="pane-heading")
        editor = NoteEditor(soft_wrap=True, tab_behavior="indent", id="note-editor")
        editor.cursor_blink = self._cursor_blink
        editor.placeholder = "Write your note in Markdown. Esc: done."
        editor.display = False
        yield editor
        yield Markdown(EMPTY_NOTE_HINT, id="note-preview", open_links=False, parser_factory=literal_html_parser)

    @property
    def editor(self) -> NoteEditor:
        return self.query_one(NoteEditor)

    @property
    def editing(self) -> bool:
        return bool(self.editor.display)

    def show(self) -> None:
        """Show the draft's (saved) text for a newly selected entry and leave edit mode."""
        self.cancel_timer()
        editor = self.editor
        if editor.display:
            editor.display = False
        self.refresh_preview()

    def refresh_preview(self) -> None:
        self.query_one("#note-preview", Markdown).update(note_preview_markdown(self.draft.text))

    def start_editing(self) -> None:
        editor = self.editor
        editor.load_text(self.draft.text)
        editor.display = True
        editor.move_cursor(editor.document.end)
        editor.focus()
        editor.scroll_visible(animate=False)

    def stop_editing(self) -> None:
        self.flush_now()
        self.editor.display = False
        self.refresh_preview()

    # --- autosave -----------------------------------------------------------------------------
    def cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def flush_now(self) -> None:
        self.cancel_timer()
        self._flush()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        self.draft.update(event.text_area.text)
        if self.draft.dirty:
            self.cancel_timer()
            self._timer = self.set_timer(AUTOSAVE_DELAY, self._autosave)

    def _autosave(self) -> None:
        self._timer = None
        self._flush()
        self.refresh_preview()

    def on_note_editor_left(self, event: NoteEditor.Left) -> None:
        # Not stopped: the screen also hears it and moves focus back to the guide.
        if self.editing:
            self.stop_editing()
