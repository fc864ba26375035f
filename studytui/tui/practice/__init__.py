"""Practice in the study app: `x` opens the problems of the entry or section you are on; the
palette lists "Practice: <section>" and "Review due problems".

Nothing here is imported before the first frame: problems, attempts and the scheduler load in a
ready hook run after the main screen is painted (`PracticeState.load`), and the screen module
loads when it is first opened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.screen import Screen

    from studytui.tui.registry import Registry

SCREEN_ID = "practice"
KEY = "x"


@dataclass
class PracticeState:
    """What the tree and the status line show: mastery per section, and the due count."""

    practice: Any  # studytui.practice.service.Practice
    mastery: dict[str, tuple[int, int]] = field(default_factory=dict)  # section id -> (mastered, problems)
    due: int = 0
    attempted: bool = False  # nothing is shown until the learner has answered something

    @classmethod
    def load(cls, app: Any) -> "PracticeState | None":
        from studytui.core.errors import StudyError
        from studytui.practice.service import Practice

        try:
            practice = Practice(app.guide, app.store)
        except StudyError:
            return None
        state = cls(practice)
        state.recompute()
        return state

    def recompute(self) -> None:
        self.practice.refresh()
        mastery = self.practice.mastery()
        self.mastery = {sid: (m.mastered, m.problems) for sid, m in mastery.items()}
        self.due = len(self.practice.due())
        self.attempted = bool(self.practice.attempts())

    def status_text(self) -> str:
        if not self.attempted:
            return ""
        mastered = sum(m for m, _ in self.mastery.values())
        total = sum(n for _, n in self.mastery.values())
        return f"Practice {mastered}/{total}, {self.due} due"

    def tree_mastery(self) -> dict[str, tuple[int, int]]:
        return dict(self.mastery) if self.attempted else {}


def practice_state(app: Any) -> PracticeState | None:
    """The app's practice state, loading it on first use."""
    state = getattr(app, "practice_state", None)
    if state is None:
        state = PracticeState.load(app)
        app.practice_state = state
    return state


def refresh_views(app: Any) -> None:
    """After an answer: recompute mastery and redraw the tree's section rows and the status."""
    state = practice_state(app)
    if state is None:
        return
    state.recompute()
    main = getattr(app, "main_screen", None)
    if main is not None:
        main.tree.set_mastery(state.tree_mastery())
        main.update_status()


def open_practice(app: Any, section: str | None = None, entry: str | None = None, due: bool = False) -> Screen[Any]:
    from studytui.tui.practice.screen import practice_screen_for

    return practice_screen_for(app, section=section, entry=entry, due=due)


def _ready(app: Any) -> None:
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
                run=lambda a, sid=section.id: a.open_screen(SCREEN_ID, section=sid),
            ))
    refresh_views(app)


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
