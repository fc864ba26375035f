"""Snapshots of the Today view and the activity calendar at 80x24 (one column) and 120x40 (two).

Deterministic: the fixed test guide, a fixed clock (Sunday 2026-11-29 15:00) in UTC, a synthetic
store written with the store's clock set, no blinking cursor. Update with
`pytest tests/tui/test_plan_snapshots.py --snapshot-update` after a deliberate change, and look
at each picture before committing.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.containers import VerticalScroll

from studytui.tui.plan import KEY, SCREEN_ID
from studytui.tui.plan.screen import TodayScreen

from .support import wait_until
from .test_plan_screen import fixed_clock, plan_app, plan_built, write_weeks, write_year  # noqa: F401 (fixed_clock: autouse)

SIZES = {"80x24": (80, 24), "120x40": (120, 40)}


def today_shown(app: Any) -> bool:
    return isinstance(app.screen, TodayScreen) and app.screen.shown is not None


@pytest.mark.parametrize("size", list(SIZES))
def test_today_view(snap_compare, make_app, store, size):
    """Three weeks of history: today's share, what is studied, a review due, FlashAttention being
    learned (it does not fit: it starts today), the finish, the pace, the estimates per kind."""
    write_weeks(store)

    async def run_before(pilot) -> None:
        await plan_built(pilot, pilot.app)
        await pilot.press(KEY)
        assert await wait_until(pilot, lambda: today_shown(pilot.app))
        await pilot.pause()

    assert snap_compare(plan_app(make_app), run_before=run_before, terminal_size=SIZES[size])


@pytest.mark.parametrize("size", list(SIZES))
def test_activity_calendar(snap_compare, make_app, store, size):
    """A year in every shade with a fortnight off, opened as "Activity calendar" opens it: at
    80x24 scrolled down to the calendar."""
    write_year(store)

    async def run_before(pilot) -> None:
        app = pilot.app
        await plan_built(pilot, app)
        app.open_screen(SCREEN_ID, focus="activity")
        assert await wait_until(pilot, lambda: today_shown(app))
        body = app.screen.query_one("#today-body", VerticalScroll)
        if size == "80x24":
            assert await wait_until(pilot, lambda: body.scroll_y > 0)
        await pilot.pause()

    assert snap_compare(plan_app(make_app), run_before=run_before, terminal_size=SIZES[size])
