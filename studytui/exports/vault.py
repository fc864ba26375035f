"""A notes vault: `studytui export DIR --format vault` and `studytui import DIR`.

Layout (plain Markdown that Obsidian and other note tools open as a vault):

    DIR/index.md                       guide progress, links to every section index and the glossary
    DIR/glossary.md                    every term, linked to the entries it comes from
    DIR/<section-id>/index.md          the section's entries with their state, linked to their files
    DIR/<section-id>/<entry-id>.md     one per entry with a note or progress
    DIR/orphans/<id>.md                progress kept for entries no longer in the guide

An entry file is YAML front matter (id, title, section, state, url, dates, tags) and then the
note itself, verbatim: what the learner edits in the vault is exactly what comes back.

Files studytui writes carry `studytui: <kind>` and `studytui_sha256` (of the body as written) in
their front matter. That is how the rules below tell our files from the learner's:
- export never writes over, moves or deletes a file without that mark, a symlink, or one of our
  files whose body the learner changed since (it says so: import first, then export again);
- import reads only entry files with the mark, by their front-matter id (wherever they were
  moved to in the vault). A body equal to the exported one is an old copy and changes nothing; a
  changed body replaces the note when the note in studytui is still the exported one, and is
  otherwise merged three-way against the text exported (found in the note's history by the
  checksum): each side's changes once, a marker line only where both changed the same words.
- reading: a byte-order mark is dropped; a file an editor saved with Windows line endings (its
  front matter in CRLF) has its note read with "\n"; front matter must end within 64 KiB, else the file is
  refused by name; a file that changes while it is read is read again, then refused by name.
- writing: through folder descriptors opened without following symlinks, with exclusive temp
  files renamed into place, keeping each file's mode (a read-only file is left alone); every
  file ends with a newline (one export added is marked and taken off on import).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

from studytui.core.errors import StudyError, UsageError
from studytui.core.fileio import fsync_folder, replace_file
from studytui.exports.report import Exported, Imported, Paragraph
from studytui.store.model import NOTE_LIMIT

MARK = "studytui"
SHA_KEY = "studytui_sha256"
# Set when export added the final newline the note did not have (a vault file always ends with
# one); import takes that newline off again, so a note comes back exactly as it went out.
NEWLINE_KEY = "studytui_newline"
OUR_KEYS = (MARK, SHA_KEY, NEWLINE_KEY)
BOM = b"\xef\xbb\xbf"
READ_TRIES = 3  # a file that changes while it is read is read again this often, then refused
HEAD_BYTES = 64 * 1024  # front matter must end within this: enough for ours, cheap for big files
# An entry file larger than this is refused: a note at the limit every note write checks
# (studytui.store.model.NOTE_LIMIT, 8 MiB), its front matter and a byte-order mark.
MAX_FILE_BYTES = NOTE_LIMIT + HEAD_BYTES + len(BOM)
MAX_FILES = 50_000  # Markdown files scanned at most
SKIP_DIRS = {".obsidian", ".git", ".trash", ".stfolder", "node_modules"}
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.S | re.M)
_FRONT_OPEN = re.compile(rb"\A---[ \t]*\r?\n")
_MARK_LINE = re.compile(r"^studytui[ \t]*:", re.M)  # our mark, seen even when the YAML around it is broken
_SAFE = re.compile(r"[^a-z0-9.-]+")


def shown(text: Any) -> str:
    """Text for a one-line message: control and bidi characters as visible escapes (the one rule
    every message follows: studytui.core.text.one_line)."""
    from studytui.core.text import one_line

    return one_line(str(text))


def normalized(text: str) -> str:
    """What counts as a change: line endings and trailing blank space an editor adds do not."""
    return text.replace("\r\n", "\n").rstrip()


def body_sha(text: str) -> str:
    return hashlib.sha256(normalized(text).encode("utf-8")).hexdigest()


def mtime_iso(st: os.stat_result) -> str:
    """When the file last changed; a time in the future (a clock set wrong, a synced copy) counts
    as now, so it cannot win every later merge."""
    try:
        when = datetime.fromtimestamp(st.st_mtime, timezone.utc)
    except (OverflowError, OSError, ValueError):
        when = datetime.now(timezone.utc)
    return min(when, datetime.now(timezone.utc)).isoformat(timespec="microseconds")


# -- reading a vault ----------------------------------------------------------------------------


@dataclass
class VaultFile:
    path: Path
    rel: str  # posix path under the vault
    meta: dict[str, Any]
    body: str
    mtime: str

    @property
    def kind(self) -> str | None:
        value = self.meta.get(MARK)
        return value if isinstance(value, str) else None

    @property
    def edited(self) -> bool:
        """True when the body is not what studytui wrote (or the mark has no checksum)."""
        return self.meta.get(SHA_KEY) != body_sha(self.body)


@dataclass
class Scan:
    ours: list[VaultFile] = field(default_factory=list)
    others: set[str] = field(default_factory=set)  # rel paths of Markdown files without our mark
    symlinks: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # our files we could not read (one line each)
    skipped: list[str] = field(default_factory=list)  # other files left alone, with why (one line each)


def split_front_matter(text: str) -> tuple[str, str] | None:
    """(front matter YAML, body) or None when the text has no front matter block."""
    m = _FRONT.match(text)
    if m is None:
        return None
    return m.group(1), text[m.end():]


def _parse_meta(yaml_text: str) -> dict[str, Any] | None:
    import yaml

    try:
        from studytui.core.yamlio import safe_load  # bounded aliases: front matter is the learner's text

        data = safe_load(yaml_text)
    except (yaml.YAMLError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _walk(root: Path) -> Iterator[tuple[Path, str, os.stat_result]]:
    """Markdown files under root, without following symlinked folders or entering hidden ones."""
    count = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if not name.lower().endswith(".md"):
                continue
            count += 1
            if count > MAX_FILES:
                raise UsageError(f"{shown(root)} holds more than {MAX_FILES} Markdown files; is it the right folder? Nothing was changed")
            path = Path(dirpath) / name
            try:
                st = os.lstat(path)
            except OSError:
                continue
            yield path, path.relative_to(root).as_posix(), st


class _Changing(Exception):
    """The file changed while it was read (an editor or sync tool writing it in place)."""


def _read_ours(path: Path) -> tuple[bytes | None, os.stat_result]:
    """(the file's bytes, its stat) when it starts like one of ours, (None, stat) otherwise.
    Opened without following a symlink (OSError ELOOP); raises _Changing when its size or
    modification time moved while it was read, so half of an edit is never taken for a note."""
    # O_NONBLOCK: a file swapped for a FIFO since the folder was listed must not block the open.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        before = os.fstat(f.fileno())
        if not stat.S_ISREG(before.st_mode):
            return None, before
        os.set_blocking(fd, True)
        head = f.read(HEAD_BYTES + len(BOM))
        if not head.startswith(b"---") and not head.startswith(BOM + b"---"):
            return None, before
        if before.st_size > MAX_FILE_BYTES:
            return head, before  # refused by size without reading it all
        raw = head + f.read()
        after = os.fstat(f.fileno())
    if (before.st_size, before.st_mtime_ns, before.st_ctime_ns) != (after.st_size, after.st_mtime_ns, after.st_ctime_ns) or len(
        raw
    ) != after.st_size:
        raise _Changing
    return raw, after


def _read_stable(path: Path) -> tuple[bytes | None, os.stat_result]:
    import time

    for attempt in range(READ_TRIES):
        try:
            return _read_ours(path)
        except _Changing:
            if attempt + 1 < READ_TRIES:
                time.sleep(0.05 * (attempt + 1))
    raise _Changing


def scan(root: Path) -> Scan:
    result = Scan()
    for path, rel, st in _walk(root):
        if stat.S_ISLNK(st.st_mode):
            result.symlinks.append(rel)
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        try:
            raw, st = _read_stable(path)
        except _Changing:
            result.problems.append(
                f"{shown(rel)} changed while it was read ({READ_TRIES} tries); let the program writing it finish"
            )
            continue
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # became a symlink since the folder was listed
                result.symlinks.append(rel)
                continue
            result.problems.append(f"cannot read {shown(rel)}: {exc.strerror or exc}")
            continue
        if raw is None:
            if stat.S_ISREG(st.st_mode):
                result.others.add(rel)
            continue
        if raw.startswith(BOM):
            raw = raw[len(BOM):]  # a byte-order mark some Windows editors write: not part of the text
        head = raw[:HEAD_BYTES]
        split = split_front_matter(head.decode("utf-8", "replace"))
        if split is None and _FRONT_OPEN.match(head):
            # Front matter that does not end (within HEAD_BYTES): refused by name, never guessed at.
            long = len(raw) > HEAD_BYTES
            why = f"its front matter runs past {HEAD_BYTES // 1024} KiB" if long else "its front matter never ends (no closing '---' line)"
            if _MARK_LINE.search(head.decode("utf-8", "replace")):
                result.problems.append(f"{shown(rel)}: {why}")
            else:
                result.others.add(rel)
                if long:
                    result.skipped.append(f"left {shown(rel)} alone: {why}, and no studytui mark was found in it")
            continue
        meta = _parse_meta(split[0]) if split is not None else None
        if meta is None and split is not None and _MARK_LINE.search(split[0]):
            result.problems.append(f"{shown(rel)}: its front matter cannot be read (it is not valid YAML)")
            continue
        if meta is None or MARK not in meta:
            result.others.add(rel)
            continue
        if st.st_size > MAX_FILE_BYTES:
            from studytui.core.fileio import size_text
            from studytui.store.model import note_size_text

            result.problems.append(
                f"{shown(rel)} is {note_size_text(st.st_size)}, more than the {size_text(NOTE_LIMIT)} a note can hold"
            )
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            result.problems.append(f"{shown(rel)} is not valid UTF-8 text (byte {exc.start})")
            continue
        split = split_front_matter(text)
        if split is None:
            result.problems.append(f"{shown(rel)}: its front matter cannot be read")
            continue
        # The front matter ended within the head already read and parsed: the same text, same data.
        body = split[1]
        if text.startswith("---\r\n") and "\r\n" in body:
            # Export writes "\n" only: a front matter in CRLF means an editor saved the whole file
            # with Windows line endings. Its note is read back with "\n" (so the newline export
            # added, taken off below, leaves no "\r" behind). A note of ours that holds "\r\n"
            # itself sits under "\n" front matter and comes back verbatim.
            body = body.replace("\r\n", "\n")
        if meta.get(NEWLINE_KEY) == "added" and body.endswith("\n"):
            body = body[:-1]  # the newline export added
        result.ours.append(VaultFile(path, rel, meta, body, mtime_iso(st)))
    return result


# -- writing a vault ----------------------------------------------------------------------------


def _front_matter(meta: dict[str, Any]) -> str:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's: ten times faster
    return yaml.dump(meta, Dumper=dumper, sort_keys=False, allow_unicode=True, width=4096, default_flow_style=False)


def render(meta: dict[str, Any], body: str, kind: str) -> str:
    """The file for `body`; it always ends with a newline (one added is marked, see NEWLINE_KEY)."""
    full = {**meta, MARK: kind, SHA_KEY: body_sha(body)}
    if body and not body.endswith("\n"):
        full[NEWLINE_KEY] = "added"
        body += "\n"
    return f"---\n{_front_matter(full)}---\n{body}"


def safe_name(entry_id: str) -> str:
    """A file name for any stored id: slugs as they are, anything else slugged plus a short hash."""
    slug = _SAFE.sub("-", entry_id.lower()).strip("-.")[:80]
    if slug == entry_id and slug:
        return slug
    return f"{slug or 'entry'}-{hashlib.sha256(entry_id.encode('utf-8', 'replace')).hexdigest()[:8]}"


def _link(from_rel: str, to_rel: str, label: str) -> str:
    target = os.path.relpath(to_rel, str(PurePosixPath(from_rel).parent) or ".").replace(os.sep, "/")
    label = label.replace("[", "\\[").replace("]", "\\]")
    return f"[{label}](<{target}>)"


@dataclass
class VaultSummary:
    written: int = 0
    unchanged: int = 0
    entries: int = 0
    warnings: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.entries} entry files, {self.written} files written, {self.unchanged} already up to date"
            + (f", {len(self.warnings)} left alone (see warnings)" if self.warnings else "")
        )


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class _Refused(Exception):
    """A file or folder export must not write through (one line: why)."""


class _Writer:
    """Writes files under `root` through directory file descriptors: every folder is opened
    with O_NOFOLLOW below the vault's own folder, and every file is created (O_EXCL|O_NOFOLLOW)
    and renamed relative to its folder's descriptor, so a symlink swapped in during the export
    is refused, never followed out of the vault."""

    def __init__(self, root: Path, found: Scan, summary: VaultSummary, exported_text: Any = None) -> None:
        self.root = root
        # (entry id, checksum) -> the note's text as it was exported with that checksum, or None
        self.exported_text = exported_text or (lambda entry_id, sha: None)
        self.summary = summary
        self.others = found.others
        self.symlinks = set(found.symlinks)
        self.ours = {f.rel: f for f in found.ours}
        self.problems = found.problems
        self._unsynced: dict[tuple[int, int], int] = {}  # folders written into -> a descriptor to fsync at close
        try:
            # The vault folder itself may be a symlink the learner chose; nothing below it may.
            self.root_fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise UsageError(f"cannot open {shown(root)}: {exc.strerror or exc}") from None

    def close(self) -> None:
        for fd in self._unsynced.values():
            try:
                fsync_folder(fd)
            finally:
                os.close(fd)
        self._unsynced.clear()
        if self.root_fd >= 0:
            os.close(self.root_fd)
            self.root_fd = -1

    def _sync_later(self, dir_fd: int) -> None:
        """Remember the folder open as `dir_fd` (a file renamed or a folder made in it), to be
        fsynced once when the export is done."""
        st = os.fstat(dir_fd)
        key = (st.st_dev, st.st_ino)
        if key not in self._unsynced:
            self._unsynced[key] = os.dup(dir_fd)

    def can_write(self, rel: str, body: str | None = None) -> str | None:
        """None when `rel` may be (over)written with `body`, else why not."""
        if rel in self.symlinks:
            return "it is a symbolic link"
        if rel in self.others:
            return "it is your own file (no studytui mark)"
        path = self.root / rel
        parent = path.parent
        while parent != self.root:
            if parent.is_symlink():
                return f"its folder {shown(parent.relative_to(self.root).as_posix())} is a symbolic link"
            if parent.exists() and not parent.is_dir():
                return f"{shown(parent.relative_to(self.root).as_posix())} is not a folder"
            parent = parent.parent
        if path.exists() and not path.is_file():
            return "it is not a regular file"
        if path.exists() and rel not in self.ours:
            return "it could not be read as a studytui file"
        mine = self.ours.get(rel)
        if mine is not None and mine.edited and (body is None or not self._note_holds(mine, body)):
            return "it was edited in the vault since the last export (run 'studytui import DIR' first, then export again)"
        return None

    def _note_holds(self, mine: VaultFile, note: str) -> bool:
        """True when the note (`note`) already holds every change made to the file `mine` in the
        vault since its export (an import merged them): rewriting the file loses nothing."""
        if normalized(mine.body) in normalized(note):
            return True
        entry_id, sha = mine.meta.get("id"), mine.meta.get(SHA_KEY)
        exported = self.exported_text(entry_id, sha) if isinstance(entry_id, str) and isinstance(sha, str) else None
        if exported is None:
            return False
        from studytui.store.merge import merge3

        merged = merge3(exported, note, mine.body, "")
        return merged.conflicts == 0 and normalized(merged.text) == normalized(note)

    def _open_folder(self, rel_dir: PurePosixPath) -> int:
        """A descriptor of the folder `rel_dir` under the vault, made where missing; _Refused for
        a symlink or non-folder on the way."""
        fd = os.dup(self.root_fd)
        done: list[str] = []
        try:
            for part in rel_dir.parts:
                done.append(part)
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                    self._sync_later(fd)  # the new folder's name, made durable with the rest
                except FileExistsError:
                    pass
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                        try:
                            is_link = stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode)
                        except OSError:
                            is_link = False
                        what = "is a symbolic link" if is_link else "is not a folder"
                        raise _Refused(f"its folder {shown('/'.join(done))} {what}") from None
                    raise
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def write(self, rel: str, meta: dict[str, Any], body: str, kind: str, note: bool = False) -> bool:
        """Write the file at `rel` unless that would lose something. `note`: the body is the
        entry's note (a file edited in the vault whose words that note already holds may be
        rewritten). Front-matter keys and tags the learner added to our file are kept, and so is
        the file's mode; a read-only file is left as it is."""
        if note and len(body) > NOTE_LIMIT // 4 and len(body.encode("utf-8", "surrogatepass")) > NOTE_LIMIT:
            # A note from before the limit: a file import would refuse (and with it the whole vault).
            from studytui.core.fileio import size_text
            from studytui.store.model import note_size_text

            self.summary.warnings.append(
                f"left {shown(rel)} out: its note is {note_size_text(len(body.encode('utf-8', 'surrogatepass')))}, more "
                f"than the {size_text(NOTE_LIMIT)} a note can hold, so import could not read it back (it stays in "
                "studytui; shorten it there)"
            )
            return False
        why = self.can_write(rel, body if note else None)
        if why is not None:
            self.summary.warnings.append(f"left {shown(rel)} as it is: {why}")
            return False
        old = self.ours.get(rel)
        if old is not None:
            meta = dict(meta)
            for key, value in old.meta.items():
                if key not in meta and key not in OUR_KEYS:
                    meta[key] = value
            old_tags = old.meta.get("tags")
            if isinstance(meta.get("tags"), list) and isinstance(old_tags, list):
                meta["tags"] = meta["tags"] + [t for t in old_tags if t not in meta["tags"]]
        data = render(meta, body, kind).encode("utf-8")
        try:
            written = self._write_file(PurePosixPath(rel), data)
        except _Refused as exc:
            self.summary.warnings.append(f"left {shown(rel)} as it is: {exc}")
            return False
        except OSError as exc:
            raise StudyError(f"cannot write {shown(self.root / rel)}: {exc.strerror or exc} (files written so far are complete)") from None
        if written:
            self.summary.written += 1
        else:
            self.summary.unchanged += 1  # untouched: its modification time keeps meaning "last changed"
        return True

    def _write_file(self, rel: PurePosixPath, data: bytes) -> bool:
        """Replace the file at `rel` with `data` (complete file or old file, never half of one).
        False when it already held exactly that."""
        dir_fd = self._open_folder(rel.parent)
        name = rel.name
        try:
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            mode = 0o666  # as open() creates files: the umask applies
            if st is not None:
                if stat.S_ISLNK(st.st_mode):
                    raise _Refused("it is a symbolic link")
                if not stat.S_ISREG(st.st_mode):
                    raise _Refused("it is not a regular file")
                if not st.st_mode & stat.S_IWUSR:
                    raise _Refused(
                        f"it is read-only (mode {stat.S_IMODE(st.st_mode):04o}); export keeps your file modes "
                        "and does not replace a read-only file: make it writable to have it updated"
                    )
                fd = os.open(name, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=dir_fd)
                with os.fdopen(fd, "rb") as f:
                    if f.read(len(data) + 1) == data:
                        return False
                mode = stat.S_IMODE(st.st_mode)
            # The one atomic-replace policy (studytui.core.fileio): fsynced, renamed, the folder
            # fsynced once after its last file (close()).
            replace_file(dir_fd, name, data, mode if st is not None else None, new_mode=mode, sync_folder=False)
            self._sync_later(dir_fd)
            return True
        finally:
            os.close(dir_fd)


def _has_progress(p: Any) -> bool:
    return bool(p.note) or p.state != "pending"


def _entry_meta(entry: Any, p: Any) -> dict[str, Any]:
    tags = ["studytui", entry.section_id] + ([entry.kind] if entry.kind else []) + list(entry.tags)
    meta: dict[str, Any] = {
        "id": entry.id,
        "title": entry.title,
        "section": entry.section_title,
    }
    if entry.subsection_title:
        meta["subsection"] = entry.subsection_title
    meta["state"] = p.state
    meta["url"] = entry.url
    meta["dates"] = {
        "state_changed": p.state_changed_at,
        "last_opened": p.last_opened_at,
        "note_updated": p.note_updated_at,
    }
    meta["tags"] = list(dict.fromkeys(re.sub(r"\s+", "-", t.strip()) for t in tags if t.strip()))
    return meta


def export_vault(root: Path, guide: Any, store: Any) -> VaultSummary:
    from studytui.store.model import now_iso
    from studytui.study.flow import canonical_states

    if root.exists() and not root.is_dir():
        raise UsageError(f"cannot write a vault to {shown(root)}: it is not a directory")
    if not root.exists():
        if not root.parent.is_dir():
            raise UsageError(f"cannot create {shown(root)}: directory {shown(root.parent)} does not exist")
        try:
            root.mkdir()
        except OSError as exc:
            raise UsageError(f"cannot create {shown(root)}: {exc.strerror or exc}") from None
    states = store.states()
    section_notes = store.section_notes()
    current, orphans = canonical_states(guide, states)
    exported_at = now_iso()
    found = scan(root)
    summary = VaultSummary()
    for problem in found.problems:
        summary.warnings.append(f"left alone: {problem}")
    summary.warnings.extend(found.skipped)
    writer = _Writer(root, found, summary, lambda entry_id, sha: _exported_text(store, entry_id, sha))
    try:
        _export_files(writer, guide, found, current, orphans, states, section_notes, exported_at)
    finally:
        writer.close()
    return summary


def _export_files(writer: "_Writer", guide: Any, found: Scan, current: dict, orphans: dict, states: dict,
                  section_notes: dict, exported_at: str) -> None:
    from studytui.study.flow import progress_summary

    summary = writer.summary

    # Where each entry lives: an existing file of ours wherever the learner moved it, else the default.
    located: dict[str, str] = {}
    for f in found.ours:
        fid = f.meta.get("id")
        if f.kind == "entry" and isinstance(fid, str):
            entry = guide.get(fid)
            key = entry.id if entry is not None else fid
            located.setdefault(key, f.rel)

    def default_rel(entry_id: str, section_id: str | None) -> str:
        return f"{section_id}/{entry_id}.md" if section_id else f"orphans/{safe_name(entry_id)}.md"

    files: dict[str, str] = {}  # entry id -> rel path written
    from studytui.store.model import EntryProgress

    for entry in guide.entries:
        p = current.get(entry.id) or EntryProgress(entry.id)
        if not _has_progress(p) and entry.id not in located:
            continue
        rel = located.get(entry.id) or default_rel(entry.id, entry.section_id)
        if writer.write(rel, _entry_meta(entry, p), p.note, "entry", note=True) or rel in writer.ours:
            files[entry.id] = rel
        summary.entries += 1
    for stored_id, p in orphans.items():
        if not _has_progress(p) and stored_id not in located:
            continue
        rel = located.get(stored_id) or default_rel(stored_id, None)
        meta = {
            "id": stored_id, "title": stored_id, "section": None, "state": p.state, "url": None,
            "dates": {"state_changed": p.state_changed_at, "last_opened": p.last_opened_at,
                      "note_updated": p.note_updated_at},
            "tags": ["studytui", "orphan"],
        }
        if writer.write(rel, meta, p.note, "entry", note=True) or rel in writer.ours:
            files[stored_id] = rel
        summary.entries += 1

    marks = {"done": "[x]", "skipped": "[-]", "learning": "[/]"}
    index_rels = {s.id: f"{s.id}/index.md" for s in guide.sections}
    for section in guide.sections:
        rel = index_rels[section.id]
        lines = [f"# {section.title}", "", _link(rel, "index.md", "All sections") + " · " + _link(rel, "glossary.md", "Glossary"), ""]
        if section_notes.get(section.id):
            lines += ["## Your section note", "", "(a copy; change it in studytui)", "", section_notes[section.id].rstrip("\n"), ""]
        for sub in section.subsections:
            if sub.title:
                lines += [f"## {sub.title}", ""]
            for e in sub.entries:
                state = (current.get(e.id) or EntryProgress(e.id)).state
                label = _link(rel, files[e.id], e.title) if e.id in files else e.title
                source = f" ([source](<{e.url}>))" if e.url else ""
                lines.append(f"- {marks.get(state, '[ ]')} {label}{source}")
            lines.append("")
        meta = {"title": section.title, "section_id": section.id, "tags": ["studytui", "section-index"]}
        writer.write(rel, meta, "\n".join(lines), "index")

    lines = [f"# Glossary: {guide.title}", "", _link("glossary.md", "index.md", "All sections"), ""]
    for term in guide.glossary:
        lines += [f"## {term.term}", ""]
        if term.aliases:
            lines += [f"*Also: {', '.join(term.aliases)}*", ""]
        lines += [term.definition.strip(), ""]
        refs = []
        for ref in term.see:
            e = guide.get(ref)
            if e is None:
                continue
            refs.append(_link("glossary.md", files[e.id], e.title) if e.id in files else (f"[{e.title}](<{e.url}>)" if e.url else e.title))
        if refs:
            lines += ["Source: " + " · ".join(refs), ""]
    writer.write("glossary.md", {"title": "Glossary", "tags": ["studytui", "glossary"]}, "\n".join(lines), "glossary")

    s = progress_summary(guide, states)
    lines = [
        f"# {guide.title}", "",
        f"Exported from studytui {exported_at}: {s.done + s.skipped} of {s.total} entries covered "
        f"({s.done} done, {s.skipped} skipped), {s.learning} being learned.", "",
        "Edit the notes in the entry files (below the front matter), then run "
        "`studytui import DIR` to bring them back. Files you add here are never touched.", "",
        "## Sections", "",
    ]
    for section in guide.sections:
        lines.append(f"- {_link('index.md', index_rels[section.id], section.title)}")
    lines += ["", f"- {_link('index.md', 'glossary.md', 'Glossary')}", ""]
    orphan_files = [(i, r) for i, r in files.items() if guide.get(i) is None]
    if orphan_files:
        lines += ["## Entries no longer in the guide", ""]
        lines += [f"- {_link('index.md', r, shown(i))}" for i, r in orphan_files]
        lines.append("")
    writer.write("index.md", {"title": guide.title, "tags": ["studytui", "index"]}, "\n".join(lines), "index")


# -- import -------------------------------------------------------------------------------------


@dataclass
class VaultImportReport:
    source: str
    files_read: int = 0
    notes_replaced: int = 0
    notes_merged: int = 0
    entries_added: int = 0
    unchanged: int = 0
    notes_conflicted: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    ignored_files: int = 0
    symlinks_skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "files_read": self.files_read,
            "notes_replaced": self.notes_replaced,
            "notes_merged": self.notes_merged,
            "entries_added": self.entries_added,
            "unchanged": self.unchanged,
            "notes_conflicted": list(self.notes_conflicted),
            "orphans": list(self.orphans),
            "ignored_files": self.ignored_files,
            "symlinks_skipped": list(self.symlinks_skipped),
        }

    def line(self) -> str:
        text = (
            f"Imported vault {shown(self.source)}: {self.files_read} note files read, "
            f"{self.notes_replaced + self.notes_merged} notes updated, {self.entries_added} entries added, "
            f"{self.unchanged} unchanged; {self.ignored_files} other Markdown files left alone."
        )
        if self.notes_conflicted:
            text += (
                "\nChanged on both sides in the same words, both kept (marked with a '--- studytui: "
                "conflicting note' line) for: "
                + ", ".join(shown(i) for i in self.notes_conflicted)
            )
        if self.orphans:
            text += "\nKept as orphans (not in this guide): " + ", ".join(shown(i) for i in self.orphans)
        return text


def _check_id(value: Any, rel: str) -> str:
    """The same rule as a JSON import: any non-empty text (odd ids are kept as orphans, shown escaped)."""
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{shown(rel)}: front matter 'id' must be a non-empty text, not {shown(repr(value))[:80]}; nothing was changed")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{shown(rel)}: front matter id is not valid text; nothing was changed") from None
    return value


def import_vault(root: Path, guide: Any, store: Any) -> VaultImportReport:
    """Read notes back from a vault. Every studytui file is checked before anything is written:
    a broken one stops the import (exit 2) with nothing changed, naming the file."""
    from studytui.store.model import check_note, merge_notes
    from studytui.store.transfer import EXPORT_FORMAT, EXPORT_VERSION
    from studytui.study.flow import alias_map

    found = scan(root)
    report = VaultImportReport(source=root.name or str(root))
    if found.problems:
        more = f" (and {len(found.problems) - 1} more)" if len(found.problems) > 1 else ""
        raise UsageError(f"{found.problems[0]}{more}; fix or move it, then import again - nothing was changed")
    report.ignored_files = len(found.others)
    report.symlinks_skipped = found.symlinks
    report.warnings.extend(found.skipped)
    if found.symlinks:
        report.warnings.append(
            f"skipped {len(found.symlinks)} symbolic link(s), e.g. {shown(found.symlinks[0])}: a vault's notes are read only from its own "
            "files"
        )
    entry_files = [f for f in found.ours if f.kind == "entry"]
    if not found.ours:
        raise UsageError(f"{shown(root)} holds no notes written by 'studytui export DIR --format vault'; nothing was changed")

    # Validate everything first, and gather one incoming text per entry.
    incoming: dict[str, tuple[str, str | None, str, str]] = {}  # id -> (text, base sha, time, rel)
    for f in entry_files:
        raw_id = _check_id(f.meta.get("id"), f.rel)
        try:
            text = check_note(f.body, f"{f.rel}: the note", tail="")
        except UsageError as exc:
            raise UsageError(f"{shown(exc)}; nothing was changed") from None
        entry = guide.get(raw_id)
        entry_id = entry.id if entry is not None else raw_id
        base = f.meta.get(SHA_KEY) if isinstance(f.meta.get(SHA_KEY), str) else None
        at = f.mtime if f.edited else _recorded_time(f.meta) or f.mtime
        report.files_read += 1
        if entry_id in incoming:  # two files for one entry (a copy in the vault): keep both texts
            prev_text, prev_base, prev_at, prev_rel = incoming[entry_id]
            merged, _ = merge_notes(prev_text, prev_at, text, at, f"vault file {f.rel}")
            try:  # two copies (a sync tool's) can make one note too large together
                check_note(merged, f"{prev_rel} and {f.rel} (two files for one entry), merged,", tail="")
            except UsageError as exc:
                raise UsageError(f"{shown(exc)}; nothing was changed") from None
            incoming[entry_id] = (merged, prev_base if prev_base == base else None, max(prev_at, at), prev_rel)
        else:
            incoming[entry_id] = (text, base, at, f.rel)

    known = {e.id for e in guide.entries} | set(alias_map(guide))
    local = store.states()
    replace: list[tuple[str, str, str]] = []
    merge: list[dict[str, Any]] = []
    # The text each file was exported with (found in the note's history by the checksum export
    # wrote): the common version of a three-way merge when both sides changed the note since.
    bases: dict[str, str] = {}
    for entry_id, (text, base, at, _rel) in incoming.items():
        current = local.get(entry_id)
        local_note = current.note if current is not None else ""
        if normalized(text) == normalized(local_note) or not normalized(text):
            # Same words, or an emptied file: emptying a file never deletes a note.
            continue
        if base is not None and body_sha(text) == base and local_note and current.note_updated_at and current.note_updated_at >= at:
            continue  # the vault holds the note as exported; studytui's was changed since (newer wins)
        if current is not None and base is not None and body_sha(local_note) == base:
            replace.append((entry_id, local_note, text))  # only the vault changed since the export
            continue
        exported = _exported_text(store, entry_id, base) if current is not None and base is not None else None
        if exported is not None:
            if normalized(exported) == normalized(text):
                continue  # the vault file is as exported: only studytui's note changed since
            bases[entry_id] = exported
        merge.append({"entry_id": entry_id, "state": "pending", "note": text, "note_updated_at": at})

    source = f"vault {report.source}"
    # Every text is within the limits before anything is written: a refusal changes nothing.
    for entry_id, _seen, text in replace:
        try:
            check_note(text, f"{incoming[entry_id][3]}: the note", tail="")
        except UsageError as exc:
            raise UsageError(f"{shown(exc)}; nothing was changed") from None

    def merge_in(entries: list[dict[str, Any]]) -> None:
        # One transaction that validates everything first: a refusal changes nothing.
        result = store.import_json(
            {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "entries": entries}, known, source=source, note_bases=bases
        )
        report.entries_added += result.entries_added
        report.notes_merged += result.notes_updated
        report.notes_conflicted += result.notes_conflicted
        report.orphans += result.orphans

    if merge:
        try:
            merge_in(merge)
        except UsageError as exc:
            raise UsageError(f"{shown(root)}: {shown(exc)}; nothing was changed") from None
    late: list[dict[str, Any]] = []
    for entry_id, seen, text in replace:
        # Another studytui may have saved this note since we read it: then merge instead of
        # replacing (compare-and-set, one transaction).
        written, _ = store.replace_note(entry_id, seen, text)
        if written:
            report.notes_replaced += 1
        else:
            bases[entry_id] = seen  # the note as exported (its checksum matched): the common version
            late.append({"entry_id": entry_id, "state": "pending", "note": text, "note_updated_at": None})
    if late:
        merge_in(late)
    if merge or late:
        store.follow_aliases(alias_map(guide))
    report.unchanged = len(incoming) - report.notes_replaced - report.notes_merged - report.entries_added
    return report


def _exported_text(store: Any, entry_id: str, sha: str) -> str | None:
    """The newest saved version of the note whose checksum is `sha` (what export wrote), or None."""
    history = getattr(store, "note_history", None)
    if history is None:
        return None
    for version in reversed(history(entry_id)):
        if body_sha(version.text) == sha:
            return version.text
    return None


def _recorded_time(meta: dict[str, Any]) -> str | None:
    from studytui.store.model import normalize_time, now_iso

    dates = meta.get("dates")
    value = dates.get("note_updated") if isinstance(dates, dict) else None
    try:
        recorded = normalize_time(value) if isinstance(value, str) else None
    except UsageError:
        return None
    return None if recorded is None or recorded > now_iso() else recorded


# -- the FORMATS entry (studytui.exports) --------------------------------------------------------


def export(path: Path | None, guide: Any, store: Any) -> Exported:
    """`studytui export DIR --format vault`."""
    assert path is not None  # a folder format: FORMATS says it never goes to standard output
    summary = export_vault(path, guide, store)
    # The path as resolved, absolute, as for every format.
    return Exported(Path(os.path.realpath(path)), summary.line(), warnings=list(summary.warnings))


def load(path_arg: str) -> Path:
    """`studytui import DIR`: the folder (read once the store is open, by `merge`)."""
    return Path(path_arg).expanduser()


def merge(root: Path, guide: Any, store: Any) -> Imported:
    """`studytui import DIR`: notes back from a vault written by `export --format vault`."""
    report = import_vault(root, guide, store)
    # A count stays with what it counts; ids and file names escaped at a terminal.
    return Imported(report, [Paragraph(report.line(), clauses=True, quoted=True)], warnings=list(report.warnings))
