"""The study plan's logic (studytui.study.plan) from synthetic logs and a fixed clock: study time,
calibration, pace, the finish date, today's reading, the calendar and streaks (issue 29)."""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from studytui.core.errors import UsageError
from studytui.guide.model import Entry, Guide, Policy, Section, Subsection, TryIt
from studytui.store.attempts import Attempt
from studytui.store.model import EntryProgress
from studytui.study import plan as P

UTC = timezone.utc
BERLIN = ZoneInfo("Europe/Berlin")
LA = ZoneInfo("America/Los_Angeles")
NOW = datetime(2026, 6, 30, 20, 0, tzinfo=UTC)


# -- a small guide of known kinds ---------------------------------------------------------------


def make_guide(kinds: list[str | None], roles: dict[int, str] | None = None, try_it: set[int] = frozenset()) -> Guide:
    roles = roles or {}
    entries = tuple(
        Entry(
            id=f"e{i}", title=f"Entry {i}", url=None if kind is None else f"https://example.org/{i}", kind=kind,
            summary="s", section_id="s1", section_title="One", subsection_id="s1a", subsection_title=None, index=i,
            role=roles.get(i, "watchlist" if kind is None else "core"),
            try_it=TryIt("roofline") if i in try_it else None,
        )
        for i, kind in enumerate(kinds)
    )
    section = Section("s1", "One", "intro", (Subsection("s1a", None, entries),))
    return Guide("T", "r", "MIT", (section,), (), Policy("p", ("paper",), ()), "/nonexistent")


def ev(at: datetime, kind: str, entry_id: str | None = None, state: str | None = None) -> dict:
    return {"at": at.astimezone(UTC).isoformat(timespec="microseconds"), "kind": kind, "entry_id": entry_id,
            "section_id": None, "data": {"state": state} if state else {}}


def studied(entry_id: str, start: datetime, minutes: float) -> list[dict]:
    """How the app logs one entry read from start to end: open (and learning), then done."""
    return [ev(start, "open", entry_id), ev(start, "state", entry_id, "learning"),
            ev(start + timedelta(minutes=minutes), "state", entry_id, "done")]


def done_states(guide: Guide, ids: set[str]) -> dict[str, EntryProgress]:
    return {e.id: EntryProgress(e.id, "done" if e.id in ids else "pending") for e in guide.entries}


# -- study time -----------------------------------------------------------------------------------


def test_one_entry_a_day_at_45_minutes_is_45_minutes_a_day_and_calibrates_papers():
    guide = make_guide(["paper"] * 40)
    events = []
    first = datetime(2026, 6, 1, 17, 0, tzinfo=UTC)
    for i in range(20):
        events += studied(f"e{i}", first + timedelta(days=i), 45)
    line = P.read_timeline(guide, events, [], NOW, BERLIN)
    assert [line.day_seconds[date(2026, 6, 1) + timedelta(days=i)] for i in range(20)] == [2700.0] * 20
    assert all(line.to_done_s[f"e{i}"] == 2700.0 for i in range(20))
    pace = P.history_pace(line, date(2026, 6, 30))
    # 20 study days from the first one to yesterday (today is not over): 45 min a study day, 20 days in 29.
    assert pace.window_days == 29 and pace.active_days == 20
    assert pace.seconds_per_day == pytest.approx(2700) and pace.active_days_per_week == pytest.approx(20 * 7 / 29)
    line.day_seconds[date(2026, 6, 30)] = 600.0  # studied today too: today counts
    assert P.history_pace(line, date(2026, 6, 30)).window_days == 30

    estimates, cal = P.estimate_entries(guide, done_states(guide, {f"e{i}" for i in range(20)}), line, P.PlanConfig())
    ratio = math.log(2700 / 7200)
    overall = 20 * ratio / (20 + P.PRIOR_SAMPLES)
    paper = (20 * ratio + P.PRIOR_SAMPLES * overall) / (20 + P.PRIOR_SAMPLES)
    assert cal.samples == 20 and cal.kinds["paper"].basis == "kind"
    assert cal.overall_factor == pytest.approx(math.exp(overall))
    assert estimates[0].estimate_s == pytest.approx(7200 * math.exp(paper))
    assert 2700 < estimates[0].estimate_s < 7200  # shrunk towards the default, not past the history
    assert all(e.calibrated and e.basis == "kind" for e in estimates) and len(estimates) == 20


def test_calibration_approaches_the_history_with_many_entries_and_stays_at_the_default_with_none():
    many = P.calibrate([("paper", 2700.0, 7200.0)] * 400)
    assert many.factor("paper").factor * 7200 == pytest.approx(2700, rel=0.02)
    none = P.calibrate([])
    assert none.samples == 0 and none.overall_factor == 1.0 and none.factor("paper").basis == "default"
    # Two papers are not enough for a kind of its own: the overall factor, shrunk towards the default.
    few = P.calibrate([("paper", 3600.0, 7200.0)] * 2 + [("docs", 1800.0, 3600.0)] * 3)
    assert few.factor("paper").basis == "overall" and few.factor("docs").basis == "kind"
    assert few.overall_factor == pytest.approx(math.exp(5 * math.log(0.5) / (5 + P.PRIOR_SAMPLES)))
    assert few.factor("blog").basis == "overall" and few.factor("blog").samples == 0


def test_an_outlier_is_clamped_before_averaging():
    cal = P.calibrate([("paper", 7200.0 * 1000, 7200.0)] * 3)
    assert cal.factor("paper").factor <= P.RATIO_CLAMP[1]


def test_bursts_count_what_was_studied_and_the_pace_is_per_study_day():
    guide = make_guide(["docs"] * 10)
    day1 = datetime(2026, 6, 20, 8, 0, tzinfo=UTC)
    events = studied("e0", day1, 20) + studied("e1", day1 + timedelta(minutes=20), 30) + \
        studied("e2", day1 + timedelta(minutes=51), 39)  # one idle minute between e1 and e2: not counted
    day2 = datetime(2026, 6, 27, 8, 0, tzinfo=UTC)
    events += studied("e3", day2, 60) + studied("e4", day2 + timedelta(minutes=60), 60)
    line = P.read_timeline(guide, events, [], NOW, UTC)
    assert line.day_seconds == {date(2026, 6, 20): 89 * 60.0, date(2026, 6, 27): 120 * 60.0}
    pace = P.history_pace(line, date(2026, 6, 30))
    assert pace.active_days == 2 and pace.window_days == 10  # June 20 to 29: today is not over
    assert pace.seconds_per_day == pytest.approx((89 + 120) * 60 / 2)
    assert pace.active_days_per_week == pytest.approx(2 * 7 / 10)


def test_an_entry_left_open_overnight_does_not_count_the_night():
    guide = make_guide(["paper", "paper"])
    evening = datetime(2026, 6, 10, 18, 0, tzinfo=UTC)  # 20:00 in Berlin
    morning = evening + timedelta(hours=14)
    line = P.read_timeline(guide, studied("e0", evening, 14 * 60), [], NOW, BERLIN)
    assert sum(line.day_seconds.values()) == 0  # the only gap is the night: nothing measured
    assert line.to_done_s["e0"] == 0
    assert line.day_events == {date(2026, 6, 10): 2, date(2026, 6, 11): 1}  # both days still active
    _, cal = P.estimate_entries(guide, done_states(guide, {"e0"}), line, P.PlanConfig())
    assert cal.samples == 0 and cal.excluded == 1  # not a sample of 14 hours, nor of zero
    # A note written 40 minutes in, then the night, then 30 minutes the next morning.
    events = [ev(evening, "open", "e0"), ev(evening + timedelta(minutes=40), "note", "e0"),
              ev(morning - timedelta(minutes=30), "open", "e0"), ev(morning, "state", "e0", "done")]
    line = P.read_timeline(guide, events, [], NOW, BERLIN)
    assert line.day_seconds == {date(2026, 6, 10): 2400.0, date(2026, 6, 11): 1800.0}
    assert line.to_done_s["e0"] == 4200.0


def test_two_entries_open_at_once_share_the_time_and_a_day_never_counts_a_minute_twice():
    guide = make_guide(["paper", "paper"])
    t = datetime(2026, 6, 10, 10, 0, tzinfo=UTC)
    events = [ev(t, "open", "e0"), ev(t + timedelta(minutes=10), "open", "e1"),
              ev(t + timedelta(minutes=40), "state", "e0", "done"), ev(t + timedelta(minutes=60), "state", "e1", "done")]
    line = P.read_timeline(guide, events, [], NOW, UTC)
    assert line.day_seconds == {date(2026, 6, 10): 3600.0}
    assert line.to_done_s == {"e0": 25 * 60.0, "e1": 35 * 60.0}  # 10 + 30/2, and 30/2 + 20


def test_a_week_off_lowers_the_days_per_week_not_the_time_per_day():
    guide = make_guide(["docs"] * 30)
    events = []
    start = datetime(2026, 6, 9, 9, 0, tzinfo=UTC)
    days = [start + timedelta(days=i) for i in range(7)] + [start + timedelta(days=14 + i) for i in range(7)]
    for i, day in enumerate(days):
        events += studied(f"e{i}", day, 50)
    line = P.read_timeline(guide, events, [], NOW, UTC)
    pace = P.history_pace(line, date(2026, 6, 29))
    assert pace.seconds_per_day == pytest.approx(3000) and pace.active_days == 14 and pace.window_days == 21
    assert pace.active_days_per_week == pytest.approx(14 * 7 / 21)
    active = [d for d, n in line.day_events.items() if n]
    assert P.streaks(active, date(2026, 6, 29)) == (7, 7)
    assert P.streaks(active, date(2026, 6, 30)) == (7, 7)  # today has nothing yet: the run still holds
    assert P.streaks(active, date(2026, 7, 1)) == (0, 7)


def test_events_that_are_bookkeeping_unreadable_or_in_the_future_are_left_out():
    guide = make_guide(["paper"])
    t = datetime(2026, 6, 10, 10, 0, tzinfo=UTC)
    events = [ev(t, "open", "e0"), {"at": "not a time", "kind": "open", "entry_id": "e0", "data": {}},
              ev(t + timedelta(minutes=5), "import"), ev(t + timedelta(minutes=6), "rename", "e0"),
              ev(NOW + timedelta(days=1), "state", "e0", "done"), ev(t + timedelta(minutes=30), "state", "e0", "done")]
    line = P.read_timeline(guide, events, [], NOW, UTC)
    assert line.day_seconds == {date(2026, 6, 10): 1800.0} and line.left_out == 2


def test_practice_answers_count_between_each_other_within_a_sitting():
    guide = make_guide(["paper"])
    t = datetime(2026, 6, 10, 10, 0, tzinfo=UTC)
    attempts = [Attempt(P._iso(t + timedelta(minutes=m)), "p", 0, "1", True) for m in (0, 4, 10, 100)]
    line = P.read_timeline(guide, [], attempts, NOW, UTC)
    assert line.day_seconds == {date(2026, 6, 10): 600.0}  # 4 + 6 min; the 90-minute gap is not practice
    assert line.day_events == {date(2026, 6, 10): 4}


def test_a_practice_answer_after_reading_counts_at_most_its_last_half_hour_and_not_as_reading():
    # The review's case: an entry marked learning at 01:40, practice answers at 03:31-03:32. The
    # whole gap used to count as reading the entry (+1 h 51 min).
    guide = make_guide(["paper", "paper"])
    t = datetime(2026, 6, 10, 1, 40, tzinfo=UTC)
    events = [ev(t - timedelta(minutes=70), "open", "e0"), ev(t, "state", "e0", "learning")]
    answers = [Attempt(P._iso(t + timedelta(minutes=111, seconds=s)), "p", 0, "1", True) for s in (0, 20, 40)]
    line = P.read_timeline(guide, events, answers, NOW, UTC)
    assert line.day_seconds == {date(2026, 6, 10): pytest.approx(70 * 60 + 30 * 60 + 40)}
    assert line.spent_s == {"e0": pytest.approx(70 * 60)}  # reading time only


# -- days, midnight and time zones ------------------------------------------------------------------


def test_a_streak_across_midnight_in_los_angeles_is_two_days_though_utc_sees_one():
    guide = make_guide(["paper"] * 3)
    late = datetime(2026, 6, 28, 23, 50, tzinfo=LA)  # 06:50 UTC on the 29th
    events = [ev(late, "open", "e0"), ev(late + timedelta(minutes=20), "state", "e0", "done")]
    la = P.read_timeline(guide, events, [], NOW, LA)
    assert la.day_seconds == {date(2026, 6, 28): 600.0, date(2026, 6, 29): 600.0}  # split at local midnight
    assert P.streaks(la.day_events, date(2026, 6, 29)) == (2, 2)
    utc = P.read_timeline(guide, events, [], NOW, UTC)
    assert utc.day_seconds == {date(2026, 6, 29): 1200.0} and P.streaks(utc.day_events, date(2026, 6, 29)) == (1, 1)
    # Built as a plan, "today" is the learner's: 13:00 on the 29th in Los Angeles.
    plan = P.build_plan(guide, done_states(guide, {"e0"}), events, [], datetime(2026, 6, 29, 20, 0, tzinfo=UTC), LA)
    assert plan.today_date == date(2026, 6, 29) and (plan.streak_days, plan.longest_streak_days) == (2, 2)
    assert plan.time_zone == "America/Los_Angeles"


def test_a_day_with_a_clock_change_holds_its_own_hours():
    ny = ZoneInfo("America/New_York")
    guide = make_guide(["paper"])
    # 2026-11-01: clocks go back at 02:00 EDT; 01:00 EDT to 02:30 EST is 2 h 30 min.
    start = datetime(2026, 11, 1, 5, 0, tzinfo=UTC)
    events = [ev(start, "open", "e0"), ev(start + timedelta(minutes=150), "state", "e0", "done")]
    line = P.read_timeline(guide, events, [], datetime(2026, 11, 2, tzinfo=UTC), ny)
    assert line.day_seconds == {date(2026, 11, 1): 9000.0}
    assert (P.day_start(date(2026, 11, 2), ny) - P.day_start(date(2026, 11, 1), ny)) == timedelta(hours=25)


def test_the_calendar_is_a_year_of_weeks_readable_without_colour():
    days = [P.Day(date(2025, 7, 1) + timedelta(days=i), 0.0, 0) for i in range(365)]
    days[-1] = P.Day(days[-1].date, 3 * 3600.0, 4)
    days[-2] = P.Day(days[-2].date, 50 * 60.0, 2)
    days[-3] = P.Day(days[-3].date, 0.0, 1)
    lines = P.heatmap_lines(days)
    assert len(lines) == 8 and max(len(line) for line in lines) <= 80
    assert [line[:3] for line in lines[1:]] == list(P.WEEKDAYS)
    for month in ("Jul", "Aug", "Jan", "Jun"):
        assert month in lines[0]
    cells = "".join(line[4:] for line in lines[1:])
    assert cells.count("█") == 1 and cells.count("▒") == 1 and cells.count("░") == 1
    assert cells.count("·") == 362
    # The month labels never run into each other.
    assert all(len(word) == 3 for word in lines[0].split())
    assert [P.shade(s) for s in (0, 60, 1799, 1800, 3599, 3600, 7199, 7200)] == ["·", "░", "░", "▒", "▒", "▓", "▓", "█"]


def test_activity_has_every_day_of_the_last_year():
    line = P.Timeline()
    line.day_seconds[date(2026, 6, 30)] = 60.0
    line.day_events[date(2025, 7, 1)] = 2
    line.day_events[date(2025, 6, 30)] = 9  # a year and a day ago: outside
    days = P.activity(line, date(2026, 6, 30))
    assert len(days) == 365 and days[0].date == date(2025, 7, 1) and days[-1].date == date(2026, 6, 30)
    assert days[0].to_dict() == {"date": "2025-07-01", "seconds": 0, "events": 2}
    assert days[-1].to_dict() == {"date": "2026-06-30", "seconds": 60, "events": 0}


# -- estimates and configuration ------------------------------------------------------------------------


def test_defaults_follow_the_kind_and_what_the_content_knows():
    guide = make_guide(["paper", "book", None, "blog", "docs", "course"], roles={3: "watchlist", 4: "policy"}, try_it={0})
    got = [P.default_estimate(e)[0] / 60 for e in guide.entries]
    assert got == [130, 1200, 5, 20, 15, 1200]  # a try-it adds 10 min; watchlist and policy are short reads
    config = P.parse_config({"minutes": {"paper": 90, "try-it": 30, "no-source": 2}})
    assert [P.default_estimate(e, config)[0] / 60 for e in guide.entries[:3]] == [120, 1200, 2]


@pytest.mark.parametrize("data, message", [
    ([1, 2], "must be a mapping"),
    ("paper: 3", "must be a mapping"),
    ({"minute": {}}, "unknown key 'minute'"),
    ({"minutes": [1]}, "minutes must be a mapping"),
    ({"minutes": {"papers": 3}}, "unknown kind 'papers'"),
    ({"minutes": {"paper": "90"}}, "minutes.paper must be a number"),
    ({"minutes": {"paper": True}}, "minutes.paper must be a number"),
    ({"minutes": {"paper": 0}}, "from 1 to 60,000"),
    ({"minutes": {"paper": -5}}, "from 1 to 60,000"),
    ({"minutes": {"paper": float("nan")}}, "from 1 to 60,000"),
    ({"minutes": {"paper": float("inf")}}, "from 1 to 60,000"),
    ({"minutes": {"paper": 10**400}}, "from 1 to 60,000"),
    ({"minutes": {"paper": 10**5000}}, "too long to show"),
    ({"minutes": {"paper": None}}, "must be a number"),
    ({"review_minutes": "x" * 500}, "review_minutes must be a number"),
    ({"review_minutes": 0.5}, "from 1 to 60,000"),
])
def test_a_bad_configuration_is_refused_in_one_line(data, message):
    with pytest.raises(UsageError) as info:
        P.parse_config(data, "plan.yaml")
    text = str(info.value)
    assert message in text and "\n" not in text and len(text) < 200 and text.startswith("plan.yaml")


def test_a_configuration_file_is_read_bounded(tmp_path):
    assert P.load_config(tmp_path / "plan.yaml") == P.PlanConfig()  # none: the defaults
    path = tmp_path / "plan.yaml"
    path.write_text("minutes:\n  paper: 45\nreview_minutes: 2\n")
    config = P.load_config(path)
    assert config.minutes == {"paper": 45.0} and config.review_s == 120.0 and config.source == str(path)
    path.write_text("a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefg", "bcdefgh")))
    with pytest.raises(UsageError, match="alias"):
        P.load_config(path)
    path.write_bytes(b"minutes: {paper: \xff}\n")
    with pytest.raises(UsageError, match="not UTF-8"):
        P.load_config(path)
    path.write_text("minutes: {paper: [unclosed\n")
    with pytest.raises(UsageError, match="not valid YAML"):
        P.load_config(path)
    path.unlink()
    path.mkdir()
    with pytest.raises(UsageError, match="not a regular file"):
        P.load_config(path)


def test_an_entry_being_learned_has_what_is_left_of_its_estimate():
    guide = make_guide(["paper", "paper"])
    t = datetime(2026, 6, 29, 10, 0, tzinfo=UTC)
    events = [ev(t, "open", "e0"), ev(t, "state", "e0", "learning"), ev(t + timedelta(minutes=30), "note", "e0"),
              ev(t + timedelta(minutes=220), "open", "e1"), ev(t + timedelta(minutes=320), "note", "e1")]
    line = P.read_timeline(guide, events, [], NOW, UTC)
    states = {"e0": EntryProgress("e0", "learning"), "e1": EntryProgress("e1", "learning")}
    estimates, _ = P.estimate_entries(guide, states, line, P.PlanConfig())
    # e0: 30 min, then a gap of over 3 h ends the sitting; e1: 100 min, later in the day.
    assert estimates[0].spent_s == 1800 and estimates[0].remaining_s == 7200 - 1800
    assert estimates[1].spent_s == 6000 and estimates[1].remaining_s == 7200 * 0.25  # past most of it: a quarter left


# -- input -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["0", "-1", "-0.5", "nan", "inf", "-inf", "1e999", "abc", "", " ", "5h", "169", "0x10", "1_000"])
def test_bad_hours_are_refused_in_one_line(text):
    with pytest.raises(UsageError) as info:
        P.parse_hours_per_week(text)
    assert "\n" not in str(info.value) and "--hours-per-week" in str(info.value)


def test_good_hours_are_read():
    assert P.parse_hours_per_week(" 7.5 ") == 7.5 and P.parse_hours_per_week("168") == 168.0 and P.parse_hours_per_week(".5") == 0.5


@pytest.mark.parametrize("text, message", [
    ("2026-06-29", "in the past"), ("1999-01-01", "in the past"), ("2026-02-30", "not a date on the calendar"),
    ("2026/07/01", "YYYY-MM-DD"), ("20270101", "YYYY-MM-DD"), ("tomorrow", "YYYY-MM-DD"), ("", "YYYY-MM-DD"),
    ("2027-01-01T00:00", "YYYY-MM-DD"), ("9999-12-31", "more than 10 years"), ("\x1b[31m", "YYYY-MM-DD"),
])
def test_bad_dates_are_refused_in_one_line(text, message):
    with pytest.raises(UsageError) as info:
        P.parse_by(text, date(2026, 6, 30))
    assert message in str(info.value) and "\n" not in str(info.value)


def test_today_is_a_date_one_can_aim_for():
    assert P.parse_by("2026-06-30", date(2026, 6, 30)) == date(2026, 6, 30)


# -- the finish ------------------------------------------------------------------------------------------


def test_no_history_says_so_and_gives_no_finish_without_a_budget():
    guide = make_guide(["paper", "docs"])
    plan = P.build_plan(guide, {}, [], [], NOW, UTC)
    assert plan.pace is None and plan.finish is None and "--hours-per-week" in plan.finish_note
    assert any("default" in n for n in plan.notes)
    assert all(not e.calibrated for e in plan.estimates) and plan.remaining_s == 3 * 3600
    assert [t.estimate.entry.id for t in plan.today.entries] == ["e0"] and plan.today.share_s is None
    assert plan.header_label() == "finish: no pace yet"


def test_the_finish_under_hours_per_week():
    guide = make_guide(["paper"] * 10)  # 20 h
    plan = P.build_plan(guide, {}, [], [], NOW, UTC, hours_per_week=7)
    # 7 h a week is 1 h a calendar day; with no history it is spread over every day.
    assert plan.pace.source == "hours-per-week" and plan.pace.assumed_days and plan.pace.seconds_per_day == 3600
    assert plan.finish == date(2026, 6, 30) + timedelta(days=19)  # the 20th day, today being the first
    assert P.build_plan(guide, {}, [], [], NOW, UTC, hours_per_week=14).finish == date(2026, 6, 30) + timedelta(days=9)
    assert plan.header_label() == "finish ~ 2026-07-19 at your budget"


def test_the_finish_under_by_is_the_least_that_makes_it():
    guide = make_guide(["paper"] * 10)
    by = date(2026, 8, 8)  # 40 days including today
    plan = P.build_plan(guide, {}, [], [], NOW, UTC, by=by)
    assert plan.pace.source == "by" and plan.finish is not None and plan.finish <= by
    assert plan.needed_hours_per_week == pytest.approx(20 * 7 / 40)
    slower = P.finish_offset(plan.remaining_s, plan.reviews, plan.today_date, plan.pace.daily_capacity_s * 0.99)
    assert plan.today_date + timedelta(days=slower) > by
    impossible = P.build_plan(make_guide(["book"] * 2), {}, [], [], NOW, UTC, by=date(2026, 6, 30))  # 40 h today
    # A goal of today is put as the time today needs, never as a week of it (issue 29, N6); one out
    # of reach says so on the pace line itself, not only on the finish (second review, H3).
    assert impossible.finish is None and not impossible.pace.feasible and "out of reach" in impossible.finish_note
    assert P.pace_text(impossible.pace, impossible.today_date) == (
        "out of reach: finishing today (2026-06-30) would need 40 h today, more than the 24 h a day has")
    within = P.build_plan(make_guide(["paper"] * 2), {}, [], [], NOW, UTC, by=date(2026, 6, 30))  # 4 h today
    assert within.pace.feasible and P.pace_text(within.pace, within.today_date) == "4 h today: what finishing today (2026-06-30) needs"
    assert impossible.header_label() == "finish by 2026-06-30: out of reach"
    assert impossible.today.share_s is None and len(impossible.today.entries) == 1  # no 40-hour day planned


def test_bad_budgets_are_refused_by_the_logic_too():
    guide = make_guide(["paper"])
    for bad in (0, -1, math.nan, math.inf, 169):
        with pytest.raises(UsageError):
            P.build_plan(guide, {}, [], [], NOW, UTC, hours_per_week=bad)
    with pytest.raises(UsageError, match="past"):
        P.build_plan(guide, {}, [], [], NOW, UTC, by=date(2026, 6, 1))
    with pytest.raises(UsageError, match="not both"):
        P.build_plan(guide, {}, [], [], NOW, UTC, hours_per_week=3, by=date(2026, 9, 1))
    with pytest.raises(ValueError):
        P.build_plan(guide, {}, [], [], datetime(2026, 6, 30), UTC)


def test_the_finish_at_the_learners_own_pace_moves_with_the_learner():
    guide = make_guide(["paper"] * 30)
    start = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
    events = []
    for i in range(10):
        events += studied(f"e{i}", start + timedelta(days=3 * i), 60)
    done = done_states(guide, {f"e{i}" for i in range(10)})
    plan = P.build_plan(guide, done, events, [], NOW, UTC)
    assert plan.pace.source == "history" and plan.pace.seconds_per_day == pytest.approx(3600)
    capacity = plan.pace.seconds_per_week / 7
    assert plan.finish == plan.today_date + timedelta(days=math.ceil(plan.remaining_s / capacity - 1e-9) - 1)
    # A week off: the same history, a week later. The finish moves later.
    later = P.build_plan(guide, done, events, [], NOW + timedelta(days=7), UTC)
    assert later.finish > plan.finish
    # No study in the last 8 weeks: said so, not divided by zero.
    gone = P.build_plan(guide, done, events, [], NOW + timedelta(days=120), UTC)
    assert gone.pace is None and gone.finish is None and "no study time in the last 56 days" in gone.finish_note


def test_reviews_are_their_own_load_and_delay_the_finish():
    guide = make_guide(["docs"] * 10)
    t = datetime(2026, 6, 29, 9, 0, tzinfo=UTC)
    attempts = [Attempt(P._iso(t + timedelta(minutes=i)), f"p{i}", 0, "1", i % 2 == 0) for i in range(20)]
    without = P.build_plan(guide, {}, [], [], NOW, UTC, hours_per_week=2)
    with_reviews = P.build_plan(guide, {}, [], attempts, NOW, UTC, hours_per_week=2, problem_ids=[f"p{i}" for i in range(20)])
    assert with_reviews.reviews_before_finish >= 20 and with_reviews.finish > without.finish
    # The ten missed ones are due again within minutes: today, before any reading.
    assert len(with_reviews.today.reviews) == 10 and with_reviews.today.reviews_s == 10 * P.DEFAULT_REVIEW_S
    # Reviews of problems the content no longer has are left out.
    gone = P.build_plan(guide, {}, [], attempts, NOW, UTC, hours_per_week=2, problem_ids=[])
    assert gone.reviews_before_finish == 0 and gone.finish == without.finish


def test_review_forecast_counts_each_review_again_until_the_horizon():
    t = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
    load = P.forecast_reviews([Attempt(P._iso(t), "p", 0, "1", True)], NOW, UTC, date(2027, 6, 30))
    days = sorted(load.by_day)
    assert len(days) >= 3 and days[0] >= NOW.date()
    gaps = [(b - a).days for a, b in zip(days, days[1:])]
    assert gaps == sorted(gaps)  # each right answer spaces the next review further out
    assert P.forecast_reviews([], NOW, UTC, date(2027, 1, 1)).by_day == {}


def test_today_lists_what_fits_in_guide_order_from_where_the_learner_is():
    guide = make_guide(["report"] * 8)  # 45 min each
    states = done_states(guide, {"e2", "e3"})
    states["e5"] = EntryProgress("e5", "learning")
    plan = P.build_plan(guide, states, [], [], NOW, UTC, hours_per_week=7 * 1.5, start_index=4)
    assert plan.today.share_s == pytest.approx(1.5 * 3600)
    # e5 is being learned: first; then pending entries from e4 (where `next` points), wrapping.
    assert [t.estimate.entry.id for t in plan.today.entries] == ["e5", "e4"]
    assert all(t.fits for t in plan.today.entries)
    d = plan.today.to_dict()
    assert d["entries"][0]["id"] == "e5" and d["next"] == "e5" and d["share_s"] == 5400


def test_every_entry_in_progress_is_on_todays_list_even_past_the_share():
    guide = make_guide(["book"] * 6)  # far more than a day each
    states = {"e1": EntryProgress("e1", "learning"), "e4": EntryProgress("e4", "learning")}
    plan = P.build_plan(guide, states, [], [], NOW, UTC, hours_per_week=7 * 0.5, start_index=0)
    ids = [t.estimate.entry.id for t in plan.today.entries]
    assert ids[:2] == ["e1", "e4"] and not any(t.fits for t in plan.today.entries[:2])


def test_a_finished_guide_finishes_today():
    guide = make_guide(["paper"])
    plan = P.build_plan(guide, done_states(guide, {"e0"}), [], [], NOW, UTC)
    assert plan.finish == plan.today_date and plan.remaining_s == 0 and plan.header_label() == "guide finished"


def test_durations_read_as_people_say_them():
    assert [P.duration_text(s) for s in (0, 20, 45 * 60, 3600, 4200, 99 * 3600, 212 * 3600, math.nan)] == [
        "0 min", "under 1 min", "45 min", "1 h", "1 h 10 min", "99 h", "212 h", "0 min"]


# -- properties ------------------------------------------------------------------------------------------

_KINDS = st.sampled_from(["open", "note", "learning", "done", "skipped", "pending", "attempt"])


@st.composite
def logs(draw):
    n = draw(st.integers(0, 40))
    t = datetime(2026, 6, 1, tzinfo=UTC)
    events, attempts = [], []
    for _ in range(n):
        t += timedelta(seconds=draw(st.integers(0, 5 * 3600)))
        kind = draw(_KINDS)
        entry = f"e{draw(st.integers(0, 3))}"
        if kind == "attempt":
            attempts.append(Attempt(P._iso(t), "p", 0, "1", True))
        elif kind in ("open", "note"):
            events.append(ev(t, kind, entry))
        else:
            events.append(ev(t, "state", entry, kind))
    return events, attempts


@given(logs(), st.sampled_from([UTC, BERLIN, LA, ZoneInfo("Asia/Kolkata")]))
def test_study_time_is_never_counted_twice(log, tz):
    events, attempts = log
    guide = make_guide(["paper"] * 4)
    line = P.read_timeline(guide, events, attempts, datetime(2027, 1, 1, tzinfo=UTC), tz)
    total = sum(line.day_seconds.values())
    assert all(0 <= s <= 25 * 3600 for s in line.day_seconds.values())
    # The time zone only moves time between days; entries' shares add up to the reading time.
    assert total == pytest.approx(sum(P.read_timeline(guide, events, attempts, datetime(2027, 1, 1, tzinfo=UTC), UTC)
                                      .day_seconds.values()))
    assert sum(line.spent_s.values()) <= total + 1e-6  # the rest is practice
    if not attempts:
        assert sum(line.spent_s.values()) == pytest.approx(total, abs=1e-6)
    assert all(line.to_done_s[e] <= line.spent_s.get(e, 0) + 1e-6 for e in line.to_done_s)


@given(st.floats(0.5, 168), st.floats(0.5, 168), st.integers(1, 30))
def test_more_hours_never_finish_later(h1, h2, n):
    guide = make_guide(["paper", "docs", "book"] * n)
    low, high = sorted((h1, h2))
    a = P.build_plan(guide, {}, [], [], NOW, UTC, hours_per_week=low)
    b = P.build_plan(guide, {}, [], [], NOW, UTC, hours_per_week=high)
    if a.finish is not None:
        assert b.finish is not None and b.finish <= a.finish


@given(st.integers(0, 400), st.integers(1, 40))
def test_the_hours_a_goal_needs_reach_it(days, n):
    guide = make_guide(["paper", "report"] * n)
    by = NOW.date() + timedelta(days=days)
    plan = P.build_plan(guide, {}, [], [], NOW, UTC, by=by)
    if plan.pace.feasible:
        assert plan.finish is not None and plan.finish <= by


# -- review findings (issue 29): due now is practice's due, words for a pace --------------------------


def test_due_now_is_what_practice_due_offers_and_later_today_is_named_with_its_time():
    """A miss comes back in 10 minutes: part of today's load, but not due now, so the plan must
    not say it is (`studytui practice due` would find nothing). The definition is
    studytui.practice.schedule.due, the one practice uses."""
    from studytui.practice import schedule

    guide = make_guide(["docs"] * 3)
    answered = NOW - timedelta(minutes=4)
    attempts = [Attempt(P._iso(answered), "missed", 0, "1", False),
                Attempt(P._iso(NOW - timedelta(days=30)), "old-miss", 0, "1", False)]
    plan = P.build_plan(guide, {}, [], attempts, NOW, UTC, hours_per_week=5, problem_ids=["missed", "old-miss"])
    practice_due = [r.problem_id for r in schedule.due(schedule.reviews(attempts), NOW)]
    assert [pid for pid, _ in plan.today.reviews] == practice_due == ["old-miss"]
    assert [pid for pid, _ in plan.today.later] == ["missed"]
    assert plan.today.later[0][1] == answered + schedule.RELEARN
    assert plan.today.reviews_s == 2 * P.DEFAULT_REVIEW_S  # both are today's time
    data = plan.to_dict()
    assert [r["problem_id"] for r in data["today"]["reviews"]] == ["old-miss"]
    assert [r["problem_id"] for r in data["today"]["later_reviews"]] == ["missed"]
    assert data["reviews"]["due_now"] == 1 and data["reviews"]["due_today"] == 2
    assert P.later_text(plan.today.later, UTC) == "missed at 20:06"
    # Ten minutes on, it is due now in both.
    later = P.build_plan(guide, {}, [], attempts, NOW + timedelta(minutes=7), UTC, hours_per_week=5,
                         problem_ids=["missed", "old-miss"])
    assert {pid for pid, _ in later.today.reviews} == {"missed", "old-miss"} and not later.today.later


def test_pace_words_use_the_right_number_and_a_goal_days_away_is_put_per_day():
    one = P.Pace(3600.0, 1.0, "history", 7, 1)
    assert P.pace_text(one, NOW.date()) == "1 h a study day, 1 study day a week = 1 h a week (your last 7 days, 1 study day)"
    some = P.Pace(3600.0, 2.5, "hours-per-week", 0, 0)
    assert "2.5 study days a week" in P.pace_text(some, NOW.date())
    # A goal of today: what today needs, not "7 study days a week = N h a week".
    guide = make_guide(["paper"] * 3)
    today = P.build_plan(guide, {}, [], [], NOW, UTC, by=NOW.date())
    words = P.pace_text(today.pace, today.today_date)
    assert words.startswith("6 h today") and "a week" not in words
    soon = P.build_plan(guide, {}, [], [], NOW, UTC, by=NOW.date() + timedelta(days=2))
    words = P.pace_text(soon.pace, soon.today_date)
    assert words.startswith("2 h a day on each of the 3 days to 2026-07-02") and "a week" not in words
    far = P.build_plan(guide, {}, [], [], NOW, UTC, by=NOW.date() + timedelta(days=30))
    assert "a week" in P.pace_text(far.pace, far.today_date)


def test_a_goal_out_of_reach_is_said_on_the_pace_line_not_put_as_a_pace():
    """Second review, H3: a goal a week away needing 30 h a day was put as "30 h a study day, 7
    study days a week = 210 h a week". The pace line (the same words in the app) says out of reach."""
    guide = make_guide(["book"] * 12)  # 240 h
    by = NOW.date() + timedelta(days=7)  # 8 days, today included
    plan = P.build_plan(guide, {}, [], [], NOW, UTC, by=by)
    assert not plan.pace.feasible and plan.finish is None
    assert plan.pace.daily_capacity_s == pytest.approx(30 * 3600)
    assert P.pace_text(plan.pace, plan.today_date) == (
        f"out of reach: finishing by {by} would need 30 h every day of the week (210 h a week), "
        "more than the 24 h a day (168 h a week) has")
    assert plan.header_label() == f"finish by {by}: out of reach"
    # Days away, not a week: the time a day on each day left, and out of reach.
    soon = P.build_plan(guide, {}, [], [], NOW, UTC, by=NOW.date() + timedelta(days=2))
    assert P.pace_text(soon.pace, soon.today_date) == (
        f"out of reach: finishing by {NOW.date() + timedelta(days=2)} would need 80 h a day on each of the 3 days, "
        "today included (240 h in all), more than the 24 h a day has")
    # Within reach but over 8 h every day: a pace, with a warning.
    long = P.build_plan(guide, {}, [], [], NOW, UTC, by=NOW.date() + timedelta(days=19))  # 12 h a day
    text = P.pace_text(long.pace, long.today_date)
    assert long.pace.feasible and text.startswith("12 h a study day, 7 study days a week = 84 h a week")
    assert text.endswith("; over 8 h every study day)")
    fine = P.build_plan(guide, {}, [], [], NOW, UTC, by=NOW.date() + timedelta(days=299))  # 48 min a day
    assert "over 8 h" not in P.pace_text(fine.pace, fine.today_date)
