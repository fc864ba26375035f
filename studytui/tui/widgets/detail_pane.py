"""The right-hand pane: the selected entry (or section) in full, and the entry's note.

The first frame shows only the title and byline; the Markdown body and the note panel (the
heaviest widgets, and their imports) are mounted right after it, so startup stays fast.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Callable

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content, Span
from textual.message import Message
from textual.style import Style
from textual.widgets import Static

from studytui.guide.model import Entry, Section, Subsection
from studytui.study.session import NoteDraft
from studytui.tui.format import STATE_WORDS, authors_line, days_since, short_timestamp, state_glyph

if TYPE_CHECKING:
    from textual.widgets import Markdown

    from studytui.tui.widgets.note_panel import NotePanel

FRONTIER_ID = "frontier"
# Shown under the byline of entries whose position in the guide was inferred from update notes.
PLACEMENT_NOTE = "placed from the update notes; position not confirmed"


class SourceLink(Static):
    """The entry's URL as a terminal hyperlink (OSC 8). A click goes through the app's hand-off
    rules (never straight to a browser), so it behaves like the `o` key."""

    class Clicked(Message):
        """The learner clicked the link."""

    def set_url(self, url: str | None, reason: str | None) -> None:
        if url:
            self.update(Content(url, [Span(0, len(url), Style(link=url, underline=True))]))
        else:
            self.update(Content(f"No link: {reason or 'this item has no primary source yet'}"))

    def on_click(self) -> None:
        self.post_message(self.Clicked())


def kind_badge(kind: str | None) -> Content:
    label = f" {kind or 'topic'} "
    return Content(label, [Span(0, len(label), Style(reverse=True, bold=True))])


class DetailPane(VerticalScroll):
    """Shows one entry, or a section/subsection overview, chosen with show_entry/show_section."""

    def __init__(self, draft: NoteDraft, flush: Callable[[], object], *, cursor_blink: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self._draft = draft
        self._flush = flush
        self._cursor_blink = cursor_blink
        self.ready = False  # the deferred widgets are mounted
        self._replay: Callable[[], None] | None = None
        self._when_ready: list[Callable[[], None]] = []

    def compose(self) -> ComposeResult:
        yield Static(id="detail-title")
        yield Static(id="detail-meta")

    async def mount_rest(self) -> None:
        """Mount the body and the note panel (the screen calls this after its first frame)."""
        if self.ready or not self.app.is_running:
            return  # (not running: the app quit before its first frame was followed up, `q` at once)
        from textual.widgets import Markdown

        from studytui.tui.widgets.note_panel import NotePanel

        await self.mount_all(
            [
                Markdown(id="detail-body", open_links=False),
                Static(id="detail-tags"),
                SourceLink(id="detail-url"),
                Static(id="detail-progress"),
                NotePanel(self._draft, self._flush, cursor_blink=self._cursor_blink, id="note-panel"),
            ]
        )
        if not self.app.is_running:
            return  # it stopped meanwhile: nothing was mounted, nothing to show
        self.ready = True
        if self._replay is not None:
            replay, self._replay = self._replay, None
            replay()
        pending, self._when_ready = self._when_ready, []
        for callback in pending:
            callback()

    def when_ready(self, callback: Callable[[], None]) -> None:
        """Run `callback` now, or once the body and note panel are mounted: a key pressed while
        the first frame is on screen (`e` at once, or in a burst) is acted on, not dropped."""
        if self.ready:
            callback()
        else:
            self._when_ready.append(callback)

    @property
    def note_panel(self) -> NotePanel:
        from studytui.tui.widgets.note_panel import NotePanel

        return self.query_one(NotePanel)

    def _body(self) -> Markdown:
        from textual.widgets import Markdown

        return self.query_one("#detail-body", Markdown)

    def _set(self, widget_id: str, content: Content | str) -> None:
        widget = self.query_one(f"#{widget_id}", Static)
        new = content if isinstance(content, Content) else Content(content)
        if widget.content != new:  # an update lays the whole screen out again: skip it when nothing changed
            widget.update(new)

    def _show_entry_parts(self, visible: bool) -> None:
        for widget_id in ("detail-tags", "detail-url", "detail-progress", "note-panel"):
            self.query_one(f"#{widget_id}").display = visible

    def show_entry(self, entry: Entry, state: str, last_opened_at: str | None, today: _dt.date) -> None:
        self._set("detail-title", Content(entry.title))
        meta = kind_badge(entry.kind)
        byline = authors_line(entry.authors, entry.year)
        if byline:
            meta = meta + Content("  " + byline)
        if entry.role != "core":
            meta = meta + Content(f"  ({entry.role})")
        if entry.placement == "inferred":
            meta = meta + Content("\n" + PLACEMENT_NOTE, [Span(1, 1 + len(PLACEMENT_NOTE), Style(italic=True))])
        self._set("detail-meta", meta)
        if not self.ready:
            self._replay = lambda: self.show_entry(entry, state, last_opened_at, today)
            return
        self._show_entry_parts(True)
        where = entry.section_title + (f" › {entry.subsection_title}" if entry.subsection_title else "")
        body = entry.summary
        if entry.date:
            # What the date means, in the words `studytui show` uses (Entry.date_label).
            body += f"\n\n*{entry.date_label} {days_since(entry.date, today) or entry.date}.*"
        self._body().update(body + f"\n\n*{where}*")
        self._set("detail-tags", "Tags: " + ", ".join(entry.tags) if entry.tags else "")
        self.query_one(SourceLink).set_url(entry.url, entry.no_url_reason)
        self.show_progress(state, last_opened_at)
        self.note_panel.show()
        self.scroll_home(animate=False)

    def show_progress(self, state: str, last_opened_at: str | None) -> None:
        if not self.ready:
            return  # shown by the replayed show_entry
        self._set(
            "detail-progress",
            f"State: {state_glyph(state)} {STATE_WORDS.get(state, state)}   Last opened: {short_timestamp(last_opened_at)}",
        )

    def show_section(self, section: Section, counts: str, today: _dt.date, subsection: Subsection | None = None) -> None:
        title = section.title if subsection is None else f"{section.title} › {subsection.title}"
        self._set("detail-title", Content(title))
        meta = counts
        if section.id == FRONTIER_ID or section.verified_on:
            verified = days_since(section.verified_on, today)
            meta += f"\nSection verified on {verified}" if verified else "\nVerification date unknown"
        self._set("detail-meta", meta)
        if not self.ready:
            self._replay = lambda: self.show_section(section, counts, today, subsection)
            return
        self._show_entry_parts(False)
        hint = "\n\n*Read in this order.*" if section.ordered else ""
        self._body().update(section.intro + hint)
        self.scroll_home(animate=False)
