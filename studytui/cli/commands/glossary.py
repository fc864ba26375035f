"""`studytui glossary [TERM]`: the guide's glossary, which the app shows under `g`, in a shell."""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Any

from studytui.core.errors import UsageError

if TYPE_CHECKING:
    from studytui.guide.model import GlossaryTerm, Guide

COMMANDS = ("glossary",)


def register(sub: argparse._SubParsersAction, named: frozenset[str] | None = None) -> None:
    from studytui.cli.parsing import only_named

    sub = only_named(sub, named, COMMANDS)
    p = sub.add_parser(
        "glossary", help="the glossary: every term, or one in full",
        description="The guide's glossary, as the app shows it under 'g'. With no TERM, every term in order with "
        "its aliases; with TERM (its name, an alias or its id, any case), that term in full with the entries "
        "to read. An unknown term exits 2 naming the closest ones.",
    )
    p.add_argument("term", nargs="*", metavar="TERM", help="a term, an alias or a term id, e.g. 'tensor parallelism', TP, wgmma")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_glossary)


def _key(text: str) -> str:
    """A name compared the forgiving way: case, punctuation and spacing do not matter."""
    return re.sub(r"[^0-9a-z]+", " ", text.lower()).strip()


def _names(term: GlossaryTerm) -> list[str]:
    """Every name a term answers to: its id, its title (also without a parenthesis), its aliases."""
    bare = re.sub(r"\s*\(.*?\)\s*", " ", term.term).strip()
    return [term.id, term.term, bare, *term.aliases]


def find_term(guide: Guide, query: str) -> GlossaryTerm:
    """The term `query` names; UsageError (one line, exit 2) with the closest names otherwise."""
    import difflib

    wanted = _key(query)
    if not wanted:
        raise UsageError("glossary: give a term, e.g. 'studytui glossary TP', or no TERM for all of them")
    for term in guide.glossary:
        if wanted in {_key(name) for name in _names(term)}:
            return term
    # A word or two of a longer name ("parallelism") is enough when only one term has it.
    partial = [t for t in guide.glossary if any(wanted in _key(name) for name in _names(t))]
    if len(partial) == 1:
        return partial[0]
    by_key = {_key(t.term): t.term for t in guide.glossary}
    close = [by_key[k] for k in difflib.get_close_matches(wanted, list(by_key), n=4, cutoff=0.6)]
    for t in partial:
        if t.term not in close:
            close.append(t.term)
    hint = f"; did you mean {', '.join(close[:5])}?" if close else "; 'studytui glossary' lists every term"
    from studytui.cli.output import one_line

    raise UsageError(f"glossary: no term {one_line(query)!r}{hint}")


def _as_json(guide: Guide, term: GlossaryTerm) -> dict[str, Any]:
    see = []
    for entry_id in term.see:
        entry = guide.get(entry_id)
        see.append({"id": entry_id, "title": entry.title if entry is not None else None})
    return {"id": term.id, "term": term.term, "aliases": list(term.aliases), "definition": term.definition, "see": see}


def cmd_glossary(args: argparse.Namespace) -> int:
    from studytui.guide import load_guide

    guide = load_guide(args.content)
    query = " ".join(args.term).strip()
    if args.term and not query:
        raise UsageError("glossary: give a term, e.g. 'studytui glossary TP', or no TERM for all of them")
    if args.json:
        from studytui.cli.output import print_json

        if query:
            print_json(_as_json(guide, find_term(guide, query)))
        else:
            print_json([_as_json(guide, t) for t in guide.glossary])
        return 0
    from rich.text import Text

    from studytui.cli.output import console, print_wrapped

    con = console()
    if not query:
        for term in guide.glossary:
            print_wrapped(term.term + (f" (also {', '.join(term.aliases)})" if term.aliases else ""), con=con)
        con.print()
        print_wrapped(f"{len(guide.glossary)} terms; 'studytui glossary TERM' shows one in full.", con=con, keep=["studytui glossary TERM"])
        return 0
    term = find_term(guide, query)
    con.print(Text(term.term, style="bold"), soft_wrap=True)
    if term.aliases:
        print_wrapped("Also: " + ", ".join(term.aliases), style="italic", con=con)
    con.print()
    print_wrapped(" ".join(term.definition.split()), con=con)
    readable = [(entry_id, guide.get(entry_id)) for entry_id in term.see]
    if any(entry is not None for _, entry in readable):
        con.print()
        con.print(Text("Read:", style="bold"), soft_wrap=True)
        for entry_id, entry in readable:
            if entry is not None:
                print_wrapped(f"{entry.title} (studytui show {entry_id})", "  - ", "    ", con=con, keep=[f"studytui show {entry_id}"])
    return 0
