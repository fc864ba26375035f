"""What changed in the guide: shown when the app starts with `--readme FILE` (a newer README).

Self-contained: it gets the differences and the learner's affected entries already computed
(studytui.guide.diff), and shows them as plain text, so nothing from the README is read as markup.
"""

from __future__ import annotations

from typing import Any, Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.style import Style
from textual.widgets import Static

from studytui.core.text import one_line as visible  # escape sequences shown, never sent (as `guide diff` does)
from studytui.tui.screens.refuse import RefusesStudyKeys
from studytui.tui.widgets.footer import StudyFooter


class GuideChangesScreen(RefusesStudyKeys, Screen[None]):
    """The differences between a newer README and the shipped content, then what they mean for
    the learner's own entries."""

    BINDINGS = [Binding("escape,q", "close", "Back", id="guide-changes-close")]

    def __init__(self, readme: str, differences: Sequence[Any], impacts: Sequence[Any]) -> None:
        super().__init__()
        self.readme = readme
        self.differences = list(differences)
        self.impacts = list(impacts)

    def compose(self) -> ComposeResult:
        n = len(self.differences)
        yield Static(Content(f"What changed in the guide · {n} difference{'' if n == 1 else 's'}"), id="status")
        with VerticalScroll(id="guide-changes"):
            yield Static(self._yours(), id="guide-changes-yours")
            yield Static(self._list(), id="guide-changes-list")
        yield StudyFooter()

    def _yours(self) -> Content:
        bold = Style(bold=True)
        if not self.impacts:
            return Content.assemble(("Your entries\n", bold), "None of your entries with progress or notes is affected.\n")
        parts: list[Any] = [("Your entries\n", bold)]
        for i in self.impacts:
            note = ", note" if i.has_note else ""
            parts.append(visible(f"{i.title} ({i.state}{note}): {i.outcome}") + "\n")
        return Content.assemble(*parts)

    def _list(self) -> Content:
        bold = Style(bold=True)
        name = visible(self.readme)
        if not self.differences:
            return Content.assemble(("Differences\n", bold), f"{name} matches the shipped content.")
        parts: list[Any] = [("Differences\n", bold)]
        for d in self.differences:
            parts.append(visible(d.message) + "\n")
            parts.append((f"  {name}:{d.readme_line}  ·  {visible(d.content)}\n", Style(dim=True)))
        return Content.assemble(*parts)

    def action_close(self) -> None:
        """Esc: the one close action every screen has."""
        self.dismiss(None)
