"""Plain-text helpers for the study app: glyphs, labels, dates, safe note text.

No Textual here, so these are unit-testable and shared by every widget.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re

from studytui.core.state import State, glyph_of
from studytui.core.text import BIDI_CONTROLS, escaped
from studytui.core.text import percent as _percent

# One glyph and one word per state (from studytui.core.state.State): never colour alone.
STATE_GLYPHS = {s.value: s.glyph for s in State}
STATE_WORDS = {s.value: s.word for s in State}


@functools.cache
def _control() -> re.Pattern[str]:
    """C0/C1 control characters other than tab and newline, DEL and the bidi controls (the set the
    CLI escapes, studytui.core.text.CONTROLS). Notes are user text: an escape sequence in a note
    must show as text, never reach the terminal. Compiled on first use: the main screen's first
    frame needs none of it."""
    return re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}]")


def state_glyph(state: str) -> str:
    return glyph_of(state)


def visible_controls(text: str) -> str:
    """Replace control characters with visible escapes (ESC becomes the four characters '\\x1b',
    U+202E the six characters '\\u202e'): for notifications, status lines and note text."""
    return _control().sub(lambda m: escaped(m.group()), text)


def control_pictures(text: str) -> str:
    """Replace control characters with one-cell visible stand-ins (ESC becomes '␛', the Unicode
    control pictures; C1 controls become '�'): for places where the text's length on screen must
    not grow, such as the editor's lines."""
    return _control().sub(_picture, text)


def _picture(match: "re.Match[str]") -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)
    return "\u2421" if code == 0x7F else "\ufffd"


def fraction_bar(done: int, total: int, width: int = 8) -> str:
    """A small text bar such as '▰▰▰▱▱▱▱▱' (empty when there is nothing to count)."""
    if total <= 0 or width <= 0:
        return ""
    filled = round(width * done / total)
    return "▰" * filled + "▱" * (width - filled)


def percent(done: int, total: int) -> str:
    """The share as `studytui progress` prints it (studytui.core.text.percent: one rule)."""
    return _percent(done, total)


def parse_day(value: str | None) -> _dt.date | None:
    """The date part of an ISO date or timestamp, or None when absent or unreadable."""
    if not value:
        return None
    try:
        return _dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def days_since(day: str | None, today: _dt.date) -> str:
    """'verified 2026-08-23, 98 days ago' style phrase for a date; '' when the date is missing."""
    parsed = parse_day(day)
    if parsed is None:
        return ""
    delta = (today - parsed).days
    if delta == 0:
        ago = "today"
    elif delta == 1:
        ago = "1 day ago"
    elif delta > 0:
        ago = f"{delta} days ago"
    else:
        ago = f"in {-delta} days"
    return f"{parsed.isoformat()}, {ago}"


def short_timestamp(value: str | None) -> str:
    """A stored timestamp shown to the minute ('2026-11-29 21:04'), or 'never'."""
    if not value:
        return "never"
    text = str(value).replace("T", " ")
    return text[:16]


def authors_line(authors: tuple[str, ...], year: int | None, limit: int = 3) -> str:
    names = list(authors[:limit])
    if len(authors) > limit:
        names.append("et al.")
    parts = [", ".join(names)] if names else []
    if year:
        parts.append(str(year))
    return " · ".join(parts)
