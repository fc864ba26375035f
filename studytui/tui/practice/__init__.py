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

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from textual.screen import Screen

    from studytui.tui.host import StudyHost
    from studytui.tui.practice.state import PracticeState
    from studytui.tui.registry import Registry

SCREEN_ID = "practice"
KEY = "x"


def __getattr__(name: str) -> Any:
    """`PracticeState` lives in studytui.tui.practice.state (a dataclass costs its class creation
    at import: registering the plug-in before the first frame should not pay it)."""
    if name == "PracticeState":
        from studytui.tui.practice.state import PracticeState

        return PracticeState
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def practice_state(app: StudyHost) -> PracticeState | None:
    """The app's practice state, loading it on first use."""
    from studytui.tui.practice.state import PracticeState

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
