"""The validated guide, kept between runs in the user cache directory (issue 27).

Parsing the guide's YAML (a dozen files, PyYAML's constructor) cost more than the rest of a
command, and a learner who puts `studytui next` in a shell prompt pays it on every prompt. So
once the guide has loaded without a problem it is kept as JSON in `paths.cache_dir()`
(`STUDYTUI_CACHE_DIR` overrides it; tests point it at a temporary folder), one file per content
folder, through the primitives every such cache shares (`studytui/core/jsoncache.py`), and read
back while nothing it was built from has changed. The cache holds only what the content files
say, never a learner's data: deleting it at any time costs one slower run.

A cache file is never trusted blindly. It is used only when every one of these holds; otherwise
the guide is parsed from the YAML again and the file is written anew:

- it is a regular file (not a link, not a FIFO) owned by this user, writable by nobody else, and
  at most MAX_BYTES long;
- its header names this FORMAT, this studytui version and the same content folder, and the same
  stamps (file_state.content_stamp: mtime, ctime, size, inode) for every content file the guide
  was built from and for this package's own code (so a developer's edit of the loader counts as
  a change too);
- the BLAKE2b digest of the payload matches the header's (a truncated or corrupted file fails);
- the payload rebuilds the model with every field of the type the model holds, and no text in it
  holds a control character that the loader would have refused.

The file holds plain JSON values only; the dataclasses are rebuilt from them field by field, so
nothing read from the cache is ever executed or unpickled.

A guide is written only when no file it was built from changed in the last RACY_S seconds: a
stamp taken so soon after a change might not see a second change within the file system's
timestamp granularity. Writing is best effort: a read-only or full cache directory only means
the next run parses again.
"""

from __future__ import annotations

import json
import os
import re
from itertools import chain
from pathlib import Path
from typing import Any

from studytui.core import jsoncache
from studytui.core.errors import ContentError
from studytui.core.filestate import FullStamp
from studytui.core.jsoncache import Invalid, Stamps, digest_hex, racy, unchanged
from studytui.core.text import printable_but
from studytui.guide.model import Claim, Entry, GlossaryTerm, Guide, Policy, Section, Subsection, TryIt

FORMAT = 1
SUBDIR = "guide"
# The modules whose code decides what a guide parsed from the YAML holds.
CODE_FILES = ("guide/loader.py", "guide/model.py", "core/yamlio.py", "guide/cache.py", "core/jsoncache.py")  # within the package

__all__ = ["Invalid", "Stamps", "racy", "digest_hex", "unchanged", "read", "write", "cache_file", "code_stamps"]


# -- the loader's rules that a kept guide is checked against ------------------------------------
# Content text reaches terminals and browsers: no control characters anywhere (an ESC in a title
# would be a terminal command), and none at all, tabs and line breaks included, in one-line fields.
# Here rather than in loader.py, which uses them too: a warm run checks the kept guide with them
# and never imports the loader.
CONTROL_IN_PROSE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
CONTROL_IN_LINE = re.compile("[\x00-\x1f\x7f-\x9f]")


def display(path: str | os.PathLike[str], cwd: str | None = None) -> str:
    """How a content file is named in messages and in `Entry.source_file`: relative to the
    working folder (`cwd`: the current one) when it is inside it, else its whole path; with `/`
    between names. Text operations on a normalised path (a Path, or one's str): `relpath` already
    gives the normal form that `PurePath.as_posix` would."""
    text = os.fspath(path)
    rel = os.path.relpath(text, cwd if cwd is not None else os.getcwd())
    shown = text if rel.startswith("..") else rel
    return shown if os.sep == "/" else shown.replace(os.sep, "/")


# -- loading: kept in this process, kept by an earlier run, or parsed --------------------------

# Guides loaded in this process, by resolved content folder: (the stamps they were built from, guide).
_LOADED: dict[str, tuple[list[tuple[str, FullStamp | None]], Guide]] = {}


def load_guide(content_dir: str | os.PathLike[str] | None = None) -> Guide:
    """The validated guide. Raises ContentError listing `FILE:LINE: message` problems.

    The same Guide object while no file it was built from has changed; else the one kept by an
    earlier run (the cache), else the YAML parsed and validated again (and the cache written)."""
    import time

    from studytui.core.paths import content_dir as resolve

    root = resolve(content_dir).resolve()
    key = str(root)
    kept = _LOADED.get(key)
    if kept is not None and unchanged(kept[0]):
        return kept[1]
    _LOADED.pop(key, None)
    hit = read(root)
    if hit is not None:
        _LOADED[key] = (hit[1], hit[0])
        return hit[0]
    taken_at = time.time()
    from studytui.guide import loader

    parsed = loader.parse_content(root)
    if parsed.guide is None:
        raise ContentError(parsed.problems or [f"{root}: content could not be loaded"])
    write(root, parsed.guide, parsed.stamps, taken_at)
    if not racy(parsed.stamps, taken_at):
        _LOADED[key] = (parsed.stamps, parsed.guide)
    return parsed.guide


# -- where -------------------------------------------------------------------------------------


def cache_file(content_root: Path) -> Path:
    """The cache file for a content folder (its resolved path)."""
    from studytui.core.paths import cache_dir

    name = digest_hex(os.fsencode(str(content_root)))[:24]
    return cache_dir() / SUBDIR / f"guide-{name}.json"


def code_stamps() -> Stamps:
    return jsoncache.code_stamps(CODE_FILES)


# -- reading -----------------------------------------------------------------------------------


def read(content_root: Path) -> tuple[Guide, Stamps] | None:
    """The kept guide for `content_root` and the stamps it was kept under, when it is still
    valid; else None (never raises)."""
    try:
        path = cache_file(content_root)
        raw = jsoncache.read_private(path)
        if raw is None:
            return None
        return decode(raw, content_root)
    except (Invalid, OSError, ValueError, TypeError, KeyError, IndexError, RecursionError, UnicodeDecodeError):
        return None


def decode(raw: bytes, content_root: Path) -> tuple[Guide, Stamps]:
    """Rebuild the guide from a cache file's bytes; Invalid (or a JSON error) when anything is off."""
    header, payload = jsoncache.header_and_payload(raw)
    if header.get("guide_format") != FORMAT or header.get("content_dir") != str(content_root):
        raise Invalid("another guide format or content folder")
    files, code = jsoncache.parse_stamps(header.get("files")), jsoncache.parse_stamps(header.get("code"))
    if code != code_stamps():
        raise Invalid("the loader's code changed")
    if files[0][0] != str(content_root / "guide.yaml") or not unchanged(files):
        raise Invalid("the content changed")
    return _guide(json.loads(payload), [path for path, _ in files], str(content_root)), files


# -- writing -----------------------------------------------------------------------------------


def write(content_root: Path, guide: Guide, stamps: Stamps, taken_at: float) -> bool:
    """Keep `guide` (built from the files in `stamps`, stamped at `taken_at`); False when it was
    not written (a file changed too recently, the guide does not survive the round trip, or the
    cache directory cannot be written)."""
    code = code_stamps()
    if not stamps or stamps[0][0] != str(content_root / "guide.yaml") or racy(stamps + code, taken_at):
        return False
    try:
        raw = encode(content_root, guide, stamps, code)
        if decode_unchecked(raw, content_root) != guide:
            return False  # a value JSON cannot carry as it is (a date in try_it args): parse every time
    except (Invalid, TypeError, ValueError, KeyError, IndexError, RecursionError):
        return False
    try:
        jsoncache.write_private(cache_file(content_root), raw)
    except OSError:
        return False
    return True


def encode(content_root: Path, guide: Guide, stamps: Stamps, code: Stamps) -> bytes:
    files = [path for path, _ in stamps]
    payload = json.dumps(_plain_guide(guide, files), ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    header = {"guide_format": FORMAT, "content_dir": str(content_root),
              "files": jsoncache.stamp_rows(stamps), "code": jsoncache.stamp_rows(code)}
    return jsoncache.framed(header, payload)


def decode_unchecked(raw: bytes, content_root: Path) -> Guide:
    """The payload of `raw` rebuilt without looking at the stamps (the write's own round trip)."""
    head, _, payload = raw.partition(b"\n")
    header = json.loads(head)
    return _guide(json.loads(payload), [path for path, _ in jsoncache.parse_stamps(header["files"])], str(content_root))


# -- the model as plain values, and back ---------------------------------------------------------
# Every field of every class, in the model's order, with the kind of value it holds. A test keeps
# these lists equal to the dataclasses' fields, so a field added to the model cannot be dropped here.
# Records are JSON lists in this order; "line" text may hold no control character at all, "prose"
# text no control character but tab and line feed (the loader's two rules).

LINE, PROSE, OPT_LINE, OPT_PROSE, INT, OPT_INT, BOOL, LINES = "line", "prose", "line?", "prose?", "int", "int?", "bool", "lines"

CLAIM_SCHEMA = tuple((name, PROSE) for name in ("value", "hardware", "workload", "precision", "baseline", "correctness",
                                                 "software", "algorithm"))
TRY_IT_SCHEMA = (("calc", LINE), ("args", "args"), ("label", LINE))
ENTRY_SCHEMA = (
    ("id", LINE), ("title", LINE), ("url", OPT_LINE), ("kind", OPT_LINE), ("summary", PROSE), ("section_id", LINE),
    ("section_title", LINE), ("subsection_id", LINE), ("subsection_title", OPT_LINE), ("index", INT),
    ("authors", LINES), ("year", OPT_INT), ("tags", LINES), ("aliases", LINES), ("role", LINE), ("date", OPT_LINE),
    ("no_url_reason", OPT_PROSE), ("also_names", LINES), ("related_urls", LINES), ("claims", "claims"),
    ("try_it", "try_it"), ("placement", OPT_LINE), ("source_file", "file"), ("source_line", INT),
)
SUBSECTION_SCHEMA = (("id", LINE), ("title", OPT_LINE), ("entries", "entries"))
SECTION_SCHEMA = (("id", LINE), ("title", LINE), ("intro", PROSE), ("subsections", "subsections"), ("ordered", BOOL),
                  ("verified_on", OPT_LINE), ("source_file", "file"))
TERM_SCHEMA = (("id", LINE), ("term", LINE), ("definition", PROSE), ("see", LINES), ("aliases", LINES))
POLICY_SCHEMA = (("text", PROSE), ("admitted_kinds", LINES), ("claim_fields", LINES))
GUIDE_SCHEMA = (("title", LINE), ("source_repo", LINE), ("license", LINE), ("sections", "sections"),
                ("glossary", "glossary"), ("policy", "policy"))
SCHEMAS = {"Claim": CLAIM_SCHEMA, "TryIt": TRY_IT_SCHEMA, "Entry": ENTRY_SCHEMA, "Subsection": SUBSECTION_SCHEMA,
           "Section": SECTION_SCHEMA, "GlossaryTerm": TERM_SCHEMA, "Policy": POLICY_SCHEMA, "Guide": GUIDE_SCHEMA}


def _value(obj: Any, name: str, kind: str, files: list[str]) -> Any:
    value = getattr(obj, name)
    if kind == "file":
        return files.index(_file_of(value, files))
    if kind == LINES:
        return list(value)
    if kind == "claims":
        return [[getattr(c, n) for n, _ in CLAIM_SCHEMA] for c in value]
    if kind == "try_it":
        return None if value is None else [value.calc, dict(value.args), value.label]
    return value


def _table(objects: Any, schema: tuple[tuple[str, str], ...], files: list[str]) -> dict[str, list[Any]]:
    """Objects of one class as columns, one list per field (the nested kinds left out)."""
    return {name: [_value(o, name, kind, files) for o in objects] for name, kind in schema if kind not in _NESTED}


def _file_of(shown: str, files: list[str]) -> str:
    """The stamped path whose display form (`display`) is `shown`."""
    for path in files:
        if display(path) == shown:
            return path
    raise Invalid(f"no stamped file for {shown!r}")


_NESTED = ("subsections", "entries", "sections", "glossary", "policy")


def _plain_guide(guide: Guide, files: list[str]) -> dict[str, Any]:
    """The guide as columns: every entry's id in one list, every title in another...; sections and
    subsections say how many of the next level's records are theirs."""
    subsections = [sub for s in guide.sections for sub in s.subsections]
    return {
        "guide": [guide.title, guide.source_repo, guide.license],
        "policy": [_value(guide.policy, n, k, files) for n, k in POLICY_SCHEMA],
        "sections": {**_table(guide.sections, SECTION_SCHEMA, files), "count": [len(s.subsections) for s in guide.sections]},
        "subsections": {**_table(subsections, SUBSECTION_SCHEMA, files), "count": [len(sub.entries) for sub in subsections]},
        "entries": _table([e for sub in subsections for e in sub.entries], ENTRY_SCHEMA, files),
        "glossary": _table(guide.glossary, TERM_SCHEMA, files),
    }


_NONE = type(None)
_TEXT = frozenset({str})
_TYPES = {LINE: _TEXT, PROSE: _TEXT, OPT_LINE: frozenset({str, _NONE}), OPT_PROSE: frozenset({str, _NONE}),
          INT: frozenset({int}), OPT_INT: frozenset({int, _NONE}), BOOL: frozenset({bool}), LINES: frozenset({list}),
          "claims": frozenset({list}), "try_it": frozenset({list, _NONE}), "file": frozenset({int}),
          "args": frozenset({dict})}


class _Rebuild:
    """Turns the JSON columns back into the model, checking every value (Invalid at the first
    wrong one): its type, and the loader's control-character rule for its text. The types are
    checked a column at a time and the texts gathered, one search for each rule over all of them
    at the end (`checked`), so a warm load stays a few milliseconds."""

    def __init__(self, files: list[str]) -> None:
        cwd = os.getcwd()
        self.displays = [display(f, cwd) for f in files]
        self.line = CONTROL_IN_LINE.search
        self.prose = CONTROL_IN_PROSE.search
        self.lines: list[str] = []  # texts under the "line" rule, then under the "prose" rule
        self.proses: list[str] = []

    def texts(self, values: Any, kind: str) -> None:
        """Gather texts for the rule of their kind (`values`: text, or None for optional kinds)."""
        (self.lines if kind in (LINE, OPT_LINE, LINES) else self.proses).extend(filter(None, values))

    def checked(self) -> None:
        """Invalid when a gathered text breaks the rule for its kind."""
        lines, proses = " ".join(self.lines), " ".join(self.proses)
        # (isprintable first: the regex's scan of the whole guide's text took a millisecond)
        if (not printable_but(lines) and self.line(lines)) or (not printable_but(proses, "\t\n") and self.prose(proses)):
            raise Invalid("a control character")

    def columns(self, data: Any, schema: tuple[tuple[str, str], ...], extra: tuple[str, ...] = ()) -> list[list[Any]]:
        """The columns of `data` in `schema`'s order (nested kinds skipped, `extra` last), checked."""
        names = [name for name, kind in schema if kind not in _NESTED] + list(extra)
        if type(data) is not dict or sorted(data) != sorted(names):
            raise Invalid("a table of the wrong shape")
        size = len(data[names[0]])
        out = []
        for name, kind in [(n, k) for n, k in schema if k not in _NESTED] + [(e, INT) for e in extra]:
            column = data[name]
            if type(column) is not list or len(column) != size:
                raise Invalid("a column of the wrong length")
            if not set(map(type, column)) <= _TYPES[kind]:
                raise Invalid(f"{name}: a value of the wrong type")
            if kind in (LINE, PROSE, OPT_LINE, OPT_PROSE):
                self.texts(column, kind)
            elif kind == LINES:
                texts = list(chain.from_iterable(column))
                if not set(map(type, texts)) <= _TEXT:
                    raise Invalid(f"{name}: a list of text holding something else")
                self.texts(texts, kind)
                column = list(map(tuple, column))
            elif kind == "file":
                if any(not 0 <= v < len(self.displays) for v in column):
                    raise Invalid("not a stamped file")
                column = [self.displays[v] for v in column]
            elif kind == "claims":
                column = [tuple(Claim(*self.record(c, CLAIM_SCHEMA)) for c in claims) if claims else () for claims in column]
            elif kind == "try_it":
                column = [None if t is None else self.try_it(t) for t in column]
            out.append(column)
        return out

    def record(self, row: Any, schema: tuple[tuple[str, str], ...]) -> list[Any]:
        """One record of plain fields (text and lists of text), checked."""
        if type(row) is not list or len(row) != len(schema):
            raise Invalid("a record of the wrong shape")
        out = []
        for value, (_, kind) in zip(row, schema):
            if type(value) not in _TYPES[kind]:
                raise Invalid("a value of the wrong type")
            if kind == LINES:
                if any(type(item) is not str for item in value):
                    raise Invalid("a list of text holding something else")
                self.texts(value, kind)
                value = tuple(value)
            elif kind in (LINE, PROSE, OPT_LINE, OPT_PROSE):
                self.texts((value,), kind)
            out.append(value)
        return out

    def try_it(self, row: Any) -> TryIt:
        if type(row) is not list or len(row) != 3 or type(row[1]) is not dict:
            raise Invalid("a try_it of the wrong shape")
        calc, label = self.record([row[0], row[2]], (TRY_IT_SCHEMA[0], TRY_IT_SCHEMA[2]))
        args = {}
        for key, value in row[1].items():
            self.texts((key,), LINE)
            if type(value) is str:
                self.texts((value,), PROSE)
            elif not (value is None or type(value) in (int, float, bool)):
                raise Invalid("a try_it argument that is not a scalar")
            args[key] = value
        return TryIt(calc, args, label)

    @staticmethod
    def split(items: list[Any], counts: list[int]) -> list[tuple[Any, ...]]:
        """`items` cut into consecutive groups of `counts` (Invalid unless they add up exactly)."""
        if any(c < 0 for c in counts) or sum(counts) != len(items):
            raise Invalid("counts that do not add up")
        out, start = [], 0
        for count in counts:
            out.append(tuple(items[start:start + count]))
            start += count
        return out

    def guide(self, data: Any, content_dir: str) -> Guide:
        if type(data) is not dict or sorted(data) != ["entries", "glossary", "guide", "policy", "sections", "subsections"]:
            raise Invalid("not a guide")
        title, repo, license_ = self.record(data["guide"], GUIDE_SCHEMA[:3])
        entries = list(map(Entry, *self.columns(data["entries"], ENTRY_SCHEMA)))
        *sub_cols, sub_counts = self.columns(data["subsections"], SUBSECTION_SCHEMA, ("count",))
        sub_id, sub_title = sub_cols
        subsections = list(map(Subsection, sub_id, sub_title, self.split(entries, sub_counts)))
        *sec_cols, sec_counts = self.columns(data["sections"], SECTION_SCHEMA, ("count",))
        sid, stitle, intro, ordered, verified, source = sec_cols
        sections = tuple(map(Section, sid, stitle, intro, self.split(subsections, sec_counts), ordered, verified, source))
        glossary = tuple(map(GlossaryTerm, *self.columns(data["glossary"], TERM_SCHEMA)))
        policy = Policy(*self.record(data["policy"], POLICY_SCHEMA))
        self.checked()
        return Guide(title=title, source_repo=repo, license=license_, sections=sections, glossary=glossary,
                     policy=policy, content_dir=content_dir)


def _guide(data: Any, files: list[str], content_dir: str) -> Guide:
    return _Rebuild(files).guide(data, content_dir)
