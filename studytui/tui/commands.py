"""The command palette (ctrl+p): entries, sections, "Continue", glossary terms, screens, themes.

Entries are found with the guide's own SearchIndex (the same ranking as `/`), so the palette stays
fast with thousands of entries; everything else goes through Textual's fuzzy matcher.

This is the palette's only provider (the study app's COMMANDS): the app's system commands (the themes,
then Textual's Keys, Maximize, Screenshot, Quit) are listed here too, after the study commands.
Textual runs providers side by side and shows discovery hits as they arrive, so with its own
system provider beside this one, Keys and Screenshot came before the entries and sections.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Callable, Iterator

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from studytui.tui.host import StudyHost, study_host

if TYPE_CHECKING:
    from studytui.guide.model import Entry

ENTRY_HITS = 20
# What "Continue:" offers, in the words of the README: the entry `studytui next` shows.
CONTINUE_HELP = "The entry you are learning, else the first pending one after what you last marked or opened ('studytui next')"


class StudyCommands(Provider):
    """Commands for studying the guide."""

    @property
    def host(self) -> StudyHost:
        return study_host(self.app)

    def _fixed_commands(self) -> Iterator[tuple[str, Callable[[], object], str]]:
        """(title, callback, help) for every command that is not a single entry."""
        app = self.host
        # An entry being learned first; else from where the learner really is (what they last
        # marked or opened), not from wherever a `/` jump left the cursor: the same entry
        # `studytui next` shows and Today lists first (studytui.study.flow.continue_entry).
        upcoming = app.session.continue_entry()
        if upcoming is not None:
            yield (f"Continue: {upcoming.title}", partial(app.jump_to, upcoming.id), CONTINUE_HELP)
        for section in app.guide.sections:
            count = len(section.entries)
            yield (f"Section: {section.title}", partial(app.jump_to_section, section), f"{count} entr{'y' if count == 1 else 'ies'}")
        for spec in app.registry.screens.values():
            yield (spec.title, partial(app.open_screen, spec.id), spec.description)
        for command in app.registry.commands:
            yield (command.title, partial(command.run, app), command.help)
        for term in app.guide.glossary:
            yield (f"Glossary: {term.term}", partial(app.open_screen, "glossary", term=term.id), "Open the glossary at this term")
        yield ("Search the guide and notes", app.open_search, "The / screen")

    def _current_entry(self) -> Entry | None:
        return self.host.current_entry()

    def _system_commands(self, searched: bool = False) -> Iterator[tuple[str, Callable[[], object], str]]:
        """(title, callback, help) of the app's system commands: those shown without a query, or
        (searched) every one."""
        for command in self.app.get_system_commands(self.screen):
            if command.discover or searched:
                yield (command.title, command.callback, command.help)

    async def discover(self) -> Hits:
        for title, callback, help_text in self._fixed_commands():
            yield DiscoveryHit(title, callback, help=help_text)
        for title, callback, help_text in self._system_commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text in [*self._fixed_commands(), *self._system_commands(searched=True)]:
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, text=title, help=help_text)
        app = self.host
        # "Entry: Stream-K" is what the palette shows; the words after "Entry:" are the query.
        words_only = query.split(":", 1)[1] if query.lower().startswith("entry:") else query
        hits = app.search_index.search(words_only, limit=ENTRY_HITS)
        if not hits:
            return
        best = hits[0].score or 1.0
        for hit in hits:
            entry = hit.entry
            # Scaled below a perfect fuzzy match so exact command names stay on top.
            score = 0.9 * min(1.0, hit.score / best)
            yield Hit(
                score,
                Content(f"Entry: {entry.title}"),
                partial(app.jump_to, entry.id),
                text=f"Entry: {entry.title}",
                help=entry.section_title,
            )
