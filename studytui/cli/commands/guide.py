"""Read-only commands over the guide: list, show, search, open, where, check."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from studytui.core.errors import UsageError

COMMANDS = ("list", "show", "search", "open", "where", "check")


def register(sub: argparse._SubParsersAction, named: frozenset[str] | None = None) -> None:
    from studytui.cli.parsing import only_named

    sub = only_named(sub, named, COMMANDS)  # only the command that runs is built in full
    p = sub.add_parser("list", help="entries in guide order", description="List the guide's entries in order.")
    p.add_argument("--section", metavar="S", help="only this section: id, number such as 2 (0 for Start here), or title words")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="one entry in full", description="Show one entry in full.")
    p.add_argument("id", help="entry id (see 'studytui list')")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "search", help="jump to entries by keyword",
        description="Ranked keyword search over titles, sections, tags, authors, summaries and your notes. "
        "Every word must match. Case, punctuation and hyphens do not matter ('stream k', 'Stream-K', 'streamk' "
        "are one query); a short word is read joined to its neighbour; a word the guide does not contain is "
        "corrected to the closest one it does ('stremk', 'flashattn').",
    )
    p.add_argument("query", nargs="+", help="words to look for")
    p.add_argument("--json", action="store_true", help="machine-readable output (the same objects as 'list --json', best first)")
    p.add_argument("--limit", type=_positive_int, default=10, metavar="N", help="at most N results (default 10)")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser(
        "open", help="open an entry's source in the browser",
        description="Open the entry's source URL in your browser when one can be used here; over SSH or "
        "without a display, print it as a clickable terminal link and as plain text instead.",
    )
    p.add_argument("id", help="entry id")
    p.set_defaults(func=cmd_open)

    p = sub.add_parser(
        "where", help="print the content and data directories in use",
        description="Print the content and data directories in use. In a source checkout the data directory "
        "defaults to progress/ inside the clone: 'where' then warns that deleting the clone or 'git clean -fdX' "
        "deletes your notes, and how to keep them elsewhere or back them up.",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_where)

    p = sub.add_parser(
        "check", help="apply the source policy to the content",
        description="Check the content against the guide's source policy: admitted kinds with https URLs, "
        "unique ids, no URL twice in a subsection, dated Frontier entries, watchlist items without a URL "
        "marked as such, every performance claim carrying hardware, workload, precision, baseline, correctness "
        "method, software versions and algorithm, 'placement: inferred' on every entry dated after the pinned "
        "README, and roles that agree with the policy text (a core entry is of a core kind; every role is "
        "described). Exit 0 when clean, 1 listing every problem as FILE:LINE: message.",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_check)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _guide(args: argparse.Namespace):
    from studytui.guide import load_guide

    return load_guide(args.content)


def _entry(guide, entry_id: str):
    from studytui.study.flow import resolve_entry

    return resolve_entry(guide, entry_id)


def cmd_list(args: argparse.Namespace) -> int:
    guide = _guide(args)
    entries = guide.entries
    if args.section:
        entries = guide.resolve_section(args.section).entries  # the forms `practice SECTION` takes
    progress = _progress(args, guide)

    def state_of(entry_id: str) -> str:
        p = progress.get(entry_id)
        return p.state if p is not None else "pending"

    def has_note(entry_id: str) -> bool:
        p = progress.get(entry_id)
        return bool(p is not None and p.note)

    if args.json:
        from studytui.cli.output import print_json

        print_json([{**e.to_dict(), "state": state_of(e.id), "has_note": has_note(e.id)} for e in entries])
        return 0
    from rich.text import Text

    from studytui.cli.output import console

    con = console()
    notes = sum(has_note(e.id) for e in entries)
    rows = [(e, f"{STATE_GLYPHS.get(state_of(e.id), '?')} {state_of(e.id)}", has_note(e.id)) for e in entries]
    id_width = max([2] + [len(e.id) for e in entries])
    kind_width = max([4] + [len(e.kind or "-") for e in entries])
    # state (10) + ✎ (1) + id, two cells between columns: a table only while the title keeps
    # LIST_TITLE_WIDTH cells (the kind only where there is room for it too); else two-line records.
    table_title = con.width - (10 + 2 + 1 + 2 + id_width + 2)
    if table_title >= LIST_TITLE_WIDTH:
        _list_table(con, rows, wide=table_title - kind_width - 2 >= LIST_TITLE_WIDTH)
    else:
        _list_records(con, rows)
    count = len(entries)
    tail = f"; {notes} with a note (✎)" if notes else ""
    # Text, never a str: a str goes through Rich's emoji codes (a module of its own to import).
    con.print(Text(f"{count} entr{'y' if count == 1 else 'ies'}{tail}", style="dim"))
    return 0


# The narrowest title column `list` shows as a table; below it, each entry is two lines.
LIST_TITLE_WIDTH = 40


def _list_table(con: Any, rows: list, wide: bool) -> None:
    from rich.text import Text

    from studytui.cli.output import Column, print_table

    columns = [Column("state", no_wrap=True), Column("✎", no_wrap=True), Column("id", style="cyan", no_wrap=True)]
    if wide:
        columns.append(Column("kind", no_wrap=True))
    columns.append(Column("title"))
    table = []
    current = None
    for e, state, noted in rows:
        if e.section_id != current:
            current = e.section_id
            table.append(["", "", "", *([""] if wide else []), Text(e.section_title, style="bold underline")])
        kind = [e.kind or "-"] if wide else []
        table.append([state, "✎" if noted else "", e.id, *kind, e.title])  # (a str: plain text, cheaper than a Text)
    print_table(con, columns, table)


def _list_records(con: Any, rows: list) -> None:
    """Two lines an entry: state (and ✎ for a note) and the title (wrapping under itself), then the
    id under the title. For terminals too narrow for a table with a readable title column (80 columns)."""
    from rich.text import Text

    from studytui.cli.output import Column, print_table

    columns = [Column("state", no_wrap=True, min_width=11), Column("entry")]
    current = None
    table: list[list[Any]] = []
    for e, state, noted in rows:
        if e.section_id != current:
            if table:
                print_table(con, columns, table, show_header=False)
            current = e.section_id
            con.print(Text(e.section_title, style="bold underline"))
            table = []
        entry = Text(e.title)
        entry.append("\n")
        entry.append(e.id, style="cyan")
        table.append([state + (" ✎" if noted else ""), entry])
    if table:
        print_table(con, columns, table, show_header=False)


def _entry_markdown(e) -> str:
    lines = [f"# {e.title}", ""]
    meta = [f"**{e.kind or 'watchlist'}**"]
    if e.authors:
        meta.append(", ".join(e.authors))
    if e.year:
        meta.append(str(e.year))
    lines += [" · ".join(meta), "", e.summary, ""]
    lines.append(f"*Section:* {e.section_title}" + (f" / {e.subsection_title}" if e.subsection_title else ""))
    if e.tags:
        lines.append(f"*Tags:* {', '.join(e.tags)}")
    if e.date:
        lines.append(f"*{e.date_line}.*")  # the same words as the app's detail pane (Entry.date_label)
    if e.placement == "inferred":
        lines.append("*Placement:* inferred (placed from the update notes; position not confirmed)")
    if not e.url:
        lines.append(f"*Source:* none yet ({e.no_url_reason})")
    # The URLs are printed after the Markdown, unbroken (see _print_urls).
    return "\n\n".join(line for line in lines if line is not None)


# The inline emphasis `_entry_markdown` writes: **strong** and *emphasis*, delimiters flanking text.
_EMPHASIS = None


def _markdown_blocks(markdown: str) -> list[Any]:
    """`_entry_markdown`'s Markdown as Rich Text, drawn as rich.markdown draws it: a `# ` heading
    centred in the markdown.h1 style, then paragraphs (**strong**, *emphasis*), a blank line
    between blocks. Importing rich.markdown (markdown-it, Pygments) cost `show` more than all the
    rest of the command (issue 27); the Markdown here is only ever this small subset of ours."""
    import re

    from rich.text import Text

    global _EMPHASIS
    if _EMPHASIS is None:
        _EMPHASIS = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|\*(?=[^\s*])(.+?)(?<=[^\s*])\*")
    blocks: list[Any] = []
    for block in markdown.split("\n\n"):
        if not block.strip():
            continue
        if block.startswith("# "):
            heading = Text(justify="center")
            heading.append(block[2:].strip(), style="markdown.h1")  # the words styled, not the padding
            blocks.append(heading)
            continue
        text = Text(justify="left")
        at = 0
        for m in _EMPHASIS.finditer(block):
            text.append(block[at:m.start()])
            if m.group(1) is not None:
                text.append(m.group(1), style="markdown.strong")
            else:
                text.append(m.group(2), style="markdown.em")
            at = m.end()
        text.append(block[at:])
        blocks.append(text)
    return blocks


class _Blocks:
    """Blocks drawn one under the other with a blank line between, the way rich.markdown.Markdown
    yields its elements (so the output is the same, padding included)."""

    def __init__(self, blocks: list[Any]) -> None:
        self.blocks = blocks

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.segment import Segment

        for i, block in enumerate(self.blocks):
            if i:
                yield Segment("\n")
            yield from console.render(block, options)


def _print_markdown(con: Any, markdown: str) -> None:
    con.print(_Blocks(_markdown_blocks(markdown)))


def _print_urls(con: Any, e) -> None:
    """The source and related URLs, each whole on one line (output.print_url): Markdown would
    wrap a long URL at the terminal's width, and a copied URL with a line break in it does not
    work."""
    from studytui.cli.output import print_url

    for label, url in ([("Source:", e.url)] if e.url else []) + [("Related:", u) for u in e.related_urls]:
        con.print()
        print_url(label, url, con=con)


def cmd_show(args: argparse.Namespace) -> int:
    guide = _guide(args)
    e = _entry(guide, args.id)
    progress = _progress(args, guide).get(e.id)
    state = progress.state if progress is not None else "pending"
    opened = progress.last_opened_at if progress is not None else None
    note = progress.note if progress is not None else ""
    if args.json:
        from studytui.cli.output import print_json

        data = e.to_dict()
        data.update(related_urls=list(e.related_urls), also_names=list(e.also_names), no_url_reason=e.no_url_reason)
        data.update(state=state, last_opened_at=opened, note=note)
        print_json(data)
        return 0
    from rich.text import Text

    from studytui.cli.output import LinePrinter, console, for_terminal

    with LinePrinter(console()) as con:  # the short lines printed together
        _print_markdown(con, _entry_markdown(e))
        _print_urls(con, e)
        changed = progress.state_changed_at if progress is not None and state != "pending" else None
        since = f" (since {_when(changed)})" if changed else ""
        con.print()
        _status_line(con, "State:", f"{STATE_GLYPHS.get(state, '?')} {state}{since}")
        _status_line(con, "Last opened:", _when(opened) if opened else f"never (you have not opened the source yet: studytui open {e.id})")
        if note:
            _status_line(con, "Note:", f"{len(note):,} character{'s' if len(note) != 1 else ''} (studytui note {e.id} prints it as stored)")
            con.print()
            # The learner's text: never markup, never escape sequences; ended by one line break, its
            # own or the one print adds (so the prompt starts on a line of its own, after no blank one).
            con.print(Text(for_terminal(note.rstrip("\n"))))
        else:
            _status_line(con, "Note:", f"none yet (studytui note {e.id} --text ... adds one)")
    return 0


def _status_line(con: Any, label: str, value: str) -> None:
    """A bold label and its value filled to the width under it, the commands in it whole."""
    from rich.text import Text

    from studytui.cli.output import visible, wrap_words

    lines = wrap_words(visible(value), con.width, label + " ", "  ", keep=_commands(value))
    for i, line in enumerate(lines):
        text = Text(line[: len(label)], style="bold") + Text(line[len(label):]) if i == 0 else Text(line)
        con.print(text, soft_wrap=True)


# The app's glyphs (studytui/tui/format.py; a test keeps them equal): state by glyph and word,
# never by colour alone.
STATE_GLYPHS = {"pending": "○", "learning": "◐", "done": "●", "skipped": "⊘"}


def _progress(args: argparse.Namespace, guide) -> dict[str, Any]:
    """Stored progress by current entry id ({} before anything was ever stored)."""
    from studytui.study.flow import canonical_states
    from studytui.study.workspace import open_existing_workspace

    _guide, store = open_existing_workspace(data_dir=args.data_dir, guide=guide)
    if store is None:
        return {}
    with store:
        return canonical_states(guide, store.states())[0]


def _when(stamp: str | None) -> str:
    """A stored UTC time as the learner's local date and time, to the minute."""
    from datetime import datetime

    if not stamp:
        return ""
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp


def _note_texts(args: argparse.Namespace, guide) -> dict[str, str]:
    """The learner's notes, so search finds words in them too. No store yet means no notes."""
    from studytui.study.workspace import open_existing_workspace

    _guide, store = open_existing_workspace(data_dir=args.data_dir, guide=guide)
    if store is None:
        return {}
    with store:
        return {k: p.note for k, p in store.states().items() if p.note}


def cmd_search(args: argparse.Namespace) -> int:
    from studytui.guide.search import SearchIndex

    guide = _guide(args)
    query = " ".join(args.query)
    if not query.strip():
        raise UsageError("search needs at least one word")
    every = SearchIndex(guide.entries).search(query, note_texts=_note_texts(args, guide))
    hits = every[: args.limit]
    if args.json:
        from studytui.cli.output import print_json

        out: list[dict[str, Any]] = []
        for h in hits:
            d = h.entry.to_dict()
            d.update(score=h.score, matched=list(h.fields))
            out.append(d)
        print_json(out)
        return 0
    from rich.text import Text

    from studytui.cli.output import Column, console, print_table

    if not hits:
        # The query is the learner's text, never Rich markup ('[/]' would crash); repr() shows
        # control characters escaped.
        console().print(Text(f"No entries match {query!r}."))
        return 0
    con = console()
    # As `list` does: a table only while its title column keeps LIST_TITLE_WIDTH cells (or the
    # longest title) beside the id, "matched in" and a section column of SEARCH_SECTION_WIDTH;
    # else two-line records, the title first.
    id_width = max(2, *(len(h.entry.id) for h in hits))
    matched_width = max(10, *(len(h.matched) for h in hits))
    title_width = max(len(h.entry.title) for h in hits)
    room = con.width - (id_width + 2 + matched_width + 2 + 2) - SEARCH_SECTION_WIDTH
    if room >= min(title_width, LIST_TITLE_WIDTH):
        title_column = min(title_width, room)
        section_column = min(max(len(h.entry.section_title) for h in hits), room + SEARCH_SECTION_WIDTH - title_column)
        columns = [Column("id", style="cyan", no_wrap=True, width=id_width), Column("title", width=title_column),
                   Column("section", style="dim", width=section_column),
                   Column("matched in", style="dim", no_wrap=True, width=matched_width)]
        print_table(con, columns, [[h.entry.id, Text(h.entry.title), Text(h.entry.section_title), h.matched] for h in hits])
    else:
        _search_records(con, hits)
    if len(every) > len(hits):
        con.print(Text(f"{len(hits)} of {len(every)} matching entries; --limit {len(every)} shows all.", style="dim"))
    return 0


# The narrowest section column `search` shows as a table ("2. Kernel optimization" on one line).
SEARCH_SECTION_WIDTH = 22


def _search_records(con: Any, hits: list) -> None:
    """Two lines a hit, the layout `list` uses at 80 columns (_list_records): the rank, the title
    (wrapping under itself), then under the title the id, the section and where the words matched."""
    from rich.text import Text

    from studytui.cli.output import Column, print_table

    table = []
    for rank, h in enumerate(hits, 1):
        entry = Text(h.entry.title)
        entry.append("\n")
        entry.append(h.entry.id, style="cyan")
        entry.append(f"  {h.entry.section_title} · matched in {h.matched}", style="dim")
        table.append([f"{rank}.", entry])
    print_table(con, [Column("rank", no_wrap=True, justify="right", style="dim"), Column("entry")], table, show_header=False)


def cmd_open(args: argparse.Namespace) -> int:
    import sys

    from studytui.core.handoff import browser_available, check_link, osc8_link

    guide = _guide(args)
    e = _entry(guide, args.id)
    if not e.url:
        raise UsageError(f"'{e.id}' has no source URL yet ({e.no_url_reason})")
    link = check_link(e.url)  # the one hand-off policy, as in the app
    if not link.allowed:
        raise UsageError(f"'{e.id}': not opening its URL: {link.reason}")
    url = link.url
    usable, reason = browser_available()
    if usable:
        import webbrowser

        if webbrowser.open(url):
            sys.stdout.write(f"Opened {url}\n")
            _mark_opened(args, guide, e.id)
            return 0
        reason = "no browser could be started"
    # No browser: a link the terminal can make clickable, then the plain URL to copy.
    if sys.stdout.isatty():
        sys.stdout.write(osc8_link(url, e.title) + "\n")
    sys.stdout.write(url + "\n")
    sys.stderr.write(f"studytui: not opening a browser: {reason}\n")
    _mark_opened(args, guide, e.id)
    return 0


def _mark_opened(args: argparse.Namespace, guide, entry_id: str) -> None:
    """Record the hand-off in the store (opening the source starts learning a pending entry;
    the session's rule, shared with the app: a state stored elsewhere is never lowered)."""
    from studytui.study.session import StudySession
    from studytui.study.workspace import open_workspace

    _guide, store = open_workspace(data_dir=args.data_dir, guide=guide)
    try:
        if store.read_only:  # the source was still handed off; only the record is skipped
            sys.stderr.write(f"(data directory is read-only: not recorded as opened; {store.read_only_reason})\n")
            return
        StudySession(guide, store).mark_opened(entry_id)
    finally:
        store.close()


def cmd_where(args: argparse.Namespace) -> int:
    from studytui.core.paths import (
        BACKUP_HINT,
        CHECKOUT_WARNING,
        content_dir,
        data_dir,
        exposure_warning,
        inside_checkout,
        is_source_checkout,
    )

    content, data = content_dir(args.content), data_dir(args.data_dir)
    in_checkout = inside_checkout(data)
    exposed = exposure_warning(data)
    if args.json:
        from studytui.cli.output import print_json

        print_json({"content_dir": str(content), "data_dir": str(data), "database": str(data / "studytui.db"),
                    "source_checkout": is_source_checkout(), "data_dir_in_checkout": in_checkout,
                    "data_dir_warning": CHECKOUT_WARNING if in_checkout else None,
                    "permissions_warning": exposed})
        return 0
    import sys

    from studytui.cli.output import for_terminal, quoted, write_wrapped

    # The paths whole on their lines (a terminal folds one that is too long; copying gives it whole).
    sys.stdout.write(for_terminal(f"content: {content}\ndata:    {data}\n"))
    # The warnings filled to the terminal's width at word boundaries, under the text after the
    # label; commands (`git clean -fdX`, studytui export FILE.json) and paths whole on one line.
    if in_checkout:
        write_wrapped(f"warning: {CHECKOUT_WARNING}", rest=" " * 9, keep=quoted(CHECKOUT_WARNING))
        write_wrapped(BACKUP_HINT, rest=" " * 9, keep=_commands(BACKUP_HINT))
    if exposed:
        write_wrapped(f"warning: {exposed}", rest=" " * 9, keep=_commands(exposed))
    return 0


def _commands(text: str) -> list[str]:
    """The commands in a message (`studytui ...`, `chmod ...`, up to a parenthesis, a semicolon
    or '&&'), for `keep`: each stays whole on one line where it fits."""
    import re

    return [c.strip() for c in re.findall(r"(?:studytui|chmod) [^();,&]*[^();,&\s]", text)]


def cmd_check(args: argparse.Namespace) -> int:
    import sys

    from studytui.core.paths import content_dir
    from studytui.study.check import check_content

    report = check_content(content_dir(args.content))
    if args.json:
        from studytui.cli.output import print_json

        print_json({"ok": report.ok, "problems": report.problems, "stats": report.stats()})
        return 0 if report.ok else 1
    for problem in report.problems:
        sys.stdout.write(problem + "\n")
    if report.ok:
        s = report.stats()
        sys.stdout.write(
            f"ok: {s['entries']} entries in {s['sections']} sections ({s['primary']} primary sources, "
            f"{s['secondary']} books, courses or blogs, {s['watchlist_without_url']} watchlist items without a link), "
            f"{s['glossary_terms']} glossary terms\n"
        )
        return 0
    from studytui.cli.output import plural

    sys.stdout.write(f"{plural(len(report.problems), 'problem')}\n")
    return 1
