"""The app's study plan, kept up to date (studytui.tui.plan): `PlanState` works it out on a
worker after the first frame and again after study changes, and tells the views.

Imported by the ready hook and the Today screen, never before the first frame (the plug-in's
__init__ only registers).
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studytui.core.tuples import Tuple

if TYPE_CHECKING:
    from datetime import datetime, tzinfo

    from textual.signal import Signal
    from textual.timer import Timer

    from studytui.guide.model import Guide
    from studytui.store import EntryProgress, Store
    from studytui.study.plan import Plan
    from studytui.study.session import Change
    from studytui.tui.host import StudyHost

# Study changes come in runs (`nnd`, a note typed, the once-a-second look for other writers): the
# plan is worked out again this long after the last of them.
REBUILD_DELAY_S = 0.4


class PlanInputs(Tuple):
    """What a build reads, taken on the event loop; the rest (the store's log) is read in the worker."""

    guide: Guide
    states: dict[str, EntryProgress]
    store: Store
    data_dir: Path
    now: datetime
    tz: tzinfo
    zone_name: str
    problem_ids: frozenset[str] | None


def build(inputs: PlanInputs) -> tuple[Plan, tuple[str, ...]]:
    """The plan, as `studytui plan` makes it with no budget and no goal date: (plan, problems).
    A bad plan.yaml is a problem to show (the defaults are used), not a reason to show nothing.
    Runs in a worker thread: it only reads (the store serialises its reads and writes)."""
    from studytui.core.errors import StudyError
    from studytui.study import plan as planning
    from studytui.study.flow import pending_start

    problems: list[str] = []
    try:
        config = planning.load_config(inputs.data_dir / planning.CONFIG_NAME)
    except StudyError as exc:
        config = planning.PlanConfig()
        problems.append(f"{exc} (the defaults are used)")
    events = inputs.store.events()
    attempts = inputs.store.attempts()
    following = pending_start(inputs.guide, inputs.states)  # as `studytui plan`: after those being learned
    plan = planning.build_plan(
        inputs.guide, inputs.states, events, attempts, inputs.now, inputs.tz, config=config,
        start_index=following.index if following is not None else None,
        problem_ids=inputs.problem_ids if attempts else None, time_zone_name=inputs.zone_name,
    )
    return plan, tuple(problems)


def header_label(plan: Plan | None) -> str:
    """What the header shows: the finish date at the learner's own pace, or "" - no plan yet, no
    study time measured (a fresh store), nothing left, or no date within the plan's horizon."""
    if plan is None or not plan.estimates or plan.finish is None or plan.pace is None or plan.pace.source != "history":
        return ""
    return plan.header_label()


class PlanState:
    """The app's plan: the last one worked out, and the timer and worker that renew it.

    Every method is safe at any moment of the app's life: before it runs, while the main screen
    mounts, and after it has exited (then nothing is scheduled and nothing is posted)."""

    def __init__(self, host: StudyHost) -> None:
        from textual.signal import Signal

        self._host = weakref.ref(host)
        self.plan: Plan | None = None
        self.problems: tuple[str, ...] = ()
        self.label = ""
        self.builds = 0  # plans worked out (tests wait on it)
        # Published with each new plan; the Today screen subscribes while it is open.
        self.built: Signal[Plan] = Signal(host.node(), "plan-built")
        self._timer: Timer | None = None
        # The plan again when a review due later today comes due: Today says "due now" at the
        # moment practice offers it, not at the next study change.
        self._due_timer: Timer | None = None
        self._building = False
        self._again = False
        self._listening = False

    @property
    def host(self) -> StudyHost | None:
        return self._host()

    def _running_host(self) -> StudyHost | None:
        host = self._host()
        return host if host is not None and host.is_running else None

    def start(self) -> None:
        """Listen to study changes (once) and work the plan out now."""
        host = self._running_host()
        if host is None:
            return
        if not self._listening:
            host.study_changed.subscribe(host.node(), self.study_changed)
            self._listening = True
        self.rebuild()

    def study_changed(self, change: Change | None = None) -> None:
        """Progress, notes or opens changed: work the plan out again once the changes stop."""
        self.schedule()

    def schedule(self, delay: float = REBUILD_DELAY_S) -> None:
        host = self._running_host()
        if host is None:
            return
        if self._timer is not None:
            self._timer.stop()
        # (Textual's timer divides by its delay: never zero.)
        self._timer = host.set_timer(max(delay, 0.01), self.rebuild, name="plan-rebuild")

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self._due_timer is not None:
            self._due_timer.stop()
            self._due_timer = None

    def _watch_reviews(self, host: StudyHost, plan: Plan) -> None:
        """A rebuild when the first review due later today comes due (none: no timer)."""
        if self._due_timer is not None:
            self._due_timer.stop()
            self._due_timer = None
        later = plan.today.later
        if not later:
            return
        delay = (later[0][1] - plan.as_of).total_seconds() + 1.0  # a second past: due by then
        self._due_timer = host.set_timer(max(delay, 0.01), self.rebuild, name="plan-review-due")

    def rebuild(self) -> None:
        """Work the plan out on a worker (one at a time: a change meanwhile builds once more)."""
        self._timer = None
        host = self._running_host()
        if host is None:
            return
        if self._building:
            self._again = True
            return
        inputs = self._inputs(host)
        self._building = True
        host.run_worker(self._work(inputs), name="plan", group="plan", exit_on_error=False)

    def _inputs(self, host: StudyHost) -> PlanInputs:
        from studytui.core import clock

        tz, zone_name = clock.local_zone()
        return PlanInputs(
            guide=host.guide,
            states=dict(host.session.progress),  # canonical ids (flow.canonical_states), copied on the loop
            store=host.store,
            data_dir=Path(host.store.path).parent,
            now=clock.now(),
            tz=tz,
            zone_name=zone_name,
            problem_ids=_problem_ids(host),
        )

    async def _work(self, inputs: PlanInputs) -> None:
        import asyncio

        try:
            plan, problems = await asyncio.to_thread(build, inputs)
        finally:
            self._building = False
        self._apply(plan, problems)
        if self._again:
            self._again = False
            self.rebuild()

    def _apply(self, plan: Plan, problems: tuple[str, ...]) -> None:
        from studytui.tui.messages import PlanChanged

        self.plan, self.problems = plan, problems
        self.builds += 1
        host = self._running_host()
        if host is None:
            return
        self._watch_reviews(host, plan)
        label = header_label(plan)
        if label != self.label:
            self.label = label
            host.post_message(PlanChanged(label))
        self.built.publish(plan)


_STATES: weakref.WeakKeyDictionary[Any, PlanState] = weakref.WeakKeyDictionary()


def plan_state(host: StudyHost) -> PlanState:
    """The host's plan state, made on first use."""
    state = _STATES.get(host)
    if state is None:
        state = _STATES[host] = PlanState(host)
    return state


def _problem_ids(host: StudyHost) -> frozenset[str] | None:
    """The problems the content has, when the practice plug-in has loaded them (reviews of other
    problems are not planned, as `studytui plan` leaves them out); None: every attempted one."""
    practice = host.practice_state
    return practice.problem_ids() if practice is not None else None