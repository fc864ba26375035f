"""The pure study flow: summaries, next entry, aliases and orphans, id resolution."""

from __future__ import annotations

import pytest

from studytui.core.errors import UsageError
from studytui.guide.model import Entry, Guide, Policy, Section, Subsection
from studytui.store.model import EntryProgress
from studytui.study.flow import (
    alias_map,
    canonical_states,
    first_entry,
    next_entry,
    progress_summary,
    resolve_entry,
)


def make_guide(layout: dict[str, list[str]], aliases: dict[str, tuple[str, ...]] | None = None) -> Guide:
    """A small guide: {section_id: [entry ids]} in order."""
    aliases = aliases or {}
    sections = []
    index = 0
    for sid, ids in layout.items():
        entries = []
        for eid in ids:
            entries.append(
                Entry(
                    id=eid, title=f"Title of {eid}", url=None if eid.startswith("watch") else f"https://x.org/{eid}",
                    kind="paper", summary="", section_id=sid, section_title=sid.title(), subsection_id=f"{sid}-sub",
                    subsection_title=None, index=index, aliases=aliases.get(eid, ()),
                    role="watchlist" if eid.startswith("watch") else "core",
                )
            )
            index += 1
        sections.append(Section(id=sid, title=sid.title(), intro="", subsections=(Subsection(f"{sid}-sub", None, tuple(entries)),)))
    return Guide(
        title="T", source_repo="", license="MIT", sections=tuple(sections), glossary=(),
        policy=Policy(text="", admitted_kinds=(), claim_fields=()), content_dir="",
    )


GUIDE = make_guide({"start": ["a", "b", "c"], "kernels": ["d", "watch-e", "f"]})


def st(**states: str) -> dict[str, EntryProgress]:
    return {k.replace("_", "-"): EntryProgress(k.replace("_", "-"), v, "2026-01-01T00:00:00.000000+00:00") for k, v in states.items()}


def test_fresh_start_begins_with_first_entry_of_start_here() -> None:
    assert next_entry(GUIDE, {}, None).id == "a"
    assert first_entry(GUIDE).id == "a"


def test_next_is_first_pending_after_last_viewed() -> None:
    states = st(a="done", b="pending", c="done", d="learning")
    assert next_entry(GUIDE, states, "a").id == "b"
    assert next_entry(GUIDE, states, "b").id == "watch-e"  # c done, d learning: skipped over


def test_next_wraps_to_the_start() -> None:
    states = st(a="done", b="pending", c="done", d="done", watch_e="done")
    assert next_entry(GUIDE, states, "f").id == "b"
    # The last viewed entry itself comes last in the wrap: returned only when it alone is pending.
    only_f = st(a="done", b="done", c="done", d="done", watch_e="skipped")
    assert next_entry(GUIDE, only_f, "f").id == "f"


def test_next_counts_watchlist_items_like_any_entry() -> None:
    assert next_entry(GUIDE, st(a="done", b="done", c="done", d="done"), "d").id == "watch-e"


def test_next_is_none_when_nothing_is_pending() -> None:
    everything = st(a="done", b="skipped", c="done", d="done", watch_e="skipped", f="learning")
    assert next_entry(GUIDE, everything, "c") is None
    assert next_entry(make_guide({}), {}, None) is None


def test_next_after_unknown_last_viewed_starts_over() -> None:
    assert next_entry(GUIDE, st(a="done"), "removed-entry").id == "b"


def test_next_accepts_plain_state_strings() -> None:
    assert next_entry(GUIDE, {"a": "done", "b": "skipped"}, None).id == "c"


def test_summary_counts_overall_and_per_section() -> None:
    s = progress_summary(GUIDE, st(a="done", b="skipped", d="learning"))
    assert (s.done, s.skipped, s.learning, s.pending, s.total) == (1, 1, 1, 3, 6)
    assert s.covered == pytest.approx(2 / 6)
    start, kernels = s.sections
    assert (start.counts.done, start.counts.skipped, start.counts.pending, start.counts.total) == (1, 1, 1, 3)
    assert start.counts.covered == pytest.approx(2 / 3)
    assert (kernels.counts.learning, kernels.counts.pending) == (1, 2)
    d = s.to_dict()
    for key in ("done", "learning", "pending", "skipped", "total", "orphans", "sections"):
        assert key in d
    assert d["sections"][0]["id"] == "start"
    assert {k: d["sections"][0][k] for k in ("done", "learning", "pending", "skipped", "total")} == {
        "done": 1, "learning": 0, "pending": 1, "skipped": 1, "total": 3,
    }


def test_empty_section_covers_zero_not_nan() -> None:
    g = make_guide({"start": ["a"], "empty": []})
    assert progress_summary(g, {}).sections[1].counts.covered == 0.0


def test_orphans_are_kept_out_of_counts_and_listed() -> None:
    states = st(a="done", gone="done")
    states["gone"] = EntryProgress("gone", "done", None, None, "my words", None)
    s = progress_summary(GUIDE, states)
    assert s.done == 1 and s.total == 6
    assert [o.entry_id for o in s.orphans] == ["gone"]
    assert s.to_dict()["orphans"] == [{"id": "gone", "state": "done", "has_note": True, "note_chars": 8}]


RENAMED = make_guide({"start": ["a", "b-new"]}, aliases={"b-new": ("b-old",)})


def test_progress_follows_a_renamed_entry() -> None:
    states = {"b-old": EntryProgress("b-old", "done", "2026-01-01T00:00:00.000000+00:00", note="kept")}
    current, orphans = canonical_states(RENAMED, states)
    assert orphans == {}
    assert current["b-new"].state == "done" and current["b-new"].note == "kept"
    assert progress_summary(RENAMED, states).done == 1
    assert next_entry(RENAMED, states, None).id == "a"
    assert alias_map(RENAMED) == {"b-old": "b-new"}


def test_alias_and_current_rows_merge_newer_state_and_both_notes() -> None:
    states = {
        "b-new": EntryProgress("b-new", "learning", "2026-02-01T00:00:00.000000+00:00", note="new words"),
        "b-old": EntryProgress("b-old", "done", "2026-01-01T00:00:00.000000+00:00", note="old words"),
    }
    current, _ = canonical_states(RENAMED, states)
    assert current["b-new"].state == "learning"  # newer
    assert "new words" in current["b-new"].note and "old words" in current["b-new"].note


def test_resolve_entry_by_id_alias_and_error() -> None:
    assert resolve_entry(RENAMED, "b-old").id == "b-new"
    with pytest.raises(UsageError) as info:
        resolve_entry(GUIDE, "watch-x")
    message = str(info.value)
    assert "unknown entry id 'watch-x'" in message and "'watch-e'" in message and "studytui search" in message
    assert "\n" not in message


def test_continue_starts_from_what_was_studied_not_what_was_browsed() -> None:
    from studytui.store.model import EntryProgress
    from studytui.study.flow import continue_entry, pending_start, study_position

    guide = GUIDE
    first, second, third = (e.id for e in guide.entries[:3])
    assert study_position(guide, {}) is None
    assert continue_entry(guide, {}) is guide.entries[0]
    states = {first: EntryProgress(first, "done", state_changed_at="2026-01-01T00:00:00.000001+00:00")}
    assert continue_entry(guide, states).id == second
    # Opened later, further on: the learner is there now, and is learning it: it is continued first.
    later = guide.entries[3].id
    states[later] = EntryProgress(later, "learning", state_changed_at="2026-01-02T00:00:00.000001+00:00")
    assert continue_entry(guide, states).id == later
    assert pending_start(guide, states).id == guide.entries[4].id  # the pending ones start after it
    # Done with it: the first pending entry after it.
    states[later] = EntryProgress(later, "done", state_changed_at="2026-01-02T01:00:00.000001+00:00")
    assert continue_entry(guide, states).id == guide.entries[4].id
    # Put back to pending last: it is where to continue.
    states[third] = EntryProgress(third, "pending", state_changed_at="2026-01-03T00:00:00.000001+00:00")
    assert continue_entry(guide, states).id == third
