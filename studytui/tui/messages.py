"""What flows upward and sideways in the study app: messages a screen or plug-in posts, so no
plug-in reaches into another screen's widgets.

A plug-in posts a message to the host (`host.post_message`, studytui.tui.host) or from its own
screen (it bubbles up to the app). The study app hands each one on to the screens that show what
it is about; a bare app hosting a plug-in screen (a test) can handle it itself.
"""

from __future__ import annotations

from typing import Mapping

from textual.message import Message


class MasteryChanged(Message):
    """Practice mastery per section changed (an answer was graded, problems were loaded).

    `mastery` maps a section id to (mastered, problems); empty means nothing to show yet (the
    learner has not practised). The main screen redraws the tree's section rows and the status
    line (which reads `host.practice_state`)."""

    def __init__(self, mastery: Mapping[str, tuple[int, int]]) -> None:
        super().__init__()
        self.mastery: dict[str, tuple[int, int]] = dict(mastery)


class PlanChanged(Message):
    """The study plan was worked out again (studytui.tui.plan posts it after study changes).

    `label` is what the header shows ("finish ~ 2027-03-14 at your pace"), or "" for nothing: no
    plan yet, or one without a finish date from the learner's own history. The main screen keeps
    it and redraws its status line, where it is the first part to give way."""

    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label
