"""The study flow on the command line: next, mark, note, progress, export, import.

Only argparse is imported at module level; handlers import the store, Rich and the guide when
they run, so `studytui --help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studytui.cli.output import plural
from studytui.core.errors import StudyError, UsageError
from studytui.core.state import STATE_VALUES as STATE_NAMES

if TYPE_CHECKING:
    from rich.text import Text

    from studytui.core.fileio import EditedText


COMMANDS = ("next", "mark", "note", "progress", "export", "import", "history")


def register(sub: argparse._SubParsersAction, named: frozenset[str] | None = None) -> None:
    from studytui.cli.parsing import only_named

    sub = only_named(sub, named, COMMANDS)  # only the command that runs is built in full
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

    if named is None or "export" in named:  # the format registry only for `export` itself (and full help)
        from studytui.exports import FORMATS, export_description, format_help

        p = sub.add_parser("export", help="back up progress and notes", description=export_description())
        p.add_argument(
            "path", metavar="PATH",
            help="file to write (replaced atomically; through a symlink, its target is replaced); a folder for vault",
        )
        p.add_argument("--format", choices=tuple(FORMATS), help=format_help())
        p.set_defaults(func=cmd_export)
    else:
        sub.add_parser("export", help="back up progress and notes")

    # The help names each format `import` reads, from the format registry. It is shown by `import
    # --help` and in the list of commands (this group registered with none of its other commands
    # named: `studytui --help`); for another of its commands the registry is not imported.
    if named is None or "import" in named or named.isdisjoint(("next", "mark", "note", "progress", "export", "history")):
        from studytui.exports import import_description, import_help, import_path_help

        p = sub.add_parser("import", help=import_help(), description=import_description())
        p.add_argument("path", metavar="PATH", help=import_path_help())
    else:
        p = sub.add_parser("import")
        p.add_argument("path", metavar="PATH")
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


def _open(args: argparse.Namespace, salvage: bool = False) -> tuple[Any, Any]:
    """(guide, store) for `--content` and `--data-dir`: `study.workspace.open_workspace`, aliases followed."""
    from studytui.study.workspace import open_workspace

    return open_workspace(args.content, args.data_dir, salvage=salvage)


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
        entry = session.continue_entry()  # one being learned first, else the next pending one
        state = session.state_of(entry.id) if entry is not None else None
    if args.json:
        from studytui.cli.output import print_json

        print_json(None if entry is None else {**entry.to_dict(), "state": state})
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
    if state == "learning":
        _out("You are learning this one: carry on with it.\n")
    # The command whole on its line; the other states beside it where they fit, else under it.
    others = "(or skipped)" if state == "learning" else "(or learning, skipped)"
    print_parts([f"When you are done: studytui mark {visible(entry.id)} done", others], sep="   ", style="dim")
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


def _edit_text(initial: str, entry_id: str) -> EditedText:
    """The learner's editor on the note (`core.fileio.edit_in_editor`, the app's round trip too):
    the text it saved, kept in a temporary file until the note is saved (`.discard()`)."""
    from studytui.core.fileio import edit_in_editor
    from studytui.store.model import NOTE_LIMIT

    return edit_in_editor(initial, entry_id, limit=NOTE_LIMIT, hint=", or use --text TEXT or '-' to read stdin")


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
        edited = _edit_text(old, section_id)
        if edited.text == old:
            edited.discard()
            _out(f"{section_id}: note unchanged\n")
            return 0
        try:
            kept_both = session.write_section_note(section_id, edited.text, base=old)
        except StudyError as exc:
            raise _kept_in(exc, edited.path) from None
        edited.discard()
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
            edited = _edit_text(old, entry.id)
            if edited.text == old:
                edited.discard()
                _out(f"{entry.id}: note unchanged\n")
                return 0
            try:
                change = session.write_note(entry.id, edited.text, base=old)
            except StudyError as exc:
                raise _kept_in(exc, edited.path) from None
            edited.discard()
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


def _bar(counts: Any, width: int = 16) -> Text:
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

    from studytui.core.text import percent

    name_width = max(cell_len(t.plain) for t, _c in rows)
    beside = name_width + 2 + 16 + 2 + 4 <= con.width
    head = Text("section".ljust(name_width) + "  " if beside else "section\n  ", style="bold")
    head.append("covered".ljust(16) + "  " + "%".rjust(4) + "\n  " + " ".join(PROGRESS_COUNTS), style="bold")
    con.print(head, soft_wrap=True)
    for title, c in rows:
        share = Text("  ") + _bar(c) + Text("  " + percent(c.done + c.skipped, c.total).rjust(4))
        counts = (c.done, c.skipped, c.learning, c.pending, c.total)
        line = Text("  " + " ".join(str(v).rjust(len(n)) for v, n in zip(counts, PROGRESS_COUNTS)))
        if beside:
            con.print(title + Text(" " * (name_width - cell_len(title.plain))) + share, soft_wrap=True)
        else:
            con.print(title, soft_wrap=True)
            con.print(share, soft_wrap=True)
        con.print(line, soft_wrap=True)


def cmd_progress(args: argparse.Namespace) -> int:
    from studytui.study.flow import progress_summary
    from studytui.study.progress import practice_progress

    guide, store = _open(args)
    with store:
        summary = progress_summary(guide, store.states())  # with orphans, which the session leaves out
        practice = practice_progress(guide, store)
    if args.json:
        from studytui.cli.output import print_json

        print_json({**summary.to_dict(), "practice": practice})
        return 0
    from rich.cells import cell_len
    from rich.text import Text

    from studytui.cli.output import Column, console, print_table, visible
    from studytui.core.text import percent  # the app's header uses the same rule

    con = console()
    rows = [(Text(visible(s.title)), s.counts) for s in summary.sections]
    rows.append((Text("All", style="bold"), summary.overall))
    # The numbers and bars keep their width. Where the longest section name fits beside them, one
    # line a section; else (80 columns) two: the name whole with its bar, then its counts.
    counts_width = 1 + 16 + 1 + 4 + sum(1 + len(n) for n in PROGRESS_COUNTS)
    if max(cell_len(t.plain) for t, _c in rows) + counts_width <= con.width:
        columns = [Column("section", no_wrap=True), Column("covered", no_wrap=True, min_width=16),
                   Column("%", justify="right", no_wrap=True, min_width=4),
                   *(Column(name, justify="right", no_wrap=True, min_width=len(name)) for name in PROGRESS_COUNTS)]
        # (The last row, All, had a section line of its own in rich.table; with no box, none is drawn.)
        print_table(con, columns, [
            [title, _bar(c), percent(c.done + c.skipped, c.total), str(c.done), str(c.skipped), str(c.learning),
             str(c.pending), str(c.total)] for title, c in rows
        ], collapse_padding=True)
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
    from studytui.cli.views import print_practice_progress

    print_practice_progress(practice)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from studytui.exports import format_for

    fmt = format_for(args.path, args.format)
    # salvage: a damaged database is exactly when a backup matters; export what can be read.
    guide, store = _open(args, salvage=True)
    with store:
        if args.path == "-" and not fmt.stdout:
            raise UsageError(f"--format {fmt.name} writes {'a directory' if fmt.folder else 'a file'}, not standard output")
        path = None if args.path == "-" else Path(args.path).expanduser()
        exported = fmt.export(path, guide, store)
    for warning in exported.warnings:
        _err(f"studytui: warning: {warning}\n")
    if path is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(exported.payload)
        sys.stdout.flush()
    else:
        written = exported.written
        # The file or folder as resolved, absolute, whatever the format.
        via = f" (through the link {path})" if written != path.absolute() and path.is_symlink() else ""
        _err(f"Wrote {written}{via} ({fmt.name}: {exported.what})\n")
    _err(exported.notices)
    return exported.status


def _is_folder(path: str) -> bool:
    # An odd path (unknown ~user, over-long name) is not a folder; the format's reader names the problem.
    try:
        return Path(path).expanduser().is_dir()
    except (OSError, RuntimeError, ValueError):
        return False


def cmd_import(args: argparse.Namespace) -> int:
    from studytui.exports import import_format_for

    fmt = import_format_for(args.path, args.path != "-" and _is_folder(args.path))
    loaded = fmt.load(args.path)  # read and checked before the store is opened
    guide, store = _open(args)
    with store:
        imported = fmt.merge(loaded, guide, store)
    from studytui.cli.output import one_line

    for warning in imported.warnings:
        sys.stderr.write(f"studytui: warning: {one_line(warning)}\n")
    if args.json:
        from studytui.cli.output import print_json

        print_json(imported.report.to_dict())
        return 0
    from studytui.cli.output import clauses, quoted, write_wrapped

    # Filled to the terminal's width at word boundaries, continued under the text.
    for part in imported.paragraphs:
        keep = [*part.keep, *(clauses(part.text) if part.clauses else ()), *(quoted(part.text) if part.quoted else ())]
        write_wrapped(part.text, rest="  ", keep=keep)
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
    from rich.text import Text

    from studytui.cli.output import Column, console, print_table

    # Every column but the text keeps its width (the full time, the N that --show takes); the
    # text gives way, on one line with an ellipsis.
    columns = [Column("N", justify="right", no_wrap=True, min_width=1), Column("saved (UTC)", no_wrap=True, min_width=19),
               Column("chars", justify="right", no_wrap=True), Column("text", min_width=8),
               Column("", style="dim", no_wrap=True)]
    table = []
    for v in versions:
        when = (v.at or "unknown time")[:19].replace("T", " ")
        # The text flattened onto one line (line breaks as ⏎), cut with an ellipsis where it is long.
        first = " ⏎ ".join(line.strip() for line in v.text[:400].splitlines() if line.strip())
        marks = ", ".join(filter(None, (f"restores {v.restored_from}" if v.restored_from else "", "current" if v.current else "")))
        table.append([str(v.number), when, str(len(v.text)), Text(visible(first[:200]), no_wrap=True, overflow="ellipsis"), marks])
    con = console()
    con.print(Text(f"Versions of the note on {visible(entry_id)}, oldest first:", style="bold"), soft_wrap=True)
    print_table(con, columns, table)
    # The commands whole (the terminal folds one that is too long), so they can be copied.
    con.print(Text(f"See one: studytui history {visible(entry_id)} --show N", style="dim"), soft_wrap=True)
    con.print(Text(f"Restore: studytui history {visible(entry_id)} --restore N", style="dim"), soft_wrap=True)
    return 0
