"""The source policy: what the guide admits, and what every performance number must state."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Markdown, Static

from studytui.guide.model import Guide
from studytui.tui.screens.refuse import RefusesStudyKeys
from studytui.tui.widgets.footer import StudyFooter


class PolicyScreen(RefusesStudyKeys, Screen[None]):
    """The policy text, the admitted kinds of source and the fields every claim must carry."""

    BINDINGS = [Binding("escape", "close", "Back", id="policy-close")]

    def __init__(self, guide: Guide) -> None:
        super().__init__()
        self.guide = guide

    def compose(self) -> ComposeResult:
        policy = self.guide.policy
        yield Static("Source policy", id="status")
        text = policy.text.rstrip()
        text += "\n\n**Kinds of core source (our labels):** " + ", ".join(policy.admitted_kinds)
        text += "\n\n**Every performance claim states:** " + ", ".join(policy.claim_fields)
        with VerticalScroll(id="policy-scroll"):
            yield Markdown(text, id="policy-text", open_links=False)
        yield StudyFooter()

    def action_close(self) -> None:
        """Esc: the one close action every screen has."""
        self.dismiss(None)
