"""`studytui guide diff README.md`: follow the living guide (what a newer README changes)."""

from __future__ import annotations

import argparse

DESCRIPTION = (
    "Compare a copy of the guide's README.md (as downloaded from GitHub) with the content studytui "
    "ships: entries added, removed, moved, retitled or with a changed URL (matched by URL first, then "
    "by title), sections and subsections added, removed or renamed, the Frontier 'Verified on' date and "
    "watchlist changes. Each difference names the README line and the content FILE:LINE. Then it lists "
    "which of your entries with progress or notes are affected (removed ones become orphans, kept and "
    "never lost). Exit 0 when nothing differs, 1 when something does, 2 for a file that is not the "
    "guide's README."
)


def register(sub: argparse._SubParsersAction, named: frozenset[str] | None = None) -> None:
    group = sub.add_parser("guide", help="follow the living guide (diff against a newer README)",
                           description="Commands that compare the shipped content with the guide upstream.")
    inner = group.add_subparsers(dest="guide_command", metavar="COMMAND", parser_class=type(group))
    inner.required = True
    p = inner.add_parser("diff", help="what a newer copy of the guide's README changes", description=DESCRIPTION)
    p.add_argument("readme", metavar="README", help="a copy of the guide's README.md")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--write-stubs", metavar="DIR",
                   help="write a YAML stub (facts only: title, URL, where it goes) for each added entry into DIR; "
                   "the summary is left for you to write, and 'studytui check' refuses an entry without one")
    p.set_defaults(func=cmd_guide_diff)


def visible(text: str) -> str:
    """Text from a README may hold escape sequences: show them, never send them to the terminal."""
    from studytui.cli.output import one_line

    return one_line(text)


def cmd_guide_diff(args: argparse.Namespace) -> int:
    import sys

    from studytui.study.guide_changes import compute

    changes = compute(args.content, args.data_dir, args.readme)
    guide, diff, impacts, have_store = changes.guide, changes.diff, changes.impacts, changes.have_store
    stubs = []
    if args.write_stubs:
        from studytui.guide.diff import write_stubs

        stubs = write_stubs(guide, diff, args.write_stubs)
    if args.json:
        from studytui.cli.output import print_json

        print_json({
            "readme": diff.readme,
            "counts": diff.counts(),
            "differences": [d.to_dict() for d in diff.differences],
            "learner": [i.to_dict() for i in impacts],
            "stubs": [str(p) for p in stubs],
        })
        return 1 if diff.differences else 0
    from studytui.cli.output import console, quoted, wrap_words, write_wrapped

    out = sys.stdout
    width = console().width
    name = visible(diff.readme)
    if not diff.differences:
        write_wrapped(f"{name}: no differences from the shipped content.", rest="  ",
                      keep=[name, "no differences from the shipped content."])
    else:
        rwidth = max(len(f"{name}:{d.readme_line}") for d in diff.differences)
        cwidth = max(len(visible(d.content)) for d in diff.differences)
        kwidth = max(len(d.kind) for d in diff.differences)
        rows = [(f"{name}:{d.readme_line}", visible(d.content), d.kind, visible(d.message)) for d in diff.differences]
        if all(rwidth + 2 + cwidth + 2 + kwidth + 2 + len(message) <= width for *_r, message in rows):
            # Room for one line a difference: the README line, the content FILE:LINE, the kind, the message.
            for ref, content, kind, message in rows:
                out.write(f"{ref.ljust(rwidth)}  {content.ljust(cwidth)}  {kind.ljust(kwidth)}  {message}\n")
        else:
            # Else two parts: the references and the kind (whole, each FILE:LINE on one line), then
            # the message under them, filled to the width with a hanging indent, quoted titles whole.
            for ref, content, kind, message in rows:
                lines = wrap_words(f"{ref}  {content}  {kind}", width, "", "    ")
                lines += wrap_words(message, width, "    ", "    ", keep=quoted(message))
                out.write("\n".join(lines) + "\n")
        counts = ", ".join(f"{n} {k}" for k, n in sorted(diff.counts().items()))
        write_wrapped(f"{len(diff.differences)} difference(s): {counts}", rest="  ", keep=counts.split(", "))
    if not have_store:
        write_wrapped("Your study data: none yet, so nothing of yours is affected.", rest="  ")
    elif not impacts:
        write_wrapped("Your study data: none of your entries with progress or notes is affected.", rest="  ")
    else:
        write_wrapped(
            f"Your study data: {len(impacts)} entr{'y' if len(impacts) == 1 else 'ies'} with progress or notes affected:", rest="  "
        )
        for i in impacts:
            extra = ", note" if i.has_note else ""
            write_wrapped(f"{i.entry_id} ({i.state}{extra}): {', '.join(i.kinds)}: {i.outcome}", first="  ", rest="    ")
    for path in stubs:
        write_wrapped(f"stub written: {visible(str(path))}", rest="  ", keep=[visible(str(path))])
    return 1 if diff.differences else 0
