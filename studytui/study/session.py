"""One study session over a guide and a store: progress, the summary, the note being edited, notes
the store refused, and changes made by other processes. No Textual here.

The app is a thin view over this (it turns errors into notifications and redraws what a
`Change` names); the rules that keep a learner's words safe live here and are tested without a
terminal:

- Every write first looks for changes made elsewhere (the CLI, a second app) so decisions are
  taken on what is stored now: opening an entry moves it from pending to learning only if it is
  still pending in the store, never down from done.
- A note is written with compare-and-set against the text the editor started from (the draft's
  `base`). If someone else changed it meanwhile, the two edits are merged three-way against that
  base (`studytui.store.merge`): changes to different parts both apply, once; only words both
  changed differently are kept twice, yours, a marker line, theirs, and the change says so
  (`NoteConflict`). Nothing is overwritten, nothing is doubled, and the merged text becomes the
  base of the next save.
- A note the store refuses (locked, read-only, disk full) is kept in memory and retried on every
  flush; when the session ends it goes to a file and the learner is told where.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping

from studytui.core.errors import StudyError
from studytui.core.state import State
from studytui.core.tuples import Tuple
from studytui.guide.model import Entry, Guide
from studytui.store.model import EntryProgress, NoteTooLarge, NoteVersion, merge_notes
from studytui.study.flow import Summary, canonical_states, continue_entry, first_entry, next_entry, progress_summary

# Named in the line kept between two versions of a note.
ELSEWHERE = "another studytui (the command line or a second window)"
# Compare-and-set attempts before giving up for this flush (another writer keeps changing the
# note under us); the text stays in memory and the next flush tries again.
SAVE_ATTEMPTS = 3


if TYPE_CHECKING:  # only for type checking: a Protocol class costs its creation on every import
    from typing import Protocol

    class SessionStore(Protocol):
        """What a session needs from `studytui.store.Store` (tests pass fakes)."""

        def states(self) -> dict[str, EntryProgress]: ...
        def progress(self, entry_id: str) -> EntryProgress: ...
        def set_state(self, entry_id: str, state: str) -> None: ...
        def mark_opened(self, entry_id: str) -> None: ...
        def append_note(self, entry_id: str, text: str) -> None: ...
        def replace_note(self, entry_id: str, expected: str, text: str) -> tuple[bool, EntryProgress]: ...
        def data_version(self) -> int | None: ...
        def last_viewed(self) -> str | None: ...
        def set_last_viewed(self, entry_id: str) -> None: ...
        def note_history(self, entry_id: str) -> list[NoteVersion]: ...
        def restore_note(self, entry_id: str, number: int) -> bool: ...
        def get_section_note(self, section_id: str) -> str: ...
        def set_section_note(self, section_id: str, text: str) -> None: ...
        @property
        def read_only(self) -> bool: ...


class NoteDraft:
    """Text being edited for one entry's note. `base` is the stored text it started from (or
    last saved): a stored note that no longer equals it was changed elsewhere."""

    def __init__(self) -> None:
        self.entry_id: str | None = None
        self.text: str = ""
        self.base: str = ""
        self.dirty: bool = False

    def start(self, entry_id: str | None, text: str, base: str | None = None) -> None:
        self.entry_id = entry_id
        self.text = text
        self.base = text if base is None else base
        self.dirty = self.text != self.base

    def update(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self.dirty = text != self.base

    def saved(self, text: str) -> None:
        self.base = text
        self.dirty = self.text != text


# The records below are typed named tuples and the session a plain class, not dataclasses: `next`
# and `mark` import this module, and on Python 3.11 each dataclass costs about a millisecond of
# generated code at import (issue 27).
class NoteConflict(Tuple):
    """The stored note changed while the learner was editing it, and both changed the same words:
    both versions of those words were kept, around a marker line."""

    entry_id: str
    mine: str
    theirs: str
    theirs_at: str | None
    kept: str

    @property
    def message(self) -> str:
        return (
            "This note was changed elsewhere while you were editing it, partly in the same place. Both "
            "changes are merged; where they clash both are kept (yours first, then a '--- studytui: "
            "conflicting note' line, then the other): delete the one you do not want, or press h for "
            "its history."
        )


class Change(Tuple):
    """What a session call changed, for the views to redraw. Empty when nothing did."""

    entries: frozenset[str] = frozenset()  # entries whose state, opened time or note changed
    notes: frozenset[str] = frozenset()  # entries whose note text changed
    external: bool = False  # (some of) it came from another process
    conflicts: tuple[NoteConflict, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.entries or self.notes or self.conflicts)

    def __or__(self, other: "Change") -> "Change":
        return Change(
            self.entries | other.entries,
            self.notes | other.notes,
            self.external or other.external,
            self.conflicts + other.conflicts,
        )

    @classmethod
    def of(cls, entry_id: str, note: bool = False) -> "Change":
        ids = frozenset((entry_id,))
        return cls(ids, ids if note else frozenset())


class NotesNotSaved(StudyError):
    """The store refused a note; its text is kept in the session and retried on the next flush."""


class _Unsaved(Tuple):
    base: str  # the stored text it started from
    text: str


class StudySession:
    def __init__(self, guide: Guide, store: SessionStore) -> None:
        self.guide = guide
        self.store = store
        self.progress: dict[str, EntryProgress] = {}
        self.summary: Summary
        self.draft = NoteDraft()
        # Notes the store refused, by entry id: retried on every flush, written to a file at the
        # end if still refused. Never dropped.
        self._unsaved: dict[str, _Unsaved] = {}
        self._version: int | None = None
        self.reload()

    # --- reading --------------------------------------------------------------------------------
    def reload(self) -> Change:
        """Read every entry's progress again; the change names the entries that differ."""
        self._version = self.store.data_version()
        old = self.progress
        self.progress, _ = canonical_states(self.guide, self.store.states())
        self.summary = progress_summary(self.guide, self.progress)
        changed = frozenset(k for k in old.keys() | self.progress.keys() if old.get(k) != self.progress.get(k))
        notes = frozenset(k for k in changed if _note(old, k) != _note(self.progress, k))
        return Change(changed, notes)

    def check_external(self) -> Change:
        """Pick up what other processes wrote since we last looked (cheap when nothing did).

        The note being edited follows the store when the learner has not changed it; when they
        have and the stored note changed too, it is saved at once, keeping both versions."""
        change = self._pick_up_external()
        draft = self.draft
        if draft.entry_id in change.notes and draft.dirty:
            change = change | self.flush()
        return change

    def _pick_up_external(self) -> Change:
        if self.store.data_version() == self._version:
            return Change()
        change = self.reload()
        draft = self.draft
        if draft.entry_id is not None and not draft.dirty and draft.entry_id in change.notes:
            draft.start(draft.entry_id, _note(self.progress, draft.entry_id))
        return Change(change.entries, change.notes, external=bool(change))

    def state_of(self, entry_id: str) -> str:
        found = self.progress.get(entry_id)
        return found.state if found is not None else State.PENDING.value

    def last_opened(self, entry_id: str) -> str | None:
        found = self.progress.get(entry_id)
        return found.last_opened_at if found is not None else None

    def note_text(self, entry_id: str) -> str:
        """The entry's note as the learner last wrote it (an unsaved version wins)."""
        if self.draft.entry_id == entry_id:
            return self.draft.text
        if entry_id in self._unsaved:
            return self._unsaved[entry_id].text
        return _note(self.progress, entry_id)

    def notes_by_entry(self) -> dict[str, str]:
        notes = {entry_id: p.note for entry_id, p in self.progress.items() if p.note}
        notes.update({k: v.text for k, v in self._unsaved.items()})
        if self.draft.entry_id is not None and self.draft.dirty:
            notes[self.draft.entry_id] = self.draft.text
        return notes

    @property
    def unsaved_notes(self) -> dict[str, str]:
        """Notes the store refused so far (entry id -> text), the dirty draft excluded."""
        return {k: v.text for k, v in self._unsaved.items()}

    @property
    def read_only(self) -> bool:
        """The store was opened read-only (a read-only mount or copy): reading works, writes are
        refused. Stores without the notion are writable."""
        return self.store.read_only

    @property
    def has_unsaved(self) -> bool:
        return bool(self._unsaved) or (self.draft.dirty and self.draft.entry_id is not None)

    def resume_entry(self) -> Entry | None:
        """The entry last viewed, or for a fresh data directory the first Start here entry."""
        last = self.store.last_viewed()
        entry = self.guide.get(last) if last else None
        return entry or first_entry(self.guide)

    def next_entry(self, after: Entry | str | None) -> Entry | None:
        """The next pending entry after `after` (see studytui.study.flow.next_entry)."""
        after_id = after.id if isinstance(after, Entry) else after
        return next_entry(self.guide, self.progress, after_id)

    def continue_entry(self) -> Entry | None:
        """What "Continue" offers: the first pending entry from where the learner really is (see
        studytui.study.flow.continue_entry). Reads only."""
        return continue_entry(self.guide, self.progress)

    # --- progress -------------------------------------------------------------------------------
    def set_state(self, entry_id: str, state: str | State) -> Change:
        """The learner's explicit choice: stored as given."""
        change = self.check_external()
        self.store.set_state(entry_id, State(state).value)
        return change | self._refresh_entry(entry_id)

    def mark_opened(self, entry_id: str) -> Change:
        """The learner opened the source: remember when, and move a still-pending entry to
        learning. Decided on the stored state now, so a state set elsewhere is never lowered."""
        change = self.check_external()
        self.store.mark_opened(entry_id)
        change = change | self._refresh_entry(entry_id)
        if self.state_of(entry_id) == State.PENDING:
            self.store.set_state(entry_id, State.LEARNING.value)
            change = change | self._refresh_entry(entry_id)
        return change

    def _refresh_entry(self, entry_id: str) -> Change:
        stored = self.store.progress(entry_id)
        old = self.progress.get(entry_id)
        merged = old._replace(
            state=stored.state, state_changed_at=stored.state_changed_at,
            last_opened_at=stored.last_opened_at, note=stored.note, note_updated_at=stored.note_updated_at,
        ) if old is not None else stored
        if merged == old:
            return Change()
        self.progress[entry_id] = merged
        note_changed = (old.note if old is not None else "") != merged.note
        if old is None or old.state != merged.state:
            self.summary = progress_summary(self.guide, self.progress)
        return Change.of(entry_id, note=note_changed)

    # --- notes ----------------------------------------------------------------------------------
    def switch_note(self, entry_id: str | None) -> Change:
        """Make `entry_id`'s note the draft, saving (or, if refused, setting aside) the current one."""
        if self.draft.entry_id == entry_id:
            return Change()
        change = Change()
        try:
            change = self.flush()
        except NotesNotSaved:
            pass  # the draft was set aside in _unsaved: nothing is lost
        finally:
            self._set_aside_draft()
            if entry_id is None:
                self.draft.start(None, "")
            elif entry_id in self._unsaved:
                kept = self._unsaved[entry_id]
                self.draft.start(entry_id, kept.text, base=kept.base)
                del self._unsaved[entry_id]
            else:
                self.draft.start(entry_id, _note(self.progress, entry_id))
        return change

    def _set_aside_draft(self) -> None:
        draft = self.draft
        if draft.entry_id is not None and draft.dirty:
            self._unsaved[draft.entry_id] = _Unsaved(draft.base, draft.text)

    def update_draft(self, text: str) -> None:
        self.draft.update(text)

    def flush(self) -> Change:
        """Save every unsaved note (set-aside ones and the draft). Safe to call at any time.

        Raises NotesNotSaved when the store refused some; their text stays here and the next
        flush tries again."""
        change = self._pick_up_external()
        errors: list[StudyError] = []
        for entry_id, kept in list(self._unsaved.items()):
            try:
                text, conflict = self._save(entry_id, kept.base, kept.text)
            except StudyError as exc:
                errors.append(exc)
                continue
            del self._unsaved[entry_id]
            change = change | self._saved(entry_id, text, conflict)
        draft = self.draft
        if draft.entry_id is not None and draft.dirty:
            try:
                text, conflict = self._save(draft.entry_id, draft.base, draft.text)
            except StudyError as exc:
                errors.append(exc)
            else:
                if text != draft.text:  # both versions kept: the draft becomes what is stored
                    draft.start(draft.entry_id, text)
                else:
                    draft.saved(text)
                change = change | self._saved(draft.entry_id, text, conflict)
        if errors:
            first = errors[0]
            if isinstance(first, NoteTooLarge):
                # Trying again cannot help: the learner must shorten it. Nothing is dropped meanwhile.
                raise NotesNotSaved(f"{first}. Your text is kept here (unsaved): shorten it to save it")
            raise NotesNotSaved(f"{first}. The note is kept and saved on the next try")
        return change

    def _save(self, entry_id: str, base: str, text: str) -> tuple[str, NoteConflict | None]:
        """Write `text`, edited from `base`; if the stored note is no longer `base`, merge the two
        edits three-way against `base` (each change once; only a hunk both changed differently
        is kept twice, around a marker line). Returns (the text now stored, the conflict if a
        marker was written)."""
        conflict: NoteConflict | None = None
        expected, want = base, text
        for _ in range(SAVE_ATTEMPTS):
            written, stored = self.store.replace_note(entry_id, expected, want)
            if written:
                return want, conflict
            # Changed elsewhere since `expected`: both sides edited it, so merge against it.
            merged, conflicted = merge_notes(want, None, stored.note, stored.note_updated_at, ELSEWHERE, base=expected)
            if merged == stored.note:
                return merged, conflict  # the stored note already holds every change of ours
            if conflicted:
                conflict = NoteConflict(entry_id, text, stored.note, stored.note_updated_at, merged)
            expected, want = stored.note, merged
        raise StudyError(f"the note of '{entry_id}' keeps changing elsewhere; not saved yet")

    def _saved(self, entry_id: str, text: str, conflict: NoteConflict | None) -> Change:
        change = self._refresh_entry(entry_id)
        change = change | Change.of(entry_id, note=True)
        if conflict is not None:
            change = change | Change(conflicts=(NoteConflict(entry_id, conflict.mine, conflict.theirs, conflict.theirs_at, text),))
        return change

    def save_note(self, entry_id: str, text: str, base: str | None = None) -> Change:
        """Replace a note the learner edited starting from `base` (default: the note as this
        session last saw it). Keeps both versions if it changed elsewhere meanwhile."""
        if self.draft.entry_id == entry_id:
            self.draft.update(text)
            if base is not None:
                self.draft.base = base
                self.draft.dirty = self.draft.text != base
            return self.flush()
        start = _note(self.progress, entry_id) if base is None else base
        self._unsaved[entry_id] = _Unsaved(start, text)
        return self.flush()

    def write_note(self, entry_id: str, text: str, base: str | None = None) -> Change:
        """One write for a caller that ends right after (a command): `text` replaces the note it
        was made from (`base`; default the note as this session read it), keeping both versions
        if the note changed elsewhere meanwhile (the change carries the conflict). Nothing is
        kept in memory for a retry: a refusal is raised as the store's own error, and the caller,
        which still holds the text, says so."""
        change = self._pick_up_external()
        start = _note(self.progress, entry_id) if base is None else base
        stored, conflict = self._save(entry_id, start, text)
        return change | self._saved(entry_id, stored, conflict)

    def write_section_note(self, section_id: str, text: str, base: str) -> bool:
        """Save a section's note edited from `base`. If it changed elsewhere meanwhile, both
        versions are kept, as for entry notes. Returns True when both were kept."""
        current = self.store.get_section_note(section_id)
        merged, conflicted = (text, False) if current == base else merge_notes(text, None, current, None, ELSEWHERE, base=base)
        self.store.set_section_note(section_id, merged)
        return conflicted

    def append_note(self, entry_id: str, text: str) -> Change:
        """Add to the end of a note (e.g. a calculation); the note being typed is saved first."""
        change = self.flush()
        self.store.append_note(entry_id, text)
        change = change | self._refresh_entry(entry_id) | Change.of(entry_id, note=True)
        if self.draft.entry_id == entry_id and not self.draft.dirty:
            self.draft.start(entry_id, _note(self.progress, entry_id))
        return change

    # --- history ------------------------------------------------------------------------------
    def note_history(self, entry_id: str) -> list[NoteVersion]:
        """Every saved version of the note, newest first (the store numbers them from 1, oldest
        first; the event log keeps each version's full text)."""
        return list(reversed(self.store.note_history(entry_id)))

    def restore_note(self, entry_id: str, version: NoteVersion | int) -> Change:
        """Make an old version (or its number, from 1 oldest) the note again, as a new version:
        the one it replaces stays in the history, so a restore can itself be undone. The note
        being typed is saved first. The change is empty when the note already held that text."""
        change = self.flush()
        number = version if isinstance(version, int) else version.number
        if not self.store.restore_note(entry_id, number):
            return change
        change = change | self._refresh_entry(entry_id) | Change.of(entry_id, note=True)
        if self.draft.entry_id == entry_id:
            self.draft.start(entry_id, _note(self.progress, entry_id))
        return change

    def remember_last_viewed(self, entry_id: str) -> None:
        self.store.set_last_viewed(entry_id)

    # --- the end --------------------------------------------------------------------------------
    def save_what_is_left(self, data_dir: Path, stderr=None) -> Path | None:
        """Flush after the app stopped (quit, crash, SIGHUP). If the store still refuses, write
        the text to a private file (in the data directory, else $XDG_STATE_HOME/studytui; see
        `write_rescue_file`) and say where.
        Returns that file's path, or None when the store took every note."""
        err = stderr if stderr is not None else sys.stderr
        if not self.has_unsaved:
            return None
        try:
            self.flush()
            return None
        except StudyError as exc:
            reason = str(exc)
        pending = self.unsaved_notes
        if self.draft.entry_id is not None and self.draft.dirty:
            pending[self.draft.entry_id] = self.draft.text
        return write_rescue_file(pending, data_dir, reason, err)


def rescue_folders(data_dir: Path) -> list[Path]:
    """Where a rescue file may go, in order: the data directory, then $XDG_STATE_HOME/studytui
    (default ~/.local/state/studytui). Never the shared temp directory: other users can read
    and predict names there."""
    state = os.environ.get("XDG_STATE_HOME") or ""
    state_home = Path(state) if os.path.isabs(state) else Path.home() / ".local" / "state"
    return [data_dir, state_home / "studytui"]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _write_private(folder: Path, stamp: str, data: bytes) -> Path:
    """A new file in `folder` only this user can read (0600, created exclusively, with a name
    nobody can guess), holding `data` on disk: the file fsynced, then its folder (the one fsync
    policy, `studytui.core.fileio`). A failed write leaves nothing behind."""
    from studytui.core.fileio import fsync_folder, open_folder

    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    import secrets

    for _ in range(8):
        path = folder / f"unsaved-notes-{stamp}-{secrets.token_hex(8)}.md"
        try:
            fd = os.open(path, flags, 0o600)
        except FileExistsError:
            continue
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            path.unlink(missing_ok=True)  # no empty or half file left behind (a full disk)
            raise
        os.close(fd)
        try:
            dir_fd = open_folder(folder)
        except OSError:
            return path  # best effort, as fsync_folder is: the file itself is on disk
        try:
            fsync_folder(dir_fd)  # the new name too
        finally:
            os.close(dir_fd)
        return path
    raise FileExistsError(errno.EEXIST, "no free file name", str(folder))


def write_rescue_file(pending: Mapping[str, str], data_dir: Path, reason: str, err) -> Path | None:
    """Write notes the store refused to a private file (see `rescue_folders`) and say where; when
    no folder takes it, print the text itself. Returns the file's path, or None."""
    from datetime import datetime, timezone

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    text = "".join(f"<!-- studytui note for {entry_id} -->\n{body}\n\n" for entry_id, body in pending.items())
    failures: list[str] = []
    for folder in rescue_folders(data_dir):
        try:
            path = _write_private(folder, stamp, text.encode("utf-8", "surrogatepass"))
        except OSError as exc:
            failures.append(f"{folder}: {exc.strerror or exc}")
            continue
        err.write(
            f"studytui: {len(pending)} note(s) could not be saved ({reason}); their text is in {path} "
            "(readable only by you): copy it back into the notes, then delete the file\n"
        )
        return path
    err.write(
        f"studytui: {len(pending)} note(s) could not be saved ({reason}) nor written to a file "
        f"({'; '.join(failures)}); here they are:\n{text}"
    )
    return None


def _note(progress: Mapping[str, EntryProgress], entry_id: str) -> str:
    found = progress.get(entry_id)
    return found.note if found is not None else ""


def changed_ids(changes: Iterable[Change]) -> frozenset[str]:
    out: frozenset[str] = frozenset()
    for change in changes:
        out |= change.entries
    return out
