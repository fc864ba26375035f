"""The Today screen: what to read today and what the plan says, in the app.

Left (or first, on a narrow terminal): today's share of your pace, what you have studied today,
the practice reviews due (`r` practises them), the next entries that fit (Enter shows one in the
guide), the finish date and the pace, and the estimates per kind with how many of your entries
each rests on. Right (or after): the calendar of the last 12 months and your streaks.

Two columns from WIDE_FROM cells, one below (80x24: the page scrolls, PageUp/PageDown). Every
figure is an estimate and says so; the words are `studytui plan`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from studytui.core.state import glyph_of
from studytui.core.text import plural
from studytui.study.plan import DEFAULT_MINUTES, NO_SOURCE, Plan, clock_text, duration_text, kind_key, later_text, pace_text
from studytui.tui.format import visible_controls
from studytui.tui.host import StudyHost, study_host
from studytui.tui.plan import PRACTICE_SCREEN
from studytui.tui.plan.heatmap import Heatmap
from studytui.tui.screens.refuse import RefusesStudyKeys
from studytui.tui.widgets.footer import StudyFooter

if TYPE_CHECKING:
    from textual import events

    from studytui.tui.plan.state import PlanState

WIDE_FROM = 110  # columns: two columns from here
_HOW = {"history": "your pace", "hours-per-week": "your weekly budget", "by": "the pace your goal needs"}


def _text(text: str) -> str:
    return visible_controls(text)


# -- the words, from a plan (plain text: tests read them) ------------------------------------


def title_line(plan: Plan | None) -> str:
    if plan is None:
        return "Today · working out your plan…"
    return f"Today · {plan.today_date:%a %Y-%m-%d} ({plan.time_zone}) · every figure is an estimate"


TODAY_ROWS = ("Share", "Studied", "Reviews", "Left")


def today_rows(plan: Plan) -> list[tuple[str, str]]:
    """(label, text): today's share, what is studied, the reviews due, what is left."""
    d = duration_text
    today = plan.today
    rows: list[tuple[str, str]] = []
    if today.share_s is not None:
        rows.append(("Share", f"{d(today.share_s)} (a study day at your pace)"))
    rows.append(("Studied", d(today.studied_s)))
    # "Due now" is what `r` (and `studytui practice due`) offers now: the same rule. Reviews due
    # later today are today's load too, named with the time practice offers each from.
    each = plan.reviews.review_s
    parts = []
    if today.reviews:
        ids = ", ".join(pid for pid, _ in today.reviews[:3]) + (", …" if len(today.reviews) > 3 else "")
        parts.append(f"{len(today.reviews)} due now ({d(each * len(today.reviews))}): {ids}; r practises them")
    if today.later:
        parts.append(f"{len(today.later)} due later today ({d(each * len(today.later))}): {later_text(today.later, plan.tz)}")
    if parts:
        rows.append(("Reviews", "\n".join(parts)))
    if today.share_s is not None:
        rows.append(("Left", d(today.left_s or 0)))
    return [(label, _text(text)) for label, text in rows]


def list_heading(plan: Plan) -> str:
    """What the list below is, or why it is empty."""
    today = plan.today
    if not plan.estimates:
        return "Nothing left to read: every entry is done or skipped."
    if today.share_s is None:
        why = "the goal is out of reach" if plan.pace is not None and not plan.pace.feasible else "no pace yet"
        return f"Read next ({why}: the next entry; Enter shows it in the guide):"
    if not today.entries:
        nxt = today.next_up
        return _text(f"Today's share is used up; next: {nxt.entry.title if nxt else '-'}")
    return "Read next (Enter shows it in the guide):"


def entry_prompt(plan: Plan, index: int) -> str:
    item = plan.today.entries[index]
    e = item.estimate
    tail = "" if item.fits or plan.today.share_s is None else " · starts today, carries on"
    return _text(f"{glyph_of(e.state)} {e.entry.title} · {duration_text(e.remaining_s)} left{tail}")


FINISH_ROWS = ("Finish", "Pace", "Remaining", "Reviews")


def finish_lines(plan: Plan) -> list[tuple[str, str]]:
    """(label, text) for the finish, the pace, what remains and the reviews forecast: each an estimate."""
    d = duration_text
    lines: list[tuple[str, str]] = []
    left = plan.estimates
    pace = plan.pace
    if left and plan.finish is not None and pace is not None:
        days = (plan.finish - plan.today_date).days
        span = "today" if days == 0 else (f"in {days} days" if days < 14 else f"in about {days / 7:.0f} weeks")
        lines.append(("Finish", f"~ {plan.finish.isoformat()} at {_HOW[pace.source]} ({span})"))
    elif left and pace is None:
        why = (f"no study time in the last {plan.measured_pace.window_days} days" if plan.measured_pace.window_days
               else "it comes from your own pace, measured from opening an entry to marking it done")
        lines.append(("Finish", f"no date yet: {why} ('studytui plan --hours-per-week H' plans with a budget)"))
    elif left:
        lines.append(("Finish", plan.finish_note))
    if pace is None:
        window = plan.measured_pace.window_days
        lines.append(("Pace", f"no study time in the last {window} days" if window else "not measured yet"))
    else:
        lines.append(("Pace", pace_text(pace, plan.today_date)))  # the words `studytui plan` prints
    if left:
        lines.append(("Remaining", f"about {d(plan.remaining_s)} for {plural(len(left), 'entry')}"))
    else:
        lines.append(("Remaining", "nothing: every entry is done or skipped"))
    if plan.reviews_before_finish:
        lines.append(("Reviews", f"{plural(plan.reviews_before_finish, 'review')} before the finish, about "
                                 f"{d(plan.reviews_before_finish * plan.reviews.review_s)}"))
    return [(label, _text(text)) for label, text in lines]


def kind_rows(plan: Plan) -> list[tuple[str, str, str, str]]:
    """(kind, default, yours, from what) for each kind the guide has left or the history has."""
    cal = plan.calibration
    present = {kind_key(e.entry) for e in plan.estimates} | set(cal.kinds)
    rows: list[tuple[str, str, str, str]] = []
    for key in (*DEFAULT_MINUTES, NO_SOURCE):
        if key not in present:
            continue
        f = cal.factor(key)
        default = plan.config.kind_minutes(key) * 60
        source = {
            "kind": f"{f.samples:,} of this kind",
            "overall": f"all {cal.samples:,} of yours",
            "default": "no history yet",
        }[f.basis]
        rows.append((key, duration_text(default), duration_text(default * f.factor), source))
    return rows


def kind_lines(plan: Plan) -> list[str]:
    rows = kind_rows(plan)
    lines = ["Estimates per kind (yours = default × your factor)"]  # "from": the entries done it rests on
    lines.append(f"{'kind':<10}{'default':>10}{'yours':>13}  from")
    lines += [f"{k:<10}{default:>10}{yours:>13}  {source}" for k, default, yours, source in rows]
    return [_text(line) for line in lines]


KINDS_NOTE = "yours: from your time between first opening an entry and marking it done (docs/study-plan.md)"


def activity_lines(plan: Plan) -> list[str]:
    days = plan.days
    studied = sum(1 for x in days if x.seconds > 0)
    total = sum(x.seconds for x in days)
    return [
        f"Activity, last 12 months: {plural(studied, 'study day')}, {duration_text(total)} in all",
        f"Streak {plural(plan.streak_days, 'day')} now, longest {plural(plan.longest_streak_days, 'day')}",
    ]


def _headed(lines: list[str]) -> Content:
    """The first line bold, the rest plain (never markup)."""
    if not lines:
        return Content("")
    return Content.assemble((lines[0], "bold"), *(("\n" + line) for line in lines[1:]))


def _rows(container_id: str, names: tuple[str, ...]) -> ComposeResult:
    """A block of label/text rows (the text wraps under itself, not under the label)."""
    with Vertical(id=container_id):
        for name in names:
            with Horizontal(id=f"{container_id}-{name.lower()}", classes="today-row"):
                yield Static(name, classes="today-row-label")
                yield Static(classes="today-row-text")


class TodayScreen(RefusesStudyKeys, Screen[None]):
    """Today's reading and reviews, the finish date and pace, the calendar."""

    DEFAULT_CSS = """
    TodayScreen { layout: vertical; }
    #today-body { height: 1fr; layout: horizontal; scrollbar-size-vertical: 1; }
    #today-left { width: 1fr; height: auto; padding: 0 1; }
    #today-right { width: 66; height: auto; padding: 0 1; border-left: vkey $panel-lighten-2; }
    TodayScreen.-narrow #today-body { layout: vertical; }
    TodayScreen.-narrow #today-left { width: 1fr; }
    TodayScreen.-narrow #today-right { width: 1fr; border-left: none; margin-top: 1; }
    #today-heading { margin-top: 1; text-style: bold; }
    #today-next { margin-top: 1; }
    #today-entries { height: auto; max-height: 12; border: none; padding: 0; margin: 0; }
    #today-entries:focus { border: none; }
    #today-numbers, #today-finish { height: auto; }
    #today-finish { margin-top: 1; }
    .today-row { height: auto; }
    .today-row-label { width: 11; }
    .today-row-text { width: 1fr; }
    #today-kinds, #today-problems { margin-top: 1; }
    #today-kinds-note { color: $text-muted; }
    #today-problems { color: $warning; }
    #today-notes { margin-top: 1; color: $text-muted; }
    #today-activity { margin-top: 1; margin-bottom: 1; }
    """

    BINDINGS = [
        Binding("escape", "close", "Back", id="today-close", tooltip="Back to the guide"),
        Binding("r", "reviews", "Practise reviews", id="today-reviews", tooltip="Practise the reviews due"),
        # The page scrolls, whichever part has focus (the entry list would take them otherwise).
        Binding("pagedown", "scroll_body(1)", "Page down", show=False, priority=True),
        Binding("pageup", "scroll_body(-1)", "Page up", show=False, priority=True),
    ]

    def __init__(self, state: PlanState, focus: str | None = None) -> None:
        super().__init__()
        self.state = state
        self._focus = focus  # "activity": show the calendar first
        self.shown: Plan | None = None

    @property
    def host(self) -> StudyHost:
        return study_host(self.app)

    def compose(self) -> ComposeResult:
        yield Static(title_line(None), id="status")
        with VerticalScroll(id="today-body"):
            with Vertical(id="today-left"):
                yield Static(id="today-heading")
                yield from _rows("today-numbers", TODAY_ROWS)
                yield Static(id="today-next")
                yield OptionList(id="today-entries")
                yield from _rows("today-finish", FINISH_ROWS)
                yield Static(id="today-kinds")
                yield Static(KINDS_NOTE, id="today-kinds-note")
                yield Static(id="today-problems")
                yield Static(id="today-notes")
            with Vertical(id="today-right"):
                yield Static(id="today-activity")
                yield Heatmap(id="today-heatmap")
        yield StudyFooter()

    def on_mount(self) -> None:
        self._fit(self.app.size.width)
        for selector in ("#today-problems", "#today-notes"):
            self.query_one(selector, Static).display = False
        self.state.built.subscribe(self, self.show_plan)
        if self.state.plan is not None:
            self.show_plan(self.state.plan)
        self.query_one(OptionList).focus()
        self.state.start()  # afresh: practice answers and the day's end change it too

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        self.set_class(width < WIDE_FROM, "-narrow")
        self.query_one(Footer).compact = width < 100

    # --- showing the plan ---------------------------------------------------------------------
    def show_plan(self, plan: Plan) -> None:
        if not self.is_running or plan == self.shown:
            return
        first = self.shown is None
        self.shown = plan
        self.query_one("#status", Static).update(Content(title_line(plan)))
        self.query_one("#today-heading", Static).update(Content(f"Today, {plan.today.date:%a %Y-%m-%d}"))
        self._fill_rows("today-numbers", TODAY_ROWS, today_rows(plan))
        self.query_one("#today-next", Static).update(Content(list_heading(plan)))
        entries = self.query_one(OptionList)
        entries.set_options([Option(Content(entry_prompt(plan, i)), id=item.estimate.entry.id)
                             for i, item in enumerate(plan.today.entries)])
        entries.display = bool(plan.today.entries)
        if plan.today.entries:
            entries.highlighted = 0
        self._fill_rows("today-finish", FINISH_ROWS, finish_lines(plan))
        self.query_one("#today-kinds", Static).update(_headed(kind_lines(plan)))
        for selector, lines in (("#today-problems", self.state.problems), ("#today-notes", plan.notes)):
            block = self.query_one(selector, Static)
            block.display = bool(lines)
            block.update(Content("\n".join(_text(f"note: {line}") for line in lines)))
        self.query_one("#today-activity", Static).update(_headed(activity_lines(plan)))
        self.query_one(Heatmap).set_days(plan.days)
        if first and self._focus == "activity":
            self.call_after_refresh(self._show_activity)

    def _fill_rows(self, container_id: str, names: tuple[str, ...], values: list[tuple[str, str]]) -> None:
        shown = dict(values)
        for name in names:
            row = self.query_one(f"#{container_id}-{name.lower()}", Horizontal)
            row.display = name in shown
            row.query_one(".today-row-text", Static).update(Content(shown.get(name, "")))

    def _show_activity(self) -> None:
        if self.is_running:
            body = self.query_one("#today-body", VerticalScroll)
            body.scroll_to_widget(self.query_one("#today-right"), animate=False, top=True)

    # --- actions ------------------------------------------------------------------------------
    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.host.jump_to(event.option.id)

    def action_reviews(self) -> None:
        plan = self.shown
        due = len(plan.today.reviews) if plan is not None else 0
        later = plan.today.later if plan is not None else ()
        if PRACTICE_SCREEN not in self.host.registry.screens:
            self.notify("Practice is not part of this app.", severity="warning", timeout=3)
        elif not due and later and plan is not None:
            self.notify(f"No review is due yet: the first is due at {clock_text(later[0][1], plan.tz)}.", timeout=3)
        elif not due:
            self.notify("No practice reviews are due today.", timeout=3)
        else:
            self.host.open_screen(PRACTICE_SCREEN, due=True)

    def action_scroll_body(self, pages: int) -> None:
        if not self.is_running:
            return
        body = self.query_one("#today-body", VerticalScroll)
        if pages > 0:
            body.scroll_page_down(animate=False)
        else:
            body.scroll_page_up(animate=False)

    def action_close(self) -> None:
        """Esc: back to where you were."""
        self.dismiss(None)
