"""The content model: the guide as plain, immutable records.

Everything here is pure Python so the CLI, the store, the calculators and the TUI can share it
without importing Textual.

The records are typed named tuples (`_replace` makes a changed copy, `_fields` names the
fields) and the guide a plain class (`replaced`, `Guide.FIELDS`), not dataclasses, because every
command builds this module first: on Python 3.11 a frozen dataclass costs about a millisecond to
create (its methods are generated and compiled at import), a named tuple a fifth of that, and
this module's records were a tenth of a command's whole start-up (issue 27).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

from studytui.core.tuples import Tuple

# The kinds of source the guide's policy counts as core (introducing paper, defining spec or
# official docs, implementing repository, direct implementer report). `kind` itself is our own
# classification; books, courses and blogs are kinds we use for what the guide lists beside them.
ADMITTED_KINDS = ("paper", "spec", "docs", "repo", "report")
ALL_KINDS = ADMITTED_KINDS + ("book", "course", "blog")
# Fields every performance claim must carry: the guide's five, plus the software versions and the
# algorithm, which its CONTRIBUTING.md asks for alongside them.
CLAIM_FIELDS = ("hardware", "workload", "precision", "baseline", "correctness", "software", "algorithm")
# `placement: inferred` marks an entry whose position was inferred from update notes, not read in
# the README itself.
PLACEMENTS = ("inferred",)


class Claim(Tuple):
    """A performance number written in content, with the five fields that make it admissible."""

    value: str
    hardware: str
    workload: str
    precision: str
    baseline: str
    correctness: str
    software: str  # library, compiler and driver versions
    algorithm: str  # the method or kernel variant measured


class TryIt(Tuple):
    """A link from an entry to a calculator with preset inputs (issue: calculators in the TUI)."""

    calc: str
    args: Mapping[str, Any] = MappingProxyType({})  # (read-only: a default shared by every link)
    label: str = ""


class Entry(Tuple):
    """One item of the reading list."""

    id: str
    title: str
    url: str | None
    kind: str | None
    summary: str
    section_id: str
    section_title: str
    subsection_id: str
    subsection_title: str | None
    # Position in guide order, 0-based, over all entries (the field hides tuple.index, which
    # nothing calls on an entry).
    index: int  # type: ignore[assignment]
    authors: tuple[str, ...] = ()
    year: int | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    role: str = "core"  # core | companion | watchlist | policy
    date: str | None = None  # ISO date; Frontier entries carry the date they were verified
    no_url_reason: str | None = None  # watchlist items without a primary link say why
    also_names: tuple[str, ...] = ()
    related_urls: tuple[str, ...] = ()
    claims: tuple[Claim, ...] = ()
    try_it: TryIt | None = None
    placement: str | None = None  # "inferred": placed from update notes, position not confirmed
    source_file: str = ""
    source_line: int = 0

    @property
    def date_label(self) -> str:
        """What the entry's date means, in the words the CLI (`show`) and the app (the detail
        pane) both put before it; the one place that decides. A Frontier entry read from the
        guide's Frontier list carries the day that list was verified (the section itself may have
        been re-verified since, by a later update that did not re-check the entry); an entry
        placed from the update notes, or outside Frontier, was added to the guide that day, and
        nobody verified it then."""
        if self.section_id == "frontier" and self.placement != "inferred":
            return "On the Frontier list verified"
        return "Added to the guide on"

    @property
    def date_line(self) -> str | None:
        """The date with its meaning ("On the Frontier list verified 2026-08-23"); None undated."""
        return f"{self.date_label} {self.date}" if self.date else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape used by `list --json`, `show --json` and `search --json`."""
        return {
            "id": self.id,
            "title": self.title,
            "url": self.url,
            "kind": self.kind,
            "section": self.section_title,
            "section_id": self.section_id,
            "subsection": self.subsection_title,
            "subsection_id": self.subsection_id,
            "index": self.index,
            "summary": self.summary,
            "tags": list(self.tags),
            "authors": list(self.authors),
            "year": self.year,
            "role": self.role,
            "date": self.date,
            "date_meaning": self.date_label if self.date else None,
            "aliases": list(self.aliases),
            "placement": self.placement,
            "try_it": (
                {"calc": self.try_it.calc, "args": dict(self.try_it.args), "label": self.try_it.label}
                if self.try_it
                else None
            ),
        }


class Subsection(Tuple):
    id: str
    title: str | None
    entries: tuple[Entry, ...]


class Section(Tuple):
    id: str
    title: str
    intro: str
    subsections: tuple[Subsection, ...]
    ordered: bool = False
    verified_on: str | None = None  # Frontier: the date the guide last verified it
    source_file: str = ""

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(e for sub in self.subsections for e in sub.entries)


class GlossaryTerm(Tuple):
    id: str
    term: str
    definition: str
    see: tuple[str, ...] = ()  # entry ids
    aliases: tuple[str, ...] = ()


class Policy(Tuple):
    """The source policy, in our own words."""

    text: str
    admitted_kinds: tuple[str, ...]
    claim_fields: tuple[str, ...]


class Guide:
    """The whole guide: sections in order, a flat entry list, the glossary and the policy.

    A plain class (equal when its seven fields are), not a dataclass: see the module's note."""

    __slots__ = ("title", "source_repo", "license", "sections", "glossary", "policy", "content_dir", "entries", "_by_id")
    FIELDS = ("title", "source_repo", "license", "sections", "glossary", "policy", "content_dir")

    def __init__(self, title: str, source_repo: str, license: str, sections: tuple[Section, ...],
                 glossary: tuple[GlossaryTerm, ...], policy: Policy, content_dir: str) -> None:
        self.title = title
        self.source_repo = source_repo
        self.license = license
        self.sections = sections
        self.glossary = glossary
        self.policy = policy
        self.content_dir = content_dir
        self.entries: tuple[Entry, ...] = tuple(e for s in self.sections for e in s.entries)
        by_id: dict[str, Entry] = {}
        for e in self.entries:
            by_id.setdefault(e.id, e)
        for e in self.entries:
            for alias in e.aliases:
                by_id.setdefault(alias, e)
        self._by_id = by_id

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.FIELDS)

    __hash__ = None  # type: ignore[assignment]  # (mutable-looking, as the dataclass was: unhashable)

    def __repr__(self) -> str:
        return f"Guide(title={self.title!r}, {len(self.sections)} sections, {len(self.entries)} entries, content_dir={self.content_dir!r})"

    def replaced(self, **changes: Any) -> Guide:
        """A copy with some of the seven fields changed (as `_replace` on the records)."""
        values = {name: getattr(self, name) for name in self.FIELDS}
        unknown = set(changes) - set(values)
        if unknown:
            raise TypeError(f"Guide has no field {sorted(unknown)[0]!r}")
        return Guide(**{**values, **changes})

    def get(self, entry_id: str) -> Entry | None:
        """An entry by id or by one of its old ids (aliases)."""
        return self._by_id.get(entry_id)

    def section(self, key: str) -> Section | None:
        """A section by id, exact title, or leading number ("2" -> "2. Kernel optimization"); "0" is
        the first section (Start here, which carries no number in its title; the problem files
        number it 0). The one resolver behind `list --section` and `practice SECTION`."""
        k = key.strip().lower()
        if k == "0" and self.sections:
            return self.sections[0]
        for s in self.sections:
            if k in (s.id.lower(), s.title.lower()) or s.title.lower().startswith(k + "."):
                return s
        for s in self.sections:
            if k in s.title.lower():
                return s
        return None

    def resolve_section(self, key: str) -> Section:
        """`section(key)`, or a UsageError naming the forms a section can be given in."""
        section = self.section(key)
        if section is None:
            from studytui.core.errors import UsageError

            names = ", ".join(s.id for s in self.sections)
            raise UsageError(f"unknown section '{key}' (one of: {names}; or a section number, 0 for the first)")
        return section

    def section_of(self, entry: Entry) -> Section:
        for s in self.sections:
            if s.id == entry.section_id:
                return s
        raise KeyError(entry.section_id)
