"""The practice plug-in's state in the app: mastery per section and the reviews due, as the tree
and the status line show them. Its own module, loaded after the first frame with the problems
(studytui.tui.practice imports it only when practice is loaded or opened)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from studytui.practice.service import Practice
    from studytui.tui.host import StudyHost


@dataclass
class PracticeState:
    """What the tree and the status line show: mastery per section, and the due count."""

    practice: Practice
    mastery: dict[str, tuple[int, int]] = field(default_factory=dict)  # section id -> (mastered, problems)
    due: int = 0
    attempted: bool = False  # nothing is shown until the learner has answered something
    next_due: Any = None  # the first review due after now (a datetime), when the count next grows
    timer: Any = field(default=None, repr=False, compare=False)  # refresh_views at next_due
    # Published by refresh_views (after an answer, when a review comes due): an open practice
    # screen redraws its header from it. None until loaded by an app (PracticeState.load).
    changed: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def load(cls, app: StudyHost) -> PracticeState | None:
        from studytui.core import clock
        from studytui.core.errors import StudyError
        from studytui.practice.service import Practice

        try:
            # The app's one clock (studytui.core.clock): the plan's Today view counts "due now" by it too.
            practice = Practice(app.guide, app.store, now=lambda: clock.now())
        except StudyError:
            return None
        from textual.signal import Signal

        state = cls(practice)
        state.changed = Signal(app.node(), "practice-changed")
        state.recompute()
        return state

    def recompute(self) -> None:
        self.practice.refresh()
        mastery = self.practice.mastery()
        self.mastery = {sid: (m.mastered, m.problems) for sid, m in mastery.items()}
        self.due = len(self.practice.due())
        self.attempted = bool(self.practice.attempts())
        now = self.practice.now()
        known = {p.id for p in self.practice.problems}
        later = [r.due for r in self.practice.reviews().values() if r.due > now and r.problem_id in known]
        self.next_due = min(later) if later else None

    def problem_ids(self) -> frozenset[str]:
        """The problems the content has (PracticeStatus: the plan plans reviews of these only)."""
        return frozenset(p.id for p in self.practice.problems)

    def status_text(self) -> str:
        if not self.attempted:
            return ""
        mastered = sum(m for m, _ in self.mastery.values())
        total = sum(n for _, n in self.mastery.values())
        return f"Practice {mastered}/{total}, {self.due} due"

    def due_text(self) -> str:
        """The reviews due, as the practice screen's header says them: '2 due for review', or
        'none due for review now, next at 14:05' (a miss comes back minutes later) - one live
        count, so a header never says both that one is due and that none is."""
        if self.due:
            return f"{self.due} due for review"
        if self.next_due is None:
            return "none due for review"
        from studytui.core import clock

        tz, _ = clock.local_zone()
        now, due = self.practice.now().astimezone(tz), self.next_due.astimezone(tz)
        when = f"at {due:%H:%M}" if due.date() == now.date() else f"on {due:%Y-%m-%d}"
        return f"none due for review now, next {when}"

    def tree_mastery(self) -> dict[str, tuple[int, int]]:
        return dict(self.mastery) if self.attempted else {}
