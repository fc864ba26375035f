"""`studytui practice ...` end to end (in process), the scheduler with a fixed clock, and attempts
in the store: recorded, exported, imported and merged."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from studytui.calc.forms import run as run_calc
from studytui.cli import main
from studytui.guide import load_guide
from studytui.practice.answers import UNITS
from studytui.practice.handcalc import evaluate
from studytui.practice.loader import load_problems
from studytui.practice.schedule import RELEARN, current_seed, rating_sequence, reviews
from studytui.practice.service import Practice
from studytui.store import open_store
from studytui.store.attempts import Attempt

T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.timezone.utc)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return json.loads(out)


def _read(values: dict, answer_key: str):
    """A result key, or an expression over the result's keys (the answer of `calc.answer`)."""
    if answer_key in values:
        return values[answer_key]
    return evaluate(answer_key, {k: v for k, v in values.items() if isinstance(v, (int, float, str))})


def _right_answer(shown: dict) -> str:
    """The answer from the calculator call `practice show --json` prints - what anyone can check."""
    calc = shown["calc"]
    if "pick" in calc:
        runs = {c: _read(run_calc(calc["name"], args).values, calc["answer_key"]) for c, args in calc["args"].items()}
        if calc["pick"] in ("min", "max"):
            return (min if calc["pick"] == "min" else max)(runs, key=runs.get)
        target = evaluate(calc["target"], {})
        at_most = calc["pick"] == "first_at_most"
        return next(c for c, v in runs.items() if (v <= target if at_most else v >= target))  # in the listed order
    value = _read(run_calc(calc["name"], calc["args"]).values, calc["answer_key"])
    if shown["kind"] == "choice":
        if isinstance(value, list):
            (value,) = value
        return ("yes" if value else "no") if isinstance(value, bool) else str(value)
    return f"{value / UNITS[shown['unit']][1]!r} {shown['unit']}".strip()


def test_show_json_has_the_exact_calculator_call(capsys):
    shown = run_json(capsys, "practice", "show", "sh-decode-step-floor", "--seed", "3", "--json")
    assert {"id", "seed", "question", "unit", "kind", "calc", "given", "by_hand", "skill"} <= set(shown)
    assert shown["seed"] == 3 and shown["unit"] == "ms" and shown["kind"] == "number"
    assert set(shown["calc"]) == {"name", "args", "answer_key"} and shown["calc"]["name"] == "transformer"
    assert {g["name"] for g in shown["given"]} >= {"hbm_bw", "params"} and shown["by_hand"]["expression"]
    assert shown["answer_hidden"] and shown["by_hand"]["value"] is None  # the key waits for a right answer or a reveal
    choice = run_json(capsys, "practice", "show", "sh-roofline-bound", "--json")
    assert sorted(choice["choices"]) == ["compute", "memory"]  # shown in a per-variant order


def test_answer_right_then_the_next_variant(capsys):
    shown = run_json(capsys, "practice", "show", "sh-time-floor", "--json")
    assert shown["seed"] == 0
    result = run_json(capsys, "practice", "answer", "sh-time-floor", _right_answer(shown), "--json")
    assert result["correct"] is True and result["hint"] is None
    assert result["expected"]["unit"] == "ms" and result["solution"][-1]
    assert run_json(capsys, "practice", "show", "sh-time-floor", "--json")["seed"] == 1  # a new variant


def test_a_miss_gives_hints_in_order_and_no_expected_without_reveal(capsys):
    shown = run_json(capsys, "practice", "show", "sh-time-floor", "--json")
    value = float(_right_answer(shown).split()[0]) * 3
    hints = []
    for _ in range(4):
        result = run_json(capsys, "practice", "answer", "sh-time-floor", f"{value}", "--json")
        assert result["correct"] is False and "expected" not in result and result["solution"] is None
        # review R1: no exact relative error on a miss (with the answer it is the key), a band instead
        assert result["relative_error"] is None and result["miss"]["size"] == "3 to 10 times too high"
        assert result["counted"] is False and result["recorded"] is True
        hints.append(result["hint"])
    problem = load_problems().get("sh-time-floor")
    assert hints == [*problem.hints, problem.hints[-1]]
    # misses keep the variant, so the hints apply to the numbers on screen
    assert run_json(capsys, "practice", "show", "sh-time-floor", "--json")["seed"] == 0
    revealed = run_json(capsys, "practice", "answer", "sh-time-floor", f"{value}", "--reveal", "--json")
    assert revealed["expected"]["text"] and revealed["solution"]
    # issue 31: a revealed variant is spent - the next attempt is a new variant
    assert run_json(capsys, "practice", "show", "sh-time-floor", "--json")["seed"] == 1


def test_every_problem_answered_right_through_the_cli(capsys):
    for problem in load_problems().problems:
        shown = run_json(capsys, "practice", "show", problem.id, "--seed", "5", "--json")
        result = run_json(capsys, "practice", "answer", problem.id, _right_answer(shown), "--seed", "5", "--json")
        assert result["correct"], problem.id


def test_human_output(capsys):
    code, out, _ = run(capsys, "practice", "show", "sh-roofline-bound", "--seed", "2")
    assert code == 0 and "Choices: 1) " in out and "compute" in out and "memory" in out and "--seed 2" in out
    assert "Given:" in out and "dense bf16 tensor-core peak" in out
    code, out, _ = run(capsys, "practice", "answer", "sh-roofline-bound", "sideways-bound-but-wrong", "--seed", "2")
    assert code == 2
    code, out, _ = run(capsys, "practice", "1")
    assert code == 0 and "1. GPU fundamentals" in out and "gf-gemm-waves" in out and "mastery 0/" in out


@pytest.mark.parametrize(
    "argv,message",
    [
        (("practice", "show", "no-such-problem"), "unknown problem id 'no-such-problem'"),
        (("practice", "answer", "no-such-problem", "3"), "unknown problem id 'no-such-problem'"),
        (("practice", "answer", "sh-time-floor", "three"), "answer: 'three' is not a number"),
        (("practice", "answer", "sh-time-floor", "3 GB"), "unknown time unit 'GB'"),
        (("practice", "answer", "sh-time-floor", "nan"), "not a finite number"),
        (("practice", "show", "sh-time-floor", "--seed", "-1"), "seed must be a whole number"),
        (("practice", "show", "sh-time-floor", "--seed", "1.5"), "seed must be a whole number"),
        (("practice", "show", "sh-time-floor", "--seed", "99999999999"), "seed must be a whole number"),
        (("practice", "due", "--seed", "1"), "--seed applies to"),
        (("practice", "show", "sh-time-floor", "--reveal"), "--reveal applies to"),
        (("practice", "answer", "sh-time-floor"), "usage: studytui practice answer ID VALUE"),
        (("practice", "nowhere"), "unknown section 'nowhere'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err
    assert open_store().attempts() == []  # nothing recorded


def test_progress_shows_mastery_and_due(capsys):
    shown = run_json(capsys, "practice", "show", "gf-hbm-stream", "--json")
    run_json(capsys, "practice", "answer", "gf-hbm-stream", _right_answer(shown), "--json")
    data = run_json(capsys, "progress", "--json")
    sections = {s["section_id"]: s for s in data["practice"]["sections"]}
    assert sections["gpu-fundamentals"]["mastered"] == 1 and sections["gpu-fundamentals"]["mastery"] > 0
    assert sections["start-here"]["mastered"] == 0 and data["practice"]["due"] == 0
    code, out, _ = run(capsys, "progress")
    total = len(load_problems().for_section("gpu-fundamentals"))
    assert code == 0 and "practice" in out and f"1/{total}" in out and "due for review" in out
    listing = run_json(capsys, "practice", "--json")
    assert any(p["id"] == "gf-hbm-stream" and p["last_correct"] for p in listing["problems"])


def test_due_lists_a_missed_problem(capsys):
    run_json(capsys, "practice", "answer", "sh-time-floor", "1e9 s", "--json")
    assert run_json(capsys, "practice", "due", "--json")["due"] == []  # back in ten minutes, not now
    store = open_store()
    practice = Practice(load_guide(), store, now=lambda: dt.datetime.now(dt.timezone.utc) + RELEARN + dt.timedelta(seconds=1))
    assert [r.problem_id for r in practice.due()] == ["sh-time-floor"]


# -- scheduler, with a fixed clock -------------------------------------------------------------

def _attempt(minutes: float, correct: bool, pid: str = "p") -> Attempt:
    return Attempt((T0 + dt.timedelta(minutes=minutes)).isoformat(), pid, 0, "x", correct)


def test_ratings_from_attempts():
    seq = [_attempt(0, False), _attempt(1, True), _attempt(2, True), _attempt(3, False), _attempt(4, False), _attempt(5, True)]
    assert rating_sequence(seq) == ["again", "hard", "good", "again", "again", "hard"]
    assert current_seed(seq) == 3


def test_due_dates_after_hits_and_misses():
    day = 24 * 60
    miss = reviews([_attempt(0, False)])["p"]
    assert miss.due == T0 + RELEARN
    hit = reviews([_attempt(0, True)])["p"]
    assert dt.timedelta(days=1) <= hit.due - T0 <= dt.timedelta(days=4)
    # each further hit at its due date pushes the next review further out
    a = [_attempt(0, True)]
    gaps = []
    for _ in range(3):
        r = reviews(a)["p"]
        gaps.append(r.due - dt.datetime.fromisoformat(a[-1].at))
        a.append(_attempt((r.due - T0).total_seconds() / 60, True))
    assert gaps[0] < gaps[1] < gaps[2] and gaps[2] > dt.timedelta(days=30)
    # a lapse after a long interval comes back within minutes
    lapse = reviews([_attempt(0, True), _attempt(20 * day, False)])["p"]
    assert lapse.due == T0 + dt.timedelta(days=20) + RELEARN
    # replay is deterministic (no fuzz): merged stores agree on due dates
    assert reviews(a)["p"].due == reviews(list(reversed(a)))["p"].due


# -- store: attempts export, import and merge ---------------------------------------------------

def test_attempts_round_trip_through_export_and_import(tmp_path, capsys):
    run_json(capsys, "practice", "answer", "sh-time-floor", "1 s", "--json")
    shown = run_json(capsys, "practice", "show", "sh-roofline-bound", "--json")
    run_json(capsys, "practice", "answer", "sh-roofline-bound", _right_answer(shown), "--json")
    before = open_store().attempts()
    assert [a.problem_id for a in before] == ["sh-time-floor", "sh-roofline-bound"]
    backup = tmp_path / "backup.json"
    assert run(capsys, "export", str(backup))[0] == 0
    data = json.loads(backup.read_text())
    assert len(data["attempts"]) == 2 and data["attempts"][1]["correct"] is True

    other = tmp_path / "other"
    report = run_json(capsys, "--data-dir", str(other), "import", str(backup), "--json")
    assert report["attempts_added"] == 2
    assert open_store(other).attempts() == before
    # importing again adds nothing; the schedule is the same on both sides
    assert run_json(capsys, "--data-dir", str(other), "import", str(backup), "--json")["attempts_added"] == 0
    assert reviews(open_store(other).attempts()) == reviews(before)

    # merge: an attempt made on the other device comes back with its own
    run_json(capsys, "--data-dir", str(other), "practice", "answer", "gf-hbm-stream", "1 s", "--json")
    theirs = tmp_path / "theirs.json"
    assert run(capsys, "--data-dir", str(other), "export", str(theirs))[0] == 0
    assert run_json(capsys, "import", str(theirs), "--json")["attempts_added"] == 1
    assert {a.problem_id for a in open_store().attempts()} == {"sh-time-floor", "sh-roofline-bound", "gf-hbm-stream"}


@pytest.mark.parametrize(
    "bad,message",
    [
        ({"at": "2026-01-01T00:00:00Z", "problem_id": "p", "seed": -1, "answer": "1", "correct": True}, "seed must be"),
        ({"at": "2026-01-01T00:00:00Z", "problem_id": "p", "seed": 0, "answer": "1", "correct": "yes"}, "correct must be"),
        ({"at": "not a time", "problem_id": "p", "seed": 0, "answer": "1", "correct": True}, "not an ISO 8601 time"),
        ({"at": "2026-01-01T00:00:00Z", "problem_id": "", "seed": 0, "answer": "1", "correct": True}, "problem_id"),
        (
            {"at": "2026-01-01T00:00:00Z", "problem_id": "p", "seed": 0, "answer": "1", "correct": True, "relative_error": "x"},
            "relative_error",
        ),
    ],
)
def test_import_rejects_bad_attempts_and_changes_nothing(tmp_path, capsys, bad, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": "studytui-progress", "version": 1, "attempts": [bad]}))
    code, _, err = run(capsys, "import", str(path))
    assert code == 2 and message in err and "nothing was changed" in err
    assert open_store().attempts() == []


def test_an_export_without_attempts_still_imports(tmp_path, capsys):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"format": "studytui-progress", "version": 1, "entries": []}))
    assert run_json(capsys, "import", str(path), "--json")["attempts_added"] == 0


def test_a_v1_database_gains_attempts_without_losing_anything(tmp_path):
    from studytui.store.schema import create_v1
    from studytui.store.store import Store

    old = Store(tmp_path / "studytui.db", migrations={1: create_v1})
    old.set_state("roofline-paper", "done")
    old.set_note("roofline-paper", "mine")
    old.close()
    store = open_store(tmp_path)
    assert store.progress("roofline-paper").note == "mine" and store.attempts() == []
    assert store.backup_path is not None  # the v1 file was copied before the upgrade
    store.record_attempt("sh-time-floor", 0, "1 ms", False, 0.5)
    assert store.attempts()[0].relative_error == 0.5
    store.close()


def test_the_solution_names_the_calc_command_that_grades_it(capsys):
    code, out, _ = run(capsys, "practice", "answer", "sh-time-floor", "1 s", "--reveal", "--seed", "4")
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("Check it: studytui calc "))
    argv = line.removeprefix("Check it: studytui ").split()
    shown = run_json(capsys, "practice", "show", "sh-time-floor", "--seed", "4", "--json")
    result = run_json(capsys, *argv, "--json")
    assert result["time_s"] == run_calc("roofline", shown["calc"]["args"]).values["time_s"]
