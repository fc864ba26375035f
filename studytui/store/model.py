"""Plain records and merge rules for progress. No SQLite here, so the study logic can share them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from studytui.core.errors import UsageError
from studytui.core.state import STATE_VALUES
from studytui.core.tuples import Tuple

STATES = STATE_VALUES  # one definition: studytui.core.state.State
DEFAULT_STATE = "pending"
COVERED_STATES = ("done", "skipped")
# Imported times may run ahead of this clock by a little (another machine's clock); further in
# the future they would win every "newer change wins" merge for years, so they are refused.
FUTURE_SLACK = timedelta(days=2)


def now_iso() -> str:
    """The current time as a fixed-width UTC ISO string, so text order equals time order."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def normalize_time(value: Any, what: str = "time", now: datetime | None = None) -> str | None:
    """Any ISO 8601 time -> our fixed UTC format; None stays None. Raises UsageError otherwise,
    also for a time that cannot be expressed in UTC or lies more than FUTURE_SLACK ahead of `now`."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{what} is not a time string: {value!r}")
    text = value.strip()
    if text.endswith(("Z", "z")):  # fromisoformat accepts 'Z' only from Python 3.11
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{what} is not an ISO 8601 time: {value!r}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    try:
        utc = parsed.astimezone(timezone.utc)
    except OverflowError:
        raise UsageError(f"{what} is out of range once converted to UTC: {value!r}") from None
    limit = (now or datetime.now(timezone.utc)) + FUTURE_SLACK
    if utc > limit:
        raise UsageError(f"{what} is in the future ({value!r}); check the clock of the machine that wrote it") from None
    return utc.isoformat(timespec="microseconds")


def check_state(state: str) -> str:
    if state not in STATES:
        raise UsageError(f"unknown state '{state}' (one of {', '.join(STATES)})")
    return state


# The most one note (an entry's or a section's) may hold, in UTF-8 bytes: the one limit every
# note write checks (the CLI, the app, JSON and vault import), so every note fits in a vault file
# (see studytui.exports.vault.MAX_FILE_BYTES) and a backup of it can be imported again.
NOTE_LIMIT = 8 * 1024 * 1024


class NoteTooLarge(UsageError):
    """A note over NOTE_LIMIT: one line naming the limit, exit 2, nothing written."""


def note_size_text(size: int) -> str:
    from studytui.core.fileio import MIB

    text = f"{size / MIB:.1f} MiB" if size >= MIB else f"{size / 1024:.0f} KiB"
    if size > NOTE_LIMIT and text == f"{NOTE_LIMIT / MIB:.1f} MiB":
        return f"{size:,} bytes"  # just over: "8.0 MiB, more than 8 MiB" would read as a contradiction
    return text


def check_note(text: Any, what: str = "note", tail: str = "; not saved") -> str:
    """`check_text`, and at most NOTE_LIMIT bytes as UTF-8 (NoteTooLarge past it)."""
    checked = check_text(text, what)
    # A character is at most 4 bytes in UTF-8: shorter texts need no encoding to be measured.
    if len(checked) > NOTE_LIMIT // 4:
        size = len(checked.encode("utf-8"))
        if size > NOTE_LIMIT:
            from studytui.core.fileio import size_text

            raise NoteTooLarge(
                f"{what} is {note_size_text(size)}, more than the {size_text(NOTE_LIMIT)} a note can hold{tail}"
            )
    return checked


def check_text(text: Any, what: str = "note") -> str:
    """Notes are stored verbatim, but they must be text SQLite can hold (valid Unicode)."""
    if not isinstance(text, str):
        raise UsageError(f"{what} must be text, not {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{what} is not valid UTF-8 text (it contains undecodable bytes)") from None
    return text


class EntryProgress(Tuple):
    """What the learner has recorded for one entry. Times are UTC ISO strings or None.

    A NamedTuple rather than a dataclass: it is immutable and about five times cheaper to build,
    which matters when `Store.states()` reads thousands of rows on the TUI's first paint.
    """

    entry_id: str
    state: str = DEFAULT_STATE
    state_changed_at: str | None = None
    last_opened_at: str | None = None
    note: str = ""
    note_updated_at: str | None = None

    @property
    def covered(self) -> bool:
        return self.state in COVERED_STATES

    def to_dict(self) -> dict[str, Any]:
        return {
            "entry_id": self.entry_id,
            "state": self.state,
            "state_changed_at": self.state_changed_at,
            "last_opened_at": self.last_opened_at,
            "note": self.note,
            "note_updated_at": self.note_updated_at,
        }


class NoteVersion(Tuple):
    """One saved version of a note, from the event log. `number` counts from 1, oldest first."""

    number: int
    at: str | None
    text: str
    restored_from: int | None = None  # this version restored version N
    current: bool = False  # the note holds this text now

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "at": self.at,
            "characters": len(self.text),
            "restored_from": self.restored_from,
            "current": self.current,
            "text": self.text,
        }


def _later(a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def conflict_marker(source: str, incoming_at: str | None, local_at: str | None) -> str:
    """The one line put between two clashing versions of (part of) a note."""
    above = f"the text above was saved {local_at}" if local_at else "the text above is the one being saved"
    return f"--- studytui: conflicting note kept from {source} (saved {incoming_at or 'at an unknown time'}) below; {above} ---"


def conflict_separator(source: str, incoming_at: str | None, local_at: str | None) -> str:
    return f"\n{conflict_marker(source, incoming_at, local_at)}\n"


def merge_notes(
    local: str, local_at: str | None, incoming: str, incoming_at: str | None, source: str,
    base: str | None = None,
) -> tuple[str, bool]:
    """Merge two versions of a note without dropping a word. Returns (text, conflicted).

    `base`: the version both were edited from (the draft's starting text, the text exported to a
    vault, the newest version both stores' histories hold). With it the merge is three-way (see
    `studytui.store.merge`): each side's changes are applied once, and only a hunk changed
    differently on both sides is kept twice, around a marker line naming `source`. Without it,
    identical or contained texts need no marker, and otherwise the shared start and end are
    kept once and the differing middles both, around the marker line.
    """
    from studytui.store.merge import merge3, two_way

    marker = conflict_marker(source, incoming_at, local_at)
    merged = two_way(local, incoming, marker) if base is None else merge3(base, local, incoming, marker)
    return merged.text, merged.conflicts > 0


class MergedProgress(Tuple):
    progress: EntryProgress
    state_changed: bool
    note_changed: bool
    note_conflicted: bool


def merge_progress(
    local: EntryProgress, incoming: EntryProgress, source: str, note_base: str | None = None
) -> MergedProgress:
    """Per field, the newer change wins; notes are merged by `merge_notes` (three-way when
    `note_base`, the version both notes were edited from, is known). Keeps local's id."""
    state, state_at = local.state, local.state_changed_at
    state_changed = False
    if incoming.state_changed_at is not None and (
        local.state_changed_at is None or incoming.state_changed_at > local.state_changed_at
    ):
        state_changed = incoming.state != local.state or incoming.state_changed_at != local.state_changed_at
        state, state_at = incoming.state, incoming.state_changed_at
    elif local.state_changed_at is None and incoming.state != local.state and incoming.state != DEFAULT_STATE:
        # Neither side has a time (hand-written export): a recorded state beats the default.
        state, state_changed = incoming.state, True
    note, conflicted = merge_notes(
        local.note, local.note_updated_at, incoming.note, incoming.note_updated_at, source, base=note_base
    )
    note_changed = note != local.note
    note_at = _later(local.note_updated_at, incoming.note_updated_at) if note_changed else local.note_updated_at
    merged = EntryProgress(
        entry_id=local.entry_id,
        state=state,
        state_changed_at=state_at,
        last_opened_at=_later(local.last_opened_at, incoming.last_opened_at),
        note=note,
        note_updated_at=note_at,
    )
    return MergedProgress(merged, state_changed, note_changed, conflicted)
