"""Read a copy of the guide's README.md into sections, subsections and entries.

Parsing goes through markdown-it-py's token stream (never regular expressions over lines), so
the README's real shapes come out the same way: numbered or bulleted lists, several links in one
item ("vLLM, SGLang, and TensorRT-LLM"), a companion sentence with a link, watchlist items
without a link, repository-relative links, the Contents list of anchors (skipped), the header
image (skipped), and older layouts with tiers (level-4 headings) under topics.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from studytui.core.errors import UsageError

if TYPE_CHECKING:
    from markdown_it.token import Token  # markdown_it is imported when a README is parsed

MAX_README_BYTES = 1024 * 1024  # the real README is tens of kilobytes
PARSE_SECONDS = 10.0  # hostile Markdown (200k unclosed brackets) can take that long; the real one ~0.05 s
LEAD_IN_CHARS = 30  # words allowed before an item's first link ("Companion:", "Read first:")
REPO_BLOB = "https://github.com/wafer-ai/gpu-perf-engineering-resources/blob/main/"
# Level-2 headings that frame the list rather than belong to it.
NOT_SECTIONS = {
    "contents", "table of contents", "purpose", "how to read", "how to use this guide", "license",
    "maintainer", "maintainers", "contributing", "about",
}
# Text allowed between two links for both to count as entries of one item ("A, B, and C").
_JOINER = re.compile(r"^[\s,;/&+]*(?:and|or)?[\s,;/&+]*$", re.IGNORECASE)
_SEPARATOR = re.compile(r"\s+[-\u2013\u2014]\s+|:\s")
_MONTHS = {m.lower(): i for i, m in enumerate(
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
     "November", "December"], start=1)}
_VERIFIED = re.compile(
    r"verified(?:\s+on)?\s*:?\s*(?P<date>\d{4}-\d{2}-\d{2}|[A-Za-z]+\.?\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+[A-Za-z]+\s+\d{4})", re.IGNORECASE
)


@dataclass
class ReadmeEntry:
    title: str
    url: str | None
    line: int  # 1-based
    section: str
    subsection: str | None
    position: int  # 0-based within its subsection
    watchlist: bool = False
    companion: bool = False


@dataclass
class ReadmeSubsection:
    title: str | None
    line: int
    entries: list[ReadmeEntry] = field(default_factory=list)


@dataclass
class ReadmeSection:
    title: str
    line: int
    subsections: list[ReadmeSubsection] = field(default_factory=list)
    verified_on: str | None = None
    verified_line: int | None = None

    def subsection(self, title: str | None, line: int) -> ReadmeSubsection:
        for sub in self.subsections:
            if sub.title == title:
                return sub
        sub = ReadmeSubsection(title, line)
        self.subsections.append(sub)
        return sub

    @property
    def entries(self) -> list[ReadmeEntry]:
        return [e for sub in self.subsections for e in sub.entries]


@dataclass
class Readme:
    path: str
    title: str | None
    sections: list[ReadmeSection]

    @property
    def entries(self) -> list[ReadmeEntry]:
        return [e for s in self.sections for e in s.entries]


def read_readme_text(path: str | Path) -> str:
    """The README's text, or UsageError (one line, exit 2) for anything that is not Markdown text."""
    p = Path(path)
    name = str(path)
    try:
        if p.is_dir():
            raise UsageError(f"{name} is a directory, not a README file")
        size = p.stat().st_size
    except FileNotFoundError:
        raise UsageError(f"{name}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if size > MAX_README_BYTES:
        raise UsageError(f"{name} is {size // 1024 // 1024} MiB; a copy of the guide's README is far smaller "
                         f"(the limit is {MAX_README_BYTES // 1024 // 1024} MiB)")
    from studytui.core import fileio

    try:
        # Opened without blocking and refused unless a regular file: a FIFO would wait for ever.
        with fileio.open_regular(p) as fh:
            raw = fh.read(MAX_README_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_README_BYTES:
        raise UsageError(f"{name} is larger than {MAX_README_BYTES // 1024 // 1024} MiB; not a copy of the guide's README")
    if not raw.strip():
        raise UsageError(f"{name} is empty; give a copy of the guide's README.md")
    if b"\x00" in raw:
        raise UsageError(f"{name} is binary, not Markdown; give a copy of the guide's README.md")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"{name} is not UTF-8 text, so not a copy of the guide's README.md") from None


def _iso(text: str) -> str | None:
    text = text.strip().rstrip(".")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return _dt.date.fromisoformat(text).isoformat()
        except ValueError:
            return None
    m = re.fullmatch(r"([A-Za-z]+)\.?\s+(\d{1,2}),?\s+(\d{4})", text) or None
    if m:
        month, day, year = m.group(1), m.group(2), m.group(3)
    else:
        m = re.fullmatch(r"(\d{1,2})\s+([A-Za-z]+)\s+(\d{4})", text)
        if not m:
            return None
        day, month, year = m.group(1), m.group(2), m.group(3)
    number = _MONTHS.get(month.lower()) or next((v for k, v in _MONTHS.items() if k[:3] == month.lower()[:3]), None)
    if number is None:
        return None
    try:
        return _dt.date(int(year), number, int(day)).isoformat()
    except ValueError:
        return None


def _absolute(href: str) -> str | None:
    """The URL an entry link points to; None for anchors (the Contents list) and non-web links."""
    href = href.strip()
    if not href or href.startswith("#") or href.lower().startswith(("mailto:", "javascript:", "data:")):
        return None
    if re.match(r"^[a-z][a-z0-9+.-]*://", href, re.IGNORECASE):
        return href
    # Repository-relative (CONTRIBUTING.md, ./docs/x.md): the file on GitHub.
    return REPO_BLOB + href.lstrip("./")


def _plain(children: list[Token]) -> str:
    return "".join(c.content for c in children if c.type in ("text", "code_inline")).strip()


def _inline_parts(token: Token, first_line: int) -> list[tuple[str, Any]]:
    """The inline children as ('link', (title, href, line)) and ('text', str) parts."""
    parts: list[tuple[str, Any]] = []
    line = first_line
    link: dict[str, Any] | None = None
    for child in token.children or []:
        if child.type in ("softbreak", "hardbreak"):
            line += 1
            if link is None:
                parts.append(("text", " "))
            continue
        if child.type == "link_open":
            link = {"href": str(child.attrs.get("href", "")), "text": [], "line": line}
        elif child.type == "link_close" and link is not None:
            parts.append(("link", ("".join(link["text"]).strip(), link["href"], link["line"])))
            link = None
        elif child.type in ("text", "code_inline"):
            if link is not None:
                link["text"].append(child.content)
            else:
                parts.append(("text", child.content))
        elif child.type in ("strong_open", "strong_close", "em_open", "em_close") and link is None:
            parts.append(("mark", child.type))
    return parts


def _lead_links(parts: list[tuple[str, Any]]) -> list[tuple[str, str, int]]:
    """Links at the head of an item, joined only by commas or 'and': each is an entry. A short
    lead-in ("Companion:") may come first; links after other words (a description, a mention
    inside it) are not entries."""
    links: list[tuple[str, str, int]] = []
    between = ""
    lead_in = ""  # words before the first link, not counting a bold name
    bold = False
    for kind, value in parts:
        if kind == "mark":
            bold = value == "strong_open" or (bold and value != "strong_close")
            continue
        if kind == "text":
            between += value
            if not bold:
                lead_in += value
            continue
        if links and not _JOINER.match(between):
            break
        if not links and len(lead_in.strip()) > LEAD_IN_CHARS:
            break
        links.append(value)
        between = ""
    return links


def _looks_like_address(text: str) -> bool:
    t = text.strip()
    return bool(t) and " " not in t and ("/" in t or "." in t)


def _bold_lead(parts: list[tuple[str, Any]]) -> str:
    """Bold text that comes before the first link, if any."""
    bold: list[str] = []
    inside = False
    for kind, value in parts:
        if kind == "link":
            break
        if kind == "mark":
            if value == "strong_open":
                inside = True
            elif value == "strong_close" and inside:
                return " ".join("".join(bold).split())
            continue
        if inside and kind == "text":
            bold.append(value)
    return ""


def _item_title(parts: list[tuple[str, Any]]) -> str:
    """The name of a watchlist item without a link: its bold lead, else the text before a dash."""
    bold: list[str] = []
    inside = False
    for kind, value in parts:
        if kind == "mark":
            if value == "strong_open" and not bold:
                inside = True
            elif value == "strong_close" and inside:
                break
            continue
        if inside and kind == "text":
            bold.append(value)
    if bold and "".join(bold).strip():
        return " ".join("".join(bold).split()).rstrip(".:")
    text = " ".join("".join(v for k, v in parts if k == "text").split())
    head = _SEPARATOR.split(text, maxsplit=1)[0]
    return head.strip().rstrip(".:")


def parse_readme(text: str, path: str = "README.md") -> Readme:
    from markdown_it import MarkdownIt

    with _time_limit(PARSE_SECONDS, path):
        tokens = MarkdownIt("commonmark").parse(text)
    title: str | None = None
    sections: list[ReadmeSection] = []
    section: ReadmeSection | None = None
    sub_title: str | None = None
    sub_line = 0
    heading_level = 0
    items: list[int] = []  # token indexes of the open list items, innermost last
    item_seen: set[int] = set()  # list items whose entries were already taken (first paragraph)
    last_bold = ""  # the bold name of the paragraph just before, for the earliest layout
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "heading_open":
            heading_level = int(tok.tag[1:])
            inline = tokens[i + 1]
            name = " ".join(_plain(inline.children or []).split()) or inline.content.strip()
            line = (tok.map[0] + 1) if tok.map else 1
            if heading_level == 1 and title is None:
                title = name
            elif heading_level == 2:
                if name.lower().rstrip(":") in NOT_SECTIONS:
                    section = None
                else:
                    section = ReadmeSection(name, line)
                    sections.append(section)
                sub_title, sub_line = None, line
            elif heading_level == 3 and section is not None:
                sub_title, sub_line = name, line
            last_bold = ""
            # Level 4 and below (the older layout's "Tier 1") stay inside the current subsection.
            if section is not None:
                _find_verified(section, name, line)
            i += 3
            continue
        if tok.type == "list_item_open":
            items.append(i)
        elif tok.type == "list_item_close":
            items.pop()
        elif tok.type == "inline" and section is not None and tokens[i - 1].type == "paragraph_open":
            line = (tok.map[0] + 1) if tok.map else 1
            _find_verified(section, " ".join(c.content for c in (tok.children or []) if c.type in ("text", "code_inline")), line)
            parts = _inline_parts(tok, line)
            in_item = bool(items)
            # Only the first paragraph of a list item names its entries; nested lists are items too.
            owner = items[-1] if in_item else None
            if owner is not None and owner in item_seen:
                i += 1
                continue
            if owner is not None:
                item_seen.add(owner)
            sub = section.subsection(sub_title, sub_line)
            watch = "watchlist" in f"{sub_title or ''} {section.title}".lower()
            resolved = [(t, _absolute(h), ln) for t, h, ln in _lead_links(parts)]
            links = [(t, u, ln) for t, u, ln in resolved if u is not None]
            if len(links) == 1 and _looks_like_address(links[0][0]):
                # The earliest layout names an entry in bold and links it by its address, on the
                # same line ("**Title** - [github.com/x](...)") or in the list just below.
                lead = _bold_lead(parts) or (last_bold if in_item else "")
                if lead:
                    links = [(lead, links[0][1], links[0][2])]
                    last_bold = ""
            if not in_item:
                last_bold = "" if links else _bold_lead(parts)
            if links:
                for t, url, ln in links:
                    sub.entries.append(ReadmeEntry(
                        title=" ".join(t.split()) or url, url=url, line=ln, section=section.title,
                        subsection=sub_title, position=len(sub.entries), watchlist=watch, companion=not in_item))
            elif in_item and watch:
                name = _item_title(parts)
                if name:
                    sub.entries.append(ReadmeEntry(
                        title=name, url=None, line=line, section=section.title, subsection=sub_title,
                        position=len(sub.entries), watchlist=True))
        i += 1
    for s in sections:
        s.subsections = [sub for sub in s.subsections if sub.entries or sub.title is not None]
    return Readme(path=path, title=title, sections=sections)


class _TooSlow(Exception):
    pass


class _time_limit:
    """Stop parsing a pathological file after `seconds` (main thread on Unix; elsewhere no limit)."""

    def __init__(self, seconds: float, path: str) -> None:
        self.seconds, self.path = seconds, path
        self.armed = False

    def __enter__(self) -> None:
        import signal
        import threading

        if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
            def stop(_signum: int, _frame: Any) -> None:
                raise _TooSlow()

            self.previous = signal.signal(signal.SIGALRM, stop)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> Literal[False]:
        if self.armed:
            import signal

            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        if kind is _TooSlow:
            raise UsageError(f"{self.path} took over {self.seconds:g} s to parse; it is not the guide's README")
        return False


def _find_verified(section: ReadmeSection, text: str, line: int) -> None:
    if section.verified_on is not None:
        return
    m = _VERIFIED.search(text)
    if m:
        iso = _iso(m.group("date"))
        if iso:
            section.verified_on, section.verified_line = iso, line


def load_readme(path: str | Path) -> Readme:
    return parse_readme(read_readme_text(path), str(path))
