"""The plan's imagined reviews kept between runs (practice/schedule.imagined_times, issue 27): the
same forecast as walking FSRS, never from another history or a forged file, and a warm plan
imports no FSRS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studytui.core import jsoncache
from studytui.practice import schedule
from studytui.store.attempts import Attempt
from studytui.study import plan as P

UTC = timezone.utc
NOW = datetime(2026, 6, 30, 20, 0, tzinfo=UTC)


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of this test's own; RACY_S 0 so what is written here is kept at once."""
    monkeypatch.setenv("STUDYTUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(jsoncache, "RACY_S", 0.0)
    return tmp_path / "cache"


def _forecast_file() -> Path:
    return jsoncache.value_file(schedule._FORECAST_NAME)


def _attempts(n: int, correct: list[bool], start: datetime) -> list[Attempt]:
    return [Attempt(P._iso(start + timedelta(hours=5 * i)), f"p{i % n}", i // n, "1", ok) for i, ok in enumerate(correct)]


def _walked(attempts: list[Attempt], now: datetime, until: date) -> dict:
    """The forecast with nothing kept: every imagined review walked with FSRS."""
    real_get = jsoncache.get
    jsoncache.get = lambda name, *a, **k: None if name == schedule._FORECAST_NAME else real_get(name, *a, **k)
    try:
        return P.forecast_reviews(attempts, now, UTC, until).by_day
    finally:
        jsoncache.get = real_get


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 4), correct=st.lists(st.booleans(), min_size=1, max_size=8),
       start_hours=st.integers(-40 * 24, -1), until_days=st.integers(1, 900))
def test_a_kept_forecast_is_the_walked_one(n, correct, start_hours, until_days) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("STUDYTUI_CACHE_DIR", folder)
        monkeypatch.setattr(jsoncache, "RACY_S", 0.0)
        _compare_kept_and_walked(n, correct, start_hours, until_days)


def _compare_kept_and_walked(n: int, correct: list[bool], start_hours: int, until_days: int) -> None:
    attempts = [a for a in _attempts(n, correct, NOW + timedelta(hours=start_hours)) if a.at <= P._iso(NOW)]
    if not attempts:
        return
    until = NOW.date() + timedelta(days=until_days)
    walked = _walked(attempts, NOW, until)
    first = P.forecast_reviews(attempts, NOW, UTC, until).by_day  # works out and keeps what is not due yet
    again = P.forecast_reviews(attempts, NOW, UTC, until).by_day  # from what was kept
    assert first == walked == again
    later = NOW + timedelta(days=3, hours=7)  # a plan made days later: the kept times still serve
    assert P.forecast_reviews(attempts, later, UTC, until).by_day == _walked(attempts, later, until)


def test_a_warm_plan_imports_no_fsrs(cache: Path, tmp_path: Path) -> None:
    from tests.support import heavy_modules_loaded

    data = tmp_path / "data"
    env = {**os.environ, "STUDYTUI_DATA_DIR": str(data)}
    for problem in ("sh-ridge-point", "sh-roofline-bound"):
        done = subprocess.run([sys.executable, "-m", "studytui", "practice", "answer", problem, "--reveal"],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
    assert heavy_modules_loaded(["plan"], ("fsrs",), env)[0] == 0  # (the first plan works the reviews out)
    env_later = {**env}
    code, loaded = heavy_modules_loaded(["plan"], ("fsrs", "typing_extensions"), env_later)
    assert code == 0 and loaded == set()


def _first_kept(cache: Path, attempts: list[Attempt], until: date) -> dict:
    P.forecast_reviews(attempts, NOW, UTC, until)
    path = _forecast_file()
    assert path.is_file()
    return json.loads(path.read_bytes().partition(b"\n")[2])


def _rewrite(path: Path, value: dict) -> None:
    """The file with `value` as its payload and a correct digest: what a hostile writer could do."""
    head, _, _ = path.read_bytes().partition(b"\n")
    header = json.loads(head)
    payload = json.dumps(value).encode()
    header["bytes"], header["blake2b"] = len(payload), jsoncache.digest_hex(payload)
    path.write_bytes(json.dumps(header).encode() + b"\n" + payload)


@pytest.mark.parametrize("change", ["shift", "order", "naive", "key", "type", "past-end"])
def test_forged_kept_times_are_not_used(cache: Path, change: str) -> None:
    attempts = _attempts(2, [True, False, True], NOW - timedelta(hours=12))
    until = NOW.date() + timedelta(days=400)
    value = _first_kept(cache, attempts, until)
    assert len(value) == 2  # a row per problem, under the key of its attempts and first review
    forged = {}
    for key, (end, times) in value.items():
        if change == "shift":  # plausible but wrong times, under a key no attempts have
            forged["0" * 64] = [end, [(datetime.fromisoformat(t) + timedelta(days=2)).isoformat() for t in times]]
        elif change == "order":
            forged[key] = [end, list(reversed(times)) if len(times) > 1 else times + times]
        elif change == "naive":
            forged[key] = [end, [t.replace("+00:00", "") for t in times]]
        elif change == "key":  # another history's times under this key
            forged[key] = [end, [(datetime.fromisoformat(t) + timedelta(days=1)).isoformat() for t in times]]
        elif change == "type":
            forged[key] = [end, [1, 2, 3]]
        else:  # a time at or after the end it claims
            forged[key] = [times[0], times]
    _rewrite(_forecast_file(), forged)
    got = P.forecast_reviews(attempts, NOW, UTC, until).by_day
    if change == "key":  # rows that check out are used as they are: the key is the digest of what they were made from
        assert got != _walked(attempts, NOW, until)
        return
    assert got == _walked(attempts, NOW, until)


def test_two_stores_keep_their_forecasts_side_by_side(cache: Path) -> None:
    one = _attempts(1, [True], NOW - timedelta(hours=12))
    two = _attempts(1, [False, True], NOW - timedelta(hours=20))
    until = NOW.date() + timedelta(days=300)
    P.forecast_reviews(one, NOW, UTC, until)
    P.forecast_reviews(two, NOW, UTC, until)
    expected = _walked(one, NOW, until)
    walks = []
    real_walk = schedule._walk
    schedule._walk = lambda *a: walks.append(a) or real_walk(*a)
    try:
        assert P.forecast_reviews(one, NOW, UTC, until).by_day == expected
        assert walks == []  # still kept after the other store's plan
    finally:
        schedule._walk = real_walk


def test_another_history_is_worked_out_again(cache: Path) -> None:
    attempts = _attempts(1, [True], NOW - timedelta(hours=12))
    until = NOW.date() + timedelta(days=300)
    P.forecast_reviews(attempts, NOW, UTC, until)
    more = attempts + [Attempt(P._iso(NOW - timedelta(hours=1)), "p0", 1, "1", False)]
    assert P.forecast_reviews(more, NOW, UTC, until).by_day == _walked(more, NOW, until)


@pytest.mark.parametrize("hours_ago", [0.5, 30, 24 * 20])  # due later today, overdue since yesterday, long overdue
def test_each_review_is_imagined_on_its_day_an_overdue_one_at_the_start_of_today(cache: Path, hours_ago: float) -> None:
    """The rule, walked by hand with FSRS: the first imagined review at the problem's due time, or
    at the start of today when that is past; each next at the due time the one before gives."""
    from zoneinfo import ZoneInfo

    tz = ZoneInfo("Europe/Berlin") if Path("/usr/share/zoneinfo/Europe/Berlin").exists() else UTC
    history = [Attempt(P._iso(NOW - timedelta(hours=hours_ago)), "p", 0, "1", False)]  # a miss: due 10 min later
    due = schedule.reviews(history)["p"].due
    start_of_today = P.day_start(P.local_date(NOW, tz), tz)
    imagined, at, days = schedule.Imagined(history), max(due, start_of_today), []
    until = NOW.date() + timedelta(days=200)
    while P.local_date(at, tz) <= until:
        days.append(P.local_date(at, tz))
        following = imagined.right_at(at)
        at = following if following > at else at + timedelta(days=1)
    expected: dict = {}
    for day in days:
        expected.setdefault(day, []).append("p")
    got = P.forecast_reviews(history, NOW, tz, until).by_day
    assert got == {day: tuple(ids) for day, ids in expected.items()}
    later = NOW + timedelta(hours=1, minutes=30)  # (23:30 in Berlin: the same day)
    assert P.forecast_reviews(history, later, tz, until).by_day == got  # the same all day
