"""Notes edited in two places merge three-way against their last common version: each change
once, a marker only where both changed the same words, never the whole text twice (issue 24)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studytui.store import open_store
from studytui.store.merge import holds, merge3, two_way
from studytui.store.model import merge_notes
from studytui.study.session import StudySession
from tests.tui.support import build_guide

M = "--- studytui: conflicting note kept from X ---"
MARKER = "--- studytui: conflicting note"


# -- the merge itself ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "ours", "theirs", "merged", "conflicts"),
    [
        # One side unchanged: the other side's text.
        ("a\nb", "a\nb", "a\nB", "a\nB", 0),
        ("a\nb", "a\nB", "a\nb", "a\nB", 0),
        # Both made the same change: once.
        ("a\nb", "a\nB", "a\nB", "a\nB", 0),
        # An append on one side, an edit elsewhere on the other: both.
        ("a\nb\nc", "A\nb\nc", "a\nb\nc\nmore", "A\nb\nc\nmore", 0),
        ("x\ny", "x\ny2", "x\ny\nz", "x\ny2\nz", 0),
        # Both appended at the end, with or without a final newline: both, ours first, no marker.
        ("a\nb\n", "a\nb\nours\n", "a\nb\ntheirs\n", "a\nb\nours\ntheirs\n", 0),
        ("a\nb", "a\nb\nours", "a\nb\ntheirs", "a\nb\nours\ntheirs", 0),
        ("x", "A\nx", "B\nx", "A\nB\nx", 0),  # both added a first line
        # One line of prose changed on both sides, in different places: merged word by word.
        ("the cat sat on the mat", "the cat sat on the mat and purred", "the dog sat on the mat",
         "the dog sat on the mat and purred", 0),
        ("the cat sat", "the big cat sat", "the cat sat down", "the big cat sat down", 0),
        ("x", "x w1", "x w12", "x w1 w12", 0),  # "w1" is not held by "w12"
        # A true conflict: ours, one marker line, theirs, for that hunk only.
        ("a\nb\nc", "a\nX\nc", "a\nY\nc", f"a\nX\n{M}\nY\nc", 1),
        ("keep\nthe cat sat\nkeep", "keep\nthe cow sat\nkeep", "keep\nthe dog sat\nkeep", f"keep\nthe cow\n{M}\n dog sat\nkeep", 1),
        ("v1", "v1 + typed", "from the CLI", f"v1 + typed\n{M}\nfrom the CLI", 1),
    ],
)
def test_three_way_cases(base: str, ours: str, theirs: str, merged: str, conflicts: int) -> None:
    result = merge3(base, ours, theirs, M)
    assert (result.text, result.conflicts) == (merged, conflicts)


def test_a_conflict_keeps_only_the_clashing_hunk_twice() -> None:
    body = "".join(f"line {i} of a long note\n" for i in range(200))
    base = body + "last: draft\n"
    result = merge3(base, body + "last: mine\n", body + "last: theirs\n", M)
    assert result.conflicts == 1 and result.text.count("line 7 of a long note") == 1
    assert len(result.text) < len(base) + len(M) + 40


def test_without_a_common_version_nothing_is_doubled() -> None:
    assert two_way("same", "same", M).text == "same"
    assert two_way("first line", "first line\nsecond line", M).text == "first line\nsecond line"  # a prefix: the longer
    assert two_way("old start\nnew end", "new end", M).text == "old start\nnew end"  # a suffix: the longer
    merged = two_way("head\nmine\ntail", "head\ntheirs\ntail", M)
    assert merged == (f"head\nmine\n{M}\ntheirs\ntail", 1)  # the shared start and end once
    assert two_way("desk thoughts", "laptop thoughts", M) == (f"desk thoughts\n{M}\nlaptop thoughts", 1)
    assert two_way("banana", "a", M).conflicts == 1  # "a" is not a word of "banana": kept


def test_holds_means_whole_words() -> None:
    assert holds("x w12 y", "w12") and not holds("x w12 y", "w1") and not holds("banana", "an")
    assert holds("a, b", ", b") and holds("anything", "")


def test_merge_notes_names_the_other_side_in_its_marker() -> None:
    text, conflicted = merge_notes("a\nmine", None, "a\ntheirs", "2026-01-02T00:00:00+00:00", "laptop.json", base="a\nb")
    assert conflicted and text.startswith("a\nmine\n") and text.endswith("\ntheirs")
    marker = [line for line in text.splitlines() if line.startswith(MARKER)]
    assert len(marker) == 1 and "laptop.json" in marker[0] and "2026-01-02" in marker[0]


def test_a_large_single_line_note_merges_quickly() -> None:
    import time

    words = " ".join(f"w{i}" for i in range(60_000))  # about 400 KB on one line
    start = time.perf_counter()
    result = merge3(words, words + " mine", "theirs " + words, M)
    assert result == ("theirs " + words + " mine", 0)
    assert time.perf_counter() - start < 20  # generous: shared 2-core CI machines


# -- through the session and the store: what the app and the command line do ---------------------


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def store(data: Path):
    s = open_store(data)
    s.set_ui("created", True)
    yield s
    s.close()


@pytest.fixture
def cli(data: Path, store):
    other = open_store(data)
    yield other
    other.close()


def test_the_app_typing_while_the_cli_appends_six_times(store, cli) -> None:
    """Issue 24: 212 bytes grew to 13,046 with 63 markers. Now: every word once, no marker."""
    start = "Roofline: compute vs memory bound.\n"
    store.set_note("roofline", start)
    app = StudySession(build_guide(), store)
    command = StudySession(build_guide(), cli)
    app.switch_note("roofline")
    typed: list[str] = []
    appended: list[str] = []
    for i in range(6):
        for j in range(4):
            word = f" typed{i}x{j}"
            typed.append(word)
            app.update_draft(app.draft.text + word)
            if j == 1:
                app.flush()
        line = f"| calc {i} | {i * 7} GB/s |"
        appended.append(line)
        command.append_note("roofline", line)  # `studytui note roofline --append ...`
        app.check_external()  # the app's timer
    app.flush()
    note = store.get_note("roofline")
    assert MARKER not in note
    for piece in typed + appended:
        assert note.count(piece) == 1, piece
    assert note.startswith(start.rstrip("\n"))
    assert len(note) <= len(start) + sum(map(len, typed)) + sum(len(a) + 1 for a in appended)
    assert app.draft.text == note and not app.draft.dirty  # the merged text is the next base


def test_after_a_merge_the_next_save_does_not_conflict_again(store, cli) -> None:
    store.set_note("roofline", "a\nb\nc")
    app = StudySession(build_guide(), store)
    app.switch_note("roofline")
    cli.set_note("roofline", "a\nY\nc")
    app.update_draft("a\nX\nc")
    change = app.flush()
    assert change.conflicts and store.get_note("roofline").count(MARKER) == 1
    assert app.draft.base == store.get_note("roofline")
    app.update_draft(app.draft.text + "\nmore")
    change = app.flush()
    assert not change.conflicts and store.get_note("roofline").count(MARKER) == 1


def test_two_editors_appending_keep_both_appends_without_a_marker(store, cli) -> None:
    store.set_note("roofline", "shared start")
    one, two = StudySession(build_guide(), store), StudySession(build_guide(), cli)
    one.switch_note("roofline")
    two.switch_note("roofline")
    one.update_draft("shared start, then one")
    two.update_draft("shared start\nthen two")
    one.flush()
    change = two.flush()
    assert not change.conflicts and store.get_note("roofline") == "shared start, then one\nthen two"


def test_a_command_write_merges_against_what_it_read(store, cli) -> None:
    cli.set_note("roofline", "one\ntwo\nthree")
    command = StudySession(build_guide(), cli)
    base = command.note_text("roofline")
    store.set_note("roofline", "one\ntwo\nthree\nfrom the app")  # while $EDITOR was open
    change = command.write_note("roofline", "ONE\ntwo\nthree", base=base)
    assert not change.conflicts and store.get_note("roofline") == "ONE\ntwo\nthree\nfrom the app"


ROLES = ("A:", "B:")


def _edit(text: str, writer: int, op: str, where: int, word: str) -> str:
    """Writer `writer` adds `word` to its own line, or appends a line or a word at the end."""
    if op == "append-line":
        return text + ("" if text.endswith("\n") or not text else "\n") + word + "\n"
    if op == "append-to-last-line":
        stripped = text.rstrip("\n")
        return stripped + " " + word + text[len(stripped):]
    lines = text.split("\n")
    own = next(i for i, line in enumerate(lines) if line.startswith(ROLES[writer]))
    line = lines[own]
    tag = ROLES[writer]
    if op == "own-start":
        line = f"{tag} {word}{line[len(tag):]}"
    elif op == "own-end":
        line = f"{line} {word}"
    else:  # before one of its words
        spaces = [i for i, ch in enumerate(line) if ch == " "] + [len(line)]
        at = spaces[where % len(spaces)]
        line = f"{line[:at]} {word}{line[at:]}"
    lines[own] = line
    return "\n".join(lines)


OPS = st.lists(
    st.tuples(st.sampled_from(["append-line", "append-to-last-line", "own-start", "own-end", "own-middle"]), st.integers(0, 50)),
    min_size=100, max_size=100,
)


@settings(max_examples=6, deadline=None)
@given(ops=OPS)
def test_two_writers_alternating_100_times_stay_linear(ops: list[tuple[str, int]]) -> None:
    """Two windows on one note, each saving against a stale base (the other saved since): the
    note holds every word typed, once, and is no longer than what was typed (plus a bounded
    marker per conflict)."""
    with tempfile.TemporaryDirectory() as tmp:
        first, second = open_store(Path(tmp)), open_store(Path(tmp))
        try:
            start = "A: mine\nB: mine\n"
            first.set_note("roofline", start)
            writers = [StudySession(build_guide(), first), StudySession(build_guide(), second)]
            for w in writers:
                w.switch_note("roofline")
            typed, words, conflicts = 0, [], 0
            for i, (op, where) in enumerate(ops):
                writer = i % 2
                session = writers[writer]
                word = f"{'ab'[writer]}{i}q"
                before = session.draft.text
                after = _edit(before, writer, op, where, word)
                typed += len(after) - len(before)
                words.append(word)
                session.update_draft(after)
                conflicts += len(session.flush().conflicts)
            final = first.get_note("roofline")
            for word in words:
                assert final.count(word) >= 1, word
            assert len(final) <= len(start) + typed + 200 * conflicts
            assert final.count(MARKER) <= conflicts
        finally:
            first.close()
            second.close()


# -- JSON import and export -------------------------------------------------------------------


def test_eight_import_export_rounds_stay_bounded(tmp_path: Path) -> None:
    """Both machines edit between syncs; each round trip merges against the shared version."""
    desk, laptop = open_store(tmp_path / "desk"), open_store(tmp_path / "laptop")
    start = "GEMM tiling notes\n"
    desk.set_note("gemm", start)
    laptop.import_json(desk.export_json(), {"gemm"})
    typed = 0
    for i in range(8):
        desk.append_note("gemm", f"desk round {i}")
        note = laptop.get_note("gemm")
        laptop.set_note("gemm", note.replace("GEMM", f"GEMM(l{i})", 1))
        typed += len(f"desk round {i}\n") + len(f"(l{i})")
        report = laptop.import_json(desk.export_json(), {"gemm"}, source="desk.json")
        assert report.notes_conflicted == []
        desk.import_json(laptop.export_json(), {"gemm"}, source="laptop.json")
    a, b = desk.get_note("gemm"), laptop.get_note("gemm")
    assert a == b and MARKER not in a
    assert len(a) <= len(start) + typed + 8  # a newline per round at most
    for i in range(8):
        assert a.count(f"desk round {i}") == 1 and f"(l{i})" in a
    desk.close()
    laptop.close()


def test_an_old_backup_imported_again_changes_nothing(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s")
    store.set_note("x", "first")
    backup = store.export_json()
    store.set_note("x", "first, then rewritten")
    report = store.import_json(backup, {"x"})
    assert store.get_note("x") == "first, then rewritten" and report.notes_updated == 0
    store.close()


def test_section_notes_merge_against_their_history(tmp_path: Path) -> None:
    a, b = open_store(tmp_path / "a"), open_store(tmp_path / "b")
    a.set_section_note("kernels", "one\ntwo")
    b.import_json(a.export_json(), set())
    a.set_section_note("kernels", "ONE\ntwo")
    b.set_section_note("kernels", "one\ntwo\nthree")
    b.import_json(a.export_json(), set())
    assert b.get_section_note("kernels") == "ONE\ntwo\nthree"
    a.close()
    b.close()
