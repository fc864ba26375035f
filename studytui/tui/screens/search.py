"""`/`: jump by keyword over the guide's entries and the learner's notes, filtering as you type."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from studytui.tui.format import state_glyph
from studytui.tui.host import StudyHost, study_host
from studytui.tui.widgets.inputs import OrderedInput

RESULT_LIMIT = 30
HINT = "Titles, sections, tags, authors, summaries and your notes. ↑↓ choose · Enter jump · Esc close"


class SearchInput(OrderedInput):
    """The query field. Enter chooses here, in the field's own queue: keys typed after Enter in
    the same read then reach the guide the dialog closes to, not this field (keyroute)."""

    async def action_submit(self) -> None:
        screen = self.screen
        if isinstance(screen, SearchScreen):
            screen.choose(self.value)


class SearchScreen(ModalScreen[str | None]):
    """Dismisses with the chosen entry id, or None."""

    BINDINGS = [
        Binding("escape", "close", "Close", id="search-close"),
        Binding("down", "move(1)", "Down", show=False),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("pagedown", "move(10)", show=False),
        Binding("pageup", "move(-10)", show=False),
    ]

    def __init__(self, query: str = "") -> None:
        super().__init__()
        self._initial = query
        self._notes: dict[str, str] = {}
        self._shown_query: str | None = None  # the query the results on screen are for

    @property
    def host(self) -> StudyHost:
        return study_host(self.app)

    def compose(self) -> ComposeResult:
        with Vertical(id="search-box"):
            search_input = SearchInput(value=self._initial, placeholder="Search the guide and your notes", id="search-input")
            search_input.cursor_blink = self.host.cursor_blink
            yield search_input
            yield Static(HINT, id="search-hint")
            yield OptionList(id="search-results")

    def on_mount(self) -> None:
        self._notes = self.host.session.notes_by_entry()
        self.query_one(Input).focus()
        if self._initial:
            self.filter(self._initial)

    def filter(self, query: str) -> int:
        """Replace the results with the best matches for `query`; returns how many."""
        self._shown_query = query
        results = self.query_one(OptionList)
        app = self.host
        options: list[Option] = []
        total = 0
        if query.strip():
            every = app.search_index.search(query, note_texts=self._notes)
            total = len(every)
            for hit in every[:RESULT_LIMIT]:
                entry = hit.entry
                line = Content(f"{state_glyph(app.state_of(entry.id))} {entry.title}")
                where = f"\n  {entry.section_title}"
                if hit.matched:  # the words `studytui search` uses
                    where += f" · matched in {hit.matched}"
                options.append(Option(line + Content.styled(where, "dim"), id=entry.id))
        results.set_options(options)
        if options:
            results.highlighted = 0
        hint = self.query_one("#search-hint", Static)
        if not query.strip():
            hint.update(HINT)
        elif not options:
            hint.update("No entry or note matches every word. Esc closes")
        else:
            count = f"{len(options)} of {total} matches" if total > len(options) else f"{total} match{'es' if total != 1 else ''}"
            hint.update(f"{count}, best first. Enter jumps · Esc closes")
        return len(options)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.value != self._shown_query:
            self.filter(event.value)

    def choose(self, query: str) -> None:
        """Enter: jump to the best (or highlighted) match for `query` as typed so far."""
        if query != self._shown_query:
            self.filter(query)  # the field's Changed message for the last keys is still queued
        self._choose()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def _choose(self) -> None:
        results = self.query_one(OptionList)
        if results.highlighted is None:
            return
        self.dismiss(results.get_option_at_index(results.highlighted).id)

    def action_move(self, step: int) -> None:
        results = self.query_one(OptionList)
        if results.option_count == 0:
            return
        current = results.highlighted if results.highlighted is not None else -1
        results.highlighted = max(0, min(results.option_count - 1, current + step))

    def action_close(self) -> None:
        self.dismiss(None)


