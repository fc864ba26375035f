"""Practice in the study app: `x` opens the problems of the entry or section you are on; the
palette lists "Practice: <section>" and "Review due problems".

Nothing here is imported before the first frame: problems, attempts and the scheduler load in a
ready hook run after the main screen is painted (`PracticeState.load`), and the screen module
loads when it is first opened.

It reaches the app only through its host (studytui.tui.host.StudyHost): the state is kept with
`host.set_practice_state`, and a change of mastery is a message (MasteryChanged) the main screen
handles; nothing here touches another screen's widgets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from textual.screen import Screen

    from studytui.practice.service import Practice
    from studytui.tui.host import StudyHost
    from studytui.tui.registry import Registry

SCREEN_ID = "practice"
KEY = "x"


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


def practice_state(app: StudyHost) -> PracticeState | None:
    """The app's practice state, loading it on first use."""
    state = app.practice_state
    if isinstance(state, PracticeState):
        return state
    loaded = PracticeState.load(app)
    app.set_practice_state(loaded)
    return loaded


def refresh_views(app: StudyHost) -> None:
    """After an answer: recompute mastery, and tell the views (the tree's section rows, the status line)."""
    from studytui.tui.messages import MasteryChanged

    state = practice_state(app)
    if state is None:
        return
    state.recompute()
    app.post_message(MasteryChanged(state.tree_mastery()))
    if state.changed is not None:
        state.changed.publish(state)
    _refresh_when_due(app, state)


def _refresh_when_due(app: StudyHost, state: PracticeState) -> None:
    """Refresh the views again when the next review comes due, so the header's "N due" grows at
    the moment practice (and the Today view) offer it, not at the next answer."""
    if state.timer is not None:
        state.timer.stop()
        state.timer = None
    if state.next_due is None:  # (only called while the app runs: after its first frame, after an answer)
        return
    delay = (state.next_due - state.practice.now()).total_seconds() + 1.0
    state.timer = app.set_timer(max(delay, 0.01), lambda: refresh_views(app), name="practice-review-due")


def open_practice(app: StudyHost, section: str | None = None, entry: str | None = None, due: bool = False) -> Screen[Any]:
    from studytui.tui.practice.screen import practice_screen_for

    return practice_screen_for(app, section=section, entry=entry, due=due)


def _ready(app: StudyHost) -> None:
    """After the first frame: load problems and attempts, show mastery, add the palette commands."""
    from studytui.tui.registry import PaletteCommand

    state = practice_state(app)
    if state is None:
        return
    for section in app.guide.sections:
        count = len(state.practice.for_section(section.id))
        if count:
            app.registry.add_command(PaletteCommand(
                title=f"Practice: {section.title}", help=f"{count} problems graded by the calculators",
                run=_opener(section.id),
            ))
    refresh_views(app)


def _opener(section_id: str) -> Callable[[StudyHost], None]:
    def run(app: StudyHost) -> None:
        app.open_screen(SCREEN_ID, section=section_id)

    return run


def register(registry: Registry) -> None:
    from studytui.tui.registry import PaletteCommand, ScreenSpec

    registry.add_screen(ScreenSpec(
        id=SCREEN_ID, title="Practice", key=KEY, footer=True,
        description="Problems for the entry or section you are on, graded by the calculators",
        factory=open_practice,
    ))
    registry.add_command(PaletteCommand(
        title="Review due problems", help="Problems whose spaced review is due",
        run=lambda app: app.open_screen(SCREEN_ID, due=True),
    ))
    registry.ready_hooks.append(_ready)
