"""The review schedule kept between runs (issue 27): the same attempts give the same reviews
without loading FSRS; other attempts, another FSRS or a damaged file replay again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from studytui.core import jsoncache
from studytui.practice import schedule
from studytui.store.attempts import Attempt

ATTEMPTS = [
    Attempt("2026-11-01T10:00:00.000000+00:00", "sh-ridge-point", 0, "12", False),
    Attempt("2026-11-01T10:01:00.000000+00:00", "sh-ridge-point", 0, "295", True),
    Attempt("2026-11-02T09:00:00.000000+00:00", "sh-gemm-flops", 0, "1.1e12", True),
]


@pytest.fixture(autouse=True)
def _settled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsoncache, "RACY_S", 0.0)


def _file() -> Path:
    return jsoncache.value_file(schedule._CACHE_NAME)


def test_the_same_attempts_give_the_same_reviews_from_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    replayed = schedule.reviews(ATTEMPTS)
    assert _file().is_file()
    monkeypatch.setattr(schedule, "_replay", lambda by_problem: pytest.fail("replayed although kept"))
    kept = schedule.reviews(list(reversed(ATTEMPTS)))  # (order of reading does not matter: sorted by time)
    assert kept == replayed
    assert all(k.due == r.due and k.due.tzinfo is not None for k, r in zip(kept.values(), replayed.values()))


def test_a_warm_run_does_not_load_fsrs() -> None:
    schedule.reviews(ATTEMPTS)
    code = (
        "import sys, json; from studytui.practice import schedule; from studytui.store.attempts import Attempt\n"
        f"rows = {[tuple(a) for a in ATTEMPTS]!r}\n"
        "r = schedule.reviews([Attempt(*row) for row in rows])\n"
        "print(json.dumps(['fsrs' in sys.modules, sorted(r), [v.due.isoformat() for v in r.values()]]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded, ids, dues = json.loads(out.stdout)
    assert not loaded
    assert ids == sorted(schedule.reviews(ATTEMPTS))
    assert dues == [v.due.isoformat() for v in schedule.reviews(ATTEMPTS).values()]


@pytest.mark.parametrize("change", [
    lambda a: a[:-1],  # one attempt fewer
    lambda a: a + [Attempt("2026-11-03T09:00:00.000000+00:00", "sh-gemm-flops", 1, "2", False)],  # one more
    lambda a: [a[0]._replace(correct=True)] + a[1:],  # a result changed
    lambda a: [a[0]._replace(at="2026-11-01T09:00:00.000000+00:00")] + a[1:],  # a time changed
    lambda a: [a[0]._replace(seed=3)] + a[1:],  # a variant changed
])
def test_other_attempts_are_replayed(change, monkeypatch: pytest.MonkeyPatch) -> None:
    schedule.reviews(ATTEMPTS)
    other = change(list(ATTEMPTS))
    expected = schedule._replay({pid: h for pid, h in _grouped(other).items()})
    calls = []
    real = schedule._replay
    monkeypatch.setattr(schedule, "_replay", lambda by_problem: calls.append(1) or real(by_problem))
    assert schedule.reviews(other) == expected and calls == [1]


def _grouped(attempts: list[Attempt]) -> dict[str, list[Attempt]]:
    out: dict[str, list[Attempt]] = {}
    for a in sorted(attempts, key=lambda a: a.at):
        out.setdefault(a.problem_id, []).append(a)
    return out


@pytest.mark.parametrize("forge", [
    lambda v: v["reviews"].popitem(),  # a problem missing
    lambda v: v["reviews"]["sh-ridge-point"].__setitem__(0, "not a time"),
    lambda v: v["reviews"]["sh-ridge-point"].__setitem__(0, "2026-11-05T00:00:00"),  # no zone
    lambda v: v["reviews"]["sh-ridge-point"].__setitem__(2, "3"),  # a count as text
    lambda v: v["reviews"]["sh-ridge-point"].append(1),
    lambda v: v.__setitem__("digest", "0" * 64),
])
def test_a_forged_or_damaged_schedule_is_replayed(forge, monkeypatch: pytest.MonkeyPatch) -> None:
    replayed = schedule.reviews(ATTEMPTS)
    got = jsoncache.get(schedule._CACHE_NAME, schedule._CACHE_CODE)
    assert got is not None
    value, stamps = got
    forge(value)
    assert jsoncache.put(schedule._CACHE_NAME, value, stamps, schedule._CACHE_CODE, jsoncache.now() + 1)  # a valid digest
    assert schedule.reviews(ATTEMPTS) == replayed


def test_a_truncated_file_is_replayed() -> None:
    replayed = schedule.reviews(ATTEMPTS)
    _file().write_bytes(_file().read_bytes()[:-5])
    assert schedule.reviews(ATTEMPTS) == replayed


def test_nothing_practised_keeps_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUDYTUI_CACHE_DIR", str(tmp_path / "fresh"))
    assert schedule.reviews([]) == {}
    assert not _file().exists()
