"""The study plan (issue 29): how long what is left takes, when the learner finishes at their own
pace, what to do today, and what they have done - every figure an estimate, and labelled so.

Pure functions over the guide, the event log, practice attempts and a clock. Nothing here reads
the wall clock, the time zone of the machine or the store: the caller passes `now` (an aware
datetime) and the learner's time zone, so a plan can be rebuilt exactly in a test. The one
reader of a file is `load_config` (the learner's `plan.yaml`); nothing here writes anything.

Only the standard library is imported at module level, and records are typed named tuples
(`studytui.core.tuples.Tuple`: a dataclass costs several times more to define, and this module is on
the command's start-up path; issue 27). FSRS (through `studytui.practice.schedule`) is imported
only when there are practice attempts, YAML only when a `plan.yaml` exists.

How the figures are made (docs/study-plan.md says the same for learners):

* **Study time** comes from the event log. Opening an entry, marking it learning or writing its
  note starts it; marking it done, skipped or pending stops it. The time from one event to the
  next counts while at least one entry is started, split equally between the entries started at
  that moment (two entries open at once never count a minute twice). A gap longer than a sitting
  (SITTING_S, 3 h) counts for nothing and ends the sitting: whatever was started is stopped, so an
  entry left open overnight does not count as 14 hours. The time up to a practice answer is
  practice: it counts when it is at most PRACTICE_GAP_S (the gap from another answer), or as
  PRACTICE_GAP_S at most while an entry is started (when the reading stopped is not known), and it
  is never an entry's reading time. Time is put on the learner's calendar days, split at
  local midnight. Time counts once the next event is logged: an entry open right now adds
  nothing until it is marked (or something else happens).
* **Estimates** start from a default per kind (DEFAULT_MINUTES) adjusted by what the content
  knows (an entry without a source is our summary only; watchlist and policy entries are short
  reads; a "try it" link adds the calculator run), each replaceable in `plan.yaml`.
* **Calibration** compares, for every entry the learner has finished, the time from its first
  start to its first "done" with its default: the ratio (clamped to RATIO_CLAMP) is averaged in
  log space and shrunk: the overall factor towards 1 (the default) with PRIOR_SAMPLES pseudo
  samples, and a kind's factor towards the overall one, used only from MIN_KIND_SAMPLES entries
  of that kind. Entries finished in under MIN_SAMPLE_S of measured time are not samples.
* **Pace** is the study time of the last PACE_WINDOW_DAYS days (or since the first study day, at
  least a week; ending yesterday while today has no study time yet) per active day, and active
  days per week; or a weekly budget the learner sets, or the budget a goal date needs.
* **Finish**: the remaining time is worked off at the pace's average daily share; practice
  reviews come first on the day they are due (each forecast again as answered right, with FSRS,
  until the finish), so they delay the finish as their own load.
"""

import math
import re
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from studytui.core.errors import UsageError
from studytui.core.tuples import Tuple
from studytui.guide.model import ALL_KINDS, Entry, Guide
from studytui.store.attempts import Attempt
from studytui.store.model import EntryProgress

# -- the constants of the method (docs/study-plan.md) -----------------------------------------

SITTING_S = 3 * 3600  # a gap longer than this between two events is not study time
PRACTICE_GAP_S = 30 * 60  # the most one practice answer is taken to have taken
MIN_SAMPLE_S = 60  # an entry finished in less measured time than this was marked in passing
PRIOR_SAMPLES = 4  # pseudo samples at the default (overall) / at the overall factor (per kind)
MIN_KIND_SAMPLES = 3  # a kind gets a factor of its own from this many finished entries
RATIO_CLAMP = (0.1, 10.0)  # one entry's measured/default ratio, before averaging
PACE_WINDOW_DAYS = 56  # pace from the last 8 weeks
MIN_PACE_WINDOW_DAYS = 7  # a learner of 2 days is measured over a week
ACTIVITY_DAYS = 365  # the calendar: the last year, today included
HORIZON_DAYS = 3650  # no finish date is given past 10 years
FIRST_FORECAST_DAYS = 120  # reviews are forecast this far first, further only when the finish is later
MAX_STUDY_DAY_S = 8 * 3600  # a weekly budget is spread so no study day holds more than this
WEEK_S = 7 * 24 * 3600
DEFAULT_REVIEW_S = 180.0  # one practice review
LEARNING_FLOOR = 0.25  # an entry started but not done has at least this share of its estimate left
MAX_FORECAST_REVIEWS = 64  # per problem, up to the finish

# Minutes per kind: a reading of the source as the guide asks (a paper with its shapes written
# down, a docs chapter with its examples run). A book or a course is many sittings.
DEFAULT_MINUTES: dict[str, float] = {
    "paper": 120, "spec": 90, "docs": 60, "repo": 90, "report": 45, "book": 1200, "course": 1200, "blog": 30,
}
NO_SOURCE = "no-source"  # an entry with no kind: a watchlist item whose only text is our summary
# What the content knows beyond the kind, each a key `plan.yaml` may set too.
ADJUSTMENT_MINUTES: dict[str, float] = {
    NO_SOURCE: 5,  # our summary alone
    "watchlist": 20,  # at most: a watchlist item is something to know about, not core reading
    "policy": 15,  # at most: the guide's own rules
    "try-it": 10,  # added: running the entry's calculator example
}
CONFIG_NAME = "plan.yaml"
CONFIG_KEYS = ("minutes", "review_minutes")
MAX_CONFIG_MINUTES = 60_000.0  # 1,000 hours: past this a typo

STUDY_EVENT_KINDS = frozenset({"open", "state", "note", "section_note"})  # import and rename are bookkeeping
_STARTS = frozenset({"learning"})
_STOPS = frozenset({"done", "skipped", "pending"})

# Calendar shading: the character for a day's study time, readable without colour.
SHADES = ("·", "░", "▒", "▓", "█")
SHADE_LIMITS_S = (30 * 60, 3600, 2 * 3600)  # under 30 min, under 1 h, under 2 h, 2 h or more
SHADE_LEGEND = "· none  ░ under 30 min  ▒ under 1 h  ▓ under 2 h  █ 2 h or more"
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


# -- configuration ----------------------------------------------------------------------------


class PlanConfig(Tuple):
    """The learner's `plan.yaml`: minutes per kind (or adjustment) replacing the defaults, and
    the time of one practice review."""

    minutes: Mapping[str, float] = MappingProxyType({})
    review_s: float = DEFAULT_REVIEW_S
    source: str | None = None  # the file read, for the report

    def kind_minutes(self, key: str) -> float:
        if key in self.minutes:
            return self.minutes[key]
        return DEFAULT_MINUTES[key] if key in DEFAULT_MINUTES else ADJUSTMENT_MINUTES[key]


def _config_number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{where} must be a number of minutes from 1 to {MAX_CONFIG_MINUTES:,.0f}, not {_shown(value)}")
    number = float(value) if isinstance(value, float) or abs(value) <= MAX_CONFIG_MINUTES else math.inf
    if not math.isfinite(number) or not 1 <= number <= MAX_CONFIG_MINUTES:
        raise UsageError(f"{where} must be a number of minutes from 1 to {MAX_CONFIG_MINUTES:,.0f}, not {_shown(value)}")
    return number


def _shown(value: Any) -> str:
    """A value the learner gave, short and on one line (escaped by repr)."""
    try:
        text = repr(value)
    except ValueError:  # an integer of more digits than Python converts to text
        return "a number too long to show"
    return text if len(text) <= 40 else text[:37] + "..."


def parse_config(data: Any, where: str = CONFIG_NAME) -> PlanConfig:
    """A parsed `plan.yaml` checked key by key; UsageError (one line naming the key) otherwise.
    An empty file is no configuration."""
    if data is None:
        return PlanConfig(source=where)
    if not isinstance(data, dict):
        raise UsageError(f"{where}: must be a mapping with {' and/or '.join(CONFIG_KEYS)}, not {type(data).__name__}")
    unknown = [k for k in data if k not in CONFIG_KEYS]
    if unknown:
        raise UsageError(f"{where}: unknown key {_shown(unknown[0])} (known: {', '.join(CONFIG_KEYS)})")
    minutes: dict[str, float] = {}
    raw = data.get("minutes")
    if raw is not None:
        if not isinstance(raw, dict):
            raise UsageError(f"{where}: minutes must be a mapping of kind to minutes, not {type(raw).__name__}")
        known = (*ALL_KINDS, *ADJUSTMENT_MINUTES)
        for key, value in raw.items():
            if key not in known:
                raise UsageError(f"{where}: minutes: unknown kind {_shown(key)} (one of {', '.join(known)})")
            minutes[key] = _config_number(value, f"{where}: minutes.{key}")
    review_s = DEFAULT_REVIEW_S
    if data.get("review_minutes") is not None:
        review_s = _config_number(data["review_minutes"], f"{where}: review_minutes") * 60
    return PlanConfig(minutes=minutes, review_s=review_s, source=where)


def load_config(path: Path) -> PlanConfig:
    """`plan.yaml` at `path` (the data directory's), or the defaults when there is none. Read
    within the YAML size limit, aliases bounded (`studytui.core.yamlio.load_user_yaml`)."""
    if not path.exists() and not path.is_symlink():
        return PlanConfig()
    from studytui.core.yamlio import load_user_yaml

    return parse_config(load_user_yaml(path, "the plan configuration"), str(path))


# -- estimates --------------------------------------------------------------------------------


def kind_key(entry: Entry) -> str:
    """The group an entry is calibrated in: its kind, or NO_SOURCE."""
    return entry.kind if entry.kind in DEFAULT_MINUTES else NO_SOURCE


def default_estimate(entry: Entry, config: PlanConfig | None = None) -> tuple[float, str]:
    """(seconds, how it was made) before calibration: the kind's default, adjusted by what the
    content knows about the entry."""
    config = config or PlanConfig()
    key = kind_key(entry)
    minutes = config.kind_minutes(key)
    why = [f"{key} {minutes:g} min"]
    if entry.role == "watchlist" and key != NO_SOURCE and minutes > config.kind_minutes("watchlist"):
        minutes = config.kind_minutes("watchlist")
        why.append(f"watchlist: {minutes:g} min")
    if entry.role == "policy" and minutes > config.kind_minutes("policy"):
        minutes = config.kind_minutes("policy")
        why.append(f"policy: {minutes:g} min")
    if entry.try_it is not None:
        extra = config.kind_minutes("try-it")
        minutes += extra
        why.append(f"+ {extra:g} min try-it")
    return minutes * 60.0, "; ".join(why)


# -- reading the log --------------------------------------------------------------------------


def parse_time(text: Any) -> datetime | None:
    """A stored ISO time as an aware UTC datetime; None for anything unreadable (a hand-edited
    file): such an event is left out, never an error."""
    if not isinstance(text, str):
        return None
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    try:
        return parsed.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        return None


def local_date(moment: datetime, tz: tzinfo) -> date:
    return moment.astimezone(tz).date()


def day_start(day: date, tz: tzinfo) -> datetime:
    """The first instant of `day` in `tz`, in UTC (local midnight; where a time change skips
    midnight, the first local time that exists)."""
    start = datetime.combine(day, time(0), tzinfo=tz).astimezone(timezone.utc)
    if local_date(start, tz) < day:  # midnight did not exist: move to the first hour that does
        start += timedelta(hours=1)
    return start


class _Item(Tuple):
    at: datetime
    order: int
    kind: str  # "start", "stop", "done", "touch", "attempt"
    entry_id: str | None


def _items(guide: Guide, events: Iterable[Mapping[str, Any]], attempts: Iterable[Attempt], now: datetime) -> tuple[list[_Item], int]:
    """The log as one ordered timeline; (items, how many were left out: unreadable or future)."""
    items: list[_Item] = []
    left_out = 0
    order = 0
    for event in events:
        kind = event.get("kind")
        if kind not in STUDY_EVENT_KINDS:
            continue
        at = parse_time(event.get("at"))
        if at is None or at > now:
            left_out += 1
            continue
        raw_id = event.get("entry_id")
        entry = guide.get(raw_id) if isinstance(raw_id, str) else None
        entry_id = entry.id if entry is not None else (raw_id if isinstance(raw_id, str) else None)
        action = "touch"
        if kind == "open" or kind == "note":
            action = "start"
        elif kind == "state":
            data = event.get("data")
            state = data.get("state") if isinstance(data, dict) else None
            action = "start" if state in _STARTS else "done" if state == "done" else "stop" if state in _STOPS else "touch"
        if entry_id is None and action != "touch":
            action = "touch"
        items.append(_Item(at, order, action, entry_id))
        order += 1
    for attempt in attempts:
        at = parse_time(attempt.at)
        if at is None or at > now:
            left_out += 1
            continue
        items.append(_Item(at, order, "attempt", None))
        order += 1
    items.sort(key=lambda i: (i.at, i.order))
    return items, left_out


class Timeline:
    """What the log says: study seconds and events per local day, seconds spent per entry, and
    the measured time of each entry from its first start to its first "done"."""

    __slots__ = ("day_seconds", "day_events", "spent_s", "to_done_s", "left_out")

    def __init__(self, left_out: int = 0) -> None:
        self.day_seconds: dict[date, float] = {}
        self.day_events: dict[date, int] = {}
        self.spent_s: dict[str, float] = {}
        self.to_done_s: dict[str, float] = {}  # entries finished: measured time at their first "done"
        self.left_out = left_out  # events with an unreadable or future time


def _credit(timeline: Timeline, start: datetime, end: datetime, tz: tzinfo) -> None:
    """Put the interval [start, end) on the learner's days, split at local midnight."""
    while start < end:
        day = local_date(start, tz)
        boundary = day_start(day + timedelta(days=1), tz)
        if boundary <= start:  # cannot happen with a sane zone; never loop for ever
            boundary = end
        stop = min(end, boundary)
        timeline.day_seconds[day] = timeline.day_seconds.get(day, 0.0) + (stop - start).total_seconds()
        start = stop


def read_timeline(
    guide: Guide, events: Iterable[Mapping[str, Any]], attempts: Iterable[Attempt], now: datetime, tz: tzinfo
) -> Timeline:
    """The study time in the log (see the module's docstring for the rules)."""
    items, left_out = _items(guide, events, attempts, now)
    out = Timeline(left_out=left_out)
    started: dict[str, None] = {}  # entries started and not stopped, in this sitting (ordered)
    previous: _Item | None = None
    for item in items:
        if previous is not None:
            gap = (item.at - previous.at).total_seconds()
            if gap > SITTING_S:
                started.clear()  # a new sitting: nothing carries over
            elif gap > 0 and item.kind == "attempt":
                # The time up to a practice answer is practice, whatever else is open: at most
                # PRACTICE_GAP_S of it (when reading stopped before it is not known), and none of it
                # is an entry's reading time.
                if previous.kind == "attempt" and gap <= PRACTICE_GAP_S:
                    _credit(out, previous.at, item.at, tz)
                elif previous.kind != "attempt" and started:
                    _credit(out, item.at - timedelta(seconds=min(gap, PRACTICE_GAP_S)), item.at, tz)
            elif gap > 0 and started:
                _credit(out, previous.at, item.at, tz)
                share = gap / len(started)
                for entry_id in started:
                    out.spent_s[entry_id] = out.spent_s.get(entry_id, 0.0) + share
        day = local_date(item.at, tz)
        out.day_events[day] = out.day_events.get(day, 0) + 1
        if item.entry_id is not None:
            if item.kind == "start":
                started.pop(item.entry_id, None)
                started[item.entry_id] = None
            elif item.kind in ("stop", "done"):
                started.pop(item.entry_id, None)
                if item.kind == "done" and item.entry_id not in out.to_done_s:
                    out.to_done_s[item.entry_id] = out.spent_s.get(item.entry_id, 0.0)
        previous = item
    return out


# -- calibration ------------------------------------------------------------------------------


class KindFactor(Tuple):
    kind: str
    samples: int  # finished entries of this kind with measured time
    factor: float  # applied to the default
    basis: str  # "kind", "overall" or "default"


class Calibration(Tuple):
    samples: int
    overall_factor: float
    kinds: Mapping[str, KindFactor]
    excluded: int  # finished entries whose measured time was under MIN_SAMPLE_S

    def factor(self, key: str) -> KindFactor:
        found = self.kinds.get(key)
        if found is not None:
            return found
        return KindFactor(key, 0, self.overall_factor, "overall" if self.samples else "default")

    @property
    def method(self) -> str:
        return (
            "your time from first starting an entry (opening it, marking it learning or writing its note) to marking it "
            f"done, gaps over {SITTING_S // 3600} h dropped, divided by its default (each ratio kept within "
            f"{RATIO_CLAMP[0]:g}-{RATIO_CLAMP[1]:g}) and averaged in log space; the overall factor is "
            f"shrunk towards the default as if {PRIOR_SAMPLES} more entries had taken exactly the default, and a kind "
            f"with at least {MIN_KIND_SAMPLES} finished entries gets its own factor, shrunk the same way towards the "
            f"overall one; entries done in under {MIN_SAMPLE_S} s of measured time are not counted"
        )


def calibrate(samples: Sequence[tuple[str, float, float]], excluded: int = 0) -> Calibration:
    """`samples`: (kind key, measured seconds, default seconds) per finished entry."""
    low, high = RATIO_CLAMP
    logs: dict[str, list[float]] = {}
    for key, measured, default in samples:
        if default <= 0 or not math.isfinite(measured) or measured <= 0:
            continue
        ratio = min(high, max(low, measured / default))
        logs.setdefault(key, []).append(math.log(ratio))
    every = [v for values in logs.values() for v in values]
    overall_log = sum(every) / (len(every) + PRIOR_SAMPLES)
    kinds: dict[str, KindFactor] = {}
    for key in sorted(logs):
        values = logs[key]
        if len(values) >= MIN_KIND_SAMPLES:
            kind_log = (sum(values) + PRIOR_SAMPLES * overall_log) / (len(values) + PRIOR_SAMPLES)
            kinds[key] = KindFactor(key, len(values), math.exp(kind_log), "kind")
        else:
            kinds[key] = KindFactor(key, len(values), math.exp(overall_log), "overall")
    return Calibration(len(every), math.exp(overall_log), kinds, excluded)


class Estimate(Tuple):
    """One remaining entry: its estimate, what it was made from, and what is left of it."""

    entry: Entry
    state: str
    default_s: float
    estimate_s: float
    spent_s: float
    remaining_s: float
    calibrated: bool
    basis: str  # "kind" (this kind's history), "overall" (all history) or "default"
    why: str  # how the default was made

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.entry.id,
            "title": self.entry.title,
            "kind": self.entry.kind,
            "state": self.state,
            "estimate_s": round(self.estimate_s),
            "remaining_s": round(self.remaining_s),
            "spent_s": round(self.spent_s),
            "default_s": round(self.default_s),
            "calibrated": self.calibrated,
            "basis": self.basis,
        }


def estimate_entries(
    guide: Guide, states: Mapping[str, EntryProgress], timeline: Timeline, config: PlanConfig
) -> tuple[list[Estimate], Calibration]:
    """The remaining entries (pending or learning) in guide order, each with its calibrated
    estimate; and the calibration itself."""
    samples: list[tuple[str, float, float]] = []
    excluded = 0
    for entry_id, measured in timeline.to_done_s.items():
        entry = guide.get(entry_id)
        if entry is None:
            continue
        if measured < MIN_SAMPLE_S:
            excluded += 1
            continue
        samples.append((kind_key(entry), measured, default_estimate(entry, config)[0]))
    calibration = calibrate(samples, excluded)
    out: list[Estimate] = []
    for entry in guide.entries:
        progress = states.get(entry.id)
        state = progress.state if progress is not None else "pending"
        if state not in ("pending", "learning"):
            continue
        default_s, why = default_estimate(entry, config)
        factor = calibration.factor(kind_key(entry))
        estimate = default_s * factor.factor
        spent = timeline.spent_s.get(entry.id, 0.0)
        remaining = estimate if spent <= 0 else max(estimate - spent, estimate * LEARNING_FLOOR)
        out.append(Estimate(entry, state, default_s, estimate, spent, remaining, factor.basis != "default", factor.basis, why))
    return out, calibration


# -- practice reviews -------------------------------------------------------------------------


class ReviewLoad(Tuple):
    """Practice reviews as their own load: per local day (from today), the problems forecast due."""

    by_day: Mapping[date, tuple[str, ...]]
    review_s: float
    due_today: tuple[tuple[str, datetime], ...]  # (problem id, due time) due by the end of today
    # Those of `due_today` due at `now` by the definition `studytui practice due` and the app's
    # practice screen use (studytui.practice.schedule.due): the reviews they offer now.
    due_now: tuple[tuple[str, datetime], ...] = ()

    @property
    def later_today(self) -> tuple[tuple[str, datetime], ...]:
        """Reviews due later today: part of today's load, not yet offered by `practice due`."""
        now_ids = {pid for pid, _ in self.due_now}
        return tuple(item for item in self.due_today if item[0] not in now_ids)

    def seconds_through(self, day: date) -> float:
        return self.review_s * sum(len(v) for d, v in self.by_day.items() if d <= day)

    def count_through(self, day: date) -> int:
        return sum(len(v) for d, v in self.by_day.items() if d <= day)


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def forecast_reviews(
    attempts: Sequence[Attempt], now: datetime, tz: tzinfo, until: date, review_s: float = DEFAULT_REVIEW_S,
    known: Iterable[str] | None = None,
) -> ReviewLoad:
    """Every review due by the end of `until`: each problem's next FSRS due date (an overdue one
    counts today, imagined at the start of today), then, assuming each review is answered right
    on its day, the next, and so on. Problems not in `known` (when given: ones the content no
    longer has) are left out."""
    return _Forecast(attempts, now, tz, review_s, known).load(until)


class _Forecast:
    """The reviews forecast for one learner at one moment, worked out as far as asked and kept:
    the forecast to a nearer day is the start of the forecast to a farther one, so a plan that
    looks further for its finish (build_plan) extends it rather than replaying it from the start."""

    def __init__(self, attempts: Sequence[Attempt], now: datetime, tz: tzinfo, review_s: float,
                 known: Iterable[str] | None) -> None:
        keep = set(known) if known is not None else None
        usable = [a for a in attempts if parse_time(a.at) is not None and (keep is None or a.problem_id in keep)]
        self.now, self.tz, self.review_s = now, tz, review_s
        # Per problem: the learner's attempts and the next due time.
        self.problems: list[tuple[str, list[Attempt], datetime]] = []
        self.starts: dict[str, datetime] = {}
        self.due_today: tuple[tuple[str, datetime], ...] = ()
        self.due_now: tuple[tuple[str, datetime], ...] = ()
        if not usable:
            return
        from studytui.practice import schedule

        today = local_date(now, tz)
        end_of_today = day_start(today + timedelta(days=1), tz)
        by_problem: dict[str, list[Attempt]] = {}
        for a in sorted(usable, key=lambda a: a.at):
            by_problem.setdefault(a.problem_id, []).append(a)
        current = schedule.reviews(usable)
        # Due now: the one definition practice uses (schedule.due), so the plan never offers a review
        # that `studytui practice due` and the app's `r` do not.
        due_now = tuple((r.problem_id, r.due.astimezone(timezone.utc)) for r in schedule.due(current, now))
        due_today: list[tuple[str, datetime]] = []
        for pid in sorted(current):
            due = current[pid].due.astimezone(timezone.utc)
            if due < end_of_today:
                due_today.append((pid, due))
            self.problems.append((pid, list(by_problem[pid]), due))
        due_today.sort(key=lambda item: (item[1], item[0]))
        self.due_today = tuple(due_today)
        self.due_now = tuple(sorted(due_now, key=lambda item: (item[1], item[0])))
        # Each problem's first imagined review: at its due time, or, overdue, at the start of today
        # (the forecast is by the day: "answered right on its day"). Neither moves with the clock
        # within a day, so the imagined reviews are kept between runs (schedule.imagined_times).
        start_of_today = day_start(today, tz).astimezone(timezone.utc)
        self.starts = {pid: max(due, start_of_today) for pid, _, due in self.problems}
        self._times: dict[str, list[datetime]] = {}
        self._days: dict[str, list[date]] = {}  # the local day of each of those times
        self._times_until: datetime | None = None

    def load(self, until: date) -> ReviewLoad:
        if not self.problems:
            return ReviewLoad({}, self.review_s, ())
        now, tz = self.now, self.tz
        by_day: dict[date, list[str]] = {}
        until_end = day_start(until + timedelta(days=1), tz).astimezone(timezone.utc)  # the first moment after `until`
        if self._times_until is None or until_end > self._times_until:
            from studytui.practice import schedule

            # As far as any plan looks (HORIZON_DAYS) at once: one reading of the kept reviews
            # however often build_plan looks further for the finish.
            reach = max(until_end, day_start(local_date(now, tz) + timedelta(days=HORIZON_DAYS + 1), tz).astimezone(timezone.utc))
            self._times = schedule.imagined_times({pid: history for pid, history, _ in self.problems}, self.starts,
                                                  reach, MAX_FORECAST_REVIEWS)
            self._times_until = reach
            self._days = {pid: [local_date(at, tz) for at in times] for pid, times in self._times.items()}
        for pid, _, _ in self.problems:
            for at, day in zip(self._times[pid], self._days[pid]):
                if at >= until_end:
                    break
                by_day.setdefault(day, []).append(pid)
        return ReviewLoad({d: tuple(v) for d, v in sorted(by_day.items())}, self.review_s, self.due_today, self.due_now)


# -- pace and finish --------------------------------------------------------------------------


class Pace(Tuple):
    seconds_per_day: float  # per study day
    active_days_per_week: float
    source: str  # "history", "hours-per-week" or "by"
    window_days: int  # history: the days measured
    active_days: int  # history: days with study time in the window
    assumed_days: bool = False  # the days per week are assumed (no history), not measured
    by: date | None = None
    feasible: bool = True  # "by": the hours it needs fit in a week

    @property
    def seconds_per_week(self) -> float:
        return self.seconds_per_day * self.active_days_per_week

    @property
    def daily_capacity_s(self) -> float:
        """The average share of one calendar day, the rate the finish date assumes."""
        return self.seconds_per_week / 7.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "seconds_per_day": round(self.seconds_per_day),
            "active_days_per_week": round(self.active_days_per_week, 2),
            "seconds_per_week": round(self.seconds_per_week),
            "source": self.source,
            "window_days": self.window_days,
            "active_days": self.active_days,
            "assumed_days_per_week": self.assumed_days,
            "by": self.by.isoformat() if self.by else None,
            "feasible": self.feasible,
        }


def history_pace(timeline: Timeline, today: date) -> Pace:
    """Study time per active day and active days per week over the last PACE_WINDOW_DAYS days
    (from the first study day when that is more recent, but over at least a week). The window
    ends today once today has study time, else yesterday: a day not over yet is not a day off."""
    studied = sorted(d for d, s in timeline.day_seconds.items() if s > 0 and d <= today)
    if not studied:
        return Pace(0.0, 0.0, "history", 0, 0)
    end = today if studied[-1] == today else today - timedelta(days=1)
    span = (end - studied[0]).days + 1
    window = max(MIN_PACE_WINDOW_DAYS, min(PACE_WINDOW_DAYS, span))
    first = end - timedelta(days=window - 1)
    in_window = [d for d in studied if d >= first]
    total = sum(timeline.day_seconds[d] for d in in_window)
    if not in_window:
        return Pace(0.0, 0.0, "history", window, 0)
    return Pace(total / len(in_window), len(in_window) * 7.0 / window, "history", window, len(in_window))


def _days_for_budget(weekly_s: float, measured: Pace) -> tuple[float, bool]:
    """The study days per week a weekly budget is spread over: the learner's own (at least one),
    or every day when there is no history; more when a study day would hold over MAX_STUDY_DAY_S."""
    base, assumed = (measured.active_days_per_week, False) if measured.active_days_per_week > 0 else (7.0, True)
    return min(7.0, max(base, 1.0, weekly_s / MAX_STUDY_DAY_S)), assumed


def budget_pace(hours_per_week: float, measured: Pace) -> Pace:
    weekly = hours_per_week * 3600.0
    days, assumed = _days_for_budget(weekly, measured)
    return Pace(weekly / days, days, "hours-per-week", measured.window_days, measured.active_days, assumed)


def finish_offset(
    entries_s: float, reviews: ReviewLoad, today: date, capacity_per_day: float, last: int = HORIZON_DAYS
) -> int | None:
    """Days from today to the finish: the first day by whose end the capacity so far covers
    every review due so far and all the entries. None past `last` days (or with no capacity);
    `reviews` must be forecast at least that far."""
    if entries_s <= 0:
        return 0
    if capacity_per_day <= 0 or not math.isfinite(capacity_per_day):
        return None
    loads = _review_seconds_by_offset(reviews, today, last)
    due = 0.0
    for offset in range(last + 1):
        due += loads.get(offset, 0.0)
        if capacity_per_day * (offset + 1) >= due + entries_s - 1e-6:
            return offset
    return None


def _review_seconds_by_offset(reviews: ReviewLoad, today: date, last: int) -> dict[int, float]:
    out: dict[int, float] = {}
    for day, problems in reviews.by_day.items():
        offset = max(0, (day - today).days)
        if offset <= last:
            out[offset] = out.get(offset, 0.0) + reviews.review_s * len(problems)
    return out


def needed_capacity(entries_s: float, reviews: ReviewLoad, today: date, by: date) -> float:
    """The smallest daily capacity that finishes by the end of `by`."""
    last = (by - today).days
    if entries_s <= 0:
        return 0.0
    loads = _review_seconds_by_offset(reviews, today, last)
    due, best = 0.0, math.inf
    for offset in range(last + 1):
        due += loads.get(offset, 0.0)
        best = min(best, (due + entries_s) / (offset + 1))
    return best


# -- today --------------------------------------------------------------------------------------


class TodayEntry(Tuple):
    estimate: Estimate
    fits: bool  # the whole of what is left fits in what is left of today's share

    def to_dict(self) -> dict[str, Any]:
        e = self.estimate
        return {"id": e.entry.id, "title": e.entry.title, "kind": e.entry.kind, "state": e.state,
                "remaining_s": round(e.remaining_s), "fits": self.fits}


class Today(Tuple):
    date: date
    share_s: float | None  # None: no pace to share out
    studied_s: float
    reviews: tuple[tuple[str, datetime], ...]  # due now: what `studytui practice due` and `r` offer
    reviews_s: float  # the time of every review due today: those due now and those due later today
    left_s: float | None
    entries: tuple[TodayEntry, ...]
    next_up: Estimate | None = None  # the first entry in study order, whether it fits or not
    later: tuple[tuple[str, datetime], ...] = ()  # due later today (practice offers each from its time)

    def to_dict(self) -> dict[str, Any]:
        return {
            "date": self.date.isoformat(),
            "share_s": None if self.share_s is None else round(self.share_s),
            "studied_s": round(self.studied_s),
            "reviews": [{"problem_id": pid, "due": _iso(due)} for pid, due in self.reviews],
            "later_reviews": [{"problem_id": pid, "due": _iso(due)} for pid, due in self.later],
            "reviews_s": round(self.reviews_s),
            "left_s": None if self.left_s is None else round(self.left_s),
            "entries": [e.to_dict() for e in self.entries],
            "next": None if self.next_up is None else self.next_up.entry.id,
        }


def study_order(estimates: Sequence[Estimate], start_index: int | None) -> list[Estimate]:
    """What to read next: entries already being learned first (guide order), then pending ones
    in guide order from `start_index` (flow.pending_start), wrapping around. The first is the
    entry `studytui next` and the app's "Continue:" offer (flow.continue_entry, the same rule)."""
    learning = [e for e in estimates if e.state == "learning"]
    pending = [e for e in estimates if e.state != "learning"]
    if start_index is not None:
        pending = [e for e in pending if e.entry.index >= start_index] + [e for e in pending if e.entry.index < start_index]
    return learning + pending


def plan_today(
    today: date, ordered: Sequence[Estimate], pace: Pace | None, studied_s: float, reviews: ReviewLoad
) -> Today:
    """The next entries that fit what is left of today's share once today's reviews are done;
    the first one always, even when it takes more than one day."""
    reviews_s = reviews.review_s * len(reviews.due_today)
    now_due, later = reviews.due_now, reviews.later_today
    next_up = ordered[0] if ordered else None
    if pace is None or pace.seconds_per_day <= 0:
        first = [TodayEntry(e, False) for e in ordered[:1]]
        first += [TodayEntry(e, False) for e in ordered[1:] if e.state == "learning"]
        return Today(today, None, studied_s, now_due, reviews_s, None, tuple(first), next_up, later)
    left = max(0.0, pace.seconds_per_day - studied_s - reviews_s)
    chosen: list[TodayEntry] = []
    budget = left
    for e in ordered:
        if e.remaining_s <= budget + 1e-6:
            chosen.append(TodayEntry(e, True))
            budget -= e.remaining_s
        elif not chosen and left > 0:
            chosen.append(TodayEntry(e, False))  # starts today, carries on later
            break
        else:
            break
    # Every entry already in progress is on today's list, even past today's share: one left out
    # would look dropped (round-3 review: a second entry marked learning disappeared from Today).
    listed = {c.estimate.entry.id for c in chosen}
    chosen += [TodayEntry(e, False) for e in ordered if e.state == "learning" and e.entry.id not in listed]
    return Today(today, pace.seconds_per_day, studied_s, now_due, reviews_s, left, tuple(chosen), next_up, later)


# -- activity and streaks -----------------------------------------------------------------------


class Day(Tuple):
    date: date
    seconds: float
    events: int

    @property
    def active(self) -> bool:
        return self.events > 0 or self.seconds > 0

    def to_dict(self) -> dict[str, Any]:
        return {"date": self.date.isoformat(), "seconds": round(self.seconds), "events": self.events}


def activity(timeline: Timeline, today: date, days: int = ACTIVITY_DAYS) -> list[Day]:
    """Every day of the last `days` (today included), oldest first."""
    first = today - timedelta(days=days - 1)
    return [
        Day(d, timeline.day_seconds.get(d, 0.0), timeline.day_events.get(d, 0))
        for d in (first + timedelta(days=i) for i in range(days))
    ]


def streaks(active_days: Iterable[date], today: date) -> tuple[int, int]:
    """(current, longest) runs of consecutive active days. The current run ends today, or
    yesterday while today has nothing yet (the day is not over); days after today are ignored."""
    days = sorted({d for d in active_days if d <= today})
    longest = run = 0
    previous: date | None = None
    for d in days:
        run = run + 1 if previous is not None and (d - previous).days == 1 else 1
        longest = max(longest, run)
        previous = d
    current = 0
    if days and (today - days[-1]).days <= 1:
        current = run
    return current, longest


def shade(seconds: float, events: int = 0) -> str:
    """The calendar character for a day: '·' nothing, then by study time (a day with events but
    no measured time gets the lightest shade)."""
    if seconds <= 0:
        return SHADES[1] if events > 0 else SHADES[0]
    for level, limit in enumerate(SHADE_LIMITS_S, start=1):
        if seconds < limit:
            return SHADES[level]
    return SHADES[-1]


def heatmap_rows(days: Sequence[Day]) -> list[tuple[str, list[Day | None]]]:
    """The calendar as 7 rows (Monday first) of weeks, each cell a Day or None (outside the
    range); with the month labels as the first row's string ('' label). Columns are weeks."""
    if not days:
        return []
    first, last = days[0].date, days[-1].date
    start = first - timedelta(days=first.weekday())
    weeks = (last - start).days // 7 + 1
    by_date = {d.date: d for d in days}
    grid: list[list[Day | None]] = [[None] * weeks for _ in range(7)]
    for column in range(weeks):
        for row in range(7):
            grid[row][column] = by_date.get(start + timedelta(days=column * 7 + row))
    # A month's label sits over the week holding its 1st; the first, partial month is labelled
    # too where its label does not run into the next one.
    starts: list[tuple[int, int]] = []  # (column, month)
    for column in range(weeks):
        for r in range(7):
            d = start + timedelta(days=column * 7 + r)
            if first <= d <= last and d.day == 1:
                starts.append((column, d.month))
    if not starts or starts[0][0] >= 4:
        starts.insert(0, (0, first.month))
    months = [" "] * (weeks + 3)
    free_from = 0
    for column, month in starts:
        if column < free_from:
            continue
        for i, ch in enumerate(MONTHS[month - 1]):
            months[column + i] = ch
        free_from = column + 4  # three letters and a space
    out: list[tuple[str, list[Day | None]]] = [("".join(months).rstrip(), [])]
    out.extend((WEEKDAYS[row], grid[row]) for row in range(7))
    return out


def heatmap_lines(days: Sequence[Day]) -> list[str]:
    """The calendar as plain text (label column of 4, one character per day, weeks as columns):
    57 columns for a year, readable without colour."""
    rows = heatmap_rows(days)
    if not rows:
        return []
    lines = ["    " + rows[0][0].rstrip()]
    for label, cells in rows[1:]:
        lines.append(f"{label} " + "".join(" " if c is None else shade(c.seconds, c.events) for c in cells).rstrip())
    return lines


# -- the plan ---------------------------------------------------------------------------------------


class Plan(Tuple):
    as_of: datetime
    today_date: date
    time_zone: str
    tz: tzinfo
    estimates: tuple[Estimate, ...]
    calibration: Calibration
    config: PlanConfig
    pace: Pace | None  # None: no study time measured and no budget given
    measured_pace: Pace
    finish: date | None
    finish_note: str  # why there is no finish date, or what it rests on
    reviews: ReviewLoad
    reviews_before_finish: int
    today: Today
    days: tuple[Day, ...]
    streak_days: int
    longest_streak_days: int
    notes: tuple[str, ...]

    @property
    def remaining_s(self) -> float:
        return sum(e.remaining_s for e in self.estimates)

    @property
    def needed_hours_per_week(self) -> float | None:
        return self.pace.seconds_per_week / 3600.0 if self.pace is not None and self.pace.source == "by" else None

    def header_label(self) -> str:
        """One line for a header: 'finish ~ 2027-03-14 at your pace' (or why there is none)."""
        if not self.estimates:
            return "guide finished"
        if self.finish is None:
            if self.pace is None:
                return "finish: no pace yet"
            if not self.pace.feasible:
                return f"finish by {self.pace.by}: out of reach"
            return f"finish: over {HORIZON_DAYS // 365} years at this pace"
        how = {"history": "at your pace", "hours-per-week": "at your budget", "by": "at the pace your goal needs"}
        return f"finish ~ {self.finish.isoformat()} {how[self.pace.source if self.pace else 'history']}"

    def to_dict(self) -> dict[str, Any]:
        cal = self.calibration
        return {
            "all_figures_are_estimates": True,
            "as_of": _iso(self.as_of),
            "date": self.today_date.isoformat(),
            "time_zone": self.time_zone,
            "entries": [e.to_dict() for e in self.estimates],
            "remaining_s": round(self.remaining_s),
            "pace": None if self.pace is None else self.pace.to_dict(),
            "finish": self.finish.isoformat() if self.finish else None,
            "finish_note": self.finish_note,
            "reviews": {
                "review_s": round(self.reviews.review_s),
                "due_today": len(self.reviews.due_today),
                "due_now": len(self.reviews.due_now),
                "before_finish": self.reviews_before_finish,
                "seconds_before_finish": round(self.reviews_before_finish * self.reviews.review_s),
            },
            "today": self.today.to_dict(),
            "activity": [d.to_dict() for d in self.days],
            "streak_days": self.streak_days,
            "longest_streak_days": self.longest_streak_days,
            "calibration": {
                "method": cal.method,
                "samples": cal.samples,
                "excluded": cal.excluded,
                "overall_factor": round(cal.overall_factor, 4),
                "kinds": {
                    key: {
                        "default_s": round(self.config.kind_minutes(key) * 60),
                        "factor": round(k.factor, 4),
                        "samples": k.samples,
                        "basis": k.basis,
                    }
                    for key, k in ((key, cal.factor(key)) for key in (*DEFAULT_MINUTES, NO_SOURCE))
                },
                "config": self.config.source,
            },
            "notes": list(self.notes),
        }


def build_plan(
    guide: Guide,
    states: Mapping[str, EntryProgress],
    events: Iterable[Mapping[str, Any]],
    attempts: Sequence[Attempt],
    now: datetime,
    tz: tzinfo,
    *,
    config: PlanConfig | None = None,
    hours_per_week: float | None = None,
    by: date | None = None,
    start_index: int | None = None,
    problem_ids: Iterable[str] | None = None,
    time_zone_name: str | None = None,
) -> Plan:
    """The whole plan. `states`: progress by current entry id (`flow.canonical_states`);
    `start_index`: the guide index of `flow.pending_start`'s entry (today's pending entries
    start there); `problem_ids`: the practice problems the content has (reviews of others are
    left out). `now` must be aware. UsageError for a budget or a date that cannot be planned for."""
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    config = config or PlanConfig()
    now = now.astimezone(timezone.utc)
    today = local_date(now, tz)
    if hours_per_week is not None and by is not None:
        raise UsageError("give --hours-per-week or --by, not both")
    if hours_per_week is not None:
        check_hours_per_week(hours_per_week)
    if by is not None:
        check_by(by, today)
    timeline = read_timeline(guide, events, attempts, now, tz)
    estimates, calibration = estimate_entries(guide, states, timeline, config)
    entries_s = sum(e.remaining_s for e in estimates)
    measured = history_pace(timeline, today)
    notes: list[str] = []
    if calibration.samples == 0:
        notes.append("no finished entries with measured time yet: every estimate is the default for its kind")
    if timeline.left_out:
        notes.append(f"{timeline.left_out} logged event(s) with an unreadable or future time were left out")

    known = None if problem_ids is None else list(problem_ids)
    # Reviews are forecast as far as the finish needs: to the goal date, else to a horizon that
    # grows until the finish falls inside it (a plan of months does not forecast ten years).
    horizon_days = (by - today).days if by is not None else FIRST_FORECAST_DAYS
    forecast = _Forecast(attempts, now, tz, config.review_s, known)
    reviews = forecast.load(today + timedelta(days=horizon_days))

    pace: Pace | None
    if by is not None:
        capacity = needed_capacity(entries_s, reviews, today, by)
        weekly = capacity * 7.0
        days, assumed = _days_for_budget(weekly, measured)
        feasible = weekly <= WEEK_S
        pace = Pace(weekly / days if days else 0.0, days, "by", measured.window_days, measured.active_days, assumed, by, feasible)
    elif hours_per_week is not None:
        pace = budget_pace(hours_per_week, measured)
    elif measured.seconds_per_day > 0:
        pace = measured
        if measured.window_days < PACE_WINDOW_DAYS:
            notes.append(f"pace from {measured.window_days} days of history: it settles as you study")
    else:
        pace = None
    if pace is not None and pace.assumed_days:
        notes.append("no study days in your history yet: the budget is spread over every day of the week")

    finish: date | None = None
    if not estimates:
        finish, finish_note = today, "nothing left to read"
    elif pace is None:
        finish_note = (
            "no study time measured yet (it is measured from opening an entry to marking it): "
            "give --hours-per-week H or --by DATE for a finish date"
            if not timeline.day_seconds
            else f"no study time in the last {PACE_WINDOW_DAYS} days: give --hours-per-week H or --by DATE for a finish date"
        )
    elif pace.source == "by" and not pace.feasible:
        # The pace line (pace_text) says what it would need; this says what to do instead.
        finish_note = (f"none by {by}: out of reach, it needs more than the 24 h a day has "
                       "(a later --by DATE, or --hours-per-week H, gives a finish date)")
    else:
        offset = finish_offset(entries_s, reviews, today, pace.daily_capacity_s, horizon_days)
        while offset is None and by is None and horizon_days < HORIZON_DAYS and pace.daily_capacity_s > 0:
            horizon_days = min(HORIZON_DAYS, horizon_days * 4)
            reviews = forecast.load(today + timedelta(days=horizon_days))
            offset = finish_offset(entries_s, reviews, today, pace.daily_capacity_s, horizon_days)
        if offset is None:
            finish_note = f"beyond {HORIZON_DAYS // 365} years at this pace"
        else:
            finish = today + timedelta(days=offset)
            finish_note = {
                "history": "at your pace",
                "hours-per-week": "at the weekly budget you gave",
                "by": "at the pace your goal date needs",
            }[pace.source]
    reviews_before = reviews.count_through(finish) if finish is not None and estimates else 0

    ordered = study_order(estimates, start_index)
    # A goal out of reach gives no day's share to plan from: today shows the next entry only.
    share_pace = pace if pace is None or pace.feasible else None
    today_plan = plan_today(today, ordered, share_pace, timeline.day_seconds.get(today, 0.0), reviews)
    calendar = activity(timeline, today)
    active = [d for d, secs in timeline.day_seconds.items() if secs > 0] + [d for d, n in timeline.day_events.items() if n > 0]
    current, longest = streaks(active, today)
    return Plan(
        as_of=now,
        today_date=today,
        time_zone=time_zone_name or _zone_name(tz, now),
        tz=tz,
        estimates=tuple(estimates),
        calibration=calibration,
        config=config,
        pace=pace,
        measured_pace=measured,
        finish=finish,
        finish_note=finish_note,
        reviews=reviews,
        reviews_before_finish=reviews_before,
        today=today_plan,
        days=tuple(calendar),
        streak_days=current,
        longest_streak_days=longest,
        notes=tuple(notes),
    )


def _zone_name(tz: tzinfo, now: datetime) -> str:
    key = getattr(tz, "key", None)
    if isinstance(key, str) and key:
        return key
    return now.astimezone(tz).tzname() or "UTC"


# -- the learner's input ----------------------------------------------------------------------------


def check_hours_per_week(hours: float) -> float:
    if isinstance(hours, bool) or not isinstance(hours, (int, float)) or not math.isfinite(hours):
        raise UsageError(f"--hours-per-week must be a finite number of hours, not {_shown(hours)}")
    if hours <= 0:
        raise UsageError(f"--hours-per-week must be more than 0, not {hours:g}")
    if hours > 168:
        raise UsageError(f"--hours-per-week must be at most 168 (the hours in a week), not {hours:g}")
    return float(hours)


def parse_hours_per_week(text: str) -> float:
    """The learner's --hours-per-week: a finite number above 0 and at most 168."""
    value = text.strip()
    if not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", value):
        raise UsageError(f"--hours-per-week must be a number of hours, such as 5 or 7.5, not {_shown(text)}")
    return check_hours_per_week(float(value))


def check_by(by: date, today: date) -> date:
    if by < today:
        raise UsageError(f"--by {by.isoformat()} is in the past (today is {today.isoformat()})")
    if (by - today).days > HORIZON_DAYS:
        raise UsageError(f"--by {by.isoformat()} is more than {HORIZON_DAYS // 365} years away; the plan looks no further")
    return by


def parse_by(text: str, today: date) -> date:
    """The learner's --by: an ISO date (YYYY-MM-DD), today or later, within HORIZON_DAYS."""
    value = text.strip()
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise UsageError(f"--by must be a date as YYYY-MM-DD, such as {today + timedelta(days=90)}, not {_shown(text)}")
    try:
        parsed = date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"--by {_shown(text)} is not a date on the calendar") from None
    return check_by(parsed, today)


# -- words --------------------------------------------------------------------------------------------


def pace_text(pace: Pace, today: date) -> str:
    """The pace in words, the same in `studytui plan` and the app's Today view: '45 min a study
    day, 5 study days a week = 3 h 45 min a week (your last 56 days, 40 study days)'. A goal less
    than a week away is put as the time a day it needs on each day left (a week of it would be
    hours that are not there). A goal out of reach says so first: the time it would need is
    more than a day (or a week) has, so it is no pace to plan by."""
    from studytui.core.text import plural

    d = duration_text
    short = pace.source == "by" and pace.by is not None and (pace.by - today).days + 1 < 7
    if pace.source == "by" and not pace.feasible:
        if short and pace.by is not None:
            left = (pace.by - today).days + 1
            need = pace.daily_capacity_s
            if left == 1:
                return f"out of reach: finishing today ({pace.by}) would need {d(need)} today, more than the 24 h a day has"
            return (f"out of reach: finishing by {pace.by} would need {d(need)} a day on each of the {left} days, "
                    f"today included ({d(need * left)} in all), more than the 24 h a day has")
        return (f"out of reach: finishing by {pace.by} would need {d(pace.daily_capacity_s)} every day of the week "
                f"({pace.seconds_per_week / 3600:,.0f} h a week), more than the 24 h a day (168 h a week) has")
    if short and pace.by is not None:
        left = (pace.by - today).days + 1
        need = pace.daily_capacity_s
        if left == 1:
            return f"{d(need)} today: what finishing today ({pace.by}) needs"
        return (f"{d(need)} a day on each of the {left} days to {pace.by}, today included: "
                f"what finishing by then needs ({d(need * left)} in all)")
    per_week = round(pace.active_days_per_week, 1)
    days = plural(int(per_week), "study day") if per_week == int(per_week) else f"{per_week:g} study days"
    where = {
        "history": f"your last {pace.window_days} days, {plural(pace.active_days, 'study day')}",
        "hours-per-week": "the weekly budget you gave",
        "by": f"what finishing by {pace.by} needs",
    }[pace.source]
    assumed = "; study days assumed" if pace.assumed_days else ""
    # A budget or a goal spread over every day that still asks more than a long study day: said.
    long_days = (f"; over {MAX_STUDY_DAY_S // 3600} h every study day"
                 if pace.source != "history" and pace.seconds_per_day > MAX_STUDY_DAY_S + 30 else "")
    return (f"{d(pace.seconds_per_day)} a study day, {days} a week = {d(pace.seconds_per_week)} a week "
            f"({where}{assumed}{long_days})")


def clock_text(moment: datetime, tz: tzinfo) -> str:
    """A time of day on the learner's clock: '14:05'."""
    return f"{moment.astimezone(tz):%H:%M}"


def later_text(later: Sequence[tuple[str, datetime]], tz: tzinfo, limit: int = 3) -> str:
    """Reviews due later today, each with its time: 'sh-roofline-bound at 14:05, ...'."""
    shown = ", ".join(f"{pid} at {clock_text(due, tz)}" for pid, due in later[:limit])
    return shown + (", ..." if len(later) > limit else "")


def duration_text(seconds: float) -> str:
    """'45 min', '1 h 10 min', '212 h': to the minute, hours alone from 100 h."""
    if not math.isfinite(seconds) or seconds <= 0:
        return "0 min"
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under 1 min"
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    if hours >= 100:
        return f"{round(seconds / 3600):,} h"
    return f"{hours} h" if rest == 0 else f"{hours} h {rest} min"
