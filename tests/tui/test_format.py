"""The plain-text helpers behind the app's labels (no Textual involved)."""

from __future__ import annotations

import datetime as dt

from studytui.store import STATES
from studytui.study.session import NoteDraft
from studytui.tui.format import (
    STATE_GLYPHS,
    authors_line,
    days_since,
    fraction_bar,
    percent,
    short_timestamp,
    visible_controls,
)

TODAY = dt.date(2026, 11, 29)


def test_every_state_has_a_distinct_glyph():
    assert set(STATE_GLYPHS) == set(STATES)
    assert len(set(STATE_GLYPHS.values())) == len(STATES)


def test_days_since():
    assert days_since("2026-08-23", TODAY) == "2026-08-23, 98 days ago"
    assert days_since("2026-11-28", TODAY) == "2026-11-28, 1 day ago"
    assert days_since("2026-11-29", TODAY) == "2026-11-29, today"
    assert days_since("2026-12-01", TODAY) == "2026-12-01, in 2 days"
    assert days_since(None, TODAY) == "" and days_since("not a date", TODAY) == ""


def test_small_formatters():
    assert fraction_bar(2, 8, width=8) == "▰▰▱▱▱▱▱▱" and fraction_bar(0, 0) == ""
    assert percent(1, 3) == "33%" and percent(0, 0) == "0%"
    assert short_timestamp("2026-11-29T21:04:05.123456+00:00") == "2026-11-29 21:04"
    assert short_timestamp(None) == "never"
    assert authors_line(("A", "B", "C", "D"), 2020) == "A, B, C, et al. · 2020"
    assert authors_line((), None) == ""


def test_visible_controls_keeps_text_and_shows_escapes():
    assert visible_controls("\x1b]52;c;AAAA\x07ok") == "\\x1b]52;c;AAAA\\x07ok"
    assert visible_controls("tab\tnew\nline é") == "tab\tnew\nline é"
    assert visible_controls("\x9b31m") == "\\x9b31m"  # C1 CSI too


def test_note_draft_is_dirty_only_when_it_differs_from_what_is_stored():
    draft = NoteDraft()
    draft.start("a", "old")
    draft.update("old")
    assert not draft.dirty
    draft.update("new")
    assert draft.dirty
    draft.saved("new")
    assert not draft.dirty and draft.base == "new"
    draft.update("old")
    assert draft.dirty
