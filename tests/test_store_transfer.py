"""Export and import: complete round trips, merges that never drop a word, bad files change nothing."""

from __future__ import annotations

import json
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studytui.core.errors import UsageError
from studytui.store import STATES, open_store
from studytui.store.model import normalize_time

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=120)
IDS = st.sampled_from(["a", "b", "c", "renamed-x", "gone-1", "ünï-cödé"])
SECTIONS = st.sampled_from(["start-here", "kernels"])

OPS = st.one_of(
    st.tuples(st.just("state"), IDS, st.sampled_from(STATES)),
    st.tuples(st.just("note"), IDS, TEXT),
    st.tuples(st.just("append"), IDS, TEXT),
    st.tuples(st.just("open"), IDS, st.none()),
    st.tuples(st.just("section"), SECTIONS, TEXT),
    st.tuples(st.just("ui"), st.sampled_from(["tree", "pane"]), st.recursive(
        st.none() | st.booleans() | st.integers(-10**6, 10**6) | TEXT,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=6)),
    st.tuples(st.just("viewed"), IDS, st.none()),
)


class FakeClock:
    def __init__(self, start: datetime, steps: list[int]) -> None:
        self.t, self.steps, self.i = start, steps or [1], 0

    def __call__(self) -> str:
        self.t += timedelta(microseconds=self.steps[self.i % len(self.steps)])
        self.i += 1
        return self.t.isoformat(timespec="microseconds")


def apply(store: Any, ops: list[tuple]) -> None:
    for op, key, value in ops:
        if op == "state":
            store.set_state(key, value)
        elif op == "note":
            store.set_note(key, value)
        elif op == "append":
            store.append_note(key, value)
        elif op == "open":
            store.mark_opened(key)
        elif op == "section":
            store.set_section_note(key, value)
        elif op == "ui":
            store.set_ui(key, value)
        else:
            store.set_last_viewed(key)


def comparable(export: dict) -> dict:
    out = {k: v for k, v in export.items() if k != "exported_at"}
    out["events"] = [e for e in export["events"] if e["kind"] != "import"]
    return out


def through_a_file(data: dict) -> dict:
    return json.loads(json.dumps(data, ensure_ascii=False))


START = datetime(2026, 1, 1, tzinfo=timezone.utc)
STEPS = st.lists(st.integers(1, 10**9), min_size=1, max_size=5)


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(OPS, max_size=25), steps=STEPS)
def test_export_import_round_trip_is_complete(ops: list[tuple], steps: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        a = open_store(Path(tmp) / "a")
        a._clock = FakeClock(START, steps)
        apply(a, ops)
        exported = through_a_file(a.export_json())
        b = open_store(Path(tmp) / "b")
        report = b.import_json(exported, known_ids={"a", "b", "c", "ünï-cödé"}, source="a.json")
        assert comparable(b.export_json()) == comparable(exported)
        assert report.entries_added == len(exported["entries"])
        assert sorted(report.orphans) == sorted(
            e["entry_id"] for e in exported["entries"] if e["entry_id"] in {"renamed-x", "gone-1"}
        )
        # Importing the same file again changes nothing.
        again = b.import_json(exported, known_ids=set(), source="a.json")
        assert (again.entries_added, again.states_updated, again.notes_updated, again.events_added) == (0, 0, 0, 0)
        assert comparable(b.export_json()) == comparable(exported)
        a.close()
        b.close()


@settings(max_examples=40, deadline=None)
@given(ops_a=st.lists(OPS, max_size=20), ops_b=st.lists(OPS, max_size=20), steps_a=STEPS, steps_b=STEPS)
def test_merging_keeps_every_word_and_the_newer_state(
    ops_a: list[tuple], ops_b: list[tuple], steps_a: list[int], steps_b: list[int]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        a, b = open_store(Path(tmp) / "a"), open_store(Path(tmp) / "b")
        a._clock, b._clock = FakeClock(START, steps_a), FakeClock(START, steps_b)
        apply(a, ops_a)
        apply(b, ops_b)
        before_a, incoming = a.states(), b.export_json()
        a.import_json(through_a_file(incoming), known_ids={"a", "b", "c"}, source="laptop.json")
        after = a.states()
        for e in incoming["entries"]:
            merged = after[e["entry_id"]]
            assert e["note"] in merged.note  # the imported words are all there
            local = before_a.get(e["entry_id"])
            if local is not None:
                assert local.note in merged.note  # and so are ours
                times = [t for t in (local.state_changed_at, e["state_changed_at"]) if t]
                assert merged.state_changed_at == (max(times) if times else None)
            if merged.state_changed_at == e["state_changed_at"] and e["state_changed_at"]:
                assert merged.state == e["state"] or (local and local.state_changed_at == e["state_changed_at"])
        for entry_id, local in before_a.items():
            assert local.note in after[entry_id].note
        events = {(x["at"], x["kind"], x["entry_id"], json.dumps(x["data"], sort_keys=True)) for x in a.events()}
        for x in incoming["events"]:
            assert (x["at"], x["kind"], x["entry_id"], json.dumps(x["data"], sort_keys=True)) in events
        a.close()
        b.close()


def test_conflicting_notes_are_both_kept_with_a_marker_naming_source_and_times(tmp_path: Path) -> None:
    desk, laptop = open_store(tmp_path / "desk"), open_store(tmp_path / "laptop")
    desk.set_note("gemm", "desk thoughts")
    laptop.set_note("gemm", "laptop thoughts")
    laptop.set_state("gemm", "done")
    report = desk.import_json(laptop.export_json(), {"gemm"}, source="laptop.json")
    note = desk.get_note("gemm")
    assert note.startswith("desk thoughts") and note.endswith("laptop thoughts")
    marker = [line for line in note.splitlines() if line.startswith("--- studytui: conflicting note")]
    assert len(marker) == 1 and "laptop.json" in marker[0]
    assert laptop.progress("gemm").note_updated_at in marker[0]
    assert report.notes_conflicted == ["gemm"] and desk.progress("gemm").state == "done"


def test_an_appended_note_replaces_its_prefix_without_a_marker(tmp_path: Path) -> None:
    a, b = open_store(tmp_path / "a"), open_store(tmp_path / "b")
    a.set_note("x", "first line")
    b.import_json(a.export_json(), {"x"})
    b.append_note("x", "second line")
    report = a.import_json(b.export_json(), {"x"})
    assert a.get_note("x") == "first line\nsecond line" and report.notes_conflicted == []


def test_an_older_state_does_not_win(tmp_path: Path) -> None:
    old, new = open_store(tmp_path / "old"), open_store(tmp_path / "new")
    old.set_state("x", "learning")
    new.set_state("x", "done")
    new.import_json(old.export_json(), {"x"})
    assert new.progress("x").state == "done"
    old.import_json(new.export_json(), {"x"})
    assert old.progress("x").state == "done"


def test_an_empty_imported_note_never_erases_a_local_one(tmp_path: Path) -> None:
    a, b = open_store(tmp_path / "a"), open_store(tmp_path / "b")
    a.set_note("x", "keep me")
    b.set_note("x", "was here")
    b.set_note("x", "")  # newer, but empty
    a.import_json(b.export_json(), {"x"})
    assert a.get_note("x") == "keep me"


def _valid(tmp_path: Path) -> dict:
    s = open_store(tmp_path / "src")
    s.set_state("a", "done")
    s.set_note("a", "words")
    return s.export_json()


BAD_DOCUMENTS = {
    "not an object": lambda d: [d],
    "wrong format": lambda d: {**d, "format": "something-else"},
    "future version": lambda d: {**d, "version": 99},
    "entries not a list": lambda d: {**d, "entries": {"a": 1}},
    "unknown state": lambda d: {**d, "entries": d["entries"] + [{"entry_id": "b", "state": "finished"}]},
    "bad time": lambda d: {**d, "entries": d["entries"] + [{"entry_id": "b", "state_changed_at": "yesterday"}]},
    "missing id": lambda d: {**d, "entries": d["entries"] + [{"state": "done"}]},
    "duplicate id": lambda d: {**d, "entries": d["entries"] * 2},
    "note not text": lambda d: {**d, "entries": d["entries"] + [{"entry_id": "b", "note": 5}]},
    "event without time": lambda d: {**d, "events": d["events"] + [{"kind": "note", "data": {}}]},
    "event data not object": lambda d: {**d, "events": d["events"] + [{"at": d["exported_at"], "kind": "x", "data": 3}]},
    "ui not object": lambda d: {**d, "ui": []},
}


@pytest.mark.parametrize("case", sorted(BAD_DOCUMENTS))
def test_invalid_import_changes_nothing(tmp_path: Path, case: str) -> None:
    target = open_store(tmp_path / "target")
    target.set_state("a", "learning")
    target.set_note("a", "mine")
    before = target.export_json()
    bad = BAD_DOCUMENTS[case](_valid(tmp_path))
    with pytest.raises(UsageError) as info:
        target.import_json(bad, {"a", "b"})
    assert "\n" not in str(info.value)
    assert comparable(target.export_json()) == comparable(before)


def test_times_from_other_tools_are_normalised() -> None:
    assert normalize_time("2026-01-02T03:04:05Z") == "2026-01-02T03:04:05.000000+00:00"
    assert normalize_time("2026-01-02T05:04:05+02:00") == "2026-01-02T03:04:05.000000+00:00"
    assert normalize_time(None) is None
    with pytest.raises(UsageError):
        normalize_time("last tuesday")
