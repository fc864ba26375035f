"""Three-way merge of note texts (difflib only): two edits of one note made from a common version.

`merge3(base, ours, theirs)` applies both sides' changes to `base`:

- one side unchanged: the other side's text;
- changes to different parts of the note (by line): both applied;
- the same change on both sides: once;
- text inserted at the same point by both sides (both appended at the end, the typical case):
  both kept, ours first (and only once when one insertion already holds the other);
- both sides changed the same lines differently: those lines are merged again word by word
  (prose typed on one long line); what still clashes is kept once each, ours, then one marker
  line naming the other side, then theirs - for that hunk only, never the whole text twice.

Without a common version (`two_way`) nothing is known about who changed what: a shared start and
end are kept once, and only the differing middles are kept side by side with a marker line.
"""

from __future__ import annotations

import difflib
import re
from typing import Callable, Sequence

from studytui.core.tuples import Tuple

# Lines with their newline in front ("a", "\nb", "\n"): appending a line, with or without a final
# newline, is then a pure insertion instead of a change to the last line.
_LINES = re.compile(r"(?:\A|\n)[^\n]*")
# Words with the blank space in front of them: appending " word" is a pure insertion.
_WORDS = re.compile(r"\s*\S+|\s+")
# Above this many tokens difflib's "popular element" heuristic keeps a diff near-linear.
_AUTOJUNK_ABOVE = 20_000


def _lines(text: str) -> list[str]:
    return [t for t in _LINES.findall(text) if t]


def _words(text: str) -> list[str]:
    return _WORDS.findall(text)


class Merged(Tuple):
    text: str
    conflicts: int  # marker lines written


class _Change(Tuple):
    start: int  # range of base tokens replaced
    end: int
    side: int  # 0 ours, 1 theirs
    new: tuple[str, ...]  # what replaces them


def _changes(base: Sequence[str], other: Sequence[str], side: int) -> list[_Change]:
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=len(base) + len(other) > _AUTOJUNK_ABOVE)
    return [
        _Change(i1, i2, side, tuple(other[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _apply(base: Sequence[str], lo: int, hi: int, changes: list[_Change]) -> str:
    """base[lo:hi] with one side's (sorted, disjoint) changes applied."""
    out: list[str] = []
    at = lo
    for c in changes:
        out.extend(base[at:c.start])
        out.extend(c.new)
        at = c.end
    out.extend(base[at:hi])
    return "".join(out)


def holds(big: str, small: str) -> bool:
    """`small` occurs in `big` as whole words (so "w1" is not held by "w12", nor "a" by "banana")."""
    if not small:
        return True
    start = big.find(small)
    while start >= 0:
        end = start + len(small)
        left_ok = start == 0 or not (big[start - 1].isalnum() and small[0].isalnum())
        right_ok = end == len(big) or not (big[end].isalnum() and small[-1].isalnum())
        if left_ok and right_ok:
            return True
        start = big.find(small, start + 1)
    return False


def _join_insertions(ours: Sequence[str], theirs: Sequence[str], union: bool) -> str:
    """Both sides inserted tokens at one point (both appended at the end, typically): both kept,
    ours first, or once when one holds the other. `union` (lines): lines both inserted are kept
    once, and what only theirs has goes where it stands in theirs (after ours' own lines where
    the two differ). Nothing either typed is lost."""
    ours_text, theirs_text = "".join(ours), "".join(theirs)
    if holds(ours_text, theirs_text):
        return ours_text
    if holds(theirs_text, ours_text):
        return theirs_text
    if not union:  # words: interleaving two sentences would garble both
        glue = "" if ours_text[-1:].isspace() or theirs_text[:1].isspace() else " "
        return ours_text + glue + theirs_text
    matcher = difflib.SequenceMatcher(None, ours, theirs, autojunk=len(ours) + len(theirs) > _AUTOJUNK_ABOVE)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(ours[i1:i2])
            continue
        piece = "".join(ours[i1:i2])
        extra = "".join(theirs[j1:j2])
        if piece and extra and not (piece[-1:].isspace() or extra[:1].isspace()):
            extra = " " + extra  # never two words run into one
        elif not piece and extra and out and not (out[-1][-1:].isspace() or extra[:1].isspace()):
            extra = " " + extra
        out.append(piece + extra)
    return "".join(out)


def _conflict_hunk(ours: str, theirs: str, marker: str) -> str:
    """ours, then the marker on a line of its own, then theirs."""
    if not theirs.startswith("\n"):
        theirs = "\n" + theirs
    return ours + ("" if ours.endswith("\n") else "\n") + marker + theirs


def _merge_tokens(
    base: list[str], ours: list[str], theirs: list[str], marker: str,
    refine: Callable[[str, str, str, str], Merged | None] | None, touching: bool,
) -> Merged:
    """`touching`: changes next to each other (no token left unchanged between them) clash too
    (for words: "v1" rewritten on one side, "v1 + typed" on the other); for lines they do not."""
    changes = sorted(_changes(base, ours, 0) + _changes(base, theirs, 1), key=lambda c: (c.start, c.end, c.side))
    out: list[str] = []
    conflicts = 0
    at = 0
    i = 0
    while i < len(changes):
        group = [changes[i]]
        lo, hi = changes[i].start, changes[i].end
        i += 1
        while i < len(changes):
            c = changes[i]
            # Overlapping base ranges clash; so do two insertions at the same point.
            if c.start < hi or (c.start == hi and (touching or c.start == c.end == lo)):
                group.append(c)
                hi = max(hi, c.end)
                i += 1
            else:
                break
        out.append("".join(base[at:lo]))
        at = hi
        mine = [c for c in group if c.side == 0]
        other = [c for c in group if c.side == 1]
        ours_text = _apply(base, lo, hi, mine)
        theirs_text = _apply(base, lo, hi, other)
        if not mine:
            out.append(theirs_text)
        elif not other or ours_text == theirs_text:
            out.append(ours_text)
        elif lo == hi:
            out.append(_join_insertions(mine[0].new, other[0].new, union=not touching))
        else:
            finer = refine("".join(base[lo:hi]), ours_text, theirs_text, marker) if refine is not None else None
            if finer is not None:
                out.append(finer.text)
                conflicts += finer.conflicts
            else:
                out.append(_conflict_hunk(ours_text, theirs_text, marker))
                conflicts += 1
    out.append("".join(base[at:]))
    return Merged("".join(out), conflicts)


def _refine_by_words(base: str, ours: str, theirs: str, marker: str) -> Merged | None:
    """The same lines changed on both sides: merge them word by word. Used when that resolves
    every clash, or when the hunk is a single line (one long line of prose), where a marker
    between words keeps far less twice than one between whole lines."""
    merged = _merge_tokens(_words(base), _words(ours), _words(theirs), marker, None, touching=True)
    if merged.conflicts == 0:
        return merged
    single_line = ours.strip("\n").count("\n") == 0 and theirs.strip("\n").count("\n") == 0
    return merged if single_line else None


def merge3(base: str, ours: str, theirs: str, marker: str) -> Merged:
    """Both sides' edits of `base` in one text. `marker`: the line put between clashing hunks."""
    if ours == theirs or theirs == base:
        return Merged(ours, 0)
    if ours == base:
        return Merged(theirs, 0)
    # Merged with a newline in front of each text, so that every line token starts with one (a line
    # added before the first line is then an insertion too); that newline is taken off after.
    merged = _merge_tokens(
        _lines("\n" + base), _lines("\n" + ours), _lines("\n" + theirs), marker, _refine_by_words, touching=False
    )
    text = merged.text[1:] if merged.text.startswith("\n") else merged.text
    return Merged(text, merged.conflicts)


def two_way(ours: str, theirs: str, marker: str) -> Merged:
    """No common version known: identical or contained text once; otherwise the shared start and
    end once and both differing middles, ours then a marker line then theirs."""
    if holds(ours, theirs):
        return Merged(ours, 0)
    if holds(theirs, ours):
        return Merged(theirs, 0)
    head = _shared_head(ours, theirs)
    tail = _shared_tail(ours[len(head):], theirs[len(head):])
    mid_ours = ours[len(head):len(ours) - len(tail)]
    mid_theirs = theirs[len(head):len(theirs) - len(tail)]
    hunk = _conflict_hunk(mid_ours, mid_theirs, marker)
    if not head and hunk.startswith("\n"):
        hunk = hunk[1:]
    return Merged(head + hunk + tail, 1)


def _shared_head(a: str, b: str) -> str:
    """The longest common start of a and b, cut back to the end of a line (whole lines only, so
    the marker never splits a line another side wrote)."""
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    cut = a.rfind("\n", 0, n)
    return a[:cut + 1] if cut >= 0 else ""


def _shared_tail(a: str, b: str) -> str:
    """The longest common end of a and b, from the start of a line."""
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    if n == 0:
        return ""
    tail = a[len(a) - n:]
    cut = tail.find("\n")
    return tail[cut:] if cut >= 0 else ""
