"""The Markdown study journal: `studytui export FILE.md` (`--format md`).

Every note, by section in guide order (a section's own note first), then the notes on entries
no longer in the guide. A note's own headings are moved below the journal's. Not read back:
the JSON backup is the format that round-trips.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from studytui.core.text import plural
from studytui.exports.report import Exported


def demote_headings(text: str, level: int) -> str:
    """A note's own Markdown headings moved below the journal's: the note's highest heading
    becomes `level` (at most 6), the others keep their relative depth. Code blocks are left alone;
    underlined (setext) headings become `#` headings."""
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


def journal_markdown(guide: Any, states: Mapping[str, Any], section_notes: Mapping[str, str], exported_at: str) -> str:
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


def export(path: Path | None, guide: Any, store: Any) -> Exported:
    """The journal written to `path`, or (None) for standard output: there the learners' text is
    shown visibly at a terminal and goes verbatim into a pipe."""
    from studytui.core.text import for_terminal
    from studytui.exports.backup import deliver, snapshot
    from studytui.store import EntryProgress

    data, damaged = snapshot(store)
    states = {e["entry_id"]: EntryProgress(**e) for e in data["entries"]}
    sections = {s["section_id"]: s["note"] for s in data["section_notes"]}
    text = journal_markdown(guide, states, sections, data["exported_at"])
    return deliver(path, text, data, damaged, payload=for_terminal(text) if path is None else None)
