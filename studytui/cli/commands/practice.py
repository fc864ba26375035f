"""`studytui practice`: problems graded by the calculators, with spaced review.

    studytui practice [SECTION] [--json]                       the problems, last results, mastery
    studytui practice show ID [--seed N] [--json]              one variant's question
    studytui practice answer ID VALUE [--seed N] [--reveal] [--json]   grade and record an attempt
    studytui practice answer ID --reveal [--seed N] [--json]           the answer and solution, unanswered
    studytui practice due [--json]                             what is due for review now

Only argparse is imported at module level; handlers import the rest when they run.
"""

from __future__ import annotations

import argparse
from typing import Any

from studytui.core.errors import UsageError

ACTIONS = ("show", "answer", "due")
USAGE = (
    "studytui practice [SECTION] [--json]\n"
    "       studytui practice show ID [--seed N] [--json]\n"
    "       studytui practice answer ID [VALUE] [--seed N] [--reveal] [--json]\n"
    "       studytui practice due [--json]"
)


def register(sub: argparse._SubParsersAction, named: frozenset[str] | None = None) -> None:
    p = sub.add_parser(
        "practice", help="practice problems graded by the calculators", usage=USAGE,
        description=(
            "Problems for every section, graded by running the calculators on the exact variant you "
            "were shown. With no action: the problems (of SECTION, a section id or number), each one's "
            "last result and the section's mastery. 'show ID' prints the question of your current "
            "variant (a new one after each correct answer; --seed N picks one). 'answer ID VALUE' grades "
            "and records an attempt: numbers may carry units ('31 ms', '0.031s', '8 GiB'), a bare number "
            "is read in the question's unit (bytes need their unit: GB and GiB differ by 7%), a comma is "
            "refused (decimal or thousands?), a choice is its name ('memory-bound' is 'memory') or number. "
            "A miss says how far off it is (in bands, never the key), names the slip when it looks like one, and "
            "shows the next hint; a hit (or --reveal) shows the answer and the worked solution. A problem is "
            "mastered when a variant is answered right at the first try; right after a miss on the same variant "
            "moves on but is not mastery (marked ~). 'answer ID --reveal' with no "
            "VALUE shows them without an answer (recorded as a miss for review, as in the app); a revealed "
            "variant is spent, so the next attempt is a new one. 'due' lists the problems "
            "whose review is due (FSRS: a miss comes back within minutes, a hit days later)."
        ),
    )
    p.add_argument("words", nargs="*", metavar="ARGS", help="SECTION | show ID | answer ID [VALUE] | due")
    p.add_argument("--seed", metavar="N", help="the variant (0 to 2147483647) for show and answer")
    p.add_argument(
        "--reveal", action="store_true", help="answer: also show the expected answer and the solution (with no VALUE: only them)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_practice)


def _now() -> Any:
    """The clock (tests replace it), the one `studytui plan` reads too (studytui.core.clock)."""
    from studytui.core import clock

    return clock.now()


def cmd_practice(args: argparse.Namespace) -> int:
    words = list(args.words)
    action = words[0] if words and words[0] in ACTIONS else "list"
    rest = words[1:] if action != "list" else words
    expected_count = {"list": (0, 1), "show": (1, 1), "answer": (1 if args.reveal else 2, 2), "due": (0, 0)}[action]
    if action == "answer" and len(rest) == 1 and not args.reveal:
        raise UsageError("usage: studytui practice answer ID VALUE (or 'answer ID --reveal' for the answer without grading one)")
    if not expected_count[0] <= len(rest) <= expected_count[1]:
        shape = {"list": "practice [SECTION]", "show": "practice show ID", "answer": "practice answer ID [VALUE] [--reveal]",
                 "due": "practice due"}[action]
        raise UsageError(f"usage: studytui {shape} (got {len(rest)} argument(s); see 'studytui practice --help')")
    if args.seed is not None and action not in ("show", "answer"):
        raise UsageError("--seed applies to 'practice show' and 'practice answer' only")
    if args.reveal and action != "answer":
        raise UsageError("--reveal applies to 'practice answer' only")
    from studytui.practice.service import Practice, check_seed
    from studytui.study.workspace import open_workspace

    if args.seed is not None:
        check_seed(args.seed)  # before opening anything: a bad seed is a usage error, nothing else runs
    guide, store = open_workspace(args.content, args.data_dir)
    with store:
        practice = Practice(guide, store, now=_now)
        if action == "show":
            return _show(practice, rest[0], args)
        if action == "answer":
            if len(rest) == 1:
                return _reveal(practice, rest[0], args)
            return _answer(practice, rest[0], rest[1], args)
        if action == "due":
            return _due(practice, args)
        return _list(practice, rest[0] if rest else None, args)


# -- helpers --------------------------------------------------------------------------------

def _console():
    from studytui.cli.output import console

    return console()


def _json(obj: Any) -> int:
    from studytui.cli.output import print_json

    print_json(obj)
    return 0


def _given_lines(variant) -> list[str]:
    from studytui.practice.given import facts

    return [f.text for f in facts(variant)]


def _show(practice, problem_id: str, args) -> int:
    variant = practice.variant(problem_id, args.seed)
    if args.json:  # the key stays hidden until the variant is answered right or revealed
        return _json(practice.show_json(problem_id, variant.seed))
    from rich.text import Text

    p = variant.problem
    con = _console()
    con.print(Text(p.title, style="bold") + Text(f"   {p.id} · seed {variant.seed}", style="dim"))
    con.print(Text(variant.question))
    given = _given_lines(variant)
    if given:
        from studytui.cli.output import print_wrapped

        con.print(Text("Given:", style="bold"))
        for line in given:
            print_wrapped(line, "  - ", "    ", con=con)
    if p.kind == "choice":
        con.print(Text("Choices: " + ", ".join(f"{i}) {c}" for i, c in enumerate(variant.choices, 1))))
    else:
        from studytui.practice.answers import answer_line

        con.print(Text(answer_line(p.unit, p.tolerance), style="dim"))
    con.print(Text(f"Answer with: studytui practice answer {p.id} VALUE --seed {variant.seed}", style="dim"))
    return 0


def _expected_json(exp, unit: str) -> Any:
    if exp.choice is not None:
        return exp.choice
    from studytui.practice.answers import UNITS

    factor = UNITS[unit][1]
    return {"value": exp.value / factor, "unit": unit, "si": exp.value, "text": exp.display(unit)}


def _answer(practice, problem_id: str, value: str, args) -> int:
    problem = practice.get(problem_id)
    result = practice.answer(problem_id, value, args.seed, reveal=args.reveal)
    show_expected = result.correct or args.reveal
    if args.json:
        from studytui.practice.grading import miss_json

        miss = miss_json(result, problem.tolerance)
        # On a miss, no exact relative error: with the answer given it is the key. The size is a band.
        out: dict[str, Any] = {
            "id": problem.id, "seed": result.seed, "correct": result.correct, "counted": result.mastered,
            "recorded": result.counted, "right_after_miss": result.after_miss,
            "relative_error": result.relative_error if result.correct else None, "miss": miss,
            "slip": miss["slip"] if miss else None,
            "hint": result.hint,
            "solution": result.solution if show_expected else None,
        }
        if show_expected:
            out["expected"] = _expected_json(result.expected, problem.unit)
        return _json(out)
    from rich.text import Text

    con = _console()
    if not result.counted:
        verdict = "Right" if result.correct else "Not right"
        con.print(Text(f"{verdict}, but not counted: the solution of variant {result.seed} was shown, so it no longer counts for "
                       f"mastery. Your next variant: studytui practice show {problem.id}", style="bold yellow"), soft_wrap=True)
    if result.correct:
        close = "" if result.relative_error is None else f" (off by {result.relative_error:.1%})"
        con.print(Text(f"Correct{close}: {result.expected.display(problem.unit)}", style="bold green"))
        if result.after_miss:
            con.print(Text("Right after a miss on this variant: it does not count for mastery, and the review brings the "
                           "problem back soon with new numbers.", style="yellow"))
            con.print(Text(f"Next variant: studytui practice show {problem.id}", style="dim"), soft_wrap=True)
    else:
        from studytui.practice.grading import miss_text

        con.print(Text(miss_text(result, problem.tolerance), style="bold yellow"))
        if result.hint:
            _labelled(con, "Hint:", result.hint)
        if args.reveal:
            con.print(Text(f"Expected: {result.expected.display(problem.unit)}", style="bold"))
        else:
            con.print(Text(f"Try again with the same --seed {result.seed}, or add --reveal to see the solution (the variant then "
                           "no longer counts).", style="dim"))
    if result.solution:
        con.print(Text("Solution", style="bold"))
        _solution(con, result.solution)
        for command in calc_commands(practice.variant(problem_id, result.seed)):
            con.print(Text(f"Check it: {command}", style="dim"), soft_wrap=True)
    return 0


def _reveal(practice, problem_id: str, args) -> int:
    """`practice answer ID --reveal` with no VALUE: the expected answer and the worked solution of
    the current variant (or --seed N). As in the app, seeing the solution before a right answer
    counts as a miss for review and spends the variant: the next attempt is a new one, and an
    answer to this one is graded but not recorded."""
    from studytui.practice.grading import expected

    problem = practice.get(problem_id)
    variant = practice.variant(problem_id, args.seed)
    solved = any(a.correct and a.seed == variant.seed for a in practice.attempts(problem_id))
    lines = practice.reveal(problem_id, variant.seed)
    exp = expected(variant)
    if args.json:
        return _json({
            "id": problem.id, "seed": variant.seed, "correct": None, "revealed": True, "counted_as_miss": not solved,
            "expected": _expected_json(exp, problem.unit), "solution": lines,
        })
    from rich.text import Text

    con = _console()
    con.print(Text(f"Expected: {exp.display(problem.unit)}", style="bold"))
    con.print(Text("Solution", style="bold"))
    _solution(con, lines)
    for command in calc_commands(variant):
        con.print(Text(f"Check it: {command}", style="dim"), soft_wrap=True)
    if not solved:
        con.print(Text("Seen before a right answer: counted as a miss for review; your next attempt is a new variant "
                       f"(studytui practice show {problem.id}).", style="dim"))
    return 0


MIN_TITLE = 16  # the narrowest title column beside the id: narrower, the id goes on a line of its own


def problem_rows(items: list[tuple[str, str, str, str]], width: int) -> list[Any]:
    """The list's lines for (mark, id, title, when) rows at `width` cells: an id is never cut (it
    is what 'practice show ID' takes). Where the longest id, the dates and a title column fit,
    one column each, the title wrapped in its own column; else each id on a line of its own
    with its date, and the title under it."""
    from rich.cells import cell_len
    from rich.text import Text

    from studytui.cli.output import wrap_words

    if not items:
        return []
    id_w = max(cell_len(pid) for _, pid, _, _ in items)
    when_w = max(cell_len(when) for *_, when in items)
    lead = 2 + id_w + 2
    tail = 2 + when_w if when_w else 0
    longest = max(cell_len(title) for _, _, title, _ in items)
    title_w = min(width - lead - tail, longest)
    columns = title_w >= MIN_TITLE or lead + longest + tail <= width
    out = []
    for mark, pid, title, when in items:  # pieces appended in place: a Text added to a Text is copied
        if columns:
            lines = wrap_words(title, title_w) or [""]
            first = Text(f"{mark} ")
            first.append(pid.ljust(id_w), style="cyan")
            first.append("  " + lines[0])
            if when:
                first.append(" " * (title_w - cell_len(lines[0]) + 2))
                first.append(when, style="dim")
            out.append(first)
            out.extend(Text(" " * lead + line) for line in lines[1:])
        else:
            head = Text(f"{mark} ")
            head.append(pid, style="cyan")
            if when and 2 + cell_len(pid) + 2 + cell_len(when) <= width:
                head.append("  ")
                head.append(when, style="dim")
                when = ""
            out.append(head)
            if when:  # beside the id it does not fit: under it
                out.append(Text("    ").append(when, style="dim"))
            out.extend(Text(line) for line in wrap_words(title, width, first="    "))
    return out


def _skills(problems) -> dict[str, int]:
    from studytui.practice.check import skills

    return skills(problems)


def _labelled(con, label: str, text: str) -> None:
    """A bold label and its text, continued under the text (not at column 0)."""
    from rich.text import Text

    from studytui.cli.output import wrap_words

    for i, line in enumerate(wrap_words(text, con.width, label + " ", "  ")):
        con.print(Text(line[: len(label)], style="bold") + Text(line[len(label):]) if i == 0 else Text(line), soft_wrap=True)


def _solution(con, lines: list[str]) -> None:
    """The worked solution, a step a line; a step longer than the terminal continues indented
    under it, so where one step ends stays clear."""
    from studytui.cli.output import print_wrapped

    for line in lines:
        print_wrapped(line, "", "    ", con=con)


def calc_commands(variant) -> list[str]:
    """The `studytui calc` command lines that grade this variant (one per choice when comparing)."""
    import shlex

    call = variant.calc_call()
    runs = list(call["args"].values()) if "pick" in call else [call["args"]]
    out = []
    for args in runs:
        flags = " ".join(f"--{k.replace('_', '-')} {shlex.quote(str(v))}" for k, v in args.items())
        out.append(f"studytui calc {call['name']} {flags}".rstrip())
    return out


def _due_text(review, now) -> str:
    late = now - review.due
    hours = late.total_seconds() / 3600
    return f"due {hours:.0f} h ago" if hours >= 1 else "due now"


def _local_time(moment) -> str:
    """A due time on the learner's clock, as `studytui plan` shows it: '2026-12-02 14:05 (Europe/Berlin)'."""
    from studytui.core.clock import local_zone

    tz, name = local_zone()
    return f"{moment.astimezone(tz):%Y-%m-%d %H:%M} ({name})"


def _due(practice, args) -> int:
    items = practice.due()
    now = practice.now()
    reviews = practice.reviews()
    upcoming = sorted((r for r in reviews.values() if r.due > now and practice.set.head(r.problem_id)), key=lambda r: r.due)
    if args.json:
        return _json({
            "now": now.isoformat(),
            "due": [
                {"id": r.problem_id, "title": practice.head(r.problem_id).title, "section": practice.head(r.problem_id).section_id,
                 "due": r.due.isoformat(), "last_correct": r.last_correct, "attempts": r.attempts}
                for r in items
            ],
            "next_due": upcoming[0].due.isoformat() if upcoming else None,
            "new": sum(1 for h in practice.heads if h.id not in reviews),
        })
    from rich.text import Text

    con = _console()
    if not items:
        when = f" Next review: {_local_time(upcoming[0].due)}." if upcoming else ""
        from studytui.cli.output import print_parts

        print_parts([f"Nothing is due for review.{when}", "New problems: 'studytui practice'."], sep=" ", con=con)
        return 0
    lines = [Text(f"{len(items)} problem(s) due for review:", style="bold")]
    for r in items:
        p = practice.head(r.problem_id)
        mark = practice.mark(r.problem_id)
        lines.append(Text(f"  {mark} {p.id}", style="cyan") + Text(f"  {p.title}  ({_due_text(r, now)})", style=""))
    lines.append(Text("Open one with: studytui practice show ID", style="dim"))
    # One print: Rich's work per call, a hundred times for a hundred due reviews, was most of the
    # command's own time (issue 27). Each line wraps as its own print wrapped it.
    con.print(Text("\n").join(lines))
    return 0


def _list(practice, section_key: str | None, args) -> int:
    # The heads alone (id, section, title, entries, kind, skill): a list never reads the questions.
    sections = [practice.section(section_key)] if section_key else [s for s in practice.guide.sections if practice.heads_for_section(s.id)]
    mastery = practice.mastery()
    reviews = practice.reviews()
    now = practice.now()
    rows = []
    for s in sections:
        for p in practice.heads_for_section(s.id):
            r = reviews.get(p.id)
            rows.append((s, p, r))
    if args.json:
        return _json({
            "sections": [
                {**(mastery[s.id].to_dict() if s.id in mastery else {"section_id": s.id, "problems": 0}), "title": s.title}
                for s in sections
            ],
            "problems": [
                {"id": p.id, "title": p.title, "section": s.id, "kind": p.kind, "skill": p.skill, "entries": list(p.entries),
                 "last_correct": r.last_correct if r else None, "mastered": bool(r and r.mastered),
                 "state": practice.state(p.id), "attempts": r.attempts if r else 0,
                 "due": r.due.isoformat() if r else None, "is_due": bool(r and r.due <= now)}
                for s, p, r in rows
            ],
            "skills": _skills([p for _, p, _ in rows]),
        })
    from rich.text import Text

    from studytui.cli.output import visible

    con = _console()
    if not rows:
        con.print(Text("No practice problems for this section yet."))
        return 0
    lines: list[Any] = []
    for s in sections:
        m = mastery.get(s.id)
        if m is None:
            continue
        heading = Text(visible(s.title), style="bold")
        after = f", {m.after_miss} right after a miss" if m.after_miss else ""
        heading.append(f"   mastery {m.mastered}/{m.problems} ({m.share:.0%}){after}, {m.due} due", style="dim")
        lines.append(heading)
        items = []
        for p in practice.heads_for_section(s.id):
            r = reviews.get(p.id)
            mark = practice.mark(p.id)
            when = "" if r is None else ("due" if r.due <= now else f"next {r.due.strftime('%Y-%m-%d')}")
            items.append((mark, p.id, visible(p.title), when))
        lines.extend(problem_rows(items, con.width))
    # One print for the whole list: Rich's per-call work, a hundred times over, was most of the
    # command's own time (issue 27). soft_wrap: each line as laid out, never wrapped again.
    con.print(Text("\n").join(lines), soft_wrap=True)
    from studytui.cli.output import print_parts

    # The legend and the next command on one line where they fit; else the command on its own line.
    from studytui.practice.schedule import LEGEND

    print_parts([LEGEND, "Next: studytui practice show ID"], style="dim", con=con)
    return 0
