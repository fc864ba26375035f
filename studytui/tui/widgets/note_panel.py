"""The learner's note for the selected entry: a rendered preview and an in-app editor.

Autosave: every change restarts a timer; when typing stops for AUTOSAVE_DELAY seconds the
`flush` callback runs, and while typing goes on it runs at least every AUTOSAVE_MAX_DELAY
seconds (closing the terminal mid-sentence loses at most that much, and SIGHUP saves even that).
Leaving the editor also flushes. The text itself lives in the session's NoteDraft, so the app
can flush it on entry switch, on quit, on a signal and after a crash.

Very large notes are previewed in part (PREVIEW_LIMIT characters) and edited in $EDITOR: laying
out megabytes of Markdown would freeze the app each time the cursor lands on the entry.
"""

from __future__ import annotations

import re
from typing import Callable

from markdown_it import MarkdownIt
from rich.segment import Segment
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.strip import Strip
from textual.timer import Timer
from textual.widgets import Markdown, Static, TextArea

from studytui.study.session import NoteDraft
from studytui.tui.format import control_pictures, visible_controls
from studytui.tui.host import host_of
from studytui.tui.keyroute import focus_now
from studytui.tui.widgets.inputs import InOrderBindings

AUTOSAVE_DELAY = 1.0  # seconds of quiet after the last keystroke
AUTOSAVE_MAX_DELAY = 2.0  # seconds: the longest unsaved typing may wait while it goes on
EMPTY_NOTE_HINT = "*No note yet. Press **e** to write one (Markdown), or **E** for $EDITOR.*"
PREVIEW_LIMIT = 20_000  # characters of a note rendered in the preview
_HAS_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
EDITOR_LIMIT = 1_000_000  # characters the in-app editor opens; larger notes go to $EDITOR


def literal_html_parser() -> MarkdownIt:
    """CommonMark (GFM-like) with raw HTML turned off, so tags in a note show as typed instead of
    being dropped by the renderer."""
    return MarkdownIt("gfm-like", {"html": False})


def note_preview_markdown(text: str, limit: int = PREVIEW_LIMIT) -> str:
    """The note as Markdown for the preview: control characters are made visible, nothing else
    changes. Textual's Markdown widget treats text as text, so console markup such as
    [bold] stays literal. Past `limit` characters the rest is left out, and the preview says so
    and how to see all of it."""
    if not text.strip():
        return EMPTY_NOTE_HINT
    if len(text) <= limit:
        return visible_controls(text)
    cut = text.rfind("\n", 0, limit)
    shown = text[: cut if cut > limit // 2 else limit]
    return (
        visible_controls(shown)
        + f"\n\n---\n\n*Preview: the first {len(shown):,} of {len(text):,} characters. "
        "Press **E** to read and edit all of it in $EDITOR, or run `studytui note ID` in a shell.*"
    )


class NoteEditor(InOrderBindings, TextArea):
    """A TextArea that reports when the learner leaves it."""

    BINDINGS = [
        Binding("escape", "leave", "Done editing", id="note-done"),
        # Shown while typing (the app's F1, same id so keys.yaml remaps both, is hidden: `?` is text here).
        Binding("f1", "app.help", "Help", id="help-f1", tooltip="Help, also while typing"),
    ]

    class Left(Message):
        """The editor lost focus or the learner pressed Escape."""

    def render_line(self, y: int) -> Strip:
        # TextArea draws the text as it is; an escape sequence in a note (an imported one, or
        # pasted) would reach the terminal as a command. Show control characters as control
        # pictures instead; the text itself, and so the stored note, keeps its bytes.
        strip = super().render_line(y)
        if not any(_HAS_CONTROL.search(segment.text) for segment in strip):
            return strip
        width = strip.cell_length
        shown = Strip([Segment(control_pictures(seg.text), seg.style, seg.control) for seg in strip])
        return shown.crop(0, width) if shown.cell_length > width else shown

    def action_leave(self) -> None:
        self.post_message(self.Left())

    def on_blur(self, event: events.Blur) -> None:
        self.post_message(self.Left())

    def on_resize(self, event: events.Resize) -> None:
        # Opened, the editor is scrolled into view before its first layout, when its place is
        # not known yet; at 80x24 it then stayed below the fold with the focus in it.
        if self.has_focus:
            self.scroll_visible(animate=False)


class NotePanel(Vertical):
    """Preview plus (while editing) the editor for one entry's note."""

    def __init__(
        self,
        draft: NoteDraft,
        flush: Callable[[], object],
        *,
        cursor_blink: bool = True,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.draft = draft
        self._flush = flush
        self._timer: Timer | None = None
        self._deadline: Timer | None = None  # the max-delay save while typing goes on
        self._cursor_blink = cursor_blink

    def compose(self) -> ComposeResult:
        yield Static("Note", classes="pane-heading")
        editor = NoteEditor(soft_wrap=True, tab_behavior="indent", id="note-editor")
        editor.cursor_blink = self._cursor_blink
        editor.placeholder = "Write your note in Markdown. Esc: done."
        editor.display = False
        yield editor
        yield Markdown(EMPTY_NOTE_HINT, id="note-preview", open_links=False, parser_factory=literal_html_parser)

    def on_mount(self) -> None:
        # The app asks for the text on screen before every save (a keystroke's Changed message
        # may not have reached us yet).
        host = host_of(self.app)
        if host is not None:
            host.set_draft_source(self.sync_draft)

    def on_unmount(self) -> None:
        self.cancel_timer()
        host = host_of(self.app)
        if host is not None:
            host.release_draft_source(self.sync_draft)  # a removed panel has no text on screen to give

    def sync_draft(self) -> None:
        # Called from timers and signal handlers at any moment: before the editor is mounted,
        # while the panel is being removed, after it is gone.
        editor = self._editor_or_none()
        if editor is not None and editor.display:
            self.draft.update(editor.text)

    def _editor_or_none(self) -> NoteEditor | None:
        if not self.is_attached:
            return None
        try:
            return self.query_one(NoteEditor)
        except NoMatches:
            return None

    @property
    def editor(self) -> NoteEditor:
        return self.query_one(NoteEditor)

    @property
    def editing(self) -> bool:
        editor = self._editor_or_none()
        return editor is not None and bool(editor.display)

    def show(self) -> None:
        """Show the draft's (saved) text for a newly selected entry and leave edit mode."""
        self.cancel_timer()
        editor = self._editor_or_none()
        if editor is None:
            return  # not composed yet (its compose shows the draft) or being removed (a tab closing)
        if editor.display:
            editor.display = False
        self.refresh_preview()

    def refresh_preview(self) -> None:
        previews = self.query("#note-preview") if self.is_attached else None
        if previews:
            previews.first(Markdown).update(note_preview_markdown(self.draft.text))

    def draft_changed(self) -> None:
        """The session changed the draft (saved elsewhere, both versions kept): show it."""
        if self._editor_or_none() is None:
            return  # not mounted yet (its compose shows the draft) or being removed
        if self.editing and self.editor.text != self.draft.text:
            editor = self.editor
            cursor = editor.cursor_location
            at_end = cursor == editor.document.end
            editor.load_text(self.draft.text)
            # Typing at the end goes on at the end; elsewhere the cursor keeps its place.
            editor.move_cursor(editor.document.end if at_end else cursor)
        self.refresh_preview()

    def start_editing(self) -> None:
        if len(self.draft.text) > EDITOR_LIMIT:
            self.notify(
                f"This note has {len(self.draft.text):,} characters, too many to edit here; press E to "
                "edit it in $EDITOR.", severity="warning", timeout=6,
            )
            return
        editor = self.editor
        editor.load_text(self.draft.text)
        editor.display = True
        editor.move_cursor(editor.document.end)
        focus_now(editor)  # at once: keys typed right after `e` go to the editor (keyroute)
        editor.scroll_visible(animate=False)

    def stop_editing(self) -> None:
        self.flush_now()
        self.editor.display = False
        self.refresh_preview()

    # --- autosave -----------------------------------------------------------------------------
    def cancel_timer(self) -> None:
        for timer in (self._timer, self._deadline):
            if timer is not None:
                timer.stop()
        self._timer = self._deadline = None

    def flush_now(self) -> None:
        self.cancel_timer()
        self._flush()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        self.draft.update(event.text_area.text)
        if self.draft.dirty:
            if self._timer is not None:
                self._timer.stop()
            self._timer = self.set_timer(AUTOSAVE_DELAY, self._autosave)
            if self._deadline is None:  # not restarted by typing: a save at most this late
                self._deadline = self.set_timer(AUTOSAVE_MAX_DELAY, self._autosave)

    def _autosave(self) -> None:
        self.cancel_timer()
        self._flush()
        if self._editor_or_none() is not None:
            self.refresh_preview()

    def on_note_editor_left(self, event: NoteEditor.Left) -> None:
        # Not stopped: the screen also hears it and moves focus back to the guide.
        if self.editing:
            self.stop_editing()
