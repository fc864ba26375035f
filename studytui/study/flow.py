"""The study flow as pure functions over a Guide and stored progress (no SQLite, no Textual).

The CLI and the TUI both use these, so "what comes next" and "how far along am I" have one answer.

Policy, kept deliberately simple:
- Every entry in the guide counts, whatever its role: watchlist items without a URL and the
  policy entry are entries you can read, mark done or skip like any other. `next` offers an
  entry being learned first, then pending ones; it skips only entries done or skipped.
- Covered = done + skipped; the skipped count is always reported separately.
- Progress stored under an old id (an alias of a renamed entry) counts for the current entry.
  Progress under an id the guide no longer has is an orphan: kept, counted apart, listed.
"""

from __future__ import annotations

from typing import Any, Mapping, Union

from studytui.core.errors import UsageError
from studytui.core.tuples import Tuple
from studytui.guide.model import Entry, Guide
from studytui.store.model import STATES, EntryProgress, merge_progress

# Callers may pass the store's EntryProgress records or plain state strings.
StateMap = Mapping[str, Union[EntryProgress, str]]


def _as_progress(entry_id: str, value: EntryProgress | str) -> EntryProgress:
    if isinstance(value, EntryProgress):
        return value
    return EntryProgress(entry_id, state=str(value))


def alias_map(guide: Guide) -> dict[str, str]:
    """{old_id: current_id} for every alias in the guide (ids that are live entries win)."""
    mapping: dict[str, str] = {}
    for entry in guide.entries:
        for alias in entry.aliases:
            if alias != entry.id and guide.get(alias) is entry:
                mapping[alias] = entry.id
    return mapping


def canonical_states(guide: Guide, states: StateMap) -> tuple[dict[str, EntryProgress], dict[str, EntryProgress]]:
    """Split stored progress into (by current entry id, orphans by stored id).

    Rows under an alias are re-keyed to the current id; if both exist they are merged the way an
    import merges (newer state wins, both notes kept). `Store.follow_aliases` makes this permanent.
    """
    current: dict[str, EntryProgress] = {}
    orphans: dict[str, EntryProgress] = {}
    for stored_id, value in states.items():
        progress = _as_progress(stored_id, value)
        entry = guide.get(stored_id)
        if entry is None:
            orphans[stored_id] = progress
            continue
        if entry.id != stored_id:
            progress = EntryProgress(
                entry.id, progress.state, progress.state_changed_at, progress.last_opened_at,
                progress.note, progress.note_updated_at,
            )
        existing = current.get(entry.id)
        if existing is None:
            current[entry.id] = progress
        elif stored_id == entry.id:  # the current id's own row is the base; the alias merges in
            current[entry.id] = merge_progress(progress, existing, "an old id").progress
        else:
            current[entry.id] = merge_progress(existing, progress, f"its old id '{stored_id}'").progress
    return current, orphans


def state_of(states: Mapping[str, EntryProgress], entry_id: str) -> str:
    found = states.get(entry_id)
    return found.state if found is not None else "pending"


# The summaries are typed named tuples, not frozen dataclasses: `next` and `show` import this
# module, and on Python 3.11 a dataclass's generated methods cost a millisecond each time it does.
class Counts(Tuple):
    done: int = 0
    learning: int = 0
    pending: int = 0
    skipped: int = 0

    @property
    def total(self) -> int:
        return self.done + self.learning + self.pending + self.skipped

    @property
    def covered(self) -> float:
        """(done + skipped) / total; 0.0 for an empty section."""
        return (self.done + self.skipped) / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "done": self.done,
            "learning": self.learning,
            "pending": self.pending,
            "skipped": self.skipped,
            "total": self.total,
            "covered": round(self.covered, 4),
        }


def _count(entries: tuple[Entry, ...], states: Mapping[str, EntryProgress]) -> Counts:
    tally = dict.fromkeys(STATES, 0)
    for entry in entries:
        tally[state_of(states, entry.id)] += 1
    return Counts(**tally)


class SectionSummary(Tuple):
    id: str
    title: str
    counts: Counts

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, **self.counts.to_dict()}


class Summary(Tuple):
    overall: Counts
    sections: tuple[SectionSummary, ...]
    orphans: tuple[EntryProgress, ...] = ()

    # Convenience: the overall numbers straight off the summary.
    @property
    def done(self) -> int:
        return self.overall.done

    @property
    def learning(self) -> int:
        return self.overall.learning

    @property
    def pending(self) -> int:
        return self.overall.pending

    @property
    def skipped(self) -> int:
        return self.overall.skipped

    @property
    def total(self) -> int:
        return self.overall.total

    @property
    def covered(self) -> float:
        return self.overall.covered

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.overall.to_dict(),
            "sections": [s.to_dict() for s in self.sections],
            "orphans": [
                {"id": o.entry_id, "state": o.state, "has_note": bool(o.note), "note_chars": len(o.note)}
                for o in self.orphans
            ],
        }


def progress_summary(guide: Guide, states: StateMap) -> Summary:
    current, orphans = canonical_states(guide, states)
    sections = tuple(SectionSummary(s.id, s.title, _count(s.entries, current)) for s in guide.sections)
    return Summary(
        overall=_count(guide.entries, current),
        sections=sections,
        orphans=tuple(orphans[k] for k in sorted(orphans)),
    )


def first_entry(guide: Guide) -> Entry | None:
    """Where a fresh learner starts: the first entry of Start here (the first section)."""
    for section in guide.sections:
        if section.entries:
            return section.entries[0]
    return None


def next_entry(guide: Guide, states: StateMap, last_viewed_id: str | None) -> Entry | None:
    """The first still-pending entry after the last one viewed, in guide order, wrapping around.

    With nothing viewed yet (or a last-viewed id the guide no longer knows) the search starts at
    the first entry of Start here, inclusive. The last-viewed entry itself comes last in the
    wrap, so it is returned only when it is the one pending entry left. None: all covered or
    being learned - nothing is pending.
    """
    entries = guide.entries
    if not entries:
        return None
    current, _ = canonical_states(guide, states)
    last = guide.get(last_viewed_id) if last_viewed_id else None
    start = last.index + 1 if last is not None else 0
    n = len(entries)
    for step in range(n):
        entry = entries[(start + step) % n]
        if state_of(current, entry.id) == "pending":
            return entry
    return None


def study_position(guide: Guide, states: StateMap) -> Entry | None:
    """Where the learner really is: the entry they last studied - marked, or opened the source
    of - as opposed to one they only showed (`studytui next`) or browsed to (`/`, arrows).
    None for a fresh learner."""
    current, _ = canonical_states(guide, states)
    best: tuple[str, int] | None = None
    found: Entry | None = None
    for entry_id, progress in current.items():
        stamps = [t for t in (progress.state_changed_at, progress.last_opened_at) if t]
        entry = guide.get(entry_id)
        if not stamps or entry is None:
            continue
        key = (max(stamps), entry.index)  # ISO UTC strings sort by time; ties: later in the guide
        if best is None or key > best:
            best, found = key, entry
    return found


def continue_entry(guide: Guide, states: StateMap) -> Entry | None:
    """What `studytui next`, the app's "Continue:" and the first entry of the plan's Today offer:
    an entry in progress is continued first - the first one marked learning, in guide order;
    with none, the pending entry to go on with (`pending_start`). Reading it changes nothing, so
    asking twice gives the same answer."""
    current, _ = canonical_states(guide, states)
    learning = next((e for e in guide.entries if state_of(current, e.id) == "learning"), None)
    return learning if learning is not None else pending_start(guide, states)


def pending_start(guide: Guide, states: StateMap) -> Entry | None:
    """The first pending entry in guide order after the learner's study position (wrapping; the
    position itself when it was just put back to pending): where the pending entries of the
    plan's Today start, and what `continue_entry` offers when nothing is being learned."""
    position = study_position(guide, states)
    if position is not None:
        progress = canonical_states(guide, states)[0][position.id]
        put_back = progress.state == "pending" and (progress.state_changed_at or "") >= (progress.last_opened_at or "")
        if put_back:  # marked pending again last: that is the entry to go back to
            return position
    return next_entry(guide, states, position.id if position is not None else None)


def resolve_entry(guide: Guide, entry_id: str) -> Entry:
    """An entry by id or alias; UsageError with close matches otherwise."""
    found = guide.get(entry_id)
    if found is not None:
        return found
    raise UsageError(unknown_entry_message(guide, entry_id))


def unknown_entry_message(guide: Guide, entry_id: str) -> str:
    ids = [e.id for e in guide.entries]
    import difflib
    import shlex

    close = difflib.get_close_matches(entry_id, ids, n=3, cutoff=0.6)
    if not close:
        lowered = entry_id.lower()
        close = [i for i in ids if lowered and lowered in i][:3]
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown entry id '{entry_id}'{hint} (try 'studytui search {shlex.quote(entry_id)}')"
