"""`studytui export PATH --format anki`: an Anki package (.apkg) built with genanki.

Two decks: the glossary (a card each way, term -> definition and definition -> term, with the
entries a term comes from as source links) and the practice problems the learner has met (one
note per problem variant: question -> answer with its unit and the one-line why).

Every note's GUID comes from our ids ("glossary:<term id>", "problem:<problem id>:<seed>"), and
the models and decks have fixed ids, so importing a newer export into Anki updates the cards
the learner already has (keeping their review history) instead of adding duplicates.
Every field is HTML-escaped text: content and notes never become markup in Anki's webview.
"""

from __future__ import annotations

import hashlib
import html
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from studytui.core.errors import UsageError
from studytui.exports.report import Exported

if TYPE_CHECKING:
    import genanki

INSTALL_HINT = "the Anki export needs genanki: pip install 'studytui[anki]' (or -e \".[anki]\" in a checkout)"


def stable_id(name: str) -> int:
    """A fixed 31-bit id (what genanki expects for models and decks) from a name."""
    return (1 << 30) + int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big") % (1 << 30)


GLOSSARY_MODEL_ID = stable_id("studytui glossary model v1")
PROBLEM_MODEL_ID = stable_id("studytui problem model v1")
GLOSSARY_DECK_ID = stable_id("studytui deck glossary")
PROBLEM_DECK_ID = stable_id("studytui deck problems")
GLOSSARY_DECK = "studytui::Glossary"
PROBLEM_DECK = "studytui::Practice problems"


def glossary_guid(term_id: str) -> str:
    return f"studytui:glossary:{term_id}"


def problem_guid(problem_id: str, seed: int) -> str:
    return f"studytui:problem:{problem_id}:{seed}"


@dataclass(frozen=True)
class ProblemCard:
    """One problem variant the learner has met: the small interface the deck needs (`met_problems`
    builds these from the practice layer). `answer` is the value with its unit, `why` one line."""

    problem_id: str
    seed: int
    question: str
    answer: str
    why: str = ""
    entry_ids: tuple[str, ...] = ()
    section_id: str = ""


def met_problems(guide: Any, store: Any, warnings: list[str] | None = None) -> list[ProblemCard]:
    """One card per problem variant (problem, seed) the learner has attempted, oldest first.

    The answer is computed by the calculator now, as grading does (answers are never stored);
    a variant whose problem is gone from the content, or whose calculator refuses it, is left
    out with a warning.
    """
    from studytui.practice.grading import expected
    from studytui.practice.loader import load_problems

    attempts = store.attempts() if hasattr(store, "attempts") else []
    if not attempts:
        return []
    problems = load_problems(guide.content_dir)
    cards: list[ProblemCard] = []
    seen: set[tuple[str, int]] = set()
    for attempt in attempts:
        key = (attempt.problem_id, attempt.seed)
        if key in seen:
            continue
        seen.add(key)
        problem = problems.get(attempt.problem_id)
        if problem is None:
            if warnings is not None:
                warnings.append(f"no card for problem {_visible(attempt.problem_id)!r}: it is no longer in the content")
            continue
        variant = problem.variant(attempt.seed)
        try:
            answer = expected(variant).display(problem.unit)
            question = variant.question
            if problem.kind == "choice" and variant.choices:
                question += "\n\n" + " · ".join(variant.choices)
            why = " ".join(variant.notice.split())
        except (UsageError, ValueError) as exc:
            if warnings is not None:
                warnings.append(f"no card for {problem.id} (seed {attempt.seed}): {_visible(str(exc))}")
            continue
        cards.append(ProblemCard(problem.id, attempt.seed, question, answer, why, tuple(problem.entries), problem.section_id))
    return cards


# -- text to Anki fields ----------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# $...$ (not $$, not "$5 and $6"): opening $ before a non-space, closing $ after a non-space and
# not before a digit. $$...$$ is display maths.
_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?=\S)([^$\n]+?)(?<=\S)\$(?!\d)")


def _visible(text: str) -> str:
    """Control characters (escape sequences) shown as \\xNN text, never passed on."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def field_html(text: str) -> str:
    """Plain text -> an Anki field: escaped HTML, line breaks kept, $maths$ as \\( \\) and $$ $$ as \\[ \\]."""
    out = html.escape(_visible(text), quote=False)
    out = _DISPLAY_MATH.sub(lambda m: r"\[" + m.group(1) + r"\]", out)
    out = _INLINE_MATH.sub(lambda m: r"\(" + m.group(1) + r"\)", out)
    return out.replace("\r\n", "\n").replace("\n", "<br>")


def _source_links(guide: Any, entry_ids: Sequence[str]) -> str:
    links = []
    for entry_id in entry_ids:
        entry = guide.get(entry_id)
        if entry is None:
            continue
        title = html.escape(_visible(entry.title), quote=False)
        if entry.url and entry.url.startswith(("https://", "http://")):
            href = html.escape(entry.url, quote=True)
            links.append(f'<a href="{href}">{title}</a> <span class="sid">({html.escape(entry.id)})</span>')
        else:
            links.append(f'{title} <span class="sid">({html.escape(entry.id)})</span>')
    return "<br>".join(links)


def _tag(text: str) -> str:
    return re.sub(r"\s+", "-", text.strip()) or "untagged"


# -- package ----------------------------------------------------------------------------------

CSS = """.card { font-family: sans-serif; font-size: 20px; text-align: left; color: black; background: white; }
.source { font-size: 14px; margin-top: 1em; color: #555; }
.sid { font-family: monospace; font-size: 12px; }
.why { font-size: 16px; margin-top: 0.5em; }
"""


@dataclass
class AnkiSummary:
    glossary_notes: int = 0
    problem_notes: int = 0
    warnings: list[str] = field(default_factory=list)

    def line(self) -> str:
        problems = f"{self.problem_notes} practice problem notes" if self.problem_notes else "no practice problems met yet"
        return f"{self.glossary_notes} glossary notes (2 cards each), {problems}"


def build_package(guide: Any, problems: Sequence[ProblemCard]) -> tuple[genanki.Package, AnkiSummary]:
    try:
        import genanki
    except ModuleNotFoundError:
        raise UsageError(INSTALL_HINT) from None
    glossary_model = genanki.Model(
        GLOSSARY_MODEL_ID,
        "studytui glossary term",
        fields=[{"name": "Id"}, {"name": "Term"}, {"name": "Definition"}, {"name": "Aliases"}, {"name": "Source"}],
        templates=[
            {
                "name": "Term → definition",
                "qfmt": "{{Term}}",
                "afmt": '{{FrontSide}}<hr id="answer">{{Definition}}'
                '{{#Aliases}}<div class="source">Also: {{Aliases}}</div>{{/Aliases}}'
                '{{#Source}}<div class="source">{{Source}}</div>{{/Source}}',
            },
            {
                "name": "Definition → term",
                "qfmt": "{{Definition}}",
                "afmt": '{{FrontSide}}<hr id="answer">{{Term}}'
                '{{#Source}}<div class="source">{{Source}}</div>{{/Source}}',
            },
        ],
        css=CSS,
        sort_field_index=1,
    )
    problem_model = genanki.Model(
        PROBLEM_MODEL_ID,
        "studytui practice problem",
        fields=[{"name": "Id"}, {"name": "Question"}, {"name": "Answer"}, {"name": "Why"}, {"name": "Source"}],
        templates=[
            {
                "name": "Question → answer",
                "qfmt": "{{Question}}",
                "afmt": '{{FrontSide}}<hr id="answer">{{Answer}}'
                '{{#Why}}<div class="why">{{Why}}</div>{{/Why}}'
                '{{#Source}}<div class="source">{{Source}}</div>{{/Source}}',
            }
        ],
        css=CSS,
        sort_field_index=1,
    )
    summary = AnkiSummary()
    glossary_deck = genanki.Deck(GLOSSARY_DECK_ID, GLOSSARY_DECK, description="Glossary of the AI Performance Engineering guide (studytui)")
    for term in guide.glossary:
        entry_tags = {guide.get(e).section_id for e in term.see if guide.get(e) is not None}
        glossary_deck.add_note(
            genanki.Note(
                model=glossary_model,
                fields=[
                    html.escape(term.id),
                    field_html(term.term),
                    field_html(term.definition),
                    field_html(", ".join(term.aliases)),
                    _source_links(guide, term.see),
                ],
                guid=glossary_guid(term.id),
                tags=["studytui", "glossary", *sorted(_tag(t) for t in entry_tags)],
            )
        )
        summary.glossary_notes += 1
    decks = [glossary_deck]
    if problems:
        problem_deck = genanki.Deck(PROBLEM_DECK_ID, PROBLEM_DECK, description="Practice problems you met in studytui")
        seen: set[str] = set()
        for card in problems:
            guid = problem_guid(card.problem_id, card.seed)
            if guid in seen:
                continue  # the same variant attempted twice is one card
            seen.add(guid)
            problem_deck.add_note(
                genanki.Note(
                    model=problem_model,
                    fields=[
                        html.escape(f"{card.problem_id}#{card.seed}"),
                        field_html(card.question),
                        field_html(card.answer),
                        field_html(card.why),
                        _source_links(guide, card.entry_ids),
                    ],
                    guid=guid,
                    tags=["studytui", "problem", *([_tag(card.section_id)] if card.section_id else [])],
                )
            )
            summary.problem_notes += 1
        decks.append(problem_deck)
    return genanki.Package(decks), summary


def package_bytes(guide: Any, problems: Sequence[ProblemCard]) -> tuple[bytes, AnkiSummary]:
    package, summary = build_package(guide, problems)
    # genanki writes to a path; build in a private temp dir, then the caller replaces the target atomically.
    with tempfile.TemporaryDirectory(prefix="studytui-anki-") as tmp:
        out = Path(tmp) / "deck.apkg"
        package.write_to_file(str(out))
        return out.read_bytes(), summary


def write_package(path: Path, guide: Any, store: Any, problems: Sequence[ProblemCard] | None = None) -> AnkiSummary:
    from studytui.core.fileio import write_atomically

    warnings: list[str] = []
    if problems is None:
        problems = met_problems(guide, store, warnings)
    data, summary = package_bytes(guide, problems)
    summary.warnings[:0] = warnings
    write_atomically(path, data)
    return summary


def export(path: Path | None, guide: Any, store: Any) -> Exported:
    """`studytui export PATH.apkg` (the FORMATS entry): the deck written to `path`."""
    import os

    assert path is not None  # a file format: FORMATS says it never goes to standard output
    summary = write_package(path, guide, store)
    # The path as resolved, absolute, as for every format.
    return Exported(Path(os.path.realpath(path)), summary.line(), warnings=list(summary.warnings))
