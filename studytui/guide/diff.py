"""`studytui guide diff`: what a newer copy of the guide's README changes against shipped content.

Entries are matched by URL first (within the same subsection, then anywhere), then by title.
Each difference is reported once, with a kind, the README line and the content FILE:LINE:

  section-added, section-removed, section-renamed, subsection-added, subsection-removed,
  subsection-renamed, entry-added, entry-removed, entry-moved, entry-retitled, url-changed,
  watchlist-added, watchlist-removed, frontier-verified.

A watchlist item that comes or goes is reported as a watchlist change, not also as an entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, TypeVar

from studytui.guide.model import Entry, Guide, Section, Subsection
from studytui.guide.readme import Readme, ReadmeEntry, ReadmeSection, ReadmeSubsection

FRONTIER_ID = "frontier"
# How many shared URLs make a file recognisably a copy of this guide (older layouts share dozens).
MIN_SHARED_URLS = 3

_T = TypeVar("_T")


@dataclass
class Difference:
    kind: str
    message: str
    readme_line: int
    content: str  # FILE:LINE
    entry_id: str | None = None
    title: str | None = None
    url: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "message": self.message, "readme_line": self.readme_line,
            "content": self.content, "entry_id": self.entry_id, "title": self.title, "url": self.url,
            **({"details": self.details} if self.details else {}),
        }


@dataclass
class LearnerImpact:
    entry_id: str
    title: str
    state: str
    has_note: bool
    kinds: list[str]
    outcome: str

    def to_dict(self) -> dict[str, Any]:
        return {"entry_id": self.entry_id, "title": self.title, "state": self.state, "has_note": self.has_note,
                "changes": self.kinds, "outcome": self.outcome}


@dataclass
class GuideDiff:
    readme: str
    differences: list[Difference]
    added: list[ReadmeEntry]  # entries (and watchlist items) to write stubs for
    added_places: dict[int, tuple[Section | None, Subsection | None, str | None]]  # id(entry) -> where

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for d in self.differences:
            out[d.kind] = out.get(d.kind, 0) + 1
        return out


class NotTheGuide(ValueError):
    """The file parses as Markdown but is not a copy of this guide's README."""


# -- content locations -----------------------------------------------------------------------

class _Lines:
    """FILE:LINE for sections, subsections and entries of the shipped content (read lazily)."""

    def __init__(self, content_dir: str) -> None:
        self.dir = Path(content_dir)
        self._text: dict[str, str] = {}

    def _file_text(self, display: str) -> str:
        if display not in self._text:
            from studytui.core import fileio

            try:
                self._text[display] = fileio.read_text_bounded(display, fileio.YAML_LIMIT, "a content file")
            except (OSError, UnicodeDecodeError, fileio.RefusedFileError):
                self._text[display] = ""
        return self._text[display]

    def _find(self, display: str, pattern: str) -> int:
        text = self._file_text(display)
        m = re.search(pattern, text, re.MULTILINE)
        return text.count("\n", 0, m.start()) + 1 if m else 1

    def _id_line(self, display: str, ident: str) -> int:
        return self._find(display, r"^[ \t]*-[ \t]*id:[ \t]*['\"]?" + re.escape(ident) + r"['\"]?[ \t]*$")

    def entry(self, e: Entry) -> str:
        return f"{e.source_file}:{self._id_line(e.source_file, e.id)}"

    def section(self, s: Section) -> str:
        return f"{s.source_file}:{self._find(s.source_file, r'^title:')}"

    def subsection(self, s: Section, sub: Subsection) -> str:
        return f"{s.source_file}:{self._id_line(s.source_file, sub.id)}"

    def verified(self, s: Section) -> str:
        return f"{s.source_file}:{self._find(s.source_file, r'^verified_on:')}"

    def guide(self) -> str:
        import os

        path = self.dir / "guide.yaml"
        rel = os.path.relpath(path)
        return f"{path.as_posix() if rel.startswith('..') else Path(rel).as_posix()}:1"


def _norm(text: str | None) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", (text or "").lower()).split())


def _norm_url(url: str | None) -> str:
    return (url or "").strip().rstrip("/").lower()


# How a section's entries outside any subsection heading are named in messages.
NO_SUBSECTION = "no subsection heading"


def _named(title: str | None) -> bool:
    """Whether a subsection has a heading (an unnamed one holds a section's entries before its
    first subsection heading, or all of them in a section without any)."""
    return bool(_norm(title))


def _section_title_key(title: str) -> str:
    return _norm(title)


# -- comparison ------------------------------------------------------------------------------

def compare(guide: Guide, readme: Readme) -> GuideDiff:
    """Every difference between the README and the shipped content, each reported once."""
    lines = _Lines(guide.content_dir)
    diffs: list[Difference] = []
    content_urls = {_norm_url(e.url) for e in guide.entries if e.url}
    shared = {_norm_url(e.url) for e in readme.entries if e.url} & content_urls
    if len(shared) < MIN_SHARED_URLS:
        raise NotTheGuide(
            f"{readme.path} does not look like the guide's README: it shares {len(shared)} links with the "
            f"content (at least {MIN_SHARED_URLS} expected)")

    # Sections: exact title, then the unmatched README section sharing most entries -> renamed.
    sec_pairs: dict[int, Section] = {}
    ours = list(guide.sections)
    by_title = {_section_title_key(s.title): s for s in ours}
    # A heading with no entries that is not one of ours frames the list ("How this list works").
    readme = Readme(readme.path, readme.title,
                    [rs for rs in readme.sections if rs.entries or _section_title_key(rs.title) in by_title])
    for i, rs in enumerate(readme.sections):
        s = by_title.get(_section_title_key(rs.title))
        if s is not None and s not in sec_pairs.values():
            sec_pairs[i] = s
    for i, rs in enumerate(readme.sections):
        if i in sec_pairs:
            continue
        free = [s for s in ours if s not in sec_pairs.values()]
        best = _best_overlap({_norm_url(e.url) for e in rs.entries if e.url},
                             [(s, {_norm_url(e.url) for e in s.entries if e.url}) for s in free])
        if best is not None:
            sec_pairs[i] = best
            diffs.append(Difference("section-renamed", f"section renamed: '{best.title}' -> '{rs.title}'",
                                    rs.line, lines.section(best), title=rs.title,
                                    details={"old": best.title, "new": rs.title}))
    for i, rs in enumerate(readme.sections):
        if i not in sec_pairs:
            diffs.append(Difference("section-added", f"section added: '{rs.title}'", rs.line, lines.guide(),
                                    title=rs.title))
    paired_sections = set(id(s) for s in sec_pairs.values())
    for s in ours:
        if id(s) not in paired_sections:
            diffs.append(Difference("section-removed", f"section removed: '{s.title}'", 1, lines.section(s),
                                    title=s.title))

    # Subsections within paired sections. Entries before a section's first subsection heading
    # (or in a section without any) form its unnamed subsection: one only ever pairs with the
    # other side's unnamed one. A heading that went away is one subsection-removed, a heading put
    # over entries that had none one subsection-added, never also a rename to or from no name.
    sub_pairs: dict[int, tuple[Section, Subsection]] = {}  # id(ReadmeSubsection) -> ours
    for i, s in sec_pairs.items():
        rsec = readme.sections[i]
        mine = list(s.subsections)
        taken: set[int] = set()
        for rsub in rsec.subsections:
            match = next((sub for sub in mine if id(sub) not in taken and _norm(sub.title) == _norm(rsub.title)), None)
            if match is not None:
                taken.add(id(match))
                sub_pairs[id(rsub)] = (s, match)
        unheaded = {_norm_url(e.url) for rsub in rsec.subsections if not _named(rsub.title) and id(rsub) not in sub_pairs
                    for e in rsub.entries if e.url}
        for rsub in rsec.subsections:
            if id(rsub) in sub_pairs:
                continue
            if not _named(rsub.title):
                continue  # entries under no heading: they sit in the section (entries are compared below)
            free_subs = [sub for sub in mine if id(sub) not in taken and _named(sub.title)]
            best_sub = _best_overlap({_norm_url(e.url) for e in rsub.entries if e.url},
                                     [(sub, {_norm_url(e.url) for e in sub.entries if e.url}) for sub in free_subs])
            if best_sub is not None:
                taken.add(id(best_sub))
                sub_pairs[id(rsub)] = (s, best_sub)
                diffs.append(Difference(
                    "subsection-renamed", f"subsection renamed in '{s.title}': '{best_sub.title}' -> '{rsub.title}'",
                    rsub.line, lines.subsection(s, best_sub), title=rsub.title,
                    details={"section": s.title, "old": best_sub.title, "new": rsub.title}))
            else:
                had_none = any(not _named(sub.title) and id(sub) not in taken and
                               {_norm_url(e.url) for e in rsub.entries if e.url} & {_norm_url(e.url) for e in sub.entries if e.url}
                               for sub in mine)
                note = f" (a heading over entries that had {NO_SUBSECTION})" if had_none else ""
                diffs.append(Difference("subsection-added", f"subsection added in '{rsec.title}': '{rsub.title}'{note}",
                                        rsub.line, lines.section(s), title=rsub.title, details={"section": s.title}))
        for sub in mine:
            if id(sub) not in taken and _named(sub.title):
                kept = bool({_norm_url(e.url) for e in sub.entries if e.url} & unheaded)
                note = f" (its entries are now under {NO_SUBSECTION})" if kept else ""
                diffs.append(Difference("subsection-removed", f"subsection removed from '{s.title}': '{sub.title}'{note}",
                                        rsec.line, lines.subsection(s, sub), title=sub.title,
                                        details={"section": s.title}))

    # Where a README entry would sit in content: its paired subsection, else its paired section.
    rsub_of: dict[int, ReadmeSubsection] = {}
    rsec_of: dict[int, ReadmeSection] = {}
    for rsec in readme.sections:
        for rsub in rsec.subsections:
            for e in rsub.entries:
                rsub_of[id(e)] = rsub
                rsec_of[id(e)] = rsec
    sec_of_index = {i: s for i, s in sec_pairs.items()}

    def place(e: ReadmeEntry) -> tuple[Section | None, Subsection | None]:
        pair = sub_pairs.get(id(rsub_of[id(e)]))
        if pair is not None:
            return pair
        idx = readme.sections.index(rsec_of[id(e)])
        return sec_of_index.get(idx), None

    # Entries: URL within the same paired subsection, URL anywhere, then title anywhere.
    r_entries = readme.entries
    c_entries = list(guide.entries)
    pairs: dict[int, Entry] = {}  # id(ReadmeEntry) -> Entry
    used: set[str] = set()

    def take(r: ReadmeEntry, cands: Iterable[Entry]) -> bool:
        for c in cands:
            if c.id not in used:
                pairs[id(r)] = c
                used.add(c.id)
                return True
        return False

    for r in r_entries:
        _, place_sub = place(r)
        if r.url and place_sub is not None:
            take(r, (c for c in place_sub.entries if _norm_url(c.url) == _norm_url(r.url)))
    for r in r_entries:
        if id(r) not in pairs and r.url:
            take(r, (c for c in c_entries if _norm_url(c.url) == _norm_url(r.url)))
    for r in r_entries:
        if id(r) not in pairs:
            take(r, (c for c in c_entries if _norm(c.title) == _norm(r.title)
                     or _norm(r.title) in (_norm(n) for n in c.also_names)))

    added: list[ReadmeEntry] = []
    added_places: dict[int, tuple[Section | None, Subsection | None, str | None]] = {}
    for r in r_entries:
        c = pairs.get(id(r))
        s, place_sub = place(r)
        if c is None:
            kind = "watchlist-added" if r.watchlist else "entry-added"
            where = lines.subsection(s, place_sub) if (s is not None and place_sub is not None) else (
                lines.section(s) if s is not None else lines.guide())
            prev = _previous_id(r, rsub_of[id(r)], pairs)
            what = "watchlist item added" if r.watchlist else "entry added"
            diffs.append(Difference(kind, f"{what}: '{r.title}'" + (f" <{r.url}>" if r.url else "")
                                    + f" in {r.section}" + (f" / {r.subsection}" if r.subsection else ""),
                                    r.line, where, title=r.title, url=r.url,
                                    details={"section": r.section, "subsection": r.subsection, "position": r.position,
                                             "after": prev}))
            added.append(r)
            added_places[id(r)] = (s, place_sub, prev)
            continue
        if _norm(c.title) != _norm(r.title) and _norm(r.title) not in (_norm(n) for n in c.also_names):
            diffs.append(Difference("entry-retitled", f"entry retitled: '{c.title}' -> '{r.title}'", r.line,
                                    lines.entry(c), entry_id=c.id, title=r.title, url=r.url,
                                    details={"old": c.title, "new": r.title}))
        if r.url and c.url and _norm_url(c.url) != _norm_url(r.url):
            diffs.append(Difference("url-changed", f"URL changed for '{c.title}': {c.url} -> {r.url}", r.line,
                                    lines.entry(c), entry_id=c.id, title=r.title, url=r.url,
                                    details={"old": c.url, "new": r.url}))
        if s is not None and place_sub is not None and (c.section_id != s.id or c.subsection_id != place_sub.id):
            diffs.append(Difference(
                "entry-moved", f"entry moved: '{c.title}' from {c.section_title}"
                + (f" / {c.subsection_title}" if c.subsection_title else "")
                + f" to {r.section}" + (f" / {r.subsection}" if r.subsection else ""),
                r.line, lines.entry(c), entry_id=c.id, title=r.title, url=r.url,
                details={"from": [c.section_title, c.subsection_title], "to": [r.section, r.subsection]}))
    # Reordered within a subsection: entries outside the longest run that keeps content order.
    for rsec in readme.sections:
        for rsub in rsec.subsections:
            pair = sub_pairs.get(id(rsub))
            if pair is None:
                continue
            _, sub = pair
            order = {c.id: k for k, c in enumerate(sub.entries)}
            seq = [(r, pairs[id(r)]) for r in rsub.entries if id(r) in pairs and pairs[id(r)].id in order]
            keep = _longest_increasing([order[c.id] for _, c in seq])
            for k, (r, c) in enumerate(seq):
                if k not in keep:
                    diffs.append(Difference(
                        "entry-moved", f"entry moved within {sub.title or rsec.title}: '{c.title}' is now item "
                        f"{r.position + 1}", r.line, lines.entry(c), entry_id=c.id, title=r.title, url=r.url,
                        details={"position": r.position, "was": order[c.id]}))
    # Content entries the README no longer has.
    paired_ids = {c.id for c in pairs.values()}
    for c in c_entries:
        if c.id in paired_ids:
            continue
        watch = c.role == "watchlist"
        rline = _readme_line_for(c, readme, sec_pairs, sub_pairs)
        what = "watchlist item removed" if watch else "entry removed"
        diffs.append(Difference("watchlist-removed" if watch else "entry-removed", f"{what}: '{c.title}' ({c.id})",
                                rline, lines.entry(c), entry_id=c.id, title=c.title, url=c.url))
    # The Frontier "Verified on" date.
    frontier = next((s for s in guide.sections if s.id == FRONTIER_ID), None)
    if frontier is not None:
        idx = next((i for i, s in sec_pairs.items() if s is frontier), None)
        frontier_rs = readme.sections[idx] if idx is not None else None
        if frontier_rs is not None and frontier_rs.verified_on and frontier_rs.verified_on != frontier.verified_on:
            diffs.append(Difference("frontier-verified",
                                    f"Frontier verified on {frontier_rs.verified_on} (content says {frontier.verified_on})",
                                    frontier_rs.verified_line or frontier_rs.line, lines.verified(frontier),
                                    details={"old": frontier.verified_on, "new": frontier_rs.verified_on}))
    diffs.sort(key=lambda d: (d.readme_line, d.kind))
    return GuideDiff(readme=readme.path, differences=diffs, added=added, added_places=added_places)


def _best_overlap(urls: set[str], candidates: list[tuple[_T, set[str]]]) -> _T | None:
    best: _T | None = None
    score = 0
    for cand, theirs in candidates:
        n = len(urls & theirs)
        if n > score:
            best, score = cand, n
    return best


def _longest_increasing(values: list[int]) -> set[int]:
    """Indexes of one longest strictly increasing subsequence (patience sorting)."""
    import bisect

    tails: list[int] = []
    tails_idx: list[int] = []
    prev = [-1] * len(values)
    for i, v in enumerate(values):
        k = bisect.bisect_left(tails, v)
        if k == len(tails):
            tails.append(v)
            tails_idx.append(i)
        else:
            tails[k] = v
            tails_idx[k] = i
        prev[i] = tails_idx[k - 1] if k > 0 else -1
    out: set[int] = set()
    i = tails_idx[-1] if tails_idx else -1
    while i != -1:
        out.add(i)
        i = prev[i]
    return out


def _previous_id(r: ReadmeEntry, rsub: ReadmeSubsection, pairs: Mapping[int, Entry]) -> str | None:
    before = rsub.entries[: r.position]
    for prev in reversed(before):
        c = pairs.get(id(prev))
        if c is not None:
            return c.id
    return None


def _readme_line_for(c: Entry, readme: Readme, sec_pairs: dict[int, Section],
                     sub_pairs: dict[int, tuple[Section, Subsection]]) -> int:
    """The README line nearest to where a removed entry was: its subsection, its section, else 1."""
    for rsec in readme.sections:
        for rsub in rsec.subsections:
            pair = sub_pairs.get(id(rsub))
            if pair is not None and pair[1].id == c.subsection_id:
                return rsub.line
    for i, s in sec_pairs.items():
        if s.id == c.section_id:
            return readme.sections[i].line
    return 1


# -- stubs for added entries -----------------------------------------------------------------

def _slug(title: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return s[:60].strip("-") or "entry"


def _yaml_str(text: str) -> str:
    import json

    # JSON strings are valid YAML double-quoted scalars; control characters come out escaped.
    return json.dumps(text, ensure_ascii=False)


def write_stubs(guide: Guide, diff: GuideDiff, folder: str | Path) -> list[Path]:
    """One YAML stub per added entry, in content's entry format: facts only (title, URL, where it
    goes); the summary is left empty for a person to write, and `studytui check` refuses it until
    then. Existing files are never overwritten."""
    from studytui.core.errors import UsageError

    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a directory")
    taken = {e.id for e in guide.entries} | {a for e in guide.entries for a in e.aliases}
    plans: list[tuple[Path, str]] = []
    for r in diff.added:
        sid = _slug(r.title)
        base, n = sid, 2
        while sid in taken:
            sid, n = f"{base}-{n}", n + 1
        taken.add(sid)
        section, sub, prev = diff.added_places.get(id(r), (None, None, None))
        target = section.source_file if section is not None else "(a new section file)"
        where = f"subsection '{sub.id}'" if sub is not None else f"subsection '{r.subsection or '(none)'}' (new)"
        after = f"after '{prev}'" if prev else "first"
        lines = [
            f"# Stub written by `studytui guide diff --write-stubs` from {Path(diff.readme).name}:{r.line}.",
            f"# Goes in {target}, {where}, position {r.position + 1} ({after}).",
            "# Facts only. Write the summary (and kind, tags, authors, year) in your own words;",
            "# `studytui check` refuses an entry without a summary.",
            f"- id: {sid}",
            f"  title: {_yaml_str(r.title)}",
            f"  url: {_yaml_str(r.url) if r.url else 'null'}",
            "  kind: null" + ("" if r.url is None else "   # choose: paper | spec | docs | repo | report | book | course | blog"),
        ]
        if r.watchlist:
            lines.append("  role: watchlist")
            if r.url is None:
                lines.append("  no_url_reason: ''")
        lines += ["  tags: []", "  summary: ''"]
        plans.append((out / f"{sid}.yaml", "\n".join(lines) + "\n"))
    for path, _ in plans:
        if path.exists():
            raise UsageError(f"{path} already exists; not overwriting it (choose another --write-stubs folder)")
    if not plans:
        return []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for path, text in plans:
            with path.open("x", encoding="utf-8") as fh:
                fh.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write stubs in {out}: {exc.strerror or exc}") from None
    return [p for p, _ in plans]
