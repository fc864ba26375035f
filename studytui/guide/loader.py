"""Load the guide from `content/` into the model, validating as it goes.

Every problem is reported as `FILE:LINE: message`. `load_guide` raises ContentError on any
problem; `parse_content` returns the problems instead (used by `studytui check`).

`load_guide` (in `cache.py`, re-exported here) parses the YAML only when it must: a guide loaded
in this process is kept while its files keep their stamps, and a guide loaded by an earlier run is
read back from the cache (issue 27). PyYAML is imported only when a file is parsed.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from studytui.core.errors import ContentError
from studytui.core.filestate import FullStamp, content_stamp

# The guide as a command gets it (`load_guide`: kept, cached or parsed), the two rules for text and
# how a file is named in messages live in cache.py, so a warm run never imports this module.
from studytui.guide.cache import _LOADED, load_guide  # noqa: F401  (re-exported: the loader's API)
from studytui.guide.cache import CONTROL_IN_LINE as _CONTROL_IN_LINE
from studytui.guide.cache import CONTROL_IN_PROSE as _CONTROL_IN_PROSE
from studytui.guide.cache import display as _display
from studytui.guide.model import (
    ALL_KINDS,
    CLAIM_FIELDS,
    PLACEMENTS,
    Claim,
    Entry,
    GlossaryTerm,
    Guide,
    Policy,
    Section,
    Subsection,
    TryIt,
)

if TYPE_CHECKING:
    from studytui.core.yamlio import YamlFile

# Where a value is in a YAML file (yamlio.YamlPath, named here without importing PyYAML).
YamlPath = tuple[object, ...]

SLUG = re.compile(r"^[a-z0-9]+(?:[-.][a-z0-9]+)*$")
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ROLES = ("core", "companion", "watchlist", "policy")
ENTRY_KEYS = {
    "id", "title", "url", "kind", "summary", "authors", "year", "tags", "aliases", "role", "date",
    "no_url_reason", "also_names", "related_urls", "claims", "try_it", "placement",
}
SECTION_KEYS = {"id", "title", "intro", "ordered", "verified_on", "subsections"}
SUBSECTION_KEYS = {"id", "title", "entries"}
FRONTIER_ID = "frontier"


@dataclass
class Parsed:
    """The outcome of reading the content folder: the guide (if usable) and every problem found."""

    guide: Guide | None
    problems: list[str] = field(default_factory=list)
    files: dict[str, YamlFile] = field(default_factory=dict)
    # (path, stamp) of every file read, each stamped just before it was read (the cache's key)
    stamps: list[tuple[str, FullStamp | None]] = field(default_factory=list)


class _Reporter:
    """Collects problems with file:line positions, computed only when a problem is reported."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def add(self, yf: YamlFile, path: YamlPath, message: str) -> None:
        self.problems.append(f"{yf.where(path)}: {message}")


def _as_date(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, _dt.date):
        return value.isoformat()
    return str(value)


def _str_tuple(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _is_https(url: Any) -> bool:
    return (
        isinstance(url, str) and url.startswith("https://") and len(url) > len("https://")
        and not any(c.isspace() for c in url)
    )


ONE_LINE_FIELDS = {
    "id", "title", "url", "kind", "role", "date", "year", "term", "authors", "tags", "aliases",
    "also_names", "related_urls", "calc", "label", "verified_on", "see", "sections", "glossary", "policy",
    "admitted_kinds", "claim_fields", "repo", "license",
}


def _control_problems(data: Any, path: YamlPath = (), field: str | None = None) -> list[tuple[YamlPath, str]]:
    """(path, message) for every string (keys too) holding a control character it may not hold."""
    found: list[tuple[YamlPath, str]] = []
    if isinstance(data, str):
        pattern = _CONTROL_IN_LINE if field in ONE_LINE_FIELDS else _CONTROL_IN_PROSE
        bad = pattern.search(data)
        if bad:
            where = f"'{field}'" if field else "a value"
            found.append((path, f"control character {bad.group()!r} in {where}: content must be plain text"))
    elif isinstance(data, dict):
        for key, value in data.items():
            if isinstance(key, str) and _CONTROL_IN_LINE.search(key):
                found.append((path, f"control character in the key {key!r}"))
                continue
            found.extend(_control_problems(value, path + (key,), key if isinstance(key, str) else field))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found.extend(_control_problems(value, path + (i,), field))
    return found


class _Builder:
    def __init__(self, content_dir: Path) -> None:
        self.dir = content_dir
        self.report = _Reporter()
        self.files: dict[str, YamlFile] = {}
        self.index = 0
        self.seen_ids: dict[str, str] = {}  # id -> where first defined
        self.seen_sub_ids: set[str] = set()
        self.stamps: list[tuple[str, FullStamp | None]] = []

    def read(self, path: Path) -> YamlFile | None:
        from studytui.core.yamlio import YamlFile

        # Stamped before it is read: a change made while it is read changes the stamp, so a guide
        # kept under this stamp is never taken for the file as it is afterwards.
        self.stamps.append((str(path), content_stamp(path)))
        try:
            yf = YamlFile(path, _display(path))
        except ContentError as exc:
            self.report.problems.extend(exc.problems)
            return None
        self.files[yf.display] = yf
        for where, message in _control_problems(yf.data):
            self.report.add(yf, where, message)
        return yf

    # -- guide.yaml ---------------------------------------------------------------------------
    def build(self) -> Guide | None:
        top_path = self.dir / "guide.yaml"
        if not top_path.is_file():
            self.report.problems.append(f"{_display(top_path)}:1: missing guide.yaml")
            return None
        top = self.read(top_path)
        if top is None:
            return None
        data = top.data
        if not isinstance(data, dict):
            self.report.add(top, (), "guide.yaml must be a mapping")
            return None
        files = data.get("sections")
        if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
            self.report.add(top, ("sections",), "'sections' must list the section files in guide order")
            return None
        sections = []
        for i, name in enumerate(files):
            path = self.dir / "sections" / name
            if not path.is_file():
                self.report.add(top, ("sections", i), f"section file not found: sections/{name}")
                continue
            section = self.section(path)
            if section is not None:
                sections.append(section)
        glossary = self.glossary(self.dir / str(data.get("glossary", "glossary.yaml")))
        policy = self.policy(self.dir / str(data.get("policy", "policy.yaml")))
        raw_source = data.get("source")
        source: dict[Any, Any] = raw_source if isinstance(raw_source, dict) else {}
        if self.report.problems or policy is None:
            return None
        guide = Guide(
            title=str(data.get("title", "")),
            source_repo=str(source.get("repo", "")),
            license=str(source.get("license", "")),
            sections=tuple(sections),
            glossary=tuple(glossary),
            policy=policy,
            content_dir=str(self.dir),
        )
        self.cross_checks(guide)
        return None if self.report.problems else guide

    # -- sections -----------------------------------------------------------------------------
    def section(self, path: Path) -> Section | None:
        yf = self.read(path)
        if yf is None:
            return None
        data = yf.data
        add: Callable[[YamlPath, str], None] = lambda p, m: self.report.add(yf, p, m)  # noqa: E731 - local shorthand
        if not isinstance(data, dict):
            add((), "a section file must be a mapping")
            return None
        for key in data:
            if key not in SECTION_KEYS:
                add((key,), f"unknown section field '{key}'")
        sid, title, intro = data.get("id"), data.get("title"), data.get("intro")
        if not isinstance(sid, str) or not SLUG.match(sid):
            add(("id",), "section 'id' must be a lower-case slug")
            sid = str(sid)
        if not isinstance(title, str) or not title.strip():
            add(("title",), "section 'title' is required")
            title = str(title)
        if not isinstance(intro, str) or not intro.strip():
            add(("intro",), "section 'intro' is required (a few sentences in our own words)")
            intro = ""
        verified = _as_date(data.get("verified_on"))
        if verified is not None and not ISO_DATE.match(verified):
            add(("verified_on",), f"'verified_on' must be an ISO date (YYYY-MM-DD), got {verified!r}")
        if sid == FRONTIER_ID and verified is None:
            add(("id",), "the Frontier section must carry 'verified_on' (the date it was last verified)")
        subs_data = data.get("subsections")
        if not isinstance(subs_data, list) or not subs_data:
            add(("subsections",), "'subsections' must be a non-empty list")
            return None
        subsections = []
        for si, sub in enumerate(subs_data):
            built = self.subsection(yf, (("subsections", si)), sub, sid, title)
            if built is not None:
                subsections.append(built)
        return Section(
            id=sid,
            title=title,
            intro=intro.strip(),
            subsections=tuple(subsections),
            ordered=bool(data.get("ordered", False)),
            verified_on=verified,
            source_file=yf.display,
        )

    def subsection(self, yf: YamlFile, where: YamlPath, data: Any, sid: str, stitle: str) -> Subsection | None:
        add: Callable[[YamlPath, str], None] = lambda p, m: self.report.add(yf, where + p, m)  # noqa: E731
        if not isinstance(data, dict):
            add((), "a subsection must be a mapping with 'id', 'title' and 'entries'")
            return None
        for key in data:
            if key not in SUBSECTION_KEYS:
                add((key,), f"unknown subsection field '{key}'")
        sub_id, sub_title = data.get("id"), data.get("title")
        if not isinstance(sub_id, str) or not SLUG.match(sub_id):
            add(("id",), "subsection 'id' must be a lower-case slug")
        elif sub_id in self.seen_sub_ids:
            add(("id",), f"duplicate subsection id '{sub_id}'")
        else:
            self.seen_sub_ids.add(sub_id)
        if sub_title is not None and not (isinstance(sub_title, str) and sub_title.strip()):
            add(("title",), "subsection 'title' must be text or null")
        entries_data = data.get("entries")
        if not isinstance(entries_data, list) or not entries_data:
            add(("entries",), "'entries' must be a non-empty list")
            return None
        entries = []
        urls_here: dict[str, int] = {}
        for ei, raw in enumerate(entries_data):
            entry = self.entry(yf, where + ("entries", ei), raw, sid, stitle, str(sub_id), sub_title)
            if entry is None:
                continue
            if entry.url:
                if entry.url in urls_here:
                    self.report.add(
                        yf, where + ("entries", ei, "url"),
                        f"URL listed twice in this subsection (also entry {urls_here[entry.url] + 1}): {entry.url}",
                    )
                urls_here[entry.url] = ei
            entries.append(entry)
        return Subsection(id=str(sub_id), title=sub_title, entries=tuple(entries))

    def entry(self, yf: YamlFile, where: YamlPath, data: Any, sid: str, stitle: str, sub_id: str,
              sub_title: str | None) -> Entry | None:
        add: Callable[[YamlPath, str], None] = lambda p, m: self.report.add(yf, where + p, m)  # noqa: E731
        if not isinstance(data, dict):
            add((), "an entry must be a mapping")
            return None
        for key in data:
            if key not in ENTRY_KEYS:
                add((key,), f"unknown entry field '{key}'")
        eid = data.get("id")
        if not isinstance(eid, str) or not SLUG.match(eid):
            add(("id",), "entry 'id' must be a lower-case slug (letters, digits, '-')")
            eid = str(eid)
        elif eid in self.seen_ids:
            add(("id",), f"duplicate entry id '{eid}' (first at {self.seen_ids[eid]})")
        else:
            self.seen_ids[eid] = yf.display
        title = data.get("title")
        if not isinstance(title, str) or not title.strip():
            add(("title",), "entry 'title' is required")
            title = str(title)
        role = data.get("role", "core")
        if role not in ROLES:
            add(("role",), f"'role' must be one of {', '.join(ROLES)}")
            role = "core"
        url, kind = data.get("url"), data.get("kind")
        no_url_reason = data.get("no_url_reason")
        if url is None:
            if role != "watchlist":
                add(("url",), "only watchlist items may have no URL")
            elif not (isinstance(no_url_reason, str) and no_url_reason.strip()):
                add(("url",), "a watchlist item without a URL must say why in 'no_url_reason'")
        elif not _is_https(url):
            add(("url",), f"URL must be https: {url!r}")
        if kind is None:
            if url is not None:
                add(("kind",), f"'kind' is required: one of {', '.join(ALL_KINDS)}")
        elif kind not in ALL_KINDS:
            add(("kind",), f"unknown kind {kind!r}: one of {', '.join(ALL_KINDS)}")
        summary = data.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            add(("summary",), "entry 'summary' is required (1-3 sentences in our own words)")
            summary = ""
        lists = {}
        for key in ("authors", "tags", "aliases", "also_names", "related_urls"):
            value = _str_tuple(data.get(key))
            if value is None:
                add((key,), f"'{key}' must be a list of strings")
                value = ()
            lists[key] = value
        for i, alias in enumerate(lists["aliases"]):
            if not SLUG.match(alias):
                add(("aliases", i), f"alias {alias!r} must be a slug")
        for i, rel in enumerate(lists["related_urls"]):
            if not _is_https(rel):
                add(("related_urls", i), f"URL must be https: {rel!r}")
        year = data.get("year")
        if year is not None and not (isinstance(year, int) and 1900 < year < 2100):
            add(("year",), f"'year' must be a four-digit year, got {year!r}")
            year = None
        date = _as_date(data.get("date"))
        if date is not None and not ISO_DATE.match(date):
            add(("date",), f"'date' must be an ISO date (YYYY-MM-DD), got {date!r}")
        if sid == FRONTIER_ID and date is None:
            add(("id",), "Frontier entries must carry a 'date' (when they were verified or added)")
        placement = data.get("placement")
        if placement is not None and placement not in PLACEMENTS:
            add(("placement",), f"'placement' must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
            placement = None
        claims = self.claims(add, data.get("claims"))
        try_it = self.try_it(add, data.get("try_it"))
        entry = Entry(
            id=eid, title=title.strip(), url=url if isinstance(url, str) else None,
            kind=kind if isinstance(kind, str) else None, summary=" ".join(summary.split()),
            section_id=sid, section_title=stitle, subsection_id=sub_id, subsection_title=sub_title,
            index=self.index, authors=lists["authors"], year=year, tags=lists["tags"],
            aliases=lists["aliases"], role=role, date=date,
            no_url_reason=no_url_reason if isinstance(no_url_reason, str) else None,
            also_names=lists["also_names"], related_urls=lists["related_urls"], claims=claims,
            try_it=try_it, placement=placement, source_file=yf.display,
        )
        self.index += 1
        return entry

    def claims(self, add: Callable[[YamlPath, str], None], raw: Any) -> tuple[Claim, ...]:
        if raw is None:
            return ()
        if not isinstance(raw, list):
            add(("claims",), "'claims' must be a list")
            return ()
        claims = []
        for i, claim in enumerate(raw):
            if not isinstance(claim, dict) or not str(claim.get("value", "")).strip():
                add(("claims", i), "a claim needs a 'value' (the number) and the five fields "
                    + ", ".join(CLAIM_FIELDS))
                continue
            missing = [f for f in CLAIM_FIELDS if not str(claim.get(f) or "").strip()]
            if missing:
                add(("claims", i), "performance claim rejected: missing " + ", ".join(missing)
                    + " (every number needs " + ", ".join(CLAIM_FIELDS) + ")")
                continue
            claims.append(Claim(**{k: str(claim[k]) for k in ("value",) + CLAIM_FIELDS}))
        return tuple(claims)

    def try_it(self, add: Callable[[YamlPath, str], None], raw: Any) -> TryIt | None:
        if raw is None:
            return None
        if not isinstance(raw, dict) or not isinstance(raw.get("calc"), str):
            add(("try_it",), "'try_it' needs 'calc' (a calculator name) and optional 'args'")
            return None
        args = raw.get("args") or {}
        if not isinstance(args, dict):
            add(("try_it", "args"), "'try_it.args' must be a mapping of field to value")
            args = {}
        return TryIt(calc=raw["calc"], args={str(k): v for k, v in args.items()}, label=str(raw.get("label", "")))

    # -- glossary and policy -------------------------------------------------------------------
    def glossary(self, path: Path) -> list[GlossaryTerm]:
        if not path.is_file():
            self.report.problems.append(f"{_display(path)}:1: missing glossary file")
            return []
        yf = self.read(path)
        if yf is None:
            return []
        terms_raw = yf.data.get("terms") if isinstance(yf.data, dict) else None
        if not isinstance(terms_raw, list):
            self.report.add(yf, (), "the glossary must have a 'terms' list")
            return []
        terms, seen = [], set()
        for i, raw in enumerate(terms_raw):
            where = ("terms", i)
            if not isinstance(raw, dict):
                self.report.add(yf, where, "a glossary term must be a mapping")
                continue
            tid, term, definition = raw.get("id"), raw.get("term"), raw.get("definition")
            if not isinstance(tid, str) or not SLUG.match(tid) or tid in seen:
                self.report.add(yf, where + ("id",), f"glossary 'id' must be a unique slug, got {tid!r}")
            seen.add(str(tid))
            if not isinstance(term, str) or not isinstance(definition, str) or not definition.strip():
                self.report.add(yf, where, "a glossary term needs 'term' and 'definition'")
                continue
            see, aliases = _str_tuple(raw.get("see")), _str_tuple(raw.get("aliases"))
            if see is None or aliases is None:
                self.report.add(yf, where, "'see' and 'aliases' must be lists of strings")
                continue
            terms.append(GlossaryTerm(id=str(tid), term=term, definition=" ".join(definition.split()),
                                      see=see, aliases=aliases))
        self._glossary_file = yf
        return terms

    def policy(self, path: Path) -> Policy | None:
        if not path.is_file():
            self.report.problems.append(f"{_display(path)}:1: missing policy file")
            return None
        yf = self.read(path)
        if yf is None:
            return None
        data = yf.data if isinstance(yf.data, dict) else {}
        text = data.get("text")
        kinds = _str_tuple(data.get("admitted_kinds"))
        fields = _str_tuple(data.get("claim_fields"))
        if not isinstance(text, str) or not text.strip():
            self.report.add(yf, ("text",), "the source policy needs its 'text'")
            return None
        if not kinds or not fields:
            self.report.add(yf, (), "the policy needs 'admitted_kinds' and 'claim_fields' lists")
            return None
        if set(fields) != set(CLAIM_FIELDS):
            self.report.add(yf, ("claim_fields",), "claim_fields must be exactly: " + ", ".join(CLAIM_FIELDS))
        return Policy(text=text.strip(), admitted_kinds=kinds, claim_fields=fields)

    # -- rules that need the whole guide ----------------------------------------------------------
    def cross_checks(self, guide: Guide) -> None:
        ids = {e.id for e in guide.entries}
        for e in guide.entries:
            for alias in e.aliases:
                if alias in ids:
                    self.report.problems.append(
                        f"{e.source_file}:1: alias '{alias}' of '{e.id}' is the id of another entry")
        yf = getattr(self, "_glossary_file", None)
        if yf is not None:
            for i, term in enumerate(guide.glossary):
                for j, ref in enumerate(term.see):
                    if guide.get(ref) is None:
                        self.report.add(yf, ("terms", i, "see", j), f"glossary '{term.id}' refers to unknown entry '{ref}'")
        if not any(s.id == FRONTIER_ID for s in guide.sections):
            self.report.problems.append(f"{_display(self.dir / 'guide.yaml')}:1: the guide has no Frontier section")


def parse_content(content_dir: str | os.PathLike[str] | Path) -> Parsed:
    """Read and validate everything under `content_dir`; never raises for content problems."""
    builder = _Builder(Path(content_dir))
    guide = builder.build()
    return Parsed(guide=guide, problems=builder.report.problems, files=builder.files, stamps=builder.stamps)
