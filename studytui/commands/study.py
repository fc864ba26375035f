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

from studytui.errors import StudyError, UsageError

STATE_NAMES = ("pending", "learning", "done", "skipped")  # the store's STATES, without importing it


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "next", help="the next entry to study",
        description="Show the first entry after the one you viewed last that is still pending (in guide "
        "order, wrapping to the start; a fresh start begins with Start here) and remember it as viewed.",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output (the entry object, or null)")
    p.set_defaults(func=cmd_next)

    p = sub.add_parser("mark", help="set an entry's state", description="Set an entry's state.")
    p.add_argument("id", help="entry id (old ids listed as aliases work too)")
    p.add_argument("state", metavar="STATE", help=f"one of {', '.join(STATE_NAMES)}")
    p.set_defaults(func=cmd_mark)

    p = sub.add_parser(
        "note", help="print or change an entry's note",
        description="With no option, print the note verbatim. --text replaces it, --append adds to it "
        "(on a new line), --edit opens $VISUAL/$EDITOR, '-' reads the new note from stdin. "
        "Every saved version stays in the event log.",
    )
    p.add_argument("id", help="entry id")
    p.add_argument("stdin", nargs="?", metavar="-", help="read the new note from standard input")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--text", metavar="TEXT", help="replace the note with TEXT")
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
        "a readable study journal of all notes by section. PATH '-' writes to standard output.",
    )
    p.add_argument("path", metavar="PATH", help="file to write (replaced atomically)")
    p.add_argument("--format", choices=("json", "md"), help="default: md for *.md files, json otherwise")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "import", help="merge a JSON export",
        description="Merge a JSON export into your progress: per entry the newer change wins, conflicting "
        "notes are both kept with a marker line, entries no longer in the guide are kept as orphans.",
    )
    p.add_argument("path", metavar="PATH", help="a file written by 'studytui export' ('-' for stdin)")
    p.add_argument("--json", action="store_true", help="machine-readable report")
    p.set_defaults(func=cmd_import)


# -- shared helpers -------------------------------------------------------------------------


def _open(args: argparse.Namespace):
    """(guide, store), with progress under renamed entries' old ids moved onto the new ids."""
    from studytui.guide import load_guide
    from studytui.store import open_store
    from studytui.study import alias_map

    guide = load_guide(args.content)
    store = open_store(args.data_dir)
    try:
        store.follow_aliases(alias_map(guide))
    except BaseException:
        store.close()
        raise
    return guide, store


def _out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _out_verbatim(text: str) -> None:
    """The learner's own text, byte for byte as UTF-8: no markup, no newline or locale translation."""
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


def _entry_text(entry: Any):  # -> rich.text.Text
    from rich.style import Style
    from rich.text import Text

    text = Text()
    text.append(entry.title, style="bold")
    text.append(f"\n{entry.id}", style="cyan")
    where = entry.section_title + (f" › {entry.subsection_title}" if entry.subsection_title else "")
    text.append(f"  ·  {where}", style="dim")
    if entry.kind:
        text.append(f"  ·  {entry.kind}", style="dim")
    if entry.url:
        text.append("\n")
        text.append(entry.url, style=Style(link=entry.url))  # OSC 8 where the terminal allows
    elif entry.no_url_reason:
        text.append(f"\nNo primary link yet: {entry.no_url_reason}", style="italic")
    if entry.summary:
        text.append(f"\n\n{entry.summary}")
    return text


# -- commands -------------------------------------------------------------------------------


def cmd_next(args: argparse.Namespace) -> int:
    from studytui.study import next_entry, progress_summary

    guide, store = _open(args)
    with store:
        states = store.states()
        entry = next_entry(guide, states, store.last_viewed())
        if entry is not None:
            store.set_last_viewed(entry.id)
    if args.json:
        from studytui.output import print_json

        print_json(None if entry is None else {**entry.to_dict(), "state": "pending"})
        return 0
    from studytui.output import console

    if entry is None:
        s = progress_summary(guide, states)
        _out(
            f"Nothing pending: {s.done} done, {s.skipped} skipped, {s.learning} still learning "
            f"of {s.total} entries. See 'studytui progress'.\n"
        )
        return 0
    console().print(_entry_text(entry))
    console().print(f"\nWhen you are done: studytui mark {entry.id} done   (or learning, skipped)", style="dim", markup=False)
    return 0


def cmd_mark(args: argparse.Namespace) -> int:
    from studytui.store.model import check_state
    from studytui.study import resolve_entry

    state = check_state(args.state)
    guide, store = _open(args)
    with store:
        entry = resolve_entry(guide, args.id)
        before = store.progress(entry.id).state
        store.set_state(entry.id, state)
    same = " (unchanged)" if before == state else f" (was {before})"
    _out(f"{entry.id}: {state}{same}\n")
    return 0


def _read_stdin() -> str:
    stream = sys.stdin
    if stream is None:
        raise UsageError("no standard input to read the note from")
    if stream.isatty():
        sys.stderr.write("Reading the note from standard input; end it with Ctrl-D.\n")
    raw = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode("utf-8")
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
    try:
        return path.read_bytes().decode("utf-8"), path
    except UnicodeDecodeError:
        raise StudyError(f"the edited note is not valid UTF-8; nothing saved, your text is kept in {path}") from None


def cmd_note(args: argparse.Namespace) -> int:
    from studytui.study import resolve_entry, unknown_entry_message

    if args.stdin is not None and args.stdin != "-":
        raise UsageError(f"unexpected argument {args.stdin!r} (use '-' to read the note from stdin, or --text)")
    writing = args.stdin == "-" or args.text is not None or args.append is not None or args.edit
    if args.stdin == "-" and (args.text is not None or args.append is not None or args.edit):
        raise UsageError("'-' cannot be combined with --text, --append or --edit")
    guide, store = _open(args)
    with store:
        entry = guide.get(args.id)
        if not writing:
            if entry is None:
                # An orphan's note can still be read: that is how a learner gets it back.
                if args.id not in store.states():
                    raise UsageError(unknown_entry_message(guide, args.id))
                note = store.get_note(args.id)
            else:
                note = store.get_note(entry.id)
            _out_verbatim(note)
            if sys.stdout.isatty():
                if not note:
                    sys.stderr.write(f"(no note for '{args.id}' yet; add one with: studytui note {args.id} --edit)\n")
                elif not note.endswith("\n"):
                    _out("\n")
            return 0
        entry = resolve_entry(guide, args.id)
        if args.text is not None:
            store.set_note(entry.id, args.text)
        elif args.append is not None:
            store.append_note(entry.id, args.append)
        elif args.stdin == "-":
            store.set_note(entry.id, _read_stdin())
        else:
            old = store.get_note(entry.id)
            new, temp = _edit_text(old, entry.id)
            if new == old:
                temp.unlink(missing_ok=True)
                _out(f"{entry.id}: note unchanged\n")
                return 0
            try:
                store.set_note(entry.id, new)
            except StudyError as exc:
                raise StudyError(f"{exc} - your edited text is kept in {temp}") from None
            temp.unlink(missing_ok=True)
        chars = len(store.get_note(entry.id))
    _out(f"{entry.id}: note saved ({chars} characters)\n")
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
    bar.append("█" * cells["skipped"], style="blue")
    bar.append("▒" * cells["learning"], style="yellow")
    bar.append("·" * max(0, width - sum(cells.values())), style="dim")
    return bar


def cmd_progress(args: argparse.Namespace) -> int:
    from studytui.study import progress_summary

    from studytui.commands.practice import print_progress_practice, progress_practice

    guide, store = _open(args)
    with store:
        summary = progress_summary(guide, store.states())
        practice = progress_practice(guide, store)
    if args.json:
        from studytui.output import print_json

        print_json({**summary.to_dict(), "practice": practice})
        return 0
    from rich.table import Table
    from rich.text import Text

    from studytui.output import console

    con = console()
    # The numbers and bars keep their width; long section titles give way (ellipsis).
    fixed = 16 + 4 + sum(len(n) for n in ("done", "skipped", "learning", "pending", "total")) + 7
    table = Table(box=None, header_style="bold", pad_edge=False, collapse_padding=True)
    table.add_column("section", no_wrap=True, overflow="ellipsis", max_width=max(12, con.width - fixed))
    table.add_column("covered", no_wrap=True, min_width=16)
    table.add_column("%", justify="right", no_wrap=True, min_width=4)
    for name in ("done", "skipped", "learning", "pending", "total"):
        table.add_column(name, justify="right", no_wrap=True, min_width=len(name))
    rows = [(Text(s.title), s.counts) for s in summary.sections]
    rows.append((Text("All", style="bold"), summary.overall))
    for i, (title, c) in enumerate(rows):
        if i == len(rows) - 1:
            table.add_section()
        table.add_row(
            title, _bar(c), f"{100 * c.covered:.0f}%",
            str(c.done), str(c.skipped), str(c.learning), str(c.pending), str(c.total),
        )
    con.print(table)
    con.print(Text("█ done  ", style="green") + Text("█ skipped  ", style="blue") + Text("▒ learning  ", style="yellow") + Text("· pending", style="dim"))
    if summary.orphans:
        con.print(Text(f"\nKept for {len(summary.orphans)} entr{'y' if len(summary.orphans) == 1 else 'ies'} no longer in the guide (orphans; exported with everything else):", style="bold"))
        for o in summary.orphans:
            note = f", note of {len(o.note)} characters" if o.note else ""
            con.print(Text(f"  {o.entry_id} ({o.state}{note})"))
    print_progress_practice(practice)
    return 0


def _write_atomically(path: Path, data: bytes) -> None:
    """Temp file in the same directory, fsync, rename over: a crash leaves the old file or the new."""
    import tempfile

    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise UsageError(f"cannot write {path}: directory {directory} does not exist")
    if path.is_dir():
        raise UsageError(f"cannot write {path}: it is a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise
    try:  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def journal_markdown(guide: Any, states: dict, section_notes: dict[str, str], exported_at: str) -> str:
    """The study journal: every note, by section in guide order, then orphaned notes."""
    from studytui.study import canonical_states, progress_summary

    current, orphans = canonical_states(guide, states)
    s = progress_summary(guide, states)
    lines = [
        f"# Study journal: {guide.title}",
        "",
        f"Exported {exported_at}. {s.done + s.skipped} of {s.total} entries covered "
        f"({s.done} done, {s.skipped} skipped), {s.learning} being learned.",
    ]
    for section in guide.sections:
        noted = [e for e in section.entries if current.get(e.id) and current[e.id].note]
        section_note = section_notes.get(section.id, "")
        if not noted and not section_note:
            continue
        lines += ["", f"## {section.title}", ""]
        if section_note:
            lines += [section_note.rstrip("\n"), ""]
        for e in noted:
            p = current[e.id]
            lines += [f"### {e.title}", "", f"`{e.id}` · {p.state}" + (f" · <{e.url}>" if e.url else ""), ""]
            lines += [p.note.rstrip("\n"), ""]
    orphan_notes = [o for o in orphans.values() if o.note]
    if orphan_notes:
        lines += ["", "## Notes on entries no longer in the guide", ""]
        for o in orphan_notes:
            lines += [f"### `{o.entry_id}` ({o.state})", "", o.note.rstrip("\n"), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def cmd_export(args: argparse.Namespace) -> int:
    import json

    fmt = args.format or ("md" if args.path.lower().endswith((".md", ".markdown")) else "json")
    guide, store = _open(args)
    with store:
        data = store.export_json()
        if fmt == "md":
            text = journal_markdown(guide, store.states(), store.section_notes(), data["exported_at"])
        else:
            text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    payload = text.encode("utf-8")
    if args.path == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(payload)
        sys.stdout.flush()
        return 0
    path = Path(args.path).expanduser()
    _write_atomically(path, payload)
    n_notes = sum(1 for e in data["entries"] if e["note"])
    sys.stderr.write(
        f"Wrote {path} ({fmt}: {len(data['entries'])} entries, {n_notes} notes, {len(data['events'])} events)\n"
    )
    return 0


def _read_export(path_arg: str) -> tuple[Any, str]:
    import json

    if path_arg == "-":
        raw, name = sys.stdin.buffer.read(), "stdin"
    else:
        path = Path(path_arg).expanduser()
        name = path.name
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}; nothing was changed") from None
    try:
        return json.loads(raw.decode("utf-8")), name
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path_arg} is not a JSON export ({str(exc).splitlines()[0]}); nothing was changed") from None


def cmd_import(args: argparse.Namespace) -> int:
    from studytui.study import alias_map

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
        from studytui.output import print_json

        print_json(report.to_dict())
        return 0
    _out(
        f"Imported {name}: {report.entries_added} entries added, {report.states_updated} states and "
        f"{report.notes_updated} notes updated, {report.events_added} events added, "
        f"{report.attempts_added} practice attempts added.\n"
    )
    if report.notes_conflicted:
        _out(
            f"Both versions kept (marked with a '--- studytui: conflicting note' line) for: "
            f"{', '.join(report.notes_conflicted)}\n"
        )
    if report.orphans:
        _out(f"Kept as orphans (not in this guide): {', '.join(report.orphans)}\n")
    return 0
