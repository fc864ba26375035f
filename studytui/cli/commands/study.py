"""The study flow on the command line: next, mark, note, progress, export, import.

Only argparse is imported at module level; handlers import the store, Rich and the guide when
they run, so `studytui --help` stays fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from studytui.cli.output import plural
from studytui.core.errors import StudyError, UsageError
from studytui.core.state import STATE_VALUES as STATE_NAMES


def register(sub: argparse._SubParsersAction, named: frozenset[str] | None = None) -> None:
    p = sub.add_parser(
        "next", help="the next entry to study",
        description="Show the first pending entry in guide order from where you are: after the entry you "
        "last marked or opened the source of (wrapping to the start; a fresh start begins with Start here). "
        "Showing changes nothing: run it again and you get the same entry until you mark it or open it.",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output (the entry object, or null)")
    p.set_defaults(func=cmd_next)

    p = sub.add_parser("mark", help="set an entry's state", description="Set an entry's state.")
    p.add_argument("id", help="entry id (old ids listed as aliases work too)")
    p.add_argument("state", metavar="STATE", help=f"one of {', '.join(STATE_NAMES)}")
    p.set_defaults(func=cmd_mark)

    p = sub.add_parser(
        "note", help="print or change an entry's (or a section's) note",
        description="With no option, print the note verbatim. --text replaces it, --append adds to it "
        "(on a new line), --edit opens $VISUAL/$EDITOR, '-' reads the new note from stdin. "
        "ID is an entry id, or a section id (see 'studytui progress --json') for a note on the "
        "whole section. Every saved version stays in the event log.",
    )
    p.add_argument("id", help="entry id or section id")
    p.add_argument("stdin", nargs="?", metavar="-", help="read the new note from standard input")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--text", metavar="TEXT", help="replace the note with TEXT (--text \"\" clears it)")
    group.add_argument("--append", metavar="TEXT", help="append TEXT to the note")
    group.add_argument("--edit", action="store_true", help="edit the note in $VISUAL or $EDITOR")
    p.set_defaults(func=cmd_note)

    p = sub.add_parser(
        "progress", help="how far along you are",
        description="Overall and per-section counts. Done and skipped count as covered; skipped is always "
        "shown separately. Progress kept for entries no longer in the guide is listed as orphaned.",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_progress)

    p = sub.add_parser(
        "export", help="back up progress and notes",
        description="JSON: a complete, re-importable backup (states, times, notes, event log). Markdown: "
        "a readable study journal of all notes by section. Anki: a deck package (.apkg) of the glossary and "
        "the practice problems you met. Vault: a folder of Markdown notes (Obsidian-style front matter) "
        "that 'studytui import DIR' reads back. PATH '-' writes to standard output (json, md). The file or "
        "folder written is reported as an absolute path, whatever the format.",
    )
    p.add_argument(
        "path", metavar="PATH",
        help="file to write (replaced atomically; through a symlink, its target is replaced); a folder for vault",
    )
    p.add_argument(
        "--format", choices=("json", "md", "anki", "vault"),
        help="default: md for *.md files, anki for *.apkg, json otherwise (vault must be asked for)",
    )
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "import", help="merge a JSON export or a notes vault",
        description="Merge a JSON export into your progress: per entry the newer change wins, conflicting "
        "notes are both kept with a marker line, entries no longer in the guide are kept as orphans. "
        "PATH a directory: read the notes back from a vault written by 'export --format vault'.",
    )
    p.add_argument("path", metavar="PATH", help="a file written by 'studytui export' ('-' for stdin), or a vault directory")
    p.add_argument("--json", action="store_true", help="machine-readable report")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser(
        "history", help="earlier versions of a note, and a way back",
        description="List every saved version of an entry's note (oldest first, each with its number N and "
        "the time it was saved, UTC), print one with --show N, or make one current again with --restore N. Restoring adds a new version; "
        "nothing is ever removed from the history.",
    )
    p.add_argument("id", help="entry id (an orphaned id works too)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--show", type=int, metavar="N", help="print version N verbatim")
    group.add_argument("--restore", type=int, metavar="N", help="make version N the current note")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_history)


# -- shared helpers -------------------------------------------------------------------------


def _open(args: argparse.Namespace, salvage: bool = False):
    """(guide, store), with progress under renamed entries' old ids moved onto the new ids."""
    from studytui.guide import load_guide
    from studytui.store import open_store
    from studytui.study.flow import alias_map

    guide = load_guide(args.content)
    store = open_store(args.data_dir, salvage=salvage)
    try:
        store.follow_aliases(alias_map(guide))
    except BaseException:
        store.close()
        raise
    return guide, store


def _out(text: str) -> None:
    """A message for people. It may quote ids, file names and notes: at a terminal their control
    characters are shown escaped, never obeyed."""
    from studytui.cli.output import for_terminal

    sys.stdout.write(for_terminal(text))
    sys.stdout.flush()


def _err(text: str) -> None:
    from studytui.cli.output import for_terminal

    sys.stderr.write(for_terminal(text, sys.stderr))


def _out_verbatim(text: str) -> None:
    """The learner's own text, byte for byte as UTF-8: no markup, no newline or locale translation.
    At a terminal, control characters are shown escaped (an imported note must not be able to
    retitle the terminal or write the clipboard); pipes and files get the bytes as stored."""
    from studytui.cli.output import for_terminal

    text = for_terminal(text)
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
    else:
        buffer.write(text.encode("utf-8"))
    # At a terminal, end on a new line so the prompt does not run into the note; pipes get the bytes as stored.
    if text and not text.endswith("\n") and sys.stdout.isatty():
        sys.stdout.write("\n")
    sys.stdout.flush()


def _print_entry(entry: Any) -> None:
    """The entry `next` shows: title, id and place; the URL on a line of its own, whole (never
    wrapped: a copied URL with a line break in it does not work); then the summary."""
    from rich.style import Style
    from rich.text import Text

    from studytui.cli.output import console

    con = console()
    text = Text()
    text.append(entry.title, style="bold")
    text.append(f"\n{entry.id}", style="cyan")
    where = entry.section_title + (f" › {entry.subsection_title}" if entry.subsection_title else "")
    text.append(f"  ·  {where}", style="dim")
    if entry.kind:
        text.append(f"  ·  {entry.kind}", style="dim")
    if not entry.url and entry.no_url_reason:
        text.append(f"\nNo primary link yet: {entry.no_url_reason}", style="italic")
    con.print(text)
    if entry.url:
        con.print(Text(entry.url, style=Style(link=entry.url)), soft_wrap=True)  # OSC 8 where the terminal allows
    if entry.summary:
        con.print(Text(f"\n{entry.summary}"))


# -- commands -------------------------------------------------------------------------------


def cmd_next(args: argparse.Namespace) -> int:
    from studytui.study.session import StudySession

    guide, store = _open(args)
    with store:
        session = StudySession(guide, store)
        # Showing is not studying: nothing is written, so asking again gives the same entry.
        entry = session.continue_entry()
    if args.json:
        from studytui.cli.output import print_json

        print_json(None if entry is None else {**entry.to_dict(), "state": "pending"})
        return 0
    from studytui.cli.output import console

    if entry is None:
        s = session.summary
        _out(
            f"Nothing pending: {s.done} done, {s.skipped} skipped, {s.learning} still learning "
            f"of {plural(s.total, 'entry')}. See 'studytui progress'.\n"
        )
        return 0
    _print_entry(entry)
    from studytui.cli.output import print_parts, visible

    console().print()
    # The command whole on its line; the other states beside it where they fit, else under it.
    print_parts([f"When you are done: studytui mark {visible(entry.id)} done", "(or learning, skipped)"], sep="   ", style="dim")
    return 0


def cmd_mark(args: argparse.Namespace) -> int:
    from studytui.store.model import check_state
    from studytui.study.flow import resolve_entry
    from studytui.study.session import StudySession

    state = check_state(args.state)
    guide, store = _open(args)
    with store:
        entry = resolve_entry(guide, args.id)
        session = StudySession(guide, store)  # the same session rules as the app
        before = session.state_of(entry.id)
        session.set_state(entry.id, state)
    same = " (unchanged)" if before == state else f" (was {before})"
    _out(f"{entry.id}: {state}{same}\n")
    return 0


def _read_stdin() -> str:
    stream = sys.stdin
    if stream is None:
        raise UsageError("no standard input to read the note from")
    if stream.isatty():
        _err("Reading the note from standard input; end it with Ctrl-D.\n")
    from studytui.core.fileio import size_text
    from studytui.store.model import NOTE_LIMIT

    # At most one byte past the limit: a note larger than a note can hold is refused unread.
    raw = stream.buffer.read(NOTE_LIMIT + 1) if hasattr(stream, "buffer") else stream.read(NOTE_LIMIT + 1).encode("utf-8")
    if len(raw) > NOTE_LIMIT:
        raise UsageError(
            f"standard input is larger than the {size_text(NOTE_LIMIT)} a note can hold; the note was not changed"
        )
    try:
        return raw.decode("utf-8")  # bytes as given: no newline translation
    except UnicodeDecodeError:
        raise UsageError("standard input is not valid UTF-8 text; the note was not changed") from None


def _edit_text(initial: str, entry_id: str) -> tuple[str, Path]:
    """Run the user's editor on a temporary file. Returns (new text, temp file to delete later)."""
    import shlex
    import subprocess
    import tempfile

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor or not editor.strip():
        raise UsageError("no editor set: export VISUAL or EDITOR, or use --text TEXT or '-' to read stdin")
    fd, name = tempfile.mkstemp(prefix=f"studytui-note-{entry_id[:40]}-", suffix=".md")
    path = Path(name)
    with os.fdopen(fd, "wb") as f:
        f.write(initial.encode("utf-8"))
    try:
        status = subprocess.call([*shlex.split(editor), str(path)])
    except (OSError, ValueError) as exc:
        path.unlink(missing_ok=True)
        raise StudyError(f"cannot run editor {editor!r} ({exc}); the note was not changed") from None
    if status != 0:
        path.unlink(missing_ok=True)
        raise StudyError(f"editor {editor!r} exited with status {status}; the note was not changed")
    import stat

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise UsageError(f"editor {editor!r} removed the temporary file; the note was not changed") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(
            f"editor {editor!r} replaced the temporary file {path} with something that is not a file; "
            "the note was not changed"
        )
    from studytui.core.fileio import size_text
    from studytui.store.model import NOTE_LIMIT, note_size_text

    if st.st_size > NOTE_LIMIT:
        raise UsageError(
            f"the edited note is {note_size_text(st.st_size)}, more than the {size_text(NOTE_LIMIT)} a note can hold; "
            f"nothing saved, your text is kept in {path}"
        )
    try:
        return path.read_bytes().decode("utf-8"), path
    except UnicodeDecodeError:
        raise StudyError(f"the edited note is not valid UTF-8; nothing saved, your text is kept in {path}") from None
    except OSError as exc:
        raise UsageError(f"cannot read the edited note {path} ({exc.strerror or exc}); the note was not changed") from None


def _kept_in(exc: StudyError, temp: Path) -> StudyError:
    """The refusal of an edited note, naming the temp file that still holds the text; a usage
    error (a note over the size limit) keeps exit status 2."""
    kind = UsageError if isinstance(exc, UsageError) else StudyError
    return kind(f"{exc} - your edited text is kept in {temp}")


def _section_note(args: argparse.Namespace, session: Any, section_id: str, writing: bool) -> int:
    """`note SECTION_ID ...`: the same verbs on the note that belongs to a whole section."""
    old = session.store.get_section_note(section_id)
    if not writing:
        _out_verbatim(old)
        return 0
    if args.text is not None:
        new = args.text
    elif args.append is not None:
        new = f"{old}\n{args.append}" if old and not old.endswith("\n") else old + args.append
    elif args.stdin == "-":
        new = _read_stdin()
        if not new:
            raise UsageError(
                f"standard input was empty; the note was not changed (to clear it: studytui note {section_id} --text \"\")"
            )
    else:
        new, temp = _edit_text(old, section_id)
        if new == old:
            temp.unlink(missing_ok=True)
            _out(f"{section_id}: note unchanged\n")
            return 0
        try:
            kept_both = session.write_section_note(section_id, new, base=old)
        except StudyError as exc:
            raise _kept_in(exc, temp) from None
        temp.unlink(missing_ok=True)
        if kept_both:
            _err(
                f"The note on {section_id} changed while the editor was open; the changes were merged, and where "
                "both changed the same words both are kept (marked with a '--- studytui: conflicting note' line).\n"
            )
        _out(f"{section_id}: section note saved ({plural(len(session.store.get_section_note(section_id)), 'character')})\n")
        return 0
    session.write_section_note(section_id, new, base=old)
    _out(f"{section_id}: section note saved ({plural(len(new), 'character')})\n")
    return 0


def cmd_note(args: argparse.Namespace) -> int:
    from studytui.study.flow import resolve_entry, unknown_entry_message

    if args.stdin is not None and args.stdin != "-":
        raise UsageError(f"unexpected argument {args.stdin!r} (use '-' to read the note from stdin, or --text)")
    writing = args.stdin == "-" or args.text is not None or args.append is not None or args.edit
    if args.stdin == "-" and (args.text is not None or args.append is not None or args.edit):
        raise UsageError("'-' cannot be combined with --text, --append or --edit")
    from studytui.study.session import StudySession

    guide, store = _open(args)
    with store:
        session = StudySession(guide, store)  # the same note rules as the app
        entry = guide.get(args.id)
        section = None if entry is not None else next((s for s in guide.sections if s.id == args.id), None)
        if section is not None:
            return _section_note(args, session, section.id, writing)
        if not writing:
            if entry is None:
                # An orphan's note can still be read: that is how a learner gets it back.
                if args.id not in store.states():
                    raise UsageError(unknown_entry_message(guide, args.id))
                note = store.get_note(args.id)
            else:
                note = store.get_note(entry.id)
            _out_verbatim(note)
            if not note and sys.stdout.isatty():
                _err(f"(no note for '{args.id}' yet; add one with: studytui note {args.id} --edit)\n")
            return 0
        entry = resolve_entry(guide, args.id)
        if args.text is not None:
            change = session.write_note(entry.id, args.text)
        elif args.append is not None:
            change = session.append_note(entry.id, args.append)
        elif args.stdin == "-":
            text = _read_stdin()
            if not text:
                # An empty pipe is far more often a mistake (a failed command upstream) than a wish.
                raise UsageError(
                    f"standard input was empty; the note was not changed (to clear it: studytui note {entry.id} --text \"\")"
                )
            change = session.write_note(entry.id, text)
        else:
            old = session.note_text(entry.id)
            new, temp = _edit_text(old, entry.id)
            if new == old:
                temp.unlink(missing_ok=True)
                _out(f"{entry.id}: note unchanged\n")
                return 0
            try:
                change = session.write_note(entry.id, new, base=old)
            except StudyError as exc:
                raise _kept_in(exc, temp) from None
            temp.unlink(missing_ok=True)
        if change.conflicts:
            how = "while the editor was open" if args.edit else "meanwhile"
            _err(
                f"The note on {entry.id} changed {how}; the changes were merged, and where both changed the "
                f"same words both are kept (marked with a '--- studytui: conflicting note' line). "
                f"Review: studytui note {entry.id} --edit\n"
            )
        chars = len(session.note_text(entry.id))
    _out(f"{entry.id}: note saved ({plural(chars, 'character')})\n")
    return 0


def _bar(counts: Any, width: int = 16):  # -> rich.text.Text
    from rich.text import Text

    total = counts.total or 1
    cells = {
        "done": round(width * counts.done / total),
        "skipped": round(width * counts.skipped / total),
        "learning": round(width * counts.learning / total),
    }
    bar = Text()
    bar.append("█" * cells["done"], style="green")
    bar.append("╳" * cells["skipped"], style="blue")  # not █: told apart from done without colour
    bar.append("▒" * cells["learning"], style="yellow")
    bar.append("·" * max(0, width - sum(cells.values())), style="dim")
    return bar


PROGRESS_COUNTS = ("done", "skipped", "learning", "pending", "total")


def _progress_records(con: Any, rows: list) -> None:
    """`progress` where the names do not fit beside all the figures (80 columns): each name whole,
    its bar and share beside it (under it where even they do not fit), then its counts under it,
    in columns under a second header line."""
    from rich.cells import cell_len
    from rich.text import Text

    name_width = max(cell_len(t.plain) for t, _c in rows)
    beside = name_width + 2 + 16 + 2 + 4 <= con.width
    head = Text("section".ljust(name_width) + "  " if beside else "section\n  ", style="bold")
    head.append("covered".ljust(16) + "  " + "%".rjust(4) + "\n  " + " ".join(PROGRESS_COUNTS), style="bold")
    con.print(head, soft_wrap=True)
    for title, c in rows:
        share = Text("  ") + _bar(c) + Text("  " + f"{100 * c.covered:.0f}%".rjust(4))
        counts = (c.done, c.skipped, c.learning, c.pending, c.total)
        line = Text("  " + " ".join(str(v).rjust(len(n)) for v, n in zip(counts, PROGRESS_COUNTS)))
        if beside:
            con.print(title + Text(" " * (name_width - cell_len(title.plain))) + share, soft_wrap=True)
        else:
            con.print(title, soft_wrap=True)
            con.print(share, soft_wrap=True)
        con.print(line, soft_wrap=True)


def cmd_progress(args: argparse.Namespace) -> int:
    from studytui.cli.commands.practice import print_progress_practice, progress_practice
    from studytui.study.flow import progress_summary

    guide, store = _open(args)
    with store:
        summary = progress_summary(guide, store.states())  # with orphans, which the session leaves out
        practice = progress_practice(guide, store)
    if args.json:
        from studytui.cli.output import print_json

        print_json({**summary.to_dict(), "practice": practice})
        return 0
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    from studytui.cli.output import console, visible

    con = console()
    rows = [(Text(visible(s.title)), s.counts) for s in summary.sections]
    rows.append((Text("All", style="bold"), summary.overall))
    # The numbers and bars keep their width. Where the longest section name fits beside them, one
    # line a section; else (80 columns) two: the name whole with its bar, then its counts.
    counts_width = 1 + 16 + 1 + 4 + sum(1 + len(n) for n in PROGRESS_COUNTS)
    if max(cell_len(t.plain) for t, _c in rows) + counts_width <= con.width:
        table = Table(box=None, header_style="bold", pad_edge=False, collapse_padding=True)
        table.add_column("section", no_wrap=True)
        table.add_column("covered", no_wrap=True, min_width=16)
        table.add_column("%", justify="right", no_wrap=True, min_width=4)
        for name in PROGRESS_COUNTS:
            table.add_column(name, justify="right", no_wrap=True, min_width=len(name))
        for i, (title, c) in enumerate(rows):
            if i == len(rows) - 1:
                table.add_section()
            table.add_row(title, _bar(c), f"{100 * c.covered:.0f}%", str(c.done), str(c.skipped), str(c.learning),
                          str(c.pending), str(c.total))
        con.print(table)
    else:
        _progress_records(con, rows)
    con.print(
        Text("█ done  ", style="green")
        + Text("╳ skipped  ", style="blue")
        + Text("▒ learning  ", style="yellow")
        + Text("· pending", style="dim")
    )
    if summary.orphans:
        con.print(
            Text(
                f"\nKept for {len(summary.orphans)} entr{'y' if len(summary.orphans) == 1 else 'ies'} no longer in the guide (orphans; "
                "exported with everything else):",
                style="bold",
            )
        )
        for o in summary.orphans:
            note = f", note of {len(o.note)} characters" if o.note else ""
            con.print(Text(f"  {visible(o.entry_id)} ({o.state}{note})"))
    print_progress_practice(practice)
    return 0


def _write_atomically(path: Path, data: bytes) -> Path:
    """studytui.core.fileio.write_atomically (moved there for studytui.exports, issue 25), imported when used."""
    from studytui.core.fileio import write_atomically

    return write_atomically(path, data)


def demote_headings(text: str, level: int) -> str:
    """A note's own Markdown headings moved below the journal's: the note's highest heading
    becomes `level` (at most 6), the others keep their relative depth. Code blocks are left alone;
    underlined (setext) headings become `#` headings."""
    import re

    atx = re.compile(r"^( {0,3})(#{1,6})(?=\s|$)(.*)$")
    lines = text.split("\n")
    fence: str | None = None
    found: list[tuple[int, int, str]] = []  # (line index, depth, heading text)
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        marker = stripped[:3]
        if marker in ("```", "~~~"):
            fence = None if fence == marker else (fence or marker)
            continue
        if fence:
            continue
        m = atx.match(line)
        if m:
            found.append((i, len(m.group(2)), m.group(3).strip()))
        elif i > 0 and lines[i - 1].strip() and re.fullmatch(r" {0,3}(=+|-+)\s*", line) and not atx.match(lines[i - 1]):
            found.append((i - 1, 1 if "=" in line else 2, lines[i - 1].strip()))
            lines[i] = "\x00"  # the underline goes
    if not found:
        return text
    top = min(depth for _i, depth, _t in found)
    for i, depth, title in found:
        lines[i] = "#" * min(6, level + depth - top) + (f" {title}" if title else "")
    return "\n".join(line for line in lines if line != "\x00")


def journal_markdown(guide: Any, states: dict, section_notes: dict[str, str], exported_at: str) -> str:
    """The study journal: every note, by section in guide order, then orphaned notes."""
    from studytui.study.flow import canonical_states, progress_summary

    current, orphans = canonical_states(guide, states)
    s = progress_summary(guide, states)
    lines = [
        f"# Study journal: {guide.title}",
        "",
        f"Exported {exported_at}. {s.done + s.skipped} of {plural(s.total, 'entry')} covered "
        f"({s.done} done, {s.skipped} skipped), {s.learning} being learned.",
    ]
    for section in guide.sections:
        noted = [e for e in section.entries if current.get(e.id) and current[e.id].note]
        section_note = section_notes.get(section.id, "")
        if not noted and not section_note:
            continue
        lines += ["", f"## {section.title}", ""]
        if section_note:
            lines += [demote_headings(section_note.rstrip("\n"), 3), ""]
        for e in noted:
            p = current[e.id]
            lines += [f"### {e.title}", "", f"`{e.id}` · {p.state}" + (f" · <{e.url}>" if e.url else ""), ""]
            lines += [demote_headings(p.note.rstrip("\n"), 4), ""]
    orphan_notes = [o for o in orphans.values() if o.note]
    if orphan_notes:
        lines += ["", "## Notes on entries no longer in the guide", ""]
        for o in orphan_notes:
            lines += [f"### `{o.entry_id}` ({o.state})", "", demote_headings(o.note.rstrip("\n"), 4), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def cmd_export(args: argparse.Namespace) -> int:
    import json

    from studytui.store import EntryProgress

    fmt = args.format or ("md" if args.path.lower().endswith((".md", ".markdown")) else "json")
    if fmt == "json" and args.format is None and args.path.lower().endswith(".apkg"):
        fmt = "anki"
    # salvage: a damaged database is exactly when a backup matters; export what can be read.
    guide, store = _open(args, salvage=True)
    if fmt in ("anki", "vault"):
        from studytui.cli.commands.takealong import export_other

        with store:
            return export_other(fmt, args.path, guide, store)
    with store:
        data = store.export_json()
        damaged = store.damaged
    if fmt == "md":
        states = {e["entry_id"]: EntryProgress(**e) for e in data["entries"]}
        sections = {s["section_id"]: s["note"] for s in data["section_notes"]}
        text = journal_markdown(guide, states, sections, data["exported_at"])
    else:
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    warning = (
        f"warning: the database is damaged ({damaged}); this export holds only what could still be read\n"
        if damaged else ""
    )
    payload_size = len(text.encode("utf-8"))
    if fmt == "json":
        warning += _import_limit_warning(payload_size)
    if args.path == "-":
        from studytui.cli.output import for_terminal

        # JSON escapes control characters itself; the journal is the learners' text, shown
        # visibly at a terminal and verbatim into a pipe.
        payload = (for_terminal(text) if fmt == "md" else text).encode("utf-8")
        sys.stdout.flush()
        sys.stdout.buffer.write(payload)
        sys.stdout.flush()
        _err(warning)
        return 1 if damaged else 0
    path = Path(args.path).expanduser()
    written = _write_atomically(path, text.encode("utf-8"))
    n_notes = sum(1 for e in data["entries"] if e["note"])
    via = f" (through the link {path})" if written != path and path.is_symlink() else ""
    _err(
        f"Wrote {written}{via} ({fmt}: {plural(len(data['entries']), 'entry')}, {plural(n_notes, 'note')}, "
        f"{plural(len(data['events']), 'event')})\n"
    )
    _err(warning)
    return 1 if damaged else 0


def _import_limit_warning(size: int) -> str:
    """A warning line when an export of `size` bytes is larger than `studytui import` reads by
    default (fileio.JSON_IMPORT_LIMIT), naming the variable that raises the limit; else ''."""
    from studytui.core import fileio

    default = fileio.JSON_IMPORT_LIMIT
    if size <= default:
        return ""
    need = -(-size // fileio.MIB)  # MiB, rounded up
    return (
        f"warning: this export is {need} MiB, larger than the {fileio.size_text(default)} 'studytui import' "
        f"reads by default; to import it, run: {fileio.IMPORT_LIMIT_ENV}={need} studytui import FILE\n"
    )


def _printable_name(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (kept by Python as surrogates) become U+FFFD,
    so the name can be printed and stored in a conflict marker."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _read_export(path_arg: str) -> tuple[Any, str]:
    import json

    from studytui.core import fileio

    # Bounded (fileio.json_import_limit(): 64 MiB unless STUDYTUI_IMPORT_LIMIT_MIB says more): a
    # 200 MB file must not take gigabytes to be refused. Only a regular file (or stdin) is read:
    # a FIFO would block for ever.
    limit, what = fileio.json_import_limit(), "a JSON export"
    raise_it = f" (to read it, raise the limit: {fileio.IMPORT_LIMIT_ENV}=N, in MiB)"
    if path_arg == "-":
        try:
            raw, name = fileio.read_stream_bounded(sys.stdin.buffer, limit, what, "stdin"), "stdin"
        except fileio.TooLargeError as exc:
            raise UsageError(f"{exc}{raise_it}; nothing was changed") from None
    else:
        path = Path(path_arg).expanduser()
        name = _printable_name(path.name)
        try:
            raw = fileio.read_bounded(path, limit, what)
        except fileio.TooLargeError as exc:
            raise UsageError(f"{exc}{raise_it}; nothing was changed") from None
        except fileio.RefusedFileError as exc:
            raise UsageError(f"{exc}; nothing was changed") from None
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}; nothing was changed") from None
    try:
        return json.loads(raw.decode("utf-8")), name
    except RecursionError:
        raise UsageError(f"{path_arg} is nested too deeply to be a studytui export; nothing was changed") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path_arg} is not a JSON export ({str(exc).splitlines()[0]}); nothing was changed") from None


def _is_folder(path: str) -> bool:
    # An odd path (unknown ~user, over-long name) is not a folder; _read_export names the problem.
    try:
        return Path(path).expanduser().is_dir()
    except (OSError, RuntimeError, ValueError):
        return False


def cmd_import(args: argparse.Namespace) -> int:
    from studytui.study.flow import alias_map

    if args.path != "-" and _is_folder(args.path):
        from studytui.cli.commands.takealong import import_vault

        guide, store = _open(args)
        with store:
            return import_vault(args, guide, store)
    data, name = _read_export(args.path)
    guide, store = _open(args)
    known = {e.id for e in guide.entries} | set(alias_map(guide))
    with store:
        try:
            report = store.import_json(data, known, source=name)
        except UsageError as exc:
            raise UsageError(f"{args.path}: {exc}; nothing was changed") from None
        store.follow_aliases(alias_map(guide))
    if args.json:
        from studytui.cli.output import print_json

        print_json(report.to_dict())
        return 0
    from studytui.cli.output import clauses, quoted, write_wrapped

    # Filled to the terminal's width at word boundaries, continued under the text; a count stays
    # with what it counts, the file name and the ids whole.
    text = (
        f"Imported {name}: {plural(report.entries_added, 'entry')} added, {plural(report.states_updated, 'state')} and "
        f"{plural(report.notes_updated, 'note')} updated, {plural(report.events_added, 'event')} added, "
        f"{plural(report.attempts_added, 'practice attempt')} added."
    )
    write_wrapped(text, rest="  ", keep=[name, *clauses(text)])
    if report.notes_conflicted:
        text = (f"Changed on both sides in the same words, both kept (marked with a '--- studytui: conflicting note' "
                f"line) for: {', '.join(report.notes_conflicted)}")
        write_wrapped(text, rest="  ", keep=[*clauses(text), *quoted(text)])
    if report.orphans:
        write_wrapped(f"Kept as orphans (not in this guide): {', '.join(report.orphans)}", rest="  ")
    return 0


def _history_id(guide: Any, store: Any, entry_id: str) -> str:
    from studytui.study.flow import unknown_entry_message

    entry = guide.get(entry_id)
    if entry is not None:
        return entry.id
    if entry_id in store.states() or store.note_history(entry_id):
        return entry_id  # an orphan: its history is how a learner gets the text back
    raise UsageError(unknown_entry_message(guide, entry_id))


def cmd_history(args: argparse.Namespace) -> int:
    from studytui.cli.output import for_terminal, visible

    guide, store = _open(args)
    with store:
        entry_id = _history_id(guide, store, args.id)
        if args.restore is not None:
            from studytui.study.session import StudySession

            versions = store.note_history(entry_id)
            changed = bool(StudySession(guide, store).restore_note(entry_id, args.restore))
            if args.json:
                from studytui.cli.output import print_json

                print_json({"entry_id": entry_id, "restored": args.restore, "changed": changed})
                return 0
            if changed:
                _out(f"{entry_id}: version {args.restore} restored as version {len(versions) + 1}; "
                     f"the text it replaced stays in the history\n")
            else:
                _out(f"{entry_id}: the note already holds version {args.restore}; nothing changed\n")
            return 0
        versions = store.note_history(entry_id)
    if args.show is not None:
        if not 1 <= args.show <= len(versions):
            span = f"versions 1-{len(versions)}" if versions else "no saved versions"
            raise UsageError(f"the note on '{entry_id}' has no version {args.show} ({span})")
        chosen = versions[args.show - 1]
        if args.json:
            from studytui.cli.output import print_json

            print_json({"entry_id": entry_id, **chosen.to_dict()})
        else:
            _out_verbatim(chosen.text)
        return 0
    if args.json:
        from studytui.cli.output import print_json

        print_json({"entry_id": entry_id, "versions": [v.to_dict() for v in versions]})
        return 0
    if not versions:
        _out(for_terminal(f"No saved versions of a note on {entry_id}.\n"))
        return 0
    from rich.table import Table
    from rich.text import Text

    from studytui.cli.output import console

    # Every column but the text keeps its width (the full time, the N that --show takes); the
    # text gives way, on one line with an ellipsis.
    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("N", justify="right", no_wrap=True, min_width=1)
    table.add_column("saved (UTC)", no_wrap=True, min_width=19)
    table.add_column("chars", justify="right", no_wrap=True)
    table.add_column("text", min_width=8)
    table.add_column("", style="dim", no_wrap=True)
    for v in versions:
        when = (v.at or "unknown time")[:19].replace("T", " ")
        # The text flattened onto one line (line breaks as ⏎), cut with an ellipsis where it is long.
        first = " ⏎ ".join(line.strip() for line in v.text[:400].splitlines() if line.strip())
        marks = ", ".join(filter(None, (f"restores {v.restored_from}" if v.restored_from else "", "current" if v.current else "")))
        table.add_row(str(v.number), when, str(len(v.text)), Text(visible(first[:200]), no_wrap=True, overflow="ellipsis"), marks)
    con = console()
    con.print(Text(f"Versions of the note on {visible(entry_id)}, oldest first:", style="bold"), soft_wrap=True)
    con.print(table)
    # The commands whole (the terminal folds one that is too long), so they can be copied.
    con.print(Text(f"See one: studytui history {visible(entry_id)} --show N", style="dim"), soft_wrap=True)
    con.print(Text(f"Restore: studytui history {visible(entry_id)} --restore N", style="dim"), soft_wrap=True)
    return 0
