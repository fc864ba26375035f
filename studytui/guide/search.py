"""Keyword jump over the guide: ranked, precise, tolerant of case, punctuation, hyphens and typos.

How a query is read, as a learner means it:
- Case, punctuation and hyphens do not matter: "stream k", "Stream-K" and "streamk" are the same
  query. Every field is kept both as words and as one compact string without separators.
- Every word of the query must match (an entry matching only some words is not a match), so a
  longer query narrows the list.
- Short words are not wildcards: a word of one or two letters is looked for only in names
  (titles, tags, ids, notes), a one-letter word only as that whole word, and a short word next
  to another is read joined to it ("stream k" = "streamk", "deepseek v3" = "deepseekv3"). Only
  the word still being typed (the last) matches as a word prefix, from two letters on; inside a
  word, only from four letters ("tma" does not find "softmax").
- Typos: when nothing matches, a word the guide does not contain is replaced by the closest word
  it does contain (one edit away, or the word typed with letters left out: `stremk` -> Stream-K,
  `flashattn` -> FlashAttention), and the search runs again.
- Ranking: a title equal to the query, then starting with it, then the weighted field hits
  (title > tags > authors > id > notes > section > summary), then guide order.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Iterable, Mapping

from studytui.core.tuples import Tuple
from studytui.guide.model import Entry

_NON_ALNUM = re.compile(r"[^0-9a-z]+")  # what separates words (after lower-casing)
# The same rule as byte tables, for the index (issue 27): building it with the regex was most of
# `studytui search`. After lower(), a character other than ASCII 0-9 a-z separates words: as bytes,
# every other ASCII byte becomes a space, and each non-ASCII character is first replaced by one.
_KEEP = b"0123456789abcdefghijklmnopqrstuvwxyz"
_TO_SPACE = bytes(c if c in _KEEP else 0x20 for c in range(256))
_DROP = bytes(c for c in range(128) if c not in _KEEP)

# Field weights: a hit in the title says far more than one in the summary.
WEIGHTS = {"title": 10.0, "tags": 6.0, "authors": 5.0, "section": 3.0, "id": 4.0, "summary": 2.0, "notes": 3.0}
SHORT = 2  # words this short are never matched inside other words
INSIDE_MIN = 4  # a word matches inside another word only from this length
NAME_FIELDS = frozenset({"title", "tags", "id", "notes"})  # where a word of one or two letters is matched


def words(text: str) -> list[str]:
    """Lower-case alphanumeric words of `text` (punctuation and hyphens split words): the runs of
    0-9 a-z in `text.lower()`."""
    return text.lower().encode("ascii", "replace").translate(_TO_SPACE).decode("ascii").split()


def compact(text: str) -> str:
    """`text.lower()` with everything but 0-9 a-z left out."""
    return text.lower().encode("ascii", "ignore").translate(None, _DROP).decode("ascii")


def _tokens(text: str) -> set[str]:
    """Words, plus each whitespace-separated token with its hyphens removed ("Stream-K:" -> "streamk")."""
    out = set(words(text))
    out.update(c for c in (compact(t) for t in text.split()) if c)
    return out


class SearchHit(Tuple):
    entry: Entry
    score: float
    fields: tuple[str, ...]  # the fields that matched, best first

    @property
    def matched(self) -> str:
        """Where the words matched, as `studytui search` and the app's `/` both say it: the best
        three fields ('title, tags, id'), under the heading or after the words "matched in"."""
        return ", ".join(self.fields[:3])


class _Field:
    __slots__ = ("name", "words", "spaced", "compact", "weight")

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        split = words(text)
        self.words = frozenset(split)
        self.spaced = " " + " ".join(split)  # " t" in spaced: some word starts with t
        self.compact = "".join(split)
        self.weight = WEIGHTS[name]


class _Doc:
    __slots__ = ("entry", "fields", "all_compact", "title_compact", "name_words", "name_spaced")

    def __init__(self, entry: Entry) -> None:
        self.entry = entry
        texts = {
            "title": " ".join((entry.title,) + entry.also_names),
            "tags": " ".join(entry.tags),
            "authors": " ".join(entry.authors),
            "section": f"{entry.section_title} {entry.subsection_title or ''}",
            "id": entry.id,
            "summary": entry.summary,
        }
        self.fields = [_Field(name, text) for name, text in texts.items()]
        self.all_compact = "\x00".join(f.compact for f in self.fields)
        self.title_compact = self.fields[0].compact
        # Where a one-letter word means something: names, not prose ("a" is in every summary).
        self.name_words = self.fields[0].words | self.fields[1].words | self.fields[4].words
        self.name_spaced = " " + " ".join(self.name_words)


class _Term(Tuple):
    """One unit of the query: a word, or a short word read joined to its neighbour."""

    text: str
    last: bool  # still being typed: may match as a word prefix
    parts: int = 1  # query words it stands for


def _plan(terms: list[str]) -> list[_Term]:
    """Join each short word to its neighbour: "stream k" -> "streamk", "kv cache" -> "kvcache"."""
    if len(terms) == 1:
        return [_Term(terms[0], last=True)]
    out: list[_Term] = []
    i = 0
    while i < len(terms):
        word = terms[i]
        nxt = terms[i + 1] if i + 1 < len(terms) else None
        if nxt is not None and (len(nxt) <= SHORT or len(word) <= SHORT):
            out.append(_Term(word + nxt, last=i + 1 == len(terms) - 1, parts=2))
            i += 2
            continue
        out.append(_Term(word, last=i == len(terms) - 1))
        i += 1
    return out


def _term_score(term: _Term, field: _Field) -> float:
    """How well one term matches one field: whole word > word prefix > inside a word."""
    t = term.text
    if len(t) <= SHORT and term.parts == 1 and field.name not in NAME_FIELDS:
        return 0.0
    if t in field.words:
        return 1.0
    if term.parts > 1:
        # A joined pair ("streamk") is found in the compact text, across the hyphen.
        return 0.9 if t in field.compact else 0.0
    if len(t) <= 1 or t not in field.compact:
        # Plural or singular forms: "kernels" finds "kernel".
        if len(t) > 3 and t[-1] == "s" and t[:-1] in field.words:
            return 0.6
        return 0.0
    if (term.last or len(t) > SHORT) and " " + t in field.spaced:
        return 0.8 if len(t) > SHORT else 0.4
    # Short terms inside longer words are noise ("tma" in "softmax").
    return 0.5 if len(t) >= INSIDE_MIN else 0.0


def _within_one_edit(a: str, b: str) -> bool:
    """True when b is a, or a with one letter changed, added, removed or two neighbours swapped."""
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    i = 0
    while i < min(la, lb) and a[i] == b[i]:
        i += 1
    if la == lb:
        if a[i + 1:] == b[i + 1:]:
            return True
        return i + 1 < la and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2:] == b[i + 2:]
    if la > lb:
        return a[i + 1:] == b[i:]
    return a[i:] == b[i + 1:]


def _is_abbreviation(term: str, word: str) -> bool:
    """`term` is `word` typed with letters left out, keeping its start ("flashattn", "stremk")."""
    if len(term) >= len(word) or len(term) * 2 < len(word) or word[:2] != term[:2]:
        return False
    it = iter(word)
    return all(c in it for c in term)


class SearchIndex:
    """Precomputed search fields for a list of entries; `search` is a few ms at 5,000 entries."""

    def __init__(self, entries: Iterable[Entry]) -> None:
        self.docs = [_Doc(e) for e in entries]
        self._vocabulary: dict[str, list[str]] | None = None  # by first letter, built on first typo
        # Every entry's compact text in one string, so finding the entries that hold a term is a
        # few C-level `find`s rather than a Python loop over every entry.
        self._starts: list[int] = []
        parts, at = [], 0
        for doc in self.docs:
            self._starts.append(at)
            parts.append(doc.all_compact)
            at += len(doc.all_compact) + 1
        self._blob = "\x01".join(parts)
        self._index_of = {doc.entry.id: i for i, doc in enumerate(self.docs)}

    def _holding(self, needle: str) -> list[int]:
        """Indexes of the entries whose compact text contains `needle`, in guide order."""
        out: list[int] = []
        starts, find = self._starts, self._blob.find
        n = len(starts)
        at = find(needle)
        while at >= 0:
            i = bisect_right(starts, at) - 1
            out.append(i)
            if i + 1 >= n:
                break
            at = find(needle, starts[i + 1])
        return out

    # --- typos --------------------------------------------------------------------------------
    def _words_by_letter(self) -> dict[str, list[str]]:
        if self._vocabulary is None:
            vocab: set[str] = set()
            for doc in self.docs:
                e = doc.entry
                vocab.update(_tokens(" ".join((e.title, *e.also_names, *e.tags, e.id))))
            by_letter: dict[str, list[str]] = {}
            for word in sorted(vocab):
                if len(word) >= INSIDE_MIN:
                    by_letter.setdefault(word[0], []).append(word)
            self._vocabulary = by_letter
        return self._vocabulary

    def correction(self, term: str) -> str | None:
        """The guide's closest word to a word it does not contain (None: nothing close)."""
        if len(term) < INSIDE_MIN:
            return None
        best: tuple[int, int, str] | None = None
        for word in self._words_by_letter().get(term[0], ()):
            if _within_one_edit(term, word):
                rank = (0, len(word), word)
            elif _is_abbreviation(term, word):
                rank = (1, len(word), word)
            else:
                continue
            if best is None or rank < best:
                best = rank
        return best[2] if best is not None else None

    def _corrected(self, terms: list[str], notes: Mapping[str, _Field]) -> list[str] | None:
        out, changed = [], False
        for term in terms:
            known = term in self._blob or any(term in f.compact for f in notes.values())
            fixed = None if known else self.correction(term)
            if fixed is not None and fixed != term:
                out.append(fixed)
                changed = True
            else:
                out.append(term)
        return out if changed else None

    # --- search -------------------------------------------------------------------------------
    def search(self, query: str, limit: int | None = None, note_texts: Mapping[str, str] | None = None) -> list[SearchHit]:
        """Entries matching every word of `query`, best first (typos corrected when nothing matches)."""
        terms = words(query)
        if not terms:
            return []
        notes = {k: _Field("notes", v) for k, v in (note_texts or {}).items() if v}
        result = self._search(terms, notes)
        if not result:
            corrected = self._corrected(terms, notes)
            if corrected is not None:
                result = self._search(corrected, notes)
        return result[:limit] if limit is not None else result

    def _search(self, terms: list[str], notes: Mapping[str, _Field]) -> list[SearchHit]:
        plan = _plan(terms)
        whole = "".join(terms)
        hits: list[tuple[float, int, SearchHit]] = []
        # Only entries holding every term (a plural also by its singular), plus any with a note.
        candidates: set[int] | None = None
        for term in sorted(plan, key=lambda t: -len(t.text)):
            if len(term.text) <= SHORT and term.parts == 1:
                pool = candidates if candidates is not None else range(len(self.docs))
                docs, t = self.docs, term.text
                if term.last and len(t) == SHORT:
                    found = {i for i in pool if " " + t in docs[i].name_spaced}
                else:
                    found = {i for i in pool if t in docs[i].name_words}
            else:
                needle = term.text[:-1] if len(term.text) > 3 and term.text[-1] == "s" else term.text
                found = set(self._holding(needle))
            candidates = found if candidates is None else candidates & found
            if not candidates:
                break
        chosen = set(candidates or ())
        if notes:
            chosen.update(self._index_of[k] for k in notes if k in self._index_of)
        for i in sorted(chosen):
            doc = self.docs[i]
            note = notes.get(doc.entry.id)
            fields = doc.fields + [note] if note is not None else doc.fields
            score = 0.0
            field_hits: dict[str, float] = {}
            for term in plan:
                best = 0.0
                for f in fields:
                    s = _term_score(term, f)
                    if s:
                        weighted = s * f.weight * term.parts
                        best = max(best, weighted)
                        field_hits[f.name] = field_hits.get(f.name, 0.0) + weighted
                if not best:
                    break  # every term must match
                score += best
            else:
                # The query as one compact string ("streamk" vs "stream-k" vs "stream k").
                if len(whole) > 2:
                    if doc.title_compact == whole:
                        score += 30.0
                    elif doc.title_compact.startswith(whole):
                        score += 15.0
                    elif whole in doc.title_compact:
                        score += 8.0
                ordered = tuple(sorted(field_hits, key=lambda n: -field_hits[n]))
                hits.append((score, -doc.entry.index, SearchHit(doc.entry, round(score, 3), ordered)))
        hits.sort(key=lambda h: (h[0], h[1]), reverse=True)
        return [h[2] for h in hits]
