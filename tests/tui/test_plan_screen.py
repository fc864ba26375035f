"""The study plan in the app (issue 29): the Today view (key, palette, Enter, Esc, remapping), the
finish date in the header and how it follows the learner, the worker and its timers at every
moment of the app's life, and the calendar's text without colour.

A fixed clock (NOW, a Sunday) in UTC, and a synthetic store written with the store's clock set.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from textual.containers import VerticalScroll

from studytui.core import clock
from studytui.study.plan import Day, heatmap_lines
from studytui.study.session import Change
from studytui.tui.messages import PlanChanged
from studytui.tui.plan import KEY, SCREEN_ID
from studytui.tui.plan.heatmap import Heatmap, legend_lines, visible_days
from studytui.tui.plan.screen import TodayScreen
from studytui.tui.plan.state import PlanState, header_label, plan_state
from studytui.tui.registry import build_registry
from studytui.tui.screens.main import MainScreen

from .support import TODAY, screen_text, wait_for_palette, wait_until

NOW = datetime(TODAY.year, TODAY.month, TODAY.day, 15, 0, tzinfo=timezone.utc)  # Sunday 2026-11-29, 15:00 UTC
LABEL = re.compile(r"finish ~ (\d{4}-\d{2}-\d{2}) at your pace")
PLAN_ONLY = ("studytui.tui.plan",)


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock, "now", lambda: NOW)
    monkeypatch.setenv("TZ", "UTC")


class StoreClock:
    """The store's clock, moved by the test: every write is stamped with `at`."""

    def __init__(self, store: Any, at: datetime) -> None:
        self.at = at
        store._clock = lambda: self.at.isoformat(timespec="microseconds")

    def __call__(self, at: datetime) -> StoreClock:
        self.at = at
        return self


def write_weeks(store: Any) -> None:
    """Three weeks of study of the test guide: four entries done (50 min to 2 h 10 min each),
    evenings on Stream-K with notes, a practice miss yesterday (a review due today), and today
    30 min on Stream-K, then FlashAttention opened 50 minutes ago and being learned."""
    at = StoreClock(store, NOW)
    day = NOW.replace(hour=18) - timedelta(days=21)
    for i, (entry_id, minutes) in enumerate((("roofline", 100), ("cuda-basics", 55), ("inference-arithmetic", 25),
                                             ("volkov-gemm", 130))):
        start = day + timedelta(days=3 * i)
        at(start)
        store.mark_opened(entry_id)
        store.set_state(entry_id, "learning")
        at(start + timedelta(minutes=minutes))
        store.set_state(entry_id, "done")
    for k in range(14, 0, -1):  # the last two weeks' evenings, one day off
        if k == 6:
            continue
        start = NOW.replace(hour=19) - timedelta(days=k)
        at(start)
        store.mark_opened("stream-k")
        at(start + timedelta(minutes=20 + (k * 13) % 70))
        store.set_note("stream-k", f"evening {k}: what the decomposition balances")
    at(NOW - timedelta(days=1, hours=2))
    store.record_attempt("sh-decode-step-floor", 0, "1", False, 0.5)
    at(NOW - timedelta(minutes=100))
    store.mark_opened("stream-k")
    at(NOW - timedelta(minutes=70))
    store.set_note("stream-k", "today: the fix-up step")
    at(NOW - timedelta(minutes=50))
    store.mark_opened("flashattention")
    store.set_state("flashattention", "learning")
    store.set_last_viewed("flashattention")
    at(NOW - timedelta(minutes=1))  # what the app writes from here on


def write_year(store: Any) -> None:
    """A year of evenings on Stream-K in every shade: nothing, an open only, 15 min, 45 min,
    1 h 30 min, 2 h 30 min; a fortnight off in the spring."""
    at = StoreClock(store, NOW)
    pattern = (0, 15, 45, -1, 90, 150, 30, 0, 45, 90)
    for k in range(364, 0, -1):
        start = NOW.replace(hour=18) - timedelta(days=k)
        if 200 <= k < 214:
            continue
        minutes = pattern[(k * 7) % len(pattern)]
        if minutes == 0:
            continue
        at(start)
        store.mark_opened("stream-k")
        if minutes > 0:
            at(start + timedelta(minutes=minutes))
            store.set_note("stream-k", f"day {k}")
    at(NOW - timedelta(minutes=1))


def plan_app(make_app: Any, plugins: tuple[str, ...] = PLAN_ONLY, **kw: Any) -> Any:
    return make_app(registry=build_registry(plugin_modules=plugins), **kw)


async def plan_built(pilot: Any, app: Any, builds: int = 1) -> PlanState:
    state = plan_state(app)
    assert await wait_until(pilot, lambda: state.builds >= builds, timeout=20), "the plan was never built"
    return state


async def open_today(pilot: Any, key: str = KEY) -> TodayScreen:
    app = pilot.app
    await plan_built(pilot, app)
    await pilot.press(key)
    assert await wait_until(pilot, lambda: isinstance(app.screen, TodayScreen) and app.screen.shown is not None)
    await pilot.pause()
    return app.screen


def status_line(app: Any) -> str:
    return str(app.main_screen.query_one("#status").render())


# -- the view ---------------------------------------------------------------------------------------


async def test_the_key_opens_today_and_esc_returns(make_app, store):
    write_weeks(store)
    app = plan_app(make_app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_today(pilot)
        text = screen_text(app)
        assert "every figure is an estimate" in text
        assert re.search(r"Share +1 h 1 min \(a study day at your pace\)", text)
        assert re.search(r"Studied +50 min", text)  # Stream-K this morning, until FlashAttention was opened
        assert re.search(r"Reviews +1 due now \(3 min\): sh-decode-step-floor", text) and "practises them" in text
        assert re.search(r"Left +8 min", text)
        assert "◐ FlashAttention" in text  # being learned: first
        assert re.search(r"Finish +~ \d{4}-\d{2}-\d{2} at your pace", text)
        assert "Estimates per kind" in text and re.search(r"paper +2 h +1 h 50 min  all 4 of yours", text)
        assert "Activity, last 12 months" in text and "Streak " in text and "Mon " in text and "Sun " in text
        assert not screen.has_class("-narrow")
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))


async def test_enter_jumps_to_the_entry_in_the_guide(make_app, store):
    write_weeks(store)
    store.set_last_viewed("roofline")
    app = plan_app(make_app)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_today(pilot)
        assert screen.has_class("-narrow")  # one column at 80x24
        first = screen.shown.today.entries[0].estimate.entry.id
        assert first == "flashattention"
        await pilot.press("enter")
        assert await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert app.current_entry() is not None and app.current_entry().id == first
        # and back again: the view opens where it was, and Esc returns to the guide
        await pilot.press(KEY)
        assert await wait_until(pilot, lambda: isinstance(app.screen, TodayScreen))
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert app.current_entry().id == first


@pytest.mark.parametrize("title", ["Today: reading and reviews", "Activity calendar"])
async def test_the_palette_opens_today_and_the_calendar(make_app, store, title):
    write_year(store)
    app = plan_app(make_app)
    async with app.run_test(size=(80, 24)) as pilot:
        await plan_built(pilot, app)
        await pilot.press("ctrl+p")
        await pilot.press(*title)
        assert await wait_for_palette(pilot, app, title)
        await pilot.press("enter")
        assert await wait_until(pilot, lambda: isinstance(app.screen, TodayScreen) and app.screen.shown is not None)
        body = app.screen.query_one("#today-body", VerticalScroll)
        if title == "Activity calendar":  # scrolled to the calendar, below the rest at 80x24
            assert await wait_until(pilot, lambda: body.scroll_y > 0)
            assert "Mon " in screen_text(app) and "under 30 min" in screen_text(app)
        else:
            await pilot.pause()
            assert body.scroll_y == 0 and "Today, Sun 2026-11-29" in screen_text(app)


async def test_the_key_is_remapped_by_id_in_keys_yaml(make_app, store, tmp_path: Path):
    from studytui.tui.launch import checked_keymap

    registry = build_registry(plugin_modules=PLAN_ONLY)
    (tmp_path / "keys.yaml").write_text(f"{SCREEN_ID}: A\n")
    keymap, warnings = checked_keymap(tmp_path, registry)
    assert keymap == {SCREEN_ID: "A"} and warnings == []
    app = make_app(registry=registry, keymap=keymap)
    async with app.run_test(size=(120, 40)) as pilot:
        await plan_built(pilot, app)
        await pilot.press(KEY)
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)  # the old key gave way
        await open_today(pilot, "A")
        assert (("A", "Today: reading and reviews", SCREEN_ID)) in app.key_rows()


def test_the_key_is_free_and_listed():
    registry = build_registry()
    assert registry.screens[SCREEN_ID].key == KEY
    keys = [spec.key for spec in registry.screens.values() if spec.key]
    assert keys.count(KEY) == 1
    assert any(command.title == "Activity calendar" for command in registry.commands)


async def test_practise_key_opens_the_reviews_due(make_app, store):
    """`r` on Today opens the practice screen for the problems due (here a stand-in screen that
    records what it was asked for: the practice plug-in has tests of its own)."""
    from textual.screen import Screen
    from textual.widgets import Static

    from studytui.tui.registry import ScreenSpec

    asked: list[dict[str, Any]] = []

    class StandIn(Screen[None]):
        BINDINGS = [("escape", "app.pop_screen", "Back")]

        def compose(self):
            yield Static("practice")

    def factory(host: Any, **params: Any) -> Screen[None]:
        asked.append(params)
        return StandIn()

    write_weeks(store)
    registry = build_registry(plugin_modules=PLAN_ONLY)
    registry.add_screen(ScreenSpec(id="practice", title="Practice", factory=factory))
    app = make_app(registry=registry)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_today(pilot)
        assert re.search(r"Reviews +1 due now \(3 min\): sh-decode-step-floor", screen_text(app))
        await pilot.press("r")
        assert await wait_until(pilot, lambda: isinstance(app.screen, StandIn))
        assert asked == [{"due": True}]
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: app.screen is screen)


async def test_no_reviews_no_practice_says_so(make_app, store):
    app = plan_app(make_app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_today(pilot)
        await pilot.press("r")
        await pilot.pause()
        assert app.screen is screen  # nothing opened; a notice says why


# -- the header -----------------------------------------------------------------------------------------


async def test_the_header_shows_the_finish_and_follows_a_mark(make_app, store):
    write_weeks(store)
    app = plan_app(make_app)
    async with app.run_test(size=(140, 40)) as pilot:
        state = await plan_built(pilot, app)
        main = app.main_screen
        assert await wait_until(pilot, lambda: LABEL.search(status_line(app)) is not None)
        before = LABEL.search(status_line(app)).group(1)
        assert main.plan_label == state.label == header_label(state.plan)
        assert app.current_entry().id == "flashattention"
        builds = state.builds
        await pilot.press("d")  # 49 minutes of FlashAttention studied, and it is done
        assert await wait_until(pilot, lambda: state.builds > builds, timeout=20)
        assert await wait_until(pilot, lambda: LABEL.search(status_line(app)).group(1) != before)
        after = LABEL.search(status_line(app)).group(1)
        assert after < before, (before, after)
        assert "flashattention" not in {e.entry.id for e in state.plan.estimates}
        assert state.plan.today.studied_s > 50 * 60 + 45 * 60  # this morning's 50 min, and 49 more


async def test_the_finish_shows_at_80_columns_and_gives_way_last(make_app, store):
    # Issue 29 asks for "finish ~ DATE at your pace" in the header; at 80 columns the progress
    # words shorten to make room for it (the teacher review found it never shown there).
    write_weeks(store)
    app = plan_app(make_app)
    async with app.run_test(size=(80, 24)) as pilot:
        await plan_built(pilot, app)
        main = app.main_screen
        assert await wait_until(pilot, lambda: main.plan_label != "")
        assert await wait_until(pilot, lambda: LABEL.search(status_line(app)) is not None)
        for width in (78, 100, 200, 0):
            text = main.status_text(width)
            assert LABEL.search(text) and (not width or len(text) <= width), (width, text)
            assert "Overall" in text and "/" in text  # the counts stay whole
        narrow = main.status_text(40)  # no room for both: the finish date gives way, the counts stay
        assert not LABEL.search(narrow) and narrow == main._progress_text(40)


async def test_no_history_no_label(make_app, store):
    """A fresh store (as every existing snapshot has) and marks made in passing: no finish date, no label."""
    app = plan_app(make_app)
    async with app.run_test(size=(160, 40)) as pilot:
        state = await plan_built(pilot, app)
        assert state.plan is not None and state.plan.pace is None
        assert state.label == "" and app.main_screen.plan_label == ""
        assert "finish" not in status_line(app)
        await pilot.press("d")  # marked in passing: milliseconds of study
        assert await wait_until(pilot, lambda: state.builds >= 2, timeout=20)
        assert state.label == "" and "finish" not in status_line(app)


async def test_plan_writes_nothing(make_app, store):
    write_weeks(store)
    before = (store.events(), store.states(), store.attempts(), Path(store.path).read_bytes())
    app = plan_app(make_app)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_today(pilot)
        state = plan_state(app)
        state.rebuild()
        assert await wait_until(pilot, lambda: state.builds >= 3, timeout=20)
        assert (store.events(), store.states(), store.attempts()) == before[:3]
    assert not (Path(store.path).parent / "plan.yaml").exists()


async def test_a_bad_plan_yaml_is_shown_and_the_defaults_used(make_app, store):
    write_weeks(store)
    (Path(store.path).parent / "plan.yaml").write_text("minutes:\n  paper: -3\n")
    app = plan_app(make_app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_today(pilot)
        assert screen.state.problems and "the defaults are used" in screen.state.problems[0]
        block = screen.query_one("#today-problems")
        block.scroll_visible(animate=False)  # below the fold where the data directory's path is long
        await pilot.pause()
        assert block.display and "the defaults are used" in " ".join(screen_text(app).split())


# -- timers and workers at every moment -------------------------------------------------------------------


def _poke(state: PlanState, screen: TodayScreen | None = None, main: MainScreen | None = None) -> None:
    state.study_changed(None)
    state.schedule(0)
    state.rebuild()
    state.start()
    state.stop()
    if screen is not None and state.plan is not None:
        screen.show_plan(state.plan._replace(streak_days=99))
        screen.action_scroll_body(1)
    if main is not None:
        main.on_plan_changed(PlanChanged("finish ~ 2030-01-01 at your pace"))


async def test_timers_are_safe_before_mount_and_after_unmount(make_app, store):
    write_weeks(store)
    app = plan_app(make_app, settled=False)
    state = plan_state(app)
    _poke(state)  # before the app runs: nothing scheduled, nothing built
    assert state.builds == 0 and state.plan is None
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(100):  # every step while the main screen mounts
            _poke(state)
            if app.main_screen is not None and app.main_screen.detail.ready:
                break
            await pilot.pause()
        await plan_built(pilot, app)
        screen = await open_today(pilot)
        main = app.main_screen
        for _ in range(3):  # a run of changes: one rebuild after they stop
            app.publish(Change.of("roofline"))
        assert await wait_until(pilot, lambda: state.builds >= 3, timeout=20)
    # After the app has exited: nothing is scheduled, posted or drawn, and nothing fails.
    builds = state.builds
    _poke(state, screen, main)
    assert state.builds == builds
    assert main.plan_label == "finish ~ 2030-01-01 at your pace"  # kept, not drawn


# -- the calendar ------------------------------------------------------------------------------------


def _year() -> list[Day]:
    first = TODAY - timedelta(days=364)
    return [Day(first + timedelta(days=i), (i * 37 % 5) * 1500.0, i % 3) for i in range(365)]


def test_the_calendar_reads_without_colour_as_the_command_prints_it():
    days = _year()
    widget = Heatmap(days)
    assert widget.lines(61)[:8] == [line.rstrip() for line in heatmap_lines(days)]
    assert widget.lines(80)[8] == "· none  ░ under 30 min  ▒ under 1 h  ▓ under 2 h  █ 2 h or more"
    assert all(ch in widget.render_text(61).plain for ch in "·░▒▓█")


def test_a_narrow_calendar_keeps_the_newest_weeks():
    days = _year()
    kept = visible_days(days, 30)
    assert kept[-1] == days[-1] and len(kept) < len(days)
    assert kept[0].date.weekday() == 0 and (kept[-1].date - kept[0].date).days // 7 + 1 == 26
    assert all(len(line) <= 30 for line in Heatmap(days).lines(30))
    assert legend_lines(30) == ["· none  ░ under 30 min", "▒ under 1 h  ▓ under 2 h", "█ 2 h or more"]


@pytest.mark.parametrize("setting", ["NO_COLOR", "high contrast"])
async def test_the_calendar_is_read_by_its_characters_without_colour_and_in_high_contrast(make_app, store, monkeypatch, setting):
    write_year(store)
    if setting == "NO_COLOR":
        monkeypatch.setenv("NO_COLOR", "1")
    app = plan_app(make_app)
    async with app.run_test(size=(120, 40)) as pilot:
        if setting == "high contrast":
            app.theme = "studytui-high-contrast"
        else:
            assert app.no_color
        screen = await open_today(pilot)
        text = screen_text(app)
        heatmap = screen.query_one(Heatmap)
        for line in heatmap.lines(heatmap.content_size.width)[:8]:
            assert line in text
        assert all(ch in text for ch in "·░▒▓█") and "█ 2 h or more" in text


# -- review findings: Today, the header and `r` agree on what is due ---------------------------------


async def test_today_the_header_and_r_agree_on_what_is_due(make_app, store, monkeypatch):
    """A problem missed 4 minutes ago comes back in 10: Today names it as due later today with its
    time (not as due), `r` says when the first is due, and the header's "N due" counts only what
    practice offers now. Each view refreshes itself when it comes due (a timer each)."""
    from studytui.guide import load_guide
    from studytui.tui.practice import practice_state, refresh_views

    at = StoreClock(store, NOW - timedelta(days=2))
    store.record_attempt("sh-decode-step-floor", 0, "1", False, 0.5)  # due two days ago
    at(NOW - timedelta(minutes=4))
    store.record_attempt("sh-ridge-point", 0, "1", False, 0.5)  # due at 15:06
    registry = build_registry(plugin_modules=("studytui.tui.plan", "studytui.tui.practice"))
    app = make_app(guide=load_guide(), registry=registry)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_until(pilot, lambda: practice_state(app) is not None and "due" in status_line(app))
        assert "1 due" in status_line(app)
        screen = await open_today(pilot)
        text = " ".join(str(screen.query_one("#today-numbers-reviews .today-row-text").render()).split())
        assert "1 due now (3 min): sh-decode-step-floor; r practises them" in text
        assert "1 due later today (3 min): sh-ridge-point at 15:06" in text
        assert [pid for pid, _ in screen.shown.today.reviews] == [r.problem_id for r in practice_state(app).practice.due()]
        # Both refresh themselves when it comes due: a second past 15:06.
        state = plan_state(app)
        assert state._due_timer is not None and state._due_timer._interval == pytest.approx(361, abs=1)
        assert practice_state(app).timer is not None and practice_state(app).timer._interval == pytest.approx(361, abs=1)
        # Seven minutes on (what those timers run): Today, the header and practice all say 2.
        monkeypatch.setattr(clock, "now", lambda: NOW + timedelta(minutes=7))
        builds = state.builds
        state.rebuild()
        refresh_views(app)
        assert await wait_until(pilot, lambda: state.builds > builds and len(screen.shown.today.reviews) == 2)
        assert "2 due" in status_line(app) and not screen.shown.today.later and state._due_timer is None


async def test_r_says_when_the_first_review_is_due(make_app, store):
    from studytui.guide import load_guide
    from studytui.tui import compat

    StoreClock(store, NOW - timedelta(minutes=4))
    store.record_attempt("sh-ridge-point", 0, "1", False, 0.5)
    app = make_app(guide=load_guide(), registry=build_registry(plugin_modules=("studytui.tui.plan", "studytui.tui.practice")))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_today(pilot)
        assert not screen.shown.today.reviews and screen.shown.today.later
        await pilot.press("r")
        await pilot.pause()
        assert app.screen is screen
        assert "No review is due yet: the first is due at 15:06." in [n.message for n in compat.notifications(app)]


# -- second review: the header at every width, Continue agrees with Today ---------------------------


async def continue_title(app: Any) -> str:
    from studytui.tui.commands import StudyCommands

    provider = StudyCommands(app.screen)
    await provider.startup()
    titles = [hit.text async for hit in provider.discover()]
    return next(t for t in titles if t.startswith("Continue: "))


async def test_continue_next_and_today_offer_the_same_entry(make_app, store):
    """H4: with FlashAttention being learned (the last entry studied), the palette offered
    "Continue:" the next pending entry while Today listed FlashAttention first. An entry in
    progress is continued first everywhere (flow.continue_entry); once done, the next pending one."""
    from studytui.study.flow import continue_entry

    write_weeks(store)
    app = plan_app(make_app)
    async with app.run_test(size=(120, 40)) as pilot:
        state = await plan_built(pilot, app)
        first = state.plan.today.entries[0].estimate.entry
        assert (first.id, state.plan.today.entries[0].estimate.state) == ("flashattention", "learning")
        assert state.plan.today.next_up.entry is first
        assert await continue_title(app) == f"Continue: {first.title}"
        assert continue_entry(app.guide, app.session.progress) is first
        builds = state.builds
        assert app.current_entry().id == "flashattention"
        await pilot.press("d")
        assert await wait_until(pilot, lambda: state.builds > builds, timeout=20)
        # (Today's share is used up by now: Today names the next entry, `next_up`.)
        after = state.plan.today.next_up.entry
        assert after.id != "flashattention" and state.plan.today.next_up.state == "pending"
        assert await continue_title(app) == f"Continue: {after.title}"
        assert continue_entry(app.guide, app.session.progress) is after


async def test_the_header_refits_on_every_resize_and_keeps_the_finish_at_80(make_app, store):
    """H1: the header was fitted once, at start-up: at 80x24 it showed no finish date (the section
    and practice took the room), and a resize 120 -> 80 -> 120 kept the old line (clipped, or the
    80-column text at 120). Now it is fitted again at each resize, with the finish date kept."""
    from studytui.guide import load_guide
    from studytui.tui.practice import practice_state

    write_weeks(store)
    StoreClock(store, NOW - timedelta(hours=3))
    store.record_attempt("sh-ridge-point", 0, "1", False, 0.5)  # practised: "◆0/N, 2 due" in the header
    registry = build_registry(plugin_modules=("studytui.tui.plan", "studytui.tui.practice"))
    app = make_app(guide=load_guide(), registry=registry)

    def line() -> str:
        return status_line(app).rstrip()

    async with app.run_test(size=(80, 24)) as pilot:
        main = app.main_screen
        await plan_built(pilot, app)
        assert await wait_until(pilot, lambda: main.plan_label != "" and practice_state(app) is not None and "due" in line())
        assert await wait_until(pilot, lambda: LABEL.search(line()) is not None), line()
        narrow = line()
        assert "◆" in narrow and "due" in narrow and "Overall" in narrow and len(narrow) <= 78, narrow
        for size in ((120, 40), (80, 24), (120, 40), (100, 30)):
            await pilot.resize_terminal(*size)
            assert await wait_until(pilot, lambda: line() == main.status_text(size[0] - 2)), (size, line())
            text = line()
            assert LABEL.search(text) and len(text) <= size[0] - 2 and "…" not in text[-30:], (size, text)
            if size[0] == 80:
                assert text == narrow
            else:
                assert text != narrow and "  │  " in text  # the wider line, not the 80-column one
        # Resized while another screen is on top: the header is right on coming back.
        await pilot.press(KEY)
        assert await wait_until(pilot, lambda: isinstance(app.screen, TodayScreen))
        await pilot.resize_terminal(80, 24)
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: isinstance(app.screen, MainScreen) and line() == narrow), line()


async def test_the_practice_header_says_one_count_of_what_is_due(make_app, store, monkeypatch):
    """H2: after a miss the practice screen said "Practice · 1 due for review · mastery 0/11 · 0 due":
    the count when it was opened and the live one. Now it says the live count only, when the next
    review is due, and follows it when that comes (refresh_views, the timer practice keeps)."""
    from studytui.guide import load_guide
    from studytui.tui.practice import practice_state, refresh_views
    from studytui.tui.practice.screen import PracticeScreen

    at = StoreClock(store, NOW - timedelta(days=2))
    store.record_attempt("sh-decode-step-floor", 0, "1", False, 0.5)  # due two days ago
    at(NOW)  # what the app writes
    app = make_app(guide=load_guide(), registry=build_registry(plugin_modules=("studytui.tui.practice",)))

    def title() -> str:
        return str(app.screen.query_one("#practice-title").render())

    async with app.run_test(size=(80, 24)) as pilot:
        assert await wait_until(pilot, lambda: practice_state(app) is not None and practice_state(app).due == 1)
        app.open_screen("practice", due=True)
        assert await wait_until(pilot, lambda: isinstance(app.screen, PracticeScreen))
        await pilot.pause()
        assert title().startswith("Practice · 1 due for review · mastery 0/"), title()
        await pilot.press("1", "enter")  # a miss: due again in ten minutes
        assert await wait_until(pilot, lambda: practice_state(app).due == 0)
        assert await wait_until(pilot, lambda: "none due for review now, next at 15:10" in title()), title()
        assert "1 due" not in title() and "0 due" not in title()
        # Eleven minutes on (what practice's own timer runs): the header says it is due again.
        monkeypatch.setattr(clock, "now", lambda: NOW + timedelta(minutes=11))
        refresh_views(app)
        assert await wait_until(pilot, lambda: title().startswith("Practice · 1 due for review ·")), title()
