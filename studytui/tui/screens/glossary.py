"""`g`: the glossary. Pick a term to read it; Enter jumps to the first entry that explains it."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Input, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from studytui.guide.model import GlossaryTerm, Guide
from studytui.tui.host import cursor_blink_of, host_of
from studytui.tui.keyroute import KeyRouting
from studytui.tui.widgets.footer import StudyFooter
from studytui.tui.widgets.inputs import OrderedInput


class GlossaryScreen(Screen[None]):
    """Terms on the left (filterable), the definition and its entries on the right."""

    BINDINGS = [
        Binding("escape", "close", "Back", id="glossary-close"),
        Binding("down", "move(1)", "Down", show=False),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("pagedown", "move(10)", show=False),
        Binding("pageup", "move(-10)", show=False),
    ]

    def __init__(self, guide: Guide, term: str | None = None) -> None:
        super().__init__()
        self.guide = guide
        self._terms = {t.id: t for t in guide.glossary}
        self._initial = term

    def compose(self) -> ComposeResult:
        yield Static(f"Glossary · {len(self._terms)} terms · type to filter · ↑↓ choose · Enter: the reading", id="status")
        with Horizontal(id="body"):
            with Vertical(id="glossary-left"):
                yield OrderedInput(placeholder="Filter terms", id="glossary-filter")
                yield OptionList(*self._options(""), id="glossary-terms")
            yield Markdown(id="glossary-detail", open_links=False)
        yield StudyFooter()

    def _options(self, query: str) -> list[Option]:
        q = query.strip().lower()
        return [
            Option(Content(t.term), id=t.id)
            for t in self.guide.glossary
            if not q or q in t.term.lower() or any(q in a.lower() for a in t.aliases)
        ]

    def on_mount(self) -> None:
        terms = self.query_one(OptionList)
        filter_input = self.query_one(Input)
        filter_input.cursor_blink = cursor_blink_of(self.app)
        # Typing filters at once ("g" then "ridge"); arrows and Enter still work on the list.
        filter_input.focus()
        if terms.option_count:
            index = 0
            if self._initial in self._terms:
                index = terms.get_option_index(self._initial)
            terms.highlighted = index

    def on_input_changed(self, event: Input.Changed) -> None:
        terms = self.query_one(OptionList)
        terms.set_options(self._options(event.value))
        if terms.option_count:
            terms.highlighted = 0

    def on_input_submitted(self, event: Input.Submitted) -> None:
        terms = self.query_one(OptionList)
        if terms.highlighted is not None:
            terms.action_select()

    def action_move(self, step: int) -> None:
        terms = self.query_one(OptionList)
        if terms.option_count == 0:
            return
        current = terms.highlighted if terms.highlighted is not None else -1
        terms.highlighted = max(0, min(terms.option_count - 1, current + step))

    def on_key(self, event: events.Key) -> None:
        # Typing with the list focused (after Tab or a click) still goes to the filter.
        filter_input = self.query_one("#glossary-filter", OrderedInput)
        if event.is_printable and self.focused is not filter_input:
            event.stop()
            if isinstance(self.app, KeyRouting):
                self.app.key_settled(event)  # taken here: later keys need not wait for it (keyroute)
            filter_input.focus()
            filter_input.insert_text_at_cursor(event.character or "")

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        term = self._terms.get(event.option.id or "")
        if term is not None:
            self.query_one(Markdown).update(self.describe(term))

    def describe(self, term: GlossaryTerm) -> str:
        text = f"## {term.term}\n\n"
        if term.aliases:
            text += f"*Also: {', '.join(term.aliases)}*\n\n"
        text += term.definition
        titles = [self.guide.get(entry_id) for entry_id in term.see]
        see = [entry.title for entry in titles if entry is not None]
        if see:
            text += "\n\n**Read:** " + "; ".join(see) + "\n\n*Enter jumps to the first of these.*"
        return text

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        term = self._terms.get(event.option.id or "")
        if term is None:
            return
        for entry_id in term.see:
            if self.guide.get(entry_id) is not None:
                host = host_of(self.app)
                if host is not None:
                    host.jump_to(entry_id)
                return
        self.notify("This term has no linked entry.", timeout=3)

    def action_close(self) -> None:
        """Esc: the one close action every screen has."""
        self.dismiss(None)
