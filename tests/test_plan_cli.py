"""`studytui plan` end to end (issue 29): its JSON keys, the report at 80 columns with the calendar,
NO_COLOR, every refusal of bad input (one line, exit 2), and that it writes nothing."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from rich.cells import cell_len

from studytui.cli import main
from studytui.cli.commands import plan as plan_command
from studytui.guide import load_guide
from studytui.store import open_store

GUIDE = load_guide()
NOW = datetime(2026, 10, 31, 9, 0, tzinfo=timezone.utc)  # 10:00 in Berlin
# An SGR sequence that sets a colour (foreground or background: 30-49, 90-107, 256 or true colour).
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")
STYLE = re.compile(r"\x1b\[[0-9;]*m")
PAPERS = [e for e in GUIDE.entries if e.kind == "paper" and e.try_it is None]


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan_command, "_now", lambda: NOW)
    monkeypatch.setenv("TZ", "Europe/Berlin")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code, out, err = run(capsys, "plan", "--json", *argv)
    assert code == 0, err
    return json.loads(out)


def write_history(data_dir: Path, days: int = 20, minutes: int = 45, attempts: int = 0) -> None:
    """One paper a day, each opened at 19:00 Berlin and marked done `minutes` later."""
    store = open_store(data_dir)
    clock = {"t": NOW}
    store._clock = lambda: clock["t"].isoformat(timespec="microseconds")
    first = NOW.replace(hour=18) - timedelta(days=days)
    for i in range(days):
        clock["t"] = first + timedelta(days=i)
        store.mark_opened(PAPERS[i].id)
        store.set_state(PAPERS[i].id, "learning")
        clock["t"] += timedelta(minutes=minutes)
        store.set_state(PAPERS[i].id, "done")
    for i in range(attempts):
        clock["t"] = first + timedelta(days=i, hours=2)
        store.record_attempt("sh-decode-step-floor", i, "1", i % 2 == 0, 0.0)
    store.close()


# -- JSON --------------------------------------------------------------------------------------------


def test_the_json_has_the_keys_the_issue_names(capsys, isolated_data_dir):
    write_history(isolated_data_dir, attempts=3)
    data = run_json(capsys)
    for key in ("entries", "remaining_s", "pace", "finish", "today", "activity", "streak_days", "longest_streak_days"):
        assert key in data, key
    assert all({"id", "estimate_s", "calibrated"} <= set(e) for e in data["entries"])
    assert len(data["entries"]) == len(GUIDE.entries) - 20
    assert {"seconds_per_day", "active_days_per_week"} <= set(data["pace"])
    assert data["pace"]["seconds_per_day"] == 2700 and data["pace"]["active_days_per_week"] == 7.0
    assert date.fromisoformat(data["finish"]) > NOW.date()
    assert len(data["activity"]) == 365 and all(set(d) == {"date", "seconds", "events"} for d in data["activity"])
    assert data["activity"][-1]["date"] == "2026-10-31" and data["activity"][-2]["seconds"] >= 2700
    assert data["streak_days"] == 20 and data["longest_streak_days"] == 20
    assert data["remaining_s"] == pytest.approx(sum(e["remaining_s"] for e in data["entries"]), abs=len(data["entries"]))
    cal = data["calibration"]
    assert cal["samples"] == 20 and cal["kinds"]["paper"]["basis"] == "kind" and cal["kinds"]["paper"]["samples"] == 20
    assert all(e["calibrated"] for e in data["entries"])
    assert data["all_figures_are_estimates"] is True and data["time_zone"] == "Europe/Berlin"
    assert data["reviews"]["before_finish"] >= 1 and data["today"]["reviews"]


def test_no_history_says_it_uses_defaults(capsys):
    data = run_json(capsys)
    assert data["finish"] is None and data["pace"] is None and "--hours-per-week" in data["finish_note"]
    assert not any(e["calibrated"] for e in data["entries"])
    assert any("default" in note for note in data["notes"])
    assert data["streak_days"] == 0 and data["longest_streak_days"] == 0
    code, out, _ = run(capsys, "plan")
    assert code == 0 and "not measured yet" in out and "the default (no history)" in out


def test_hours_per_week_and_by(capsys):
    total = sum(e["remaining_s"] for e in run_json(capsys)["entries"])
    data = run_json(capsys, "--hours-per-week", "7")
    assert data["pace"]["source"] == "hours-per-week" and data["pace"]["seconds_per_week"] == 7 * 3600
    days = -(-total // 3600)  # 1 h a calendar day
    assert data["finish"] == (NOW.date() + timedelta(days=days - 1)).isoformat()
    goal = run_json(capsys, "--by", "2027-06-30")
    assert goal["pace"]["source"] == "by" and goal["finish"] <= "2027-06-30" and goal["pace"]["feasible"]
    needed = goal["pace"]["seconds_per_week"] / 3600
    assert needed == pytest.approx(total / 3600 / ((date(2027, 6, 30) - NOW.date()).days + 1) * 7, rel=1e-3)
    code, out, _ = run(capsys, "plan", "--by", "2027-06-30")
    assert code == 0 and "what finishing by 2027-06-30 needs" in " ".join(out.split())


def test_a_plan_yaml_changes_the_defaults(capsys, isolated_data_dir):
    (isolated_data_dir / "plan.yaml").write_text("minutes:\n  paper: 30\n")
    data = run_json(capsys)
    paper = next(e for e in data["entries"] if e["kind"] == "paper" and e["id"] in {p.id for p in PAPERS})
    assert paper["default_s"] == 1800 and data["calibration"]["config"].endswith("plan.yaml")


# -- the report ----------------------------------------------------------------------------------------


def test_the_report_fits_80_columns_with_a_calendar_readable_without_colour(capsys, isolated_data_dir, monkeypatch):
    write_history(isolated_data_dir, attempts=2)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("FORCE_COLOR", "1")  # a terminal, as far as Rich knows: NO_COLOR must still win
    code, out, err = run(capsys, "plan")
    assert code == 0, err
    assert not COLOUR.search(out), out  # bold and dim may stay: NO_COLOR is about colour
    lines = [STYLE.sub("", line) for line in out.splitlines()]
    assert max(cell_len(line) for line in lines) <= 80
    assert "estimate" in lines[0]
    for label in ("Remaining", "Pace", "Finish", "Today, Sat 2026-10-31", "Estimates per kind", "streak: 20 days now"):
        assert label in out, label
    weekdays = [i for i, line in enumerate(lines) if line[:4] in ("Mon ", "Tue ", "Wed ", "Thu ", "Fri ", "Sat ", "Sun ")]
    assert len(weekdays) == 7 and weekdays == list(range(weekdays[0], weekdays[0] + 7))
    months = lines[weekdays[0] - 1].split()
    assert {"Nov", "Jan", "Oct"} <= set(months)
    grid = "".join(lines[i][4:] for i in weekdays)
    assert grid.count("▒") + grid.count("▓") == 20 and "·" in grid  # 45 min days; the rest nothing
    assert "under 30 min" in out  # the legend says what each shade means


def test_with_colour_the_calendar_is_coloured(capsys, isolated_data_dir, monkeypatch):
    write_history(isolated_data_dir, days=3)
    monkeypatch.setenv("FORCE_COLOR", "1")
    code, out, _ = run(capsys, "plan")
    assert code == 0 and COLOUR.search(out) and "▒" in out


@pytest.mark.parametrize("columns", ["80", "120"])
def test_every_line_fits(capsys, isolated_data_dir, monkeypatch, columns):
    write_history(isolated_data_dir, days=30)
    monkeypatch.setenv("COLUMNS", columns)
    for argv in ([], ["--hours-per-week", "3"], ["--by", "2026-11-02"]):
        code, out, err = run(capsys, "plan", *argv)
        assert code == 0, err
        assert max(cell_len(line) for line in out.splitlines()) <= int(columns)


# -- bad input: one line, exit 2 ----------------------------------------------------------------------


@pytest.mark.parametrize("argv, message", [
    (["--hours-per-week", "0"], "more than 0"),
    (["--hours-per-week", "-3"], "more than 0"),
    (["--hours-per-week=-inf"], "number of hours"),
    (["--hours-per-week", "inf"], "number of hours"),
    (["--hours-per-week", "nan"], "number of hours"),
    (["--hours-per-week", "1e400"], "finite"),
    (["--hours-per-week", "200"], "at most 168"),
    (["--hours-per-week", "lots"], "number of hours"),
    (["--hours-per-week", ""], "number of hours"),
    (["--hours-per-week", "\x1b]0;pwned\x07"], "number of hours"),
    (["--by", "2026-10-30"], "in the past"),
    (["--by", "2027-02-29"], "not a date on the calendar"),
    (["--by", "next friday"], "YYYY-MM-DD"),
    (["--by", "31/12/2027"], "YYYY-MM-DD"),
    (["--by", "9999-12-31"], "10 years"),
    (["--hours-per-week", "5", "--by", "2027-01-01"], "not allowed with"),
    (["--hours-per-week"], "expected one argument"),
    (["--json", "extra"], "unrecognized arguments"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    with_exit = None
    try:
        code, out, err = run(capsys, "plan", *argv)
    except SystemExit as exc:  # argparse's own refusals
        with_exit = exc.code
        out, err = capsys.readouterr()
        code = with_exit
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and message in err, err
    assert "\x1b" not in err and "\x07" not in err  # quoted input is escaped, never obeyed


def test_a_bad_plan_yaml_is_one_line_and_exit_2(capsys, isolated_data_dir):
    (isolated_data_dir / "plan.yaml").write_text("minutes:\n  paper: -1\n")
    code, out, err = run(capsys, "plan")
    assert code == 2 and out == "" and err.count("\n") == 1 and "minutes.paper" in err


# -- nothing is written ----------------------------------------------------------------------------------


def _fingerprint(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir()) if p.is_file()}


def test_plan_writes_nothing(capsys, isolated_data_dir):
    assert run(capsys, "plan", "--json")[0] == 0
    assert list(isolated_data_dir.iterdir()) == []  # no database, and none created
    write_history(isolated_data_dir, attempts=2)
    before = _fingerprint(isolated_data_dir)
    events = len(open_store(isolated_data_dir).events())
    for argv in (["--json"], [], ["--hours-per-week", "4"], ["--by", "2027-05-01"]):
        assert run(capsys, "plan", *argv)[0] == 0
    assert _fingerprint(isolated_data_dir) == before
    assert len(open_store(isolated_data_dir).events()) == events


def test_a_store_from_an_older_studytui_is_not_upgraded_by_plan(capsys, isolated_data_dir):
    from studytui.store.schema import create_v1
    from studytui.store.store import Store

    old = Store(isolated_data_dir / "studytui.db", migrations={1: create_v1})
    old.set_state(PAPERS[0].id, "done")
    old.close()
    before = _fingerprint(isolated_data_dir)
    code, out, err = run(capsys, "plan")
    assert code == 1 and out == "" and "older studytui" in err and "studytui progress" in err and err.count("\n") == 1
    assert _fingerprint(isolated_data_dir) == before


def test_progress_under_an_old_id_counts_without_being_moved(capsys, isolated_data_dir):
    aliased = next((e for e in GUIDE.entries if e.aliases), None)
    if aliased is None:
        pytest.skip("no entry in the content has an alias")
    store = open_store(isolated_data_dir)
    store.set_state(aliased.aliases[0], "done")
    store.close()
    before = _fingerprint(isolated_data_dir)
    data = run_json(capsys)
    assert aliased.id not in {e["id"] for e in data["entries"]}
    assert _fingerprint(isolated_data_dir) == before  # the alias was followed in memory only


# -- start-up ---------------------------------------------------------------------------------------------


def test_plan_json_loads_neither_rich_nor_fsrs_nor_textual_without_practice(tmp_path):
    script = (
        "import sys, io, contextlib\n"
        "from studytui.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['plan', '--json'])\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'fsrs', 'textual', 'markdown_it'})\n"
        "print(code, loaded)\n"
    )
    env = {**os.environ, "STUDYTUI_DATA_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert proc.stdout.strip() == "0 []", proc.stderr


# -- review findings: the plan and `practice due` agree on what is due -------------------------------


def test_the_plan_calls_due_only_what_practice_due_offers(capsys, isolated_data_dir, monkeypatch):
    """A problem missed 4 minutes ago comes back in 10: `practice due` does not offer it yet, so the
    plan must not call it due; it names it as due later today, at the time practice will offer it."""
    from studytui.cli.commands import practice as practice_command

    monkeypatch.setattr(practice_command, "_now", lambda: NOW)
    store = open_store(isolated_data_dir)
    clock = {"t": NOW - timedelta(days=2)}
    store._clock = lambda: clock["t"].isoformat(timespec="microseconds")
    store.record_attempt("sh-decode-step-floor", 0, "1", False, 0.5)  # due since 2 days ago
    clock["t"] = NOW - timedelta(minutes=4)
    store.record_attempt("sh-ridge-point", 0, "1", False, 0.5)  # due at 10:06 Berlin
    store.close()
    code, due_out, err = run(capsys, "practice", "due")
    assert code == 0, err
    assert "sh-decode-step-floor" in due_out and "sh-ridge-point" not in due_out
    code, out, err = run(capsys, "plan")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "1 review due now: sh-decode-step-floor ('studytui practice due')" in flat
    assert "1 review due later today: sh-ridge-point at 10:06" in flat
    data = run_json(capsys)
    assert [r["problem_id"] for r in data["today"]["reviews"]] == ["sh-decode-step-floor"]
    assert [r["problem_id"] for r in data["today"]["later_reviews"]] == ["sh-ridge-point"]
    # Once it is due, both offer it; before anything is due, `practice due` names the time in the
    # learner's zone, as the plan does.
    monkeypatch.setattr(practice_command, "_now", lambda: NOW + timedelta(minutes=7))
    monkeypatch.setattr(plan_command, "_now", lambda: NOW + timedelta(minutes=7))
    code, due_out, _ = run(capsys, "practice", "due")
    assert "sh-ridge-point" in due_out and "sh-decode-step-floor" in due_out
    _, out, _ = run(capsys, "plan")
    assert "2 reviews due now" in " ".join(out.split()) and "later today" not in out


def test_practice_due_names_the_next_review_in_the_learners_zone(capsys, isolated_data_dir, monkeypatch):
    from studytui.cli.commands import practice as practice_command

    monkeypatch.setattr(practice_command, "_now", lambda: NOW)
    store = open_store(isolated_data_dir)
    store._clock = lambda: (NOW - timedelta(minutes=4)).isoformat(timespec="microseconds")
    store.record_attempt("sh-ridge-point", 0, "1", False, 0.5)
    store.close()
    _, out, _ = run(capsys, "practice", "due")
    assert "Next review: 2026-10-31 10:06 (Europe/Berlin)." in " ".join(out.split())
    _, out, _ = run(capsys, "plan")
    assert "sh-ridge-point at 10:06" in " ".join(out.split())


def test_the_pace_line_says_day_or_days_and_a_goal_of_today_is_what_today_needs(capsys, isolated_data_dir):
    write_history(isolated_data_dir, days=1)
    _, out, _ = run(capsys, "plan")
    flat = " ".join(out.split())
    assert "1 study day a week" in flat and "1 study days" not in flat
    _, out, _ = run(capsys, "plan", "--by", "2026-10-31")
    pace = " ".join(out.split("Pace", 1)[1].split("Finish", 1)[0].split())
    assert "out of reach: finishing today (2026-10-31) would need" in pace and "a week" not in pace
    assert "more than the 24 h a day has" in pace


def test_a_goal_a_week_away_out_of_reach_says_so_on_the_pace_line(capsys, isolated_data_dir):
    """Second review, H3: `--by` a week away needs over 24 h a day. The Pace line said "31 h 46 min
    a study day, 7 study days a week = 222 h a week", an impossible pace put as a plan; only the
    Finish line said it was out of reach. Now the Pace line says so first, with what it needs."""
    write_history(isolated_data_dir, days=1)
    by = (NOW.date() + timedelta(days=7)).isoformat()  # 8 days, today included: about 26 h a day
    code, out, _ = run(capsys, "plan", "--by", by)
    assert code == 0
    flat = " ".join(out.split())
    pace = " ".join(out.split("Pace", 1)[1].split("Reviews", 1)[0].split("Finish", 1)[0].split())
    assert pace.startswith(f"out of reach: finishing by {by} would need "), pace
    assert "every day of the week" in pace and "more than the 24 h a day (168 h a week) has" in pace
    assert "a study day" not in pace  # not put as a pace to keep
    hours = float(re.search(r"\(([\d,]+) h a week\)", pace).group(1).replace(",", ""))
    assert hours > 168
    assert f"none by {by}: out of reach" in flat and "the goal is out of reach" in flat
    goal = run_json(capsys, "--by", by)
    assert goal["pace"]["feasible"] is False and goal["finish"] is None
    assert goal["pace"]["seconds_per_week"] == pytest.approx(hours * 3600, rel=0.01)


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = st.text(alphabet="ab-_1 .:\nçé٣²\u00a0", max_size=40)


@given(word=st.text(alphabet="ab-_1.é٣", min_size=1, max_size=4), text=_PIECES)
def test_a_problem_id_is_found_in_a_file_as_the_whole_word_pattern_finds_it(word, text) -> None:
    """plan's check that the content still has an attempted problem: str.find with the
    neighbours checked, the same answer as `(?<![\\w-])ID(?![\\w-])` (which was 57 ms for 91)."""
    for haystack in (text, word + text, text + word, text + " " + word + " " + text):
        expected = re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", haystack) is not None
        assert plan_command._whole_word_in(word, haystack) is expected
