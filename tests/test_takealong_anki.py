"""`studytui export PATH --format anki`: the package opened as Anki would (a zip holding an
SQLite collection), its notes, fields, GUIDs and decks, and ids kept across re-exports."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from pathlib import Path

import pytest

from studytui.cli import main
from studytui.exports import anki
from studytui.guide import load_guide

GUIDE = load_guide()
FIELD_SEP = "\x1f"


def read_package(path: Path, tmp_path: Path) -> dict:
    with zipfile.ZipFile(path) as z:
        assert "collection.anki2" in z.namelist()
        z.extract("collection.anki2", tmp_path)
    db = sqlite3.connect(tmp_path / "collection.anki2")
    try:
        models = json.loads(db.execute("SELECT models FROM col").fetchone()[0])
        decks = json.loads(db.execute("SELECT decks FROM col").fetchone()[0])
        notes = {}
        for nid, guid, mid, flds, tags in db.execute("SELECT id, guid, mid, flds, tags FROM notes"):
            notes[guid] = {"id": nid, "model": models[str(mid)]["name"], "fields": flds.split(FIELD_SEP), "tags": tags.split()}
        cards = db.execute("SELECT nid, did, ord FROM cards").fetchall()
    finally:
        db.close()
    return {"models": models, "decks": {d["name"]: int(i) for i, d in decks.items()}, "notes": notes, "cards": cards}


def test_glossary_deck_from_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "deck.apkg"
    assert main(["export", str(out)]) == 0  # *.apkg means anki
    assert "anki" in capsys.readouterr().err
    pkg = read_package(out, tmp_path)
    assert pkg["decks"][anki.GLOSSARY_DECK] == anki.GLOSSARY_DECK_ID
    assert anki.PROBLEM_DECK not in pkg["decks"]  # nothing practised: no empty deck
    assert len(pkg["notes"]) == len(GUIDE.glossary)
    for term in GUIDE.glossary:
        note = pkg["notes"][anki.glossary_guid(term.id)]
        ident, front, back, aliases, source = note["fields"]
        assert ident == term.id and note["model"] == "studytui glossary term"
        assert "glossary" in note["tags"]
        assert front.startswith(term.term.replace("&", "&amp;")[:10])
        assert back.startswith(term.definition.replace("&", "&amp;").replace("<", "&lt;")[:20])
        for ref in term.see:  # the source entries, linked
            entry = GUIDE.get(ref)
            assert f"({entry.id})" in source
            if entry.url:
                assert f'href="{entry.url.replace("&", "&amp;")}"' in source
    # Two cards per glossary note (term -> definition, definition -> term), all in the glossary deck.
    assert len(pkg["cards"]) == 2 * len(GUIDE.glossary)
    assert {did for _, did, _ in pkg["cards"]} == {anki.GLOSSARY_DECK_ID}


def test_reexport_keeps_note_ids_and_model_ids(tmp_path: Path) -> None:
    first, second = tmp_path / "a.apkg", tmp_path / "b.apkg"
    assert main(["export", str(first), "--format", "anki"]) == 0
    assert main(["export", str(second), "--format", "anki"]) == 0
    (tmp_path / "1").mkdir()
    (tmp_path / "2").mkdir()
    a, b = read_package(first, tmp_path / "1"), read_package(second, tmp_path / "2")
    assert set(a["notes"]) == set(b["notes"])  # GUIDs: what Anki matches to update, not duplicate
    assert set(a["models"]) == set(b["models"]) == {str(anki.GLOSSARY_MODEL_ID)}
    assert a["decks"] == b["decks"]
    assert all(a["notes"][g]["fields"] == b["notes"][g]["fields"] for g in a["notes"])


def test_problem_deck_from_attempts(tmp_path: Path) -> None:
    """The deck from a list of met variants (the interface), with maths and hostile text."""
    entry = GUIDE.entries[0]
    met = [
        anki.ProblemCard("decode-bound", 7, "Minimum time of one decode step for $B=1$ on an H200?", "30.1 ms",
                         "Every weight is read once: $t = W / BW$.", (entry.id,), entry.section_id),
        anki.ProblemCard("decode-bound", 7, "same variant attempted twice", "30.1 ms"),
        anki.ProblemCard("ridge", 3, "Ridge point <b>bold?</b> \x1b[31m", "295 FLOP/byte", "$$I = P / B$$"),
    ]
    out = tmp_path / "p.apkg"
    anki.write_package(out, GUIDE, store=None, problems=met)
    pkg = read_package(out, tmp_path)
    assert pkg["decks"][anki.PROBLEM_DECK] == anki.PROBLEM_DECK_ID
    problems = {g: n for g, n in pkg["notes"].items() if n["model"] == "studytui practice problem"}
    assert set(problems) == {anki.problem_guid("decode-bound", 7), anki.problem_guid("ridge", 3)}
    ident, question, answer, why, source = problems[anki.problem_guid("decode-bound", 7)]["fields"]
    assert ident == "decode-bound#7" and answer == "30.1 ms"
    assert r"\(B=1\)" in question and r"\(t = W / BW\)" in why  # Anki's MathJax delimiters
    assert entry.id in source
    ident, question, answer, why, _ = problems[anki.problem_guid("ridge", 3)]["fields"]
    assert "&lt;b&gt;bold?&lt;/b&gt;" in question and "\x1b" not in question and "\\x1b" in question
    assert why == r"\[I = P / B\]"


@pytest.mark.parametrize(
    ("text", "html"),
    [
        ("costs $5 and $6", "costs $5 and $6"),  # money is not maths
        ("$a_1 + b$ and $c$", r"\(a_1 + b\) and \(c\)"),
        ("a < b & c\nnext", "a &lt; b &amp; c<br>next"),
        ("$$\\frac{2n^3}{6n^2}$$", r"\[\frac{2n^3}{6n^2}\]"),
    ],
)
def test_field_html(text: str, html: str) -> None:
    assert anki.field_html(text) == html


def test_anki_to_stdout_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "-", "--format", "anki"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "standard output" in err


def test_anki_into_missing_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(tmp_path / "nope" / "d.apkg")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_problem_deck_from_recorded_attempts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Attempts recorded by the practice feature: one card per variant met, the answer computed
    by the calculator (as grading does), the question and choices of exactly that variant."""
    from studytui.practice.grading import expected
    from studytui.practice.loader import load_problems
    from studytui.store import open_store

    problems = load_problems(GUIDE.content_dir)
    number = next(p for p in problems.problems if p.kind == "number")
    choice = next(p for p in problems.problems if p.kind == "choice")
    with open_store() as store:
        store.record_attempt(number.id, 3, "1 FLOP/B", False, 0.9)
        store.record_attempt(number.id, 3, "295 FLOP/B", True, 0.001)  # same variant: one card
        store.record_attempt(number.id, 4, "1", False, 0.5)
        store.record_attempt(choice.id, 1, "memory", False, None)
        store.record_attempt("gone-problem", 1, "x", False, None)
    out = tmp_path / "deck.apkg"
    assert main(["export", str(out)]) == 0
    err = capsys.readouterr().err
    assert "3 practice problem notes" in err and "gone-problem" in err  # warned, not fatal
    pkg = read_package(out, tmp_path)
    cards = {g: n["fields"] for g, n in pkg["notes"].items() if n["model"] == "studytui practice problem"}
    assert set(cards) == {anki.problem_guid(number.id, 3), anki.problem_guid(number.id, 4), anki.problem_guid(choice.id, 1)}
    for problem, seed in ((number, 3), (number, 4), (choice, 1)):
        variant = problem.variant(seed)
        ident, question, answer, why, source = cards[anki.problem_guid(problem.id, seed)]
        assert ident == f"{problem.id}#{seed}"
        assert question.startswith(anki.field_html(variant.question))
        assert answer == anki.field_html(expected(variant).display(problem.unit))
        assert why == anki.field_html(" ".join(variant.notice.split())) and why
        assert all(f"({e})" in source for e in problem.entries if GUIDE.get(e))
    assert all(c in cards[anki.problem_guid(choice.id, 1)][1] for c in choice.variant(1).choices)
    assert {did for _, did, _ in pkg["cards"]} == {anki.GLOSSARY_DECK_ID, anki.PROBLEM_DECK_ID}
