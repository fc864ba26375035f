"""The study plan in the app (issue 29): `a` opens "Today" (today's share, the entries that fit,
the reviews due, the finish date and pace, the estimates per kind, the calendar of the last year);
the palette lists "Today: reading and reviews" and "Activity calendar"; the main screen's header
shows "finish ~ DATE at your pace".

The figures are `studytui plan`'s: the same pure functions (studytui.study.plan) over the same
inputs (the canonical states, the event log, practice attempts, the clock and the time zone of
studytui.core.clock). Nothing is written.

Nothing here runs before the first frame: the registry gets a screen and two commands, and a
ready hook, run once the main screen is painted, works the plan out on a worker (`PlanState`, in
studytui.tui.plan.state):
the store is read and the figures are made in a thread, and the result comes back to the
event loop. After that every study change (a mark, a note, an open, another process's write)
starts a short timer, and the plan is worked out again when the changes stop.

The plug-in reaches the app only through its host (studytui.tui.host.StudyHost): it reads the
session, the guide and the store, listens to `study_changed`, and posts `PlanChanged`
(studytui.tui.messages) for the header; the Today screen listens to `PlanState.built`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.screen import Screen

    from studytui.tui.host import StudyHost
    from studytui.tui.registry import Registry

SCREEN_ID = "today"
KEY = "a"  # free on the main screen (and mnemonic: "agenda"); remap with `today: KEY` in keys.yaml
PRACTICE_SCREEN = "practice"


def open_today(host: StudyHost, focus: str | None = None) -> Screen[Any]:
    from studytui.tui.plan.screen import TodayScreen
    from studytui.tui.plan.state import plan_state

    return TodayScreen(plan_state(host), focus=focus)


def _ready(host: StudyHost) -> None:
    """After the first frame: work the plan out (a worker), then keep it up to date."""
    from studytui.tui.plan.state import plan_state

    plan_state(host).start()


def register(registry: Registry) -> None:
    from studytui.tui.registry import PaletteCommand, ScreenSpec

    registry.add_screen(ScreenSpec(
        id=SCREEN_ID, title="Today: reading and reviews", key=KEY,
        description="Today's share, what fits in it, reviews due, the finish date at your pace, your calendar",
        factory=open_today,
    ))
    registry.add_command(PaletteCommand(
        title="Activity calendar", help="Your study days of the last 12 months, and your streaks",
        run=lambda host: host.open_screen(SCREEN_ID, focus="activity"),
    ))
    registry.ready_hooks.append(_ready)
